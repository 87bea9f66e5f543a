// Tests for CRD validation and conversion (on the real MCS v0.5.0 CRDs and on hostile ones) and
// for the established status.
#include "apiserver/api/crd.h"

#include <charconv>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

namespace slicewright::apiserver {
namespace {

using nlohmann::json;

// A small YAML-to-JSON converter for test data: plain scalars true/false/null and numbers are
// typed, everything else (and every quoted scalar) is a string.
json ToJson(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      json out = json::object();
      for (const auto& kv : node) out[kv.first.as<std::string>()] = ToJson(kv.second);
      return out;
    }
    case YAML::NodeType::Sequence: {
      json out = json::array();
      for (const auto& item : node) out.push_back(ToJson(item));
      return out;
    }
    case YAML::NodeType::Scalar: {
      const std::string& s = node.Scalar();
      if (node.Tag() == "!") return s;  // quoted
      if (s == "true") return true;
      if (s == "false") return false;
      if (s == "null" || s == "~") return nullptr;
      std::int64_t i = 0;
      auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), i);
      if (ec == std::errc() && end == s.data() + s.size() && !s.empty()) return i;
      return s;
    }
    default:
      return nullptr;
  }
}

// The MCS CRD `file` from the repository's testdata or the shared data folder; null if absent.
json LoadMcsCrd(const std::string& file) {
  for (const std::string& dir : {std::string(SW_SOURCE_DIR) + "/testdata/mcs-api-v0.5.0",
                                 std::string("/work/shared/data/mcs-api-v0.5.0")}) {
    std::filesystem::path path = std::filesystem::path(dir) / file;
    if (std::filesystem::exists(path)) return ToJson(YAML::LoadFile(path.string()));
  }
  return nullptr;
}

json ValidCrd() {
  return json::parse(R"({
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {
      "group": "example.com", "scope": "Namespaced",
      "names": {"plural": "widgets", "kind": "Widget"},
      "versions": [
        {"name": "v1", "served": true, "storage": true,
         "schema": {"openAPIV3Schema": {"type": "object"}}}
      ]
    }
  })");
}

// The real ServiceImport CRD converts to two served versions with its names, status
// subresource and printer columns.
TEST(CrdTest, ConvertsMcsServiceImport) {
  json crd = LoadMcsCrd("config_crd_multicluster.x-k8s.io_serviceimports.yaml");
  if (crd.is_null()) GTEST_SKIP() << "MCS v0.5.0 CRDs not found";
  Result<std::vector<ResourceInfo>> result = ResourcesFromCrd(crd);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_EQ(result->size(), 2u);
  const ResourceInfo& alpha = (*result)[0];
  const ResourceInfo& beta = (*result)[1];
  EXPECT_EQ(alpha.version, "v1alpha1");
  EXPECT_EQ(beta.version, "v1beta1");
  EXPECT_EQ(beta.group, "multicluster.x-k8s.io");
  EXPECT_EQ(beta.resource, "serviceimports");
  EXPECT_EQ(beta.singular, "serviceimport");
  EXPECT_EQ(beta.kind, "ServiceImport");
  EXPECT_EQ(beta.list_kind, "ServiceImportList");
  EXPECT_EQ(beta.short_names, (std::vector<std::string>{"svcim", "svcimport"}));
  EXPECT_TRUE(beta.namespaced);
  EXPECT_TRUE(beta.has_status);
  EXPECT_TRUE(beta.tracks_generation);
  EXPECT_FALSE(beta.builtin);
  EXPECT_EQ(beta.crd_name, "serviceimports.multicluster.x-k8s.io");
  ASSERT_EQ(beta.printer_columns.size(), 3u);
  EXPECT_EQ(beta.printer_columns[0].name, "Type");
  EXPECT_EQ(beta.printer_columns[0].json_path, ".spec.type");
  EXPECT_EQ(beta.printer_columns[1].name, "IP");
  EXPECT_EQ(beta.printer_columns[2].type, "date");
  ASSERT_NE(beta.schema, nullptr);
  EXPECT_EQ((*beta.schema)["type"], "object");
  EXPECT_TRUE((*beta.schema)["properties"].contains("spec"));
  EXPECT_EQ(beta.KeyPrefix(), "/registry/multicluster.x-k8s.io/serviceimports/");
}

// The real ServiceExport CRD converts too, and its status is what kube-apiserver sets.
TEST(CrdTest, ConvertsMcsServiceExportAndEstablishes) {
  json crd = LoadMcsCrd("config_crd_multicluster.x-k8s.io_serviceexports.yaml");
  if (crd.is_null()) GTEST_SKIP() << "MCS v0.5.0 CRDs not found";
  Result<std::vector<ResourceInfo>> result = ResourcesFromCrd(crd);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_EQ(result->size(), 2u);
  EXPECT_EQ((*result)[1].short_names, (std::vector<std::string>{"svcex", "svcexport"}));
  ASSERT_EQ((*result)[1].printer_columns.size(), 1u);
  EXPECT_EQ((*result)[1].printer_columns[0].name, "Age");

  const auto now = std::chrono::system_clock::time_point(std::chrono::seconds(1700000000));
  json status = CrdEstablishedStatus(crd, now);
  EXPECT_EQ(status, json::parse(R"({
    "conditions": [
      {"type": "NamesAccepted", "status": "True", "lastTransitionTime": "2023-11-14T22:13:20Z",
       "reason": "NoConflicts", "message": "no conflicts found"},
      {"type": "Established", "status": "True", "lastTransitionTime": "2023-11-14T22:13:20Z",
       "reason": "InitialNamesAccepted", "message": "the initial names have been accepted"}],
    "acceptedNames": {"plural": "serviceexports", "singular": "serviceexport",
                      "kind": "ServiceExport", "listKind": "ServiceExportList",
                      "shortNames": ["svcex", "svcexport"]},
    "storedVersions": ["v1beta1"]})"));

  // Re-establishing keeps the transition times and the stored versions seen before.
  crd["status"] = status;
  crd["status"]["storedVersions"] = {"v1alpha1"};
  json again = CrdEstablishedStatus(crd, now + std::chrono::hours(1));
  EXPECT_EQ(again["conditions"][1]["lastTransitionTime"], "2023-11-14T22:13:20Z");
  EXPECT_EQ(again["storedVersions"], json::parse(R"(["v1alpha1","v1beta1"])"));
}

// Defaults: listKind, singular, an Age column; unserved versions are skipped; Cluster scope.
TEST(CrdTest, Defaults) {
  json crd = ValidCrd();
  crd["spec"]["scope"] = "Cluster";
  crd["spec"]["versions"].push_back({{"name", "v1alpha1"},
                                     {"served", false},
                                     {"storage", false},
                                     {"schema", {{"openAPIV3Schema", {{"type", "object"}}}}}});
  crd["spec"]["versions"][0]["selectableFields"] = json::parse(R"([{"jsonPath": ".spec.color"}])");
  Result<std::vector<ResourceInfo>> result = ResourcesFromCrd(crd);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_EQ(result->size(), 1u);
  const ResourceInfo& r = (*result)[0];
  EXPECT_EQ(r.list_kind, "WidgetList");
  EXPECT_EQ(r.singular, "widget");
  EXPECT_FALSE(r.namespaced);
  EXPECT_FALSE(r.has_status);
  EXPECT_EQ(r.selectable_fields, std::vector<std::string>{"spec.color"});
  ASSERT_EQ(r.printer_columns.size(), 1u);
  EXPECT_EQ(r.printer_columns[0].name, "Age");
  EXPECT_EQ(r.printer_columns[0].type, "date");
}

// Hostile CRDs fail with kInvalid and kube-apiserver's field messages.
TEST(CrdTest, RejectsInvalid) {
  struct Case {
    std::string_view name;
    std::string_view patch;  // RFC 7386 merge patch applied to ValidCrd()
    std::string_view message;
  };
  const Case cases[] = {
      {"wrong name", R"({"metadata":{"name":"gadgets.example.com"}})",
       R"(metadata.name: Invalid value: "gadgets.example.com": must be spec.names.plural+"."+spec.group)"},
      {"missing group", R"({"metadata":{"name":"widgets."},"spec":{"group":null}})",
       "[metadata.name: Invalid value: \"widgets.\": a lowercase RFC 1123 subdomain must consist "
       "of lower case alphanumeric characters, '-' or '.', and must start and end with an "
       "alphanumeric character (e.g. 'example.com', regex used for validation is "
       "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), "
       "spec.group: Required value]"},
      {"group without dot", R"({"metadata":{"name":"widgets.example"},"spec":{"group":"example"}})",
       R"(spec.group: Invalid value: "example": should be a domain with at least one dot)"},
      {"bad scope", R"({"spec":{"scope":"Global"}})",
       R"(spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced")"},
      {"missing scope", R"({"spec":{"scope":null}})", "spec.scope: Required value"},
      {"missing kind", R"({"spec":{"names":{"kind":null}}})",
       "[spec.names.singular: Required value, spec.names.kind: Required value, "
       "spec.names.listKind: Required value]"},
      {"kind equals listKind", R"({"spec":{"names":{"listKind":"Widget"}}})",
       R"(spec.names.listKind: Invalid value: "Widget": kind and listKind may not be the same)"},
      {"bad short name", R"({"spec":{"names":{"shortNames":["w_1"]}}})",
       "spec.names.shortNames[0]: Invalid value: \"w_1\": a DNS-1035 label must consist of lower "
       "case alphanumeric characters or '-', start with an alphabetic character, and end with an "
       "alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is "
       "'[a-z]([-a-z0-9]*[a-z0-9])?')"},
      {"no storage version", R"({"spec":{"versions":[{"name":"v1","served":true,"storage":false,
         "schema":{"openAPIV3Schema":{"type":"object"}}}]}})",
       R"(spec.versions: Invalid value: ["v1"]: must have exactly one version marked as storage version)"},
      {"no versions", R"({"spec":{"versions":[]}})",
       "spec.versions: Invalid value: []: must have exactly one version marked as storage version"},
      {"missing schema", R"({"spec":{"versions":[{"name":"v1","served":true,"storage":true}]}})",
       "spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required"},
      {"bad column", R"({"spec":{"versions":[{"name":"v1","served":true,"storage":true,
         "schema":{"openAPIV3Schema":{"type":"object"}},
         "additionalPrinterColumns":[{"name":"X","type":"text","jsonPath":"spec.x"}]}]}})",
       "[spec.versions[0].additionalPrinterColumns[0].type: Invalid value: \"text\": must be one "
       "of boolean,date,integer,number,string, "
       "spec.versions[0].additionalPrinterColumns[0].jsonPath: Invalid value: \"spec.x\": must be "
       "a simple json path starting with .]"},
      {"duplicate selectable field", R"({"spec":{"versions":[{"name":"v1","served":true,
         "storage":true,"schema":{"openAPIV3Schema":{"type":"object"}},
         "selectableFields":[{"jsonPath":".spec.a"},{"jsonPath":".spec.a"}]}]}})",
       R"(spec.versions[0].selectableFields[1].jsonPath: Duplicate value: ".spec.a")"},
      {"wrong types", R"({"spec":{"versions":{"v1":{}}}})",
       "[spec.versions: Invalid value: array: wrong type, spec.versions: Invalid value: []: must "
       "have exactly one version marked as storage version]"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.name));
    json crd = ValidCrd();
    crd.merge_patch(json::parse(c.patch));
    Result<std::vector<ResourceInfo>> result = ResourcesFromCrd(crd);
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.status().code(), StatusCode::kInvalid);
    EXPECT_EQ(result.status().message(), c.message);
  }
  // Duplicate version names.
  json dup = ValidCrd();
  dup["spec"]["versions"].push_back(dup["spec"]["versions"][0]);
  dup["spec"]["versions"][1]["storage"] = false;
  Result<std::vector<ResourceInfo>> result = ResourcesFromCrd(dup);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().message(),
            R"(spec.versions: Invalid value: ["v1","v1"]: must contain unique version names)");
  EXPECT_EQ(result.status().object(), "customresourcedefinitions/widgets.example.com");
  // Not an object at all.
  Result<std::vector<ResourceInfo>> not_object = ResourcesFromCrd(json::array());
  EXPECT_EQ(not_object.status().code(), StatusCode::kBadRequest);
  EXPECT_EQ(not_object.status().message(), "a CustomResourceDefinition must be a JSON object");
}

// A CRD in a group under k8s.io or kubernetes.io needs the approval annotation, as
// apiextensions' validateAPIApproval asks (the messages are kube-apiserver 1.34's).
TEST(CrdTest, ProtectedGroupsNeedTheApprovalAnnotation) {
  auto crd_in = [](const std::string& group, const char* annotation) {
    json crd = ValidCrd();
    crd["metadata"]["name"] = "widgets." + group;
    crd["spec"]["group"] = group;
    if (annotation != nullptr) {
      crd["metadata"]["annotations"]["api-approved.kubernetes.io"] = annotation;
    }
    return crd;
  };
  const std::string missing =
      "metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups must "
      "have approval annotation \"api-approved.kubernetes.io\", see "
      "https://github.com/kubernetes/enhancements/pull/1111";
  const auto invalid = [](const std::string& value) {
    return "metadata.annotations[api-approved.kubernetes.io]: Invalid value: \"" + value +
           "\": protected groups must have approval annotation \"api-approved.kubernetes.io\" "
           "with either a URL or a reason starting with \"unapproved\", see "
           "https://github.com/kubernetes/enhancements/pull/1111";
  };
  struct Case {
    std::string group;
    const char* annotation;
    std::string message;  // "" when accepted
  };
  const std::vector<Case> cases = {
      {"k8s.io", nullptr, missing},
      {"about.k8s.io", nullptr, missing},
      {"x.kubernetes.io", nullptr, missing},
      {"kubernetes.io", "", missing},
      {"a.k8s.io", "not a url", invalid("not a url")},
      {"a.k8s.io", "/kubernetes/pull/1", invalid("/kubernetes/pull/1")},
      {"a.k8s.io", "mailto:someone@example.com", invalid("mailto:someone@example.com")},
      {"a.k8s.io", "https://exa mple.com/", invalid("https://exa mple.com/")},
      {"a.k8s.io", "https://github.com/kubernetes/enhancements/pull/1111", ""},
      {"a.k8s.io", "http://example.com:8080/x?y#z", ""},
      {"a.k8s.io", "unapproved, experimental", ""},
      {"a.k8s.io", "unapproved", ""},
      // Not protected: x-k8s.io is not under k8s.io, nor is a name that merely ends in it.
      {"multicluster.x-k8s.io", nullptr, ""},
      {"examplek8s.io", nullptr, ""},
      {"k8s.io.example.com", nullptr, ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.group + " " + (c.annotation ? c.annotation : "(none)"));
    Result<std::vector<ResourceInfo>> result = ResourcesFromCrd(crd_in(c.group, c.annotation));
    if (c.message.empty()) {
      EXPECT_TRUE(result.ok()) << result.status().ToString();
    } else {
      ASSERT_FALSE(result.ok());
      EXPECT_EQ(result.status().code(), StatusCode::kInvalid);
      EXPECT_EQ(result.status().message(), c.message);
    }
  }
  // An update that keeps the approval state passes, whatever the state; one that changes it to
  // missing or invalid does not.
  const json unapproved = crd_in("a.k8s.io", "unapproved");
  const json stored_without = crd_in("a.k8s.io", nullptr);
  EXPECT_TRUE(ResourcesFromCrd(stored_without, &stored_without).ok());
  EXPECT_TRUE(ResourcesFromCrd(crd_in("a.k8s.io", "unapproved, other"), &unapproved).ok());
  EXPECT_TRUE(ResourcesFromCrd(crd_in("a.k8s.io", "bad"), &unapproved).status().message() ==
              invalid("bad"));
  EXPECT_EQ(ResourcesFromCrd(stored_without, &unapproved).status().message(), missing);
  EXPECT_TRUE(ResourcesFromCrd(crd_in("a.k8s.io", "https://example.com/1"), &unapproved).ok());
}

// What the approval controller reports on a protected group's CRD.
TEST(CrdTest, ApprovalCondition) {
  json crd = ValidCrd();
  EXPECT_TRUE(CrdApprovalCondition(crd).is_null());
  crd["spec"]["group"] = "a.k8s.io";
  EXPECT_EQ(CrdApprovalCondition(crd)["reason"], "MissingAnnotation");
  crd["metadata"]["annotations"]["api-approved.kubernetes.io"] = "https://example.com/pr/1";
  EXPECT_EQ(CrdApprovalCondition(crd),
            json::parse(R"({"type":"KubernetesAPIApprovalPolicyConformant","status":"True",
                            "reason":"ApprovedAnnotation","message":"approved in https://example.com/pr/1"})"));
  crd["metadata"]["annotations"]["api-approved.kubernetes.io"] = "unapproved for now";
  EXPECT_EQ(CrdApprovalCondition(crd)["message"], "not approved: \"unapproved for now\"");
  EXPECT_EQ(CrdApprovalCondition(crd)["status"], "False");
  json status = CrdEstablishedStatus(crd, std::chrono::system_clock::time_point());
  ASSERT_EQ(status["conditions"].size(), 3u);
  EXPECT_EQ(status["conditions"][2]["reason"], "UnapprovedAnnotation");
}

}  // namespace
}  // namespace slicewright::apiserver

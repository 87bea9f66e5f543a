// Tests for the compiled-in MCS CRDs (deploy/mcs/crds) and CRD manifest parsing.
#include "apiserver/api/embedded_crds.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "apiserver/api/crd.h"
#include "apiserver/api/schema_validation.h"

namespace slicewright::apiserver {
namespace {

using nlohmann::json;

std::vector<json> McsCrds() {
  std::vector<json> out;
  for (const CrdManifest& manifest : McsCrdManifests()) {
    Result<std::vector<std::string>> documents = CrdDocuments(manifest);
    EXPECT_TRUE(documents.ok()) << documents.status().ToString();
    if (!documents.ok()) continue;
    for (const std::string& document : *documents) out.push_back(json::parse(document));
  }
  return out;
}

// The four CRDs are compiled in, each accepted by the server's CRD validation with a schema that
// compiles, served in the versions the spec names.
TEST(EmbeddedCrdsTest, McsCrdsConvert) {
  const std::vector<json> crds = McsCrds();
  ASSERT_EQ(crds.size(), 4u);
  std::vector<std::string> served;
  for (const json& crd : crds) {
    Result<std::vector<ResourceInfo>> resources = ResourcesFromCrd(crd);
    ASSERT_TRUE(resources.ok()) << resources.status().ToString();
    for (const ResourceInfo& r : *resources) {
      ASSERT_NE(r.structural, nullptr) << r.crd_name;
      served.push_back(r.resource + "." + r.group + "/" + r.version +
                       (r.namespaced ? "" : " (cluster)"));
    }
  }
  EXPECT_EQ(served, (std::vector<std::string>{
                        "serviceexports.multicluster.x-k8s.io/v1alpha1",
                        "serviceexports.multicluster.x-k8s.io/v1beta1",
                        "serviceimports.multicluster.x-k8s.io/v1alpha1",
                        "serviceimports.multicluster.x-k8s.io/v1beta1",
                        "clusterproperties.about.k8s.io/v1alpha1 (cluster)",
                        "serviceexportrecords.mcs.slicewright.io/v1alpha1",
                    }));
  for (int i : {0, 1}) {
    EXPECT_EQ(crds[i]["metadata"]["labels"]["multicluster.x-k8s.io/release-version"], "v0.5.2");
    EXPECT_EQ(crds[i]["metadata"]["labels"]["multicluster.x-k8s.io/crd-schema-revision"], "0");
  }
  // status.endpointSliceObjects in both ServiceImport versions: optional, enum, no default.
  for (const json& version : crds[1]["spec"]["versions"]) {
    const json& status = version["schema"]["openAPIV3Schema"]["properties"]["status"];
    EXPECT_EQ(status["properties"]["endpointSliceObjects"],
              (json{{"description",
                     "endpointSliceObjects indicates whether imported EndpointSlice objects are\n"
                     "present for this ServiceImport."},
                    {"type", "string"},
                    {"enum", {"Present", "Absent"}}}))
        << version["name"];
    EXPECT_FALSE(status.contains("required"));
  }
  EXPECT_EQ(crds[1]["spec"]["versions"][1]["storage"], true);
}

// Every CRD we ship in a protected group (k8s.io, kubernetes.io and their subdomains, as
// kube-apiserver's apiextensions validation reads them) carries the api-approved.kubernetes.io
// annotation, without which kube-apiserver refuses it ("protected groups must have approval
// annotation"), so `kubectl apply -k deploy/mcs/member` failed on every real member (issue #30).
// about.k8s.io's value is about-api's own: its KEP pull request.
TEST(EmbeddedCrdsTest, ProtectedGroupsCarryTheApprovalAnnotation) {
  const auto is_protected = [](const std::string& group) {
    for (const std::string suffix : {"k8s.io", "kubernetes.io"}) {
      if (group == suffix) return true;
      if (group.size() > suffix.size() + 1 &&
          group.compare(group.size() - suffix.size() - 1, std::string::npos, "." + suffix) == 0) {
        return true;
      }
    }
    return false;
  };
  EXPECT_TRUE(is_protected("about.k8s.io"));
  EXPECT_FALSE(is_protected("multicluster.x-k8s.io"));
  EXPECT_FALSE(is_protected("mcs.slicewright.io"));
  int protected_crds = 0;
  for (const json& crd : McsCrds()) {
    const std::string group = crd["spec"]["group"];
    if (!is_protected(group)) continue;
    ++protected_crds;
    const json annotation = crd["metadata"]
                                .value("annotations", json::object())
                                .value("api-approved.kubernetes.io", json());
    ASSERT_TRUE(annotation.is_string()) << crd["metadata"]["name"];
    const std::string value = annotation;
    EXPECT_TRUE(value.starts_with("https://github.com/kubernetes/") ||
                value.starts_with("unapproved"))
        << crd["metadata"]["name"] << ": " << value;
  }
  EXPECT_EQ(protected_crds, 1);  // clusterproperties.about.k8s.io
  EXPECT_EQ(McsCrds()[2]["metadata"]["annotations"]["api-approved.kubernetes.io"],
            "https://github.com/kubernetes/enhancements/pull/3084");
}

// A manifest that holds something other than a CRD, or is not YAML, is refused by name.
TEST(EmbeddedCrdsTest, RefusesOtherDocuments) {
  Result<std::vector<std::string>> other = CrdDocuments(
      {"mixed.yaml",
       "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: "
       "a}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n"});
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().code(), StatusCode::kBadRequest);
  EXPECT_EQ(other.status().message(),
            "mixed.yaml: document 2 is a ConfigMap, not an apiextensions.k8s.io/v1 "
            "CustomResourceDefinition");
  Result<std::vector<std::string>> broken = CrdDocuments({"broken.yaml", "a: [1, 2\n"});
  ASSERT_FALSE(broken.ok());
  EXPECT_EQ(broken.status().code(), StatusCode::kBadRequest);
  EXPECT_NE(broken.status().ToString().find("broken.yaml"), std::string::npos);
  Result<std::vector<std::string>> empty = CrdDocuments({"empty.yaml", "---\n"});
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

}  // namespace
}  // namespace slicewright::apiserver

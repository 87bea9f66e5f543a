// Tests for discovery documents, Accept negotiation and the OpenAPI v3 documents kubectl reads.
#include "apiserver/api/discovery.h"

#include <map>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "apiserver/api/openapi.h"

namespace slicewright::apiserver {
namespace {

using nlohmann::json;

constexpr std::string_view kKubectlDiscoveryAccept =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
    "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";
constexpr std::string_view kKubectlTableAccept =
    "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;"
    "g=meta.k8s.io,application/json";

// Adds example.com widgets in v1alpha1, v1 and v1beta1 (registration order), v1 with a schema.
void AddWidgets(ResourceRegistry& registry) {
  ResourceInfo a;
  a.group = "example.com";
  a.resource = "widgets";
  a.singular = "widget";
  a.kind = "Widget";
  a.list_kind = "WidgetList";
  a.has_status = true;
  a.version = "v1alpha1";
  ResourceInfo b = a;
  b.version = "v1beta1";
  ResourceInfo c = a;
  c.version = "v1";
  c.schema = std::make_shared<const json>(json{{"type", "object"}});
  registry.SetCustom("widgets.example.com", {a, c, b});
}

const json* FindByName(const json& list, std::string_view key, std::string_view name) {
  for (const json& item : list) {
    if (item.at(key) == name) return &item;
  }
  return nullptr;
}

// Accept headers pick the discovery form, honouring order and q-values.
TEST(DiscoveryTest, NegotiatesDiscovery) {
  struct Case {
    std::string_view name, accept;
    DiscoveryFormat want;
  };
  const Case cases[] = {
      {"kubectl 1.32", kKubectlDiscoveryAccept, DiscoveryFormat::kAggregatedV2},
      {"v2beta1 only", "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList",
       DiscoveryFormat::kAggregatedV2Beta1},
      {"plain json", "application/json, */*", DiscoveryFormat::kLegacy},
      {"empty", "", DiscoveryFormat::kLegacy},
      {"json first",
       "application/json,application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
       DiscoveryFormat::kLegacy},
      {"q prefers aggregated",
       "application/json;q=0.5, "
       "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
       DiscoveryFormat::kAggregatedV2},
      {"protobuf then v2",
       "application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
       "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
       DiscoveryFormat::kAggregatedV2},
      {"spaces and case",
       " Application/JSON ; g=apidiscovery.k8s.io ; v=v2 ; as=APIGroupDiscoveryList",
       DiscoveryFormat::kAggregatedV2},
      {"unknown version", "application/json;g=apidiscovery.k8s.io;v=v3;as=APIGroupDiscoveryList",
       DiscoveryFormat::kLegacy},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.name));
    EXPECT_EQ(NegotiateDiscovery(c.accept), c.want);
    EXPECT_EQ(AcceptsAggregatedDiscovery(c.accept), c.want != DiscoveryFormat::kLegacy);
  }
  EXPECT_EQ(DiscoveryContentType(DiscoveryFormat::kAggregatedV2),
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList");
  EXPECT_EQ(DiscoveryContentType(DiscoveryFormat::kLegacy), "application/json");
}

// Accept headers ask for a Table only when the first servable range is a v1 Table.
TEST(DiscoveryTest, AcceptsTable) {
  EXPECT_TRUE(AcceptsTable(kKubectlTableAccept));
  EXPECT_FALSE(AcceptsTable("application/json"));
  EXPECT_FALSE(AcceptsTable("application/json;as=Table;v=v1beta1;g=meta.k8s.io"));
  EXPECT_FALSE(AcceptsTable("application/json,application/json;as=Table;v=v1;g=meta.k8s.io"));
  EXPECT_TRUE(AcceptsTable("application/yaml,application/json;as=Table;v=v1;g=meta.k8s.io"));
  EXPECT_EQ(TableContentType(), "application/json;as=Table;v=v1;g=meta.k8s.io");
  std::vector<MediaRange> ranges = ParseAccept("application/json;as=Table;v=v1;g=meta.k8s.io");
  ASSERT_EQ(ranges.size(), 1u);
  EXPECT_EQ(ranges[0].Param("as"), "Table");
  EXPECT_EQ(ranges[0].Param("missing"), "");
  EXPECT_TRUE(ParseAccept(",,;garbage,/x").empty());
}

// Version preference follows Kubernetes' kube-aware ordering.
TEST(DiscoveryTest, KubeAwareVersionOrder) {
  EXPECT_LT(CompareKubeAwareVersions("v1", "v1beta1"), 0);
  EXPECT_LT(CompareKubeAwareVersions("v2", "v1"), 0);
  EXPECT_LT(CompareKubeAwareVersions("v1beta2", "v1beta1"), 0);
  EXPECT_LT(CompareKubeAwareVersions("v1beta1", "v1alpha1"), 0);
  EXPECT_LT(CompareKubeAwareVersions("v2alpha1", "foo"), 0);
  EXPECT_LT(CompareKubeAwareVersions("bar", "foo"), 0);
  EXPECT_EQ(CompareKubeAwareVersions("v1", "v1"), 0);
  EXPECT_GT(CompareKubeAwareVersions("v1alpha1", "v11alpha1"), 0);
}

// /version and /api have the fields clients read.
TEST(DiscoveryTest, VersionAndCoreVersions) {
  json v = VersionDocument();
  EXPECT_EQ(v["major"], "1");
  EXPECT_EQ(v["minor"], "32");
  EXPECT_EQ(v["gitVersion"], "v1.32.0-slicewright");
  EXPECT_EQ(v["platform"], "linux/amd64");
  json api = CoreApiVersions("127.0.0.1:6443");
  EXPECT_EQ(api, json::parse(R"({"kind":"APIVersions","versions":["v1"],
      "serverAddressByClientCIDRs":[{"clientCIDR":"0.0.0.0/0","serverAddress":"127.0.0.1:6443"}]})"));
  EXPECT_FALSE(CoreApiVersions().contains("serverAddressByClientCIDRs"));
}

// /apis lists every non-core group with its preferred version first.
TEST(DiscoveryTest, GroupList) {
  ResourceRegistry registry;
  AddWidgets(registry);
  json list = ApiGroupList(registry);
  EXPECT_EQ(list["kind"], "APIGroupList");
  EXPECT_EQ(FindByName(list["groups"], "name", ""), nullptr);
  const json* slices = FindByName(list["groups"], "name", "discovery.k8s.io");
  ASSERT_NE(slices, nullptr);
  EXPECT_EQ(slices->at("preferredVersion"),
            json::parse(R"({"groupVersion":"discovery.k8s.io/v1","version":"v1"})"));
  const json* widgets = FindByName(list["groups"], "name", "example.com");
  ASSERT_NE(widgets, nullptr);
  EXPECT_EQ(widgets->at("preferredVersion")["version"], "v1");
  EXPECT_EQ(widgets->at("versions")[1]["version"], "v1beta1");
  EXPECT_EQ(widgets->at("versions")[2]["groupVersion"], "example.com/v1alpha1");

  Result<json> group = ApiGroupDocument(registry, "example.com");
  ASSERT_TRUE(group.ok());
  EXPECT_EQ((*group)["kind"], "APIGroup");
  Result<json> missing = ApiGroupDocument(registry, "nope.io");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(), "the server could not find the requested resource");
  EXPECT_EQ(ApiGroupDocument(registry, "").status().code(), StatusCode::kNotFound);
}

// /api/v1 lists resources and status subresources as kube-apiserver does.
TEST(DiscoveryTest, CoreResourceList) {
  ResourceRegistry registry;
  Result<json> list = ApiResourceList(registry, "", "v1");
  ASSERT_TRUE(list.ok());
  EXPECT_EQ((*list)["groupVersion"], "v1");
  const json& resources = (*list)["resources"];
  const json* pods = FindByName(resources, "name", "pods");
  ASSERT_NE(pods, nullptr);
  EXPECT_EQ(*pods, json::parse(R"({"name":"pods","singularName":"pod","namespaced":true,
      "kind":"Pod","verbs":["create","delete","deletecollection","get","list","patch","update",
      "watch"],"shortNames":["po"],"categories":["all"]})"));
  const json* status = FindByName(resources, "name", "pods/status");
  ASSERT_NE(status, nullptr);
  EXPECT_EQ((*status)["verbs"], json::parse(R"(["get","patch","update"])"));
  const json* ns = FindByName(resources, "name", "namespaces");
  ASSERT_NE(ns, nullptr);
  EXPECT_EQ((*ns)["namespaced"], false);
  EXPECT_EQ((*ns)["verbs"].size(), 7u);
  EXPECT_EQ(FindByName(resources, "name", "configmaps/status"), nullptr);
  for (std::size_t i = 1; i < resources.size(); ++i) {
    EXPECT_LT(resources[i - 1]["name"].get<std::string>(), resources[i]["name"].get<std::string>());
  }
  EXPECT_EQ(ApiResourceList(registry, "", "v2").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(ApiResourceList(registry, "batch", "v1").status().code(), StatusCode::kNotFound);
}

// The deploy/ manifests' kinds: apps/v1 Deployments with their status subresource, policy/v1
// PodDisruptionBudgets, and the RBAC kinds with kube-apiserver's scopes.
TEST(DiscoveryTest, DeployKinds) {
  ResourceRegistry registry;
  Result<json> apps = ApiResourceList(registry, "apps", "v1");
  ASSERT_TRUE(apps.ok());
  const json* deployments = FindByName((*apps)["resources"], "name", "deployments");
  ASSERT_NE(deployments, nullptr);
  EXPECT_EQ(*deployments, json::parse(R"({"name":"deployments","singularName":"deployment",
      "namespaced":true,"kind":"Deployment","verbs":["create","delete","deletecollection","get",
      "list","patch","update","watch"],"shortNames":["deploy"],"categories":["all"]})"));
  EXPECT_NE(FindByName((*apps)["resources"], "name", "deployments/status"), nullptr);
  // The workload kinds serve autoscaling/v1 Scale, as `kubectl scale` looks it up.
  for (const char* resource : {"deployments", "replicasets", "statefulsets"}) {
    SCOPED_TRACE(resource);
    const json* scale = FindByName((*apps)["resources"], "name", std::string(resource) + "/scale");
    ASSERT_NE(scale, nullptr);
    EXPECT_EQ((*scale)["group"], "autoscaling");
    EXPECT_EQ((*scale)["version"], "v1");
    EXPECT_EQ((*scale)["kind"], "Scale");
  }
  const json* statefulsets = FindByName((*apps)["resources"], "name", "statefulsets");
  ASSERT_NE(statefulsets, nullptr);
  EXPECT_EQ((*statefulsets)["shortNames"], json::parse(R"(["sts"])"));
  const json* replicasets = FindByName((*apps)["resources"], "name", "replicasets");
  ASSERT_NE(replicasets, nullptr);
  EXPECT_EQ((*replicasets)["shortNames"], json::parse(R"(["rs"])"));

  json groups = AggregatedDiscovery(registry, false, DiscoveryFormat::kAggregatedV2);
  std::map<std::string, const json*> by_resource;
  for (const json& item : groups["items"]) {
    for (const json& version : item["versions"]) {
      for (const json& r : version["resources"]) {
        by_resource[item["metadata"]["name"].get<std::string>() + "/" +
                    r["resource"].get<std::string>()] = &r;
      }
    }
  }
  const json* pdb = by_resource["policy/poddisruptionbudgets"];
  ASSERT_NE(pdb, nullptr);
  EXPECT_EQ((*pdb)["scope"], "Namespaced");
  EXPECT_EQ((*pdb)["shortNames"], json::parse(R"(["pdb"])"));
  EXPECT_EQ((*pdb)["subresources"][0]["subresource"], "status");
  const json* sts = by_resource["apps/statefulsets"];
  ASSERT_NE(sts, nullptr);
  EXPECT_EQ((*sts)["subresources"], json::parse(R"([
      {"subresource":"scale","responseKind":{"group":"autoscaling","version":"v1","kind":"Scale"},
       "verbs":["get","patch","update"]},
      {"subresource":"status","responseKind":{"group":"apps","version":"v1","kind":"StatefulSet"},
       "verbs":["get","patch","update"]}])"));
  const struct {
    const char* resource;
    const char* scope;
  } rbac[] = {{"clusterroles", "Cluster"},
              {"clusterrolebindings", "Cluster"},
              {"roles", "Namespaced"},
              {"rolebindings", "Namespaced"}};
  for (const auto& c : rbac) {
    SCOPED_TRACE(c.resource);
    const json* r = by_resource[std::string("rbac.authorization.k8s.io/") + c.resource];
    ASSERT_NE(r, nullptr);
    EXPECT_EQ((*r)["scope"], c.scope);
    EXPECT_FALSE(r->contains("subresources"));
  }
  const json list = ApiGroupList(registry);
  EXPECT_NE(FindByName(list["groups"], "name", "rbac.authorization.k8s.io"), nullptr);
  EXPECT_NE(FindByName(list["groups"], "name", "policy"), nullptr);
}

// The aggregated forms hold the core group (for /api) or the others (for /apis).
TEST(DiscoveryTest, Aggregated) {
  ResourceRegistry registry;
  AddWidgets(registry);
  json core = AggregatedDiscovery(registry, true, DiscoveryFormat::kAggregatedV2);
  EXPECT_EQ(core["kind"], "APIGroupDiscoveryList");
  EXPECT_EQ(core["apiVersion"], "apidiscovery.k8s.io/v2");
  ASSERT_EQ(core["items"].size(), 1u);
  EXPECT_EQ(core["items"][0]["metadata"]["name"], "");
  const json& v1 = core["items"][0]["versions"][0];
  EXPECT_EQ(v1["version"], "v1");
  EXPECT_EQ(v1["freshness"], "Current");
  const json* pods = FindByName(v1["resources"], "resource", "pods");
  ASSERT_NE(pods, nullptr);
  EXPECT_EQ(*pods, json::parse(R"({"resource":"pods",
      "responseKind":{"group":"","version":"v1","kind":"Pod"},"scope":"Namespaced",
      "singularResource":"pod","verbs":["create","delete","deletecollection","get","list",
      "patch","update","watch"],"shortNames":["po"],"categories":["all"],
      "subresources":[{"subresource":"status",
        "responseKind":{"group":"","version":"v1","kind":"Pod"},
        "verbs":["get","patch","update"]}]})"));
  const json* nodes = FindByName(v1["resources"], "resource", "nodes");
  ASSERT_NE(nodes, nullptr);
  EXPECT_EQ((*nodes)["scope"], "Cluster");

  json groups = AggregatedDiscovery(registry, false, DiscoveryFormat::kAggregatedV2Beta1);
  EXPECT_EQ(groups["apiVersion"], "apidiscovery.k8s.io/v2beta1");
  const json* widgets = nullptr;
  for (const json& item : groups["items"]) {
    EXPECT_NE(item["metadata"]["name"], "");
    if (item["metadata"]["name"] == "example.com") widgets = &item;
  }
  ASSERT_NE(widgets, nullptr);
  EXPECT_EQ((*widgets)["versions"][0]["version"], "v1");
  EXPECT_EQ((*widgets)["versions"][0]["resources"][0]["responseKind"]["kind"], "Widget");
}

// The OpenAPI v3 index lists every served group version with a content hash.
TEST(OpenApiTest, Index) {
  ResourceRegistry registry;
  AddWidgets(registry);
  json index = OpenApiV3Index(registry);
  for (const char* gv : {"api/v1", "apis/discovery.k8s.io/v1", "apis/coordination.k8s.io/v1",
                         "apis/events.k8s.io/v1", "apis/apiextensions.k8s.io/v1",
                         "apis/example.com/v1", "apis/example.com/v1alpha1"}) {
    SCOPED_TRACE(gv);
    ASSERT_TRUE(index["paths"].contains(gv));
    Result<json> doc = OpenApiV3Document(registry, gv);
    ASSERT_TRUE(doc.ok());
    EXPECT_EQ(index["paths"][gv]["serverRelativeURL"],
              "/openapi/v3/" + std::string(gv) + "?hash=" + OpenApiV3Hash(*doc));
  }
  EXPECT_EQ(OpenApiV3Hash(json{{"a", 1}}), OpenApiV3Hash(json{{"a", 1}}));
  EXPECT_NE(OpenApiV3Hash(json{{"a", 1}}), OpenApiV3Hash(json{{"a", 2}}));
  EXPECT_EQ(OpenApiV3Hash(json{{"a", 1}}).size(), 16u);
  Result<json> missing = OpenApiV3Document(registry, "apis/batch/v1");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

// Every GVK's PATCH (and POST/PUT) operation declares the GVK and fieldValidation, which makes
// kubectl use server-side field validation; strategic merge patch is offered for built-ins only.
TEST(OpenApiTest, EveryKindSupportsFieldValidation) {
  ResourceRegistry registry;
  AddWidgets(registry);
  for (const ResourcePtr& r : registry.All()) {
    SCOPED_TRACE(r->GroupVersion() + " " + r->kind);
    std::string path = r->group.empty() ? "api/v1" : "apis/" + r->GroupVersion();
    Result<json> doc = OpenApiV3Document(registry, path);
    ASSERT_TRUE(doc.ok());
    EXPECT_EQ((*doc)["openapi"], "3.0.0");
    ASSERT_TRUE((*doc)["components"]["schemas"].is_object());
    int patches = 0;
    for (const auto& [p, item] : (*doc)["paths"].items()) {
      for (const char* verb : {"patch", "post", "put"}) {
        if (!item.contains(verb)) continue;
        const json& op = item[verb];
        if (op["x-kubernetes-group-version-kind"] !=
            json{{"group", r->group}, {"version", r->version}, {"kind", r->kind}}) {
          continue;
        }
        bool has_field_validation = false;
        for (const json& param : op["parameters"]) {
          if (param["name"] == "fieldValidation" && param["in"] == "query") {
            has_field_validation = true;
          }
        }
        EXPECT_TRUE(has_field_validation) << p << " " << verb;
        if (std::string(verb) == "patch") {
          ++patches;
          const json& content = op["requestBody"]["content"];
          EXPECT_TRUE(content.contains("application/merge-patch+json"));
          EXPECT_TRUE(content.contains("application/json-patch+json"));
          EXPECT_EQ(content.contains("application/strategic-merge-patch+json"), r->builtin);
        }
      }
    }
    EXPECT_EQ(patches, r->has_status ? 2 : 1);
  }
}

// Paths and schemas follow kube's layout; custom kinds expose their CRD schema tagged with the
// GVK, built-ins no schema at all (kubectl would otherwise compute patches from it).
TEST(OpenApiTest, PathsAndSchemas) {
  ResourceRegistry registry;
  AddWidgets(registry);
  json core = *OpenApiV3Document(registry, "api/v1");
  const json& paths = core["paths"];
  EXPECT_TRUE(paths.contains("/api/v1/namespaces/{namespace}/pods"));
  EXPECT_TRUE(paths.contains("/api/v1/namespaces/{namespace}/pods/{name}"));
  EXPECT_TRUE(paths.contains("/api/v1/namespaces/{namespace}/pods/{name}/status"));
  EXPECT_TRUE(paths.contains("/api/v1/pods"));
  EXPECT_TRUE(paths.contains("/api/v1/nodes/{name}/status"));
  EXPECT_FALSE(paths.contains("/api/v1/namespaces/{namespace}/nodes"));
  EXPECT_EQ(paths["/api/v1/namespaces/{namespace}/pods/{name}"]["patch"]["operationId"],
            "patchCoreV1NamespacedPod");
  EXPECT_TRUE(core["components"]["schemas"].empty());

  json widgets = *OpenApiV3Document(registry, "apis/example.com/v1");
  EXPECT_EQ(widgets["paths"]["/apis/example.com/v1/namespaces/{namespace}/widgets/{name}"]["patch"]
                   ["operationId"],
            "patchExampleComV1NamespacedWidget");
  const json& schema = widgets["components"]["schemas"]["com.example.v1.Widget"];
  EXPECT_EQ(schema["type"], "object");
  EXPECT_EQ(schema["x-kubernetes-group-version-kind"],
            json::parse(R"([{"group":"example.com","version":"v1","kind":"Widget"}])"));
  json alpha = *OpenApiV3Document(registry, "apis/example.com/v1alpha1");
  EXPECT_TRUE(alpha["components"]["schemas"].empty());  // that version had no schema
}

}  // namespace
}  // namespace slicewright::apiserver

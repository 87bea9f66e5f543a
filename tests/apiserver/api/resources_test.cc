// Tests for the resource registry: built-in lookups, storage keys, custom resources.
#include "apiserver/api/resources.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace slicewright::apiserver {
namespace {

// Built-in kinds are found by resource and by kind, with kube's scope, subresources and names.
TEST(ResourceRegistryTest, FindsBuiltins) {
  ResourceRegistry registry;
  struct Case {
    std::string_view group, resource, kind;
    bool namespaced, has_status, tracks_generation;
    std::string short_name;
  };
  const Case cases[] = {
      {"", "pods", "Pod", true, true, false, "po"},
      {"", "namespaces", "Namespace", false, true, false, "ns"},
      {"", "nodes", "Node", false, true, false, "no"},
      {"", "services", "Service", true, true, false, "svc"},
      {"", "endpoints", "Endpoints", true, false, false, "ep"},
      {"", "configmaps", "ConfigMap", true, false, false, "cm"},
      {"", "secrets", "Secret", true, false, false, ""},
      {"", "events", "Event", true, false, false, "ev"},
      {"", "serviceaccounts", "ServiceAccount", true, false, false, "sa"},
      {"discovery.k8s.io", "endpointslices", "EndpointSlice", true, false, true, ""},
      {"coordination.k8s.io", "leases", "Lease", true, false, false, ""},
      {"events.k8s.io", "events", "Event", true, false, false, "ev"},
      {"apiextensions.k8s.io", "customresourcedefinitions", "CustomResourceDefinition", false, true,
       true, "crd"},
      {"apps", "deployments", "Deployment", true, true, true, "deploy"},
      {"apps", "replicasets", "ReplicaSet", true, true, true, "rs"},
      {"apps", "statefulsets", "StatefulSet", true, true, true, "sts"},
      {"policy", "poddisruptionbudgets", "PodDisruptionBudget", true, true, true, "pdb"},
      {"rbac.authorization.k8s.io", "clusterroles", "ClusterRole", false, false, false, ""},
      {"rbac.authorization.k8s.io", "clusterrolebindings", "ClusterRoleBinding", false, false,
       false, ""},
      {"rbac.authorization.k8s.io", "roles", "Role", true, false, false, ""},
      {"rbac.authorization.k8s.io", "rolebindings", "RoleBinding", true, false, false, ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.resource));
    ResourcePtr r = registry.Find(c.group, "v1", c.resource);
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r, registry.FindKind(c.group, "v1", c.kind));
    EXPECT_EQ(r->namespaced, c.namespaced);
    EXPECT_EQ(r->has_status, c.has_status);
    EXPECT_EQ(r->tracks_generation, c.tracks_generation);
    EXPECT_TRUE(r->builtin);
    EXPECT_EQ(r->list_kind, std::string(c.kind) + "List");
    if (!c.short_name.empty()) {
      ASSERT_FALSE(r->short_names.empty());
      EXPECT_EQ(r->short_names[0], c.short_name);
    }
  }
  EXPECT_EQ(registry.Find("", "v1", "deployments"), nullptr);
  EXPECT_EQ(registry.Find("apps", "v1", "daemonsets"), nullptr);
  // apps/v1's workloads serve the scale subresource and are in "all"; nothing else scales.
  for (std::string_view resource : {"deployments", "replicasets", "statefulsets"}) {
    EXPECT_TRUE(registry.Find("apps", "v1", resource)->has_scale) << resource;
    EXPECT_EQ(registry.Find("apps", "v1", resource)->categories, std::vector<std::string>{"all"});
  }
  EXPECT_FALSE(registry.Find("", "v1", "pods")->has_scale);
  // Singular names are the lower-cased kinds, as kube-apiserver lists them.
  EXPECT_EQ(registry.Find("rbac.authorization.k8s.io", "v1", "clusterrolebindings")->singular,
            "clusterrolebinding");
  EXPECT_EQ(registry.Find("policy", "v1", "poddisruptionbudgets")->singular, "poddisruptionbudget");
  EXPECT_EQ(registry.Find("", "v2", "pods"), nullptr);
  EXPECT_EQ(registry.FindKind("discovery.k8s.io", "v1", "Pod"), nullptr);
}

// Pods carry kube's selectable fields and the "all" category.
TEST(ResourceRegistryTest, PodSelectableFieldsAndCategories) {
  ResourceRegistry registry;
  ResourcePtr pods = registry.Find("", "v1", "pods");
  ASSERT_NE(pods, nullptr);
  EXPECT_EQ(pods->singular, "pod");
  EXPECT_EQ(pods->categories, std::vector<std::string>{"all"});
  EXPECT_EQ(pods->selectable_fields,
            (std::vector<std::string>{"spec.nodeName", "spec.restartPolicy", "spec.schedulerName",
                                      "spec.serviceAccountName", "status.phase", "status.podIP",
                                      "status.nominatedNodeName"}));
}

// Deployments are in the "all" category (`kubectl get all`); the other deploy/ kinds are not.
TEST(ResourceRegistryTest, DeployKindsCategories) {
  ResourceRegistry registry;
  EXPECT_EQ(registry.Find("apps", "v1", "deployments")->categories,
            std::vector<std::string>{"all"});
  EXPECT_TRUE(registry.Find("policy", "v1", "poddisruptionbudgets")->categories.empty());
  EXPECT_TRUE(registry.Find("rbac.authorization.k8s.io", "v1", "roles")->categories.empty());
  EXPECT_EQ(registry.Find("rbac.authorization.k8s.io", "v1", "clusterroles")->Key("", "r"),
            "/registry/rbac.authorization.k8s.io/clusterroles/r");
}

// Storage keys: "/registry/<group or core>/<resource>/[namespace/]name".
TEST(ResourceRegistryTest, Keys) {
  ResourceRegistry registry;
  EXPECT_EQ(registry.Find("", "v1", "pods")->Key("default", "web-1"),
            "/registry/core/pods/default/web-1");
  EXPECT_EQ(registry.Find("", "v1", "nodes")->Key("", "n1"), "/registry/core/nodes/n1");
  EXPECT_EQ(registry.Find("discovery.k8s.io", "v1", "endpointslices")->KeyPrefix(),
            "/registry/discovery.k8s.io/endpointslices/");
  EXPECT_EQ(registry.Find("discovery.k8s.io", "v1", "endpointslices")->GroupVersion(),
            "discovery.k8s.io/v1");
  EXPECT_EQ(registry.Find("", "v1", "pods")->GroupVersion(), "v1");
}

// Groups come in registration order, core first.
TEST(ResourceRegistryTest, GroupsAndVersions) {
  ResourceRegistry registry;
  EXPECT_EQ(registry.Groups(),
            (std::vector<std::string>{"", "apps", "discovery.k8s.io", "coordination.k8s.io",
                                      "events.k8s.io", "policy", "rbac.authorization.k8s.io",
                                      "apiextensions.k8s.io"}));
  EXPECT_EQ(registry.Versions(""), std::vector<std::string>{"v1"});
  EXPECT_TRUE(registry.Versions("example.com").empty());
}

// SetCustom adds, replaces and RemoveCustom removes one CRD's resources, bumping the generation.
TEST(ResourceRegistryTest, CustomResources) {
  ResourceRegistry registry;
  const std::uint64_t g0 = registry.generation();
  ResourceInfo a;
  a.group = "example.com";
  a.version = "v1alpha1";
  a.resource = "widgets";
  a.kind = "Widget";
  ResourceInfo b = a;
  b.version = "v1";
  registry.SetCustom("widgets.example.com", {a, b});
  EXPECT_GT(registry.generation(), g0);
  ResourcePtr found = registry.Find("example.com", "v1", "widgets");
  ASSERT_NE(found, nullptr);
  EXPECT_FALSE(found->builtin);
  EXPECT_EQ(found->crd_name, "widgets.example.com");
  EXPECT_EQ(found->KeyPrefix(), "/registry/example.com/widgets/");
  EXPECT_EQ(registry.Versions("example.com"), (std::vector<std::string>{"v1alpha1", "v1"}));
  EXPECT_EQ(registry.All().back()->version, "v1");

  const std::uint64_t g1 = registry.generation();
  registry.SetCustom("widgets.example.com", {b});
  EXPECT_GT(registry.generation(), g1);
  EXPECT_EQ(registry.Find("example.com", "v1alpha1", "widgets"), nullptr);
  ASSERT_NE(registry.FindKind("example.com", "v1", "Widget"), nullptr);

  const std::uint64_t g2 = registry.generation();
  registry.RemoveCustom("widgets.example.com");
  EXPECT_GT(registry.generation(), g2);
  EXPECT_EQ(registry.Find("example.com", "v1", "widgets"), nullptr);
  const std::uint64_t g3 = registry.generation();
  registry.RemoveCustom("widgets.example.com");  // nothing to remove
  EXPECT_EQ(registry.generation(), g3);
  EXPECT_NE(registry.Find("", "v1", "pods"), nullptr);
}

// Snapshots stay valid after the registry changes.
TEST(ResourceRegistryTest, SnapshotsOutliveChanges) {
  ResourceRegistry registry;
  ResourceInfo a;
  a.group = "example.com";
  a.version = "v1";
  a.resource = "widgets";
  a.kind = "Widget";
  registry.SetCustom("widgets.example.com", {a});
  ResourcePtr held = registry.Find("example.com", "v1", "widgets");
  registry.RemoveCustom("widgets.example.com");
  ASSERT_NE(held, nullptr);
  EXPECT_EQ(held->kind, "Widget");
}

}  // namespace
}  // namespace slicewright::apiserver

// The reconciler sees no difference between real Pods as `kubectl get -o json` prints them and the
// compact form the Pod caches keep them in: read in place, or rebuilt with ToPod().
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "slicewright/codec/json.h"
#include "slicewright/model/compact_pod.h"
#include "slicewright/reconcile/pod_source.h"

namespace slicewright::cache {
namespace {

using model::CompactPod;
using model::PodInterners;

std::string ReadTestData(const std::string& name) {
  std::ifstream in(std::string(SW_SOURCE_DIR) + "/testdata/codec/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

model::Pod TypicalPod() {
  Result<model::Pod> pod = codec::DecodePod(R"({
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "web-7d9f8c6b5-x2k4q", "namespace": "shop",
      "uid": "5b0c7a8e-3d2f-4e61-b7a9-1c2d3e4f5a6b", "resourceVersion": "123456",
      "creationTimestamp": "2026-01-02T03:04:05Z",
      "labels": {"app": "web", "pod-template-hash": "7d9f8c6b5"},
      "annotations": {"kubectl.kubernetes.io/restartedAt": "x",
        "k8s.v1.cni.cncf.io/network-status": "[]"},
      "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7d9f8c6b5",
        "uid": "0d6b3f5e-8c3f-4a44-9d0e-2f1c9e0a7b11", "controller": true}]},
    "spec": {"nodeName": "node-3",
      "containers": [{"name": "app", "image": "nginx", "ports": [{"name": "http",
        "containerPort": 8080}, {"name": "dns", "containerPort": 53, "protocol": "UDP"}]},
        {"name": "metrics", "image": "exporter", "ports": [{"name": "metrics",
        "containerPort": 9100}]}],
      "initContainers": [{"name": "init", "image": "busybox", "ports": [{"name": "ignored",
        "containerPort": 1}]}, {"name": "proxy", "image": "envoy", "restartPolicy": "Always",
        "ports": [{"name": "proxy", "containerPort": 15001}]}]},
    "status": {"phase": "Running", "podIP": "10.244.1.7",
      "podIPs": [{"ip": "10.244.1.7"}, {"ip": "fd00::1:7"}],
      "conditions": [{"type": "Initialized", "status": "True"},
        {"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-02T03:04:20Z"}]}})");
  EXPECT_TRUE(pod.ok()) << pod.status().ToString();
  return pod.ok() ? *pod : model::Pod();
}

// The reconciler derives exactly the same desired state from the compact pods as from the
// decoded ones, for real objects as `kubectl get -o json` prints them.
TEST(CompactPodTest, ReconcilerSeesNoDifference) {
  Result<codec::ObjectSet> objects = codec::DecodeJsonDocument(ReadTestData("pods.json"), "pods");
  ASSERT_TRUE(objects.ok()) << objects.status().ToString();
  Result<codec::ObjectSet> services =
      codec::DecodeJsonDocument(ReadTestData("services.json"), "services");
  ASSERT_TRUE(services.ok()) << services.status().ToString();
  Result<codec::ObjectSet> nodes = codec::DecodeJsonDocument(ReadTestData("nodes.json"), "nodes");
  ASSERT_TRUE(nodes.ok()) << nodes.status().ToString();
  std::vector<model::Pod> pods = objects->pods;
  pods.push_back(TypicalPod());
  model::Pod terminating = TypicalPod();
  terminating.metadata.name = "web-terminating";
  terminating.metadata.deletion_timestamp = model::Time::FromUnixSeconds(1'800'000'000);
  terminating.status.pod_ips = {"10.244.1.8"};
  terminating.status.pod_ip = "10.244.1.8";
  pods.push_back(terminating);

  PodInterners interners;
  std::vector<CompactPod> compact;
  std::vector<model::Pod> round_tripped;
  for (const model::Pod& pod : pods) {
    compact.push_back(CompactPod::FromPod(pod, interners));
    round_tripped.push_back(compact.back().ToPod());
  }
  std::vector<const model::Pod*> original_ptrs;
  std::vector<const model::Pod*> round_tripped_ptrs;
  std::vector<const CompactPod*> compact_ptrs;
  for (std::size_t i = 0; i < pods.size(); ++i) {
    original_ptrs.push_back(&pods[i]);
    round_tripped_ptrs.push_back(&round_tripped[i]);
    compact_ptrs.push_back(&compact[i]);
  }
  const auto node_lookup = [&](std::string_view name) -> const model::Node* {
    for (const model::Node& node : nodes->nodes) {
      if (node.metadata.name == name) return &node;
    }
    return nullptr;
  };
  int compared_groups = 0;
  for (model::Service service : services->services) {
    if (!service.spec.selector.has_value()) continue;
    for (const bool publish_not_ready : {false, true}) {
      service.spec.publish_not_ready_addresses = publish_not_ready;
      const reconcile::DesiredEndpoints want =
          reconcile::DesiredFromService(service, original_ptrs, node_lookup, {});
      for (const bool in_place : {false, true}) {
        const reconcile::DesiredEndpoints got =
            in_place ? reconcile::DesiredFromService(service, compact_ptrs, node_lookup, {})
                     : reconcile::DesiredFromService(service, round_tripped_ptrs, node_lookup, {});
        ASSERT_EQ(got.groups.size(), want.groups.size()) << service.metadata.name;
        for (std::size_t g = 0; g < want.groups.size(); ++g) {
          EXPECT_EQ(got.groups[g].address_type, want.groups[g].address_type);
          EXPECT_EQ(got.groups[g].ports, want.groups[g].ports);
          EXPECT_EQ(got.groups[g].endpoints, want.groups[g].endpoints);
          ++compared_groups;
        }
        EXPECT_EQ(got.diagnostics, want.diagnostics);
        EXPECT_EQ(got.address_types, want.address_types);
      }
    }
  }
  EXPECT_GT(compared_groups, 0);
}

}  // namespace
}  // namespace slicewright::cache

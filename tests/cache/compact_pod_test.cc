#include "slicewright/cache/compact_pod.h"

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "slicewright/codec/json.h"
#include "slicewright/reconcile/pod_source.h"

namespace slicewright::cache {
namespace {

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

// The Pod cache's footprint is a promise: docs/performance.md ("Memory per cached Pod") measures
// 373 B per cached Pod with sizeof(CompactPod) at 168 B, under a 400 B budget. A field added here
// is paid 150,000 times; grow this bound only with a new measurement there.
TEST(CompactPodTest, StaysWithinItsMeasuredSize) { EXPECT_LE(sizeof(CompactPod), 168U); }

TEST(CompactPodTest, KeepsWhatTheReconcilerReads) {
  PodInterners interners;
  const model::Pod pod = TypicalPod();
  const CompactPod compact = CompactPod::FromPod(pod, interners);
  EXPECT_EQ(compact.name(), "web-7d9f8c6b5-x2k4q");
  EXPECT_EQ(compact.namespace_(), "shop");
  EXPECT_EQ(compact.node_name(), "node-3");
  EXPECT_EQ(compact.resource_version(), "123456");
  EXPECT_EQ(compact.uid(), "5b0c7a8e-3d2f-4e61-b7a9-1c2d3e4f5a6b");
  EXPECT_EQ(compact.labels(), pod.metadata.labels);
  EXPECT_FALSE(compact.terminating());

  const model::Pod back = compact.ToPod();
  EXPECT_EQ(back.metadata.name, pod.metadata.name);
  EXPECT_EQ(back.metadata.uid, pod.metadata.uid);
  EXPECT_EQ(back.metadata.creation_timestamp, pod.metadata.creation_timestamp);
  EXPECT_TRUE(back.metadata.annotations.empty());
  EXPECT_EQ(back.status.pod_ip, "10.244.1.7");
  EXPECT_EQ(back.status.pod_ips, pod.status.pod_ips);
  EXPECT_EQ(back.status.phase, "Running");
  EXPECT_TRUE(model::IsPodReady(back));
  ASSERT_EQ(back.status.conditions.size(), 1U);
  EXPECT_EQ(back.status.conditions[0].last_transition_time,
            pod.status.conditions[1].last_transition_time);
  ASSERT_EQ(back.spec.containers.size(), 1U);
  EXPECT_EQ(back.spec.containers[0].ports.size(), 3U);
  ASSERT_EQ(back.spec.init_containers.size(), 1U);
  EXPECT_EQ(back.spec.init_containers[0].ports[0].name, "proxy");

  // Named ports resolve as on the original pod; the plain init container's port does not.
  for (const char* name : {"http", "dns", "metrics", "proxy", "ignored"}) {
    model::ServicePort port;
    port.target_port = model::IntOrString::FromString(name);
    port.protocol = std::string(name) == "dns" ? "UDP" : "TCP";
    EXPECT_EQ(reconcile::FindPort(back, port), reconcile::FindPort(pod, port)) << name;
  }
}

TEST(CompactPodTest, PodsOfOneTemplateShareTheirValues) {
  PodInterners interners;
  model::Pod a = TypicalPod();
  model::Pod b = TypicalPod();
  b.metadata.name = "web-7d9f8c6b5-zzzzz";
  const CompactPod first = CompactPod::FromPod(a, interners);
  const CompactPod second = CompactPod::FromPod(b, interners);
  EXPECT_EQ(&first.labels(), &second.labels());
  EXPECT_EQ(&first.node_name(), &second.node_name());
  EXPECT_EQ(interners.ports.size(), 1U);
  EXPECT_EQ(interners.label_sets.size(), 1U);
  EXPECT_FALSE(first == second);
  EXPECT_EQ(first, CompactPod::FromPod(a, interners));
}

TEST(CompactPodTest, UnusualValuesSurviveExactly) {
  PodInterners interners;
  model::Pod pod = TypicalPod();
  pod.metadata.uid = "not-a-uuid";
  pod.metadata.resource_version = "opaque/rv";
  pod.metadata.deletion_timestamp = model::Time::FromUnixSeconds(1'800'000'000);
  pod.spec.hostname = "web-0";
  pod.spec.subdomain = "web";
  pod.status.phase = "Exploded";
  pod.status.conditions[1].status = "Maybe";
  pod.status.pod_ip = "10.0.0.1";
  pod.status.pod_ips = {"10.0.0.1", "not-an-ip", "10.0.0.3"};
  const CompactPod compact =
      CompactPod::FromPod(pod, interners, {"k8s.v1.cni.cncf.io/network-status", "absent"});
  const model::Pod back = compact.ToPod();
  EXPECT_EQ(back.metadata.uid, "not-a-uuid");
  EXPECT_EQ(back.metadata.resource_version, "opaque/rv");
  EXPECT_EQ(back.metadata.deletion_timestamp, pod.metadata.deletion_timestamp);
  EXPECT_TRUE(compact.terminating());
  EXPECT_EQ(back.spec.hostname, "web-0");
  EXPECT_EQ(back.spec.subdomain, "web");
  EXPECT_EQ(back.status.phase, "Exploded");
  EXPECT_EQ(back.status.conditions[0].status, "Maybe");
  EXPECT_EQ(back.status.pod_ip, "10.0.0.1");
  EXPECT_EQ(back.status.pod_ips, pod.status.pod_ips);
  EXPECT_EQ(back.metadata.annotations,
            (model::StringMap{{"k8s.v1.cni.cncf.io/network-status", "[]"}}));

  // "0" and leading zeros are not etcd revisions: kept as text.
  for (const char* rv : {"0", "007", "", "18446744073709551616"}) {
    pod.metadata.resource_version = rv;
    EXPECT_EQ(CompactPod::FromPod(pod, interners).resource_version(), rv);
  }
  // A podIP that is not podIPs[0] (an old API server's object) is kept as is.
  pod.status.pod_ip = "10.9.9.9";
  pod.status.pod_ips = {"10.0.0.1"};
  const model::Pod odd = CompactPod::FromPod(pod, interners).ToPod();
  EXPECT_EQ(odd.status.pod_ip, "10.9.9.9");
  EXPECT_EQ(odd.status.pod_ips, pod.status.pod_ips);
  pod.status.pod_ip.clear();
  pod.status.pod_ips.clear();
  const model::Pod none = CompactPod::FromPod(pod, interners).ToPod();
  EXPECT_TRUE(none.status.pod_ip.empty());
  EXPECT_TRUE(none.status.pod_ips.empty());
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
  std::vector<model::Pod> round_tripped;
  for (const model::Pod& pod : pods) {
    round_tripped.push_back(CompactPod::FromPod(pod, interners).ToPod());
  }
  std::vector<const model::Pod*> original_ptrs;
  std::vector<const model::Pod*> compact_ptrs;
  for (std::size_t i = 0; i < pods.size(); ++i) {
    original_ptrs.push_back(&pods[i]);
    compact_ptrs.push_back(&round_tripped[i]);
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
      const reconcile::DesiredEndpoints got =
          reconcile::DesiredFromService(service, compact_ptrs, node_lookup, {});
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
  EXPECT_GT(compared_groups, 0);
}

}  // namespace
}  // namespace slicewright::cache

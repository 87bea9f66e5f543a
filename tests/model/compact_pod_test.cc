#include "slicewright/model/compact_pod.h"

#include <cstddef>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "slicewright/model/core.h"

namespace slicewright::model {
namespace {

Container MakeContainer(std::string name, std::vector<ContainerPort> ports,
                        std::string restart_policy = "") {
  Container container;
  container.name = std::move(name);
  container.ports = std::move(ports);
  container.restart_policy = std::move(restart_policy);
  return container;
}

ContainerPort MakePort(std::string name, std::int32_t number, std::string protocol = "TCP") {
  ContainerPort port;
  port.name = std::move(name);
  port.container_port = number;
  port.protocol = std::move(protocol);
  return port;
}

// A Deployment's pod as an API server returns it: two containers, a plain init container and a
// sidecar, dual-stack IPs, a Ready condition after another one.
Pod TypicalPod() {
  Pod pod;
  pod.metadata.name = "web-7d9f8c6b5-x2k4q";
  pod.metadata.namespace_ = "shop";
  pod.metadata.uid = "5b0c7a8e-3d2f-4e61-b7a9-1c2d3e4f5a6b";
  pod.metadata.resource_version = "123456";
  pod.metadata.creation_timestamp = Time::FromUnixSeconds(1'767'323'045);
  pod.metadata.labels = {{"app", "web"}, {"pod-template-hash", "7d9f8c6b5"}};
  pod.metadata.annotations = {{"kubectl.kubernetes.io/restartedAt", "x"},
                              {"k8s.v1.cni.cncf.io/network-status", "[]"}};
  OwnerReference owner;
  owner.api_version = "apps/v1";
  owner.kind = "ReplicaSet";
  owner.name = "web-7d9f8c6b5";
  owner.uid = "0d6b3f5e-8c3f-4a44-9d0e-2f1c9e0a7b11";
  owner.controller = true;
  pod.metadata.owner_references = {owner};
  pod.spec.node_name = "node-3";
  pod.spec.containers = {MakeContainer("app", {MakePort("http", 8080), MakePort("dns", 53, "UDP")}),
                         MakeContainer("metrics", {MakePort("metrics", 9100)})};
  pod.spec.init_containers = {MakeContainer("init", {MakePort("ignored", 1)}),
                              MakeContainer("proxy", {MakePort("proxy", 15001)}, "Always")};
  pod.status.phase = "Running";
  pod.status.pod_ip = "10.244.1.7";
  pod.status.pod_ips = {"10.244.1.7", "fd00::1:7"};
  pod.status.conditions = {{"Initialized", "True", std::nullopt, "", ""},
                           {"Ready", "True", Time::FromUnixSeconds(1'767'323'060), "", ""}};
  return pod;
}

// The Pod cache's footprint is a promise: docs/performance.md (the "Client" table's memory row)
// measures 342 B per cached Pod with sizeof(CompactPod) at 176 B, under a 400 B budget. A field
// added here is paid 150,000 times; grow this bound only with a new measurement there.
TEST(CompactPodTest, StaysWithinItsMeasuredSize) { EXPECT_LE(sizeof(CompactPod), 176U); }

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

  // Regular containers' ports in order, then sidecars'; the plain init container's port is gone.
  EXPECT_EQ(compact.ports().regular,
            (std::vector<ContainerPort>{MakePort("http", 8080), MakePort("dns", 53, "UDP"),
                                        MakePort("metrics", 9100)}));
  EXPECT_EQ(compact.ports().sidecar, (std::vector<ContainerPort>{MakePort("proxy", 15001)}));

  // The accessors the reconciler reads in place.
  EXPECT_EQ(compact.phase(), "Running");
  EXPECT_TRUE(compact.ready());
  EXPECT_EQ(compact.ready_transition_time(), pod.status.conditions[1].last_transition_time);
  EXPECT_TRUE(compact.hostname().empty());
  EXPECT_TRUE(compact.subdomain().empty());
  EXPECT_TRUE(compact.has_pod_ip());
  ASSERT_EQ(compact.parsed_pod_ip_count(), 2U);
  EXPECT_EQ(net::FormatIp(compact.parsed_pod_ip(0)), "10.244.1.7");
  EXPECT_EQ(net::FormatIp(compact.parsed_pod_ip(1)), "fd00::1:7");
  EXPECT_TRUE(compact.text_pod_ips().empty());
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

// Names up to CompactPod::Name's 36 characters are kept in the pod, longer ones (up to the API's
// 253) on the heap: either way the name, the pod given back and equality are exact.
TEST(CompactPodTest, NamesOfEveryLengthAroundTheInlineCapacity) {
  PodInterners interners;
  for (const std::size_t length : {1UL, 15UL, 16UL, 35UL, 36UL, 37UL, 63UL, 253UL}) {
    model::Pod pod = TypicalPod();
    pod.metadata.name = std::string(length, 'n');
    pod.metadata.name.back() = 'z';
    const CompactPod compact = CompactPod::FromPod(pod, interners);
    EXPECT_EQ(compact.name(), pod.metadata.name) << length;
    EXPECT_EQ(compact.ToPod().metadata.name, pod.metadata.name) << length;
    const CompactPod copy = compact;  // NOLINT(performance-unnecessary-copy-initialization)
    EXPECT_EQ(copy, compact) << length;
    model::Pod renamed = pod;
    renamed.metadata.name.back() = 'y';
    EXPECT_FALSE(CompactPod::FromPod(renamed, interners) == compact) << length;
  }
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
  EXPECT_EQ(compact.hostname(), "web-0");
  EXPECT_EQ(compact.subdomain(), "web");
  EXPECT_EQ(compact.phase(), "Exploded");
  EXPECT_FALSE(compact.ready());
  EXPECT_TRUE(compact.has_pod_ip());
  EXPECT_EQ(compact.parsed_pod_ip_count(), 0U);
  EXPECT_EQ(std::vector<std::string>(compact.text_pod_ips().begin(), compact.text_pod_ips().end()),
            pod.status.pod_ips);

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
  const CompactPod no_ips = CompactPod::FromPod(pod, interners);
  EXPECT_FALSE(no_ips.has_pod_ip());
  const model::Pod none = no_ips.ToPod();
  EXPECT_TRUE(none.status.pod_ip.empty());
  EXPECT_TRUE(none.status.pod_ips.empty());
  // Only a podIP, as a very old API server writes it: still an IP, but no podIPs to publish.
  pod.status.pod_ip = "10.0.0.5";
  const CompactPod only_pod_ip = CompactPod::FromPod(pod, interners);
  EXPECT_TRUE(only_pod_ip.has_pod_ip());
  EXPECT_TRUE(only_pod_ip.text_pod_ips().empty());
  EXPECT_EQ(only_pod_ip.parsed_pod_ip_count(), 0U);
  // Every phase and Ready status survives.
  for (const char* phase : {"", "Pending", "Running", "Succeeded", "Failed", "Unknown"}) {
    pod.status.phase = phase;
    EXPECT_EQ(CompactPod::FromPod(pod, interners).phase(), phase);
  }
  for (const char* status : {"True", "False", "Unknown"}) {
    pod.status.conditions[1].status = status;
    EXPECT_EQ(CompactPod::FromPod(pod, interners).ready(), std::string_view(status) == "True");
  }
  pod.status.conditions.clear();
  EXPECT_FALSE(CompactPod::FromPod(pod, interners).ready());
  EXPECT_FALSE(CompactPod::FromPod(pod, interners).ready_transition_time().has_value());
}

}  // namespace
}  // namespace slicewright::model

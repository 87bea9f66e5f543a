#include "slicewright/codec/kubelet.h"

#include <string>

#include <gtest/gtest.h>

#include "slicewright/codec/json.h"
#include "slicewright/model/time.h"

// The scheduler and kubelet write bodies of the pod simulator.
namespace slicewright::codec {
namespace {

model::Time T(std::string_view text) { return model::ParseRfc3339(text).value_or(model::Time{}); }

// A registered node decodes as the Node it describes.
TEST(KubeletCodecTest, EncodesNodeRegistration) {
  NodeRegistration registration;
  registration.metadata.name = "sim-node-0";
  registration.metadata.labels = {{"topology.kubernetes.io/zone", "zone-a"}};
  registration.internal_ip = "192.168.0.1";
  registration.resources = {{"cpu", "8"}, {"pods", "110"}};
  registration.now = T("2026-12-03T04:00:00Z");
  registration.node_info.kubelet_version = "v1.32.0";
  registration.node_info.operating_system = "linux";
  const std::string json = EncodeNodeRegistration(registration);
  EXPECT_NE(json.find(R"("nodeInfo":{"machineID":"","systemUUID":"","bootID":"",)"
                      R"("kernelVersion":"","osImage":"","containerRuntimeVersion":"",)"
                      R"("kubeletVersion":"v1.32.0","kubeProxyVersion":"",)"
                      R"("operatingSystem":"linux","architecture":""})"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find(R"("addresses":[{"type":"InternalIP","address":"192.168.0.1"},)"
                      R"({"type":"Hostname","address":"sim-node-0"}])"),
            std::string::npos)
      << json;
  const Result<model::Node> node = DecodeNode(json);
  ASSERT_TRUE(node.ok()) << node.status().ToString();
  EXPECT_EQ(node->metadata.name, "sim-node-0");
  EXPECT_EQ(node->metadata.labels, registration.metadata.labels);
  EXPECT_EQ(node->status.allocatable, registration.resources);
  ASSERT_EQ(node->status.conditions.size(), 1U);
  EXPECT_EQ(node->status.conditions[0].type, "Ready");
  EXPECT_EQ(node->status.conditions[0].status, "True");
  EXPECT_EQ(node->status.conditions[0].reason, "KubeletReady");
  EXPECT_EQ(node->status.conditions[0].last_transition_time, registration.now);
}

// Binding, status and annotation patches, byte for byte.
TEST(KubeletCodecTest, EncodesPatches) {
  EXPECT_EQ(EncodePodBindingPatch("42", "sim-node-1"),
            R"({"metadata":{"resourceVersion":"42"},"spec":{"nodeName":"sim-node-1"}})");
  EXPECT_EQ(EncodePodBindingPatch("", "n"), R"({"spec":{"nodeName":"n"}})");

  PodStatusPatch patch;
  patch.resource_version = "7";
  patch.phase = "Running";
  patch.pod_ips = {"10.244.0.1", "fd00:10:244::1"};
  patch.host_ip = "192.168.0.1";
  patch.start_time = T("2026-12-03T04:00:00Z");
  patch.conditions = {{"Ready", "False", T("2026-12-03T04:00:01Z"), "ContainersNotReady", "held"}};
  EXPECT_EQ(EncodePodStatusPatch(patch),
            R"({"metadata":{"resourceVersion":"7"},"status":{"phase":"Running",)"
            R"("hostIP":"192.168.0.1","hostIPs":[{"ip":"192.168.0.1"}],"podIP":"10.244.0.1",)"
            R"("podIPs":[{"ip":"10.244.0.1"},{"ip":"fd00:10:244::1"}],)"
            R"("startTime":"2026-12-03T04:00:00Z","conditions":[{"type":"Ready","status":"False",)"
            R"("lastTransitionTime":"2026-12-03T04:00:01Z","reason":"ContainersNotReady",)"
            R"("message":"held"}]}})");

  // Container statuses follow the conditions: running, started, no restarts.
  PodStatusPatch running;
  running.phase = "Running";
  running.container_statuses = {
      {"web", "nginx", "nginx@sha256:ab", "containerd://cd", true, T("2026-12-03T04:00:00Z")}};
  EXPECT_EQ(EncodePodStatusPatch(running),
            R"({"status":{"phase":"Running","conditions":[],"containerStatuses":[{"name":"web",)"
            R"("image":"nginx","imageID":"nginx@sha256:ab","containerID":"containerd://cd",)"
            R"("ready":true,"started":true,"restartCount":0,)"
            R"("state":{"running":{"startedAt":"2026-12-03T04:00:00Z"}}}]}})");
  PodStatusPatch minimal;
  minimal.phase = "Running";
  EXPECT_EQ(EncodePodStatusPatch(minimal), R"({"status":{"phase":"Running","conditions":[]}})");

  EXPECT_EQ(EncodeAnnotationPatch("k8s.v1.cni.cncf.io/network-status", R"([{"name":"a"}])"),
            R"({"metadata":{"annotations":{"k8s.v1.cni.cncf.io/network-status":)"
            R"("[{\"name\":\"a\"}]"}}})");
}

}  // namespace
}  // namespace slicewright::codec

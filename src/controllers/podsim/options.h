// The pod simulator's settings (`slicewright dev` flags), with KWOK-like defaults: three nodes in
// three zones, dual-stack pod addresses, pods ready a second after they are bound. Plain values.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "slicewright/base/clock.h"

namespace slicewright::controllers::podsim {

// A pod annotation that holds the pod not ready while its value is "false".
inline constexpr std::string_view kAnnotationSimReady = "sim.slicewright.io/ready";
// The label every simulated node carries, so tools can tell them from real ones.
inline constexpr std::string_view kLabelSimulatedNode = "sim.slicewright.io/node";

struct PodSimulatorOptions {
  // Nodes sim-node-0 .. sim-node-(nodes-1), zones assigned round robin, addresses taken in order
  // from node_cidr (from its second address: 192.168.0.1, .2 ...). Nodes that already exist are
  // left as they are.
  int nodes = 3;
  std::string node_prefix = "sim-node-";
  std::vector<std::string> zones = {"zone-a", "zone-b", "zone-c"};
  std::string node_cidr = "192.168.0.0/24";
  std::string node_cpu = "8";
  std::string node_memory = "32Gi";
  std::string node_max_pods = "110";
  // status.nodeInfo.kubeletVersion and kubeProxyVersion (the Node table's VERSION column).
  std::string kubelet_version = "v1.32.0";

  // Pod addresses: IPv4 always, IPv6 too when dual_stack.
  std::string pod_cidr_v4 = "10.244.0.0/16";
  std::string pod_cidr_v6 = "fd00:10:244::/64";
  bool dual_stack = true;

  // From the moment a pod is first seen until it is Running and Ready; 0: at once.
  Clock::Duration ready_delay = std::chrono::seconds(1);
  // A pod being deleted gracefully is removed after min(its remaining grace, this). It keeps its
  // Ready condition for the first half, while its containers would handle SIGTERM, and is
  // Ready=False for the second, as a kubelet reports stopped containers.
  Clock::Duration max_termination_delay = std::chrono::seconds(2);

  // The name of the primary network in Multus network-status.
  std::string default_network_name = "sim-default";

  // "" watches pods of every namespace.
  std::string namespace_;
  int workers = 2;
  // Waiting for the pod cache's first list in Start().
  Clock::Duration sync_timeout = std::chrono::seconds(30);
  // Events' source component.
  std::string component = "slicewright-pod-simulator";
};

}  // namespace slicewright::controllers::podsim

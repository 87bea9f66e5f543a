// Multus' k8s.v1.cni.cncf.io/network-status pod annotation (Network Plumbing Working Group
// "de-facto" multi-network spec): one entry per network the pod is attached to.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace slicewright::model {

inline constexpr std::string_view kAnnotationNetworkStatus = "k8s.v1.cni.cncf.io/network-status";
// Requested networks of a pod ("net1", "ns/net1", "net1@eth1", or a JSON list).
inline constexpr std::string_view kAnnotationNetworks = "k8s.v1.cni.cncf.io/networks";
// The network a Service publishes (multus-service): "NAME" or "NAMESPACE/NAME".
inline constexpr std::string_view kAnnotationServiceNetwork = "k8s.v1.cni.cncf.io/service-network";

struct NetworkStatus {
  std::string name;  // "namespace/name" of the NetworkAttachmentDefinition (or the default network)
  std::string interface;
  std::vector<std::string> ips;
  std::string mac;
  bool is_default = false;
  friend bool operator==(const NetworkStatus&, const NetworkStatus&) = default;
};

}  // namespace slicewright::model

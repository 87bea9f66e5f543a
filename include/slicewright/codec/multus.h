// Multus CNI's pod annotations: the networks a pod asks for (k8s.v1.cni.cncf.io/networks, in its
// comma-separated or JSON list form) and the network-status a CNI reports back
// (k8s.v1.cni.cncf.io/network-status). Plain values and pure functions; reentrant.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "slicewright/base/result.h"
#include "slicewright/model/network_status.h"

namespace slicewright::codec {

// One requested attachment (Multus' NetworkSelectionElement, the fields we use). Empty
// namespace_ means the pod's own; empty interface_name means "let the CNI pick" (net1, net2...).
struct NetworkSelection {
  std::string name;
  std::string namespace_;
  std::string interface_name;
  friend bool operator==(const NetworkSelection&, const NetworkSelection&) = default;
};

// Parses the networks annotation as Multus does: text starting with '[' is a JSON list of objects
// ({"name":"x","namespace":"y","interface":"z"}, other fields ignored); anything else is a comma
// separated list of `name`, `ns/name`, `name@iface` or `ns/name@iface` (spaces around items are
// trimmed). Blank text is no networks. Names and namespaces must be DNS-1123 labels. kBadRequest
// naming the offending item: `item 2 ("a/b/c"): more than one '/'`, `malformed JSON: ...`.
Result<std::vector<NetworkSelection>> ParseNetworkSelections(std::string_view annotation);

// A compact JSON list as Multus writes it: name, interface, ips, mac, default (only when true),
// dns ({}). Never fails.
std::string EncodeNetworkStatusAnnotation(const std::vector<model::NetworkStatus>& entries);

// Reading it back is DecodeNetworkStatus (codec/network_status.h), the multi-network controller's.

}  // namespace slicewright::codec

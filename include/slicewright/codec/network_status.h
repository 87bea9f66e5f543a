// Decoding Multus' k8s.v1.cni.cncf.io/network-status annotation (a JSON list) for the
// multi-network controller. Reentrant.
#pragma once

#include <string_view>
#include <vector>

#include "slicewright/base/result.h"
#include "slicewright/model/network_status.h"

namespace slicewright::codec {

// The entries of the annotation's value. Unknown fields are ignored; null reads as empty.
// kBadRequest naming the entry and field for anything else: "[1].ips[0]: expected string",
// "malformed JSON at byte 3: ...".
Result<std::vector<model::NetworkStatus>> DecodeNetworkStatus(std::string_view json);

}  // namespace slicewright::codec

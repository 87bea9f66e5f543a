// Where simulated Multus attachments take their addresses from: one /16 (and one IPv6 /64) per
// secondary network, derived from the network's name so that every run and every restart agrees,
// and the MAC an interface reports. Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "controllers/podsim/ip_allocator.h"

namespace slicewright::controllers::podsim {

// 10.<100 + h % 100>.0.0/16 with h the 32-bit FNV-1a hash of `network` ("ns/name"). Two networks
// may share a range (100 choices); addresses are unique within each network only, as Multus
// IPAM per NetworkAttachmentDefinition makes them.
IpRange SecondaryRangeV4(std::string_view network);
// fd00:<(h >> 8) & 0xffff, in hex>::/64, never the default pod range fd00:10:244::/64.
IpRange SecondaryRangeV6(std::string_view network);

// A locally administered MAC derived from the interface's first IPv4 address, as kubenet and
// OVN-Kubernetes do: 0a:58:<the address's four bytes>; 0a:58:00:00:00:00 without one.
std::string MacFor(const std::vector<std::string>& addresses);

}  // namespace slicewright::controllers::podsim

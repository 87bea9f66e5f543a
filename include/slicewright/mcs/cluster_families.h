// The IP families the importing cluster can give a Service (ImportingCluster::ip_families, which
// decides IPFamilyNotSupported): from --mcs-cluster-ip-families, or from the API server's answer to
// a dry-run probe Service. Pure; reentrant. The choice is in docs/design.md, "the agent".
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "slicewright/base/result.h"
#include "slicewright/model/core.h"

namespace slicewright::mcs {

// --mcs-cluster-ip-families: "IPv4", "IPv6", "IPv4,IPv6" or "IPv6,IPv4" (the primary first; spaces
// around an item are ignored). "" is an empty list: learn them from the cluster. Anything else is
// kInvalid naming the flag.
Result<std::vector<std::string>> ParseClusterIpFamilies(std::string_view flag);

// The Service the agent creates with dryRun=All in `namespace_` to learn them: headless, without
// selector, ipFamilyPolicy PreferDualStack, so an API server gives it every family it serves
// (primary first) and allocates no IP; dry run stores nothing.
model::Service IpFamilyProbeService(std::string_view namespace_);

// The families of the API server's answer to the probe: 1 or 2 distinct IPv4/IPv6, else kInvalid
// (a server that does not default ipFamilies), and the caller keeps them unknown.
Result<std::vector<std::string>> ClusterIpFamiliesFromProbe(const model::Service& answered);

}  // namespace slicewright::mcs

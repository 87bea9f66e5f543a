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

// The Services the agent creates with dryRun=All in `namespace_` to learn them (dry run stores
// and allocates nothing), ipFamilyPolicy PreferDualStack, with a selector (matching no pod) and a
// generated name. `headless` false: a ClusterIP Service, whose answer carries the ClusterIPs the
// server would allocate, one per family it serves, primary first: the families are what it really
// allocates. true: the fallback when a server refuses that (a full service range), headless, which
// allocates nothing. Never headless without a selector: kube-apiserver gives such a Service both
// families whatever the cluster serves (it needs no IP), so it tells nothing (issue #30).
model::Service IpFamilyProbeService(std::string_view namespace_, bool headless = false);

// The families of the API server's answer to a probe: those of its ClusterIPs, in order, when it
// has any (what the server allocates), else its spec.ipFamilies; 1 or 2 distinct IPv4/IPv6, else
// kInvalid (a server that does not default them), and the caller keeps them unknown.
Result<std::vector<std::string>> ClusterIpFamiliesFromProbe(const model::Service& answered);

}  // namespace slicewright::mcs

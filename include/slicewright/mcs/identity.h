// Names in a ClusterSet: the cluster id (KEP-2149, spec §10), the derived Service of a ClusterSetIP
// import (spec §11) and the broker's export record name. Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "slicewright/base/result.h"
#include "slicewright/base/status.h"
#include "slicewright/model/mcs.h"

namespace slicewright::mcs {

// KEP-2149: a cluster id SHOULD be shorter than 128 characters (it goes into DNS names).
inline constexpr std::size_t kMaxClusterIdLength = 127;

// OK when `id` is a lower-case RFC 1123 subdomain of at most 127 characters; otherwise kInvalid
// whose message says why, e.g. `cluster id "Cluster_1": a lowercase RFC 1123 subdomain must
// consist of ...`.
Status ValidateClusterId(std::string_view id);

// The cluster's id (spec §10): the ClusterProperty id.k8s.io, else cluster.clusterset.k8s.io,
// else `flag_value` (--cluster-id); then validated as above. kInvalid naming the source when the
// chosen value is invalid ("ClusterProperty id.k8s.io: cluster id ...") or when there is none.
Result<std::string> ResolveClusterId(std::span<const model::ClusterProperty> properties,
                                     std::string_view flag_value);

// "derived-" + the first 10 characters of the lower-case, unpadded base32hex (RFC 4648 "extended
// hex") of SHA-256("<namespace>/<name>"): the Service that carries a ClusterSetIP import's VIP, as
// the mcs-api reference controller, Cilium and CoreDNS name it. "default/foo" gives
// "derived-ihu8utvv70".
std::string DerivedServiceName(std::string_view namespace_, std::string_view name);

// The broker record of (cluster, namespace, service): "<service>.<namespace>.<cluster>". Service
// and namespace are DNS labels (no dots), so the cluster id is everything after the second dot.
std::string ExportRecordName(std::string_view namespace_, std::string_view name,
                             std::string_view cluster);

}  // namespace slicewright::mcs

// Which Services a Pod event concerns (spec §10; the Endpoints controller uses the same rules,
// spec §13): upstream's GetPodServiceMemberships and GetServicesToUpdateOnPodChange over a snapshot
// of the pod's namespace's Services. Pure functions; thread-compatible.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "slicewright/model/core.h"
#include "slicewright/model/meta.h"

namespace slicewright::controllers {

using ServiceSnapshot = std::shared_ptr<const model::Service>;

// The "namespace/name" keys of the Services in `services` whose selector is set and matches
// `labels` (an empty selector matches every pod).
std::vector<std::string> ServicesSelectingPod(std::span<const ServiceSnapshot> services,
                                              const model::StringMap& labels);

// The keys of the Services a pod update concerns. Nothing when the resourceVersion is unchanged (a
// resync), or when neither what the endpoints show (deletionTimestamp presence and value, Ready,
// podIPs) nor what selects them (labels, hostname, subdomain) changed. A pod change alone: the
// Services selecting the new labels. A label change: the Services selecting the old or the new
// labels, all of them when the pod changed too, else only those selecting one side (the symmetric
// difference); a hostname or subdomain change adds the Services selecting the pod. NodeName
// changes are ignored (set once). `annotations_matter`: the pods' annotations (the caches keep only
// those a plugin reads, Multus' network status) count as a pod change too.
std::vector<std::string> ServicesToUpdateOnPodChange(std::span<const ServiceSnapshot> services,
                                                     const model::Pod& old_pod,
                                                     const model::Pod& new_pod,
                                                     bool annotations_matter = false);

}  // namespace slicewright::controllers

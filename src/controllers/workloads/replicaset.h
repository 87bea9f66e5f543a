// The ReplicaSet controller's decision, pure: how many pods to create, which to delete and the
// status to report, from the ReplicaSet and the pods it owns. Also the pod predicates the
// Deployment and StatefulSet decisions share. Pure and reentrant.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "slicewright/model/apps.h"
#include "slicewright/model/core.h"
#include "slicewright/model/meta.h"

namespace slicewright::controllers::workloads {

// The Ready condition is True.
bool PodReady(const model::Pod& pod);
// Ready for at least `min_ready_seconds` at `now` (podutil.IsPodAvailable).
bool PodAvailable(const model::Pod& pod, std::int32_t min_ready_seconds, model::Time now);
bool PodTerminating(const model::Pod& pod);

struct ReplicaSetPlan {
  std::int32_t creates = 0;
  std::vector<std::string> deletes;  // pod names, the first to go first
  model::WorkloadStatus status;      // as it should be written
};

// `pods`: the pods whose controller is `rs` (terminating ones included: they count in no total
// and are never deleted again). Too many active pods: the least useful go first (unscheduled,
// then not running, then not ready, then ready for less time, then the newest), as upstream's
// ActivePods ordering.
ReplicaSetPlan PlanReplicaSet(const model::Workload& rs, const std::vector<const model::Pod*>& pods,
                              model::Time now);

}  // namespace slicewright::controllers::workloads

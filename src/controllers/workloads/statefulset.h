// The StatefulSet controller's decision, pure: which ordinals to create, which pods to delete
// (scale down from the highest ordinal, then rolling-update pods from the highest ordinal down to
// the partition), and the status `kubectl rollout status` reads. OrderedReady acts on one pod at a
// time and only once the lower ordinals are Running and Ready; Parallel on all at once. Pure and
// reentrant.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "slicewright/model/apps.h"
#include "slicewright/model/core.h"

namespace slicewright::controllers::workloads {

// The ordinal of "<set>-<N>", or nullopt for another name.
std::optional<std::int32_t> PodOrdinal(std::string_view set_name, std::string_view pod_name);

struct StatefulSetPlan {
  std::vector<std::int32_t> creates;  // ordinals, ascending
  std::vector<std::string> deletes;   // pod names
  model::WorkloadStatus status;
};

// `update_revision`: the revision name of the current template ("<set>-<hash>"), which pods
// carry in their controller-revision-hash label. `pods`: the pods whose controller is `sts`.
StatefulSetPlan PlanStatefulSet(const model::Workload& sts, std::string_view update_revision,
                                const std::vector<const model::Pod*>& pods, model::Time now);

}  // namespace slicewright::controllers::workloads

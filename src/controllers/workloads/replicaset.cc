#include "controllers/workloads/replicaset.h"

#include <algorithm>
#include <tuple>

namespace slicewright::controllers::workloads {

bool PodReady(const model::Pod& pod) {
  const model::PodCondition* ready = model::FindPodCondition(pod.status.conditions, "Ready");
  return ready != nullptr && ready->status == "True";
}

bool PodAvailable(const model::Pod& pod, std::int32_t min_ready_seconds, model::Time now) {
  if (!PodReady(pod)) return false;
  if (min_ready_seconds <= 0) return true;
  const model::PodCondition* ready = model::FindPodCondition(pod.status.conditions, "Ready");
  if (!ready->last_transition_time) return false;
  return now.unix_nanos - ready->last_transition_time->unix_nanos >=
         std::int64_t{min_ready_seconds} * 1'000'000'000;
}

bool PodTerminating(const model::Pod& pod) { return pod.metadata.deletion_timestamp.has_value(); }

ReplicaSetPlan PlanReplicaSet(const model::Workload& rs, const std::vector<const model::Pod*>& pods,
                              model::Time now) {
  ReplicaSetPlan plan;
  std::vector<const model::Pod*> active;
  for (const model::Pod* pod : pods) {
    if (!PodTerminating(*pod) && pod->status.phase != "Succeeded" &&
        pod->status.phase != "Failed") {
      active.push_back(pod);
    }
  }
  const auto desired = static_cast<std::size_t>(std::max(rs.replicas, 0));
  if (active.size() < desired) {
    plan.creates = static_cast<std::int32_t>(desired - active.size());
  } else if (active.size() > desired) {
    // Sort keys: smaller is deleted first.
    const auto rank = [](const model::Pod* pod) {
      const model::PodCondition* ready = model::FindPodCondition(pod->status.conditions, "Ready");
      const std::int64_t ready_since =
          ready != nullptr && ready->status == "True" && ready->last_transition_time
              ? ready->last_transition_time->unix_nanos
              : 0;
      const std::int64_t created =
          pod->metadata.creation_timestamp ? pod->metadata.creation_timestamp->unix_nanos : 0;
      return std::make_tuple(!pod->spec.node_name.empty(), pod->status.phase == "Running",
                             PodReady(*pod), -ready_since, -created, pod->metadata.name);
    };
    std::vector<const model::Pod*> order = active;
    std::sort(order.begin(), order.end(),
              [&](const model::Pod* a, const model::Pod* b) { return rank(a) < rank(b); });
    for (std::size_t i = 0; i < active.size() - desired; ++i) {
      plan.deletes.push_back(order[i]->metadata.name);
    }
  }
  model::WorkloadStatus& status = plan.status;
  status.observed_generation = rs.metadata.generation;
  status.replicas = static_cast<std::int32_t>(active.size());
  status.fully_labeled_replicas = status.replicas;
  for (const model::Pod* pod : active) {
    if (PodReady(*pod)) ++status.ready_replicas;
    if (PodAvailable(*pod, rs.min_ready_seconds, now)) ++status.available_replicas;
  }
  return plan;
}

}  // namespace slicewright::controllers::workloads

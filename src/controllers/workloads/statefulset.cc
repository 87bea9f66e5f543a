#include "controllers/workloads/statefulset.h"

#include <algorithm>
#include <charconv>
#include <map>

#include "controllers/workloads/replicaset.h"

namespace slicewright::controllers::workloads {
namespace {

std::string_view RevisionOf(const model::Pod& pod) {
  auto it = pod.metadata.labels.find(model::kLabelControllerRevisionHash);
  return it == pod.metadata.labels.end() ? std::string_view() : std::string_view(it->second);
}

bool RunningAndReady(const model::Pod& pod) {
  return pod.status.phase == "Running" && PodReady(pod) && !PodTerminating(pod);
}

}  // namespace

std::optional<std::int32_t> PodOrdinal(std::string_view set_name, std::string_view pod_name) {
  if (pod_name.size() <= set_name.size() + 1 || !pod_name.starts_with(set_name) ||
      pod_name[set_name.size()] != '-') {
    return std::nullopt;
  }
  const std::string_view digits = pod_name.substr(set_name.size() + 1);
  if (digits.size() > 1 && digits.front() == '0') return std::nullopt;
  std::int32_t ordinal = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), ordinal);
  if (error != std::errc() || end != digits.data() + digits.size() || ordinal < 0) {
    return std::nullopt;
  }
  return ordinal;
}

StatefulSetPlan PlanStatefulSet(const model::Workload& sts, std::string_view update_revision,
                                const std::vector<const model::Pod*>& pods, model::Time now) {
  StatefulSetPlan plan;
  const std::int32_t desired = std::max(sts.replicas, 0);
  const bool ordered = sts.pod_management_policy != "Parallel";
  std::map<std::int32_t, const model::Pod*> by_ordinal;
  for (const model::Pod* pod : pods) {
    if (auto ordinal = PodOrdinal(sts.metadata.name, pod->metadata.name)) {
      by_ordinal[*ordinal] = pod;
    }
  }

  // Status over the pods as they are.
  model::WorkloadStatus& status = plan.status;
  status.observed_generation = sts.metadata.generation;
  status.update_revision = std::string(update_revision);
  status.current_revision =
      sts.status.current_revision.empty() ? status.update_revision : sts.status.current_revision;
  for (const auto& [ordinal, pod] : by_ordinal) {
    if (PodTerminating(*pod)) continue;
    ++status.replicas;
    if (RunningAndReady(*pod)) ++status.ready_replicas;
    if (RunningAndReady(*pod) && PodAvailable(*pod, sts.min_ready_seconds, now)) {
      ++status.available_replicas;
    }
    if (RevisionOf(*pod) == status.current_revision) ++status.current_replicas;
    if (RevisionOf(*pod) == update_revision) ++status.updated_replicas;
  }
  // completeRollingUpdate: every replica updated and ready makes the update revision current.
  if (sts.update_strategy_type == "RollingUpdate" && status.updated_replicas == desired &&
      status.ready_replicas == desired && status.replicas == desired) {
    status.current_revision = status.update_revision;
    status.current_replicas = status.updated_replicas;
  }

  // Replicas: create the missing, in order (OrderedReady waits for each to be Running and Ready).
  bool blocked = false;
  for (std::int32_t ordinal = 0; ordinal < desired; ++ordinal) {
    auto it = by_ordinal.find(ordinal);
    if (it == by_ordinal.end()) {
      if (!blocked) plan.creates.push_back(ordinal);
      if (ordered) blocked = true;
      continue;
    }
    if (!RunningAndReady(*it->second) && ordered) blocked = true;
  }
  if (blocked || !plan.creates.empty()) return plan;

  // Condemned: ordinals at or past spec.replicas, the highest first.
  std::vector<const model::Pod*> condemned;
  for (auto it = by_ordinal.rbegin(); it != by_ordinal.rend(); ++it) {
    if (it->first >= desired) condemned.push_back(it->second);
  }
  if (!condemned.empty()) {
    for (const model::Pod* pod : condemned) {
      if (PodTerminating(*pod)) {
        if (ordered) return plan;  // wait for it to be gone
        continue;
      }
      plan.deletes.push_back(pod->metadata.name);
      if (ordered) return plan;
    }
    return plan;
  }

  // Rolling update: from the highest ordinal down to the partition, one pod at a time.
  if (sts.update_strategy_type != "RollingUpdate") return plan;
  for (std::int32_t ordinal = desired - 1; ordinal >= std::max(sts.partition, 0); --ordinal) {
    const model::Pod* pod = by_ordinal.at(ordinal);
    if (PodTerminating(*pod)) return plan;
    if (RevisionOf(*pod) != update_revision) {
      plan.deletes.push_back(pod->metadata.name);
      return plan;
    }
  }
  return plan;
}

}  // namespace slicewright::controllers::workloads

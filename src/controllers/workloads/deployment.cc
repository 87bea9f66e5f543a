#include "controllers/workloads/deployment.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <utility>

namespace slicewright::controllers::workloads {
namespace {

constexpr std::string_view kSafeAlphabet = "bcdfghjklmnpqrstvwxz2456789";

std::int64_t CreatedNanos(const model::Workload& w) {
  return w.metadata.creation_timestamp ? w.metadata.creation_timestamp->unix_nanos : 0;
}

std::int64_t RevisionOf(const model::Workload& rs) {
  auto it = rs.metadata.annotations.find(model::kAnnotationDeploymentRevision);
  if (it == rs.metadata.annotations.end()) return 0;
  std::int64_t revision = 0;
  std::from_chars(it->second.data(), it->second.data() + it->second.size(), revision);
  return revision;
}

// The condition `type` as it should be: times kept while status (transition) and reason and
// message (update) stay.
model::WorkloadCondition Condition(const model::WorkloadStatus& old, std::string type, bool status,
                                   std::string reason, std::string message, model::Time now) {
  model::WorkloadCondition out{std::move(type),   status ? "True" : "False", now, now,
                               std::move(reason), std::move(message)};
  for (const model::WorkloadCondition& c : old.conditions) {
    if (c.type != out.type) continue;
    if (c.status == out.status) {
      out.last_transition_time = c.last_transition_time;
      if (c.reason == out.reason && c.message == out.message) {
        out.last_update_time = c.last_update_time;
      }
    }
  }
  return out;
}

}  // namespace

std::string PodTemplateHash(std::string_view template_json) {
  std::uint32_t hash = 2166136261U;
  for (char ch : template_json) {
    hash ^= static_cast<unsigned char>(ch);
    hash *= 16777619U;
  }
  // Decimal digits mapped through the safe alphabet, as SafeEncodeString(fmt.Sprint(hash)).
  std::string out;
  for (char digit : std::to_string(hash)) {
    out.push_back(kSafeAlphabet[static_cast<std::size_t>(digit) % kSafeAlphabet.size()]);
  }
  return out;
}

std::int32_t ResolveBudget(std::string_view value, std::int32_t total, bool round_up) {
  const bool percent = !value.empty() && value.back() == '%';
  if (percent) value.remove_suffix(1);
  std::int64_t number = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), number);
  if (error != std::errc() || end != value.data() + value.size() || number < 0) return 0;
  if (!percent) return static_cast<std::int32_t>(number);
  const std::int64_t scaled = number * std::max(total, 0);
  return static_cast<std::int32_t>(round_up ? (scaled + 99) / 100 : scaled / 100);
}

DeploymentPlan PlanDeployment(const model::Workload& d, std::string_view hash,
                              const std::vector<const model::Workload*>& owned, model::Time now) {
  DeploymentPlan plan;
  plan.new_name = d.metadata.name + "-" + std::string(hash);
  const std::int32_t desired = std::max(d.replicas, 0);

  // Working copy of every ReplicaSet's spec.replicas; old ones oldest first.
  const model::Workload* new_rs = nullptr;
  std::vector<const model::Workload*> old;
  std::int64_t max_revision = 0;
  for (const model::Workload* rs : owned) {
    max_revision = std::max(max_revision, RevisionOf(*rs));
    auto it = rs->metadata.labels.find(model::kLabelPodTemplateHash);
    if (new_rs == nullptr && it != rs->metadata.labels.end() && it->second == hash) {
      new_rs = rs;
    } else {
      old.push_back(rs);
    }
  }
  std::sort(old.begin(), old.end(), [](const model::Workload* a, const model::Workload* b) {
    return std::make_pair(CreatedNanos(*a), a->metadata.name) <
           std::make_pair(CreatedNanos(*b), b->metadata.name);
  });
  std::map<std::string, std::int32_t> target;
  for (const model::Workload* rs : owned) target[rs->metadata.name] = rs->replicas;
  std::int32_t new_replicas = new_rs != nullptr ? new_rs->replicas : 0;
  std::int32_t new_available = new_rs != nullptr ? new_rs->status.available_replicas : 0;
  std::int32_t old_active = 0;
  for (const model::Workload* rs : old) old_active += rs->replicas;

  const std::int32_t max_surge = ResolveBudget(d.max_surge, desired, true);
  std::int32_t max_unavailable = ResolveBudget(d.max_unavailable, desired, false);
  if (max_surge == 0 && max_unavailable == 0) max_unavailable = 1;  // kube's validation floor

  if (!d.paused) {
    if (d.strategy_type == "Recreate") {
      bool old_pods = false;
      for (const model::Workload* rs : old) {
        target[rs->metadata.name] = 0;
        old_pods = old_pods || rs->status.replicas > 0;
      }
      if (!old_pods) new_replicas = desired;
    } else if (old_active == 0) {
      new_replicas = desired;  // no rollout in progress: a plain scale
    } else {
      // reconcileNewReplicaSet: grow the new one within desired + maxSurge.
      std::int32_t total = new_replicas + old_active;
      if (new_replicas > desired) {
        new_replicas = desired;
      } else if (total < desired + max_surge) {
        new_replicas += std::min(desired + max_surge - total, desired - new_replicas);
      }
      // reconcileOldReplicaSets: shrink the old ones while desired - maxUnavailable stay
      // available. First the old pods that are not available anyway, then available ones.
      total = new_replicas + old_active;
      const std::int32_t min_available = desired - max_unavailable;
      const std::int32_t new_unavailable = std::max(new_replicas - new_available, 0);
      std::int32_t cleanup_budget = total - min_available - new_unavailable;
      if (cleanup_budget > 0) {
        for (const model::Workload* rs : old) {
          std::int32_t& replicas = target[rs->metadata.name];
          const std::int32_t unhealthy = std::max(replicas - rs->status.available_replicas, 0);
          const std::int32_t cut = std::min(cleanup_budget, unhealthy);
          replicas -= cut;
          cleanup_budget -= cut;
        }
        std::int32_t available = new_available;
        for (const model::Workload* rs : old) {
          available += std::min(rs->status.available_replicas, target[rs->metadata.name]);
        }
        std::int32_t scale_down = available - min_available;
        for (const model::Workload* rs : old) {
          if (scale_down <= 0) break;
          std::int32_t& replicas = target[rs->metadata.name];
          const std::int32_t cut = std::min(replicas, scale_down);
          replicas -= cut;
          scale_down -= cut;
        }
      }
    }
  }

  if (new_rs == nullptr) {
    plan.create_replicas = new_replicas;
    plan.new_revision = std::to_string(max_revision + 1);
  } else {
    target[new_rs->metadata.name] = new_replicas;
  }
  for (const model::Workload* rs : owned) {
    const std::int32_t replicas = target[rs->metadata.name];
    if (replicas != rs->replicas) plan.scales.push_back({rs->metadata.name, replicas});
  }
  // Prune old ReplicaSets that have scaled to nothing, oldest first, past the history limit.
  std::vector<const model::Workload*> empty;
  for (const model::Workload* rs : old) {
    if (target[rs->metadata.name] == 0 && rs->replicas == 0 && rs->status.replicas == 0) {
      empty.push_back(rs);
    }
  }
  const auto limit = static_cast<std::size_t>(std::max(d.revision_history_limit, 0));
  for (std::size_t i = 0; i + limit < empty.size(); ++i) {
    plan.deletes.push_back(empty[i]->metadata.name);
  }

  // calculateStatus over what the ReplicaSets report.
  model::WorkloadStatus& status = plan.status;
  status.observed_generation = d.metadata.generation;
  std::int32_t spec_total = 0;
  for (const model::Workload* rs : owned) {
    status.replicas += rs->status.replicas;
    status.ready_replicas += rs->status.ready_replicas;
    status.available_replicas += rs->status.available_replicas;
    spec_total += rs->replicas;
  }
  status.updated_replicas = new_rs != nullptr ? new_rs->status.replicas : 0;
  status.unavailable_replicas = std::max(spec_total - status.available_replicas, 0);
  const bool available = status.available_replicas >= desired - max_unavailable;
  status.conditions.push_back(
      Condition(d.status, "Available", available,
                available ? "MinimumReplicasAvailable" : "MinimumReplicasUnavailable",
                available ? "Deployment has minimum availability."
                          : "Deployment does not have minimum availability.",
                now));
  const bool complete = new_rs != nullptr && status.updated_replicas == desired &&
                        status.replicas == desired && status.available_replicas == desired &&
                        new_rs->replicas == desired;
  if (complete) {
    status.conditions.push_back(
        Condition(d.status, "Progressing", true, "NewReplicaSetAvailable",
                  "ReplicaSet \"" + plan.new_name + "\" has successfully progressed.", now));
  } else if (new_rs == nullptr) {
    status.conditions.push_back(Condition(d.status, "Progressing", true, "NewReplicaSetCreated",
                                          "Created new replica set \"" + plan.new_name + "\"",
                                          now));
  } else {
    status.conditions.push_back(Condition(d.status, "Progressing", true, "ReplicaSetUpdated",
                                          "ReplicaSet \"" + plan.new_name + "\" is progressing.",
                                          now));
  }
  return plan;
}

}  // namespace slicewright::controllers::workloads

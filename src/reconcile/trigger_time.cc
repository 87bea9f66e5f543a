#include "slicewright/reconcile/trigger_time.h"

#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "slicewright/model/meta.h"

namespace slicewright::reconcile {
namespace {

model::Time PodTriggerTime(const model::Pod& pod) {
  const model::PodCondition* ready = model::FindPodCondition(pod.status.conditions, "Ready");
  if (ready == nullptr || !ready->last_transition_time) {
    return {};
  }
  return *ready->last_transition_time;
}

// The earlier of two times, where zero means "none yet".
model::Time Earliest(model::Time current, model::Time candidate) {
  return current.IsZero() || candidate < current ? candidate : current;
}

}  // namespace

model::Time TriggerTimeTracker::ComputeEndpointLastChangeTriggerTime(
    std::string_view namespace_, const model::Service& service,
    std::span<const model::Pod* const> pods) {
  std::vector<PodTime> times;
  times.reserve(pods.size());
  for (const model::Pod* pod : pods) {
    times.push_back(PodTime{pod->metadata.name, PodTriggerTime(*pod)});
  }
  return Compute(namespace_, service, times);
}

model::Time TriggerTimeTracker::ComputeEndpointLastChangeTriggerTime(
    std::string_view namespace_, const model::Service& service,
    std::span<const model::CompactPod* const> pods) {
  std::vector<PodTime> times;
  times.reserve(pods.size());
  for (const model::CompactPod* pod : pods) {
    times.push_back(PodTime{pod->name(), pod->ready_transition_time().value_or(model::Time{})});
  }
  return Compute(namespace_, service, times);
}

model::Time TriggerTimeTracker::Compute(std::string_view namespace_, const model::Service& service,
                                        std::span<const PodTime> pods) {
  const std::string key = model::NamespacedName(namespace_, service.metadata.name);
  // Only the map needs the lock: calls for one key never overlap, so the state is taken out,
  // worked on without the lock, and put back.
  ServiceState previous;
  bool known = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = states_.find(key);
    if (it != states_.end()) {
      previous = std::move(it->second);
      known = true;
    }
  }

  ServiceState current;
  current.pod_times.reserve(pods.size());
  model::Time earliest_change;
  for (const PodTime& pod : pods) {
    const model::Time pod_time = pod.time;
    if (pod_time.IsZero()) {
      continue;
    }
    const auto stored = current.pod_times.insert_or_assign(std::string(pod.name), pod_time).first;
    auto last = previous.pod_times.find(stored->first);
    const model::Time last_time = last == previous.pod_times.end() ? model::Time{} : last->second;
    if (pod_time > last_time) {
      earliest_change = Earliest(earliest_change, pod_time);
    }
  }
  current.service_time = service.metadata.creation_timestamp.value_or(model::Time{});
  if (current.service_time > previous.service_time) {
    earliest_change = Earliest(earliest_change, current.service_time);
  }
  const model::Time service_time = current.service_time;

  {
    std::lock_guard<std::mutex> lock(mu_);
    states_.insert_or_assign(key, std::move(current));
  }
  // A new Service: its creation is the change being published.
  if (!known) {
    return service_time;
  }
  return earliest_change;
}

void TriggerTimeTracker::DeleteService(std::string_view namespace_, std::string_view name) {
  const std::string key = model::NamespacedName(namespace_, name);
  std::lock_guard<std::mutex> lock(mu_);
  states_.erase(key);
}

}  // namespace slicewright::reconcile

#include "slicewright/reconcile/trigger_time.h"

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

TriggerTimeTracker::ServiceState TriggerTimeTracker::TakeState(const std::string& key,
                                                               bool& known) {
  // Only the map needs the lock: calls for one key never overlap, so the state is taken out,
  // worked on without the lock, and put back.
  MutexLock lock(mu_);
  auto it = states_.find(key);
  known = it != states_.end();
  return known ? std::move(it->second) : ServiceState();
}

model::Time TriggerTimeTracker::PutState(const std::string& key, bool known,
                                         model::Time previous_service_time, ServiceState current,
                                         const model::Service& service,
                                         model::Time earliest_change) {
  current.service_time = service.metadata.creation_timestamp.value_or(model::Time{});
  if (current.service_time > previous_service_time) {
    earliest_change = Earliest(earliest_change, current.service_time);
  }
  const model::Time service_time = current.service_time;
  {
    MutexLock lock(mu_);
    states_.insert_or_assign(key, std::move(current));
  }
  // A new Service: its creation is the change being published.
  if (!known) {
    return service_time;
  }
  return earliest_change;
}

model::Time TriggerTimeTracker::Compute(std::string_view namespace_, const model::Service& service,
                                        std::span<const PodTime> pods) {
  const std::string key = model::NamespacedName(namespace_, service.metadata.name);
  bool known = false;
  const ServiceState previous = TakeState(key, known);

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
  return PutState(key, known, previous.service_time, std::move(current), service, earliest_change);
}

model::Time TriggerTimeTracker::ComputeForChangedPods(std::string_view namespace_,
                                                      const model::Service& service,
                                                      std::span<const PodTime> changed) {
  const std::string key = model::NamespacedName(namespace_, service.metadata.name);
  bool known = false;
  ServiceState state = TakeState(key, known);
  const model::Time previous_service_time = state.service_time;
  // The pods not in `changed` have the times remembered, so they add no change, and the full
  // computation would keep exactly those times: only `changed` needs a look.
  model::Time earliest_change;
  for (const PodTime& pod : changed) {
    if (pod.time.IsZero()) {
      state.pod_times.erase(std::string(pod.name));
      continue;
    }
    auto [stored, inserted] = state.pod_times.try_emplace(std::string(pod.name), pod.time);
    if (inserted || pod.time > stored->second) {
      earliest_change = Earliest(earliest_change, pod.time);
    }
    stored->second = pod.time;
  }
  return PutState(key, known, previous_service_time, std::move(state), service, earliest_change);
}

void TriggerTimeTracker::DeleteService(std::string_view namespace_, std::string_view name) {
  const std::string key = model::NamespacedName(namespace_, name);
  MutexLock lock(mu_);
  states_.erase(key);
}

}  // namespace slicewright::reconcile

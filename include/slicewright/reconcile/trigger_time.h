// TriggerTimeTracker computes the endpoints.kubernetes.io/last-change-trigger-time of a sync: the
// earliest Pod or Service change not yet published (spec §8). Thread-safe; calls for the same
// Service must not overlap (the work queue never runs one key twice at once).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <unordered_map>

#include "slicewright/base/mutex.h"
#include "slicewright/model/compact_pod.h"
#include "slicewright/model/core.h"
#include "slicewright/model/time.h"

namespace slicewright::reconcile {

class TriggerTimeTracker final {
 public:
  TriggerTimeTracker() = default;
  TriggerTimeTracker(const TriggerTimeTracker&) = delete;
  TriggerTimeTracker& operator=(const TriggerTimeTracker&) = delete;

  // A Service seen for the first time: its creationTimestamp. Otherwise the earliest of the pod
  // trigger times (Ready condition lastTransitionTime; pods without one are ignored) later than
  // the ones remembered, and of the Service creationTimestamp if later than remembered; zero when
  // nothing changed. Remembers the current times either way. `namespace_` keys the Service with
  // its name; `pods` must not hold nullptr. Spec changes of the Service produce no trigger time
  // (an upstream limitation kept).
  model::Time ComputeEndpointLastChangeTriggerTime(std::string_view namespace_,
                                                   const model::Service& service,
                                                   std::span<const model::Pod* const> pods);
  // The same over the compact pods the controllers' Pod caches keep.
  model::Time ComputeEndpointLastChangeTriggerTime(std::string_view namespace_,
                                                   const model::Service& service,
                                                   std::span<const model::CompactPod* const> pods);

  // A pod's name and trigger time (its Ready condition's lastTransitionTime; zero: none).
  struct PodTime {
    std::string_view name;
    model::Time time;
  };

  // The incremental form, for a caller that tracks which pods changed: the same result and the
  // same remembered state as ComputeEndpointLastChangeTriggerTime over all the Service's pods,
  // given only the pods that changed since the previous call for this Service. A pod deleted, or
  // no longer selected, comes with a zero time. The first call for a Service must be the full one
  // (a Service seen for the first time gives its creationTimestamp either way).
  model::Time ComputeForChangedPods(std::string_view namespace_, const model::Service& service,
                                    std::span<const PodTime> changed);

  // Forgets the Service (it was deleted).
  void DeleteService(std::string_view namespace_, std::string_view name);

 private:
  struct ServiceState {
    model::Time service_time;
    std::unordered_map<std::string, model::Time> pod_times;  // pod name -> trigger time
  };

  model::Time Compute(std::string_view namespace_, const model::Service& service,
                      std::span<const PodTime> pods);
  // Takes the Service's state out of the map (an empty one when !known), and puts `current`
  // back with the Service's time, returning the trigger time (see above).
  ServiceState TakeState(const std::string& key, bool& known);
  model::Time PutState(const std::string& key, bool known, model::Time previous_service_time,
                       ServiceState current, const model::Service& service,
                       model::Time earliest_change);

  mutable Mutex mu_;
  std::unordered_map<std::string, ServiceState> states_ SW_GUARDED_BY(mu_);  // "namespace/name"
};

}  // namespace slicewright::reconcile

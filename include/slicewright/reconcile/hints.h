// The hints stage of one address type (spec §6): trafficDistribution hints and topology-aware
// hints from the TopologyCache's zone ratios. Pure functions over the planner's working sets.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "slicewright/model/discovery.h"
#include "slicewright/model/meta.h"
#include "slicewright/reconcile/desired.h"
#include "slicewright/reconcile/plan.h"

namespace slicewright::reconcile {

// The slices of one address type at the hints stage. `creates` and `updates` are the planner's own
// copies and may be edited in place. An unchanged slice that needs new hints is copied into
// `updates` (with the hints fixed) and removed from `unchanged`; stored objects are never modified.
struct HintsWorkingSet {
  std::vector<model::EndpointSlice>* creates;
  std::vector<model::EndpointSlice>* updates;
  std::vector<const model::EndpointSlice*>* unchanged;
  // Empty, or AnyHint of an unchanged slice known without reading its endpoints (the planner's
  // stored fingerprints keep it): removing hints from a 10k-endpoint Service otherwise reads every
  // endpoint of every slice on each sync.
  std::function<bool(const model::EndpointSlice&)> any_hint_of_unchanged;
  // Every endpoint of `creates` comes from groups flagged EndpointGroup::without_hints: removing
  // hints skips them.
  bool creates_without_hints = false;
};

// Whether any endpoint of `slice` has hints.
bool AnyHint(const model::EndpointSlice& slice);

// service.kubernetes.io/topology-aware-hints (which wins when present) or
// service.kubernetes.io/topology-mode is "Auto" or "auto" (spec §6.1). Without
// `topology_mode_annotation` only the first key counts, as in kube-controller-manager before 1.27
// (which did not know the second).
bool TopologyHintsEnabled(const model::StringMap& annotations,
                          bool topology_mode_annotation = true);

// PreferClose always; PreferSameZone and PreferSameNode when `prefer_same_enabled`.
bool IsValidTrafficDistribution(std::string_view value, bool prefer_same_enabled);

// trafficDistribution heuristic (spec §6.2): "prefer close" values hint ready endpoints to their
// own zone (and node for PreferSameNode); any other value (or "") removes every hint.
void ReconcileTrafficDistributionHints(std::string_view traffic_distribution,
                                       const HintsWorkingSet& work);

// Removes every hint from creates and updates, and moves unchanged slices holding any hint into
// updates with their hints cleared (spec §6.1 step 2).
void RemoveAllHints(const HintsWorkingSet& work);

// Topology-aware hints (spec §6.3, decision §15.7) for one address type. Fills `events`
// (TopologyAwareHintsEnabled / TopologyAwareHintsDisabled) and returns the outcome for the cache.
// On any failure it removes every hint, as RemoveAllHints does.
TopologyOutcome AddTopologyHints(const std::map<std::string, double>& zone_ratios,
                                 bool previously_populated, std::string_view address_type,
                                 const HintsWorkingSet& work, std::vector<Diagnostic>& events);

}  // namespace slicewright::reconcile

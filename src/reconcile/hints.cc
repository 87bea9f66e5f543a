#include "slicewright/reconcile/hints.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "slicewright/model/discovery.h"
#include "slicewright/model/well_known.h"
#include "slicewright/reconcile/topology_cache.h"

namespace slicewright::reconcile {
namespace {

constexpr std::string_view kReasonHintsEnabled = "TopologyAwareHintsEnabled";
constexpr std::string_view kReasonHintsDisabled = "TopologyAwareHintsDisabled";

bool EndpointReady(const model::Endpoint& endpoint) {
  return endpoint.conditions.ready.value_or(false);
}

bool HasZone(const model::Endpoint& endpoint) {
  return endpoint.zone.has_value() && !endpoint.zone->empty();
}

// Applies `fn` to every slice the planner will write anyway.
template <typename Fn>
void ForEachWritten(const HintsWorkingSet& work, Fn&& fn) {
  for (model::EndpointSlice& slice : *work.creates) {
    fn(slice);
  }
  for (model::EndpointSlice& slice : *work.updates) {
    fn(slice);
  }
}

// Moves every unchanged slice for which `needs_update` holds into updates (as a copy; the stored
// object is never touched), keeping the relative order of the rest.
template <typename Pred>
void MoveUnchangedIf(const HintsWorkingSet& work, Pred&& needs_update) {
  std::vector<const model::EndpointSlice*>& unchanged = *work.unchanged;
  auto kept = unchanged.begin();
  for (const model::EndpointSlice* slice : unchanged) {
    if (needs_update(*slice)) {
      work.updates->push_back(*slice);
    } else {
      *kept++ = slice;
    }
  }
  unchanged.erase(kept, unchanged.end());
}

// ---- trafficDistribution (spec §6.2) ----

bool IsPreferClose(std::string_view traffic_distribution) {
  return traffic_distribution == model::kTrafficDistributionPreferClose ||
         traffic_distribution == model::kTrafficDistributionPreferSameZone ||
         traffic_distribution == model::kTrafficDistributionPreferSameNode;
}

bool SingleHintIs(const std::vector<std::string>& hints, std::string_view want) {
  return hints.size() == 1 && hints[0] == want;
}

// A ready endpoint's zone hint (and node hint for PreferSameNode) is missing, wrong or stale.
bool PreferCloseNeedsUpdate(const model::EndpointSlice& slice, bool node_hints) {
  for (const model::Endpoint& endpoint : slice.endpoints) {
    if (!EndpointReady(endpoint)) {
      continue;  // non-ready endpoints never trigger an update
    }
    const model::EndpointHints* hints = endpoint.hints ? &*endpoint.hints : nullptr;
    if (endpoint.zone) {
      if (hints == nullptr || !SingleHintIs(hints->for_zones, *endpoint.zone)) {
        return true;
      }
    } else if (hints != nullptr && !hints->for_zones.empty()) {
      return true;
    }
    if (endpoint.node_name && node_hints) {
      if (hints == nullptr || !SingleHintIs(hints->for_nodes, *endpoint.node_name)) {
        return true;
      }
    } else if (hints != nullptr && !hints->for_nodes.empty()) {
      return true;
    }
  }
  return false;
}

void PreferCloseUpdate(model::EndpointSlice& slice, bool node_hints) {
  for (model::Endpoint& endpoint : slice.endpoints) {
    if (!EndpointReady(endpoint)) {
      continue;  // left untouched, as upstream does
    }
    model::EndpointHints hints;
    if (endpoint.zone) {
      hints.for_zones.push_back(*endpoint.zone);
    }
    if (endpoint.node_name && node_hints) {
      hints.for_nodes.emplace_back(endpoint.node_name->view());
    }
    if (hints.for_zones.empty() && hints.for_nodes.empty()) {
      endpoint.hints.reset();
    } else {
      endpoint.hints = std::move(hints);
    }
  }
}

void ClearHints(model::EndpointSlice& slice) {
  for (model::Endpoint& endpoint : slice.endpoints) {
    endpoint.hints.reset();
  }
}

// ---- topology-aware hints (spec §6.3) ----

std::string WithAddressType(std::string_view message, std::string_view address_type) {
  std::string result(message);
  result += ", addressType: ";
  result += address_type;
  return result;
}

Diagnostic HintsDisabled(std::string_view message, std::string_view address_type) {
  return Diagnostic{Diagnostic::Severity::kWarning, std::string(kReasonHintsDisabled),
                    WithAddressType(message, address_type), /*retry=*/false};
}

std::int64_t ReadyEndpoints(const model::EndpointSlice& slice) {
  return std::count_if(slice.endpoints.begin(), slice.endpoints.end(), EndpointReady);
}

using ZoneCounts = std::map<std::string, std::int64_t>;

// upstream getHintsByZone: the hints an unchanged slice contributes, or false when it must be
// rewritten (a ready endpoint without zone hints, a hint for a zone without allocation, or a zone
// pushed over its maximum).
bool HintsByZone(const model::EndpointSlice& slice, const ZoneCounts& allocated,
                 const std::map<std::string, internal::ZoneAllocation>& allocations,
                 ZoneCounts& hints_by_zone) {
  hints_by_zone.clear();
  for (const model::Endpoint& endpoint : slice.endpoints) {
    if (!EndpointReady(endpoint)) {
      continue;
    }
    if (!endpoint.hints || endpoint.hints->for_zones.empty()) {
      return false;
    }
    for (const std::string& zone : endpoint.hints->for_zones) {
      if (!allocations.contains(zone)) {
        return false;
      }
      ++hints_by_zone[zone];
    }
  }
  for (const auto& [zone, count] : hints_by_zone) {
    auto it = allocated.find(zone);
    const std::int64_t already = it == allocated.end() ? 0 : it->second;
    auto limit = allocations.find(zone);  // present: checked above
    if (limit == allocations.end() || count + already > limit->second.maximum) {
      return false;
    }
  }
  return true;
}

// upstream redistributeHints: switches hints of ready endpoints in giving zones to receiving zones
// while both have quota left. Go picks "some" receiving zone (map order); here the first by name.
ZoneCounts RedistributeHints(const HintsWorkingSet& work, ZoneCounts giving, ZoneCounts receiving) {
  ZoneCounts redistributions;
  const auto visit = [&](model::EndpointSlice& slice) {
    for (model::Endpoint& endpoint : slice.endpoints) {
      if (!EndpointReady(endpoint)) {
        continue;
      }
      if (giving.empty() || receiving.empty()) {
        return;
      }
      if (!HasZone(endpoint)) {
        continue;  // caught earlier by AddTopologyHints
      }
      const std::string& giving_zone = *endpoint.zone;
      auto give = giving.find(giving_zone);
      if (give == giving.end() || give->second <= 0) {
        continue;
      }
      auto receive = std::find_if(receiving.begin(), receiving.end(),
                                  [](const auto& entry) { return entry.second > 0; });
      if (receive == receiving.end()) {
        continue;
      }
      const std::string receiving_zone = receive->first;
      endpoint.hints = model::EndpointHints{{receiving_zone}, {}};
      if (--give->second == 0) {
        giving.erase(give);
      }
      if (--receive->second == 0) {
        receiving.erase(receive);
      }
      ++redistributions[receiving_zone];
      --redistributions[giving_zone];
    }
  };
  for (model::EndpointSlice& slice : *work.creates) {
    if (giving.empty() || receiving.empty()) {
      break;
    }
    visit(slice);
  }
  for (model::EndpointSlice& slice : *work.updates) {
    if (giving.empty() || receiving.empty()) {
      break;
    }
    visit(slice);
  }
  return redistributions;
}

TopologyOutcome Disabled(std::string_view address_type) {
  TopologyOutcome outcome;
  outcome.address_type = std::string(address_type);
  outcome.hints_allocated = false;
  return outcome;
}

}  // namespace

bool TopologyHintsEnabled(const model::StringMap& annotations, bool topology_mode_annotation) {
  auto it = annotations.find(model::kAnnotationTopologyAwareHints);
  if (it == annotations.end()) {
    if (!topology_mode_annotation) {
      return false;
    }
    it = annotations.find(model::kAnnotationTopologyMode);
    if (it == annotations.end()) {
      return false;
    }
  }
  // The deprecated key wins whenever it is present, even with a disabling value (spec §6.1).
  return it->second == "Auto" || it->second == "auto";
}

bool IsValidTrafficDistribution(std::string_view value, bool prefer_same_enabled) {
  if (value == model::kTrafficDistributionPreferClose) {
    return true;
  }
  return prefer_same_enabled && (value == model::kTrafficDistributionPreferSameZone ||
                                 value == model::kTrafficDistributionPreferSameNode);
}

void ReconcileTrafficDistributionHints(std::string_view traffic_distribution,
                                       const HintsWorkingSet& work) {
  if (!IsPreferClose(traffic_distribution)) {
    // The default heuristic: routing is cluster-wide, so every hint goes.
    RemoveAllHints(work);
    return;
  }
  const bool node_hints = traffic_distribution == model::kTrafficDistributionPreferSameNode;
  MoveUnchangedIf(work, [&](const model::EndpointSlice& slice) {
    return PreferCloseNeedsUpdate(slice, node_hints);
  });
  ForEachWritten(work, [&](model::EndpointSlice& slice) { PreferCloseUpdate(slice, node_hints); });
}

bool AnyHint(const model::EndpointSlice& slice) {
  return std::any_of(slice.endpoints.begin(), slice.endpoints.end(),
                     [](const model::Endpoint& e) { return e.hints.has_value(); });
}

void RemoveAllHints(const HintsWorkingSet& work) {
  if (work.creates_without_hints) {
    for (model::EndpointSlice& slice : *work.updates) {
      ClearHints(slice);
    }
  } else {
    ForEachWritten(work, ClearHints);
  }
  const std::size_t first_moved = work.updates->size();
  if (work.any_hint_of_unchanged) {
    MoveUnchangedIf(work, work.any_hint_of_unchanged);
  } else {
    MoveUnchangedIf(work, AnyHint);
  }
  for (std::size_t i = first_moved; i < work.updates->size(); ++i) {
    ClearHints((*work.updates)[i]);
  }
}

TopologyOutcome AddTopologyHints(const std::map<std::string, double>& zone_ratios,
                                 bool previously_populated, std::string_view address_type,
                                 const HintsWorkingSet& work, std::vector<Diagnostic>& events) {
  // N counts ready endpoints of every slice the Service will have after this sync.
  std::int64_t ready = 0;
  ForEachWritten(work, [&](const model::EndpointSlice& slice) { ready += ReadyEndpoints(slice); });
  for (const model::EndpointSlice* slice : *work.unchanged) {
    ready += ReadyEndpoints(*slice);
  }

  // 1. Allocations per zone.
  internal::AllocationResult allocation = internal::GetAllocations(zone_ratios, ready);
  if (!allocation.error.empty()) {
    events.push_back(HintsDisabled(allocation.error, address_type));
    RemoveAllHints(work);
    return Disabled(address_type);
  }
  const auto& allocations = allocation.allocations;

  // 2. Unchanged slices keep valid hints (seeding the counts); the others are rewritten.
  ZoneCounts allocated;
  ZoneCounts slice_hints;
  MoveUnchangedIf(work, [&](const model::EndpointSlice& slice) {
    if (!HintsByZone(slice, allocated, allocations, slice_hints)) {
      return true;
    }
    for (const auto& [zone, count] : slice_hints) {
      allocated[zone] += count;
    }
    return false;
  });

  // 3. Same-zone hints for every ready endpoint of the written slices.
  bool missing_zone = false;
  ForEachWritten(work, [&](model::EndpointSlice& slice) {
    for (model::Endpoint& endpoint : slice.endpoints) {
      if (missing_zone) {
        return;
      }
      if (!EndpointReady(endpoint)) {
        // Upstream intends this but assigns to a loop copy; we clear them (decision §15.7).
        endpoint.hints.reset();
        continue;
      }
      if (!HasZone(endpoint)) {
        missing_zone = true;
        return;
      }
      ++allocated[*endpoint.zone];
      endpoint.hints = model::EndpointHints{{*endpoint.zone}, {}};
    }
  });
  if (missing_zone) {
    events.push_back(
        HintsDisabled("One or more endpoints do not have a zone specified", address_type));
    RemoveAllHints(work);
    return Disabled(address_type);
  }

  // 4.-5. Move surplus hints from over-served zones to under-served ones.
  internal::GivingAndReceiving zones = internal::GetGivingAndReceivingZones(allocations, allocated);
  for (const auto& [zone, diff] :
       RedistributeHints(work, std::move(zones.giving), std::move(zones.receiving))) {
    allocated[zone] += diff;
  }

  // 6. Publish.
  if (allocated.empty()) {
    events.push_back(HintsDisabled("No hints allocated for zones", address_type));
    RemoveAllHints(work);
    return Disabled(address_type);
  }
  if (!previously_populated) {
    events.push_back(
        Diagnostic{Diagnostic::Severity::kNormal, std::string(kReasonHintsEnabled),
                   WithAddressType("Topology Aware Hints has been enabled", address_type),
                   /*retry=*/false});
  }
  TopologyOutcome outcome;
  outcome.address_type = std::string(address_type);
  outcome.hints_allocated = true;
  outcome.allocation = std::move(allocated);
  return outcome;
}

}  // namespace slicewright::reconcile

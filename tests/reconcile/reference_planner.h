// A short, literal, unoptimised planner that follows spec §4-§6 step by step with plain vectors
// and maps, for differential tests of PlanSlices: no fingerprints, no runs, no sortedness hints.
// Where the spec leaves an order open (§15.1), it makes the choices PlanSlices documents.
#pragma once

#include <span>

#include "slicewright/model/discovery.h"
#include "slicewright/reconcile/desired.h"
#include "slicewright/reconcile/plan.h"
#include "slicewright/reconcile/planner.h"

namespace slicewright::reconcile::testing {

// The plan PlanSlices should make. Ignores every speed-up option (existing_fingerprints,
// verified_runs) and every speed-up field of the groups (fingerprints, sorted_unique,
// without_hints, the runs' shape: endpoints are read through endpoint_at). Topology-aware hints
// (options.topology) are not modelled: it aborts when options.topology is set.
// Fills actions, unchanged, stats.per_address_type, stats.groups and the stats labels;
// diagnostics are the desired ones only.
Plan ReferencePlan(const DesiredEndpoints& desired, std::span<const model::EndpointSlice> existing,
                   const PlanOptions& options);

}  // namespace slicewright::reconcile::testing

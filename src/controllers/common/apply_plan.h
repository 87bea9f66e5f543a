// ApplyPlan sends a reconcile::Plan's writes, the only writes the endpoint controllers make, and
// records each in the EndpointSliceTracker so the informer events they cause are recognised as
// our own (spec §7). Thread-safe as its arguments are.
#pragma once

#include <cstdint>

#include "slicewright/base/status.h"
#include "slicewright/client/typed_client.h"
#include "slicewright/reconcile/plan.h"
#include "slicewright/reconcile/tracker.h"

namespace slicewright::controllers {

struct ApplyCounts {
  std::int64_t created = 0;
  std::int64_t updated = 0;
  std::int64_t deleted = 0;
};

// Sends every action in order. A failed action does not stop the others (they are independent
// slices); the first failure is returned with its slice named, and the sync is retried. A delete
// of a slice already gone counts as done; a create refused because the namespace is being deleted
// (IsNamespaceTerminating) is dropped, as upstream's reconciler does. `counts` (optional) receives
// what succeeded.
Status ApplyPlan(const reconcile::Plan& plan, client::TypedClient<model::EndpointSlice>& slices,
                 reconcile::EndpointSliceTracker& tracker, ApplyCounts* counts = nullptr);

}  // namespace slicewright::controllers

// Which Service (or mirrored Endpoints) key a slice event concerns, for the controllers that write
// slices (spec §10 and §12): only their own slices matter, and only changes their stale-cache
// tracker did not cause. Pure functions over the slice metadata and the tracker.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "slicewright/model/meta.h"
#include "slicewright/reconcile/tracker.h"

namespace slicewright::controllers {

// An added (`old_slice` null) or updated slice: the keys to sync. A slice that moved to another
// Service concerns both; one that became or stopped being ours concerns its Service; otherwise
// ours with a generation the tracker has not seen (a write by someone else).
std::vector<std::string> KeysForSliceChange(const model::ObjectMeta* old_slice,
                                            const model::ObjectMeta& slice,
                                            std::string_view managed_by,
                                            const reconcile::EndpointSliceTracker& tracker);

// A deleted slice: the key to sync when it was ours, tracked, and not deleted by us (someone
// else removed a slice we rely on); "" otherwise. Forgets the slice in the tracker.
std::string KeyForSliceDeletion(const model::ObjectMeta& slice, std::string_view managed_by,
                                reconcile::EndpointSliceTracker& tracker);

}  // namespace slicewright::controllers

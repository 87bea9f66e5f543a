#include "controllers/common/slice_events.h"

#include "controllers/common/slice_labels.h"

namespace slicewright::controllers {

std::vector<std::string> KeysForSliceChange(const model::ObjectMeta* old_slice,
                                            const model::ObjectMeta& slice,
                                            std::string_view managed_by,
                                            const reconcile::EndpointSliceTracker& tracker) {
  const bool ours = ManagedBy(slice, managed_by);
  if (old_slice == nullptr) {
    if (ours && tracker.ShouldSync(slice)) return {ServiceKeyOfSlice(slice)};
    return {};
  }
  // Label-only changes do not bump the generation, so the service-name label is compared here.
  std::string old_key = ServiceKeyOfSlice(*old_slice);
  std::string key = ServiceKeyOfSlice(slice);
  if (old_key != key) return {std::move(old_key), std::move(key)};
  const bool was_ours = ManagedBy(*old_slice, managed_by);
  if (ours != was_ours || (ours && tracker.ShouldSync(slice))) return {std::move(key)};
  return {};
}

std::string KeyForSliceDeletion(const model::ObjectMeta& slice, std::string_view managed_by,
                                reconcile::EndpointSliceTracker& tracker) {
  if (!ManagedBy(slice, managed_by)) return {};
  if (tracker.Has(slice) && !tracker.HandleDeletion(slice)) return ServiceKeyOfSlice(slice);
  return {};
}

}  // namespace slicewright::controllers

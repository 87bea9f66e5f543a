// EndpointSliceTracker remembers the generation of every slice the controller wrote, and which it
// deleted, so a sync never acts on an informer cache older than its own writes (spec §7).
// Thread-safe: every method locks one mutex.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>

#include "slicewright/base/mutex.h"
#include "slicewright/model/core.h"
#include "slicewright/model/discovery.h"

namespace slicewright::reconcile {

class EndpointSliceTracker final {
 public:
  // The generation recorded for a slice whose deletion the controller issued.
  static constexpr std::int64_t kDeletionExpected = -1;

  // Which owner a slice belongs to, as "namespace/name": by default its kubernetes.io/service-name
  // label's Service. StaleSlices() asks about the Service of that namespace and name.
  using OwnerKeyFn = std::string (*)(const model::ObjectMeta& slice);

  EndpointSliceTracker() = default;
  explicit EndpointSliceTracker(OwnerKeyFn owner_key) : owner_key_(owner_key) {}
  EndpointSliceTracker(const EndpointSliceTracker&) = delete;
  EndpointSliceTracker& operator=(const EndpointSliceTracker&) = delete;

  // Slices are keyed by their namespace and kubernetes.io/service-name label (missing label: "")
  // and by UID.

  // Only a slice's metadata is read, so the informers' compact slices pass theirs.

  // Records the generation of a slice returned by a create or update.
  void Update(const model::ObjectMeta& slice);
  void Update(const model::EndpointSlice& slice) { Update(slice.metadata); }
  // Records that the controller deleted the slice.
  void ExpectDeletion(const model::ObjectMeta& slice);
  void ExpectDeletion(const model::EndpointSlice& slice) { ExpectDeletion(slice.metadata); }
  // The slice's UID is tracked under its Service.
  bool Has(const model::ObjectMeta& slice) const;
  bool Has(const model::EndpointSlice& slice) const { return Has(slice.metadata); }
  // The slice event is news: its Service or UID is untracked, or its generation is newer than the
  // tracked one (always the case for a slice expected to be deleted).
  bool ShouldSync(const model::ObjectMeta& slice) const;
  bool ShouldSync(const model::EndpointSlice& slice) const { return ShouldSync(slice.metadata); }
  // Forgets the slice; false iff it was tracked and its deletion was not expected (the caller
  // should requeue the Service).
  bool HandleDeletion(const model::ObjectMeta& slice);
  bool HandleDeletion(const model::EndpointSlice& slice) { return HandleDeletion(slice.metadata); }

  // The listed `slices` of `service` (those without deletionTimestamp) lag behind the controller's
  // writes: a listed slice is expected deleted or older than tracked, or a tracked live slice is
  // missing. False for an untracked Service. A Service recreated under a new UID drops what was
  // tracked for the old one first, since those writes are obsolete (upstream, S1).
  bool StaleSlices(const model::Service& service, std::span<const model::EndpointSlice> slices);
  bool StaleSlices(const model::Service& service,
                   std::span<const model::EndpointSlice* const> slices);

  // Forgets everything about the Service (it was deleted).
  void DeleteService(std::string_view namespace_, std::string_view name);

  // The tracked generation of a slice (kDeletionExpected included); nullopt when untracked.
  std::optional<std::int64_t> GenerationForTest(const model::EndpointSlice& slice) const;

 private:
  using Generations = std::unordered_map<std::string, std::int64_t>;  // slice UID -> generation

  template <typename SliceRange>
  bool StaleSlicesImpl(const model::Service& service, const SliceRange& slices);

  std::string KeyOf(const model::ObjectMeta& slice) const;

  const OwnerKeyFn owner_key_ = nullptr;  // nullptr: the kubernetes.io/service-name label
  mutable Mutex mu_;
  // "namespace/service-name" -> tracked slices
  std::unordered_map<std::string, Generations> generations_by_service_ SW_GUARDED_BY(mu_);
  // "namespace/service-name" -> the Service UID last seen by StaleSlices
  std::unordered_map<std::string, std::string> uid_by_service_ SW_GUARDED_BY(mu_);
};

}  // namespace slicewright::reconcile

#include "slicewright/reconcile/tracker.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "slicewright/model/meta.h"
#include "slicewright/model/well_known.h"

namespace slicewright::reconcile {
namespace {

std::string ServiceKeyOf(const model::ObjectMeta& slice) {
  auto it = slice.labels.find(model::kLabelServiceName);
  return model::NamespacedName(slice.namespace_,
                               it == slice.labels.end() ? std::string_view() : it->second);
}

const model::EndpointSlice& Deref(const model::EndpointSlice& slice) { return slice; }
const model::EndpointSlice& Deref(const model::EndpointSlice* slice) { return *slice; }

}  // namespace

std::string EndpointSliceTracker::KeyOf(const model::ObjectMeta& slice) const {
  return owner_key_ != nullptr ? owner_key_(slice) : ServiceKeyOf(slice);
}

void EndpointSliceTracker::Update(const model::ObjectMeta& slice) {
  std::string key = KeyOf(slice);
  MutexLock lock(mu_);
  generations_by_service_[std::move(key)][slice.uid] = slice.generation;
}

void EndpointSliceTracker::ExpectDeletion(const model::ObjectMeta& slice) {
  std::string key = KeyOf(slice);
  MutexLock lock(mu_);
  generations_by_service_[std::move(key)][slice.uid] = kDeletionExpected;
}

bool EndpointSliceTracker::Has(const model::ObjectMeta& slice) const {
  const std::string key = KeyOf(slice);
  MutexLock lock(mu_);
  auto service = generations_by_service_.find(key);
  return service != generations_by_service_.end() && service->second.contains(slice.uid);
}

bool EndpointSliceTracker::ShouldSync(const model::ObjectMeta& slice) const {
  const std::string key = KeyOf(slice);
  MutexLock lock(mu_);
  auto service = generations_by_service_.find(key);
  if (service == generations_by_service_.end()) {
    return true;
  }
  auto tracked = service->second.find(slice.uid);
  return tracked == service->second.end() || slice.generation > tracked->second;
}

bool EndpointSliceTracker::HandleDeletion(const model::ObjectMeta& slice) {
  const std::string key = KeyOf(slice);
  MutexLock lock(mu_);
  auto service = generations_by_service_.find(key);
  if (service == generations_by_service_.end()) {
    return true;
  }
  auto tracked = service->second.find(slice.uid);
  if (tracked == service->second.end()) {
    return true;
  }
  const bool expected = tracked->second == kDeletionExpected;
  service->second.erase(tracked);
  return expected;
}

template <typename SliceRange>
bool EndpointSliceTracker::StaleSlicesImpl(const model::Service& service,
                                           const SliceRange& slices) {
  std::string key = model::NamespacedName(service.metadata.namespace_, service.metadata.name);
  MutexLock lock(mu_);
  auto [uid, inserted] = uid_by_service_.try_emplace(key, service.metadata.uid);
  if (!inserted) {
    if (!uid->second.empty() && !service.metadata.uid.empty() &&
        uid->second != service.metadata.uid) {
      generations_by_service_.erase(key);  // writes for the previous incarnation are obsolete
    }
    uid->second = service.metadata.uid;
  }
  auto tracked = generations_by_service_.find(key);
  if (tracked == generations_by_service_.end()) {
    return false;
  }
  const Generations& generations = tracked->second;
  // A tracked write is missing from the list when fewer tracked slices are listed than expected
  // (the list holds each object once): counting avoids a set of the listed uids on every sync.
  std::size_t tracked_listed = 0;
  for (const auto& entry : slices) {
    const model::EndpointSlice& slice = Deref(entry);
    auto it = generations.find(slice.metadata.uid);
    if (it == generations.end()) {
      continue;
    }
    if (it->second == kDeletionExpected || it->second > slice.metadata.generation) {
      return true;
    }
    ++tracked_listed;
  }
  const auto expected = static_cast<std::size_t>(std::count_if(
      generations.begin(), generations.end(),
      [](const auto& tracked_slice) { return tracked_slice.second != kDeletionExpected; }));
  return tracked_listed < expected;
}

bool EndpointSliceTracker::StaleSlices(const model::Service& service,
                                       std::span<const model::EndpointSlice> slices) {
  return StaleSlicesImpl(service, slices);
}

bool EndpointSliceTracker::StaleSlices(const model::Service& service,
                                       std::span<const model::EndpointSlice* const> slices) {
  return StaleSlicesImpl(service, slices);
}

void EndpointSliceTracker::DeleteService(std::string_view namespace_, std::string_view name) {
  const std::string key = model::NamespacedName(namespace_, name);
  MutexLock lock(mu_);
  generations_by_service_.erase(key);
  uid_by_service_.erase(key);
}

std::optional<std::int64_t> EndpointSliceTracker::GenerationForTest(
    const model::EndpointSlice& slice) const {
  const std::string key = KeyOf(slice.metadata);
  MutexLock lock(mu_);
  auto service = generations_by_service_.find(key);
  if (service == generations_by_service_.end()) {
    return std::nullopt;
  }
  auto tracked = service->second.find(slice.metadata.uid);
  if (tracked == service->second.end()) {
    return std::nullopt;
  }
  return tracked->second;
}

}  // namespace slicewright::reconcile

#include "slicewright/reconcile/metrics_cache.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "slicewright/model/well_known.h"

namespace slicewright::reconcile {
namespace {

// upstream numDesiredSlices: the slices a perfect packing would need.
std::int64_t DesiredSlices(std::int64_t endpoints, std::int64_t max_per_slice) {
  if (endpoints <= 0) {
    return 0;
  }
  return (endpoints + max_per_slice - 1) / max_per_slice;
}

// Flag validation keeps the maximum in 1..1000; a zero would divide by zero.
MetricsCache::Options Normalized(MetricsCache::Options options) {
  options.max_endpoints_per_slice = std::max(options.max_endpoints_per_slice, 1);
  return options;
}

}  // namespace

MetricsCache::MetricsCache(Options options) : options_(Normalized(options)) {}

MetricsTotals MetricsCache::EntryTotals(const PortCache& cache) const {
  MetricsTotals totals;
  for (const auto& [key, efficiency] : cache) {
    totals.desired_endpoints += efficiency.endpoints;
    totals.actual_slices += efficiency.slices;
    totals.desired_slices += DesiredSlices(efficiency.endpoints, options_.max_endpoints_per_slice);
  }
  // There is always a placeholder slice (per address type, decision §15.3).
  if (options_.placeholder_enabled && totals.desired_slices == 0) {
    totals.desired_slices = 1;
  }
  return totals;
}

void MetricsCache::Subtract(const PortCache& cache) {
  const MetricsTotals entry = EntryTotals(cache);
  totals_.desired_endpoints -= entry.desired_endpoints;
  totals_.actual_slices -= entry.actual_slices;
  totals_.desired_slices -= entry.desired_slices;
}

void MetricsCache::Add(const PortCache& cache) {
  const MetricsTotals entry = EntryTotals(cache);
  totals_.desired_endpoints += entry.desired_endpoints;
  totals_.actual_slices += entry.actual_slices;
  totals_.desired_slices += entry.desired_slices;
}

MetricsCache::PortCache MetricsCache::ToPortCache(std::span<const GroupStats> groups,
                                                  std::string_view address_type,
                                                  bool filter_address_type) {
  PortCache cache;
  for (const GroupStats& group : groups) {
    if (filter_address_type && group.address_type != address_type) {
      continue;
    }
    cache.insert_or_assign(group.port_key, Efficiency{group.endpoints, group.slices});
  }
  return cache;
}

void MetricsCache::UpdateServicePortCache(std::string_view service_key,
                                          std::string_view address_type,
                                          std::span<const GroupStats> groups) {
  PortCache cache = ToPortCache(groups, address_type, /*filter_address_type=*/false);
  MutexLock lock(mu_);
  auto service = services_.find(service_key);
  if (service == services_.end()) {
    service = services_.emplace(std::string(service_key), ServiceEntry()).first;
  }
  auto entry = service->second.find(address_type);
  if (entry != service->second.end()) {
    Subtract(entry->second);
    entry->second = std::move(cache);
  } else {
    entry = service->second.emplace(std::string(address_type), std::move(cache)).first;
  }
  Add(entry->second);
}

void MetricsCache::UpdateService(std::string_view service_key, std::span<const GroupStats> groups) {
  ServiceEntry replacement;
  for (const GroupStats& group : groups) {
    if (!replacement.contains(group.address_type)) {
      replacement.emplace(group.address_type, ToPortCache(groups, group.address_type, true));
    }
  }
  MutexLock lock(mu_);
  auto service = services_.find(service_key);
  if (service != services_.end()) {
    for (const auto& [type, cache] : service->second) {
      Subtract(cache);
    }
    services_.erase(service);
  }
  if (replacement.empty()) {
    return;
  }
  for (const auto& [type, cache] : replacement) {
    Add(cache);
  }
  services_.emplace(std::string(service_key), std::move(replacement));
}

void MetricsCache::UpdateTrafficDistribution(std::string_view service_key,
                                             std::optional<std::string_view> traffic_distribution) {
  MutexLock lock(mu_);
  for (auto& [label, members] : services_by_traffic_distribution_) {
    auto it = members.find(service_key);
    if (it != members.end()) {
      members.erase(it);
    }
  }
  if (!traffic_distribution || traffic_distribution->empty()) {
    return;
  }
  const std::string_view label = *traffic_distribution == model::kTrafficDistributionPreferClose
                                     ? model::kTrafficDistributionPreferClose
                                     : kTrafficDistributionImplementationSpecific;
  auto bucket = services_by_traffic_distribution_.find(label);
  if (bucket == services_by_traffic_distribution_.end()) {
    bucket = services_by_traffic_distribution_
                 .emplace(std::string(label), std::set<std::string, std::less<>>())
                 .first;
  }
  bucket->second.emplace(service_key);
}

void MetricsCache::DeleteService(std::string_view service_key) {
  MutexLock lock(mu_);
  for (auto& [label, members] : services_by_traffic_distribution_) {
    auto it = members.find(service_key);
    if (it != members.end()) {
      members.erase(it);
    }
  }
  auto service = services_.find(service_key);
  if (service == services_.end()) {
    return;
  }
  for (const auto& [type, cache] : service->second) {
    Subtract(cache);
  }
  services_.erase(service);
}

MetricsTotals MetricsCache::Totals() const {
  MutexLock lock(mu_);
  return totals_;
}

std::map<std::string, std::int64_t> MetricsCache::ServicesByTrafficDistribution() const {
  std::map<std::string, std::int64_t> counts;
  MutexLock lock(mu_);
  for (const auto& [label, members] : services_by_traffic_distribution_) {
    counts.emplace(label, static_cast<std::int64_t>(members.size()));
  }
  return counts;
}

}  // namespace slicewright::reconcile

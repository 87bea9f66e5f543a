// MetricsCache keeps the per-Service contributions behind the endpoints_desired,
// num_endpoint_slices, desired_endpoint_slices and services_count_by_traffic_distribution gauges
// (spec §9), per (Service, address type) and summed (decision §15.3). Pure bookkeeping, no metric
// library; thread-safe: every method locks one mutex.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>

#include "slicewright/base/mutex.h"
#include "slicewright/reconcile/plan.h"

namespace slicewright::reconcile {

struct MetricsTotals {
  std::int64_t desired_endpoints = 0;  // endpoint_slice_controller_endpoints_desired
  std::int64_t actual_slices = 0;      // endpoint_slice_controller_num_endpoint_slices
  std::int64_t desired_slices = 0;     // endpoint_slice_controller_desired_endpoint_slices
  friend bool operator==(const MetricsTotals&, const MetricsTotals&) = default;
};

// The services_count_by_traffic_distribution label of a value upstream does not recognise.
inline constexpr std::string_view kTrafficDistributionImplementationSpecific =
    "ImplementationSpecific";

class MetricsCache final {
 public:
  struct Options {
    int max_endpoints_per_slice = 100;  // >= 1
    // A Service controller always keeps a placeholder slice, so each (Service, address type) entry
    // desires at least one slice; mirroring has no placeholders.
    bool placeholder_enabled = true;
  };

  explicit MetricsCache(Options options);
  MetricsCache(const MetricsCache&) = delete;
  MetricsCache& operator=(const MetricsCache&) = delete;

  // Replaces the contribution of `service_key` ("namespace/name") for `address_type` with
  // `groups` (the plan's per-port-map stats: endpoints and slices per port key; a repeated
  // port_key replaces the earlier one; each group's own address_type is not consulted). Desired
  // slices of the entry = sum of ceil(endpoints / max) over its keys, at least 1 with placeholders.
  void UpdateServicePortCache(std::string_view service_key, std::string_view address_type,
                              std::span<const GroupStats> groups);

  // Replaces every address type of the Service at once, grouping `groups` by their address_type;
  // address types absent from `groups` are dropped (e.g. after a dual-stack Service went single).
  void UpdateService(std::string_view service_key, std::span<const GroupStats> groups);

  // Records the Service under its trafficDistribution: "PreferClose" as is, any other value as
  // "ImplementationSpecific" (upstream's cardinality guard); nullopt or "" (the plan's
  // traffic_distribution_label when none is in effect) removes it from every bucket.
  void UpdateTrafficDistribution(std::string_view service_key,
                                 std::optional<std::string_view> traffic_distribution);

  // Drops everything the Service contributed.
  void DeleteService(std::string_view service_key);

  MetricsTotals Totals() const;
  // Services per traffic distribution label. A label once used stays, with 0, as upstream's gauge
  // vector keeps it.
  std::map<std::string, std::int64_t> ServicesByTrafficDistribution() const;

 private:
  struct Efficiency {
    std::int64_t endpoints = 0;
    std::int64_t slices = 0;
  };
  using PortCache = std::map<std::string, Efficiency, std::less<>>;    // port key -> stats
  using ServiceEntry = std::map<std::string, PortCache, std::less<>>;  // address type -> stats

  MetricsTotals EntryTotals(const PortCache& cache) const;
  void Subtract(const PortCache& cache) SW_REQUIRES(mu_);
  void Add(const PortCache& cache) SW_REQUIRES(mu_);
  static PortCache ToPortCache(std::span<const GroupStats> groups, std::string_view address_type,
                               bool filter_address_type);

  const Options options_;
  mutable Mutex mu_;
  MetricsTotals totals_ SW_GUARDED_BY(mu_);
  std::map<std::string, ServiceEntry, std::less<>> services_ SW_GUARDED_BY(mu_);
  std::map<std::string, std::set<std::string, std::less<>>, std::less<>>
      services_by_traffic_distribution_ SW_GUARDED_BY(mu_);
};

}  // namespace slicewright::reconcile

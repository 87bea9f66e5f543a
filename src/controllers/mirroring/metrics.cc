#include "controllers/mirroring/metrics.h"

#include <array>
#include <chrono>
#include <string_view>
#include <utility>
#include <vector>

namespace slicewright::controllers::mirroring {
namespace {

constexpr std::string_view kSubsystem = "endpoint_slice_mirroring_controller_";

std::string Name(std::string_view metric) {
  std::string name(kSubsystem);
  name += metric;
  return name;
}

// 2, 4, ..., 32768: upstream's ExponentialBuckets(2, 2, 15).
std::vector<double> PerSyncBuckets() {
  std::vector<double> bounds;
  for (double bound = 2; bounds.size() < 15; bound *= 2) {
    bounds.push_back(bound);
  }
  return bounds;
}

// 0.001 s doubling 15 times: upstream's ExponentialBuckets(0.001, 2, 15).
std::vector<double> DurationBuckets() {
  std::vector<double> bounds;
  for (double bound = 0.001; bounds.size() < 15; bound *= 2) {
    bounds.push_back(bound);
  }
  return bounds;
}

}  // namespace

Result<std::unique_ptr<MirroringMetrics>> MirroringMetrics::Register(runtime::Registry& registry) {
  std::unique_ptr<MirroringMetrics> metrics(new MirroringMetrics());
  SW_ASSIGN_OR_RETURN(
      metrics->endpoints_added_per_sync_,
      registry.AddHistogram(Name("endpoints_added_per_sync"),
                            "Number of endpoints added on each Endpoints sync", PerSyncBuckets()));
  SW_ASSIGN_OR_RETURN(metrics->endpoints_updated_per_sync_,
                      registry.AddHistogram(Name("endpoints_updated_per_sync"),
                                            "Number of endpoints updated on each Endpoints sync",
                                            PerSyncBuckets()));
  SW_ASSIGN_OR_RETURN(metrics->endpoints_removed_per_sync_,
                      registry.AddHistogram(Name("endpoints_removed_per_sync"),
                                            "Number of endpoints removed on each Endpoints sync",
                                            PerSyncBuckets()));
  SW_ASSIGN_OR_RETURN(
      metrics->addresses_skipped_per_sync_,
      registry.AddHistogram(Name("addresses_skipped_per_sync"),
                            "Number of addresses skipped on each Endpoints sync due to being "
                            "invalid or exceeding MaxEndpointsPerSubset",
                            PerSyncBuckets()));
  SW_ASSIGN_OR_RETURN(
      metrics->endpoints_sync_duration_,
      registry.AddHistogram(Name("endpoints_sync_duration"),
                            "Duration of syncEndpoints() in seconds", DurationBuckets()));
  SW_ASSIGN_OR_RETURN(metrics->endpoints_desired_,
                      registry.AddGauge(Name("endpoints_desired"), "Number of endpoints desired"));
  SW_ASSIGN_OR_RETURN(metrics->num_endpoint_slices_,
                      registry.AddGauge(Name("num_endpoint_slices"), "Number of EndpointSlices"));
  SW_ASSIGN_OR_RETURN(
      metrics->desired_endpoint_slices_,
      registry.AddGauge(
          Name("desired_endpoint_slices"),
          "Number of EndpointSlices that would exist with perfect endpoint allocation"));
  SW_ASSIGN_OR_RETURN(
      metrics->changes_,
      registry.AddCounterFamily(Name("changes"), "Number of EndpointSlice changes", {"operation"}));
  return metrics;
}

void MirroringMetrics::RecordPlan(const reconcile::Plan& plan, std::int64_t updated_endpoints,
                                  const reconcile::MirroringStats& stats, std::int64_t created,
                                  std::int64_t updated, std::int64_t deleted) {
  // Upstream observes these once per Endpoints sync, over both address types.
  endpoints_added_per_sync_->Observe(static_cast<double>(plan.stats.added()));
  endpoints_updated_per_sync_->Observe(static_cast<double>(updated_endpoints));
  endpoints_removed_per_sync_->Observe(static_cast<double>(plan.stats.removed()));
  addresses_skipped_per_sync_->Observe(static_cast<double>(stats.skipped()));
  const std::array<std::pair<std::string_view, std::int64_t>, 3> operations = {
      {{"create", created}, {"update", updated}, {"delete", deleted}}};
  for (const auto& [operation, count] : operations) {
    if (count == 0) {
      continue;
    }
    Result<runtime::Counter*> counter = changes_->WithLabelValues({operation});
    if (counter.ok()) {
      (*counter)->Add(static_cast<double>(count));
    }
  }
}

void MirroringMetrics::RecordDeletes(std::int64_t deleted) {
  if (deleted == 0) {
    return;
  }
  Result<runtime::Counter*> counter = changes_->WithLabelValues({"delete"});
  if (counter.ok()) {
    (*counter)->Add(static_cast<double>(deleted));
  }
}

void MirroringMetrics::RecordSyncDuration(Clock::Duration duration) {
  endpoints_sync_duration_->Observe(std::chrono::duration<double>(duration).count());
}

void MirroringMetrics::RecordCache(const reconcile::MetricsCache& cache) {
  const reconcile::MetricsTotals totals = cache.Totals();
  endpoints_desired_->Set(static_cast<double>(totals.desired_endpoints));
  num_endpoint_slices_->Set(static_cast<double>(totals.actual_slices));
  desired_endpoint_slices_->Set(static_cast<double>(totals.desired_slices));
}

}  // namespace slicewright::controllers::mirroring

#include "controllers/endpointslice/metrics.h"

#include <memory>
#include <vector>

namespace slicewright::controllers::endpointslice {
namespace {

// 2, 4, ..., 32768: upstream's ExponentialBuckets(2, 2, 15).
std::vector<double> PerSyncBuckets() {
  std::vector<double> bounds;
  for (double bound = 2; bounds.size() < 15; bound *= 2) bounds.push_back(bound);
  return bounds;
}

// Prometheus' DefBuckets.
std::vector<double> DefaultBuckets() {
  return {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
}

}  // namespace

Result<std::unique_ptr<ControllerMetrics>> ControllerMetrics::Register(
    runtime::Registry& registry) {
  std::unique_ptr<ControllerMetrics> metrics(new ControllerMetrics());
  SW_ASSIGN_OR_RETURN(
      metrics->endpoints_added_per_sync_,
      registry.AddHistogram("endpoint_slice_controller_endpoints_added_per_sync",
                            "Number of endpoints added on each Service sync", PerSyncBuckets()));
  SW_ASSIGN_OR_RETURN(
      metrics->endpoints_removed_per_sync_,
      registry.AddHistogram("endpoint_slice_controller_endpoints_removed_per_sync",
                            "Number of endpoints removed on each Service sync", PerSyncBuckets()));
  SW_ASSIGN_OR_RETURN(metrics->endpoints_desired_,
                      registry.AddGauge("endpoint_slice_controller_endpoints_desired",
                                        "Number of endpoints desired"));
  SW_ASSIGN_OR_RETURN(metrics->num_endpoint_slices_,
                      registry.AddGauge("endpoint_slice_controller_num_endpoint_slices",
                                        "Number of EndpointSlices"));
  SW_ASSIGN_OR_RETURN(
      metrics->desired_endpoint_slices_,
      registry.AddGauge(
          "endpoint_slice_controller_desired_endpoint_slices",
          "Number of EndpointSlices that would exist with perfect endpoint allocation"));
  SW_ASSIGN_OR_RETURN(metrics->changes_,
                      registry.AddCounterFamily("endpoint_slice_controller_changes",
                                                "Number of EndpointSlice changes", {"operation"}));
  SW_ASSIGN_OR_RETURN(
      metrics->changed_per_sync_,
      registry.AddHistogramFamily("endpoint_slice_controller_endpointslices_changed_per_sync",
                                  "Number of EndpointSlices changed on each Service sync",
                                  {"topology", "traffic_distribution"}, DefaultBuckets()));
  SW_ASSIGN_OR_RETURN(metrics->syncs_,
                      registry.AddCounterFamily("endpoint_slice_controller_syncs",
                                                "Number of EndpointSlice syncs", {"result"}));
  SW_ASSIGN_OR_RETURN(
      metrics->services_by_traffic_distribution_,
      registry.AddGaugeFamily("endpoint_slice_controller_services_count_by_traffic_distribution",
                              "Number of Services using some specific trafficDistribution",
                              {"traffic_distribution"}));
  return metrics;
}

void ControllerMetrics::RecordSync(std::string_view result) {
  Result<runtime::Counter*> counter = syncs_->WithLabelValues({result});
  if (counter.ok()) (*counter)->Inc();
}

void ControllerMetrics::RecordPlan(const reconcile::Plan& plan, std::int64_t created,
                                   std::int64_t updated, std::int64_t deleted) {
  for (const reconcile::AddressTypeStats& stats : plan.stats.per_address_type) {
    endpoints_added_per_sync_->Observe(static_cast<double>(stats.added));
    endpoints_removed_per_sync_->Observe(static_cast<double>(stats.removed));
  }
  const std::pair<std::string_view, std::int64_t> operations[] = {
      {"create", created}, {"update", updated}, {"delete", deleted}};
  for (const auto& [operation, count] : operations) {
    if (count == 0) continue;
    Result<runtime::Counter*> counter = changes_->WithLabelValues({operation});
    if (counter.ok()) (*counter)->Add(static_cast<double>(count));
  }
  Result<runtime::Histogram*> changed = changed_per_sync_->WithLabelValues(
      {plan.stats.topology_label, plan.stats.traffic_distribution_label});
  if (changed.ok()) (*changed)->Observe(static_cast<double>(created + updated + deleted));
}

void ControllerMetrics::RecordCache(const reconcile::MetricsCache& cache) {
  const reconcile::MetricsTotals totals = cache.Totals();
  endpoints_desired_->Set(static_cast<double>(totals.desired_endpoints));
  num_endpoint_slices_->Set(static_cast<double>(totals.actual_slices));
  desired_endpoint_slices_->Set(static_cast<double>(totals.desired_slices));
  // Upstream resets the family and sets every value anew; values that went away read 0 here.
  const std::map<std::string, std::int64_t> by_distribution = cache.ServicesByTrafficDistribution();
  MutexLock lock(mu_);
  for (const std::string& seen : traffic_distributions_seen_) {
    if (!by_distribution.contains(seen)) {
      Result<runtime::Gauge*> gauge = services_by_traffic_distribution_->WithLabelValues({seen});
      if (gauge.ok()) (*gauge)->Set(0);
    }
  }
  for (const auto& [distribution, count] : by_distribution) {
    traffic_distributions_seen_.insert(distribution);
    Result<runtime::Gauge*> gauge =
        services_by_traffic_distribution_->WithLabelValues({distribution});
    if (gauge.ok()) (*gauge)->Set(static_cast<double>(count));
  }
}

}  // namespace slicewright::controllers::endpointslice

// The EndpointSlice controller's metrics, with upstream's names, types, labels and buckets (spec
// §9), declared once here. All pointers are owned by the registry.
#pragma once

#include <map>
#include <set>
#include <string>

#include "slicewright/base/mutex.h"
#include "slicewright/base/result.h"
#include "slicewright/reconcile/metrics_cache.h"
#include "slicewright/reconcile/plan.h"
#include "slicewright/runtime/metrics.h"

namespace slicewright::controllers::endpointslice {

class ControllerMetrics final {
 public:
  // kAlreadyExists when the registry holds another definition under one of the names.
  static Result<std::unique_ptr<ControllerMetrics>> Register(runtime::Registry& registry);

  // syncs{result}: "success", "stale" or "error".
  void RecordSync(std::string_view result);
  // One applied plan: per-sync histograms and changes{operation}.
  void RecordPlan(const reconcile::Plan& plan, std::int64_t created, std::int64_t updated,
                  std::int64_t deleted);
  // The gauges kept from the metrics cache.
  void RecordCache(const reconcile::MetricsCache& cache);

 private:
  ControllerMetrics() = default;

  runtime::Histogram* endpoints_added_per_sync_ = nullptr;
  runtime::Histogram* endpoints_removed_per_sync_ = nullptr;
  runtime::Gauge* endpoints_desired_ = nullptr;
  runtime::Gauge* num_endpoint_slices_ = nullptr;
  runtime::Gauge* desired_endpoint_slices_ = nullptr;
  runtime::CounterFamily* changes_ = nullptr;
  runtime::HistogramFamily* changed_per_sync_ = nullptr;
  runtime::CounterFamily* syncs_ = nullptr;
  runtime::GaugeFamily* services_by_traffic_distribution_ = nullptr;
  Mutex mu_;
  std::set<std::string> traffic_distributions_seen_ SW_GUARDED_BY(mu_);
};

}  // namespace slicewright::controllers::endpointslice

// The EndpointSlice Mirroring controller's metrics, with upstream's names, types and buckets (spec
// §9, subsystem endpoint_slice_mirroring_controller), declared once here. Thread-safe; all metric
// pointers are owned by the registry.
#pragma once

#include <cstdint>
#include <memory>

#include "slicewright/base/clock.h"
#include "slicewright/base/result.h"
#include "slicewright/reconcile/endpoints_source.h"
#include "slicewright/reconcile/metrics_cache.h"
#include "slicewright/reconcile/plan.h"
#include "slicewright/runtime/metrics.h"

namespace slicewright::controllers::mirroring {

class MirroringMetrics final {
 public:
  // kAlreadyExists when the registry holds another definition under one of the names.
  static Result<std::unique_ptr<MirroringMetrics>> Register(runtime::Registry& registry);

  // One applied plan: the per-sync histograms (added, updated, removed, skipped) and
  // changes{operation} for what succeeded.
  void RecordPlan(const reconcile::Plan& plan, std::int64_t updated_endpoints,
                  const reconcile::MirroringStats& stats, std::int64_t created,
                  std::int64_t updated, std::int64_t deleted);
  // changes{operation="delete"} for slices deleted because the Endpoints is no longer mirrored.
  void RecordDeletes(std::int64_t deleted);
  // endpoints_sync_duration, observed for every sync whatever its outcome.
  void RecordSyncDuration(Clock::Duration duration);
  // The gauges kept from the metrics cache.
  void RecordCache(const reconcile::MetricsCache& cache);

 private:
  MirroringMetrics() = default;

  runtime::Histogram* endpoints_added_per_sync_ = nullptr;
  runtime::Histogram* endpoints_updated_per_sync_ = nullptr;
  runtime::Histogram* endpoints_removed_per_sync_ = nullptr;
  runtime::Histogram* addresses_skipped_per_sync_ = nullptr;
  runtime::Histogram* endpoints_sync_duration_ = nullptr;
  runtime::Gauge* endpoints_desired_ = nullptr;
  runtime::Gauge* num_endpoint_slices_ = nullptr;
  runtime::Gauge* desired_endpoint_slices_ = nullptr;
  runtime::CounterFamily* changes_ = nullptr;
};

}  // namespace slicewright::controllers::mirroring

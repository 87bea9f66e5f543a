// The EndpointSlice Mirroring controller: kube-controller-manager's (spec §12) on the reconciler
// library. It mirrors user-managed Endpoints of selector-less Services into EndpointSlices, and
// honours KEP-4770 (spec §11.4): Endpoints of a Service labelled
// service.kubernetes.io/endpoint-controller-name are not mirrored, and what was mirrored for them
// is deleted. Informer events only enqueue "namespace/name" keys; Sync(key) reads the caches, plans
// with reconcile::PlanSlices and writes with ApplyPlan. Thread-safe.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "slicewright/base/clock.h"
#include "slicewright/base/result.h"
#include "slicewright/cache/informer_factory.h"
#include "slicewright/client/rest_client.h"
#include "slicewright/client/typed_client.h"
#include "slicewright/reconcile/endpoints_source.h"
#include "slicewright/reconcile/metrics_cache.h"
#include "slicewright/reconcile/tracker.h"
#include "slicewright/runtime/events.h"
#include "slicewright/runtime/metrics.h"
#include "slicewright/runtime/work_queue.h"

#include "controllers/common/slice_index.h"
#include "controllers/common/sync_loop.h"
#include "controllers/mirroring/metrics.h"
#include "controllers/mirroring/options.h"

namespace slicewright::controllers::mirroring {

struct Deps {
  client::RestClient* client = nullptr;         // required
  cache::InformerFactory* informers = nullptr;  // required; not yet started
  runtime::EventRecorder* events = nullptr;     // optional
  runtime::Registry* metrics = nullptr;         // optional: workqueue_* and ours
  Clock* clock = nullptr;                       // nullptr: SystemClock
};

// The event source component, as upstream's.
inline constexpr std::string_view kComponent = "endpoint-slice-mirroring-controller";
// The index of the EndpointSlice informer by "namespace/<kubernetes.io/service-name>", shared
// with the other controllers on the informer (common/slice_index.h).
inline constexpr std::string_view kSliceIndex = kSliceByServiceIndex;

class Controller final {
 public:
  // Registers the informers (and their handlers) with `deps.informers`; call before the factory's
  // Start(). kInvalid for out-of-range options or a missing dependency.
  static Result<std::unique_ptr<Controller>> Create(Options options, Deps deps);
  ~Controller();
  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;

  // Starts the workers; the caller has started the informers and waited for their sync.
  void Start();
  // Stops taking keys, lets the syncs in flight finish, joins the workers. Idempotent.
  void Stop();

  // One level-based, idempotent sync of the Endpoints (and Service) `key` ("namespace/name").
  // Public for tests.
  Status Sync(const std::string& key);

  runtime::WorkQueue& queue() { return loop_->queue(); }

 private:
  Controller(Options options, Deps deps, std::unique_ptr<SyncLoop> loop,
             std::unique_ptr<MirroringMetrics> metrics);
  void RegisterHandlers();
  Status SyncOnce(const std::string& key);

  // Handlers: keys only.
  void Enqueue(const std::string& key, Clock::Duration delay);
  void OnServiceUpdate(const model::Service& old_service, const model::Service& service);
  void OnSliceChange(const model::ObjectMeta* old_slice, const model::ObjectMeta& slice);
  void OnSliceDelete(const model::ObjectMeta& slice);

  // The slices we mirrored for `namespace_/name` that are not being deleted, by name.
  std::vector<model::EndpointSlice> MirroredSlices(const std::string& namespace_,
                                                   const std::string& name) const;
  // Spec §12 "In every other case": delete every mirrored slice and forget the key.
  Status DeleteMirrored(const std::string& namespace_, const std::string& name,
                        const std::string& key, reconcile::MirrorDecision why);
  bool IsDelegated(const model::Service& service) const;
  void Record(const model::Endpoints& endpoints, const reconcile::Diagnostic& diagnostic) const;

  const Options options_;
  const Deps deps_;
  Clock& clock_;
  const reconcile::MirroringOptions source_options_;
  std::unique_ptr<SyncLoop> loop_;
  client::TypedClient<model::EndpointSlice> slices_client_;
  cache::Informer<model::Service>& services_;
  cache::Informer<model::Endpoints>& endpoints_;
  cache::Informer<cache::CompactEndpointSlice>& slices_;
  reconcile::EndpointSliceTracker tracker_;
  reconcile::MetricsCache metrics_cache_;
  std::unique_ptr<MirroringMetrics> metrics_;  // nullptr without a registry
};

}  // namespace slicewright::controllers::mirroring

// The EndpointSlice controller: kube-controller-manager's, on the reconciler library (spec §10),
// honouring KEP-4770 (spec §11.4): Services labelled service.kubernetes.io/endpoint-controller-name
// are left to their controller, and the slices we wrote for one are deleted when it gains the
// label. Informer events only enqueue Service keys; Sync(key) reads the caches, plans with
// reconcile::PlanSlices and writes with ApplyPlan. Thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "slicewright/base/clock.h"
#include "slicewright/base/mutex.h"
#include "slicewright/base/result.h"
#include "slicewright/cache/informer_factory.h"
#include "slicewright/client/rest_client.h"
#include "slicewright/client/typed_client.h"
#include "slicewright/reconcile/metrics_cache.h"
#include "slicewright/reconcile/plan.h"
#include "slicewright/reconcile/topology_cache.h"
#include "slicewright/reconcile/tracker.h"
#include "slicewright/reconcile/trigger_time.h"
#include "slicewright/runtime/events.h"
#include "slicewright/runtime/metrics.h"
#include "slicewright/runtime/work_queue.h"

#include "controllers/common/slice_index.h"
#include "controllers/common/sync_loop.h"
#include "controllers/endpointslice/metrics.h"
#include "controllers/endpointslice/options.h"

namespace slicewright::controllers::endpointslice {

// What makes a custom controller on this machinery (KEP-4770's custom controllers, spec §11.4):
// which Services it owns, and what a selected pod's endpoint shows. Empty functions give
// upstream's controller.
struct Plugin {
  // True when this controller owns `service`. A Service it stops owning loses the slices this
  // controller wrote, explicitly (the garbage collector does not act: the Service still exists).
  // Default: not labelled service.kubernetes.io/endpoint-controller-name (or the gate is off).
  std::function<bool(const model::Service&)> owns;
  // The pod as its endpoint should show it (e.g. with another network's IPs); nullopt leaves it
  // out; an error leaves it out and becomes a Warning Event `adapt_failed_reason` on the Service.
  // Default: the pod as it is.
  std::function<Result<std::optional<model::Pod>>(const model::Service&, model::Pod)> adapt_pod;
  std::string adapt_failed_reason = "FailedToReadPodNetworks";
};

struct Deps {
  client::RestClient* client = nullptr;         // required
  cache::InformerFactory* informers = nullptr;  // required; not yet started
  runtime::EventRecorder* events = nullptr;     // optional
  runtime::Registry* metrics = nullptr;         // optional
  Clock* clock = nullptr;                       // nullptr: SystemClock
  Plugin plugin;
};

// The event source component, as upstream's.
inline constexpr std::string_view kComponent = "endpoint-slice-controller";
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

  // One level-based, idempotent sync of the Service `key` ("namespace/name"), counted in
  // endpoint_slice_controller_syncs{result}. Public for tests.
  Status Sync(const std::string& key);

  runtime::WorkQueue& queue() { return loop_->queue(); }

 private:
  Controller(Options options, Deps deps, std::unique_ptr<SyncLoop> loop,
             std::unique_ptr<ControllerMetrics> metrics);
  // Sync without the result metric; sets `stale` when the slice cache lagged our writes.
  Status SyncService(const std::string& key, bool& stale);
  // Steps (4) and (5) of a sync: writes `plan` and records its metrics, Events and caches.
  Status ApplyAndRecord(const model::Service& service, const std::string& key,
                        const reconcile::Plan& plan);
  void RegisterHandlers();

  // Handlers: keys only.
  void EnqueueService(const std::string& key, Clock::Duration delay);
  void EnqueueServicesForPod(const model::CompactPod& pod);
  void OnPodUpdate(const model::CompactPod& old_pod, const model::CompactPod& new_pod);
  void OnSliceChange(const model::ObjectMeta* old_slice, const model::ObjectMeta& slice);
  void OnSliceDelete(const model::ObjectMeta& slice);
  void OnNodesChanged();

  // A large Service's state kept between syncs (Options::incremental_min_pods).
  struct IncrementalState;
  using IncrementalPtr = std::shared_ptr<IncrementalState>;
  bool IncrementalEnabled() const;
  // The Service's state; a new, empty one (its marks recorded from now on) when `create`.
  IncrementalPtr FindIncremental(const std::string& key, bool create);
  void DropIncremental(const std::string& key);
  // Whether any Service is kept (the pod handlers skip the marking work otherwise).
  bool AnyKept() const;
  // Records pod `pod_name` as changed for those of `service_keys` that are kept.
  void MarkPodChanged(std::string_view pod_name, std::span<const std::string> service_keys);
  // The Node `name` from the cache, or nullptr (also for ""); `snapshots` keeps it alive.
  using NodeSnapshots = std::vector<std::shared_ptr<const model::Node>>;
  const model::Node* FindNode(std::string_view name, NodeSnapshots& snapshots) const;
  // Brings `state`'s copy of the Service's slices up to date with the cache: only the slices
  // whose cached version changed are read again and fingerprinted.
  void RefreshSlices(IncrementalState& state, const std::string& namespace_,
                     const std::string& name) const;
  // Builds `state` from every pod in `cached`, or re-derives only its marked pods (`full` false).
  void DeriveIncremental(IncrementalState& state, const model::Service& service,
                         const std::vector<std::shared_ptr<const model::CompactPod>>& cached,
                         bool full);

  // KEP-4770: another controller owns the Service; delete what we wrote for it and forget it.
  Status ReleaseService(const model::Service& service, const std::string& key);
  void ForgetService(const std::string& namespace_, const std::string& name,
                     const std::string& key);
  std::vector<model::EndpointSlice> OurSlices(const std::string& namespace_,
                                              const std::string& name) const;
  bool Owns(const model::Service& service) const;
  void Record(const model::Service& service, runtime::EventType type, std::string_view reason,
              std::string_view message);

  const Options options_;
  const Deps deps_;
  Clock& clock_;
  std::unique_ptr<SyncLoop> loop_;
  client::TypedClient<model::EndpointSlice> slices_client_;
  cache::Informer<model::Service>& services_;
  cache::Informer<model::CompactPod>& pods_;
  cache::Informer<model::Node>& nodes_;
  cache::Informer<cache::CompactEndpointSlice>& slices_;
  reconcile::EndpointSliceTracker tracker_;
  reconcile::TriggerTimeTracker trigger_times_;
  reconcile::TopologyCache topology_;
  reconcile::MetricsCache metrics_cache_;
  std::unique_ptr<ControllerMetrics> metrics_;  // null without a registry
  // Bumped by every Node change that may move a pod's endpoint: kept Services re-derive all.
  std::atomic<std::uint64_t> node_generation_{0};
  mutable Mutex incremental_mu_;
  std::unordered_map<std::string, IncrementalPtr> incremental_
      SW_GUARDED_BY(incremental_mu_);  // by key
};

}  // namespace slicewright::controllers::endpointslice

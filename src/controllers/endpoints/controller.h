// The Endpoints controller: kube-controller-manager's, writing one core/v1 Endpoints per Service
// with a selector from the pods it selects (spec §13), truncated at 1000 addresses with the
// over-capacity annotation, and honouring KEP-4770 (spec §11.4, §15.8): a Service labelled
// service.kubernetes.io/endpoint-controller-name is left to its controller, and the Endpoints we
// wrote for it is deleted. Informer events only enqueue Service keys; Sync(key) reads the caches,
// decides with reconcile::PlanEndpoints and writes at most one object. Thread-safe.
#pragma once

#include <memory>
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
#include "slicewright/reconcile/endpoints_builder.h"
#include "slicewright/reconcile/trigger_time.h"
#include "slicewright/runtime/events.h"
#include "slicewright/runtime/metrics.h"
#include "slicewright/runtime/work_queue.h"

#include "controllers/common/sync_loop.h"
#include "controllers/endpoints/options.h"

namespace slicewright::controllers::endpoints {

struct Deps {
  client::RestClient* client = nullptr;         // required
  cache::InformerFactory* informers = nullptr;  // required; not yet started
  runtime::EventRecorder* events = nullptr;     // optional
  runtime::Registry* metrics = nullptr;         // optional: the work queue's metrics
  Clock* clock = nullptr;                       // nullptr: SystemClock
};

// The event source component, as upstream's.
inline constexpr std::string_view kComponent = "endpoint-controller";

class Controller final {
 public:
  // Registers the Service, Pod and Endpoints informers (and their handlers) with
  // `deps.informers`; call before the factory's Start(). kInvalid for out-of-range options or a
  // missing dependency.
  static Result<std::unique_ptr<Controller>> Create(Options options, Deps deps);
  ~Controller();
  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;

  // Starts the workers; the caller has started the informers and waited for their sync. Queues
  // every cached Endpoints (leader-election records excepted), as upstream's checkLeftoverEndpoints
  // does, so the Endpoints of Services deleted while no controller ran are deleted.
  void Start();
  // Stops taking keys, lets the syncs in flight finish, joins the workers. Idempotent.
  void Stop();

  // One level-based, idempotent sync of the Service `key` ("namespace/name"). Public for tests.
  Status Sync(const std::string& key);

  runtime::WorkQueue& queue() { return loop_->queue(); }

 private:
  Controller(Options options, Deps deps, std::unique_ptr<SyncLoop> loop);
  void RegisterHandlers();

  // Handlers: keys only.
  void Enqueue(const std::string& key, Clock::Duration delay);
  void EnqueueServicesForPod(const model::CompactPod& pod);
  void OnPodUpdate(const model::CompactPod& old_compact, const model::CompactPod& new_compact);

  std::vector<model::Pod> SelectedPods(const model::Service& service) const;
  // KEP-4770: another controller owns the Service; delete the Endpoints if we wrote it.
  Status ReleaseService(const model::Service& service, const std::string& key);
  Status Write(const model::Service& service, const model::Endpoints* current,
               const reconcile::EndpointsPlan& plan, const std::string& key);
  void Forget(const std::string& namespace_, const std::string& name, const std::string& key);
  bool OwnedByAnotherController(const model::Service& service) const;
  void Record(const model::ObjectReference& object, runtime::EventType type,
              std::string_view reason, std::string_view message) const;

  // Upstream's staleEndpointsTracker: the resourceVersion our last update replaced, per key. The
  // cache still showing it means our write has not arrived yet, and the sync must wait for it.
  bool IsStale(const std::string& key, const model::Endpoints& endpoints) const;
  void MarkStale(const std::string& key, const std::string& resource_version);

  const Options options_;
  const Deps deps_;
  std::unique_ptr<SyncLoop> loop_;
  client::TypedClient<model::Endpoints> endpoints_client_;
  cache::Informer<model::Service>& services_;
  cache::Informer<model::CompactPod>& pods_;
  cache::Informer<model::Endpoints>& endpoints_;
  reconcile::TriggerTimeTracker trigger_times_;
  mutable Mutex mu_;
  std::unordered_map<std::string, std::string> stale_versions_ SW_GUARDED_BY(mu_);
};

}  // namespace slicewright::controllers::endpoints

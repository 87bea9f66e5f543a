#include "controllers/endpoints/controller.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "slicewright/base/log.h"
#include "slicewright/labels/selector.h"
#include "slicewright/model/endpoint_controller.h"
#include "slicewright/model/well_known.h"

#include "controllers/common/pod_services.h"

namespace slicewright::controllers::endpoints {
namespace {

model::ObjectReference ReferenceTo(std::string_view kind, const model::ObjectMeta& meta) {
  model::ObjectReference ref;
  ref.kind = std::string(kind);
  ref.api_version = "v1";
  ref.namespace_ = meta.namespace_;
  ref.name = meta.name;
  ref.uid = meta.uid;
  ref.resource_version = meta.resource_version;
  return ref;
}

std::vector<const model::Pod*> Pointers(const std::vector<model::Pod>& pods) {
  std::vector<const model::Pod*> out;
  out.reserve(pods.size());
  for (const model::Pod& pod : pods) {
    out.push_back(&pod);
  }
  return out;
}

}  // namespace

Result<std::unique_ptr<Controller>> Controller::Create(Options options, Deps deps) {
  if (deps.client == nullptr || deps.informers == nullptr) {
    return Status(StatusCode::kInvalid,
                  "endpoints controller: a client and informers are required");
  }
  if (options.concurrent_syncs < 1) {
    return Status(StatusCode::kInvalid, "--concurrent-endpoint-syncs must be at least 1, got " +
                                            std::to_string(options.concurrent_syncs));
  }
  if (options.batch_period.count() < 0) {
    return Status(StatusCode::kInvalid, "--endpoint-updates-batch-period must not be negative");
  }
  runtime::WorkQueueOptions queue_options;
  queue_options.name = "endpoint";
  queue_options.clock = deps.clock;
  queue_options.metrics = deps.metrics;
  SW_ASSIGN_OR_RETURN(std::unique_ptr<SyncLoop> loop, SyncLoop::Create(std::move(queue_options)));
  std::unique_ptr<Controller> controller(new Controller(options, deps, std::move(loop)));
  controller->RegisterHandlers();
  return controller;
}

Controller::Controller(Options options, Deps deps, std::unique_ptr<SyncLoop> loop)
    : options_(options),
      deps_(deps),
      loop_(std::move(loop)),
      endpoints_client_(*deps.client, client::EndpointsCodec()),
      services_(deps.informers->Services()),
      pods_(deps.informers->Pods()),
      endpoints_(deps.informers->Endpoints()) {}

Controller::~Controller() { Stop(); }

void Controller::Start() {
  runtime::ControllerOptions options;
  options.name = "endpoints";
  options.thread_name = "ep";
  options.workers = options_.concurrent_syncs;
  options.max_retries = options_.max_retries;
  options.metrics = deps_.metrics;
  loop_->Start(std::move(options), [this](const std::string& key) { return Sync(key); });
  // Upstream's checkLeftoverEndpoints: an Endpoints whose Service is gone is deleted by its sync.
  for (const auto& endpoints : endpoints_.store().List()) {
    if (!endpoints->metadata.annotations.contains(model::kAnnotationLeader)) {
      Enqueue(cache::KeyOf(*endpoints), Clock::Duration::zero());
    }
  }
}

void Controller::Stop() { loop_->Stop(); }

// ---- Handlers (keys only) ----

void Controller::RegisterHandlers() {
  cache::EventHandler<model::Service> services;
  services.on_add = [this](const auto& service, bool) {
    Enqueue(cache::KeyOf(*service), Clock::Duration::zero());
  };
  services.on_update = [this](const auto&, const auto& service) {
    Enqueue(cache::KeyOf(*service), Clock::Duration::zero());
  };
  services.on_delete = [this](const auto& service, bool) {
    Enqueue(cache::KeyOf(*service), Clock::Duration::zero());
  };
  services_.AddEventHandler(std::move(services));

  cache::EventHandler<model::CompactPod> pods;
  pods.on_add = [this](const auto& pod, bool) { EnqueueServicesForPod(*pod); };
  pods.on_update = [this](const auto& old_pod, const auto& new_pod) {
    OnPodUpdate(*old_pod, *new_pod);
  };
  pods.on_delete = [this](const auto& pod, bool) { EnqueueServicesForPod(*pod); };
  pods_.AddEventHandler(std::move(pods));

  // Someone deleted an Endpoints: its Service (if any) writes it again.
  cache::EventHandler<model::Endpoints> endpoints;
  endpoints.on_delete = [this](const auto& deleted, bool) {
    Enqueue(cache::KeyOf(*deleted), Clock::Duration::zero());
  };
  endpoints_.AddEventHandler(std::move(endpoints));
}

void Controller::Enqueue(const std::string& key, Clock::Duration delay) {
  loop_->Enqueue(key, delay);
}

void Controller::EnqueueServicesForPod(const model::CompactPod& pod) {
  const std::vector<ServiceSnapshot> services = services_.store().ListNamespace(pod.namespace_());
  for (const std::string& key : ServicesSelectingPod(services, pod.labels())) {
    Enqueue(key, options_.batch_period);
  }
}

void Controller::OnPodUpdate(const model::CompactPod& old_compact,
                             const model::CompactPod& new_compact) {
  if (old_compact.resource_version() == new_compact.resource_version()) {
    return;  // a resync: skip the conversions
  }
  const std::vector<ServiceSnapshot> services =
      services_.store().ListNamespace(new_compact.namespace_());
  for (const std::string& key :
       ServicesToUpdateOnPodChange(services, old_compact.ToPod(), new_compact.ToPod())) {
    Enqueue(key, options_.batch_period);
  }
}

// ---- Sync ----

bool Controller::OwnedByAnotherController(const model::Service& service) const {
  return model::LeftToAnotherController(service, options_.external_endpoint_controller);
}

bool Controller::IsStale(const std::string& key, const model::Endpoints& endpoints) const {
  MutexLock lock(mu_);
  auto it = stale_versions_.find(key);
  return it != stale_versions_.end() && it->second == endpoints.metadata.resource_version;
}

void Controller::MarkStale(const std::string& key, const std::string& resource_version) {
  MutexLock lock(mu_);
  stale_versions_[key] = resource_version;
}

void Controller::Forget(const std::string& namespace_, const std::string& name,
                        const std::string& key) {
  trigger_times_.DeleteService(namespace_, name);
  MutexLock lock(mu_);
  stale_versions_.erase(key);
}

void Controller::Record(const model::ObjectReference& object, runtime::EventType type,
                        std::string_view reason, std::string_view message) const {
  if (deps_.events != nullptr) {
    deps_.events->Event(object, type, reason, message);
  }
}

std::vector<model::Pod> Controller::SelectedPods(const model::Service& service) const {
  std::vector<model::Pod> pods;
  if (!service.spec.selector.has_value()) {
    return pods;
  }
  const model::StringMap& selector = *service.spec.selector;
  for (const auto& pod :
       pods_.store().ListNamespace(service.metadata.namespace_, [&](const model::CompactPod& p) {
         return labels::SelectorMatchesMap(selector, p.labels());
       })) {
    pods.push_back(pod->ToPod());
  }
  // Deterministic input; the builder sorts its output anyway.
  std::sort(pods.begin(), pods.end(),
            [](const auto& a, const auto& b) { return a.metadata.name < b.metadata.name; });
  return pods;
}

Status Controller::ReleaseService(const model::Service& service, const std::string& key) {
  const std::string& namespace_ = service.metadata.namespace_;
  const std::string& name = service.metadata.name;
  const std::shared_ptr<const model::Endpoints> current = endpoints_.store().Get(namespace_, name);
  if (current != nullptr) {
    // Ours: carries our mark over its current subsets, or (for a Service we would write for)
    // holds exactly what we would write, as one kube-controller-manager wrote would. Anything
    // else is the other controller's, or a user's, and stays.
    bool ours = reconcile::CarriesWrittenSubsetsMark(*current);
    if (!ours && service.spec.selector.has_value() && service.spec.type != "ExternalName") {
      const std::vector<model::Pod> pods = SelectedPods(service);
      const std::vector<const model::Pod*> pointers = Pointers(pods);
      reconcile::EndpointsBuildOptions build;
      build.managed_by_label = options_.managed_by_label;
      ours = reconcile::WrittenByEndpointsController(
          *current, reconcile::PlanEndpoints(service, pointers, current.get(), build));
    }
    if (ours) {
      // Preconditions: if the other controller wrote it since our cache saw it, the delete
      // conflicts and the retry judges the new version.
      client::DeleteOptions options;
      options.precondition_uid = current->metadata.uid;
      options.precondition_resource_version = current->metadata.resource_version;
      Status deleted = endpoints_client_.Delete(namespace_, name, options);
      if (!deleted.ok() && deleted.code() != StatusCode::kNotFound) {
        return deleted;
      }
      SW_LOG(kInfo, "endpoints: {} is labelled {}: deleted the Endpoints we wrote", key,
             model::kLabelEndpointControllerName);
    } else {
      SW_VLOG(2, "endpoints: {} is labelled {}: its Endpoints is not ours, left alone", key,
              model::kLabelEndpointControllerName);
    }
  }
  Forget(namespace_, name, key);
  return Status();
}

Status Controller::Write(const model::Service& service, const model::Endpoints* current,
                         const reconcile::EndpointsPlan& plan, const std::string& key) {
  const bool create = plan.action == reconcile::EndpointsPlan::Action::kCreate;
  Result<model::Endpoints> written =
      create ? endpoints_client_.Create(plan.endpoints) : endpoints_client_.Update(plan.endpoints);
  if (!written.ok()) {
    const Status& error = written.status();
    // Upstream drops the key then: every retry would fail the same way until the namespace is gone.
    if (create && IsNamespaceTerminating(error)) {
      SW_VLOG(5, "endpoints: not creating {}: {}", key, error.ToString());
      return Status();
    }
    if ((create && error.code() == StatusCode::kAlreadyExists) ||
        (!create && error.code() == StatusCode::kNotFound)) {
      // The cache has not seen a create or delete yet; the retry reads a newer cache.
      return Status(StatusCode::kUnavailable,
                    "the Endpoints cache is behind the server for " + key + "; retrying");
    }
    if (error.code() != StatusCode::kConflict) {
      // A conflict is the same lag and is retried quietly; anything else is worth an Event.
      Record(ReferenceTo("Endpoints", plan.endpoints.metadata), runtime::EventType::kWarning,
             create ? "FailedToCreateEndpoint" : "FailedToUpdateEndpoint",
             (create ? "Failed to create endpoint for service " : "Failed to update endpoint ") +
                 model::NamespacedName(service.metadata) + ": " + error.ToString());
    }
    return error;
  }
  // Remember the version we replaced: the cache still showing it means it has not seen our write.
  // (A write the server found unchanged keeps its resourceVersion, and nothing is remembered.)
  if (current != nullptr &&
      written->metadata.resource_version != current->metadata.resource_version) {
    MarkStale(key, current->metadata.resource_version);
  }
  SW_VLOG(4, "endpoints: {} {}: {} ready, {} not ready{}", create ? "created" : "updated", key,
          plan.ready, plan.not_ready, plan.truncated ? " (truncated to 1000)" : "");
  return Status();
}

Status Controller::Sync(const std::string& key) {
  const std::size_t slash = key.find('/');
  const std::string namespace_ = slash == std::string::npos ? std::string() : key.substr(0, slash);
  const std::string name = slash == std::string::npos ? key : key.substr(slash + 1);

  // (1) read
  const std::shared_ptr<const model::Service> service = services_.store().Get(namespace_, name);
  if (service == nullptr) {
    // Endpoints carry no ownerReference: upstream deletes the Endpoints of a deleted Service.
    Status deleted = endpoints_client_.Delete(namespace_, name);
    if (!deleted.ok() && deleted.code() != StatusCode::kNotFound) {
      return deleted;
    }
    Forget(namespace_, name, key);
    return Status();
  }
  // (2) guard
  if (OwnedByAnotherController(*service)) {
    return ReleaseService(*service, key);
  }
  if (service->spec.type == "ExternalName" || !service->spec.selector.has_value()) {
    return Status();  // no Endpoints from us; a selector-less Service's are the user's
  }
  const std::vector<model::Pod> pods = SelectedPods(*service);
  const std::vector<const model::Pod*> pointers = Pointers(pods);
  // Computed on every sync, even one that writes nothing, so the tracker keeps up (spec §8).
  reconcile::EndpointsBuildOptions build;
  build.managed_by_label = options_.managed_by_label;
  build.trigger_time =
      trigger_times_.ComputeEndpointLastChangeTriggerTime(namespace_, *service, pointers);
  const std::shared_ptr<const model::Endpoints> current = endpoints_.store().Get(namespace_, name);
  if (current != nullptr && IsStale(key, *current)) {
    return Status(StatusCode::kUnavailable,
                  "the Endpoints cache has not seen our write of " + key + " (resourceVersion " +
                      current->metadata.resource_version + " was replaced); retrying");
  }

  // (3) decide
  const reconcile::EndpointsPlan plan =
      reconcile::PlanEndpoints(*service, pointers, current.get(), build);
  for (const reconcile::Diagnostic& diagnostic : plan.diagnostics) {
    Record(ReferenceTo("Service", service->metadata),
           diagnostic.severity == reconcile::Diagnostic::Severity::kWarning
               ? runtime::EventType::kWarning
               : runtime::EventType::kNormal,
           diagnostic.reason, diagnostic.message);
  }
  if (plan.action == reconcile::EndpointsPlan::Action::kNone) {
    SW_VLOG(5, "endpoints: {} is up to date", key);
    return Status();
  }
  // (4) act
  return Write(*service, current.get(), plan, key);
}

}  // namespace slicewright::controllers::endpoints

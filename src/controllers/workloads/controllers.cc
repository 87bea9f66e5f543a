#include "controllers/workloads/controllers.h"

#include <utility>
#include <vector>

#include "slicewright/base/log.h"
#include "slicewright/codec/apps.h"
#include "slicewright/model/meta.h"

#include "controllers/workloads/deployment.h"
#include "controllers/workloads/replicaset.h"
#include "controllers/workloads/statefulset.h"
#include "runtime/wall_time.h"

namespace slicewright::controllers::workloads {
namespace {

constexpr std::string_view kOwnerIndex = "controller-uid";

client::ResourceRef AppsResource(std::string resource) {
  return client::ResourceRef{"apps", "v1", std::move(resource), true};
}

const model::OwnerReference* ControllerOf(const model::ObjectMeta& meta) {
  for (const model::OwnerReference& owner : meta.owner_references) {
    if (owner.controller.value_or(false)) return &owner;
  }
  return nullptr;
}

template <typename T>
std::vector<std::string> OwnerIndex(const T& object) {
  const model::OwnerReference* owner = ControllerOf(object.metadata);
  if (owner == nullptr) return {};
  return {owner->uid};
}

model::ObjectReference ReferenceTo(const model::Workload& object) {
  model::ObjectReference ref;
  ref.kind = object.kind;
  ref.api_version = "apps/v1";
  ref.namespace_ = object.metadata.namespace_;
  ref.name = object.metadata.name;
  ref.uid = object.metadata.uid;
  ref.resource_version = object.metadata.resource_version;
  return ref;
}

model::OwnerReference OwnerFor(const model::Workload& object) {
  return model::OwnerReference{"apps/v1",           object.kind, object.metadata.name,
                               object.metadata.uid, true,        true};
}

template <typename T>
std::vector<const T*> Raw(const std::vector<std::shared_ptr<const T>>& objects) {
  std::vector<const T*> out;
  out.reserve(objects.size());
  for (const auto& object : objects) out.push_back(object.get());
  return out;
}

// Enqueues the key of every object an informer reports.
template <typename T>
cache::EventHandler<T> Enqueue(runtime::WorkQueue& queue) {
  cache::EventHandler<T> handler;
  handler.on_add = [&queue](const auto& object, bool) { queue.Add(cache::KeyOf(*object)); };
  handler.on_update = [&queue](const auto&, const auto& object) {
    queue.Add(cache::KeyOf(*object));
  };
  handler.on_delete = [&queue](const auto& object, bool) { queue.Add(cache::KeyOf(*object)); };
  return handler;
}

}  // namespace

WorkloadControllers::WorkloadControllers(WorkloadControllersOptions options,
                                         client::RestClient& client, Clock& clock)
    : options_(std::move(options)),
      client_(client),
      clock_(clock),
      steady_origin_(clock.Now()),
      wall_origin_(runtime::internal::SystemWallTime()) {}

WorkloadControllers::~WorkloadControllers() { Stop(); }

Result<std::unique_ptr<WorkloadControllers>> WorkloadControllers::Create(
    WorkloadControllersOptions options, client::RestClient& client, Clock& clock) {
  if (options.workers < 1) return InvalidError("workload controllers: workers must be >= 1");
  std::unique_ptr<WorkloadControllers> self(
      new WorkloadControllers(std::move(options), client, clock));
  for (auto [queue, name] : {std::pair{&self->deployment_queue_, "deployment"},
                             std::pair{&self->replicaset_queue_, "replicaset"},
                             std::pair{&self->statefulset_queue_, "statefulset"}}) {
    runtime::WorkQueueOptions queue_options;
    queue_options.name = name;
    queue_options.clock = &clock;
    SW_ASSIGN_OR_RETURN(*queue, runtime::WorkQueue::Create(std::move(queue_options)));
  }
  runtime::EventRecorderOptions event_options;
  event_options.component = self->options_.component;
  event_options.clock = &clock;
  SW_ASSIGN_OR_RETURN(
      self->recorder_,
      runtime::EventRecorder::Create(runtime::NewRestEventSink(client), std::move(event_options)));
  cache::ReflectorOptions reflector_options;
  reflector_options.name = "workload pods";
  self->pods_ =
      std::make_unique<cache::Informer<model::Pod>>(client, cache::PodKind(), reflector_options);
  self->pods_->AddIndex(std::string(kOwnerIndex), OwnerIndex<model::Pod>);
  for (auto [informer, resource] : {std::pair{&self->deployments_, "deployments"},
                                    std::pair{&self->replicasets_, "replicasets"},
                                    std::pair{&self->statefulsets_, "statefulsets"}}) {
    reflector_options.name = resource;
    *informer = std::make_unique<cache::Informer<model::Workload>>(
        client, cache::WorkloadKind(resource), reflector_options);
    (*informer)->AddIndex(std::string(kOwnerIndex), OwnerIndex<model::Workload>);
  }
  WorkloadControllers* raw = self.get();
  runtime::ControllerOptions controller_options;
  controller_options.workers = self->options_.workers;
  controller_options.name = "deployment";
  controller_options.thread_name = "deploy";
  self->deployment_controller_ = std::make_unique<runtime::Controller>(
      controller_options, *self->deployment_queue_,
      [raw](const std::string& key) { return raw->SyncDeployment(key); });
  controller_options.name = "replicaset";
  controller_options.thread_name = "rs";
  self->replicaset_controller_ = std::make_unique<runtime::Controller>(
      controller_options, *self->replicaset_queue_,
      [raw](const std::string& key) { return raw->SyncReplicaSet(key); });
  controller_options.name = "statefulset";
  controller_options.thread_name = "sts";
  self->statefulset_controller_ = std::make_unique<runtime::Controller>(
      controller_options, *self->statefulset_queue_,
      [raw](const std::string& key) { return raw->SyncStatefulSet(key); });
  return self;
}

void WorkloadControllers::AddHandlers() {
  cache::EventHandler<model::Pod> pods;
  pods.on_add = [this](const auto& pod, bool) { OnPod(*pod, true, false); };
  pods.on_update = [this](const auto&, const auto& pod) {
    OnPod(*pod, false, PodTerminating(*pod));
  };
  pods.on_delete = [this](const auto& pod, bool) { OnPod(*pod, false, true); };
  pods_->AddEventHandler(std::move(pods));

  // A ReplicaSet's changes also concern the Deployment that owns it.
  cache::EventHandler<model::Workload> replicasets;
  const auto enqueue_rs = [this](const model::Workload& rs) {
    replicaset_queue_->Add(cache::KeyOf(rs));
    if (const model::OwnerReference* owner = ControllerOf(rs.metadata);
        owner != nullptr && owner->kind == "Deployment") {
      deployment_queue_->Add(model::NamespacedName(rs.metadata.namespace_, owner->name));
    }
  };
  replicasets.on_add = [enqueue_rs](const auto& rs, bool) { enqueue_rs(*rs); };
  replicasets.on_update = [enqueue_rs](const auto&, const auto& rs) { enqueue_rs(*rs); };
  replicasets.on_delete = [enqueue_rs](const auto& rs, bool) { enqueue_rs(*rs); };
  replicasets_->AddEventHandler(std::move(replicasets));
  deployments_->AddEventHandler(Enqueue<model::Workload>(*deployment_queue_));
  statefulsets_->AddEventHandler(Enqueue<model::Workload>(*statefulset_queue_));
}

Status WorkloadControllers::Start() {
  MutexLock run_lock(run_mu_);
  if (started_ || stopped_) return Status();
  started_ = true;
  AddHandlers();
  for (auto* informer : {deployments_.get(), replicasets_.get(), statefulsets_.get()}) {
    informer->Start();
  }
  pods_->Start();
  for (auto* informer : {deployments_.get(), replicasets_.get(), statefulsets_.get()}) {
    if (!informer->WaitForSync(options_.sync_timeout)) {
      return Status(StatusCode::kTimeout, "workload controllers: a workload cache did not sync");
    }
  }
  if (!pods_->WaitForSync(options_.sync_timeout)) {
    return Status(StatusCode::kTimeout, "workload controllers: the pod cache did not sync");
  }
  deployment_controller_->Start();
  replicaset_controller_->Start();
  statefulset_controller_->Start();
  SW_LOG(kInfo, "workload controllers: deployment, replicaset and statefulset running");
  return Status();
}

void WorkloadControllers::Stop() {
  MutexLock run_lock(run_mu_);
  if (stopped_) return;
  stopped_ = true;
  for (auto* informer : {deployments_.get(), replicasets_.get(), statefulsets_.get()}) {
    informer->Stop();
  }
  pods_->Stop();
  deployment_controller_->Stop();
  replicaset_controller_->Stop();
  statefulset_controller_->Stop();
  recorder_->ShutDown();
}

model::Time WorkloadControllers::WallNow() const {
  return runtime::internal::WallTimeAt(clock_.Now(), steady_origin_, wall_origin_);
}

// --- expectations (upstream's ControllerExpectations, by count for adds, by name for deletes) --

void WorkloadControllers::OnPod(const model::Pod& pod, bool added, bool deleted) {
  const model::OwnerReference* owner = ControllerOf(pod.metadata);
  if (owner == nullptr) return;
  runtime::WorkQueue* queue = nullptr;
  std::string prefix;
  if (owner->kind == "ReplicaSet") {
    queue = replicaset_queue_.get();
    prefix = "replicasets/";
  } else if (owner->kind == "StatefulSet") {
    queue = statefulset_queue_.get();
    prefix = "statefulsets/";
  } else {
    return;
  }
  const std::string key = model::NamespacedName(pod.metadata.namespace_, owner->name);
  {
    MutexLock lock(mu_);
    if (auto it = expectations_.find(prefix + key); it != expectations_.end()) {
      if (added) --it->second.adds;
      if (deleted) it->second.deletes.erase(pod.metadata.name);
    }
  }
  queue->Add(key);
}

bool WorkloadControllers::Satisfied(const std::string& key) {
  MutexLock lock(mu_);
  auto it = expectations_.find(key);
  if (it == expectations_.end()) return true;
  const bool met = it->second.adds <= 0 && it->second.deletes.empty();
  if (met || clock_.Now() - it->second.set_at > options_.expectations_timeout) {
    expectations_.erase(it);
    return true;
  }
  return false;
}

void WorkloadControllers::ExpectLocked(const std::string& key, int adds,
                                       const std::vector<std::string>& deletes) {
  if (adds == 0 && deletes.empty()) return;
  Expectation& expectation = expectations_[key];
  expectation.adds = adds;
  expectation.deletes = std::set<std::string>(deletes.begin(), deletes.end());
  expectation.set_at = clock_.Now();
}

void WorkloadControllers::CreationFailed(const std::string& key) {
  MutexLock lock(mu_);
  if (auto it = expectations_.find(key); it != expectations_.end()) --it->second.adds;
}

Status WorkloadControllers::WriteStatus(const client::ResourceRef& resource,
                                        const model::Workload& object,
                                        const model::WorkloadStatus& status) {
  std::string patch = codec::EncodeWorkloadStatusPatch(object.kind, status);
  if (patch == codec::EncodeWorkloadStatusPatch(object.kind, object.status)) return Status();
  Result<std::string> written =
      client_.Patch(resource, object.metadata.namespace_, object.metadata.name,
                    client::PatchType::kMergePatch, std::move(patch), "status");
  if (!written.ok() && written.status().code() == StatusCode::kNotFound) return Status();
  return written.ok() ? Status() : written.status();
}

// --- ReplicaSet ------------------------------------------------------------------------------

Status WorkloadControllers::SyncReplicaSet(const std::string& key) {
  const std::string expectation_key = "replicasets/" + key;
  std::shared_ptr<const model::Workload> rs = replicasets_->store().GetByKey(key);
  if (rs == nullptr) {
    MutexLock lock(mu_);
    expectations_.erase(expectation_key);
    return Status();
  }
  // Guard: decide only once the pod cache shows this controller's last writes.
  if (!Satisfied(expectation_key)) {
    replicaset_queue_->AddAfter(key, options_.expectations_timeout);
    return Status();
  }
  const auto pods = pods_->store().ByIndex(kOwnerIndex, rs->metadata.uid);
  ReplicaSetPlan plan = PlanReplicaSet(*rs, Raw(pods), WallNow());
  if (rs->metadata.deletion_timestamp) {
    plan.creates = 0;  // being deleted: the garbage collector removes its pods
    plan.deletes.clear();
  }
  {
    MutexLock lock(mu_);
    ExpectLocked(expectation_key, plan.creates, plan.deletes);
  }
  Status failure;
  for (std::int32_t i = 0; i < plan.creates; ++i) {
    codec::PodFromTemplate pod;
    pod.template_json = rs->template_json;
    pod.namespace_ = rs->metadata.namespace_;
    pod.generate_name = rs->metadata.name + "-";
    pod.owner = OwnerFor(*rs);
    Result<std::string> body = codec::EncodePodFromTemplate(pod);
    Result<std::string> created =
        body.ok() ? client_.Create(client::PodsResource(), pod.namespace_, *body) : body.status();
    if (!created.ok()) {
      CreationFailed(expectation_key);
      recorder_->Event(ReferenceTo(*rs), runtime::EventType::kWarning, "FailedCreate",
                       "Error creating: " + std::string(created.status().message()));
      failure = created.status();
      continue;
    }
    SW_VLOG(2, "replicaset {}: created a pod", key);
  }
  if (plan.creates > 0 && failure.ok()) {
    recorder_->Event(ReferenceTo(*rs), runtime::EventType::kNormal, "SuccessfulCreate",
                     "Created " + std::to_string(plan.creates) + " pod(s)");
  }
  for (const std::string& name : plan.deletes) {
    Result<std::string> deleted =
        client_.Delete(client::PodsResource(), rs->metadata.namespace_, name, {});
    if (!deleted.ok() && deleted.status().code() != StatusCode::kNotFound) {
      failure = deleted.status();
      continue;
    }
    recorder_->Event(ReferenceTo(*rs), runtime::EventType::kNormal, "SuccessfulDelete",
                     "Deleted pod: " + name);
  }
  SW_RETURN_IF_ERROR(failure);
  return WriteStatus(AppsResource("replicasets"), *rs, plan.status);
}

// --- Deployment ------------------------------------------------------------------------------

Status WorkloadControllers::SyncDeployment(const std::string& key) {
  std::shared_ptr<const model::Workload> d = deployments_->store().GetByKey(key);
  if (d == nullptr || d->metadata.deletion_timestamp) return Status();
  const std::string hash = PodTemplateHash(d->template_json);
  const auto owned = replicasets_->store().ByIndex(kOwnerIndex, d->metadata.uid);
  const DeploymentPlan plan = PlanDeployment(*d, hash, Raw(owned), WallNow());
  const std::string& ns = d->metadata.namespace_;
  if (plan.create_replicas) {
    codec::ReplicaSetFromDeployment rs{d.get(), hash, *plan.create_replicas, plan.new_revision};
    SW_ASSIGN_OR_RETURN(std::string body, codec::EncodeReplicaSetFromDeployment(rs));
    Result<std::string> created = client_.Create(AppsResource("replicasets"), ns, std::move(body));
    if (!created.ok() && created.status().code() != StatusCode::kAlreadyExists) {
      return created.status();
    }
    if (created.ok()) {
      recorder_->Event(ReferenceTo(*d), runtime::EventType::kNormal, "ScalingReplicaSet",
                       "Scaled up replica set " + plan.new_name + " from 0 to " +
                           std::to_string(*plan.create_replicas));
    }
  }
  for (const ReplicaSetScale& scale : plan.scales) {
    std::int32_t before = 0;
    for (const auto& rs : owned) {
      if (rs->metadata.name == scale.name) before = rs->replicas;
    }
    Result<std::string> patched =
        client_.Patch(AppsResource("replicasets"), ns, scale.name, client::PatchType::kMergePatch,
                      codec::EncodeReplicasPatch(scale.replicas));
    if (!patched.ok() && patched.status().code() != StatusCode::kNotFound) {
      return patched.status();
    }
    recorder_->Event(ReferenceTo(*d), runtime::EventType::kNormal, "ScalingReplicaSet",
                     std::string(scale.replicas > before ? "Scaled up" : "Scaled down") +
                         " replica set " + scale.name + " from " + std::to_string(before) + " to " +
                         std::to_string(scale.replicas));
  }
  for (const std::string& name : plan.deletes) {
    client::DeleteOptions options;
    options.propagation_policy = "Background";
    Result<std::string> deleted = client_.Delete(AppsResource("replicasets"), ns, name, options);
    if (!deleted.ok() && deleted.status().code() != StatusCode::kNotFound) {
      return deleted.status();
    }
  }
  return WriteStatus(AppsResource("deployments"), *d, plan.status);
}

// --- StatefulSet -----------------------------------------------------------------------------

Status WorkloadControllers::SyncStatefulSet(const std::string& key) {
  const std::string expectation_key = "statefulsets/" + key;
  std::shared_ptr<const model::Workload> sts = statefulsets_->store().GetByKey(key);
  if (sts == nullptr) {
    MutexLock lock(mu_);
    expectations_.erase(expectation_key);
    return Status();
  }
  if (!Satisfied(expectation_key)) {
    statefulset_queue_->AddAfter(key, options_.expectations_timeout);
    return Status();
  }
  const std::string revision = sts->metadata.name + "-" + PodTemplateHash(sts->template_json);
  const auto pods = pods_->store().ByIndex(kOwnerIndex, sts->metadata.uid);
  StatefulSetPlan plan = PlanStatefulSet(*sts, revision, Raw(pods), WallNow());
  if (sts->metadata.deletion_timestamp) {
    plan.creates.clear();
    plan.deletes.clear();
  }
  {
    MutexLock lock(mu_);
    ExpectLocked(expectation_key, static_cast<int>(plan.creates.size()), plan.deletes);
  }
  const std::string& ns = sts->metadata.namespace_;
  for (std::int32_t ordinal : plan.creates) {
    codec::PodFromTemplate pod;
    pod.template_json = sts->template_json;
    pod.namespace_ = ns;
    pod.name = sts->metadata.name + "-" + std::to_string(ordinal);
    pod.extra_labels = {{std::string(model::kLabelControllerRevisionHash), revision},
                        {std::string(model::kLabelStatefulSetPodName), pod.name},
                        {std::string(model::kLabelPodIndex), std::to_string(ordinal)}};
    pod.owner = OwnerFor(*sts);
    pod.hostname = pod.name;
    pod.subdomain = sts->service_name;
    SW_ASSIGN_OR_RETURN(std::string body, codec::EncodePodFromTemplate(pod));
    Result<std::string> created = client_.Create(client::PodsResource(), ns, std::move(body));
    if (!created.ok()) {
      CreationFailed(expectation_key);
      if (created.status().code() == StatusCode::kAlreadyExists) continue;
      recorder_->Event(ReferenceTo(*sts), runtime::EventType::kWarning, "FailedCreate",
                       "create Pod " + pod.name + " in StatefulSet " + sts->metadata.name +
                           " failed error: " + std::string(created.status().message()));
      return created.status();
    }
    recorder_->Event(
        ReferenceTo(*sts), runtime::EventType::kNormal, "SuccessfulCreate",
        "create Pod " + pod.name + " in StatefulSet " + sts->metadata.name + " successful");
  }
  for (const std::string& name : plan.deletes) {
    Result<std::string> deleted = client_.Delete(client::PodsResource(), ns, name, {});
    if (!deleted.ok() && deleted.status().code() != StatusCode::kNotFound) {
      return deleted.status();
    }
    recorder_->Event(
        ReferenceTo(*sts), runtime::EventType::kNormal, "SuccessfulDelete",
        "delete Pod " + name + " in StatefulSet " + sts->metadata.name + " successful");
  }
  return WriteStatus(AppsResource("statefulsets"), *sts, plan.status);
}

}  // namespace slicewright::controllers::workloads

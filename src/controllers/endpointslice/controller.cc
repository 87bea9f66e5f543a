#include "controllers/endpointslice/controller.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <set>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "slicewright/base/log.h"
#include "slicewright/labels/selector.h"
#include "slicewright/model/endpoint_controller.h"
#include "slicewright/model/well_known.h"
#include "slicewright/reconcile/fingerprint.h"
#include "slicewright/reconcile/planner.h"
#include "slicewright/reconcile/pod_source.h"
#include "slicewright/reconcile/service_endpoints.h"

#include "controllers/common/apply_plan.h"
#include "controllers/common/pod_services.h"
#include "controllers/common/slice_events.h"
#include "controllers/common/slice_labels.h"

namespace slicewright::controllers::endpointslice {
namespace {

using SlicePtr = std::shared_ptr<const cache::CompactEndpointSlice>;

bool NodeReady(const model::Node& node) {
  const model::PodCondition* ready = model::FindPodCondition(node.status.conditions, "Ready");
  return ready != nullptr && ready->status == "True";
}

const std::string& NodeZone(const model::Node& node) {
  static const std::string kNone;
  const std::string* zone = LabelValue(node.metadata.labels, model::kLabelTopologyZone);
  return zone != nullptr ? *zone : kNone;
}

}  // namespace

// What a large Service keeps between syncs. Only the sync of its key reads or writes it (the work
// queue never runs a key twice at once), except `marked_pods`, which the pod handlers fill.
struct Controller::IncrementalState {
  // Guarded by incremental_mu_: pods changed since the last sync took them.
  std::set<std::string, std::less<>> marked_pods;
  // What `builder` was built from; a change of either means building it again.
  std::string service_uid;
  std::string service_resource_version;
  std::uint64_t node_generation = 0;
  // nullopt until built (or after a failed build).
  std::optional<reconcile::ServiceEndpointsBuilder> builder;
  // The Service's slices as the cache holds them, in name order, each materialized and
  // fingerprinted once per cached version (`slice_sources` identifies the version).
  std::vector<SlicePtr> slice_sources;
  // slice_sources' addresses, sorted, with their index: finds a listed slice among them without
  // reading it.
  std::vector<std::pair<const cache::CompactEndpointSlice*, std::uint32_t>> source_addresses;
  std::vector<model::EndpointSlice> slices;
  // What the last plan found each slice to hold (PlanOptions::verified_runs), in the same order.
  std::vector<reconcile::VerifiedRun> verified;
  std::vector<reconcile::SliceFingerprints> fingerprints;
};

Result<std::unique_ptr<Controller>> Controller::Create(Options options, Deps deps) {
  if (deps.client == nullptr || deps.informers == nullptr) {
    return Status(StatusCode::kInvalid,
                  "endpointslice controller: a client and informers are required");
  }
  SW_RETURN_IF_ERROR(
      CheckFlagRange("--concurrent-service-endpoint-syncs", options.concurrent_syncs, 1, 50));
  SW_RETURN_IF_ERROR(
      CheckFlagRange("--max-endpoints-per-slice", options.max_endpoints_per_slice, 1, 1000));
  if (options.incremental_min_pods < 0) {
    return Status(StatusCode::kInvalid, "endpointslice controller: incremental_min_pods < 0");
  }
  if (options.batch_period.count() < 0) {
    return Status(StatusCode::kInvalid,
                  "--endpointslice-updates-batch-period must not be negative");
  }
  if (options.managed_by.empty()) {
    return Status(StatusCode::kInvalid, "--controller-name must not be empty");
  }
  runtime::WorkQueueOptions queue_options;
  queue_options.name = options.name;
  queue_options.clock = deps.clock;
  queue_options.metrics = deps.metrics;
  SW_ASSIGN_OR_RETURN(std::unique_ptr<SyncLoop> loop, SyncLoop::Create(std::move(queue_options)));
  std::unique_ptr<ControllerMetrics> metrics;
  if (deps.metrics != nullptr && options.upstream_metrics) {
    SW_ASSIGN_OR_RETURN(metrics, ControllerMetrics::Register(*deps.metrics));
  }
  std::unique_ptr<Controller> controller(
      new Controller(std::move(options), deps, std::move(loop), std::move(metrics)));
  controller->RegisterHandlers();
  return controller;
}

Controller::Controller(Options options, Deps deps, std::unique_ptr<SyncLoop> loop,
                       std::unique_ptr<ControllerMetrics> metrics)
    : options_(std::move(options)),
      deps_(deps),
      clock_(deps.clock != nullptr ? *deps.clock : SystemClock::Get()),
      loop_(std::move(loop)),
      slices_client_(*deps.client, client::EndpointSliceCodec()),
      services_(deps.informers->Services()),
      pods_(deps.informers->Pods()),
      nodes_(deps.informers->Nodes()),
      slices_(deps.informers->EndpointSlices()),
      metrics_cache_(reconcile::MetricsCache::Options{options_.max_endpoints_per_slice, true}),
      metrics_(std::move(metrics)) {
  AddSliceByServiceIndex(slices_);
}

Controller::~Controller() { Stop(); }

void Controller::Start() {
  OnNodesChanged();
  runtime::ControllerOptions options;
  options.name = options_.name;
  options.thread_name = options_.thread_name;
  options.workers = options_.concurrent_syncs;
  options.max_retries = options_.max_retries;
  options.metrics = deps_.metrics;
  loop_->Start(std::move(options), [this](const std::string& key) { return Sync(key); });
}

void Controller::Stop() { loop_->Stop(); }

// ---- Handlers (keys only) ----

void Controller::RegisterHandlers() {
  cache::EventHandler<model::Service> services;
  services.on_add = [this](const auto& service, bool) {
    EnqueueService(cache::KeyOf(*service), Clock::Duration::zero());
  };
  services.on_update = [this](const auto&, const auto& service) {
    EnqueueService(cache::KeyOf(*service), Clock::Duration::zero());
  };
  services.on_delete = [this](const auto& service, bool) {
    EnqueueService(cache::KeyOf(*service), Clock::Duration::zero());
  };
  services_.AddEventHandler(std::move(services));

  cache::EventHandler<model::CompactPod> pods;
  pods.on_add = [this](const auto& pod, bool) { EnqueueServicesForPod(*pod); };
  pods.on_update = [this](const auto& old_pod, const auto& new_pod) {
    OnPodUpdate(*old_pod, *new_pod);
  };
  pods.on_delete = [this](const auto& pod, bool) { EnqueueServicesForPod(*pod); };
  pods_.AddEventHandler(std::move(pods));

  cache::EventHandler<cache::CompactEndpointSlice> slices;
  slices.on_add = [this](const auto& slice, bool) { OnSliceChange(nullptr, slice->metadata); };
  slices.on_update = [this](const auto& old_slice, const auto& slice) {
    OnSliceChange(&old_slice->metadata, slice->metadata);
  };
  slices.on_delete = [this](const auto& slice, bool) { OnSliceDelete(slice->metadata); };
  slices_.AddEventHandler(std::move(slices));

  cache::EventHandler<model::Node> nodes;
  nodes.on_add = [this](const auto&, bool initial) {
    if (!initial) OnNodesChanged();
  };
  nodes.on_update = [this](const auto& old_node, const auto& node) {
    if (NodeReady(*old_node) != NodeReady(*node) || NodeZone(*old_node) != NodeZone(*node)) {
      OnNodesChanged();
    }
  };
  nodes.on_delete = [this](const auto&, bool) { OnNodesChanged(); };
  nodes_.AddEventHandler(std::move(nodes));
}

void Controller::EnqueueService(const std::string& key, Clock::Duration delay) {
  loop_->Enqueue(key, delay);
}

void Controller::EnqueueServicesForPod(const model::CompactPod& pod) {
  const std::vector<ServiceSnapshot> services = services_.store().ListNamespace(pod.namespace_());
  const std::vector<std::string> keys = ServicesSelectingPod(services, pod.labels());
  MarkPodChanged(pod.name(), keys);
  for (const std::string& key : keys) {
    EnqueueService(key, options_.batch_period);
  }
}

// Spec §10: which Services a pod update concerns.
void Controller::OnPodUpdate(const model::CompactPod& old_pod, const model::CompactPod& new_pod) {
  if (old_pod.resource_version() == new_pod.resource_version()) return;  // a resync
  const std::vector<ServiceSnapshot> services =
      services_.store().ListNamespace(new_pod.namespace_());
  // Every change counts for the kept Services, even one that enqueues nothing: their next sync
  // re-derives only marked pods, and must see the pod as it is then.
  if (AnyKept()) {
    MarkPodChanged(new_pod.name(), ServicesSelectingPod(services, new_pod.labels()));
    if (old_pod.labels() != new_pod.labels()) {
      MarkPodChanged(new_pod.name(), ServicesSelectingPod(services, old_pod.labels()));
    }
  }
  // The cache keeps only the annotations a plugin reads (network status): a change shows in
  // the endpoints.
  for (const std::string& key :
       ServicesToUpdateOnPodChange(services, old_pod.ToPod(), new_pod.ToPod(),
                                   /*annotations_matter=*/true)) {
    EnqueueService(key, options_.batch_period);
  }
}

void Controller::OnSliceChange(const model::ObjectMeta* old_slice, const model::ObjectMeta& slice) {
  const Clock::Duration delay =
      std::max<Clock::Duration>(std::chrono::seconds(1), options_.batch_period);
  for (const std::string& key :
       KeysForSliceChange(old_slice, slice, options_.managed_by, tracker_)) {
    EnqueueService(key, delay);
  }
}

void Controller::OnSliceDelete(const model::ObjectMeta& slice) {
  // Someone else deleted a slice we rely on: rebuild it.
  EnqueueService(KeyForSliceDeletion(slice, options_.managed_by, tracker_),
                 std::chrono::seconds(1));
}

void Controller::OnNodesChanged() {
  node_generation_.fetch_add(1);
  const std::vector<std::shared_ptr<const model::Node>> nodes = nodes_.store().List();
  std::vector<const model::Node*> raw;
  raw.reserve(nodes.size());
  for (const auto& node : nodes) raw.push_back(node.get());
  topology_.SetNodes(raw);
  for (const std::string& key : topology_.GetOverloadedServices()) {
    EnqueueService(key, Clock::Duration::zero());
  }
}

// ---- Incremental state ----

bool Controller::IncrementalEnabled() const {
  return options_.incremental_min_pods > 0 && !deps_.plugin.adapt_pod;
}

Controller::IncrementalPtr Controller::FindIncremental(const std::string& key, bool create) {
  MutexLock lock(incremental_mu_);
  auto it = incremental_.find(key);
  if (!create) return it == incremental_.end() ? nullptr : it->second;
  if (it == incremental_.end()) {
    it = incremental_.emplace(key, std::make_shared<IncrementalState>()).first;
  }
  // A build reads every pod after this point, so older marks are covered.
  it->second->marked_pods.clear();
  return it->second;
}

void Controller::DropIncremental(const std::string& key) {
  MutexLock lock(incremental_mu_);
  incremental_.erase(key);
}

bool Controller::AnyKept() const {
  MutexLock lock(incremental_mu_);
  return !incremental_.empty();
}

void Controller::MarkPodChanged(std::string_view pod_name,
                                std::span<const std::string> service_keys) {
  MutexLock lock(incremental_mu_);
  if (incremental_.empty()) return;
  for (const std::string& key : service_keys) {
    auto it = incremental_.find(key);
    if (it == incremental_.end()) continue;
    // A pod changes many times between syncs: look before building a name to insert.
    std::set<std::string, std::less<>>& marked = it->second->marked_pods;
    if (!marked.contains(pod_name)) marked.emplace(pod_name);
  }
}

const model::Node* Controller::FindNode(std::string_view name, NodeSnapshots& snapshots) const {
  if (name.empty()) return nullptr;
  std::shared_ptr<const model::Node> node = nodes_.store().Get({}, name);
  if (node == nullptr) return nullptr;
  snapshots.push_back(node);
  return node.get();
}

void Controller::RefreshSlices(IncrementalState& state, const std::string& namespace_,
                               const std::string& name) const {
  // The cache replaces an object on every change, and a kept Ptr keeps its version alive, so a
  // listed object at a kept address is that kept version: the kept ones are recognised by address
  // alone, and only the others (usually just the echo of this controller's last write) are copied
  // and read.
  const auto by_address = [](const auto& entry, const cache::CompactEndpointSlice* address) {
    return entry.first < address;
  };
  std::vector<std::uint8_t> still_listed(state.slice_sources.size(), 0);
  std::size_t listed_kept = 0;
  std::vector<SlicePtr> fresh;
  slices_.store().ForEachByIndex(
      kSliceIndex, model::NamespacedName(namespace_, name), [&](const SlicePtr& slice) {
        const auto kept = std::lower_bound(state.source_addresses.begin(),
                                           state.source_addresses.end(), slice.get(), by_address);
        if (kept != state.source_addresses.end() && kept->first == slice.get()) {
          listed_kept += still_listed[kept->second] == 0 ? 1 : 0;
          still_listed[kept->second] = 1;
        } else {
          fresh.push_back(slice);
        }
      });
  std::erase_if(fresh, [this](const SlicePtr& slice) {
    return !ManagedBy(slice->metadata, options_.managed_by) ||
           slice->metadata.deletion_timestamp.has_value();
  });
  if (fresh.empty() && listed_kept == state.slice_sources.size()) return;
  const auto index_addresses = [&state] {
    state.source_addresses.clear();
    for (std::size_t i = 0; i < state.slice_sources.size(); ++i) {
      state.source_addresses.emplace_back(state.slice_sources[i].get(),
                                          static_cast<std::uint32_t>(i));
    }
    std::sort(state.source_addresses.begin(), state.source_addresses.end());
  };

  // Usually each new version replaces a kept one of the same name: only those entries are
  // materialized again, in place.
  if (listed_kept + fresh.size() == state.slice_sources.size()) {
    std::vector<std::size_t> replaced;  // the kept index each fresh slice takes over
    std::vector<std::uint8_t> taken = still_listed;
    for (const SlicePtr& slice : fresh) {
      std::size_t match = state.slice_sources.size();
      for (std::size_t i = 0; i < state.slice_sources.size(); ++i) {
        if (taken[i] == 0 && state.slice_sources[i]->metadata.name == slice->metadata.name) {
          match = i;
          break;
        }
      }
      if (match == state.slice_sources.size()) break;
      taken[match] = 1;
      replaced.push_back(match);
    }
    if (replaced.size() == fresh.size()) {
      for (std::size_t f = 0; f < fresh.size(); ++f) {
        const std::size_t i = replaced[f];
        state.slice_sources[i] = std::move(fresh[f]);
        state.slices[i] = state.slice_sources[i]->ToSlice();
        state.fingerprints[i] = reconcile::FingerprintSlice(state.slices[i]);
        if (i < state.verified.size()) state.verified[i] = {};
      }
      index_addresses();
      return;
    }
  }

  std::vector<SlicePtr> current = std::move(fresh);
  for (std::size_t i = 0; i < state.slice_sources.size(); ++i) {
    if (still_listed[i] != 0) {
      current.push_back(state.slice_sources[i]);
    }
  }
  std::sort(current.begin(), current.end(),
            [](const auto& a, const auto& b) { return a->metadata.name < b->metadata.name; });
  std::unordered_map<const cache::CompactEndpointSlice*, std::size_t> previous;
  for (std::size_t i = 0; i < state.slice_sources.size(); ++i) {
    previous.emplace(state.slice_sources[i].get(), i);
  }
  std::vector<model::EndpointSlice> slices;
  std::vector<reconcile::SliceFingerprints> fingerprints;
  std::vector<reconcile::VerifiedRun> verified(current.size());
  slices.reserve(current.size());
  fingerprints.reserve(current.size());
  for (const SlicePtr& slice : current) {
    const auto kept = previous.find(slice.get());
    if (kept != previous.end()) {
      if (kept->second < state.verified.size()) {
        verified[slices.size()] = std::move(state.verified[kept->second]);
      }
      slices.push_back(std::move(state.slices[kept->second]));
      fingerprints.push_back(std::move(state.fingerprints[kept->second]));
    } else {
      slices.push_back(slice->ToSlice());
      fingerprints.push_back(reconcile::FingerprintSlice(slices.back()));
    }
  }
  state.slice_sources = std::move(current);
  state.slices = std::move(slices);
  state.fingerprints = std::move(fingerprints);
  state.verified = std::move(verified);
  index_addresses();
}

void Controller::DeriveIncremental(
    IncrementalState& state, const model::Service& service,
    const std::vector<std::shared_ptr<const model::CompactPod>>& cached, bool full) {
  const std::string& namespace_ = service.metadata.namespace_;
  // The Node snapshots stay alive until the builder has read them.
  NodeSnapshots node_snapshots;
  const auto find_node = [this, &node_snapshots](std::string_view node_name) {
    return FindNode(node_name, node_snapshots);
  };
  model::Time trigger_time;
  if (full) {
    std::vector<model::Pod> pods;
    pods.reserve(cached.size());
    std::vector<const model::CompactPod*> compact_ptrs;
    compact_ptrs.reserve(cached.size());
    for (const auto& pod : cached) {
      pods.push_back(pod->ToPod());
      compact_ptrs.push_back(pod.get());
    }
    std::vector<const model::Pod*> pod_ptrs;
    pod_ptrs.reserve(pods.size());
    for (const model::Pod& pod : pods) pod_ptrs.push_back(&pod);
    reconcile::ServiceSourceOptions source;
    source.managed_by = options_.managed_by;
    source.topology_mode_annotation = options_.topology_mode_annotation;
    state.builder.emplace(service, source);
    state.builder->SetPods(pod_ptrs, find_node);
    trigger_time =
        trigger_times_.ComputeEndpointLastChangeTriggerTime(namespace_, service, compact_ptrs);
  } else {
    std::set<std::string, std::less<>> marked;
    {
      MutexLock lock(incremental_mu_);
      marked.swap(state.marked_pods);
    }
    const model::StringMap& selector = *service.spec.selector;
    std::vector<reconcile::TriggerTimeTracker::PodTime> changed;
    changed.reserve(marked.size());
    for (const std::string& name : marked) {
      const std::shared_ptr<const model::CompactPod> pod = pods_.store().Get(namespace_, name);
      if (pod != nullptr && labels::SelectorMatchesMap(selector, pod->labels())) {
        state.builder->SetPod(pod->ToPod(), find_node(pod->node_name()));
        changed.push_back({name, pod->ready_transition_time().value_or(model::Time{})});
      } else {
        state.builder->RemovePod(name);
        changed.push_back({name, model::Time{}});
      }
    }
    trigger_time = trigger_times_.ComputeForChangedPods(namespace_, service, changed);
  }
  state.builder->SetTriggerTime(trigger_time);
}

// ---- Sync ----

bool Controller::Owns(const model::Service& service) const {
  if (deps_.plugin.owns) return deps_.plugin.owns(service);
  return !model::LeftToAnotherController(service, options_.external_endpoint_controller);
}

std::vector<model::EndpointSlice> Controller::OurSlices(const std::string& namespace_,
                                                        const std::string& name) const {
  std::vector<model::EndpointSlice> out;
  for (const SlicePtr& slice :
       slices_.store().ByIndex(kSliceIndex, model::NamespacedName(namespace_, name))) {
    if (ManagedBy(slice->metadata, options_.managed_by) && !slice->metadata.deletion_timestamp) {
      out.push_back(slice->ToSlice());
    }
  }
  // A deterministic order for the planner and for tests.
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.metadata.name < b.metadata.name; });
  return out;
}

void Controller::ForgetService(const std::string& namespace_, const std::string& name,
                               const std::string& key) {
  DropIncremental(key);
  trigger_times_.DeleteService(namespace_, name);
  metrics_cache_.DeleteService(key);
  topology_.RemoveService(key);
}

Status Controller::ReleaseService(const model::Service& service, const std::string& key) {
  std::vector<model::EndpointSlice> ours =
      OurSlices(service.metadata.namespace_, service.metadata.name);
  // Forgotten before the deletes, whose expectations then stay: should the Service become ours
  // again while the slice cache still holds these slices, the sync sees a stale cache and retries
  // instead of keeping deleted slices as current.
  tracker_.DeleteService(service.metadata.namespace_, service.metadata.name);
  // A plan of deletes only, sent through ApplyPlan like every other slice write.
  reconcile::Plan release;
  for (model::EndpointSlice& slice : ours) {
    release.actions.push_back({reconcile::Operation::kDelete, std::move(slice)});
  }
  SW_RETURN_IF_ERROR(ApplyPlan(release, slices_client_, tracker_));
  if (!release.actions.empty()) {
    SW_LOG(kInfo, "{}: {} is not ours ({}={}): deleted the {} slice(s) we wrote", options_.name,
           key, model::kLabelEndpointControllerName,
           model::EndpointControllerName(service).value_or("<none>"), release.actions.size());
  }
  ForgetService(service.metadata.namespace_, service.metadata.name, key);
  return Status();
}

void Controller::Record(const model::Service& service, runtime::EventType type,
                        std::string_view reason, std::string_view message) {
  if (deps_.events == nullptr) return;
  model::ObjectReference ref;
  ref.kind = "Service";
  ref.api_version = "v1";
  ref.namespace_ = service.metadata.namespace_;
  ref.name = service.metadata.name;
  ref.uid = service.metadata.uid;
  ref.resource_version = service.metadata.resource_version;
  deps_.events->Event(ref, type, reason, message);
}

Status Controller::Sync(const std::string& key) {
  bool stale = false;
  Status status = SyncService(key, stale);
  if (metrics_ != nullptr)
    metrics_->RecordSync(status.ok() ? "success" : stale ? "stale" : "error");
  return status;
}

Status Controller::SyncService(const std::string& key, bool& stale) {
  const std::size_t slash = key.find('/');
  const std::string namespace_ = slash == std::string::npos ? std::string() : key.substr(0, slash);
  const std::string name = slash == std::string::npos ? key : key.substr(slash + 1);

  // (1) read
  const std::shared_ptr<const model::Service> service = services_.store().Get(namespace_, name);
  if (service == nullptr) {
    // The garbage collector removes the slices through their ownerReference.
    tracker_.DeleteService(namespace_, name);
    ForgetService(namespace_, name, key);
    if (metrics_ != nullptr) metrics_->RecordCache(metrics_cache_);
    return Status();
  }
  // (2) guard
  if (!Owns(*service)) return ReleaseService(*service, key);
  if (service->spec.type == "ExternalName" || !service->spec.selector.has_value()) {
    DropIncremental(key);
    return Status();
  }
  const model::StringMap& selector = *service->spec.selector;
  const reconcile::TopologyInput topology = topology_.Snapshot(key);
  reconcile::PlanOptions plan_options;
  plan_options.max_endpoints_per_slice = options_.max_endpoints_per_slice;
  plan_options.managed_by = options_.managed_by;
  plan_options.topology = &topology;
  const auto stale_error = [&] {
    stale = true;
    return Status(StatusCode::kUnavailable,
                  "the EndpointSlice cache is behind our own writes for " + key + "; retrying");
  };

  // A kept Service re-derives only the pods marked since its last sync; it is built from every
  // pod when it is new or what it was built from changed.
  IncrementalPtr state;
  bool build = false;
  const std::uint64_t node_generation = node_generation_.load();
  if (IncrementalEnabled()) {
    state = FindIncremental(key, /*create=*/false);
    build = state == nullptr || !state->builder || state->service_uid != service->metadata.uid ||
            state->service_resource_version != service->metadata.resource_version ||
            state->node_generation != node_generation;
    if (build) {
      // Marks are recorded from here on, before the pods are listed.
      state = FindIncremental(key, /*create=*/true);
      state->builder.reset();
    }
  }

  // The cached pods, in name order (not needed by a kept Service's marked-pods sync); they stay
  // alive for the rest of this sync.
  std::vector<std::shared_ptr<const model::CompactPod>> cached;
  if (state == nullptr || build) {
    // A workload's pods share one interned label set: the selector is matched once per run of
    // pods with the same set, not once per pod.
    const model::StringMap* last_labels = nullptr;
    bool last_matched = false;
    cached = pods_.store().ListNamespace(namespace_, [&](const model::CompactPod& p) {
      if (&p.labels() != last_labels) {
        last_labels = &p.labels();
        last_matched = labels::SelectorMatchesMap(selector, *last_labels);
      }
      return last_matched;
    });
    std::sort(cached.begin(), cached.end(),
              [](const auto& a, const auto& b) { return a->name() < b->name(); });
  }
  const auto min_pods = static_cast<std::size_t>(options_.incremental_min_pods);
  if (build && cached.size() < min_pods) {
    DropIncremental(key);
    state.reset();
  }

  if (state != nullptr) {
    RefreshSlices(*state, namespace_, name);
    if (tracker_.StaleSlices(*service, state->slices)) return stale_error();
    if (build) {
      state->service_uid = service->metadata.uid;
      state->service_resource_version = service->metadata.resource_version;
      state->node_generation = node_generation;
    }
    DeriveIncremental(*state, *service, cached, build);
    plan_options.existing_fingerprints = &state->fingerprints;
    plan_options.verified_runs = &state->verified;
    const reconcile::Plan plan =
        reconcile::PlanSlices(state->builder->desired(), state->slices, plan_options);
    if (state->builder->pod_count() < min_pods) DropIncremental(key);
    return ApplyAndRecord(*service, key, plan);
  }

  // Without a plugin that rewrites pods, the reconciler reads the cached pods in place. A plugin
  // gets each as a model::Pod, and the reconciler reads what it returns.
  std::vector<const model::CompactPod*> compact_ptrs;
  std::vector<model::Pod> pods;
  std::vector<const model::Pod*> pod_ptrs;
  if (!deps_.plugin.adapt_pod) {
    compact_ptrs.reserve(cached.size());
    for (const auto& pod : cached) compact_ptrs.push_back(pod.get());
  } else {
    for (const auto& pod : cached) {
      Result<std::optional<model::Pod>> adapted = deps_.plugin.adapt_pod(*service, pod->ToPod());
      if (!adapted.ok()) {
        // Only this pod is left out; the Service's other endpoints are still published.
        Record(*service, runtime::EventType::kWarning, deps_.plugin.adapt_failed_reason,
               "skipping Pod " + std::string(pod->name()) + ": " + adapted.status().ToString());
        continue;
      }
      if (adapted->has_value()) pods.push_back(std::move(**adapted));
    }
    // A plugin may rename, but the reconciler's input order is by name.
    std::sort(pods.begin(), pods.end(),
              [](const auto& a, const auto& b) { return a.metadata.name < b.metadata.name; });
    pod_ptrs.reserve(pods.size());
    for (const model::Pod& pod : pods) pod_ptrs.push_back(&pod);
  }

  const std::vector<model::EndpointSlice> existing = OurSlices(namespace_, name);
  if (tracker_.StaleSlices(*service, existing)) return stale_error();

  // (3) decide
  reconcile::ServiceSourceOptions source;
  source.managed_by = options_.managed_by;
  source.topology_mode_annotation = options_.topology_mode_annotation;
  source.trigger_time =
      deps_.plugin.adapt_pod
          ? trigger_times_.ComputeEndpointLastChangeTriggerTime(namespace_, *service, pod_ptrs)
          : trigger_times_.ComputeEndpointLastChangeTriggerTime(namespace_, *service, compact_ptrs);
  source.slice_capacity = static_cast<std::size_t>(options_.max_endpoints_per_slice);
  // Slices that already hold endpoints unchanged are planned without rebuilding them.
  source.stored_slices = existing;
  // The Node snapshots stay alive for the rest of this sync.
  NodeSnapshots node_snapshots;
  const auto find_node = [this, &node_snapshots](std::string_view node_name) {
    return FindNode(node_name, node_snapshots);
  };
  reconcile::DesiredEndpoints desired =
      deps_.plugin.adapt_pod
          ? reconcile::DesiredFromService(*service, pod_ptrs, find_node, source)
          : reconcile::DesiredFromService(*service, compact_ptrs, find_node, source);
  const reconcile::Plan plan = reconcile::PlanSlices(std::move(desired), existing, plan_options);
  return ApplyAndRecord(*service, key, plan);
}

Status Controller::ApplyAndRecord(const model::Service& service, const std::string& key,
                                  const reconcile::Plan& plan) {
  // (4) act
  ApplyCounts counts;
  Status applied = ApplyPlan(plan, slices_client_, tracker_, &counts);

  // (5) record
  if (metrics_ != nullptr) {
    metrics_->RecordPlan(plan, counts.created, counts.updated, counts.deleted);
  }
  for (const reconcile::Diagnostic& diagnostic : plan.diagnostics) {
    Record(service,
           diagnostic.severity == reconcile::Diagnostic::Severity::kWarning
               ? runtime::EventType::kWarning
               : runtime::EventType::kNormal,
           diagnostic.reason, diagnostic.message);
  }
  if (!applied.ok()) {
    Record(service, runtime::EventType::kWarning, "FailedToUpdateEndpointSlices",
           "Error updating Endpoint Slices for Service " + key + ": " + applied.ToString());
    return applied;
  }
  topology_.Apply(key, plan.topology);
  metrics_cache_.UpdateService(key, plan.stats.groups);
  metrics_cache_.UpdateTrafficDistribution(
      key, plan.stats.traffic_distribution_label.empty()
               ? std::nullopt
               : std::optional<std::string_view>(plan.stats.traffic_distribution_label));
  if (metrics_ != nullptr) metrics_->RecordCache(metrics_cache_);
  if (counts.created + counts.updated + counts.deleted > 0) {
    SW_VLOG(2, "endpointslice: synced {}: {} created, {} updated, {} deleted", key, counts.created,
            counts.updated, counts.deleted);
  }
  if (plan.NeedsRetry()) {
    return Status(StatusCode::kUnavailable, "a pod of " + key + " waits for its Node; retrying");
  }
  return Status();
}

}  // namespace slicewright::controllers::endpointslice

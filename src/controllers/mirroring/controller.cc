#include "controllers/mirroring/controller.h"

#include <algorithm>
#include <utility>

#include "slicewright/base/log.h"
#include "slicewright/model/endpoint_controller.h"
#include "slicewright/model/well_known.h"
#include "slicewright/reconcile/planner.h"
#include "slicewright/runtime/rate_limiter.h"

#include "controllers/common/apply_plan.h"
#include "controllers/common/slice_events.h"
#include "controllers/common/slice_labels.h"
#include "controllers/common/sync_loop.h"

namespace slicewright::controllers::mirroring {
namespace {

using SlicePtr = std::shared_ptr<const cache::CompactEndpointSlice>;

reconcile::MirroringOptions SourceOptions(const Options& options) {
  reconcile::MirroringOptions source;
  source.max_endpoints_per_subset = options.max_endpoints_per_subset;
  source.managed_by = options.managed_by;
  source.external_endpoint_controller = options.external_endpoint_controller;
  return source;
}

}  // namespace

Result<std::unique_ptr<Controller>> Controller::Create(Options options, Deps deps) {
  if (deps.client == nullptr || deps.informers == nullptr) {
    return Status(StatusCode::kInvalid,
                  "endpointslice mirroring controller: a client and informers are required");
  }
  SW_RETURN_IF_ERROR(CheckFlagRange("--mirroring-concurrent-service-endpoint-syncs",
                                    options.concurrent_syncs, 1, 50));
  SW_RETURN_IF_ERROR(CheckFlagRange("--mirroring-max-endpoints-per-subset",
                                    options.max_endpoints_per_subset, 1, 1000));
  if (options.batch_period.count() < 0) {
    return Status(StatusCode::kInvalid,
                  "--mirroring-endpointslice-updates-batch-period must not be negative");
  }
  if (options.managed_by.empty()) {
    return Status(StatusCode::kInvalid, "the managed-by value must not be empty");
  }
  Clock& clock = deps.clock != nullptr ? *deps.clock : SystemClock::Get();
  // Upstream mirroring backs off from 1 s to 100 s per key (not the default 1000 s), with the
  // usual 10 qps / burst 100 bucket over all keys (spec §12).
  runtime::DefaultRateLimiterOptions limits;
  limits.max_delay = std::chrono::seconds(100);
  Result<std::unique_ptr<runtime::RateLimiter>> limiter =
      runtime::DefaultControllerRateLimiter(clock, limits);
  if (!limiter.ok()) return limiter.status();
  runtime::WorkQueueOptions queue_options;
  queue_options.name = "endpoint_slice_mirroring";
  queue_options.clock = deps.clock;
  queue_options.metrics = deps.metrics;
  queue_options.rate_limiter = std::move(limiter).value();
  SW_ASSIGN_OR_RETURN(std::unique_ptr<SyncLoop> loop, SyncLoop::Create(std::move(queue_options)));
  std::unique_ptr<MirroringMetrics> metrics;
  if (deps.metrics != nullptr) {
    Result<std::unique_ptr<MirroringMetrics>> registered =
        MirroringMetrics::Register(*deps.metrics);
    if (!registered.ok()) return registered.status();
    metrics = std::move(registered).value();
  }
  std::unique_ptr<Controller> controller(
      new Controller(std::move(options), deps, std::move(loop), std::move(metrics)));
  controller->RegisterHandlers();
  return controller;
}

Controller::Controller(Options options, Deps deps, std::unique_ptr<SyncLoop> loop,
                       std::unique_ptr<MirroringMetrics> metrics)
    : options_(std::move(options)),
      deps_(deps),
      clock_(deps.clock != nullptr ? *deps.clock : SystemClock::Get()),
      source_options_(SourceOptions(options_)),
      loop_(std::move(loop)),
      slices_client_(*deps.client, client::EndpointSliceCodec()),
      services_(deps.informers->Services()),
      endpoints_(deps.informers->Endpoints()),
      slices_(deps.informers->EndpointSlices()),
      // Mirroring has no placeholders: an Endpoints with no addresses desires no slice.
      metrics_cache_(reconcile::MetricsCache::Options{options_.max_endpoints_per_subset, false}),
      metrics_(std::move(metrics)) {
  AddSliceByServiceIndex(slices_);
}

Controller::~Controller() { Stop(); }

void Controller::Start() {
  runtime::ControllerOptions options;
  options.name = "endpointslice-mirroring";
  options.thread_name = "mirror";
  options.workers = options_.concurrent_syncs;
  options.max_retries = options_.max_retries;
  options.metrics = deps_.metrics;
  loop_->Start(std::move(options), [this](const std::string& key) { return Sync(key); });
}

void Controller::Stop() { loop_->Stop(); }

// ---- Handlers (keys only, spec §12 "Events") ----

void Controller::RegisterHandlers() {
  cache::EventHandler<model::Endpoints> endpoints;
  endpoints.on_add = [this](const auto& object, bool) {
    if (reconcile::ShouldMirrorEndpoints(*object)) {
      Enqueue(cache::KeyOf(*object), Clock::Duration::zero());
    }
  };
  endpoints.on_update = [this](const auto& old_object, const auto& object) {
    // Either side: a newly skipped Endpoints still needs its mirrored slices deleted.
    if (reconcile::ShouldMirrorEndpoints(*old_object) ||
        reconcile::ShouldMirrorEndpoints(*object)) {
      Enqueue(cache::KeyOf(*object), Clock::Duration::zero());
    }
  };
  endpoints.on_delete = [this](const auto& object, bool) {
    if (reconcile::ShouldMirrorEndpoints(*object)) {
      Enqueue(cache::KeyOf(*object), Clock::Duration::zero());
    }
  };
  endpoints_.AddEventHandler(std::move(endpoints));

  cache::EventHandler<model::Service> services;
  services.on_add = [this](const auto& service, bool) {
    if (!service->spec.selector.has_value()) {
      Enqueue(cache::KeyOf(*service), Clock::Duration::zero());
    }
  };
  services.on_update = [this](const auto& old_service, const auto& service) {
    OnServiceUpdate(*old_service, *service);
  };
  services.on_delete = [this](const auto& service, bool) {
    if (!service->spec.selector.has_value()) {
      Enqueue(cache::KeyOf(*service), Clock::Duration::zero());
    }
  };
  services_.AddEventHandler(std::move(services));

  cache::EventHandler<cache::CompactEndpointSlice> slices;
  slices.on_add = [this](const auto& slice, bool) { OnSliceChange(nullptr, slice->metadata); };
  slices.on_update = [this](const auto& old_slice, const auto& slice) {
    OnSliceChange(&old_slice->metadata, slice->metadata);
  };
  slices.on_delete = [this](const auto& slice, bool) { OnSliceDelete(slice->metadata); };
  slices_.AddEventHandler(std::move(slices));
}

void Controller::Enqueue(const std::string& key, Clock::Duration delay) {
  loop_->Enqueue(key, delay);
}

void Controller::OnServiceUpdate(const model::Service& old_service, const model::Service& service) {
  const bool selector_flipped =
      old_service.spec.selector.has_value() != service.spec.selector.has_value();
  // KEP-4770: gaining the label looks like a deletion to upstream's filtered informer, losing it
  // like an add; either matters only while the Service has no selector.
  const bool delegation_flipped =
      IsDelegated(old_service) != IsDelegated(service) && !service.spec.selector.has_value();
  if (selector_flipped || delegation_flipped) {
    Enqueue(cache::KeyOf(service), Clock::Duration::zero());
  }
}

void Controller::OnSliceChange(const model::ObjectMeta* old_slice, const model::ObjectMeta& slice) {
  for (const std::string& key :
       KeysForSliceChange(old_slice, slice, options_.managed_by, tracker_)) {
    Enqueue(key, options_.batch_period);
  }
}

void Controller::OnSliceDelete(const model::ObjectMeta& slice) {
  // Someone else deleted a slice we wrote: mirror it again.
  Enqueue(KeyForSliceDeletion(slice, options_.managed_by, tracker_), options_.batch_period);
}

// ---- Sync ----

bool Controller::IsDelegated(const model::Service& service) const {
  return model::LeftToAnotherController(service, options_.external_endpoint_controller);
}

std::vector<model::EndpointSlice> Controller::MirroredSlices(const std::string& namespace_,
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

Status Controller::DeleteMirrored(const std::string& namespace_, const std::string& name,
                                  const std::string& key, reconcile::MirrorDecision why) {
  const std::vector<model::EndpointSlice> mirrored = MirroredSlices(namespace_, name);
  // Forgotten before the deletes, as upstream's deleteMirroredSlices does: the deletes then leave
  // their expectations, so a sync that comes back (the label removed again) while the slice cache
  // still holds the deleted slices sees a stale cache and retries, instead of taking the deleted
  // slices for current ones and writing nothing. Their delete events are expected and requeue
  // nothing.
  tracker_.DeleteService(namespace_, name);
  if (!mirrored.empty()) {
    ApplyCounts counts;
    Status applied =
        ApplyPlan(reconcile::PlanDeleteMirrored(mirrored), slices_client_, tracker_, &counts);
    if (!applied.ok()) {
      const auto failed = static_cast<std::int64_t>(mirrored.size()) - counts.deleted;
      applied.WithContext("error(s) deleting " + std::to_string(failed) + "/" +
                          std::to_string(mirrored.size()) + " EndpointSlices for " + key +
                          " Endpoints");
      return applied;
    }
    if (metrics_ != nullptr) metrics_->RecordDeletes(counts.deleted);
    if (why == reconcile::MirrorDecision::kServiceDelegated) {
      SW_LOG(kInfo,
             "endpointslice-mirroring: Service {} is labelled {}: deleted the {} slice(s) "
             "we mirrored",
             key, model::kLabelEndpointControllerName, mirrored.size());
    } else {
      SW_VLOG(2, "endpointslice-mirroring: {}: {}: deleted {} mirrored slice(s)", key,
              reconcile::MirrorDecisionName(why), mirrored.size());
    }
  }
  metrics_cache_.DeleteService(key);
  if (metrics_ != nullptr) metrics_->RecordCache(metrics_cache_);
  return Status();
}

void Controller::Record(const model::Endpoints& endpoints,
                        const reconcile::Diagnostic& diagnostic) const {
  if (deps_.events == nullptr) return;
  model::ObjectReference ref;
  ref.kind = "Endpoints";
  ref.api_version = "v1";
  ref.namespace_ = endpoints.metadata.namespace_;
  ref.name = endpoints.metadata.name;
  ref.uid = endpoints.metadata.uid;
  ref.resource_version = endpoints.metadata.resource_version;
  deps_.events->Event(ref,
                      diagnostic.severity == reconcile::Diagnostic::Severity::kWarning
                          ? runtime::EventType::kWarning
                          : runtime::EventType::kNormal,
                      diagnostic.reason, diagnostic.message);
}

Status Controller::Sync(const std::string& key) {
  const Clock::TimePoint start = clock_.Now();
  Status status = SyncOnce(key);
  if (metrics_ != nullptr) metrics_->RecordSyncDuration(clock_.Now() - start);
  return status;
}

Status Controller::SyncOnce(const std::string& key) {
  const std::size_t slash = key.find('/');
  const std::string namespace_ = slash == std::string::npos ? std::string() : key.substr(0, slash);
  const std::string name = slash == std::string::npos ? key : key.substr(slash + 1);

  // (1) read
  const std::shared_ptr<const model::Endpoints> endpoints =
      endpoints_.store().Get(namespace_, name);
  const std::shared_ptr<const model::Service> service = services_.store().Get(namespace_, name);

  // (2) guard: anything but a mirrored pair (including KEP-4770's label) deletes what we mirrored.
  const reconcile::MirrorDecision decision =
      reconcile::DecideMirroring(endpoints.get(), service.get(), source_options_);
  if (decision != reconcile::MirrorDecision::kMirror) {
    return DeleteMirrored(namespace_, name, key, decision);
  }
  const std::vector<model::EndpointSlice> existing = MirroredSlices(namespace_, name);
  if (tracker_.StaleSlices(*service, existing)) {
    return Status(StatusCode::kUnavailable,
                  "the EndpointSlice cache is behind our own writes for " + key + "; retrying");
  }

  // (3) decide
  reconcile::MirroringStats stats;
  reconcile::DesiredEndpoints desired =
      reconcile::DesiredFromEndpoints(*endpoints, *service, source_options_, &stats);
  const reconcile::PlanOptions plan_options = reconcile::MirroringPlanOptions(source_options_);
  const reconcile::Plan plan = reconcile::PlanSlices(std::move(desired), existing, plan_options);

  // (4) act
  ApplyCounts counts;
  Status applied = ApplyPlan(plan, slices_client_, tracker_, &counts);

  // (5) record: upstream's events go to the Endpoints.
  for (const reconcile::Diagnostic& diagnostic : plan.diagnostics) Record(*endpoints, diagnostic);
  if (!applied.ok()) return applied;
  metrics_cache_.UpdateService(key, plan.stats.groups);
  if (metrics_ != nullptr) {
    metrics_->RecordPlan(plan, reconcile::CountUpdatedEndpoints(plan, existing), stats,
                         counts.created, counts.updated, counts.deleted);
    metrics_->RecordCache(metrics_cache_);
  }
  if (counts.created + counts.updated + counts.deleted > 0) {
    SW_VLOG(2,
            "endpointslice-mirroring: synced {}: {} created, {} updated, {} deleted, {} of {} "
            "addresses skipped",
            key, counts.created, counts.updated, counts.deleted, stats.skipped(), stats.addresses);
  }
  return Status();
}

}  // namespace slicewright::controllers::mirroring

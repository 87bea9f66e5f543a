#include "controllers/mcs/agent.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <functional>
#include <map>
#include <set>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "slicewright/base/log.h"
#include "slicewright/codec/json.h"
#include "slicewright/mcs/cluster_families.h"
#include "slicewright/mcs/conditions.h"
#include "slicewright/mcs/export.h"
#include "slicewright/mcs/identity.h"
#include "slicewright/model/well_known.h"
#include "slicewright/reconcile/mcs_source.h"
#include "slicewright/reconcile/planner.h"

#include "controllers/common/apply_plan.h"
#include "controllers/common/slice_index.h"
#include "controllers/mcs/kinds.h"
#include "dns/server.h"

namespace slicewright::controllers::mcs {
namespace {

using ::slicewright::mcs::Aggregate;
using ::slicewright::mcs::Aggregation;

// The slice count a record's kAnnotationSlicesPublished gives; 0 for a value without one (an
// older agent's "true").
std::size_t PublishedSliceCount(const model::ServiceExportRecord& record) {
  auto it = record.metadata.annotations.find(std::string(kAnnotationSlicesPublished));
  if (it == record.metadata.annotations.end()) return 0;
  std::size_t count = 0;
  const auto [end, error] =
      std::from_chars(it->second.data(), it->second.data() + it->second.size(), count);
  return error == std::errc() && end == it->second.data() + it->second.size() ? count : 0;
}

// A new import (no status yet) whose MCS EndpointSlices are not complete yet (typically: the
// exporter's record is here, its slices a moment later) writes no status for this long, rather
// than endpointSliceObjects Absent just before Present: one write fewer per import of a new
// export, and no Absent that a consumer might act on. Past it (an exporter failing to write its
// slices, say) the status is written with Absent as before (spec §8.4).
constexpr Clock::Duration kPublishWait = std::chrono::seconds(5);

// The index of the broker's records by the service they export: "namespace/name".
constexpr std::string_view kRecordsByService = "service";
// This cluster's slices by kubernetes.io/service-name ("namespace/name": what an export
// publishes) are the shared kSliceByServiceIndex (common/slice_index.h); by
// multicluster.kubernetes.io/service-name (what an import wrote) this one. The broker's slices by
// the service they carry ("namespace/name" from their labels).
constexpr std::string_view kLocalByImport = "mcs-import";
constexpr std::string_view kBrokerByService = "mcs-service";

std::string LabelOf(const model::ObjectMeta& meta, std::string_view key) {
  auto it = meta.labels.find(key);
  return it == meta.labels.end() ? std::string() : it->second;
}

bool ManagedByMcs(const model::ObjectMeta& meta) {
  return LabelOf(meta, model::kLabelManagedBy) == model::kManagedByMcs;
}

// "namespace/name" of the service a broker slice carries.
std::string BrokerSliceService(const model::ObjectMeta& meta) {
  return LabelOf(meta, model::kLabelMcsServiceNamespace) + "/" +
         LabelOf(meta, model::kLabelMcsServiceName);
}

// A Service standing for an MCS slice owner in the stale-cache tracker (see mcs_source.h).
model::Service TrackerOwner(std::string namespace_, std::string name, std::string uid) {
  model::Service owner;
  owner.metadata.namespace_ = std::move(namespace_);
  owner.metadata.name = std::move(name);
  owner.metadata.uid = std::move(uid);
  return owner;
}

std::pair<std::string, std::string> SplitKey(const std::string& key) {
  const std::size_t slash = key.find('/');
  if (slash == std::string::npos) return {"", key};
  return {key.substr(0, slash), key.substr(slash + 1)};
}

model::Time WallNow() {
  return model::Time{std::chrono::duration_cast<std::chrono::nanoseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count()};
}

bool IsNotFound(const Status& status) { return status.code() == StatusCode::kNotFound; }

// A create answered AlreadyExists: our cache has not shown what an earlier sync created yet (the
// key was queued again meanwhile). A conflict, retried once the cache has it, not terminal.
// A create in a namespace that no longer exists: kube-apiserver answers NotFound naming the
// namespace, not the object.
bool NamespaceGone(const Status& status, std::string_view ns) {
  return status.code() == StatusCode::kNotFound &&
         status.message() == "namespaces \"" + std::string(ns) + "\" not found";
}

// An update answered NotFound: the object was deleted after our cache read it. A stale read, like a
// conflict: retried, the sync finds it gone (or made again) once the informer has seen the delete;
// not a refusal to report or retry slowly (ApplyPlan does the same for slices).
Status GoneIsStale(const Status& status) {
  if (status.code() != StatusCode::kNotFound) return status;
  return Status(StatusCode::kConflict, "deleted since our cache read it: " + status.ToString());
}

Status CacheBehind(const Status& status) {
  if (status.code() != StatusCode::kAlreadyExists) return status;
  return Status(StatusCode::kConflict, "the cache is behind our create: " + status.ToString());
}

// Sets `condition` (stamped with the object's generation) into `conditions`.
void Apply(std::vector<model::Condition>& conditions, model::Condition condition,
           std::int64_t generation, model::Time now) {
  condition.observed_generation = generation;
  ::slicewright::mcs::SetCondition(conditions, std::move(condition), now);
}

// The derived Service's addresses in the import's family order, one per family (spec §6).
std::vector<std::string> ClusterSetIps(const model::Service& derived,
                                       const std::vector<std::string>& families) {
  std::vector<std::string> ips;
  const std::vector<std::string>& source =
      derived.spec.cluster_ips.empty() && !derived.spec.cluster_ip.empty()
          ? std::vector<std::string>{derived.spec.cluster_ip}
          : derived.spec.cluster_ips;
  for (const std::string& family : families) {
    const bool v6 = family == model::kIPFamilyIPv6;
    for (const std::string& ip : source) {
      if ((ip.find(':') != std::string::npos) == v6) {
        ips.push_back(ip);
        break;
      }
    }
  }
  return ips;
}

// One dry-run create of `probe` in "default": the families of the answer, or why not. A transport
// failure is returned as is (kUnavailable...), a refusal as the server's Status.
Result<std::vector<std::string>> ProbeClusterIpFamilies(client::RestClient& client,
                                                        const model::Service& probe) {
  client::Request request;
  request.method = "POST";
  request.target = "/api/v1/namespaces/default/services?dryRun=All";
  request.body = codec::EncodeService(probe);
  request.content_type = "application/json";
  SW_ASSIGN_OR_RETURN(client::Response response, client.transport().Do(request));
  if (response.status < 200 || response.status >= 300) {
    return codec::DecodeStatusResponse(response.body, response.status);
  }
  SW_ASSIGN_OR_RETURN(model::Service answered, codec::DecodeService(response.body));
  return ::slicewright::mcs::ClusterIpFamiliesFromProbe(answered);
}

// The IP families this cluster gives Services, asked of its API server (no flag given): a
// dry-run create of a ClusterIP PreferDualStack Service with a selector in "default" gets a
// ClusterIP of every family the cluster serves, primary first, and stores and allocates nothing.
// A server that refuses it (a full service range) is asked for a headless one with a selector,
// which allocates nothing and gets the same families. Never a selector-less headless one:
// kube-apiserver gives that both families on any cluster (issue #30). A server that refuses both
// (no "default" namespace, no dry run, a policy) leaves them unknown, with a warning, as before
// this existed; a transport failure or a retryable answer (429, 5xx) fails the agent's creation
// like its other start-up reads.
Result<std::vector<std::string>> LearnClusterIpFamilies(client::RestClient& client) {
  Result<std::vector<std::string>> families =
      ProbeClusterIpFamilies(client, ::slicewright::mcs::IpFamilyProbeService("default"));
  if (families.ok()) return families;
  const Status cluster_ip = families.status();
  families = ProbeClusterIpFamilies(
      client, ::slicewright::mcs::IpFamilyProbeService("default", /*headless=*/true));
  if (families.ok()) {
    SW_LOG(kInfo,
           "mcs agent: the API server refused a dry-run ClusterIP Service ({}); this cluster's "
           "IP families come from a headless one",
           cluster_ip.ToString());
    return families;
  }
  if (IsRetryable(families.status())) {
    return Status(families.status().code(), "mcs agent: learning this cluster's IP families: " +
                                                families.status().ToString());
  }
  SW_LOG(kWarning,
         "mcs agent: cannot learn this cluster's IP families from its API server ({}; {}); "
         "IPFamilyNotSupported is not reported until --mcs-cluster-ip-families is given",
         cluster_ip.ToString(), families.status().ToString());
  return std::vector<std::string>{};
}

}  // namespace

Status ValidateOptions(const Options& options) {
  SW_RETURN_IF_ERROR(CheckFlagRange("--mcs-concurrent-syncs", options.concurrent_syncs, 1, 50));
  if (options.lease_duration < std::chrono::seconds(3) ||
      options.lease_duration.count() % 1000 != 0) {
    return Status(StatusCode::kInvalid, "--mcs-lease-duration must be whole seconds, at least 3s");
  }
  if (!(options.broker_api_qps > 0)) {
    return Status(StatusCode::kInvalid, "--broker-api-qps must be positive");
  }
  SW_RETURN_IF_ERROR(CheckFlagRange("--broker-api-burst", options.broker_api_burst, 1, 1'000'000));
  if (options.broker_namespace.empty()) {
    return Status(StatusCode::kInvalid, "--broker-namespace must not be empty");
  }
  SW_RETURN_IF_ERROR(
      ::slicewright::mcs::ParseEndpointSliceSyncPolicy(options.endpointslice_sync).status());
  SW_RETURN_IF_ERROR(
      ::slicewright::mcs::ParseClusterIpFamilies(options.cluster_ip_families).status());
  SW_RETURN_IF_ERROR(CheckFlagRange("--mcs-dns-ttl", options.dns_ttl, 0, 3600));
  if (!options.dns_address.empty()) {
    if (const Status address = dns::CheckAddress(options.dns_address); !address.ok()) {
      return Status(StatusCode::kInvalid, "--mcs-dns-address: " + address.ToString());
    }
  }
  if (!options.cluster_id.empty()) {
    if (const Status valid = ::slicewright::mcs::ValidateClusterId(options.cluster_id);
        !valid.ok()) {
      return Status(StatusCode::kInvalid, "--cluster-id: " + valid.ToString());
    }
  }
  return Status();
}

Result<std::unique_ptr<Agent>> Agent::Create(Options options, Deps deps) {
  if (deps.client == nullptr || deps.informers == nullptr || deps.broker == nullptr ||
      deps.broker_informers == nullptr) {
    return Status(StatusCode::kInvalid,
                  "mcs agent: clients and informers of this cluster and "
                  "the broker are required");
  }
  SW_RETURN_IF_ERROR(ValidateOptions(options));
  ::slicewright::mcs::ImportingCluster here;
  SW_ASSIGN_OR_RETURN(here.policy,
                      ::slicewright::mcs::ParseEndpointSliceSyncPolicy(options.endpointslice_sync));
  // This cluster's id: its ClusterProperties first (a cluster without the CRD has none).
  client::TypedClient<model::ClusterProperty> properties(*deps.client, ClusterPropertyCodec());
  std::vector<model::ClusterProperty> listed;
  if (Result<codec::ListPage<model::ClusterProperty>> page = properties.ListAll("", {});
      page.ok()) {
    listed = std::move(page->items);
  } else if (!IsNotFound(page.status())) {
    return Status(page.status().code(),
                  "mcs agent: reading ClusterProperties: " + page.status().ToString());
  }
  SW_ASSIGN_OR_RETURN(here.cluster_id,
                      ::slicewright::mcs::ResolveClusterId(listed, options.cluster_id));
  SW_ASSIGN_OR_RETURN(here.ip_families,
                      ::slicewright::mcs::ParseClusterIpFamilies(options.cluster_ip_families));
  std::string_view families_from = "--mcs-cluster-ip-families";
  if (here.ip_families.empty()) {
    SW_ASSIGN_OR_RETURN(here.ip_families, LearnClusterIpFamilies(*deps.client));
    families_from = here.ip_families.empty() ? "unknown: none filtered out" : "the API server";
  }

  runtime::WorkQueueOptions export_queue;
  export_queue.name = "mcs_export";
  export_queue.metrics = deps.metrics;
  SW_ASSIGN_OR_RETURN(std::unique_ptr<SyncLoop> exports_loop,
                      SyncLoop::Create(std::move(export_queue)));
  runtime::WorkQueueOptions import_queue;
  import_queue.name = "mcs_import";
  import_queue.metrics = deps.metrics;
  SW_ASSIGN_OR_RETURN(std::unique_ptr<SyncLoop> imports_loop,
                      SyncLoop::Create(std::move(import_queue)));
  std::unique_ptr<Agent> agent(new Agent(std::move(options), deps, std::move(here),
                                         std::move(exports_loop), std::move(imports_loop)));
  agent->RegisterHandlers();
  // Liveness (spec §7 ES9): our Lease in the broker, the others' judged. Taking our Lease now
  // refuses an id another live member holds.
  LivenessOptions liveness_options;
  liveness_options.cluster_id = agent->here_.cluster_id;
  liveness_options.broker_namespace = agent->options_.broker_namespace;
  liveness_options.lease_duration = agent->options_.lease_duration;
  Agent* raw = agent.get();
  liveness_options.on_change = [raw](const std::string& cluster, bool live) {
    SW_LOG(kInfo, "mcs agent: cluster {} is {}", cluster, live ? "live" : "expired");
    // Every service that cluster exports is aggregated again, with or without it.
    for (const auto& record : raw->records_.store().List()) {
      if (record->spec.cluster == cluster) {
        raw->imports_loop_->Enqueue(record->spec.namespace_ + "/" + record->spec.name,
                                    Clock::Duration::zero());
        raw->exports_loop_->Enqueue(record->spec.namespace_ + "/" + record->spec.name,
                                    Clock::Duration::zero());
      }
    }
  };
  // The broker is back after an outage: every key now, not when its retry's backoff ends.
  liveness_options.on_resumed = [raw] {
    SW_LOG(kInfo, "mcs agent: the broker answers again; syncing every service");
    raw->EnqueueAll();
  };
  LivenessDeps liveness_deps;
  liveness_deps.broker = deps.broker;
  liveness_deps.broker_informers = deps.broker_informers;
  SW_ASSIGN_OR_RETURN(agent->liveness_,
                      ClusterLiveness::Create(std::move(liveness_options), liveness_deps));
  // A previous run's Lease (this agent restarted within the TTL) is waited out; a live holder of
  // our id is refused. A broker that does not answer is not fatal: Start() runs once the broker's
  // caches synced, and the liveness thread keeps trying from there.
  if (const Status acquired = agent->liveness_->AcquireOrWaitOut(deps.stop); !acquired.ok()) {
    if (!IsRetryable(acquired)) return acquired;
    SW_LOG(kWarning, "mcs agent: {}; the Lease is taken once the broker answers",
           acquired.ToString());
  }
  // Renewed from now on, not from Start(): the broker's informers may take long to sync (up to
  // 30 s of backoff after a broker outage), and meanwhile the other members must not expire us.
  SW_RETURN_IF_ERROR(agent->liveness_->StartRenewing());
  SW_LOG(kInfo,
         "mcs agent: cluster id {}, broker namespace {}, EndpointSlice policy {}, IP families "
         "{} ({})",
         agent->here_.cluster_id, agent->options_.broker_namespace,
         agent->options_.endpointslice_sync, fmt::join(agent->here_.ip_families, ","),
         families_from);
  return agent;
}

Agent::Agent(Options options, Deps deps, ::slicewright::mcs::ImportingCluster here,
             std::unique_ptr<SyncLoop> exports_loop, std::unique_ptr<SyncLoop> imports_loop)
    : options_(std::move(options)),
      deps_(deps),
      here_(std::move(here)),
      exports_(deps.informers->For(ServiceExportKind())),
      imports_(deps.informers->For(ServiceImportKind())),
      services_(deps.informers->Services()),
      namespaces_(deps.informers->Namespaces()),
      records_(deps.broker_informers->For(
          ServiceExportRecordKind(),
          {.namespace_ = options_.broker_namespace, .label_selector = {}, .field_selector = {}})),
      local_slices_(deps.informers->EndpointSlices()),
      broker_slices_(deps.broker_informers->EndpointSlices(cache::InformerFilter{
          .namespace_ = options_.broker_namespace,
          .label_selector =
              std::string(model::kLabelManagedBy) + "=" + std::string(model::kManagedByMcs),
          .field_selector = {}})),
      export_client_(*deps.client, ServiceExportCodec()),
      import_client_(*deps.client, ServiceImportCodec()),
      service_client_(*deps.client, client::ServiceCodec()),
      record_client_(*deps.broker, ServiceExportRecordCodec()),
      local_slice_client_(*deps.client, client::EndpointSliceCodec()),
      broker_slice_client_(*deps.broker, client::EndpointSliceCodec()),
      broker_tracker_(reconcile::BrokerSliceOwnerKey),
      import_tracker_(reconcile::ImportedSliceOwnerKey),
      exports_loop_(std::move(exports_loop)),
      imports_loop_(std::move(imports_loop)) {}

Agent::~Agent() { Stop(); }

void Agent::RegisterHandlers() {
  const auto both = [this](const std::string& key) {
    exports_loop_->Enqueue(key, Clock::Duration::zero());
    imports_loop_->Enqueue(key, Clock::Duration::zero());
  };
  records_.AddIndex(std::string(kRecordsByService), [](const model::ServiceExportRecord& record) {
    return std::vector<std::string>{record.spec.namespace_ + "/" + record.spec.name};
  });
  // A record of any cluster changes this cluster's import and its exports' Conflict condition.
  cache::EventHandler<model::ServiceExportRecord> records;
  records.on_add = [both](const auto& record, bool) {
    both(record->spec.namespace_ + "/" + record->spec.name);
  };
  records.on_update = [both](const auto& old_record, const auto& record) {
    both(old_record->spec.namespace_ + "/" + old_record->spec.name);
    both(record->spec.namespace_ + "/" + record->spec.name);
  };
  records.on_delete = [both](const auto& record, bool) {
    both(record->spec.namespace_ + "/" + record->spec.name);
  };
  records_.AddEventHandler(std::move(records));

  const auto enqueue_export = [this](const std::string& key) {
    exports_loop_->Enqueue(key, Clock::Duration::zero());
  };
  cache::EventHandler<model::ServiceExport> exports;
  exports.on_add = [enqueue_export](const auto& e, bool) { enqueue_export(cache::KeyOf(*e)); };
  exports.on_update = [enqueue_export](const auto&, const auto& e) {
    enqueue_export(cache::KeyOf(*e));
  };
  exports.on_delete = [enqueue_export](const auto& e, bool) { enqueue_export(cache::KeyOf(*e)); };
  exports_.AddEventHandler(std::move(exports));

  // An exported Service's changes reach its record; a derived Service's reach its import.
  cache::EventHandler<model::Service> services;
  const auto service_changed = [this, enqueue_export](const model::Service& service) {
    const std::string key = cache::KeyOf(service);
    if (exports_.store().Get(service.metadata.namespace_, service.metadata.name) != nullptr) {
      enqueue_export(key);
    }
    for (const model::OwnerReference& owner : service.metadata.owner_references) {
      if (owner.kind == model::kKindServiceImport) {
        imports_loop_->Enqueue(service.metadata.namespace_ + "/" + owner.name,
                               Clock::Duration::zero());
      }
    }
  };
  services.on_add = [service_changed](const auto& s, bool) { service_changed(*s); };
  services.on_update = [service_changed](const auto&, const auto& s) { service_changed(*s); };
  services.on_delete = [service_changed](const auto& s, bool) { service_changed(*s); };
  services_.AddEventHandler(std::move(services));

  // An import changed by someone else is put back; one deleted is written again.
  cache::EventHandler<model::ServiceImport> imports;
  imports.on_update = [this](const auto&, const auto& i) {
    imports_loop_->Enqueue(cache::KeyOf(*i), Clock::Duration::zero());
  };
  imports.on_delete = [this](const auto& i, bool) {
    ForgetFirstSync(i->metadata.uid);
    imports_loop_->Enqueue(cache::KeyOf(*i), Clock::Duration::zero());
  };
  imports_.AddEventHandler(std::move(imports));

  // Slices: a Service's own slices change what its export publishes; the broker's slices what
  // every import holds; our imported slices changed by someone else are put back.
  AddSliceByServiceIndex(local_slices_);
  local_slices_.AddIndex(std::string(kLocalByImport),
                         cache::LabelValueIndex<cache::CompactEndpointSlice>(
                             std::string(model::kLabelMcsServiceName)));
  broker_slices_.AddIndex(std::string(kBrokerByService),
                          [](const cache::CompactEndpointSlice& slice) {
                            return std::vector<std::string>{BrokerSliceService(slice.metadata)};
                          });
  const auto local_slice_changed = [this, enqueue_export](const model::ObjectMeta& meta) {
    if (ManagedByMcs(meta)) {
      imports_loop_->Enqueue(meta.namespace_ + "/" + LabelOf(meta, model::kLabelMcsServiceName),
                             Clock::Duration::zero());
      return;
    }
    const std::string service = LabelOf(meta, model::kLabelServiceName);
    if (!service.empty() && exports_.store().Get(meta.namespace_, service) != nullptr) {
      enqueue_export(meta.namespace_ + "/" + service);
    }
  };
  cache::EventHandler<cache::CompactEndpointSlice> local_slices;
  local_slices.on_add = [local_slice_changed](const auto& s, bool) {
    local_slice_changed(s->metadata);
  };
  local_slices.on_update = [local_slice_changed](const auto&, const auto& s) {
    local_slice_changed(s->metadata);
  };
  local_slices.on_delete = [this, local_slice_changed](const auto& s, bool) {
    if (ManagedByMcs(s->metadata)) import_tracker_.HandleDeletion(s->metadata);
    local_slice_changed(s->metadata);
  };
  local_slices_.AddEventHandler(std::move(local_slices));
  cache::EventHandler<cache::CompactEndpointSlice> broker_slices;
  const auto broker_slice_changed = [this, both](const model::ObjectMeta& meta) {
    if (LabelOf(meta, model::kLabelMcsSourceCluster) == here_.cluster_id) {
      both(BrokerSliceService(meta));
    } else {
      imports_loop_->Enqueue(BrokerSliceService(meta), Clock::Duration::zero());
    }
  };
  broker_slices.on_add = [broker_slice_changed](const auto& s, bool) {
    broker_slice_changed(s->metadata);
  };
  broker_slices.on_update = [broker_slice_changed](const auto&, const auto& s) {
    broker_slice_changed(s->metadata);
  };
  broker_slices.on_delete = [this, broker_slice_changed](const auto& s, bool) {
    broker_tracker_.HandleDeletion(s->metadata);
    broker_slice_changed(s->metadata);
  };
  broker_slices_.AddEventHandler(std::move(broker_slices));

  // A namespace that appears gets the imports of its services (spec §4 I1).
  cache::EventHandler<model::Namespace> namespaces;
  namespaces.on_add = [this](const auto& ns, bool in_initial_list) {
    if (in_initial_list) return;
    for (const auto& record : records_.store().List()) {
      if (record->spec.namespace_ == ns->metadata.name) {
        imports_loop_->Enqueue(record->spec.namespace_ + "/" + record->spec.name,
                               Clock::Duration::zero());
      }
    }
  };
  namespaces_.AddEventHandler(std::move(namespaces));
}

void Agent::Start() {
  // What our previous run imported, in status.clusters or as MCS slices (a run stopped between
  // writing a cluster's slices and the status): those clusters were live for it.
  std::vector<std::string> previously_live;
  for (const auto& i : imports_.store().List()) {
    for (const auto& cluster : i->status.clusters) previously_live.push_back(cluster);
  }
  for (const auto& slice : local_slices_.store().List()) {
    const std::string source = LabelOf(slice->metadata, model::kLabelMcsSourceCluster);
    if (ManagedByMcs(slice->metadata) && !source.empty()) previously_live.push_back(source);
  }
  if (const Status started = liveness_->Start(previously_live); !started.ok()) {
    SW_LOG(kError, "mcs agent: liveness: {}", started.ToString());
  }
  runtime::ControllerOptions export_options;
  export_options.name = "mcs-export";
  export_options.thread_name = "mcs-ex";
  export_options.workers = options_.concurrent_syncs;
  export_options.max_retries = options_.max_retries;
  export_options.slow_retry = options_.slow_retry;
  export_options.metrics = deps_.metrics;
  runtime::ControllerOptions import_options = export_options;  // before export_options is moved
  import_options.name = "mcs-import";
  import_options.thread_name = "mcs-im";
  exports_loop_->Start(std::move(export_options),
                       [this](const std::string& key) { return SyncExport(key); });
  imports_loop_->Start(std::move(import_options),
                       [this](const std::string& key) { return SyncImport(key); });
  EnqueueAll();
}

void Agent::EnqueueAll() {
  // Every key there is something about: exports here, records of ours left from a run that missed
  // their export's deletion, every service in the broker, imports that may be orphans.
  for (const auto& e : exports_.store().List()) {
    exports_loop_->Enqueue(cache::KeyOf(*e), Clock::Duration::zero());
  }
  for (const auto& record : records_.store().List()) {
    const std::string key = record->spec.namespace_ + "/" + record->spec.name;
    if (record->spec.cluster == here_.cluster_id) {
      exports_loop_->Enqueue(key, Clock::Duration::zero());
    }
    imports_loop_->Enqueue(key, Clock::Duration::zero());
  }
  for (const auto& i : imports_.store().List()) {
    imports_loop_->Enqueue(cache::KeyOf(*i), Clock::Duration::zero());
  }
}

void Agent::Stop() {
  if (liveness_ != nullptr) liveness_->Stop();
  exports_loop_->Stop();
  imports_loop_->Stop();
}

std::vector<model::ServiceExportRecord> Agent::RecordsFor(const std::string& key) const {
  std::vector<model::ServiceExportRecord> valid;
  records_.store().ForEachByIndex(kRecordsByService, key, [&](const auto& record) {
    if (record->metadata.deletion_timestamp) return;
    const Status checked = ::slicewright::mcs::ValidateExportRecord(*record);
    if (!checked.ok()) {
      // A malformed record (another cluster's bug, or a hand edit) is left out, not fatal.
      SW_LOG(kWarning, "mcs agent: broker record {}/{} ignored: {}", record->metadata.namespace_,
             record->metadata.name, checked.ToString());
      return;
    }
    valid.push_back(*record);
  });
  return valid;
}

bool Agent::IsLive(const std::string& cluster) const {
  return liveness_ == nullptr || liveness_->IsLive(cluster);
}

// ---- Export side ----

Status Agent::SyncExport(const std::string& key) {
  const auto [ns, name] = SplitKey(key);
  const std::string record_name = ::slicewright::mcs::ExportRecordName(ns, name, here_.cluster_id);
  const auto existing = records_.store().Get(options_.broker_namespace, record_name);
  const auto service_export = exports_.store().Get(ns, name);
  if (service_export == nullptr || service_export->metadata.deletion_timestamp) {
    // Unexported (spec §3 E2): withdraw our record; the importers delete what it gave them.
    if (existing != nullptr) {
      const Status deleted = record_client_.Delete(options_.broker_namespace, record_name);
      if (!deleted.ok() && !IsNotFound(deleted)) return deleted;
      SW_LOG(kInfo, "mcs agent: {} unexported: deleted broker record {}", key, record_name);
    }
    return DeleteBrokerSlices(key);
  }
  const auto service = services_.store().Get(ns, name);
  ::slicewright::mcs::ExportValidation validation = ::slicewright::mcs::ValidateExport(
      *service_export, service.get(), here_.cluster_id, options_.broker_namespace);
  if (deps_.events != nullptr) {
    for (const std::string& warning : validation.warnings) {
      model::ObjectReference ref;
      ref.kind = std::string(model::kKindServiceExport);
      ref.api_version = std::string(model::kMcsApiVersion);
      ref.namespace_ = ns;
      ref.name = name;
      ref.uid = service_export->metadata.uid;
      deps_.events->Event(ref, runtime::EventType::kWarning, "InvalidServiceExport", warning);
    }
  }

  // Publish (or withdraw) the record.
  Status publish;
  Status withdraw;
  std::optional<model::ServiceExportRecord> published;  // as the broker holds it (with its uid)
  if (validation.record.has_value()) {
    model::ServiceExportRecord& record = *validation.record;
    Result<model::ServiceExportRecord> written = record;
    if (existing == nullptr) {
      written = record_client_.Create(record);
      if (!written.ok() && written.status().code() == StatusCode::kAlreadyExists) {
        // Our cache has not seen the record yet (ours, created by an attempt whose answer was
        // lost, e.g. to a broker restart): retried once the cache has it, not terminal.
        written = Status(StatusCode::kConflict,
                         "the broker's record cache is behind: " + written.status().ToString());
      }
    } else if (existing->spec != record.spec ||
               existing->metadata.labels != record.metadata.labels) {
      record.metadata.resource_version = existing->metadata.resource_version;
      record.metadata.annotations = existing->metadata.annotations;
      written = record_client_.Update(record);
      if (!written.ok()) written = GoneIsStale(written.status());
    } else {
      written = *existing;
    }
    if (written.ok()) {
      published = std::move(written).value();
    } else if (written.status().code() == StatusCode::kConflict) {
      // Our broker cache is behind our own writes: retried once it catches up. Not a state of
      // the export, so its conditions are left as they are (Ready would flap False and back).
      return written.status();
    } else {
      publish = written.status();
      SW_LOG(kWarning, "mcs agent: {}: publishing to the broker: {}", key, publish.ToString());
    }
  } else if (existing != nullptr) {
    // No longer valid: withdrawn (its conditions say why, whatever the broker answers).
    withdraw = record_client_.Delete(options_.broker_namespace, record_name);
    if (IsNotFound(withdraw)) withdraw = Status();
    if (withdraw.ok()) withdraw = DeleteBrokerSlices(key);
  }

  // Its EndpointSlices in the broker (owned by the record). Refused there (the forging guard, a
  // validation), the export is not Ready either, and says why; a stale cache or an outage is
  // retried without touching the conditions (Ready would flap).
  std::optional<BrokerSync> broker_sync;
  Status slices;
  if (published.has_value()) {
    Result<BrokerSync> synced = SyncBrokerSlices(*published);
    if (synced.ok()) {
      broker_sync = *synced;
    } else {
      slices = synced.status();
      if (!IsRetryable(slices)) {
        SW_LOG(kWarning, "mcs agent: {}: writing its EndpointSlices to the broker: {}", key,
               slices.ToString());
      }
    }
  }
  const Status ready = !publish.ok() ? publish
                       : slices.ok() || IsRetryable(slices)
                           ? Status()
                           : Status(slices.code(), "its EndpointSlices: " + slices.ToString());

  // Conditions: Valid, Ready, and Conflict as the records (ours as just written) aggregate.
  const std::int64_t generation = service_export->metadata.generation;
  const model::Time now = WallNow();
  model::ServiceExport updated = *service_export;
  std::vector<model::Condition>& conditions = updated.status.conditions;
  Apply(conditions, validation.valid, generation, now);
  if (validation.record.has_value()) {
    Apply(conditions, ::slicewright::mcs::ExportReadyCondition(ready), generation, now);
    std::vector<model::ServiceExportRecord> records = RecordsFor(key);
    std::erase_if(records, [this](const auto& r) { return r.spec.cluster == here_.cluster_id; });
    if (publish.ok()) records.push_back(*validation.record);
    if (const std::optional<Aggregation> aggregation = Aggregate(records, here_)) {
      for (const auto& conflict : aggregation->conflicts) {
        if (conflict.cluster == here_.cluster_id) {
          Apply(conditions, conflict.condition, generation, now);
        }
      }
    }
  } else if (validation.ready_failure.has_value()) {
    Apply(conditions, *validation.ready_failure, generation, now);
  } else {
    Apply(conditions,
          ::slicewright::mcs::ExportReadyCondition(
              Status(StatusCode::kInvalid, "not exported: " + validation.valid.message)),
          generation, now);
  }
  if (updated.status != service_export->status) {
    Result<model::ServiceExport> written = export_client_.UpdateStatus(updated);
    // A conflict, or the ServiceExport deleted since, retries on the next cache state.
    if (!written.ok()) return GoneIsStale(written.status());
  }
  // A refusal is retried with backoff (Options::slow_retry), its conditions saying why.
  SW_RETURN_IF_ERROR(publish);
  SW_RETURN_IF_ERROR(withdraw);
  if (!published.has_value()) return Status();
  SW_RETURN_IF_ERROR(slices);
  // Importers count this cluster's slices as written once the record says so (spec §8.4:
  // Present only after every source cluster's slices exist). Said once, on the first success.
  if (published->metadata.annotations.contains(kAnnotationSlicesPublished)) return Status();
  // A Service with a selector has an EndpointSlice here once its controller has run (a
  // placeholder when no pod matches): none in our cache is most likely a cache that has not seen
  // them yet. Published then as none, importers would say Present over an empty set that only
  // the order of our watches made; so the export waits for them (their add event queues it) a
  // moment, kPublishWait, at most: where no controller writes any (KEP-4770 hands the Service to
  // one that may not), none is the truth.
  const std::string& export_uid = service_export->metadata.uid;
  if (broker_sync->local_slices == 0 && service != nullptr && service->spec.selector.has_value() &&
      SinceFirstSync(export_uid) < kPublishWait) {
    return Status(
        StatusCode::kUnavailable,
        "waiting for the Service's EndpointSlices to show in the cache before publishing");
  }
  ForgetFirstSync(export_uid);
  model::ServiceExportRecord marked = *published;
  marked.metadata.annotations[std::string(kAnnotationSlicesPublished)] =
      std::to_string(broker_sync->broker_slices);
  return GoneIsStale(record_client_.Update(marked).status());
}

Result<Agent::BrokerSync> Agent::SyncBrokerSlices(const model::ServiceExportRecord& record) {
  const std::string key = record.spec.namespace_ + "/" + record.spec.name;
  // (1) read: the Service's own slices here, ours in the broker.
  std::vector<model::EndpointSlice> local;
  local_slices_.store().ForEachByIndex(kSliceByServiceIndex, key, [&local](const auto& slice) {
    if (!ManagedByMcs(slice->metadata)) local.push_back(slice->ToSlice());
  });
  std::vector<model::EndpointSlice> existing;
  broker_slices_.store().ForEachByIndex(kBrokerByService, key, [&](const auto& slice) {
    if (LabelOf(slice->metadata, model::kLabelMcsSourceCluster) == here_.cluster_id &&
        !slice->metadata.deletion_timestamp) {
      existing.push_back(slice->ToSlice());
    }
  });
  std::sort(existing.begin(), existing.end(),
            [](const auto& a, const auto& b) { return a.metadata.name < b.metadata.name; });
  // (2) guard: never plan on a cache older than our own writes.
  if (broker_tracker_.StaleSlices(
          TrackerOwner(record.metadata.namespace_, record.metadata.name, record.metadata.uid),
          existing)) {
    return Status(StatusCode::kUnavailable,
                  "the broker's EndpointSlice cache is behind our writes for " + key);
  }
  // (3) decide, (4) act.
  const reconcile::Plan plan = reconcile::PlanSlices(reconcile::DesiredBrokerSlices(record, local),
                                                     existing, reconcile::McsPlanOptions());
  SW_RETURN_IF_ERROR(ApplyPlan(plan, broker_slice_client_, broker_tracker_));
  return BrokerSync{.broker_slices = plan.Count(reconcile::Operation::kCreate) +
                                     plan.Count(reconcile::Operation::kUpdate) +
                                     plan.unchanged.size(),
                    .local_slices = local.size()};
}

Status Agent::DeleteBrokerSlices(const std::string& key) {
  reconcile::Plan release;
  broker_slices_.store().ForEachByIndex(kBrokerByService, key, [&](const auto& slice) {
    if (LabelOf(slice->metadata, model::kLabelMcsSourceCluster) == here_.cluster_id) {
      release.actions.push_back({reconcile::Operation::kDelete, slice->ToSlice()});
    }
  });
  return ApplyPlan(release, broker_slice_client_, broker_tracker_);
}

// ---- Import side ----

Result<std::optional<model::Service>> Agent::EnsureDerivedService(
    const model::ServiceImport& service_import) {
  const std::string& ns = service_import.metadata.namespace_;
  const std::string derived_name =
      ::slicewright::mcs::DerivedServiceName(ns, service_import.metadata.name);
  model::Service desired;
  desired.metadata.name = derived_name;
  desired.metadata.namespace_ = ns;
  desired.metadata.labels[std::string(model::kLabelMcsServiceName)] = service_import.metadata.name;
  desired.metadata.owner_references.push_back(
      {std::string(model::kMcsApiVersion), std::string(model::kKindServiceImport),
       service_import.metadata.name, service_import.metadata.uid, std::nullopt, std::nullopt});
  desired.spec.type = "ClusterIP";
  desired.spec.ip_families = service_import.spec.ip_families;
  desired.spec.ip_family_policy =
      service_import.spec.ip_families.size() > 1 ? "RequireDualStack" : "SingleStack";
  desired.spec.session_affinity = service_import.spec.session_affinity;
  desired.spec.session_affinity_config = service_import.spec.session_affinity_config;
  for (const model::McsServicePort& port : service_import.spec.ports) {
    model::ServicePort& out = desired.spec.ports.emplace_back();
    out.name = port.name;
    out.protocol = port.protocol;
    out.port = port.port;
    out.target_port = model::IntOrString::FromInt(port.port);
    out.app_protocol = port.app_protocol;
  }
  const auto current = services_.store().Get(ns, derived_name);
  if (current == nullptr) {
    Result<model::Service> created = service_client_.Create(desired);
    if (!created.ok()) return CacheBehind(created.status());
    return std::optional<model::Service>(std::move(created).value());
  }
  // Kept up to date with the import (the reference controller never updates it): ports,
  // affinity. A change of families needs a new Service (they are immutable past dual-stack
  // upgrades), so it is deleted and created again on the next sync.
  if (current->spec.ip_families != desired.spec.ip_families) {
    // NotFound: an earlier sync deleted it and our cache has not seen that yet (found on a real
    // cluster under load, where it was reported as a refusal): it is gone, as wanted.
    const Status deleted = service_client_.Delete(ns, derived_name);
    if (!deleted.ok() && !IsNotFound(deleted)) return deleted;
    return std::optional<model::Service>();
  }
  if (current->spec.ports == desired.spec.ports &&
      current->spec.session_affinity == desired.spec.session_affinity &&
      current->spec.session_affinity_config == desired.spec.session_affinity_config &&
      current->metadata.owner_references == desired.metadata.owner_references) {
    return std::optional<model::Service>(*current);
  }
  model::Service updated = *current;
  updated.spec.ports = desired.spec.ports;
  updated.spec.session_affinity = desired.spec.session_affinity;
  updated.spec.session_affinity_config = desired.spec.session_affinity_config;
  updated.metadata.owner_references = desired.metadata.owner_references;
  updated.metadata.labels[std::string(model::kLabelMcsServiceName)] = service_import.metadata.name;
  Result<model::Service> written = service_client_.Update(updated);
  if (!written.ok()) return GoneIsStale(written.status());
  return std::optional<model::Service>(std::move(written).value());
}

Status Agent::SyncImport(const std::string& key) {
  const auto [ns, name] = SplitKey(key);
  const std::vector<model::ServiceExportRecord> records = RecordsFor(key);
  const std::optional<Aggregation> aggregation = Aggregate(records, here_);
  const auto current = imports_.store().Get(ns, name);
  const std::string derived_name = ::slicewright::mcs::DerivedServiceName(ns, name);
  if (!aggregation.has_value()) {
    // The last export is gone (spec §4 I3): the import and its derived Service go.
    if (current != nullptr) {
      const Status deleted = import_client_.Delete(ns, name);
      if (!deleted.ok() && !IsNotFound(deleted)) return deleted;
      SW_LOG(kInfo, "mcs agent: {} no longer exported anywhere: ServiceImport deleted", key);
    }
    if (services_.store().Get(ns, derived_name) != nullptr) {
      const Status deleted = service_client_.Delete(ns, derived_name);
      if (!deleted.ok() && !IsNotFound(deleted)) return deleted;
    }
    return DeleteImportedSlices(key, {});
  }
  // Only where the namespace exists (spec §4 I1); creating namespaces is not ours to do. One being
  // deleted refuses every create (NamespaceLifecycle) and takes what we wrote there with it; if
  // it comes back, its add event queues the key again.
  const auto namespace_object = namespaces_.store().Get("", ns);
  if (namespace_object == nullptr || namespace_object->metadata.deletion_timestamp.has_value() ||
      namespace_object->phase == "Terminating") {
    return Status();
  }

  const bool cluster_set_ip = aggregation->spec.type == model::kServiceImportClusterSetIP;
  // An import none of whose families this cluster serves (Ready=False IPFamilyNotSupported) gets
  // no derived Service, so no IPs: the API server would refuse a Service of those families.
  const bool ready = aggregation->ready.status == model::kConditionTrue;
  const bool derived_service = cluster_set_ip && ready;
  model::ServiceImport desired;
  desired.metadata.namespace_ = ns;
  desired.metadata.name = name;
  desired.metadata.labels = aggregation->labels;
  desired.metadata.annotations = aggregation->annotations;
  desired.spec = aggregation->spec;
  if (derived_service) {
    desired.metadata.annotations[std::string(model::kAnnotationDerivedService)] = derived_name;
    if (const auto derived = services_.store().Get(ns, derived_name)) {
      desired.spec.ips = ClusterSetIps(*derived, desired.spec.ip_families);
    } else if (current != nullptr) {
      // Our cache may not show the derived Service we just created yet: the import keeps its IPs
      // (spec §6: stable for its lifetime) rather than losing them until the cache catches up.
      desired.spec.ips = current->spec.ips;
    }
  }

  // A write of the import's objects that this cluster's API server refuses (a terminal error, not
  // a stale cache or an outage) is never dropped in silence: the import's Ready says what and
  // why, and the key is retried with backoff (Options::slow_retry) until it goes through.
  Status refused;
  model::Condition refused_ready;
  // (The namespace is captured by name: clang 14 cannot capture a structured binding.)
  const auto refusal = [&, import_ns = ns](std::string_view what, const Status& status) -> Status {
    if (IsRetryable(status)) return status;
    // The namespace is being deleted, or is gone (our cache had not seen it yet): nothing to
    // report or retry; a namespace made again queues the key with its add event.
    if (IsNamespaceTerminating(status) || NamespaceGone(status, import_ns)) return Status();
    SW_LOG(kWarning, "mcs agent: {}: the API server refused {}: {}", key, what, status.ToString());
    if (refused.ok()) {
      refused = status;
      refused_ready = ::slicewright::mcs::ImportRefusedCondition(what, status);
    }
    return Status();
  };

  model::ServiceImport written;
  if (current == nullptr) {
    // Refused, there is no object to say why: logged, and retried with backoff.
    Result<model::ServiceImport> created = import_client_.Create(desired);
    if (!created.ok() &&
        (IsNamespaceTerminating(created.status()) || NamespaceGone(created.status(), ns))) {
      return Status();
    }
    if (!created.ok()) return CacheBehind(created.status());
    written = std::move(created).value();
    SW_LOG(kInfo, "mcs agent: ServiceImport {} created ({}, from {})", key, desired.spec.type,
           fmt::join(aggregation->clusters, ", "));
  } else if (current->spec != desired.spec || current->metadata.labels != desired.metadata.labels ||
             current->metadata.annotations != desired.metadata.annotations) {
    written = *current;
    written.spec = desired.spec;
    written.metadata.labels = desired.metadata.labels;
    written.metadata.annotations = desired.metadata.annotations;
    Result<model::ServiceImport> updated = import_client_.Update(written);
    if (updated.ok()) {
      written = std::move(updated).value();
    } else {
      SW_RETURN_IF_ERROR(refusal("the ServiceImport's update", GoneIsStale(updated.status())));
      written = *current;
    }
  } else {
    written = *current;
  }

  if (derived_service && refused.ok()) {
    Result<std::optional<model::Service>> derived = EnsureDerivedService(written);
    if (!derived.ok()) {
      SW_RETURN_IF_ERROR(refusal("the derived Service " + derived_name, derived.status()));
    } else if (derived->has_value()) {
      // A derived Service just created has its ClusterIP(s) in the create's answer: spec.ips
      // now, from the import as just written, rather than on the next sync, which woken by the
      // Service's add event would start from a cache that may not have our writes yet (a
      // conflict, retried with backoff: under a burst of exports, rounds and writes wasted).
      std::vector<std::string> ips = ClusterSetIps(**derived, written.spec.ip_families);
      if (!ips.empty() && ips != written.spec.ips) {
        model::ServiceImport with_ips = written;
        with_ips.spec.ips = std::move(ips);
        Result<model::ServiceImport> updated = import_client_.Update(with_ips);
        if (updated.ok()) {
          written = std::move(updated).value();
        } else {
          SW_RETURN_IF_ERROR(
              refusal("the ServiceImport's spec.ips", GoneIsStale(updated.status())));
        }
      }
    }
  } else if (!derived_service && services_.store().Get(ns, derived_name) != nullptr) {
    // Headless imports have no derived Service and no IPs (spec §6 C4), nor have imports this
    // cluster cannot serve.
    const Status deleted = service_client_.Delete(ns, derived_name);
    if (!deleted.ok() && !IsNotFound(deleted)) return deleted;
  }

  // MCS EndpointSlices, when the policy wants them here: written before the status says Present
  // (spec §8.4), so a consumer that switches to them never sees a partial set.
  // An expired member (spec §7 ES9) keeps shaping the import (its record stays, so the spec and
  // the ClusterSetIP do not change while it is away) but leaves status.clusters and its endpoints
  // leave every slice here, until its Lease is renewed.
  std::vector<std::string> live_clusters;
  for (const std::string& cluster : aggregation->clusters) {
    if (IsLive(cluster)) live_clusters.push_back(cluster);
  }
  Status slices_synced(StatusCode::kUnavailable, "MCS EndpointSlices not wanted");
  if (aggregation->endpoint_slices) {
    slices_synced =
        SyncImportedSlices(written, live_clusters, cluster_set_ip ? derived_name : std::string());
    if (!slices_synced.ok() && !IsRetryable(slices_synced)) {
      SW_RETURN_IF_ERROR(refusal("its MCS EndpointSlices", slices_synced));
    }
    // Until the import says Present (not only for its first status: an import written Absent
    // must not flip to Present over the empty set its exporter's record's watch outran), every
    // live exporter's published slices must be here.
    const bool present =
        written.status.endpoint_slice_objects == model::EndpointSliceObjects::kPresent;
    for (const model::ServiceExportRecord& record : records) {
      if (!slices_synced.ok() || !IsLive(record.spec.cluster)) continue;
      if (!record.metadata.annotations.contains(kAnnotationSlicesPublished)) {
        slices_synced = Status(StatusCode::kUnavailable,
                               record.spec.cluster + " has not published its slices yet");
      } else if (!present) {
        // Fewer than it published: its record came through its watch before its slices came
        // through theirs, for a moment (kPublishWait). Still fewer after that, the exporter has
        // fewer now (the count is said once, on its first publish), which is not waited on.
        const std::string& record_uid = record.metadata.uid;
        if (BrokerSliceCount(key, record.spec.cluster) >= PublishedSliceCount(record)) {
          ForgetFirstSync(record_uid);
        } else if (SinceFirstSync(record_uid) < kPublishWait) {
          slices_synced = Status(StatusCode::kUnavailable,
                                 record.spec.cluster + "'s published slices are not all here yet");
        }
      }
    }
    // A new import's first status waits (a moment, kPublishWait) for its slices to be complete:
    // the error retries it, and the events of what completes them queue it at once.
    if (!slices_synced.ok() && refused.ok() &&
        written.status.endpoint_slice_objects == model::EndpointSliceObjects::kUnset &&
        SinceFirstSync(written.metadata.uid) < kPublishWait) {
      return slices_synced;
    }
  }
  const ::slicewright::mcs::EndpointSliceObjectsDecision decision =
      ::slicewright::mcs::DecideEndpointSliceObjects(
          aggregation->endpoint_slices, slices_synced.ok(), written.status.endpoint_slice_objects);
  model::ServiceImport status_update = written;
  status_update.status.clusters = live_clusters;
  Apply(status_update.status.conditions, refused.ok() ? aggregation->ready : refused_ready,
        written.metadata.generation, WallNow());
  status_update.status.endpoint_slice_objects = decision.write;
  if (status_update.status != written.status) {
    SW_RETURN_IF_ERROR(GoneIsStale(import_client_.UpdateStatus(status_update).status()));
  }
  ForgetFirstSync(written.metadata.uid);
  // Present from now on: the records' waits for their published slices are over.
  if (decision.write == model::EndpointSliceObjects::kPresent &&
      written.status.endpoint_slice_objects != model::EndpointSliceObjects::kPresent) {
    for (const model::ServiceExportRecord& record : records) ForgetFirstSync(record.metadata.uid);
  }
  // Absent first, then the slices go (the status update above requeues this import).
  if (decision.delete_slices) SW_RETURN_IF_ERROR(DeleteImportedSlices(key, {}));
  SW_RETURN_IF_ERROR(refused);
  if (aggregation->endpoint_slices) return slices_synced;
  return Status();
}

std::size_t Agent::BrokerSliceCount(const std::string& key, const std::string& cluster) {
  std::size_t count = 0;
  broker_slices_.store().ForEachByIndex(kBrokerByService, key, [&](const auto& slice) {
    if (LabelOf(slice->metadata, model::kLabelMcsSourceCluster) == cluster) ++count;
  });
  return count;
}

Status Agent::SyncImportedSlices(const model::ServiceImport& service_import,
                                 const std::vector<std::string>& clusters,
                                 const std::string& derived_service) {
  const std::string key = cache::KeyOf(service_import);
  const std::string& ns = service_import.metadata.namespace_;
  // (1) read: each cluster's slices in the broker and ours of it here, grouped by source cluster
  // in one pass over each cache (a pass per cluster costs N^2 for an import of N clusters: 62,500
  // slices visited per sync at 250 members).
  const std::set<std::string_view> wanted(clusters.begin(), clusters.end());
  std::map<std::string, std::vector<model::EndpointSlice>, std::less<>> remote_by_cluster;
  broker_slices_.store().ForEachByIndex(kBrokerByService, key, [&](const auto& slice) {
    std::string cluster = LabelOf(slice->metadata, model::kLabelMcsSourceCluster);
    if (wanted.contains(cluster)) remote_by_cluster[std::move(cluster)].push_back(slice->ToSlice());
  });
  std::map<std::string, std::vector<model::EndpointSlice>, std::less<>> existing_by_cluster;
  local_slices_.store().ForEachByIndex(kLocalByImport, key, [&](const auto& slice) {
    if (!ManagedByMcs(slice->metadata) || slice->metadata.deletion_timestamp) return;
    std::string cluster = LabelOf(slice->metadata, model::kLabelMcsSourceCluster);
    if (wanted.contains(cluster)) {
      existing_by_cluster[std::move(cluster)].push_back(slice->ToSlice());
    }
  });
  Status first_error;
  for (const std::string& cluster : clusters) {
    const std::vector<model::EndpointSlice>& remote = remote_by_cluster[cluster];
    std::vector<model::EndpointSlice>& existing = existing_by_cluster[cluster];
    std::sort(existing.begin(), existing.end(),
              [](const auto& a, const auto& b) { return a.metadata.name < b.metadata.name; });
    // (2) guard.
    if (import_tracker_.StaleSlices(TrackerOwner(ns, service_import.metadata.name + "/" + cluster,
                                                 service_import.metadata.uid),
                                    existing)) {
      return Status(StatusCode::kUnavailable,
                    "the EndpointSlice cache is behind our writes for " + key);
    }
    // (3) decide, (4) act.
    const reconcile::Plan plan = reconcile::PlanSlices(
        reconcile::DesiredImportedSlices(service_import, cluster, derived_service, remote),
        existing, reconcile::McsPlanOptions());
    const Status applied = ApplyPlan(plan, local_slice_client_, import_tracker_);
    if (!applied.ok() && first_error.ok()) first_error = applied;
  }
  // A cluster that no longer exports it keeps no slices here (spec §7: unexport deletes them).
  SW_RETURN_IF_ERROR(DeleteImportedSlices(key, clusters));
  return first_error;
}

Clock::Duration Agent::SinceFirstSync(const std::string& uid) {
  const Clock::TimePoint now = SystemClock::Get().Now();
  MutexLock lock(first_sync_mu_);
  const auto [it, inserted] = first_sync_.try_emplace(uid, now);
  return now - it->second;
}

void Agent::ForgetFirstSync(const std::string& uid) {
  MutexLock lock(first_sync_mu_);
  first_sync_.erase(uid);
}

Status Agent::DeleteImportedSlices(const std::string& key, const std::vector<std::string>& keep) {
  reconcile::Plan release;
  const std::set<std::string_view> kept(keep.begin(), keep.end());
  local_slices_.store().ForEachByIndex(kLocalByImport, key, [&](const auto& slice) {
    const std::string cluster = LabelOf(slice->metadata, model::kLabelMcsSourceCluster);
    if (ManagedByMcs(slice->metadata) && !kept.contains(cluster)) {
      release.actions.push_back({reconcile::Operation::kDelete, slice->ToSlice()});
    }
  });
  return ApplyPlan(release, local_slice_client_, import_tracker_);
}

}  // namespace slicewright::controllers::mcs

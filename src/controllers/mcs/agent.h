// The MCS agent (issue #23): one per member cluster, a controller of the manager's table. Its
// export side publishes each valid local ServiceExport as a ServiceExportRecord in the broker and
// keeps the ServiceExport's Valid, Ready and Conflict conditions; its import side turns the
// broker's records into this cluster's ServiceImports (spec, status.clusters, Ready,
// endpointSliceObjects) and the derived ClusterIP Service whose IPs become spec.ips. Both sides
// have the controller shape: read caches, guard, decide with the pure mcs/ functions, write,
// record. It runs on the leader only; the clusterset.local DNS runs on every replica
// (dns_service.h). Thread-safe.
#pragma once

#include <map>
#include <memory>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "slicewright/base/clock.h"
#include "slicewright/base/mutex.h"
#include "slicewright/base/result.h"
#include "slicewright/cache/compact_slice.h"
#include "slicewright/cache/informer_factory.h"
#include "slicewright/client/rest_client.h"
#include "slicewright/client/typed_client.h"
#include "slicewright/mcs/aggregate.h"
#include "slicewright/model/mcs.h"
#include "slicewright/reconcile/tracker.h"
#include "slicewright/runtime/events.h"
#include "slicewright/runtime/metrics.h"

#include "controllers/common/sync_loop.h"
#include "controllers/mcs/liveness.h"
#include "controllers/mcs/options.h"

namespace slicewright::controllers::mcs {

struct Deps {
  client::RestClient* client = nullptr;                // this cluster; required
  cache::InformerFactory* informers = nullptr;         // this cluster's; required
  client::RestClient* broker = nullptr;                // required
  cache::InformerFactory* broker_informers = nullptr;  // required
  runtime::EventRecorder* events = nullptr;            // optional
  runtime::Registry* metrics = nullptr;                // optional
  // Ends Create()'s wait for a previous run's Lease (kCancelled) when the process stops.
  std::stop_token stop{};
};

// On a broker record: its cluster has written the service's broker slices at least once; the
// value is how many it had written then. An importer's broker-slice cache may see the record
// before those slices (two watches), so a new import waits for that many (kPublishWait at most).
inline constexpr std::string_view kAnnotationSlicesPublished =
    "mcs.slicewright.io/endpointslices-published";

// The Events' source component.
inline constexpr std::string_view kComponent = "mcs-agent";

// The flags' own checks (no API call): --mcs-endpointslice-sync, --mcs-concurrent-syncs,
// --broker-namespace, and --cluster-id when given. kInvalid naming the flag.
Status ValidateOptions(const Options& options);

class Agent final {
 public:
  // Validates the options and resolves this cluster's id (ClusterProperty id.k8s.io, else
  // cluster.clusterset.k8s.io, else --cluster-id): kInvalid naming the source when it is not an
  // RFC 1123 subdomain of at most 127 characters. Then takes this cluster's Lease in the broker
  // (ClusterLiveness::AcquireOrWaitOut): a previous run's unrenewed Lease is waited out, which
  // blocks up to its remaining TTL; a live member holding our id is kAlreadyExists.
  static Result<std::unique_ptr<Agent>> Create(Options options, Deps deps);
  ~Agent();
  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;

  // Once the caches synced: runs the workers and queues every known key.
  void Start();
  void Stop();

  const std::string& cluster_id() const { return here_.cluster_id; }
  // This cluster's IP families, primary first (--mcs-cluster-ip-families, else learned; empty:
  // unknown).
  const std::vector<std::string>& ip_families() const { return here_.ip_families; }

  // One sync of each side, for tests and the workers: `key` is "namespace/name".
  Status SyncExport(const std::string& key);
  Status SyncImport(const std::string& key);

 private:
  Agent(Options options, Deps deps, ::slicewright::mcs::ImportingCluster here,
        std::unique_ptr<SyncLoop> exports_loop, std::unique_ptr<SyncLoop> imports_loop);
  void RegisterHandlers();
  // Queues every key there is something about on both sides (at Start(), and when the broker
  // answers again after an outage).
  void EnqueueAll();
  // The valid records of "namespace/name" in the broker cache (invalid ones are logged).
  std::vector<model::ServiceExportRecord> RecordsFor(const std::string& key) const;
  // Creates or updates the import's derived Service; the Service as written (created or updated)
  // or as cached, or nullopt when it was deleted to be created again.
  Result<std::optional<model::Service>> EnsureDerivedService(
      const model::ServiceImport& service_import);
  // Whether `cluster`'s Lease in the broker is current (ours always is).
  bool IsLive(const std::string& cluster) const;
  // The export side's slices: the exported Service's endpoints in the broker, owned by `record`.
  // Returns how many broker slices this cluster has for the record's service, and how many of
  // the Service's own slices here they were made from.
  struct BrokerSync {
    std::size_t broker_slices = 0;
    std::size_t local_slices = 0;
  };
  Result<BrokerSync> SyncBrokerSlices(const model::ServiceExportRecord& record);
  // How many broker slices of the service `key` from `cluster` the broker cache holds.
  std::size_t BrokerSliceCount(const std::string& key, const std::string& cluster);
  Status DeleteBrokerSlices(const std::string& key);
  // The import side's slices: one plan per source cluster in `clusters`; slices of any other
  // cluster deleted.
  Status SyncImportedSlices(const model::ServiceImport& service_import,
                            const std::vector<std::string>& clusters,
                            const std::string& derived_service);
  Status DeleteImportedSlices(const std::string& key, const std::vector<std::string>& keep);
  // How long ago the import (or export, or exporter's record) of uid `uid` was first synced
  // without a status (without publishing its slices; short of its published slices; zero the
  // first time); Forget... once it has them.
  Clock::Duration SinceFirstSync(const std::string& uid);
  void ForgetFirstSync(const std::string& uid);

  const Options options_;
  const Deps deps_;
  const ::slicewright::mcs::ImportingCluster here_;
  cache::Informer<model::ServiceExport>& exports_;
  cache::Informer<model::ServiceImport>& imports_;
  cache::Informer<model::Service>& services_;
  cache::Informer<model::Namespace>& namespaces_;
  cache::Informer<model::ServiceExportRecord>& records_;
  // Every EndpointSlice of this cluster (shared with the endpoint controllers) and the broker's
  // MCS slices.
  cache::Informer<cache::CompactEndpointSlice>& local_slices_;
  cache::Informer<cache::CompactEndpointSlice>& broker_slices_;
  client::TypedClient<model::ServiceExport> export_client_;
  client::TypedClient<model::ServiceImport> import_client_;
  client::TypedClient<model::Service> service_client_;
  client::TypedClient<model::ServiceExportRecord> record_client_;
  client::TypedClient<model::EndpointSlice> local_slice_client_;
  client::TypedClient<model::EndpointSlice> broker_slice_client_;
  reconcile::EndpointSliceTracker broker_tracker_;
  reconcile::EndpointSliceTracker import_tracker_;
  std::unique_ptr<SyncLoop> exports_loop_;
  std::unique_ptr<SyncLoop> imports_loop_;
  // Imports without a status yet, records whose published slices are not all in our broker cache
  // and exports whose slices are not published yet, by uid: when (our steady clock) we first
  // synced each. A new import waits a moment for its slices before its first status, rather than
  // writing Absent just before Present; an import not yet Present, for an exporter's published
  // slices; a new export, for its Service's slices to show in our cache (agent.cc, kPublishWait).
  Mutex first_sync_mu_;
  std::map<std::string, Clock::TimePoint> first_sync_ SW_GUARDED_BY(first_sync_mu_);
  // This cluster's Lease and the others' liveness: records of expired clusters are left out.
  std::unique_ptr<ClusterLiveness> liveness_;
};

}  // namespace slicewright::controllers::mcs

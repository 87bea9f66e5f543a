#include "controllers/manager/table.h"

#include <set>
#include <utility>

#include <fmt/format.h>

#include "controllers/endpoints/controller.h"
#include "controllers/endpointslice/controller.h"
#include "controllers/mcs/agent.h"
#include "controllers/mcs/dns_service.h"
#include "controllers/mirroring/controller.h"
#include "controllers/multinetwork/multinetwork.h"

namespace slicewright::controllers {
namespace {

const std::vector<std::string> kRead = {"get", "list", "watch"};
const std::vector<std::string> kReadWrite = {"get", "list", "watch", "create", "update", "delete"};

// An owner reference with blockOwnerDeletion=true needs update on the owner's finalizers.
RbacRule FinalizersOf(std::string resource) {
  return {{""}, {std::move(resource) + "/finalizers"}, {"update"}};
}

// What every endpoint controller takes from its context: this cluster's client and informers,
// its Events and the manager's metrics.
template <typename Deps>
Deps LocalDeps(const ControllerContext& c) {
  Deps deps;
  deps.client = c.local.client;
  deps.informers = c.local.informers;
  deps.events = c.events;
  deps.metrics = c.metrics;
  return deps;
}

// Whether the cluster's kube-controller-manager reads service.kubernetes.io/topology-mode (1.27+);
// an unknown version is taken as the newest.
bool TopologyModeAnnotationKnown(const ControllerContext& c) {
  return !c.server_version.has_value() || endpointslice::TopologyModeAnnotationKnown(
                                              c.server_version->major, c.server_version->minor);
}

// What the EndpointSlice controller, and so the multi-network one, reads and writes.
std::vector<RbacRule> EndpointSliceRules() {
  return {{{""}, {"services", "pods", "nodes"}, kRead},
          {{"discovery.k8s.io"}, {"endpointslices"}, kReadWrite},
          FinalizersOf("services")};
}

ControllerDescriptor EndpointSliceController() {
  ControllerDescriptor d;
  d.name = "endpointslice";
  d.component = std::string(endpointslice::kComponent);
  d.flags = [](ManagerOptions& o) -> std::vector<FlagSpec> {
    endpointslice::Options& e = o.endpointslice;
    return {
        {.names = "--concurrent-service-endpoint-syncs",
         .help = "Services synced at once by the EndpointSlice controller (1-50)",
         .target = &e.concurrent_syncs},
        {.names = "--max-endpoints-per-slice",
         .help = "The maximum number of endpoints added to an EndpointSlice (1-1000)",
         .target = &e.max_endpoints_per_slice},
        {.names = "--endpointslice-updates-batch-period",
         .help = "How long pod changes are batched before a Service sync (Go duration)",
         .target = &e.batch_period},
        {.names = "--endpointslice-incremental-min-pods",
         .help = "slicewright: Services with at least this many pods keep their derived "
                 "endpoints between syncs (about 1.6 KB per pod), so a pod event re-derives one "
                 "pod; 0: off",
         .target = &e.incremental_min_pods},
        {.names = "--controller-name",
         .help = "The endpointslice.kubernetes.io/managed-by value of our slices",
         .target = &e.managed_by},
    };
  };
  d.create = [](const ControllerContext& c) -> Result<RunningController> {
    endpointslice::Options options = c.options.endpointslice;
    options.external_endpoint_controller = c.external_endpoint_controller;
    options.topology_mode_annotation = TopologyModeAnnotationKnown(c);
    endpointslice::Deps deps = LocalDeps<endpointslice::Deps>(c);
    SW_ASSIGN_OR_RETURN(auto created, endpointslice::Controller::Create(options, deps));
    return Hold(std::move(created));
  };
  d.rbac = EndpointSliceRules();
  return d;
}

// The EndpointSlice controller with the multi-network plugin: its own managed-by and work queue,
// the EndpointSlice controller's other settings.
ControllerDescriptor MultinetworkController() {
  ControllerDescriptor d;
  d.name = "multinetwork";
  d.component = "multinetwork-controller";
  d.create = [](const ControllerContext& c) -> Result<RunningController> {
    endpointslice::Options options = c.options.endpointslice;
    options.external_endpoint_controller = c.external_endpoint_controller;
    options.topology_mode_annotation = TopologyModeAnnotationKnown(c);
    const endpointslice::Options defaults = multinetwork::DefaultOptions();
    options.managed_by = defaults.managed_by;
    options.name = defaults.name;
    options.thread_name = defaults.thread_name;
    options.upstream_metrics = defaults.upstream_metrics;
    endpointslice::Deps deps = LocalDeps<endpointslice::Deps>(c);
    deps.plugin = multinetwork::MakePlugin();
    SW_ASSIGN_OR_RETURN(auto created, endpointslice::Controller::Create(options, deps));
    return Hold(std::move(created));
  };
  d.rbac = EndpointSliceRules();
  return d;
}

ControllerDescriptor EndpointsController() {
  ControllerDescriptor d;
  d.name = "endpoints";
  d.component = std::string(endpoints::kComponent);
  d.flags = [](ManagerOptions& o) -> std::vector<FlagSpec> {
    return {
        {.names = "--concurrent-endpoint-syncs",
         .help = "Services synced at once by the Endpoints controller",
         .target = &o.endpoints.concurrent_syncs},
        {.names = "--endpoint-updates-batch-period",
         .help = "How long pod changes are batched before an Endpoints sync (Go duration)",
         .target = &o.endpoints.batch_period},
    };
  };
  d.create = [](const ControllerContext& c) -> Result<RunningController> {
    endpoints::Options options = c.options.endpoints;
    options.external_endpoint_controller = c.external_endpoint_controller;
    // Unknown version: the newest behaviour.
    options.managed_by_label =
        !c.server_version.has_value() ||
        endpoints::WritesManagedByLabel(c.server_version->major, c.server_version->minor);
    const endpoints::Deps deps = LocalDeps<endpoints::Deps>(c);
    SW_ASSIGN_OR_RETURN(auto created, endpoints::Controller::Create(options, deps));
    return Hold(std::move(created));
  };
  d.rbac = {{{""}, {"services", "pods"}, kRead},
            {{""}, {"endpoints"}, kReadWrite},
            // Endpoints whose addresses the RestrictedEndpointsAdmission guards, as upstream
            // grants.
            {{""}, {"endpoints/restricted"}, {"create"}},
            FinalizersOf("services")};
  return d;
}

ControllerDescriptor MirroringController() {
  ControllerDescriptor d;
  d.name = "endpointslice-mirroring";
  d.component = std::string(mirroring::kComponent);
  d.flags = [](ManagerOptions& o) -> std::vector<FlagSpec> {
    mirroring::Options& m = o.mirroring;
    return {
        {.names = "--mirroring-concurrent-service-endpoint-syncs",
         .help = "Services synced at once by the EndpointSlice mirroring controller (1-50)",
         .target = &m.concurrent_syncs},
        {.names = "--mirroring-max-endpoints-per-subset",
         .help = "The maximum number of endpoints mirrored per Endpoints subset (1-1000)",
         .target = &m.max_endpoints_per_subset},
        {.names = "--mirroring-endpointslice-updates-batch-period",
         .help = "How long Endpoints changes are batched before mirroring (Go duration)",
         .target = &m.batch_period},
    };
  };
  d.create = [](const ControllerContext& c) -> Result<RunningController> {
    mirroring::Options options = c.options.mirroring;
    options.external_endpoint_controller = c.external_endpoint_controller;
    const mirroring::Deps deps = LocalDeps<mirroring::Deps>(c);
    SW_ASSIGN_OR_RETURN(auto created, mirroring::Controller::Create(options, deps));
    return Hold(std::move(created));
  };
  d.rbac = {{{""}, {"services", "endpoints"}, kRead},
            {{"discovery.k8s.io"}, {"endpointslices"}, kReadWrite},
            FinalizersOf("endpoints")};
  return d;
}

// The Multi-Cluster Services agent: needs a broker, so "*" leaves it out.
ControllerDescriptor McsAgent() {
  ControllerDescriptor d;
  d.name = "mcs";
  d.component = std::string(mcs::kComponent);
  d.enabled_by_default = false;
  d.flags = [](ManagerOptions& o) -> std::vector<FlagSpec> {
    mcs::Options& m = o.mcs;
    return {
        {.names = "--cluster-id",
         .help = "mcs: this cluster's id when it has no ClusterProperty id.k8s.io or "
                 "cluster.clusterset.k8s.io (an RFC 1123 subdomain)",
         .target = &m.cluster_id},
        {.names = "--broker-kubeconfig",
         .help = "mcs: kubeconfig of the broker API server (else $KUBECONFIG, ~/.kube/config, "
                 "in-cluster)",
         .target = &m.broker_kubeconfig},
        {.names = "--broker-context",
         .help = "mcs: the broker kubeconfig's context",
         .target = &m.broker_context},
        {.names = "--broker-namespace",
         .help = "mcs: the broker namespace holding the ClusterSet's export records",
         .target = &m.broker_namespace},
        {.names = "--broker-api-qps",
         .help = "mcs: QPS to the broker (a joining member writes 3 per export)",
         .target = &m.broker_api_qps},
        {.names = "--broker-api-burst",
         .help = "mcs: burst to the broker",
         .target = &m.broker_api_burst},
        {.names = "--mcs-endpointslice-sync",
         .help = "mcs: which imports get MCS EndpointSlices: all, headless or annotated "
                 "(a ServiceExport's mcs.slicewright.io/endpointslice-sync overrides)",
         .target = &m.endpointslice_sync},
        {.names = "--mcs-cluster-ip-families",
         .help = "mcs: the IP families this cluster gives Services, primary first: IPv4, IPv6, "
                 "IPv4,IPv6 or IPv6,IPv4 (default: learned from the API server, by a dry-run "
                 "Service); an import of none of them is Ready=False IPFamilyNotSupported",
         .target = &m.cluster_ip_families},
        {.names = "--mcs-lease-duration",
         .help = "mcs: this cluster's Lease in the broker; a member whose Lease is older is "
                 "expired and its endpoints leave every import (Go duration, whole seconds, >= 3s)",
         .target = &m.lease_duration},
        {.names = "--mcs-concurrent-syncs",
         .help = "mcs: services synced at once by each side of the agent (1-50)",
         .target = &m.concurrent_syncs},
        {.names = "--mcs-dns-address",
         .help = "mcs: serve the clusterset.local DNS zone (UDP and TCP) on host:port; \":53\" in "
                 "a pod, \"\" for none",
         .target = &m.dns_address},
        {.names = "--mcs-dns-ttl",
         .help = "mcs: TTL in seconds of every clusterset.local answer, negative ones included "
                 "(0-3600)",
         .target = &m.dns_ttl},
    };
  };
  d.validate = [](const ManagerOptions& o) { return mcs::ValidateOptions(o.mcs); };
  d.remotes = [](const ManagerOptions& o) {
    return std::vector<RemoteClusterConfig>{{.name = "broker",
                                             .kubeconfig = o.mcs.broker_kubeconfig,
                                             .context = o.mcs.broker_context,
                                             .qps = o.mcs.broker_api_qps,
                                             .burst = o.mcs.broker_api_burst}};
  };
  d.create = [](const ControllerContext& c) -> Result<RunningController> {
    const ClusterAccess& broker = c.remotes.at("broker");
    mcs::Deps deps;
    deps.client = c.local.client;
    deps.informers = c.local.informers;
    deps.broker = broker.client;
    deps.broker_informers = broker.informers;
    deps.events = c.events;
    deps.metrics = c.metrics;
    deps.stop = c.stop;
    SW_ASSIGN_OR_RETURN(auto created, mcs::Agent::Create(c.options.mcs, deps));
    return Hold(std::move(created));
  };
  // The clusterset.local DNS, from every replica: the leader runs the agent's writers alone.
  d.every_replica = [](const ReplicaContext& c) -> Result<ReplicaService> {
    SW_ASSIGN_OR_RETURN(std::unique_ptr<mcs::DnsService> created,
                        mcs::DnsService::Create(c.options.mcs, *c.informers));
    if (created == nullptr) return ReplicaService{};
    mcs::DnsService* raw = created.get();
    return ReplicaService{.service = std::shared_ptr<mcs::DnsService>(std::move(created)),
                          .name = "mcs-dns",
                          .what = "clusterset.local DNS (UDP and TCP)",
                          .address = raw->address(),
                          .start = [raw] { raw->Start(); },
                          .stop = [raw] { raw->Stop(); },
                          .ready = [raw] { return raw->Ready(); }};
  };
  // In its own cluster; what it may do in the broker is the broker's Role (deploy/mcs).
  d.rbac = {{{"multicluster.x-k8s.io"}, {"serviceexports"}, kRead},
            {{"multicluster.x-k8s.io"}, {"serviceexports/status"}, {"update"}},
            {{"multicluster.x-k8s.io"}, {"serviceimports"}, kReadWrite},
            {{"multicluster.x-k8s.io"}, {"serviceimports/status"}, {"update"}},
            {{"discovery.k8s.io"}, {"endpointslices"}, kReadWrite},
            {{"multicluster.x-k8s.io"}, {"serviceimports/finalizers"}, {"update"}},
            {{""}, {"services"}, kReadWrite},
            {{""}, {"namespaces"}, kRead},
            {{"about.k8s.io"}, {"clusterproperties"}, {"get", "list"}}};
  return d;
}

}  // namespace

const ControllerTable& BuiltinControllers() {
  static const ControllerTable table = {EndpointsController(), EndpointSliceController(),
                                        MirroringController(), McsAgent(),
                                        MultinetworkController()};
  return table;
}

Result<const ControllerDescriptor*> FindController(const ControllerTable& table,
                                                   std::string_view name) {
  std::string known;
  for (const ControllerDescriptor& descriptor : table) {
    if (descriptor.name == name) return &descriptor;
    if (!known.empty()) known += ", ";
    known += descriptor.name;
  }
  return Status(StatusCode::kInvalid,
                fmt::format("unknown controller \"{}\" (known: {})", name, known));
}

std::vector<FlagSpec> ControllerFlags(const ControllerTable& table, ManagerOptions& options) {
  std::vector<FlagSpec> flags;
  for (const ControllerDescriptor& descriptor : table) {
    if (!descriptor.flags) continue;
    for (FlagSpec& flag : descriptor.flags(options)) flags.push_back(std::move(flag));
  }
  return flags;
}

std::vector<RbacRule> ManagerRbacRules() {
  return {{{"", "events.k8s.io"}, {"events"}, {"create", "update", "patch"}}};
}

}  // namespace slicewright::controllers

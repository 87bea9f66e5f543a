#include "controllers/manager/manager.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>
#include <utility>

#include <fmt/ranges.h>

#include "slicewright/base/check.h"
#include "slicewright/base/log.h"
#include "slicewright/base/thread_name.h"
#include "slicewright/cache/informer_factory.h"
#include "slicewright/client/rest_config.h"
#include "slicewright/client/transport.h"
#include "slicewright/runtime/events.h"
#include "slicewright/runtime/http_endpoint.h"
#include "slicewright/runtime/leader_election.h"

namespace slicewright::controllers {
namespace {

constexpr std::string_view kExternalEndpointController = "ExternalEndpointController";

std::string Trim(std::string_view text) {
  const std::size_t first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  const std::size_t last = text.find_last_not_of(" \t");
  return std::string(text.substr(first, last - first + 1));
}

// Blocks until `stop` is requested.
void WaitForStop(const std::stop_token& stop) {
  std::mutex mu;
  std::condition_variable_any cv;
  std::unique_lock lock(mu);
  cv.wait(lock, stop, [] { return false; });
}

}  // namespace

std::vector<std::string> KnownControllers(const ControllerTable& table) {
  std::vector<std::string> names;
  for (const ControllerDescriptor& descriptor : table) names.push_back(descriptor.name);
  return names;
}

std::string DefaultLeaseName(const std::vector<std::string>& controllers) {
  const bool mcs_alone = controllers.size() == 1 && controllers.front() == "mcs";
  return std::string(mcs_alone ? kLeaseMcsAgent : kLeaseControllerManager);
}

Result<std::vector<std::string>> SelectControllers(const std::vector<std::string>& flags,
                                                   const ControllerTable& table) {
  std::set<std::string> selected;
  std::set<std::string> removed;
  bool all = false;
  for (const std::string& raw_flag : flags) {
    // Each flag value may itself be a comma-separated list.
    std::string_view rest = raw_flag;
    while (!rest.empty()) {
      const std::size_t comma = rest.find(',');
      const std::string item = Trim(rest.substr(0, comma));
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
      if (item.empty()) continue;
      if (item == "*") {
        all = true;
        continue;
      }
      const bool remove = item.front() == '-';
      const std::string name = remove ? item.substr(1) : item;
      Result<const ControllerDescriptor*> found = FindController(table, name);
      if (!found.ok()) {
        return Status(StatusCode::kInvalid, "--controllers: " + found.status().ToString());
      }
      (remove ? removed : selected).insert(name);
    }
  }
  if (all) {
    for (const ControllerDescriptor& descriptor : table) {
      if (descriptor.enabled_by_default) selected.insert(descriptor.name);
    }
  }
  std::vector<std::string> out;
  for (const std::string& name : selected) {
    if (!removed.contains(name)) out.push_back(name);
  }
  return out;
}

Result<std::map<std::string, bool>> ParseFeatureGates(std::string_view flag) {
  std::map<std::string, bool> gates = {{std::string(kExternalEndpointController), true}};
  std::string_view rest = flag;
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string item = Trim(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    if (item.empty()) continue;
    const std::size_t equals = item.find('=');
    if (equals == std::string::npos) {
      return Status(StatusCode::kInvalid,
                    "--feature-gates: missing bool value for \"" + item + "\"");
    }
    const std::string name = Trim(item.substr(0, equals));
    const std::string value = Trim(item.substr(equals + 1));
    if (!gates.contains(name)) {
      return Status(StatusCode::kInvalid, "--feature-gates: unrecognized feature gate: " + name);
    }
    if (value != "true" && value != "false") {
      std::string message = "--feature-gates: invalid value of ";
      message += name;
      message += '=';
      message += value;
      message += ", err: expected true or false";
      return Status(StatusCode::kInvalid, std::move(message));
    }
    gates[name] = value == "true";
  }
  return gates;
}

struct Manager::Impl {
  ManagerOptions options;
  client::RestClient& client;
  const ControllerTable table;
  std::vector<const ControllerDescriptor*> controllers;
  bool external_endpoint_controller = true;
  // The other clusters the selected controllers need, by name; the ones the manager connected
  // itself are owned here.
  RemoteClients remotes;
  std::vector<std::unique_ptr<client::RestClient>> owned_remotes;
  runtime::Registry registry;
  // Keeps slicewright_internal_bugs_total current on every scrape; declared after the registry so
  // it goes first.
  runtime::Registry::CollectHook internal_bugs;
  runtime::Registry::CollectHook request_counts;  // rest_client_requests_total
  // What every replica serves, leader or not, on informers of its own (never the leader's,
  // which come and go with leadership); the factory outlives the services that read it.
  std::unique_ptr<cache::InformerFactory> replica_informers;
  std::vector<ReplicaService> replica_services;
  std::unique_ptr<runtime::HttpEndpoint> endpoint;
  std::atomic<bool> leading{false};
  std::atomic<bool> synced{false};

  Impl(ManagerOptions manager_options, client::RestClient& rest, ControllerTable controller_table)
      : options(std::move(manager_options)), client(rest), table(std::move(controller_table)) {}

  // Gives every selected controller a client of each cluster it names: the caller's, else one
  // made from the descriptor's kubeconfig and context.
  Status ConnectRemotes(RemoteClients given) {
    for (const ControllerDescriptor* descriptor : controllers) {
      if (!descriptor->remotes) continue;
      for (const RemoteClusterConfig& remote : descriptor->remotes(options)) {
        if (remotes.contains(remote.name)) continue;
        if (auto it = given.find(remote.name); it != given.end()) {
          remotes.emplace(remote.name, it->second);
          continue;
        }
        client::LoadOptions load;
        load.kubeconfig = remote.kubeconfig;
        load.context = remote.context;
        const auto failed = [&](const Status& status) {
          return Status(status.code(), fmt::format("{}: cluster \"{}\": {}", descriptor->name,
                                                   remote.name, status.ToString()));
        };
        Result<client::RestConfig> config = client::LoadRestConfig(load);
        if (!config.ok()) return failed(config.status());
        client::TransportOptions transport_options;
        transport_options.user_agent = "slicewright-controller-manager";
        Result<std::unique_ptr<client::Transport>> transport =
            client::Transport::Create(*config, transport_options);
        if (!transport.ok()) return failed(transport.status());
        client::RestClientOptions client_options;
        client_options.field_manager = "slicewright-controller-manager";
        client_options.qps = remote.qps;
        client_options.burst = remote.burst;
        Result<std::unique_ptr<client::RestClient>> created = client::RestClient::Create(
            std::shared_ptr<client::Transport>(std::move(transport).value()), client_options);
        if (!created.ok()) return failed(created.status());
        SW_LOG(kInfo, "controller-manager: {} talks to cluster \"{}\" at {}", descriptor->name,
               remote.name, config->DebugString());
        remotes.emplace(remote.name, created->get());
        owned_remotes.push_back(std::move(created).value());
      }
    }
    return Status();
  }

  // Builds what the selected controllers serve from every replica.
  Status BuildReplicaServices() {
    replica_informers = std::make_unique<cache::InformerFactory>(client);
    for (const ControllerDescriptor* descriptor : controllers) {
      if (!descriptor->every_replica) continue;
      const ReplicaContext context{
          .options = options, .informers = replica_informers.get(), .metrics = &registry};
      Result<ReplicaService> built = descriptor->every_replica(context);
      if (!built.ok()) {
        return Status(built.status().code(), descriptor->name + ": " + built.status().ToString());
      }
      if (built->service != nullptr) replica_services.push_back(std::move(built).value());
    }
    return Status();
  }

  // Starts the replica services once their caches synced, or returns at `stop`. No busy loop:
  // each round waits up to 100 ms for the sync.
  void StartReplicaServicesWhenSynced(const std::stop_token& stop) {
    while (!stop.stop_requested()) {
      if (!replica_informers->WaitForCacheSync(std::chrono::milliseconds(100))) continue;
      std::vector<std::string> started;
      for (const ReplicaService& service : replica_services) {
        service.start();
        started.push_back(service.what + " on " + service.address);
      }
      SW_LOG(kInfo, "controller-manager: caches synced; this replica serves {}",
             fmt::join(started, ", "));
      return;
    }
  }

  // Campaigns (or not) and runs the controllers while leading; see Manager::Run.
  Status Campaign(const std::stop_token& stop);

  // Runs the controllers until `stop`; errors are logged (a leader that cannot run its
  // controllers keeps the Lease so that no other replica fights it, and reports not ready).
  //
  // Each controller starts once the caches IT reads have synced: its own cluster's, plus its
  // remote clusters'. The controllers of this cluster alone are built and started first, so that
  // a broker that does not answer (or an agent waiting out its previous run's Lease in its
  // constructor) holds back only the controllers that talk to the broker, not the member's own
  // EndpointSlice controllers.
  void RunControllers(const std::stop_token& stop) {
    cache::InformerFactory informers(client);
    // One informer factory per other cluster, shared by the controllers that name it.
    std::map<std::string, std::unique_ptr<cache::InformerFactory>, std::less<>> remote_informers;
    for (const auto& [name, remote_client] : remotes) {
      remote_informers.emplace(name, std::make_unique<cache::InformerFactory>(*remote_client));
    }
    std::vector<cache::InformerFactory*> factories = {&informers};
    for (auto& [name, factory] : remote_informers) factories.push_back(factory.get());
    // One event recorder per controller: its component is the Events' source.
    std::vector<std::unique_ptr<runtime::EventRecorder>> recorders;
    // Built controllers, each with the factories whose caches it needs and whether it runs.
    struct Built {
      const ControllerDescriptor* descriptor;
      RunningController controller;
      std::vector<cache::InformerFactory*> needs;
      bool started = false;
    };
    std::vector<Built> built;
    // Which Kubernetes this cluster runs, for the controllers that write as its
    // kube-controller-manager does (the Endpoints controller's managed-by label, 1.33+).
    std::optional<client::ServerVersion> server_version;
    if (Result<client::ServerVersion> version = client.GetServerVersion(); version.ok()) {
      SW_LOG(kInfo, "controller-manager: the API server runs Kubernetes {}", version->git_version);
      server_version = *version;
    } else {
      SW_LOG(kWarning, "controller-manager: GET /version: {}; writing as the newest Kubernetes",
             version.status().ToString());
    }
    const auto create = [&](const ControllerDescriptor* descriptor) -> Status {
      runtime::EventRecorderOptions event_options;
      event_options.component = descriptor->component;
      event_options.metrics = &registry;
      Result<std::unique_ptr<runtime::EventRecorder>> recorder =
          runtime::EventRecorder::Create(runtime::NewRestEventSink(client), event_options);
      if (!recorder.ok()) return recorder.status();
      ControllerContext context{.options = options,
                                .external_endpoint_controller = external_endpoint_controller,
                                .local = {&client, &informers},
                                .remotes = {},
                                .events = recorder->get(),
                                .metrics = &registry,
                                .server_version = server_version,
                                .stop = stop};
      std::vector<cache::InformerFactory*> needs = {&informers};
      if (descriptor->remotes) {
        for (const RemoteClusterConfig& remote : descriptor->remotes(options)) {
          cache::InformerFactory* factory = remote_informers.at(remote.name).get();
          context.remotes.emplace(remote.name, ClusterAccess{remotes.at(remote.name), factory});
          needs.push_back(factory);
        }
      }
      Result<RunningController> created = descriptor->create(context);
      if (!created.ok()) return created.status();
      recorders.push_back(std::move(recorder).value());
      built.push_back({descriptor, std::move(created).value(), std::move(needs)});
      return Status();
    };
    // A factory, once synced, stays so for the controllers built so far (a controller built later
    // may add informers to it: `synced_factories` is then cleared).
    std::set<cache::InformerFactory*> synced_factories;
    const auto factory_synced = [&synced_factories](cache::InformerFactory* factory) {
      if (synced_factories.contains(factory)) return true;
      // Short waits, so that one silent cluster does not delay checking the others.
      if (!factory->WaitForCacheSync(std::chrono::milliseconds(50))) return false;
      synced_factories.insert(factory);
      return true;
    };
    // Starts each built controller whose caches synced; returns when all run or at `stop`.
    const auto deadline = std::chrono::steady_clock::now() + options.cache_sync_timeout;
    bool warned = false;
    const auto start_when_synced = [&] {
      while (!stop.stop_requested()) {
        std::vector<std::string> waiting;
        std::vector<std::string> starting;
        for (Built& b : built) {
          if (b.started) continue;
          if (!std::ranges::all_of(b.needs, factory_synced)) {
            waiting.push_back(b.descriptor->name);
            continue;
          }
          if (stop.stop_requested()) return;
          b.controller.start();
          b.started = true;
          starting.push_back(b.descriptor->name);
        }
        if (!starting.empty()) {
          SW_LOG(kInfo, "controller-manager: caches synced; running {}{}",
                 fmt::join(starting, ", "),
                 waiting.empty() ? "" : fmt::format(" (waiting: {})", fmt::join(waiting, ", ")));
        }
        if (waiting.empty()) return;
        // No busy loop: each waiting controller has an unsynced factory, which waited 50 ms.
        if (!warned && std::chrono::steady_clock::now() > deadline) {
          warned = true;
          SW_LOG(kWarning, "controller-manager: caches not synced after {} s for {}; still waiting",
                 options.cache_sync_timeout.count() / 1000, fmt::join(waiting, ", "));
        }
      }
    };
    Status failed;
    for (const bool remote : {false, true}) {
      for (const ControllerDescriptor* descriptor : controllers) {
        if (static_cast<bool>(descriptor->remotes) != remote || stop.stop_requested()) continue;
        if (const Status status = create(descriptor); !status.ok()) {
          failed = Status(status.code(), descriptor->name + ": " + status.ToString());
          break;
        }
      }
      if (!failed.ok() || stop.stop_requested()) break;
      synced_factories.clear();
      for (cache::InformerFactory* factory : factories) factory->Start();
      start_when_synced();
    }
    if (!failed.ok() && stop.stop_requested()) {
      SW_LOG(kInfo, "controller-manager: stopped while building {}", failed.ToString());
    } else if (!failed.ok()) {
      SW_LOG(kError, "controller-manager: {}", failed.ToString());
    } else if (!stop.stop_requested()) {
      synced = true;
    }
    WaitForStop(stop);
    synced = false;
    // Drain the syncs in flight before the Lease goes.
    for (const Built& b : built) b.controller.stop();
    for (cache::InformerFactory* factory : factories) factory->Stop();
    for (const auto& recorder : recorders) recorder->ShutDown();
  }
};

Manager::Manager(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Manager::~Manager() {
  if (impl_->endpoint != nullptr) impl_->endpoint->Stop();
}

Result<std::unique_ptr<Manager>> Manager::Create(ManagerOptions options, client::RestClient& client,
                                                 RemoteClients remotes,
                                                 const ControllerTable& table) {
  SW_ASSIGN_OR_RETURN(std::vector<std::string> names,
                      SelectControllers(options.controllers, table));
  SW_ASSIGN_OR_RETURN(auto gates, ParseFeatureGates(options.feature_gates));
  if (options.leader_elect) {
    if (options.lease_duration <= options.renew_deadline) {
      return Status(
          StatusCode::kInvalid,
          "--leader-elect-lease-duration must be greater than --leader-elect-renew-deadline");
    }
    if (options.renew_deadline.count() * 10 <= options.retry_period.count() * 12) {
      return Status(StatusCode::kInvalid,
                    "--leader-elect-renew-deadline must be greater than 1.2 x "
                    "--leader-elect-retry-period");
    }
  }
  if (options.leader_elect_name.empty()) options.leader_elect_name = DefaultLeaseName(names);
  auto impl = std::make_unique<Impl>(std::move(options), client, table);
  impl->external_endpoint_controller = gates.at(std::string(kExternalEndpointController));
  for (const std::string& name : names) {
    SW_ASSIGN_OR_RETURN(const ControllerDescriptor* descriptor, FindController(impl->table, name));
    if (descriptor->validate) SW_RETURN_IF_ERROR(descriptor->validate(impl->options));
    impl->controllers.push_back(descriptor);
  }
  SW_RETURN_IF_ERROR(impl->ConnectRemotes(std::move(remotes)));
  SW_RETURN_IF_ERROR(impl->BuildReplicaServices());
  SW_ASSIGN_OR_RETURN(
      runtime::Counter * bugs,
      impl->registry.AddCounter("slicewright_internal_bugs_total",
                                "Impossible states (SW_BUG) this process logged and survived; "
                                "any value above 0 is a bug to report"));
  impl->internal_bugs = impl->registry.OnCollect(
      [bugs] { bugs->Add(static_cast<double>(InternalBugCount()) - bugs->Value()); });
  // client-go's rest_client_requests_total, from each client's own counts: an operator (or a
  // test) sees a 403 from missing RBAC, or 429s, without reading logs.
  SW_ASSIGN_OR_RETURN(runtime::CounterFamily * requests,
                      impl->registry.AddCounterFamily(
                          "rest_client_requests_total",
                          "Number of HTTP requests, partitioned by status code, method, and host.",
                          {"code", "host", "method"}));
  impl->request_counts = impl->registry.OnCollect([raw = impl.get(), requests] {
    std::vector<client::RestClient*> clients = {&raw->client};
    for (const auto& [name, remote] : raw->remotes) clients.push_back(remote);
    for (client::RestClient* rest : clients) {
      const client::ServerUrl& server = rest->transport().config().server;
      const std::string host = server.host.find(':') != std::string::npos
                                   ? "[" + server.host + "]:" + std::to_string(server.port)
                                   : server.host + ":" + std::to_string(server.port);
      for (const client::RequestCount& count : rest->RequestCounts()) {
        Result<runtime::Counter*> counter =
            requests->WithLabelValues({count.code, host, count.method});
        if (counter.ok()) {
          (*counter)->Add(static_cast<double>(count.count) - (*counter)->Value());
        }
      }
    }
  });
  if (impl->options.port >= 0) {
    runtime::HttpEndpointOptions endpoint_options;
    endpoint_options.bind_address = impl->options.bind_address;
    endpoint_options.port = static_cast<std::uint16_t>(impl->options.port);
    endpoint_options.metrics = &impl->registry;
    SW_ASSIGN_OR_RETURN(impl->endpoint, runtime::HttpEndpoint::Create(endpoint_options));
    Impl* raw = impl.get();
    SW_RETURN_IF_ERROR(impl->endpoint->AddCheck("controllers",
                                                [raw]() -> Status {
                                                  if (raw->leading && !raw->synced) {
                                                    return Status(StatusCode::kUnavailable,
                                                                  "leading, caches not synced yet");
                                                  }
                                                  return Status();
                                                },
                                                {runtime::Probe::kReadyz}));
    // Each replica service's own check, so that a Service routing to what it serves (the MCS
    // DNS) can probe /readyz/<name> alone: a standby is ready to answer, a leader whose
    // controllers are still syncing too.
    for (const ReplicaService& service : impl->replica_services) {
      SW_RETURN_IF_ERROR(
          impl->endpoint->AddCheck(service.name, service.ready, {runtime::Probe::kReadyz}));
    }
    impl->endpoint->Start();
  }
  return std::unique_ptr<Manager>(new Manager(std::move(impl)));
}

Status Manager::Run(const std::stop_token& stop) {
  Impl& impl = *impl_;
  // What every replica serves runs beside the election, from before it to after the Lease is
  // released (the controllers drained), so it serves as long as the process does.
  std::stop_source replicas_stop;
  std::thread replicas;
  if (!impl.replica_services.empty()) {
    impl.replica_informers->Start();
    replicas =
        std::thread([&impl, token = replicas_stop.get_token(), name = ThreadName("replicas")] {
          name.Apply();
          impl.StartReplicaServicesWhenSynced(token);
        });
  }
  const Status result = impl.Campaign(stop);
  if (replicas.joinable()) {
    replicas_stop.request_stop();
    replicas.join();
    for (const ReplicaService& service : impl.replica_services) service.stop();
    impl.replica_informers->Stop();
  }
  return result;
}

Status Manager::Impl::Campaign(const std::stop_token& stop) {
  if (!options.leader_elect) {
    leading = true;
    RunControllers(stop);
    leading = false;
    return Status();
  }
  runtime::LeaderElectionConfig config;
  config.lease_namespace = options.leader_elect_namespace;
  config.lease_name = options.leader_elect_name;
  if (options.identity.empty()) {
    SW_ASSIGN_OR_RETURN(config.identity, runtime::DefaultIdentity());
  } else {
    config.identity = options.identity;
  }
  config.lease_duration = options.lease_duration;
  config.renew_deadline = options.renew_deadline;
  config.retry_period = options.retry_period;
  config.metrics = &registry;
  config.log = [](std::string_view message) { SW_VLOG(1, "leader election: {}", message); };
  std::atomic<bool> lost{false};
  config.callbacks.on_started_leading = [this](const std::stop_token& leading_stop) {
    SW_LOG(kInfo, "controller-manager: leading; starting controllers");
    leading = true;
    RunControllers(leading_stop);
    leading = false;
  };
  config.callbacks.on_stopped_leading = [&lost, stop] {
    if (!stop.stop_requested()) lost = true;
  };
  config.callbacks.on_new_leader = [identity = config.identity](const std::string& leader) {
    if (!leader.empty() && leader != identity) {
      SW_LOG(kInfo, "controller-manager: the leader is {}", leader);
    }
  };
  SW_ASSIGN_OR_RETURN(std::unique_ptr<runtime::LeaderElector> elector,
                      runtime::LeaderElector::Create(config, client, SystemClock::Get()));
  SW_LOG(kInfo, "controller-manager: campaigning for lease {}/{} as {}", config.lease_namespace,
         config.lease_name, config.identity);
  elector->Run(stop);
  if (lost) {
    return Status(StatusCode::kUnavailable, "leader election lost");
  }
  return Status();
}

std::uint16_t Manager::port() const {
  return impl_->endpoint != nullptr ? impl_->endpoint->port() : 0;
}

runtime::Registry& Manager::metrics() { return impl_->registry; }

std::vector<ReplicaServing> Manager::ServedByEveryReplica() const {
  std::vector<ReplicaServing> served;
  for (const ReplicaService& service : impl_->replica_services) {
    served.push_back({service.name, service.what, service.address});
  }
  return served;
}

bool Manager::Ready() const { return impl_->leading && impl_->synced; }

}  // namespace slicewright::controllers

#include "cli/dev_cluster.h"

#include <filesystem>
#include <utility>

#include "slicewright/base/clock.h"
#include "slicewright/base/log.h"
#include "slicewright/base/thread_name.h"
#include "slicewright/client/transport.h"

#include "cli/apiserver_command.h"

namespace slicewright::cli {

Result<std::unique_ptr<DevCluster>> DevCluster::Start(DevClusterOptions options) {
  std::unique_ptr<DevCluster> cluster(new DevCluster(std::move(options)));
  const DevClusterOptions& o = cluster->options_;
  const ScopedThreadNameMarker marker(o.thread_marker);
  const auto failed = [&o](std::string_view what, const Status& status) {
    return Status(status.code(), o.name.empty() ? fmt::format("{}: {}", what, status.ToString())
                                                : fmt::format("cluster {}: {}: {}", o.name, what,
                                                              status.ToString()));
  };
  std::error_code ignored;
  std::filesystem::create_directories(o.data_dir, ignored);

  apiserver::ServeOptions serve;
  serve.listen = o.listen;
  serve.data_dir = o.data_dir;
  // The MCS CRDs compiled in: `kubectl get serviceexports` works out of the box, and the broker
  // holds export records.
  serve.crds = apiserver::McsCrdManifests();
  if (const Status transport = ApplyTransportFlags(o.insecure_http, serve); !transport.ok()) {
    return failed("API server", transport);
  }
  Result<std::unique_ptr<apiserver::RunningApiServer>> server =
      apiserver::RunningApiServer::Start(std::move(serve));
  if (!server.ok()) return failed("API server", server.status());
  cluster->server_ = std::move(server).value();

  client::RestConfig config;
  // The components reach the server as any client does: over HTTPS, verifying it with the CA.
  config.server.scheme = o.insecure_http ? "http" : "https";
  config.server.host = "127.0.0.1";
  config.server.port = cluster->server_->port();
  config.tls.ca_pem = cluster->server_->ca_certificate_pem();
  config.tls.ca_source = "inline";
  client::TransportOptions transport_options;
  transport_options.user_agent = "slicewright-dev";
  Result<std::unique_ptr<client::Transport>> transport =
      client::Transport::Create(config, transport_options);
  if (!transport.ok()) return failed("client", transport.status());
  client::RestClientOptions client_options;
  // One process talking to its own server: no need for a production client's throttle. The
  // limit is scale_sim's for the controller; at 500 the client a ClusterSet member's components
  // share held 100 ServiceExports/s to ~75/s and the imports' p99 past 1 s (docs/performance.md).
  client_options.qps = 5000;
  client_options.burst = 10000;
  Result<std::unique_ptr<client::RestClient>> client = client::RestClient::Create(
      std::shared_ptr<client::Transport>(std::move(transport).value()), client_options);
  if (!client.ok()) return failed("client", client.status());
  cluster->client_ = std::move(client).value();
  if (!o.member) return cluster;

  controllers::podsim::PodSimulatorOptions simulator_options;
  simulator_options.nodes = o.nodes;
  simulator_options.ready_delay = o.ready_delay;
  simulator_options.pod_cidr_v4 = o.pod_cidr_v4;
  simulator_options.pod_cidr_v6 = o.pod_cidr_v6;
  Result<std::unique_ptr<controllers::podsim::PodSimulator>> simulator =
      controllers::podsim::PodSimulator::Create(simulator_options, *cluster->client_,
                                                SystemClock::Get());
  if (!simulator.ok()) return failed("pod simulator", simulator.status());
  cluster->simulator_ = std::move(simulator).value();
  if (const Status started = cluster->simulator_->Start(); !started.ok()) {
    return failed("pod simulator", started);
  }
  // Deployment, ReplicaSet and StatefulSet controllers, as kube-controller-manager's in a real
  // cluster (controller-manager does not offer them: it runs beside a real one).
  Result<std::unique_ptr<controllers::workloads::WorkloadControllers>> workloads =
      controllers::workloads::WorkloadControllers::Create({}, *cluster->client_,
                                                          SystemClock::Get());
  if (!workloads.ok()) return failed("workload controllers", workloads.status());
  cluster->workloads_ = std::move(workloads).value();
  if (const Status started = cluster->workloads_->Start(); !started.ok()) {
    return failed("workload controllers", started);
  }
  return cluster;
}

void DevCluster::RunControllers(controllers::RemoteClients remotes) {
  if (!options_.member || controllers_thread_.joinable()) return;
  const ScopedThreadNameMarker marker(options_.thread_marker);
  controllers::ManagerOptions manager_options = options_.manager;
  manager_options.leader_elect = false;
  manager_options.port = -1;
  Result<std::unique_ptr<controllers::Manager>> manager =
      controllers::Manager::Create(manager_options, *client_, std::move(remotes));
  if (!manager.ok()) {
    SW_LOG(kError, "slicewright dev: {}controllers: {}",
           options_.name.empty() ? "" : options_.name + ": ", manager.status().ToString());
    controllers_ended_ = true;
    return;
  }
  manager_ = std::move(manager).value();
  controllers_thread_ = std::thread([this, name = ThreadName("manager")] {
    name.Apply();
    const Status status = manager_->Run(stop_.get_token());
    if (!status.ok()) {
      SW_LOG(kError, "slicewright dev: {}controllers: {}",
             options_.name.empty() ? "" : options_.name + ": ", status.ToString());
    }
    controllers_ended_ = true;
  });
}

void DevCluster::Stop() {
  if (stopped_) return;
  stopped_ = true;
  stop_.request_stop();
  if (controllers_thread_.joinable()) controllers_thread_.join();
  if (workloads_ != nullptr) workloads_->Stop();
  if (simulator_ != nullptr) simulator_->Stop();
  if (server_ != nullptr) server_->Stop();
}

DevCluster::~DevCluster() { Stop(); }

}  // namespace slicewright::cli

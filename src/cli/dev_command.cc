#include "cli/dev_command.h"

#include <atomic>
#include <filesystem>
#include <memory>
#include <ostream>
#include <stop_token>
#include <thread>

#include <pthread.h>
#include <signal.h>
#include <time.h>

#include "slicewright/base/clock.h"
#include "slicewright/base/log.h"
#include "slicewright/client/rest_client.h"
#include "slicewright/client/transport.h"

#include "apiserver/rest/serve.h"
#include "cli/apiserver_command.h"
#include "cli/command.h"
#include "cli/controller_manager_command.h"
#include "controllers/manager/manager.h"
#include "controllers/podsim/simulator.h"
#include "controllers/workloads/controllers.h"

namespace slicewright::cli {

int RunDevCommand(const DevCommandOptions& options, std::ostream& out, std::ostream& err) {
  log::SetVerbosity(options.verbosity);
  Result<std::chrono::milliseconds> ready_delay = ParseGoDuration(options.ready_delay);
  if (!ready_delay.ok()) {
    err << "slicewright dev: --pod-ready-delay: " << ready_delay.status().ToString() << "\n";
    return 1;
  }
  if (options.port < 0 || options.port > 65535) {
    err << "slicewright dev: --port must be between 0 and 65535\n";
    return 1;
  }
  std::error_code ignored;
  std::filesystem::create_directories(options.data_dir, ignored);
  const std::string kubeconfig = options.data_dir + "/kubeconfig";

  // Blocked before the first thread starts, so only the sigtimedwait below receives them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  apiserver::ServeOptions serve;
  serve.listen = "127.0.0.1:" + std::to_string(options.port);
  serve.data_dir = options.data_dir;
  serve.kubeconfig_path = kubeconfig;
  serve.crds = apiserver::McsCrdManifests();  // kubectl get serviceexports works out of the box
  if (const Status transport = ApplyTransportFlags(options.insecure_http, serve); !transport.ok()) {
    err << "slicewright dev: " << transport.ToString() << "\n";
    return 1;
  }
  Result<std::unique_ptr<apiserver::RunningApiServer>> server =
      apiserver::RunningApiServer::Start(std::move(serve));
  if (!server.ok()) {
    err << "slicewright dev: " << server.status().ToString() << "\n";
    return 1;
  }

  client::RestConfig config;
  // The controllers reach the server as any client does: over HTTPS, verifying it with the CA.
  config.server.scheme = options.insecure_http ? "http" : "https";
  config.server.host = "127.0.0.1";
  config.server.port = (*server)->port();
  config.tls.ca_pem = (*server)->ca_certificate_pem();
  config.tls.ca_source = "inline";
  client::TransportOptions transport_options;
  transport_options.user_agent = "slicewright-dev";
  Result<std::unique_ptr<client::Transport>> transport =
      client::Transport::Create(config, transport_options);
  if (!transport.ok()) {
    err << "slicewright dev: " << transport.status().ToString() << "\n";
    return 1;
  }
  client::RestClientOptions client_options;
  // One process talking to its own server: no need for a production client's throttle.
  client_options.qps = 500;
  client_options.burst = 1000;
  Result<std::unique_ptr<client::RestClient>> client = client::RestClient::Create(
      std::shared_ptr<client::Transport>(std::move(transport).value()), client_options);
  if (!client.ok()) {
    err << "slicewright dev: " << client.status().ToString() << "\n";
    return 1;
  }

  controllers::ManagerOptions manager_options;
  manager_options.leader_elect = false;
  manager_options.port = -1;
  Result<std::unique_ptr<controllers::Manager>> manager =
      controllers::Manager::Create(manager_options, **client);
  if (!manager.ok()) {
    err << "slicewright dev: " << manager.status().ToString() << "\n";
    return 1;
  }
  controllers::podsim::PodSimulatorOptions simulator_options;
  simulator_options.nodes = options.nodes;
  simulator_options.ready_delay = *ready_delay;
  Result<std::unique_ptr<controllers::podsim::PodSimulator>> simulator =
      controllers::podsim::PodSimulator::Create(simulator_options, **client, SystemClock::Get());
  if (!simulator.ok()) {
    err << "slicewright dev: " << simulator.status().ToString() << "\n";
    return 1;
  }
  if (const Status started = (*simulator)->Start(); !started.ok()) {
    err << "slicewright dev: pod simulator: " << started.ToString() << "\n";
    return 1;
  }
  // Deployment, ReplicaSet and StatefulSet controllers, as kube-controller-manager's in a real
  // cluster (controller-manager does not offer them: it runs beside a real one).
  Result<std::unique_ptr<controllers::workloads::WorkloadControllers>> workloads =
      controllers::workloads::WorkloadControllers::Create({}, **client, SystemClock::Get());
  if (!workloads.ok()) {
    err << "slicewright dev: " << workloads.status().ToString() << "\n";
    return 1;
  }
  if (const Status started = (*workloads)->Start(); !started.ok()) {
    err << "slicewright dev: workload controllers: " << started.ToString() << "\n";
    return 1;
  }
  std::stop_source stop;
  std::atomic<bool> finished{false};
  std::thread controllers_thread([&] {
    const Status status = (*manager)->Run(stop.get_token());
    if (!status.ok()) SW_LOG(kError, "slicewright dev: controllers: {}", status.ToString());
    finished = true;
  });

  out << "slicewright dev: API server on " << (*server)->url() << ", " << options.nodes
      << " simulated nodes, controllers running\n"
      << "slicewright dev: kubeconfig written to " << kubeconfig << "; try:\n"
      << "  export KUBECONFIG=" << kubeconfig << "\n"
      << "  kubectl apply -f examples/dev/ && kubectl get endpointslices -w\n";
  out.flush();

  while (!finished) {
    timespec tick{0, 200'000'000};
    if (sigtimedwait(&signals, nullptr, &tick) > 0) break;
  }
  out << "slicewright dev: shutting down\n";
  out.flush();
  stop.request_stop();
  controllers_thread.join();
  (*workloads)->Stop();
  (*simulator)->Stop();
  (*server)->Stop();
  return 0;
}

namespace {

CommandSpec DevCommand() {
  auto options = std::make_shared<DevCommandOptions>();
  CommandSpec spec;
  spec.name = "dev";
  spec.description =
      "Run the embedded API server, every endpoint controller and a pod simulator in one "
      "process (for kubectl on this machine)";
  spec.flags = {
      {.names = "--data-dir",
       .help = "Directory for state.db and the kubeconfig",
       .target = &options->data_dir},
      {.names = "--port",
       .help = "API server port on 127.0.0.1 (0: any free port)",
       .target = &options->port},
      {.names = "--nodes",
       .help = "Simulated Nodes (zones a, b, c in turn)",
       .target = &options->nodes},
      {.names = "--pod-ready-delay",
       .help = "How long a new pod takes to become Ready (Go duration)",
       .target = &options->ready_delay},
      {.names = "--insecure-http",
       .help = "Serve plain HTTP, not HTTPS with a CA kept in DATA_DIR/tls",
       .target = &options->insecure_http,
       .show_default = false},
      {.names = "-v,--v", .help = "Log verbosity (klog levels)", .target = &options->verbosity},
  };
  spec.run = [options](const CommandContext& io) {
    return RunDevCommand(*options, io.out, io.err);
  };
  return spec;
}
SW_REGISTER_COMMAND(DevCommand);

}  // namespace

}  // namespace slicewright::cli

#include "cli/controller_manager_command.h"

#include <atomic>
#include <cmath>
#include <memory>
#include <ostream>
#include <thread>
#include <utility>

#include <pthread.h>
#include <signal.h>
#include <time.h>

#include "slicewright/base/log.h"
#include "slicewright/base/thread_name.h"
#include "slicewright/client/rest_client.h"
#include "slicewright/client/rest_config.h"
#include "slicewright/client/transport.h"

#include "cli/command.h"

namespace slicewright::cli {

int RunControllerManagerCommand(ControllerManagerCommandOptions options, std::ostream& out,
                                std::ostream& err) {
  log::SetVerbosity(options.verbosity);
  if (options.logging_format != "text" && options.logging_format != "json") {
    err << "slicewright controller-manager: --logging-format: want text or json, got "
        << options.logging_format << "\n";
    return 1;
  }
  log::SetJsonFormat(options.logging_format == "json");

  client::LoadOptions load;
  load.kubeconfig = options.kubeconfig;
  load.context = options.context;
  Result<client::RestConfig> config = client::LoadRestConfig(load);
  if (!config.ok()) {
    err << "slicewright controller-manager: " << config.status().ToString() << "\n";
    return 1;
  }
  SW_LOG(kInfo, "controller-manager: API server {}", config->DebugString());
  client::TransportOptions transport_options;
  transport_options.user_agent = "slicewright-controller-manager";
  Result<std::unique_ptr<client::Transport>> transport =
      client::Transport::Create(*config, transport_options);
  if (!transport.ok()) {
    err << "slicewright controller-manager: " << transport.status().ToString() << "\n";
    return 1;
  }
  client::RestClientOptions client_options;
  client_options.qps = options.kube_api_qps;
  client_options.burst = options.kube_api_burst;
  client_options.field_manager = "slicewright-controller-manager";
  Result<std::unique_ptr<client::RestClient>> client = client::RestClient::Create(
      std::shared_ptr<client::Transport>(std::move(transport).value()), client_options);
  if (!client.ok()) {
    err << "slicewright controller-manager: " << client.status().ToString() << "\n";
    return 1;
  }
  // Blocked before the first thread starts, so every thread inherits the mask and only the
  // sigtimedwait below receives them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  Result<std::unique_ptr<controllers::Manager>> manager =
      controllers::Manager::Create(options.manager, **client);
  if (!manager.ok()) {
    err << "slicewright controller-manager: " << manager.status().ToString() << "\n";
    return 1;
  }
  if ((*manager)->port() != 0) {
    out << "slicewright controller-manager: serving /metrics, /healthz, /readyz on "
        << options.manager.bind_address << ":" << (*manager)->port() << "\n";
  }
  // Bound already, leader or not (answering once their caches synced: /readyz/<name>).
  for (const controllers::ReplicaServing& served : (*manager)->ServedByEveryReplica()) {
    out << "slicewright controller-manager: serving " << served.what << " on " << served.address
        << " from every replica\n";
  }
  out.flush();

  std::stop_source stop;
  std::atomic<bool> finished{false};
  Status result;
  std::thread runner([&, name = ThreadName("manager")] {
    name.Apply();
    result = (*manager)->Run(stop.get_token());
    finished = true;
  });
  // Wait for a signal or for Run() to end by itself (a lost Lease).
  while (!finished) {
    timespec tick{0, 200'000'000};
    const int received = sigtimedwait(&signals, nullptr, &tick);
    if (received > 0) {
      SW_LOG(kInfo, "controller-manager: received signal {}; draining and releasing the lease",
             received);
      stop.request_stop();
      break;
    }
  }
  runner.join();
  if (!result.ok()) {
    err << "slicewright controller-manager: " << result.ToString() << "\n";
    return 1;
  }
  return 0;
}

namespace {

CommandSpec ControllerManagerCommand() {
  auto options = std::make_shared<ControllerManagerCommandOptions>();
  controllers::ManagerOptions& manager = options->manager;
  CommandSpec spec;
  spec.name = "controller-manager";
  spec.description =
      "Run the endpoint controllers (KEP-4770-aware replacements of kube-controller-manager's)";
  spec.flags = {
      {.names = "--kubeconfig",
       .help = "Path to a kubeconfig (else $KUBECONFIG, ~/.kube/config, in-cluster)",
       .target = &options->kubeconfig,
       .show_default = false},
      {.names = "--context",
       .help = "The kubeconfig context to use",
       .target = &options->context,
       .show_default = false},
      {.names = "--controllers",
       .help = "Controllers to run: '*' for those enabled by default, 'name' to add, '-name' to "
               "remove",
       .target = &manager.controllers,
       .delimiter = ','},
      {.names = "--feature-gates",
       .help = "key=value pairs; known: ExternalEndpointController=true|false (default true)",
       .target = &manager.feature_gates,
       .show_default = false},
      {.names = "--kube-api-qps",
       .help = "QPS to the API server",
       .target = &options->kube_api_qps},
      {.names = "--kube-api-burst",
       .help = "Burst to the API server",
       .target = &options->kube_api_burst},
      {.names = "--leader-elect",
       .help = "Elect a leader on a Lease before running the controllers (on by default, as "
               "kube-controller-manager's; --leader-elect=false runs them at once)",
       .target = &manager.leader_elect},
      {.names = "--leader-elect-lease-duration", .target = &manager.lease_duration},
      {.names = "--leader-elect-renew-deadline", .target = &manager.renew_deadline},
      {.names = "--leader-elect-retry-period", .target = &manager.retry_period},
      {.names = "--leader-elect-resource-namespace", .target = &manager.leader_elect_namespace},
      {.names = "--leader-elect-resource-name",
       .help = "The Lease's name (default: slicewright-mcs-agent when --controllers is mcs "
               "alone, else slicewright-controller-manager)",
       .target = &manager.leader_elect_name,
       .show_default = false},
      {.names = "--bind-address",
       .help = "Address of /metrics, /healthz, /livez and /readyz",
       .target = &manager.bind_address},
      {.names = "--port", .help = "Their port; -1 serves nothing", .target = &manager.port},
      {.names = "-v,--v", .help = "Log verbosity (klog levels)", .target = &options->verbosity},
      {.names = "--logging-format", .help = "text or json", .target = &options->logging_format},
  };
  // Each controller's own flags, from its descriptor (controllers/manager/table.cc).
  for (FlagSpec& flag : controllers::ControllerFlags(controllers::BuiltinControllers(), manager)) {
    spec.flags.push_back(std::move(flag));
  }
  spec.run = [options](const CommandContext& io) {
    return RunControllerManagerCommand(*options, io.out, io.err);
  };
  return spec;
}
SW_REGISTER_COMMAND(ControllerManagerCommand);

}  // namespace

}  // namespace slicewright::cli

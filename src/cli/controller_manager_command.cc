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
#include "slicewright/client/rest_client.h"
#include "slicewright/client/rest_config.h"
#include "slicewright/client/transport.h"

#include "cli/command.h"

namespace slicewright::cli {

Result<std::chrono::milliseconds> ParseGoDuration(std::string_view text) {
  const std::string original(text);
  const auto invalid = [&original] {
    return Status(StatusCode::kInvalid, "invalid duration \"" + original + "\"");
  };
  if (text == "0") return std::chrono::milliseconds(0);
  if (text.empty()) return invalid();
  double total_ns = 0;
  while (!text.empty()) {
    std::size_t digits = 0;
    while (digits < text.size() &&
           ((text[digits] >= '0' && text[digits] <= '9') || text[digits] == '.')) {
      ++digits;
    }
    if (digits == 0) return invalid();
    const std::string number(text.substr(0, digits));
    if (number == "." || std::count(number.begin(), number.end(), '.') > 1) return invalid();
    const double value = std::strtod(number.c_str(), nullptr);
    text.remove_prefix(digits);
    std::size_t unit_length = 0;
    while (unit_length < text.size() &&
           !((text[unit_length] >= '0' && text[unit_length] <= '9') || text[unit_length] == '.')) {
      ++unit_length;
    }
    const std::string_view unit = text.substr(0, unit_length);
    text.remove_prefix(unit_length);
    double scale = 0;
    if (unit == "ns") {
      scale = 1;
    } else if (unit == "us" || unit == "\xC2\xB5s" || unit == "\xCE\xBCs") {
      scale = 1e3;
    } else if (unit == "ms") {
      scale = 1e6;
    } else if (unit == "s") {
      scale = 1e9;
    } else if (unit == "m") {
      scale = 60e9;
    } else if (unit == "h") {
      scale = 3600e9;
    } else {
      return invalid();
    }
    total_ns += value * scale;
  }
  if (!std::isfinite(total_ns) || total_ns > 1e18) return invalid();
  return std::chrono::milliseconds(static_cast<std::int64_t>(total_ns / 1e6));
}

int RunControllerManagerCommand(ControllerManagerCommandOptions options, std::ostream& out,
                                std::ostream& err) {
  log::SetVerbosity(options.verbosity);
  if (options.logging_format != "text" && options.logging_format != "json") {
    err << "slicewright controller-manager: --logging-format: want text or json, got "
        << options.logging_format << "\n";
    return 1;
  }
  log::SetJsonFormat(options.logging_format == "json");

  const std::pair<const std::string*, std::chrono::milliseconds*> durations[] = {
      {&options.lease_duration, &options.manager.lease_duration},
      {&options.renew_deadline, &options.manager.renew_deadline},
      {&options.retry_period, &options.manager.retry_period},
      {&options.batch_period, &options.manager.endpointslice.batch_period},
      {&options.endpoints_batch_period, &options.manager.endpoints.batch_period},
      {&options.mirroring_batch_period, &options.manager.mirroring.batch_period},
  };
  for (const auto& [text, target] : durations) {
    Result<std::chrono::milliseconds> parsed = ParseGoDuration(*text);
    if (!parsed.ok()) {
      err << "slicewright controller-manager: " << parsed.status().ToString() << "\n";
      return 1;
    }
    *target = *parsed;
  }

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
  out.flush();

  std::stop_source stop;
  std::atomic<bool> finished{false};
  Status result;
  std::thread runner([&] {
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
       .help = "Controllers to run: '*' for all, 'name' to add, '-name' to remove",
       .target = &manager.controllers,
       .delimiter = ','},
      {.names = "--feature-gates",
       .help = "key=value pairs; known: ExternalEndpointController=true|false (default true)",
       .target = &manager.feature_gates,
       .show_default = false},
      {.names = "--concurrent-service-endpoint-syncs",
       .help = "Services synced at once by the EndpointSlice controller (1-50)",
       .target = &manager.endpointslice.concurrent_syncs},
      {.names = "--max-endpoints-per-slice",
       .help = "The maximum number of endpoints added to an EndpointSlice (1-1000)",
       .target = &manager.endpointslice.max_endpoints_per_slice},
      {.names = "--endpointslice-updates-batch-period",
       .help = "How long pod changes are batched before a Service sync (Go duration)",
       .target = &options->batch_period},
      {.names = "--endpointslice-incremental-min-pods",
       .help = "slicewright: Services with at least this many pods keep their derived endpoints "
               "between syncs (about 1.6 KB per pod), so a pod event re-derives one pod; 0: off",
       .target = &manager.endpointslice.incremental_min_pods},
      {.names = "--concurrent-endpoint-syncs",
       .help = "Services synced at once by the Endpoints controller",
       .target = &manager.endpoints.concurrent_syncs},
      {.names = "--endpoint-updates-batch-period",
       .help = "How long pod changes are batched before an Endpoints sync (Go duration)",
       .target = &options->endpoints_batch_period},
      {.names = "--mirroring-concurrent-service-endpoint-syncs",
       .help = "Services synced at once by the EndpointSlice mirroring controller (1-50)",
       .target = &manager.mirroring.concurrent_syncs},
      {.names = "--mirroring-max-endpoints-per-subset",
       .help = "The maximum number of endpoints mirrored per Endpoints subset (1-1000)",
       .target = &manager.mirroring.max_endpoints_per_subset},
      {.names = "--mirroring-endpointslice-updates-batch-period",
       .help = "How long Endpoints changes are batched before mirroring (Go duration)",
       .target = &options->mirroring_batch_period},
      {.names = "--controller-name",
       .help = "The endpointslice.kubernetes.io/managed-by value of our slices",
       .target = &manager.endpointslice.managed_by},
      {.names = "--kube-api-qps",
       .help = "QPS to the API server",
       .target = &options->kube_api_qps},
      {.names = "--kube-api-burst",
       .help = "Burst to the API server",
       .target = &options->kube_api_burst},
      {.names = "--leader-elect",
       .help = "Elect a leader on a Lease before running the controllers",
       .target = &manager.leader_elect},
      {.names = "--leader-elect-lease-duration", .target = &options->lease_duration},
      {.names = "--leader-elect-renew-deadline", .target = &options->renew_deadline},
      {.names = "--leader-elect-retry-period", .target = &options->retry_period},
      {.names = "--leader-elect-resource-namespace", .target = &manager.leader_elect_namespace},
      {.names = "--leader-elect-resource-name", .target = &manager.leader_elect_name},
      {.names = "--bind-address",
       .help = "Address of /metrics, /healthz, /livez and /readyz",
       .target = &manager.bind_address},
      {.names = "--port", .help = "Their port; -1 serves nothing", .target = &manager.port},
      {.names = "-v,--v", .help = "Log verbosity (klog levels)", .target = &options->verbosity},
      {.names = "--logging-format", .help = "text or json", .target = &options->logging_format},
  };
  spec.run = [options](const CommandContext& io) {
    return RunControllerManagerCommand(*options, io.out, io.err);
  };
  return spec;
}
SW_REGISTER_COMMAND(ControllerManagerCommand);

}  // namespace

}  // namespace slicewright::cli

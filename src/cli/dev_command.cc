#include "cli/dev_command.h"

#include <filesystem>
#include <fstream>
#include <memory>
#include <ostream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "slicewright/base/duration.h"
#include "slicewright/base/log.h"
#include "slicewright/client/typed_client.h"
#include "slicewright/codec/json.h"
#include "slicewright/model/mcs.h"

#include "apiserver/rest/serve.h"
#include "cli/command.h"
#include "cli/dev_cluster.h"
#include "controllers/mcs/kinds.h"

namespace slicewright::cli {

namespace {

// Pod CIDRs of member cluster `index` (0-based): distinct per cluster, so that pod IPs are unique
// in the ClusterSet; the first is the single-cluster dev's.
std::pair<std::string, std::string> PodCidrs(int index) {
  return {
      fmt::format("10.{}.0.0/16", 244 + index),
      index == 0 ? std::string("fd00:10:244::/64") : fmt::format("fd00:10:244:{:x}::/64", index)};
}

// `count` loopback ports, each free for both UDP and TCP when chosen (the members' clusterset.local
// DNS, spec §9): every socket is held until all are chosen, so no two are the same. Empty when
// the system has none to give.
std::vector<int> FreeLoopbackPorts(int count) {
  std::vector<int> ports;
  std::vector<int> held;
  for (int tries = 0; static_cast<int>(ports.size()) < count && tries < 100 * count; ++tries) {
    const int tcp = socket(AF_INET, SOCK_STREAM, 0);
    const int udp = socket(AF_INET, SOCK_DGRAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(address);
    // The sockets API takes the IPv4 address through its generic type.
    auto* generic = reinterpret_cast<sockaddr*>(&address);  // NOLINT
    if (tcp >= 0 && udp >= 0 && bind(tcp, generic, sizeof(address)) == 0 &&
        getsockname(tcp, generic, &length) == 0 && bind(udp, generic, sizeof(address)) == 0) {
      ports.push_back(ntohs(address.sin_port));
    }
    held.push_back(tcp);
    held.push_back(udp);
  }
  for (const int fd : held) {
    if (fd >= 0) close(fd);
  }
  if (static_cast<int>(ports.size()) < count) ports.clear();
  return ports;
}

// DIR/dev.json: where each cluster and the broker listen (and each member's clusterset.local DNS
// answers: `dns`), for scripts and tests.
Status WriteDevJson(const std::string& path,
                    const std::vector<std::unique_ptr<DevCluster>>& members,
                    const std::vector<std::string>& dns, DevCluster* broker) {
  const auto entry = [](DevCluster& cluster) {
    return fmt::format("{{\"name\": {0}, \"context\": {0}, \"server\": {1}",
                       codec::QuoteJsonString(cluster.name()),
                       codec::QuoteJsonString(cluster.server().url()));
  };
  std::string json = "{\"clusters\": [";
  for (std::size_t i = 0; i < members.size(); ++i) {
    json += (i == 0 ? "\n    " : ",\n    ") + entry(*members[i]);
    if (i < dns.size()) json += ", \"dns\": " + codec::QuoteJsonString(dns[i]);
    json += "}";
  }
  json += "\n  ]";
  if (broker != nullptr) json += ",\n  \"broker\": " + entry(*broker) + "}";
  json += "\n}\n";
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::trunc);
    if (!out || !(out << json) || !out.flush()) {
      return Status(StatusCode::kInvalid, "cannot write " + temporary);
    }
  }
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);
  if (ec) return Status(StatusCode::kInvalid, "cannot write " + path + ": " + ec.message());
  return Status();
}

// What a ClusterSet's admin sets up before the agents start: the broker's namespace, and each
// member's ClusterProperties naming it (id.k8s.io and cluster.clusterset.k8s.io = its name;
// clusterset.k8s.io = the ClusterSet's). Objects that exist are left as they are.
Status PrepareClusterSet(const std::vector<std::unique_ptr<DevCluster>>& members,
                         DevCluster& broker) {
  const auto ignore_exists = [](const Status& status) {
    return status.code() == StatusCode::kAlreadyExists ? Status() : status;
  };
  model::Namespace broker_namespace;
  broker_namespace.metadata.name = std::string(model::kDefaultBrokerNamespace);
  SW_RETURN_IF_ERROR(
      ignore_exists(client::TypedClient<model::Namespace>(broker.client(), client::NamespaceCodec())
                        .Create(broker_namespace)
                        .status()));
  for (const auto& member : members) {
    client::TypedClient<model::ClusterProperty> properties(
        member->client(), controllers::mcs::ClusterPropertyCodec());
    const std::pair<std::string_view, std::string> wanted[] = {
        {model::kClusterPropertyId, member->name()},
        {model::kClusterPropertyClusterId, member->name()},
        {model::kClusterPropertyClusterSet, "slicewright-dev"},
    };
    for (const auto& [property_name, value] : wanted) {
      model::ClusterProperty property;
      property.metadata.name = std::string(property_name);
      property.value = value;
      const Status created = ignore_exists(properties.Create(property).status());
      if (!created.ok()) {
        return Status(created.code(),
                      fmt::format("cluster {}: ClusterProperty {}: {}", member->name(),
                                  property_name, created.ToString()));
      }
    }
  }
  return Status();
}

}  // namespace

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
  if (options.clusters < 1 || options.clusters > kMaxDevClusters) {
    err << "slicewright dev: --clusters must be between 1 and " << kMaxDevClusters << "\n";
    return 1;
  }
  const bool multi_cluster = options.clusters > 1;
  std::error_code ignored;
  std::filesystem::create_directories(options.data_dir, ignored);
  const std::string kubeconfig = options.data_dir + "/kubeconfig";

  // Blocked before the first thread starts, so only the sigtimedwait below receives them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  // With --clusters N: a broker API server (the ClusterSet's shared records) and N members, each
  // in DIR/<name> on a free port; with one cluster, today's single server in DIR on --port.
  std::unique_ptr<DevCluster> broker;
  if (multi_cluster) {
    DevClusterOptions broker_options;
    broker_options.name = "broker";
    broker_options.thread_marker = "bk-";
    broker_options.data_dir = options.data_dir + "/broker";
    broker_options.insecure_http = options.insecure_http;
    broker_options.member = false;
    Result<std::unique_ptr<DevCluster>> started = DevCluster::Start(std::move(broker_options));
    if (!started.ok()) {
      err << "slicewright dev: " << started.status().ToString() << "\n";
      return 1;
    }
    broker = std::move(started).value();
  }
  // Each member's MCS agent answers clusterset.local on its own loopback port (dev.json "dns").
  std::vector<std::string> dns;
  if (multi_cluster) {
    for (const int port : FreeLoopbackPorts(options.clusters)) {
      dns.push_back(fmt::format("127.0.0.1:{}", port));
    }
    if (static_cast<int>(dns.size()) != options.clusters) {
      err << "slicewright dev: no free loopback ports for the clusters' DNS\n";
      return 1;
    }
  }
  std::vector<std::unique_ptr<DevCluster>> members;
  for (int i = 0; i < options.clusters; ++i) {
    DevClusterOptions member;
    member.name = multi_cluster ? fmt::format("cluster-{}", i + 1) : "";
    member.thread_marker = multi_cluster ? fmt::format("c{}-", i + 1) : "";
    member.data_dir = multi_cluster ? options.data_dir + "/" + member.name : options.data_dir;
    member.listen = "127.0.0.1:" + std::to_string(multi_cluster ? 0 : options.port);
    member.insecure_http = options.insecure_http;
    member.nodes = options.nodes;
    member.ready_delay = *ready_delay;
    std::tie(member.pod_cidr_v4, member.pod_cidr_v6) = PodCidrs(i);
    if (multi_cluster) {
      // Every member runs the MCS agent against the broker; its id is its ClusterProperty.
      member.manager.controllers = {"*", "mcs"};
      member.manager.mcs.cluster_id = member.name;
      member.manager.mcs.dns_address = dns[static_cast<std::size_t>(i)];
    }
    Result<std::unique_ptr<DevCluster>> started = DevCluster::Start(std::move(member));
    if (!started.ok()) {
      err << "slicewright dev: " << started.status().ToString() << "\n";
      return 1;
    }
    members.push_back(std::move(started).value());
  }

  std::vector<apiserver::KubeconfigContext> contexts;
  for (const auto& member : members) {
    contexts.push_back(
        member->server().kubeconfig_context(multi_cluster ? member->name() : "slicewright"));
  }
  if (broker != nullptr) {
    contexts.push_back(broker->server().kubeconfig_context(broker->name()));
  }
  if (const Status written = apiserver::WriteKubeconfig(kubeconfig, contexts, contexts[0].name);
      !written.ok()) {
    err << "slicewright dev: " << written.ToString() << "\n";
    return 1;
  }
  if (multi_cluster) {
    if (const Status written =
            WriteDevJson(options.data_dir + "/dev.json", members, dns, broker.get());
        !written.ok()) {
      err << "slicewright dev: " << written.ToString() << "\n";
      return 1;
    }
  }
  if (multi_cluster) {
    if (const Status prepared = PrepareClusterSet(members, *broker); !prepared.ok()) {
      err << "slicewright dev: " << prepared.ToString() << "\n";
      return 1;
    }
  }
  controllers::RemoteClients remotes;
  if (broker != nullptr) remotes.emplace("broker", &broker->client());
  for (const auto& member : members) member->RunControllers(remotes);

  if (multi_cluster) {
    out << "slicewright dev: " << options.clusters << " clusters and a broker, " << options.nodes
        << " simulated nodes each, controllers running:\n";
    for (std::size_t i = 0; i < members.size(); ++i) {
      out << "  " << members[i]->name() << ": " << members[i]->server().url()
          << " (clusterset.local DNS on " << dns[i] << ")\n";
    }
    out << "  broker: " << broker->server().url() << "\n"
        << "slicewright dev: kubeconfig (contexts cluster-1.." << options.clusters
        << ", broker) written to " << kubeconfig << "; try:\n"
        << "  export KUBECONFIG=" << kubeconfig << "\n"
        << "  kubectl --context cluster-2 get nodes\n";
  } else {
    out << "slicewright dev: API server on " << members[0]->server().url() << ", " << options.nodes
        << " simulated nodes, controllers running\n"
        << "slicewright dev: kubeconfig written to " << kubeconfig << "; try:\n"
        << "  export KUBECONFIG=" << kubeconfig << "\n"
        << "  kubectl apply -f examples/dev/ && kubectl get endpointslices -w\n";
  }
  out.flush();

  const auto any_ended = [&members] {
    for (const auto& member : members) {
      if (member->ControllersEnded()) return true;
    }
    return false;
  };
  while (!any_ended()) {
    timespec tick{0, 200'000'000};
    if (sigtimedwait(&signals, nullptr, &tick) > 0) break;
  }
  out << "slicewright dev: shutting down\n";
  out.flush();
  // Members first: their controllers write to the broker until they stop.
  for (const auto& member : members) member->Stop();
  if (broker != nullptr) broker->Stop();
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
      {.names = "--clusters",
       .help = "Member clusters: more than 1 runs a ClusterSet (each cluster on its own free "
               "port in DIR/cluster-N, plus a broker in DIR/broker; contexts cluster-1.. and "
               "broker in DIR/kubeconfig; DIR/dev.json lists them)",
       .target = &options->clusters},
      {.names = "--nodes",
       .help = "Simulated Nodes per cluster (zones a, b, c in turn)",
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

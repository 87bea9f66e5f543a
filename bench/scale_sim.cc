// scale_sim: the clusterloader2 "load" shape against the EndpointSlice controller (issue #5 §6;
// results and method in docs/performance.md). A standalone program, not Google Benchmark: it starts
// `slicewright apiserver` and then `slicewright controller-manager --controllers endpointslice` as
// child processes on a fresh data directory, and measures them from outside:
//   load       N Nodes (3 zones), deployments of 250/30/5 pods (0.5% / 5.1% / the rest), every
//              other one with a Service; each pod created then given Running/Ready status, as a
//              kubelet would (2 writes per pod)
//   cold       the controller started on that state: time until its slices hold every pod as
//              ready (all Services reconciled), its CPU and peak RSS
//   restart    the controller restarted on its own slices: time until every Service has been
//              synced (its endpoint_slice_controller_syncs), and how many slice writes that took
//   churn      R pod events/s for D seconds: a pod created (not ready), a pod made Ready, a pod
//              deleted, in turn; per Ready: the time from the status write to the driver seeing
//              the endpoint ready in a slice (p50/p99); slice writes per pod event; controller CPU
// The driver watches EndpointSlices with the library's own informer. One result line per phase on
// stdout; progress on stderr. Exit 1 when a phase fails (a write fails, slices never converge),
// not when a target is missed.
//
// Usage: scale_sim [--server PATH] [--nodes N] [--pods N] [--services N] [--rate N]
//                  [--churn-seconds N] [--clients N] [--qps N] [--batch-period DURATION] [--smoke]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include <signal.h>
#include <unistd.h>

#include "slicewright/base/result.h"
#include "slicewright/cache/informer.h"
#include "slicewright/client/rest_client.h"
#include "slicewright/client/rest_config.h"
#include "slicewright/client/transport.h"
#include "slicewright/client/typed_client.h"
#include "slicewright/model/well_known.h"

#include "driver.h"
#include "workload.h"

namespace {

using namespace slicewright;
using bench::Child;
using bench::HttpPod;
using bench::HttpService;
using bench::ParallelFor;
using bench::Percentile;
using bench::SecondsSince;
using bench::SetStatus;
using bench::SteadyClock;
using bench::UnthrottledClient;

struct Options {
  std::string server = "build/h-bench/src/cli/slicewright";
  int nodes = 5000;
  int pods = 150000;
  int services = 10000;
  int rate = 10;  // pod events per second during churn
  int churn_seconds = 60;
  int clients = 8;
  int qps = 5000;  // the controller's --kube-api-qps (and burst)
  std::string batch_period = "0s";
};

constexpr int kNamespaces = 10;

struct Deployment {
  std::string namespace_;
  std::string name;
  int replicas = 0;
  bool has_service = false;
};

// clusterloader2's load mix for `services` Services: twice as many deployments, 0.5% big (250
// pods), 5.1% medium (30), the rest small (5), scaled so the pod total is near `pods`.
std::vector<Deployment> PlanDeployments(const Options& options) {
  const int deployments = std::max(2, 2 * options.services);
  const int big = std::max(1, deployments / 200);
  const int medium = std::max(1, deployments * 51 / 1000);
  const int small = std::max(0, deployments - big - medium);
  const double unscaled = 250.0 * big + 30.0 * medium + 5.0 * small;
  const double scale = options.pods / unscaled;
  std::vector<Deployment> out;
  for (int i = 0; i < deployments; ++i) {
    const int size = i < big ? 250 : i < big + medium ? 30 : 5;
    Deployment d;
    d.namespace_ = "load-" + std::to_string(i % kNamespaces);
    d.name = "dep-" + std::to_string(i);
    d.replicas = std::max(1, static_cast<int>(size * scale + 0.5));
    d.has_service = i % 2 == 0;
    out.push_back(std::move(d));
  }
  return out;
}

// Pod IPs as cluster 1's (workload.h).
std::string PodIp(std::int64_t index) { return bench::PodIp(1, index); }

model::Pod MakePod(const Deployment& d, const std::string& name, int node) {
  return HttpPod(d.namespace_, name, d.name, "node-" + std::to_string(node));
}

// What the driver sees of the controller's slices, kept by an informer handler.
class SliceWatcher {
 public:
  void OnSlice(const model::EndpointSlice& slice, bool deleted) {
    std::lock_guard lock(mu_);
    ++writes_;
    const std::string key = slice.metadata.namespace_ + "/" + slice.metadata.name;
    auto service = slice.metadata.labels.find(std::string(model::kLabelServiceName));
    const std::string service_key =
        slice.metadata.namespace_ + "/" +
        (service == slice.metadata.labels.end() ? std::string() : service->second);
    std::int64_t& service_ready = ready_by_service_[service_key];
    auto old = ready_by_slice_.find(key);
    if (old != ready_by_slice_.end()) {
      service_ready -= old->second;
      total_ready_ -= old->second;
      ready_by_slice_.erase(old);
    }
    if (deleted) return;
    std::int64_t ready = 0;
    const auto now = SteadyClock::now();
    for (const model::Endpoint& endpoint : slice.endpoints) {
      if (!endpoint.conditions.ready.value_or(true) || endpoint.addresses.empty()) continue;
      ++ready;
      auto waiting = awaiting_ready_.find(endpoint.addresses.front());
      if (waiting != awaiting_ready_.end()) {
        latencies_ms_.push_back(
            std::chrono::duration<double, std::milli>(now - waiting->second).count());
        awaiting_ready_.erase(waiting);
      }
    }
    ready_by_slice_[key] = ready;
    service_ready += ready;
    total_ready_ += ready;
  }

  void AwaitReady(const std::string& ip, SteadyClock::time_point since) {
    std::lock_guard lock(mu_);
    awaiting_ready_[ip] = since;
  }

  std::int64_t TotalReady() const {
    std::lock_guard lock(mu_);
    return total_ready_;
  }
  std::int64_t Writes() const {
    std::lock_guard lock(mu_);
    return writes_;
  }
  std::vector<double> TakeLatencies(std::size_t* still_waiting) {
    std::lock_guard lock(mu_);
    *still_waiting = awaiting_ready_.size();
    return std::exchange(latencies_ms_, {});
  }

 private:
  mutable std::mutex mu_;
  std::unordered_map<std::string, std::int64_t> ready_by_slice_;
  std::unordered_map<std::string, std::int64_t> ready_by_service_;
  std::unordered_map<std::string, SteadyClock::time_point> awaiting_ready_;
  std::vector<double> latencies_ms_;
  std::int64_t total_ready_ = 0;
  std::int64_t writes_ = 0;
};

// endpoint_slice_controller_syncs summed over results, from the controller's /metrics.
Result<double> ScrapeSyncs(client::Transport& metrics) {
  client::Request request;
  request.target = "/metrics";
  request.accept = "text/plain";
  SW_ASSIGN_OR_RETURN(client::Response response, metrics.Do(request));
  if (response.status != 200) {
    return Status(StatusCode::kUnavailable, "/metrics answered " + std::to_string(response.status));
  }
  double total = 0;
  std::istringstream lines(response.body);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.starts_with("endpoint_slice_controller_syncs{") ||
        line.starts_with("endpoint_slice_controller_syncs ")) {
      total += std::atof(line.c_str() + line.rfind(' ') + 1);
    }
  }
  return total;
}

class Simulation {
 public:
  explicit Simulation(Options options) : options_(std::move(options)) {}

  int Run() {
    root_ = std::filesystem::temp_directory_path() / ("scale_sim." + std::to_string(::getpid()));
    std::filesystem::create_directories(root_);
    const int code = RunPhases();
    controller_.reset();
    apiserver_.reset();
    if (code == 0) {
      std::filesystem::remove_all(root_);
    } else {
      std::cerr << "scale_sim: kept " << root_ << " for inspection\n";
    }
    return code;
  }

 private:
  int Fail(const std::string& phase, const Status& status) {
    std::cerr << "scale_sim: " << phase << ": " << status.ToString() << "\n";
    if (controller_ != nullptr) std::cerr << controller_->LogTail() << "\n";
    return 1;
  }

  int RunPhases() {
    if (Status s = StartApiServer(); !s.ok()) return Fail("apiserver", s);
    if (Status s = Load(); !s.ok()) return Fail("load", s);
    slices_ = std::make_unique<cache::Informer<model::EndpointSlice>>(
        *rest_, cache::EndpointSliceKind(), cache::ReflectorOptions{});
    cache::EventHandler<model::EndpointSlice> handler;
    handler.on_add = [this](const auto& slice, bool) { watcher_.OnSlice(*slice, false); };
    handler.on_update = [this](const auto&, const auto& slice) { watcher_.OnSlice(*slice, false); };
    handler.on_delete = [this](const auto& slice, bool) { watcher_.OnSlice(*slice, true); };
    slices_->AddEventHandler(std::move(handler));
    slices_->Start();
    if (!slices_->WaitForSync(std::chrono::seconds(60))) {
      return Fail("watch", Status(StatusCode::kTimeout, "slice informer never synced"));
    }
    if (Status s = ColdStart(); !s.ok()) return Fail("cold", s);
    if (Status s = Restart(); !s.ok()) return Fail("restart", s);
    if (Status s = Churn(); !s.ok()) return Fail("churn", s);
    slices_->Stop();
    return 0;
  }

  Status StartApiServer() {
    const std::string kubeconfig = (root_ / "kubeconfig").string();
    SW_ASSIGN_OR_RETURN(apiserver_,
                        // Plain HTTP, as when docs/performance.md's figures were taken: the
                        // controller's CPU and latency then exclude TLS.
                        Child::Start({options_.server, "apiserver", "--listen", "127.0.0.1:0",
                                      "--data-dir", (root_ / "data").string(), "--write-kubeconfig",
                                      kubeconfig, "--insecure-http"},
                                     (root_ / "apiserver.log").string()));
    SW_RETURN_IF_ERROR(
        apiserver_->WaitForLine("kubeconfig written", std::chrono::seconds(60)).status());
    SW_ASSIGN_OR_RETURN(rest_, UnthrottledClient(kubeconfig));
    return Status();
  }

  Status Load() {
    const auto start = SteadyClock::now();
    deployments_ = PlanDeployments(options_);
    client::TypedClient<model::Namespace> namespaces(*rest_, client::NamespaceCodec());
    for (int i = 0; i < kNamespaces; ++i) {
      model::Namespace ns;
      ns.metadata.name = "load-" + std::to_string(i);
      SW_RETURN_IF_ERROR(namespaces.Create(ns).status());
    }
    client::TypedClient<model::Node> nodes(*rest_, client::NodeCodec());
    SW_RETURN_IF_ERROR(ParallelFor(options_.clients, options_.nodes, [&](std::int64_t i) {
      model::Node node;
      node.metadata.name = "node-" + std::to_string(i);
      node.metadata.labels = {{std::string(model::kLabelTopologyZone),
                               "zone-" + std::string(1, static_cast<char>('a' + i % 3))}};
      return nodes.Create(node).status();
    }));
    client::TypedClient<model::Service> services(*rest_, client::ServiceCodec());
    std::vector<const Deployment*> with_service;
    for (const Deployment& d : deployments_) {
      if (d.has_service) with_service.push_back(&d);
    }
    SW_RETURN_IF_ERROR(ParallelFor(
        options_.clients, static_cast<std::int64_t>(with_service.size()), [&](std::int64_t i) {
          const Deployment& d = *with_service[static_cast<std::size_t>(i)];
          return services.Create(HttpService(d.namespace_, d.name)).status();
        }));
    // Pods of every deployment; those of Services are what the controller publishes.
    std::vector<std::pair<const Deployment*, int>> pods;
    for (const Deployment& d : deployments_) {
      for (int r = 0; r < d.replicas; ++r) pods.emplace_back(&d, r);
      if (d.has_service) expected_ready_ += d.replicas;
    }
    client::TypedClient<model::Pod> pod_client(*rest_, client::PodCodec());
    std::atomic<std::int64_t> done{0};
    const std::int64_t total = static_cast<std::int64_t>(pods.size());
    const Status loaded = ParallelFor(options_.clients, total, [&](std::int64_t i) -> Status {
      const auto& [d, replica] = pods[static_cast<std::size_t>(i)];
      model::Pod pod = MakePod(*d, d->name + "-" + std::to_string(replica),
                               static_cast<int>(i % options_.nodes));
      SW_ASSIGN_OR_RETURN(model::Pod created, pod_client.Create(pod));
      SetStatus(created, PodIp(i), true);
      SW_RETURN_IF_ERROR(pod_client.UpdateStatus(created).status());
      const std::int64_t n = done.fetch_add(1) + 1;
      if (n % 20000 == 0) std::cerr << "scale_sim: " << n << "/" << total << " pods\n";
      return Status();
    });
    if (!loaded.ok()) return loaded;
    next_ip_ = total;
    total_pods_ = total;
    std::printf(
        "load: nodes=%d services=%zu deployments=%zu pods=%lld pods_behind_services=%lld "
        "seconds=%.1f pods_per_s=%.0f\n",
        options_.nodes, with_service.size(), deployments_.size(), static_cast<long long>(total),
        static_cast<long long>(expected_ready_), SecondsSince(start),
        static_cast<double>(total) / SecondsSince(start));
    std::fflush(stdout);
    return Status();
  }

  Status StartController() {
    const std::string qps = std::to_string(options_.qps);
    SW_ASSIGN_OR_RETURN(
        controller_,
        Child::Start(
            {options_.server, "controller-manager", "--kubeconfig", (root_ / "kubeconfig").string(),
             "--controllers", "endpointslice", "--endpointslice-updates-batch-period",
             options_.batch_period, "--kube-api-qps", qps, "--kube-api-burst", qps,
             "--bind-address", "127.0.0.1", "--port", "0"},
            (root_ / ("controller-" + std::to_string(++controller_runs_) + ".log")).string()));
    SW_ASSIGN_OR_RETURN(std::string address,
                        controller_->WaitForLine("/readyz on ", std::chrono::seconds(60)));
    client::RestConfig config;
    SW_ASSIGN_OR_RETURN(config.server, client::ParseServerUrl("http://" + address));
    SW_ASSIGN_OR_RETURN(metrics_, client::Transport::Create(config, client::TransportOptions{}));
    return Status();
  }

  Status ColdStart() {
    const auto start = SteadyClock::now();
    const std::int64_t writes_before = watcher_.Writes();
    SW_RETURN_IF_ERROR(StartController());
    const double cpu_before = controller_->CpuSeconds();
    const auto deadline = start + std::chrono::seconds(600);
    while (watcher_.TotalReady() < expected_ready_) {
      if (SteadyClock::now() > deadline) {
        return Status(StatusCode::kTimeout, "slices hold " + std::to_string(watcher_.TotalReady()) +
                                                " of " + std::to_string(expected_ready_) +
                                                " ready endpoints after 600 s");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    const double seconds = SecondsSince(start);
    std::printf(
        "cold: seconds=%.2f ready_endpoints=%lld slice_writes=%lld controller_cpu_s=%.2f "
        "controller_rss_mb=%.0f controller_peak_rss_mb=%.0f\n",
        seconds, static_cast<long long>(watcher_.TotalReady()),
        static_cast<long long>(watcher_.Writes() - writes_before),
        controller_->CpuSeconds() - cpu_before, controller_->MemoryMb("VmRSS"),
        controller_->MemoryMb("VmHWM"));
    std::fflush(stdout);
    return Status();
  }

  Status Restart() {
    controller_->Stop();
    const std::int64_t writes_before = watcher_.Writes();
    const auto start = SteadyClock::now();
    SW_RETURN_IF_ERROR(StartController());
    const auto services = static_cast<double>(deployments_.size() / 2);
    const auto deadline = start + std::chrono::seconds(600);
    double syncs = 0;
    while (syncs < services) {
      if (SteadyClock::now() > deadline) {
        return Status(StatusCode::kTimeout,
                      "only " + std::to_string(syncs) + " Service syncs after 600 s");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      Result<double> scraped = ScrapeSyncs(*metrics_);
      if (scraped.ok()) syncs = *scraped;
    }
    const double seconds = SecondsSince(start);
    // Writes the restart caused (should be none) arrive within a moment of the syncs.
    std::this_thread::sleep_for(std::chrono::seconds(1));
    std::printf(
        "restart: seconds_to_all_synced=%.2f syncs=%.0f slice_writes=%lld "
        "controller_peak_rss_mb=%.0f\n",
        seconds, syncs, static_cast<long long>(watcher_.Writes() - writes_before),
        controller_->MemoryMb("VmHWM"));
    std::fflush(stdout);
    return Status();
  }

  Status Churn() {
    std::vector<const Deployment*> with_service;
    for (const Deployment& d : deployments_) {
      if (d.has_service) with_service.push_back(&d);
    }
    std::mt19937_64 random(42);
    client::TypedClient<model::Pod> pods(*rest_, client::PodCodec());
    std::vector<model::Pod> not_ready;                           // created, waiting for their Ready
    std::vector<std::pair<std::string, std::string>> deletable;  // namespace, name
    std::int64_t events = 0;
    const std::int64_t writes_before = watcher_.Writes();
    const double cpu_before = controller_->CpuSeconds();
    const auto start = SteadyClock::now();
    const auto interval = std::chrono::microseconds(1'000'000 / std::max(1, options_.rate));
    auto next = start;
    const auto end = start + std::chrono::seconds(options_.churn_seconds);
    std::int64_t serial = 0;
    while (SteadyClock::now() < end) {
      std::this_thread::sleep_until(next);
      next += interval;
      const int step = static_cast<int>(events % 3);
      if (step == 0 || (step == 1 && not_ready.empty())) {
        const Deployment& d = *with_service[random() % with_service.size()];
        model::Pod pod = MakePod(d, d.name + "-churn-" + std::to_string(serial++),
                                 static_cast<int>(random() % options_.nodes));
        SW_ASSIGN_OR_RETURN(model::Pod created, pods.Create(pod));
        SetStatus(created, PodIp(next_ip_++), false);
        SW_ASSIGN_OR_RETURN(model::Pod updated, pods.UpdateStatus(created));
        not_ready.push_back(std::move(updated));
        events += 1;  // a not-ready pod with an IP: one endpoint (ready=false) to write
      } else if (step == 1) {
        model::Pod pod = std::move(not_ready.back());
        not_ready.pop_back();
        SetStatus(pod, pod.status.pod_ip, true);
        watcher_.AwaitReady(pod.status.pod_ip, SteadyClock::now());
        SW_RETURN_IF_ERROR(pods.UpdateStatus(pod).status());
        deletable.emplace_back(pod.metadata.namespace_, pod.metadata.name);
        events += 1;
      } else {
        // Delete an original pod of a random Service-backed deployment.
        const Deployment& d = *with_service[random() % with_service.size()];
        const int replica = static_cast<int>(random() % static_cast<unsigned>(d.replicas));
        client::DeleteOptions now;
        now.grace_period_seconds = 0;
        Status deleted = pods.Delete(d.namespace_, d.name + "-" + std::to_string(replica), now);
        if (deleted.code() == StatusCode::kNotFound) continue;  // deleted before: no event
        if (!deleted.ok()) return deleted;
        events += 1;
      }
    }
    const double churn_seconds = SecondsSince(start);
    const double cpu = controller_->CpuSeconds() - cpu_before;
    // Let the last events reach the slices before counting.
    std::this_thread::sleep_for(std::chrono::seconds(2));
    std::size_t waiting = 0;
    const std::vector<double> latencies = watcher_.TakeLatencies(&waiting);
    const std::int64_t writes = watcher_.Writes() - writes_before;
    std::printf(
        "churn: seconds=%.1f pod_events=%lld events_per_s=%.1f ready_transitions=%zu "
        "never_seen=%zu ready_to_slice_p50_ms=%.1f p99_ms=%.1f max_ms=%.1f slice_writes=%lld "
        "writes_per_pod_event=%.2f controller_cpu_cores=%.3f controller_peak_rss_mb=%.0f\n",
        churn_seconds, static_cast<long long>(events), static_cast<double>(events) / churn_seconds,
        latencies.size(), waiting, Percentile(latencies, 0.5), Percentile(latencies, 0.99),
        Percentile(latencies, 1.0), static_cast<long long>(writes),
        events == 0 ? 0.0 : static_cast<double>(writes) / static_cast<double>(events),
        cpu / churn_seconds, controller_->MemoryMb("VmHWM"));
    std::fflush(stdout);
    if (waiting > 0) {
      return Status(StatusCode::kTimeout,
                    std::to_string(waiting) + " pods made Ready never showed ready in a slice");
    }
    return Status();
  }

  Options options_;
  std::filesystem::path root_;
  std::unique_ptr<Child> apiserver_;
  std::unique_ptr<Child> controller_;
  std::unique_ptr<client::RestClient> rest_;
  std::unique_ptr<client::Transport> metrics_;  // the controller's /metrics
  std::unique_ptr<cache::Informer<model::EndpointSlice>> slices_;
  SliceWatcher watcher_;
  std::vector<Deployment> deployments_;
  std::int64_t expected_ready_ = 0;
  std::int64_t total_pods_ = 0;
  std::int64_t next_ip_ = 0;
  int controller_runs_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const auto value = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::cerr << "scale_sim: " << arg << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--smoke") {
      options.nodes = 30;
      options.pods = 600;
      options.services = 40;
      options.churn_seconds = 3;
      options.rate = 30;
      options.clients = 4;
    } else if (arg == "--server") {
      options.server = value();
    } else if (arg == "--nodes") {
      options.nodes = std::atoi(value());
    } else if (arg == "--pods") {
      options.pods = std::atoi(value());
    } else if (arg == "--services") {
      options.services = std::atoi(value());
    } else if (arg == "--rate") {
      options.rate = std::atoi(value());
    } else if (arg == "--churn-seconds") {
      options.churn_seconds = std::atoi(value());
    } else if (arg == "--clients") {
      options.clients = std::atoi(value());
    } else if (arg == "--qps") {
      options.qps = std::atoi(value());
    } else if (arg == "--batch-period") {
      options.batch_period = value();
    } else {
      std::cerr << "scale_sim: unknown argument " << arg << "\n";
      return 2;
    }
  }
  if (options.nodes < 1 || options.pods < 1 || options.services < 1 || options.rate < 1 ||
      options.clients < 1 || options.qps < 1 || options.churn_seconds < 0) {
    std::cerr << "scale_sim: counts must be positive\n";
    return 2;
  }
  if (::access(options.server.c_str(), X_OK) != 0) {
    std::cerr << "scale_sim: --server " << options.server << ": not an executable; build it\n";
    return 2;
  }
  ::signal(SIGPIPE, SIG_IGN);
  return Simulation(std::move(options)).Run();
}

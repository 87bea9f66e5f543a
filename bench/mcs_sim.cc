// mcs_sim: the Multi-Cluster Services benchmark (issue #23 §6; results and method in
// docs/performance.md). A standalone program, not Google Benchmark: it starts `slicewright dev
// --clusters N` (N members, each with its controllers and MCS agent, and a broker, all in one
// process) as a child process on a fresh data directory, and measures it from outside:
//   load     in cluster-1: S Services of P pods each (the pods first, then the Services; the
//            pods on nodes of the driver's, so the pod simulator leaves them alone: the driver
//            writes their Running/Ready status, as a kubelet would, and knows when each turned
//            Ready); the namespaces in every member; time until cluster-1's own slices hold every
//            pod ready
//   export   a ServiceExport per Service in cluster-1, at R/s; per export, the time from its
//            create to the ServiceImport visible in each other member (p50/p99), to
//            endpointSliceObjects Present there, and to its MCS slices holding every pod ready
//   export2  the first K of the Services also in cluster-2 (their own P pods) and exported from
//            there: time until every member's MCS slices hold both clusters' endpoints
//   idle     the dev process's CPU with nothing to do (Leases, watches)
//   churn    (--runs times) pod readiness flips in cluster-1 at E/s for D s; per Ready, the time
//            from the status write to the endpoint ready at each hop: cluster-1's own slice, the
//            broker's slice, each member's MCS slice (p50/p99); slice writes per pod event at each
//            place (from watch events: resourceVersion changes); the dev process's CPU and RSS,
//            and its CPU by component from its threads' names (/proc/PID/task/*/stat; the names
//            are docs/design.md's, "Threading model")
// The driver watches with the library's informers. One result line per phase on stdout; progress
// on stderr. Exit 1 when a phase fails (a write fails, a state never converges), not when a
// target is missed. The agents share the dev process with N+1 API servers and every other
// controller: CPU is split by thread name, RSS cannot be (one heap) and is the process's.
//
// Usage: mcs_sim [--server PATH] [--clusters N] [--services S] [--pods P] [--dual K]
//                [--export-rate R] [--rate E] [--churn-seconds D] [--runs N] [--clients C]
//                [--smoke]
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

#include "slicewright/base/result.h"
#include "slicewright/cache/informer.h"
#include "slicewright/client/rest_client.h"
#include "slicewright/client/rest_config.h"
#include "slicewright/client/transport.h"
#include "slicewright/client/typed_client.h"
#include "slicewright/model/mcs.h"
#include "slicewright/model/well_known.h"

#include "controllers/mcs/kinds.h"
#include "driver.h"
#include "workload.h"

namespace {

using namespace slicewright;
using bench::Child;
using bench::HttpPod;
using bench::HttpService;
using bench::ParallelFor;
using bench::Percentile;
using bench::PodIp;
using bench::SecondsSince;
using bench::SetStatus;
using bench::SteadyClock;
using bench::UnthrottledClient;

struct Options {
  std::string server = "build/release/src/cli/slicewright";
  int clusters = 3;
  int services = 1000;
  int pods = 10;         // per Service
  int dual = 100;        // Services exported from cluster-2 too
  int export_rate = 25;  // ServiceExports created per second
  int rate = 20;         // pod events per second during churn
  int churn_seconds = 30;
  int runs = 3;
  int clients = 8;
};

constexpr int kNamespaces = 10;
constexpr int kNodes = 3;
constexpr auto kConvergeTimeout = std::chrono::seconds(300);

std::string Namespace(int service) { return "mcs-bench-" + std::to_string(service % kNamespaces); }
std::string ServiceName(int service) { return "svc-" + std::to_string(service); }
std::string ServiceKey(int service) { return Namespace(service) + "/" + ServiceName(service); }

// Pod addresses unique in the ClusterSet: cluster-1's from 10.64.0.0/10, cluster-2's from
// 10.128.0.0/10 (the simulator's own pods, of which there are none here, use 10.244+).
std::string LabelOf(const model::ObjectMeta& meta, std::string_view key) {
  auto it = meta.labels.find(key);
  return it == meta.labels.end() ? std::string() : it->second;
}

double Ms(SteadyClock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// One thread's name and CPU time (seconds).
struct ThreadCpu {
  std::string comm;
  double seconds = 0;
};

// Every thread of `pid`: its name from /proc/PID/task/TID/stat and its CPU time from schedstat
// (nanoseconds on the CPU), else from stat's utime + stime. Clock ticks would do for the process
// but not for its threads: each of 250 threads' counts is cut to a whole tick (10 ms), and a
// worker that ran 0.9 ms in a window read 0.
std::map<pid_t, ThreadCpu> ThreadCpuSeconds(pid_t pid) {
  std::map<pid_t, ThreadCpu> threads;
  std::error_code ec;
  const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  for (const auto& task : std::filesystem::directory_iterator(tasks, ec)) {
    std::ifstream in(task.path() / "stat");
    std::string text;
    if (!std::getline(in, text)) continue;  // exited since the listing
    // "TID (COMM) S ...": the name may hold spaces and parentheses, so it ends at the last ')'.
    const std::size_t open = text.find('(');
    const std::size_t close = text.rfind(')');
    if (open == std::string::npos || close == std::string::npos || close < open) continue;
    ThreadCpu& thread = threads[static_cast<pid_t>(std::atol(task.path().filename().c_str()))];
    thread.comm = text.substr(open + 1, close - open - 1);
    std::ifstream schedstat(task.path() / "schedstat");
    unsigned long long on_cpu_ns = 0;
    if (schedstat >> on_cpu_ns) {
      thread.seconds = static_cast<double>(on_cpu_ns) / 1e9;
      continue;
    }
    std::istringstream fields(text.substr(close + 2));
    std::string field;
    double ticks = 0;
    for (int index = 3; index <= 15 && fields >> field; ++index) {
      if (index >= 14) ticks += std::atof(field.c_str());  // utime, stime
    }
    thread.seconds = ticks / static_cast<double>(::sysconf(_SC_CLK_TCK));
  }
  return threads;
}

// A dev thread's name without its cluster marker ("c2-", "bk-") and worker index ("-w3", "-1"):
// "c2-mcs-im-w3" is "mcs-im", "bk-api-0" is "api", "c1-i-pods" is "i-pods".
std::string ThreadPrefix(std::string_view comm) {
  const auto digits = [](std::string_view text) {
    return !text.empty() && text.find_first_not_of("0123456789") == std::string_view::npos;
  };
  if (comm.starts_with("bk-")) {
    comm.remove_prefix(3);
  } else if (const std::size_t dash = comm.find('-'); comm.starts_with('c') &&
                                                      dash != std::string_view::npos &&
                                                      digits(comm.substr(1, dash - 1))) {
    comm.remove_prefix(dash + 1);
  }
  if (const std::size_t dash = comm.rfind('-'); dash != std::string_view::npos) {
    std::string_view index = comm.substr(dash + 1);
    if (index.starts_with('w')) index.remove_prefix(1);
    if (digits(index)) comm = comm.substr(0, dash);
  }
  return std::string(comm);
}

// The component group of a thread prefix, for the CPU split.
std::string_view ThreadGroup(std::string_view prefix) {
  if (prefix.starts_with("mcs-")) return "agents";  // export and import workers, liveness
  if (prefix == "dns") return "dns";
  if (prefix.starts_with("api")) return "apiservers";  // I/O pool, api-bg, api-watch
  if (prefix == "eps" || prefix == "mnet" || prefix == "mirror") return "endpointslice";
  if (prefix.starts_with("i-")) return "informers";  // reflectors and their handlers
  return "other";
}

// The split is only right if the agents' threads carry their names: one export and one import
// worker per member ("c1-mcs-ex-w0", "c1-mcs-im-w0", ...).
Status CheckAgentThreadsNamed(const std::map<pid_t, ThreadCpu>& threads, int clusters) {
  std::set<std::string> named;
  for (const auto& [tid, thread] : threads) {
    if (thread.comm.ends_with("mcs-ex-w0") || thread.comm.ends_with("mcs-im-w0")) {
      named.insert(thread.comm);
    }
  }
  if (named.size() != 2 * static_cast<std::size_t>(clusters)) {
    return Status(StatusCode::kInternal,
                  "dev's MCS agent threads are not named per member: found " +
                      std::to_string(named.size()) + " of " + std::to_string(2 * clusters) +
                      " (cN-mcs-ex-w0, cN-mcs-im-w0); the CPU split would be wrong");
  }
  return Status();
}

// CPU between two ThreadCpuSeconds() snapshots, by group and by prefix, as a result line's
// fields: "cpu_cores: agents=... total=... cpu_by_thread: api=... ...". CPU of threads that
// ended in between is the process's total less the threads'.
std::string CpuByComponent(const std::map<pid_t, ThreadCpu>& before,
                           const std::map<pid_t, ThreadCpu>& after, double process_cpu,
                           double seconds) {
  std::map<std::string, double> by_prefix;
  std::map<std::string, double> agents_by_member;
  double threads_total = 0;
  for (const auto& [tid, thread] : after) {
    const auto was = before.find(tid);
    const double used = thread.seconds - (was == before.end() ? 0 : was->second.seconds);
    const std::string prefix = ThreadPrefix(thread.comm);
    by_prefix[prefix] += used;
    if (ThreadGroup(prefix) == "agents") {
      agents_by_member[thread.comm.substr(0, thread.comm.find('-'))] += used;
    }
    threads_total += used;
  }
  std::map<std::string_view, double> by_group;
  for (const std::string_view group :
       {"agents", "dns", "apiservers", "endpointslice", "informers", "other"}) {
    by_group[group] = 0;
  }
  for (const auto& [prefix, used] : by_prefix) by_group[ThreadGroup(prefix)] += used;
  const double scale = 1.0 / std::max(seconds, 1e-9);
  std::string line = "cpu_cores:";
  char buffer[96];
  for (const std::string_view group :
       {"agents", "dns", "apiservers", "endpointslice", "informers", "other"}) {
    std::snprintf(buffer, sizeof buffer, " %.*s=%.3f", static_cast<int>(group.size()), group.data(),
                  by_group[group] * scale);
    line += buffer;
  }
  std::snprintf(buffer, sizeof buffer, " exited=%.3f total=%.3f agents_cpu_seconds=%.2f",
                std::max(0.0, process_cpu - threads_total) * scale, process_cpu * scale,
                by_group["agents"]);
  line += buffer;
  line += " agents_by_member:";
  for (const auto& [member, used] : agents_by_member) {
    std::snprintf(buffer, sizeof buffer, " %s=%.3f", member.c_str(), used * scale);
    line += buffer;
  }
  // The busiest prefixes, most first.
  std::vector<std::pair<double, std::string>> ranked;
  for (const auto& [prefix, used] : by_prefix) ranked.emplace_back(used, prefix);
  std::sort(ranked.rbegin(), ranked.rend());
  line += " cpu_by_thread:";
  for (std::size_t i = 0; i < ranked.size() && i < 12; ++i) {
    std::snprintf(buffer, sizeof buffer, " %s=%.3f", ranked[i].second.c_str(),
                  ranked[i].first * scale);
    line += buffer;
  }
  return line;
}

// Where the driver watches EndpointSlices. kLocal: cluster-1's own slices (the EndpointSlice
// controller's); kBroker: the broker's; then kMcs + i: member i's MCS slices (i from 0); the
// last: cluster-2's own slices.
constexpr int kLocal = 0;
constexpr int kBroker = 1;
constexpr int kMcs = 2;

// What the driver sees of the slices at every place, kept by informer handlers.
class SliceWatcher final {
 public:
  explicit SliceWatcher(int places) : places_(places), writes_(places), ready_(places) {}

  // A slice written (added, updated with a new resourceVersion, or deleted) at `place`.
  void OnSlice(int place, const model::EndpointSlice& slice, bool deleted) {
    const auto now = SteadyClock::now();
    std::lock_guard lock(mu_);
    ++writes_[static_cast<std::size_t>(place)];
    Place& at = ready_[static_cast<std::size_t>(place)];
    const bool mcs = LabelOf(slice.metadata, model::kLabelManagedBy) == model::kManagedByMcs;
    // The service the slice is of: its own, or the imported (or, in the broker, exported) one.
    std::string service_namespace = LabelOf(slice.metadata, model::kLabelMcsServiceNamespace);
    if (service_namespace.empty()) service_namespace = slice.metadata.namespace_;
    const std::string service =
        service_namespace + "/" +
        LabelOf(slice.metadata, mcs ? model::kLabelMcsServiceName : model::kLabelServiceName);
    const std::string key = slice.metadata.namespace_ + "/" + slice.metadata.name;
    std::int64_t& service_ready = at.by_service[service];
    if (auto old = at.by_slice.find(key); old != at.by_slice.end()) {
      service_ready -= old->second;
      at.by_slice.erase(old);
    }
    if (!deleted) {
      std::int64_t ready = 0;
      for (const model::Endpoint& endpoint : slice.endpoints) {
        if (endpoint.addresses.empty()) continue;
        const bool is_ready = endpoint.conditions.ready.value_or(true);
        ready += is_ready ? 1 : 0;
        auto flip = flips_.find(endpoint.addresses.front());
        if (flip == flips_.end()) continue;
        Flip& f = flip->second;
        f.current[static_cast<std::size_t>(place)] = is_ready;
        if (!is_ready) {
          f.seen_not_ready[static_cast<std::size_t>(place)] = true;
        } else if (f.ready_written && f.seen_not_ready[static_cast<std::size_t>(place)] &&
                   !f.seen_ready[static_cast<std::size_t>(place)]) {
          f.seen_ready[static_cast<std::size_t>(place)] = now;
        }
      }
      at.by_slice[key] = ready;
      service_ready += ready;
    }
    auto awaited = awaited_services_.find({place, service});
    if (awaited != awaited_services_.end() && service_ready >= awaited->second) {
      services_ready_at_[{place, service}] = now;
      awaited_services_.erase(awaited);
    }
  }

  // Records when `service`'s slices at `place` first hold `ready` ready endpoints.
  void AwaitServiceReady(int place, const std::string& service, std::int64_t ready) {
    std::lock_guard lock(mu_);
    const std::int64_t now_ready = ready_[static_cast<std::size_t>(place)].by_service[service];
    if (now_ready >= ready) {
      services_ready_at_[{place, service}] = SteadyClock::now();
    } else {
      awaited_services_[{place, service}] = ready;
    }
  }
  std::optional<SteadyClock::time_point> ServiceReadyAt(int place, const std::string& service) {
    std::lock_guard lock(mu_);
    auto it = services_ready_at_.find({place, service});
    if (it == services_ready_at_.end()) return std::nullopt;
    return it->second;
  }
  std::int64_t ServiceReady(int place, const std::string& service) {
    std::lock_guard lock(mu_);
    return ready_[static_cast<std::size_t>(place)].by_service[service];
  }

  // A flip of the pod with `ip`: its NotReady status is being written; then, from
  // ReadyWritten(), the time its Ready status was written. The Ready counts at a place only after
  // that place showed the endpoint not ready, so a slice written before the NotReady arrived is
  // not taken for the Ready.
  void NotReadyWritten(const std::string& ip) {
    std::lock_guard lock(mu_);
    Flip& f = flips_[ip];
    f = Flip{};
    f.seen_not_ready.assign(static_cast<std::size_t>(places_), false);
    f.seen_ready.assign(static_cast<std::size_t>(places_), std::nullopt);
    f.current.assign(static_cast<std::size_t>(places_), true);
  }
  void ReadyWritten(const std::string& ip, SteadyClock::time_point at) {
    std::lock_guard lock(mu_);
    Flip& f = flips_[ip];
    f.ready_written = true;
    f.since = at;
  }
  // Whether every flipped pod is shown ready, as last written, at every place of `places`.
  bool AllReady(const std::vector<int>& places) {
    std::lock_guard lock(mu_);
    for (const auto& [ip, flip] : flips_) {
      for (int place : places) {
        if (!flip.current[static_cast<std::size_t>(place)]) return false;
      }
    }
    return true;
  }
  // The flips whose Ready was written, by ip: when it was, and when each place showed it.
  struct Seen {
    SteadyClock::time_point since;
    std::vector<std::optional<SteadyClock::time_point>> at;
  };
  std::vector<Seen> TakeFlips() {
    std::lock_guard lock(mu_);
    std::vector<Seen> out;
    for (auto it = flips_.begin(); it != flips_.end();) {
      if (it->second.ready_written) {
        out.push_back({it->second.since, it->second.seen_ready});
        it = flips_.erase(it);
      } else {
        ++it;
      }
    }
    return out;
  }

  std::int64_t Writes(int place) {
    std::lock_guard lock(mu_);
    return writes_[static_cast<std::size_t>(place)];
  }

 private:
  struct Place {
    std::unordered_map<std::string, std::int64_t> by_slice;    // ready endpoints
    std::unordered_map<std::string, std::int64_t> by_service;  // ready endpoints
  };
  struct Flip {
    bool ready_written = false;
    SteadyClock::time_point since;
    std::vector<bool> seen_not_ready;
    std::vector<std::optional<SteadyClock::time_point>> seen_ready;
    std::vector<bool> current;  // ready as its place last showed it
  };

  const int places_;
  std::mutex mu_;
  std::vector<std::int64_t> writes_;
  std::vector<Place> ready_;
  std::unordered_map<std::string, Flip> flips_;  // by pod IP
  std::map<std::pair<int, std::string>, std::int64_t> awaited_services_;
  std::map<std::pair<int, std::string>, SteadyClock::time_point> services_ready_at_;
};

// When each member first showed each ServiceImport, and first showed it Present.
class ImportWatcher final {
 public:
  void OnImport(int member, const model::ServiceImport& service_import) {
    const auto now = SteadyClock::now();
    const std::string key = service_import.metadata.namespace_ + "/" + service_import.metadata.name;
    std::lock_guard lock(mu_);
    seen_.try_emplace({member, key}, now);
    if (service_import.status.endpoint_slice_objects == model::EndpointSliceObjects::kPresent) {
      present_.try_emplace({member, key}, now);
    }
  }
  std::optional<SteadyClock::time_point> SeenAt(int member, const std::string& key) {
    return Find(seen_, member, key);
  }
  std::optional<SteadyClock::time_point> PresentAt(int member, const std::string& key) {
    return Find(present_, member, key);
  }

 private:
  using Times = std::map<std::pair<int, std::string>, SteadyClock::time_point>;
  std::optional<SteadyClock::time_point> Find(const Times& times, int member,
                                              const std::string& key) {
    std::lock_guard lock(mu_);
    auto it = times.find({member, key});
    if (it == times.end()) return std::nullopt;
    return it->second;
  }
  std::mutex mu_;
  Times seen_;
  Times present_;
};

struct Member {
  std::string name;  // cluster-1 ...
  std::unique_ptr<client::RestClient> client;
  std::unique_ptr<cache::Informer<model::EndpointSlice>> slices;
  std::unique_ptr<cache::Informer<model::ServiceImport>> imports;
};

// Waits until `done()` or `timeout`; kTimeout with `what()` when it is not.
template <typename Done, typename What>
Status WaitFor(Done done, What what, SteadyClock::duration timeout) {
  const auto deadline = SteadyClock::now() + timeout;
  while (!done()) {
    if (SteadyClock::now() > deadline) return Status(StatusCode::kTimeout, what());
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return Status();
}

class Simulation final {
 public:
  explicit Simulation(Options options)
      : options_(std::move(options)), watcher_(kMcs + options_.clusters + 1) {}

  int Run() {
    root_ = std::filesystem::temp_directory_path() / ("mcs_sim." + std::to_string(::getpid()));
    std::filesystem::create_directories(root_);
    const int code = RunPhases();
    for (Member& member : members_) {
      if (member.slices) member.slices->Stop();
      if (member.imports) member.imports->Stop();
    }
    if (broker_slices_) broker_slices_->Stop();
    dev_.reset();
    if (code == 0) {
      std::filesystem::remove_all(root_);
    } else {
      std::cerr << "mcs_sim: kept " << root_ << " for inspection\n";
    }
    return code;
  }

 private:
  int LocalOfCluster2() const { return kMcs + options_.clusters; }

  int Fail(const std::string& phase, const Status& status) {
    std::cerr << "mcs_sim: " << phase << ": " << status.ToString() << "\n";
    if (dev_ != nullptr) std::cerr << dev_->LogTail() << "\n";
    return 1;
  }

  int RunPhases() {
    if (Status s = StartDev(); !s.ok()) return Fail("dev", s);
    if (Status s = Watch(); !s.ok()) return Fail("watch", s);
    if (Status s = Load(); !s.ok()) return Fail("load", s);
    if (Status s = Export(); !s.ok()) return Fail("export", s);
    if (options_.dual > 0) {
      if (Status s = ExportFromCluster2(); !s.ok()) return Fail("export2", s);
    }
    Idle();
    for (int run = 1; run <= options_.runs; ++run) {
      if (Status s = Churn(run); !s.ok()) return Fail("churn", s);
    }
    return 0;
  }

  Status StartDev() {
    SW_ASSIGN_OR_RETURN(
        dev_, Child::Start({options_.server, "dev", "--clusters", std::to_string(options_.clusters),
                            "--data-dir", root_.string(), "--nodes", std::to_string(kNodes),
                            // Plain HTTP, as scale_sim: the figures then exclude TLS.
                            "--insecure-http"},
                           (root_ / "dev.log").string()));
    SW_RETURN_IF_ERROR(
        dev_->WaitForLine("kubeconfig (contexts", std::chrono::seconds(120)).status());
    const std::string kubeconfig = (root_ / "kubeconfig").string();
    SW_ASSIGN_OR_RETURN(broker_, UnthrottledClient(kubeconfig, "broker"));
    for (int i = 1; i <= options_.clusters; ++i) {
      Member member;
      member.name = "cluster-" + std::to_string(i);
      SW_ASSIGN_OR_RETURN(member.client, UnthrottledClient(kubeconfig, member.name));
      members_.push_back(std::move(member));
    }
    return Status();
  }

  // Counts a slice event as a write only when the resourceVersion changed (a relist re-delivers).
  cache::EventHandler<model::EndpointSlice> SliceHandler(
      std::function<int(const model::EndpointSlice&)> place) {
    cache::EventHandler<model::EndpointSlice> handler;
    handler.on_add = [this, place](const auto& slice, bool) {
      if (const int p = place(*slice); p >= 0) watcher_.OnSlice(p, *slice, false);
    };
    handler.on_update = [this, place](const auto& old, const auto& slice) {
      if (old->metadata.resource_version == slice->metadata.resource_version) return;
      if (const int p = place(*slice); p >= 0) watcher_.OnSlice(p, *slice, false);
    };
    handler.on_delete = [this, place](const auto& slice, bool) {
      if (const int p = place(*slice); p >= 0) watcher_.OnSlice(p, *slice, true);
    };
    return handler;
  }

  Status Watch() {
    broker_slices_ = std::make_unique<cache::Informer<model::EndpointSlice>>(
        *broker_, cache::EndpointSliceKind(), cache::ReflectorOptions{});
    broker_slices_->AddEventHandler(SliceHandler([](const auto&) { return kBroker; }));
    broker_slices_->Start();
    for (int i = 0; i < options_.clusters; ++i) {
      Member& member = members_[static_cast<std::size_t>(i)];
      member.slices = std::make_unique<cache::Informer<model::EndpointSlice>>(
          *member.client, cache::EndpointSliceKind(), cache::ReflectorOptions{});
      const int own = i == 0 ? kLocal : i == 1 ? LocalOfCluster2() : -1;
      member.slices->AddEventHandler(SliceHandler([i, own](const model::EndpointSlice& slice) {
        return LabelOf(slice.metadata, model::kLabelManagedBy) == model::kManagedByMcs ? kMcs + i
                                                                                       : own;
      }));
      member.slices->Start();
      member.imports = std::make_unique<cache::Informer<model::ServiceImport>>(
          *member.client, controllers::mcs::ServiceImportKind(), cache::ReflectorOptions{});
      cache::EventHandler<model::ServiceImport> imports;
      imports.on_add = [this, i](const auto& si, bool) { imports_.OnImport(i, *si); };
      imports.on_update = [this, i](const auto&, const auto& si) { imports_.OnImport(i, *si); };
      member.imports->AddEventHandler(std::move(imports));
      member.imports->Start();
    }
    const auto synced = [](auto& informer) {
      return informer->WaitForSync(std::chrono::seconds(60));
    };
    if (!synced(broker_slices_)) return Status(StatusCode::kTimeout, "broker slices never synced");
    for (Member& member : members_) {
      if (!synced(member.slices) || !synced(member.imports)) {
        return Status(StatusCode::kTimeout, member.name + ": informers never synced");
      }
    }
    return Status();
  }

  // Namespaces everywhere; in `cluster` (0-based): the driver's nodes, Services [0, count) and
  // their pods, Ready. Returns the pods as written.
  Status LoadCluster(int cluster, int count, std::vector<model::Pod>* pods_out) {
    client::RestClient& rest = *members_[static_cast<std::size_t>(cluster)].client;
    client::TypedClient<model::Node> nodes(rest, client::NodeCodec());
    for (int n = 0; n < kNodes; ++n) {
      model::Node node;
      node.metadata.name = "bench-node-" + std::to_string(n);
      node.metadata.labels = {{std::string(model::kLabelTopologyZone),
                               "zone-" + std::string(1, static_cast<char>('a' + n))}};
      SW_RETURN_IF_ERROR(nodes.Create(node).status());
    }
    // The pods first, Ready, then their Services: the endpoint controllers write each
    // Service's slice once, not once per pod write.
    client::TypedClient<model::Pod> pod_client(rest, client::PodCodec());
    const std::int64_t total = static_cast<std::int64_t>(count) * options_.pods;
    pods_out->assign(static_cast<std::size_t>(total), model::Pod{});
    SW_RETURN_IF_ERROR(ParallelFor(options_.clients, total, [&](std::int64_t i) -> Status {
      const int service = static_cast<int>(i / options_.pods);
      const model::Pod pod = HttpPod(
          Namespace(service), ServiceName(service) + "-" + std::to_string(i % options_.pods),
          ServiceName(service), "bench-node-" + std::to_string(i % kNodes));
      SW_ASSIGN_OR_RETURN(model::Pod created, pod_client.Create(pod));
      SetStatus(created, PodIp(cluster + 1, i), true);
      SW_ASSIGN_OR_RETURN((*pods_out)[static_cast<std::size_t>(i)],
                          pod_client.UpdateStatus(created));
      return Status();
    }));
    client::TypedClient<model::Service> services(rest, client::ServiceCodec());
    return ParallelFor(options_.clients, count, [&](std::int64_t i) {
      return services
          .Create(HttpService(Namespace(static_cast<int>(i)), ServiceName(static_cast<int>(i))))
          .status();
    });
  }

  Status Load() {
    const auto start = SteadyClock::now();
    for (Member& member : members_) {
      client::TypedClient<model::Namespace> namespaces(*member.client, client::NamespaceCodec());
      for (int i = 0; i < kNamespaces; ++i) {
        model::Namespace ns;
        ns.metadata.name = Namespace(i);
        SW_RETURN_IF_ERROR(namespaces.Create(ns).status());
      }
    }
    SW_RETURN_IF_ERROR(LoadCluster(0, options_.services, &pods_));
    for (int s = 0; s < options_.services; ++s) {
      watcher_.AwaitServiceReady(kLocal, ServiceKey(s), options_.pods);
    }
    SW_RETURN_IF_ERROR(WaitFor(
        [&] {
          for (int s = 0; s < options_.services; ++s) {
            if (!watcher_.ServiceReadyAt(kLocal, ServiceKey(s))) return false;
          }
          return true;
        },
        [] { return std::string("cluster-1's slices never held every pod ready"); },
        kConvergeTimeout));
    std::printf("load: clusters=%d services=%d pods=%zu seconds=%.1f dev_rss_mb=%.0f\n",
                options_.clusters, options_.services, pods_.size(), SecondsSince(start),
                dev_->MemoryMb("VmRSS"));
    std::fflush(stdout);
    return Status();
  }

  // Exports Services [0, count) from member `cluster` at the export rate; the create times.
  Result<std::vector<SteadyClock::time_point>> CreateExports(int cluster, int count) {
    client::TypedClient<model::ServiceExport> exports(
        *members_[static_cast<std::size_t>(cluster)].client,
        controllers::mcs::ServiceExportCodec());
    std::vector<SteadyClock::time_point> created;
    const auto interval = std::chrono::microseconds(1'000'000 / std::max(1, options_.export_rate));
    auto next = SteadyClock::now();
    for (int s = 0; s < count; ++s) {
      std::this_thread::sleep_until(next);
      next += interval;
      model::ServiceExport service_export;
      service_export.metadata.namespace_ = Namespace(s);
      service_export.metadata.name = ServiceName(s);
      created.push_back(SteadyClock::now());
      SW_RETURN_IF_ERROR(exports.Create(service_export).status());
    }
    return created;
  }

  Status Export() {
    const double cpu_before = dev_->CpuSeconds();
    const std::map<pid_t, ThreadCpu> threads_before = ThreadCpuSeconds(dev_->pid());
    const auto start = SteadyClock::now();
    // Every member (cluster-1 too) imports each Service with all of cluster-1's endpoints.
    for (int s = 0; s < options_.services; ++s) {
      for (int m = 0; m < options_.clusters; ++m) {
        watcher_.AwaitServiceReady(kMcs + m, ServiceKey(s), options_.pods);
      }
    }
    SW_ASSIGN_OR_RETURN(const std::vector<SteadyClock::time_point> created,
                        CreateExports(0, options_.services));
    const double create_seconds = SecondsSince(start);
    std::vector<double> visible;
    std::vector<double> present;
    std::vector<double> endpoints;
    std::int64_t missing = 0;
    SW_RETURN_IF_ERROR(WaitFor(
        [&] {
          visible.clear();
          present.clear();
          endpoints.clear();
          missing = 0;
          for (int s = 0; s < options_.services; ++s) {
            const std::string key = ServiceKey(s);
            const auto since = created[static_cast<std::size_t>(s)];
            // The other members: the export → import figures.
            for (int m = 1; m < options_.clusters; ++m) {
              const auto seen = imports_.SeenAt(m, key);
              const auto is_present = imports_.PresentAt(m, key);
              const auto ready = watcher_.ServiceReadyAt(kMcs + m, key);
              if (!seen || !is_present || !ready) {
                ++missing;
                continue;
              }
              visible.push_back(Ms(*seen - since));
              present.push_back(Ms(*is_present - since));
              endpoints.push_back(Ms(*ready - since));
            }
            if (!imports_.PresentAt(0, key) || !watcher_.ServiceReadyAt(kMcs, key)) ++missing;
          }
          return missing == 0;
        },
        [&] {
          return std::to_string(missing) + " imports not Present with every endpoint ready after " +
                 std::to_string(kConvergeTimeout.count()) + " s";
        },
        kConvergeTimeout));
    const double seconds = SecondsSince(start);
    const double cpu = dev_->CpuSeconds() - cpu_before;
    const std::string by_component =
        CpuByComponent(threads_before, ThreadCpuSeconds(dev_->pid()), cpu, seconds);
    std::printf(
        "export: services=%d rate_per_s=%d create_seconds=%.1f seconds_to_all_imported=%.1f "
        "import_visible_p50_ms=%.1f p99_ms=%.1f max_ms=%.1f present_p50_ms=%.1f p99_ms=%.1f "
        "endpoints_ready_p50_ms=%.1f p99_ms=%.1f max_ms=%.1f broker_slice_writes=%lld "
        "dev_cpu_cores=%.2f dev_rss_mb=%.0f\nexport: %s\n",
        options_.services, options_.export_rate, create_seconds, seconds, Percentile(visible, 0.5),
        Percentile(visible, 0.99), Percentile(visible, 1.0), Percentile(present, 0.5),
        Percentile(present, 0.99), Percentile(endpoints, 0.5), Percentile(endpoints, 0.99),
        Percentile(endpoints, 1.0), static_cast<long long>(watcher_.Writes(kBroker)), cpu / seconds,
        dev_->MemoryMb("VmRSS"), by_component.c_str());
    std::fflush(stdout);
    return Status();
  }

  Status ExportFromCluster2() {
    const int dual = std::min(options_.dual, options_.services);
    const auto start = SteadyClock::now();
    std::vector<model::Pod> pods;
    SW_RETURN_IF_ERROR(LoadCluster(1, dual, &pods));
    SW_RETURN_IF_ERROR(CreateExports(1, dual).status());
    SW_RETURN_IF_ERROR(WaitFor(
        [&] {
          for (int s = 0; s < dual; ++s) {
            for (int m = 0; m < options_.clusters; ++m) {
              if (watcher_.ServiceReady(kMcs + m, ServiceKey(s)) < 2 * options_.pods) return false;
            }
          }
          return true;
        },
        [] { return std::string("imports never held both clusters' endpoints"); },
        kConvergeTimeout));
    std::printf("export2: services=%d pods=%zu seconds_to_all_imported=%.1f dev_rss_mb=%.0f\n",
                dual, pods.size(), SecondsSince(start), dev_->MemoryMb("VmRSS"));
    std::fflush(stdout);
    return Status();
  }

  void Idle() {
    const double cpu_before = dev_->CpuSeconds();
    const auto start = SteadyClock::now();
    std::this_thread::sleep_for(std::chrono::seconds(5));
    std::printf("idle: seconds=%.1f dev_cpu_cores=%.3f dev_rss_mb=%.0f\n", SecondsSince(start),
                (dev_->CpuSeconds() - cpu_before) / SecondsSince(start), dev_->MemoryMb("VmRSS"));
    std::fflush(stdout);
  }

  // Readiness flips of cluster-1's exported pods: a Ready pod turns NotReady; once ten are
  // NotReady, the oldest turns Ready again (so each NotReady had half a second to spread).
  Status Churn(int run) {
    client::TypedClient<model::Pod> pods(*members_[0].client, client::PodCodec());
    std::mt19937_64 random(42 + static_cast<unsigned>(run));
    std::vector<std::size_t> not_ready;
    std::vector<char> is_not_ready(pods_.size(), 0);
    std::vector<std::int64_t> writes_before;
    const int places = kMcs + options_.clusters;
    for (int p = 0; p < places; ++p) writes_before.push_back(watcher_.Writes(p));
    std::int64_t events = 0;
    const double cpu_before = dev_->CpuSeconds();
    const std::map<pid_t, ThreadCpu> threads_before = ThreadCpuSeconds(dev_->pid());
    SW_RETURN_IF_ERROR(CheckAgentThreadsNamed(threads_before, options_.clusters));
    const auto start = SteadyClock::now();
    const auto interval = std::chrono::microseconds(1'000'000 / std::max(1, options_.rate));
    auto next = start;
    const auto end = start + std::chrono::seconds(options_.churn_seconds);
    while (SteadyClock::now() < end) {
      std::this_thread::sleep_until(next);
      next += interval;
      if (not_ready.size() >= 10) {
        const std::size_t index = not_ready.front();
        not_ready.erase(not_ready.begin());
        model::Pod& pod = pods_[index];
        SetStatus(pod, pod.status.pod_ip, true);
        watcher_.ReadyWritten(pod.status.pod_ip, SteadyClock::now());
        SW_ASSIGN_OR_RETURN(pod, pods.UpdateStatus(pod));
        is_not_ready[index] = 0;
      } else {
        std::size_t index = random() % pods_.size();
        while (is_not_ready[index] != 0) index = (index + 1) % pods_.size();
        model::Pod& pod = pods_[index];
        SetStatus(pod, pod.status.pod_ip, false);
        watcher_.NotReadyWritten(pod.status.pod_ip);
        SW_ASSIGN_OR_RETURN(pod, pods.UpdateStatus(pod));
        is_not_ready[index] = 1;
        not_ready.push_back(index);
      }
      ++events;
    }
    const double churn_seconds = SecondsSince(start);
    const double cpu = dev_->CpuSeconds() - cpu_before;
    const std::string by_component =
        CpuByComponent(threads_before, ThreadCpuSeconds(dev_->pid()), cpu, churn_seconds);
    // Put the last NotReady pods back, then wait until every place shows every flip's Ready.
    for (std::size_t index : not_ready) {
      model::Pod& pod = pods_[index];
      SetStatus(pod, pod.status.pod_ip, true);
      watcher_.ReadyWritten(pod.status.pod_ip, SteadyClock::now());
      SW_ASSIGN_OR_RETURN(pod, pods.UpdateStatus(pod));
      ++events;
    }
    std::vector<int> hops;
    for (int p = 0; p < places; ++p) hops.push_back(p);
    const Status converged =
        WaitFor([&] { return watcher_.AllReady(hops); },
                [] { return std::string("a pod made Ready never showed ready at every hop"); },
                std::chrono::seconds(30));
    // Writes still on their way arrive within a moment of the last Ready.
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    std::vector<double> to_local, local_to_broker, broker_to_member2, to_member2, to_last;
    std::size_t unmeasured = 0;
    for (const SliceWatcher::Seen& seen : watcher_.TakeFlips()) {
      bool all = true;
      for (int p = 0; p < places; ++p)
        all = all && seen.at[static_cast<std::size_t>(p)].has_value();
      if (!all) {
        ++unmeasured;
        continue;
      }
      const auto at = [&](int p) { return *seen.at[static_cast<std::size_t>(p)]; };
      to_local.push_back(Ms(at(kLocal) - seen.since));
      local_to_broker.push_back(Ms(at(kBroker) - at(kLocal)));
      broker_to_member2.push_back(Ms(at(kMcs + 1) - at(kBroker)));
      to_member2.push_back(Ms(at(kMcs + 1) - seen.since));
      SteadyClock::time_point last = at(kMcs);
      for (int m = 0; m < options_.clusters; ++m) last = std::max(last, at(kMcs + m));
      to_last.push_back(Ms(last - seen.since));
    }
    std::string writes;
    const auto per_event = [&](int place) {
      return static_cast<double>(watcher_.Writes(place) -
                                 writes_before[static_cast<std::size_t>(place)]) /
             static_cast<double>(std::max<std::int64_t>(1, events));
    };
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "cluster_1_own=%.2f broker=%.2f", per_event(kLocal),
                  per_event(kBroker));
    writes = buffer;
    for (int m = 0; m < options_.clusters; ++m) {
      std::snprintf(buffer, sizeof buffer, " cluster_%d_mcs=%.2f", m + 1, per_event(kMcs + m));
      writes += buffer;
    }
    std::printf(
        "churn[%d]: seconds=%.1f pod_events=%lld ready_transitions=%zu unmeasured=%zu "
        "ready_to_cluster_1_slice_p50_ms=%.1f p99_ms=%.1f "
        "cluster_1_slice_to_broker_p50_ms=%.1f p99_ms=%.1f "
        "broker_to_cluster_2_p50_ms=%.1f p99_ms=%.1f "
        "ready_to_cluster_2_p50_ms=%.1f p99_ms=%.1f max_ms=%.1f "
        "ready_to_every_member_p99_ms=%.1f slice_writes_per_pod_event: %s "
        "dev_cpu_cores=%.3f dev_rss_mb=%.0f dev_peak_rss_mb=%.0f\n"
        "churn[%d]: %s\n",
        run, churn_seconds, static_cast<long long>(events), to_member2.size(), unmeasured,
        Percentile(to_local, 0.5), Percentile(to_local, 0.99), Percentile(local_to_broker, 0.5),
        Percentile(local_to_broker, 0.99), Percentile(broker_to_member2, 0.5),
        Percentile(broker_to_member2, 0.99), Percentile(to_member2, 0.5),
        Percentile(to_member2, 0.99), Percentile(to_member2, 1.0), Percentile(to_last, 0.99),
        writes.c_str(), cpu / churn_seconds, dev_->MemoryMb("VmRSS"), dev_->MemoryMb("VmHWM"), run,
        by_component.c_str());
    std::fflush(stdout);
    return converged;
  }

  Options options_;
  std::filesystem::path root_;
  std::unique_ptr<Child> dev_;
  std::unique_ptr<client::RestClient> broker_;
  std::vector<Member> members_;
  std::unique_ptr<cache::Informer<model::EndpointSlice>> broker_slices_;
  SliceWatcher watcher_;
  ImportWatcher imports_;
  std::vector<model::Pod> pods_;  // cluster-1's, as last written
};

}  // namespace

int main(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const auto value = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::cerr << "mcs_sim: " << arg << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--smoke") {
      options.services = 20;
      options.pods = 3;
      options.dual = 5;
      options.churn_seconds = 3;
      options.runs = 1;
      options.clients = 4;
    } else if (arg == "--server") {
      options.server = value();
    } else if (arg == "--clusters") {
      options.clusters = std::atoi(value());
    } else if (arg == "--services") {
      options.services = std::atoi(value());
    } else if (arg == "--pods") {
      options.pods = std::atoi(value());
    } else if (arg == "--dual") {
      options.dual = std::atoi(value());
    } else if (arg == "--export-rate") {
      options.export_rate = std::atoi(value());
    } else if (arg == "--rate") {
      options.rate = std::atoi(value());
    } else if (arg == "--churn-seconds") {
      options.churn_seconds = std::atoi(value());
    } else if (arg == "--runs") {
      options.runs = std::atoi(value());
    } else if (arg == "--clients") {
      options.clients = std::atoi(value());
    } else {
      std::cerr << "mcs_sim: unknown argument " << arg << "\n";
      return 2;
    }
  }
  if (options.clusters < 2 || options.services < 1 || options.pods < 1 || options.dual < 0 ||
      options.export_rate < 1 || options.rate < 1 || options.runs < 0 || options.clients < 1 ||
      options.churn_seconds < 0) {
    std::cerr << "mcs_sim: --clusters must be at least 2 and the counts positive\n";
    return 2;
  }
  if (::access(options.server.c_str(), X_OK) != 0) {
    std::cerr << "mcs_sim: --server " << options.server << ": not an executable; build it\n";
    return 2;
  }
  ::signal(SIGPIPE, SIG_IGN);
  return Simulation(std::move(options)).Run();
}

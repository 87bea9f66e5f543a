// fleet_sim: a ClusterSet of fleet size, by simulation (issue #31 §1; results and method in
// docs/performance.md, "A ClusterSet of fleet size"). A standalone program, not Google Benchmark.
// It starts, as child processes on fresh data directories:
//   the broker     `slicewright apiserver --mcs-crds`
//   real members   each its own `slicewright apiserver --mcs-crds` and a
//                  `slicewright controller-manager --controllers=mcs` (the agent alone, as
//                  deploy/mcs/member runs it); the driver writes what the member's users and
//                  endpoint controller would (namespaces, Services, their own EndpointSlices,
//                  ServiceExports)
// and plays the other members itself: each simulated member writes to the broker exactly what an
// agent writes (bench/simulated_member.h: records, broker slices, the published mark, its Lease
// renewed every third of its duration), and, after the load, holds the watches an agent holds
// there (records, MCS slices, Leases; counted, not decoded), so the broker pays the fan-out.
//
// What is exported ("1,000 exported Services"): S Service names, in 10 namespaces that exist in
// every member, each exported by K members (--exporters; default all of them: every member
// exports every name, so each import merges every member's endpoints), each member's export of
// a name with E endpoints of its own (--endpoints).
//
// Phases, one result line each on stdout (progress on stderr):
//   load     every member but the last real one (the joiner) exports; time until the first real
//            member holds every import Present with every endpoint ready
//   join     the joiner's API server is filled and its agent started: time until every import
//            there is Present with every endpoint ready (and its own exports published)
//   export   a simulated member exports X new names at R/s: per export, record create -> the
//            ServiceImport in each real member, and -> its endpoints ready there (p50/p99)
//   idle     nothing changes but Leases: CPU of each agent and of the broker
//   churn    endpoint readiness flips in simulated members at E/s for D s (one broker slice
//            write each, checked); per Ready, the broker write -> the endpoint ready in each real
//            member's MCS slice (p50/p99/max); MCS slice writes per change in each real member;
//            broker writes/s and watch events delivered/s; CPU and RSS of every process
// Exit 1 when a phase fails (a write fails, a state never converges), not when a target is
// missed.
//
// Usage: fleet_sim [--server PATH] [--members N] [--real R] [--services S] [--endpoints E]
//                  [--exporters K] [--new-exports X] [--export-rate R] [--rate E]
//                  [--churn-seconds D] [--churn-set P] [--agent-qps Q] [--lease-seconds L]
//                  [--clients C] [--sim-watchers W] [--converge-seconds T] [--agent-v V]
//                  [--smoke]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include <signal.h>
#include <unistd.h>

#include "slicewright/base/result.h"
#include "slicewright/client/rest_client.h"
#include "slicewright/client/transport.h"
#include "slicewright/client/typed_client.h"
#include "slicewright/codec/json.h"
#include "slicewright/codec/mcs.h"
#include "slicewright/model/mcs.h"
#include "slicewright/model/well_known.h"

#include "controllers/mcs/kinds.h"
#include "driver.h"
#include "simulated_member.h"
#include "workload.h"

namespace {

using namespace slicewright;
using bench::Child;
using bench::ParallelFor;
using bench::Percentile;
using bench::SecondsSince;
using bench::SteadyClock;
using bench::UnthrottledClient;

struct Options {
  std::string server = "build/release/src/cli/slicewright";
  int members = 10;
  int real = 2;  // the last one joins a full ClusterSet
  int services = 1000;
  int endpoints = 10;
  int exporters = 0;  // 0: every member exports every name
  int new_exports = 100;
  int export_rate = 20;
  int rate = 20;  // endpoint changes per second in the churn
  int churn_seconds = 30;
  int churn_set = 1000;  // (member, name) pairs the churn picks from
  int agent_qps = 1000;  // the real agents' --kube-api-qps (burst twice it)
  int lease_seconds = 30;
  int clients = 8;
  int sim_watchers = -1;  // -1: one per simulated member
  int converge_seconds = 900;
  int agent_verbosity = 0;  // the real agents' -v (2 logs every retried sync)
};

constexpr int kNamespaces = 10;
std::string Namespace(int service) { return "fleet-" + std::to_string(service % kNamespaces); }
std::string ServiceName(int service) { return "svc-" + std::to_string(service); }
std::string ServiceKey(int service) { return Namespace(service) + "/" + ServiceName(service); }
std::string ClusterId(int member) { return "member-" + std::to_string(member + 1); }

double Ms(SteadyClock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

model::Time WallNow() {
  return model::Time{std::chrono::duration_cast<std::chrono::nanoseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count()};
}

std::string LabelOf(const model::ObjectMeta& meta, std::string_view key) {
  auto it = meta.labels.find(key);
  return it == meta.labels.end() ? std::string() : it->second;
}

// The resourceVersion a watch of `resource` in `ns` starts from to see only what comes next.
Result<std::string> CurrentVersion(client::RestClient& client, const client::ResourceRef& resource,
                                   const std::string& ns) {
  client::ListOptions options;
  options.limit = 1;
  SW_ASSIGN_OR_RETURN(std::string body, client.List(resource, ns, options));
  // The list's metadata comes before its items.
  const std::string_view key = "\"resourceVersion\":\"";
  const std::size_t at = body.find(key);
  if (at == std::string::npos) return Status(StatusCode::kInternal, "list without resourceVersion");
  const std::size_t end = body.find('"', at + key.size());
  return body.substr(at + key.size(), end - at - key.size());
}

// A watch held open on its own thread from a resourceVersion, resumed where it left off when the
// server ends it; every event line goes to `on_line` with the line's resourceVersion already
// tracked. A failure (410 included) is kept and ends it: the run then fails.
class StreamWatch final {
 public:
  StreamWatch(client::RestClient& client, client::ResourceRef resource, std::string ns,
              std::string label_selector, std::string from,
              std::function<void(std::string_view)> on_line)
      : client_(client),
        resource_(std::move(resource)),
        ns_(std::move(ns)),
        selector_(std::move(label_selector)),
        version_(std::move(from)),
        on_line_(std::move(on_line)) {
    thread_ = std::thread([this] { Loop(); });
  }
  ~StreamWatch() {
    stopping_ = true;
    canceller_.Cancel();
    thread_.join();
  }
  StreamWatch(const StreamWatch&) = delete;
  StreamWatch& operator=(const StreamWatch&) = delete;

  std::int64_t events() const { return events_.load(); }
  // Watch requests made after the first: the server ended the stream (its timeout) and it resumed.
  std::int64_t resumes() const { return resumes_.load(); }
  std::string version() const {
    std::lock_guard lock(mu_);
    return version_;
  }
  std::int64_t bytes() const { return bytes_.load(); }
  Status error() const {
    std::lock_guard lock(mu_);
    return error_;
  }

 private:
  void Loop() {
    for (bool first = true; !stopping_; first = false) {
      if (!first) resumes_.fetch_add(1);
      client::ListOptions options;
      options.label_selector = selector_;
      options.resource_version = version();
      options.allow_watch_bookmarks = true;
      options.timeout_seconds = 600;
      const Status ended = client_.Watch(
          resource_, ns_, options,
          [this](std::string_view line) {
            events_.fetch_add(1);
            bytes_.fetch_add(static_cast<std::int64_t>(line.size()));
            // Resume from the last version seen: "resourceVersion":"N" of the event's object.
            const std::string_view key = "\"resourceVersion\":\"";
            if (const std::size_t at = line.find(key); at != std::string_view::npos) {
              const std::size_t end = line.find('"', at + key.size());
              std::lock_guard lock(mu_);
              version_ = std::string(line.substr(at + key.size(), end - at - key.size()));
            }
            if (on_line_) on_line_(line);
            return !stopping_;
          },
          &canceller_);
      if (stopping_) return;
      if (!ended.ok()) {
        // Said at once: a view fed by this watch stops here, and a wait on it would only time out.
        std::cerr << "fleet_sim: watch of " << resource_.resource << " in '" << ns_
                  << "' ended: " << ended.ToString() << "\n";
        std::lock_guard lock(mu_);
        error_ = ended;
        return;
      }
    }
  }

  client::RestClient& client_;
  const client::ResourceRef resource_;
  const std::string ns_;
  const std::string selector_;
  std::string version_;  // written by the watch thread only
  const std::function<void(std::string_view)> on_line_;
  client::StreamCanceller canceller_;
  std::atomic<bool> stopping_{false};
  std::atomic<std::int64_t> events_{0};
  std::atomic<std::int64_t> bytes_{0};
  std::atomic<std::int64_t> resumes_{0};
  mutable std::mutex mu_;
  Status error_;
  std::thread thread_;
};

// What the driver sees in one real member: its MCS slices' ready endpoints per imported service,
// when each ServiceImport appeared and turned Present, and when churned endpoints turned ready.
class MemberView final {
 public:
  // A flip of the endpoint `ip`: NotReady written; then, from ReadyWritten(), the Ready.
  void NotReadyWritten(const std::string& ip) {
    std::lock_guard lock(mu_);
    flips_[ip] = Flip{};
  }
  void ReadyWritten(const std::string& ip, SteadyClock::time_point at) {
    std::lock_guard lock(mu_);
    Flip& flip = flips_[ip];
    flip.ready_written = true;
    flip.since = at;
  }

  void OnSlice(std::string_view line) {
    Result<codec::WatchEvent<model::EndpointSlice>> event =
        codec::DecodeEndpointSliceWatchEvent(line);
    if (!event.ok() || event->type == codec::WatchEventType::kBookmark ||
        event->type == codec::WatchEventType::kError) {
      return;
    }
    const auto now = SteadyClock::now();
    const model::EndpointSlice& slice = event->object;
    const bool deleted = event->type == codec::WatchEventType::kDeleted;
    const std::string key = slice.metadata.namespace_ + "/" + slice.metadata.name;
    const std::string service =
        slice.metadata.namespace_ + "/" + LabelOf(slice.metadata, model::kLabelMcsServiceName);
    std::lock_guard lock(mu_);
    ++writes_;
    std::int64_t& total = ready_by_service_[service];
    if (auto old = ready_by_slice_.find(key); old != ready_by_slice_.end()) {
      total -= old->second;
      ready_by_slice_.erase(old);
    }
    if (deleted) return;
    std::int64_t ready = 0;
    for (const model::Endpoint& endpoint : slice.endpoints) {
      const bool is_ready = endpoint.conditions.ready.value_or(true);
      ready += is_ready ? 1 : 0;
      if (flips_.empty() || endpoint.addresses.empty()) continue;
      auto flip = flips_.find(endpoint.addresses.front());
      if (flip == flips_.end()) continue;
      if (!is_ready) {
        flip->second.seen_not_ready = true;
        flip->second.ready_after_written = false;
      } else if (flip->second.ready_written) {
        flip->second.ready_after_written = true;
        if (flip->second.seen_not_ready && !flip->second.seen_ready) {
          flip->second.seen_ready = now;
        }
      }
    }
    ready_by_slice_[key] = ready;
    total += ready;
    if (auto awaited = awaited_.find(service);
        awaited != awaited_.end() && total >= awaited->second) {
      ready_at_[service] = now;
      awaited_.erase(awaited);
    }
  }

  void OnImport(std::string_view line) {
    Result<codec::WatchEvent<model::ServiceImport>> event =
        codec::DecodeServiceImportWatchEvent(line);
    if (!event.ok() || event->type == codec::WatchEventType::kBookmark ||
        event->type == codec::WatchEventType::kError ||
        event->type == codec::WatchEventType::kDeleted) {
      return;
    }
    const auto now = SteadyClock::now();
    const std::string key = event->object.metadata.namespace_ + "/" + event->object.metadata.name;
    std::lock_guard lock(mu_);
    seen_.try_emplace(key, now);
    if (event->object.status.endpoint_slice_objects == model::EndpointSliceObjects::kPresent) {
      present_.try_emplace(key, now);
    }
  }

  // From now on, records when `service` first holds `ready` ready endpoints here.
  void AwaitReady(const std::string& service, std::int64_t ready) {
    std::lock_guard lock(mu_);
    ready_at_.erase(service);
    if (ready_by_service_[service] >= ready) {
      ready_at_[service] = SteadyClock::now();
    } else {
      awaited_[service] = ready;
    }
  }
  std::optional<SteadyClock::time_point> ReadyAt(const std::string& service) {
    std::lock_guard lock(mu_);
    return Find(ready_at_, service);
  }
  std::optional<SteadyClock::time_point> SeenAt(const std::string& key) {
    std::lock_guard lock(mu_);
    return Find(seen_, key);
  }
  std::optional<SteadyClock::time_point> PresentAt(const std::string& key) {
    std::lock_guard lock(mu_);
    return Find(present_, key);
  }
  std::int64_t writes() {
    std::lock_guard lock(mu_);
    return writes_;
  }
  std::size_t slices() {
    std::lock_guard lock(mu_);
    return ready_by_slice_.size();
  }
  // Whether every flip whose Ready was written shows ready here; and the delays of those that do.
  // A flip whose NotReady never showed and that shows ready after its Ready was written was
  // coalesced: an agent behind by more than the flip's length applies both in one sync, which is
  // right (the member ends where the source is) but has no delay to measure.
  std::string PendingFlips() {
    std::lock_guard lock(mu_);
    std::size_t pending = 0;
    std::size_t never_not_ready = 0;
    for (const auto& [ip, flip] : flips_) {
      if (flip.ready_written && !flip.seen_ready && !Coalesced(flip)) {
        ++pending;
        never_not_ready += flip.seen_not_ready ? 0 : 1;
      }
    }
    return std::to_string(pending) + " flips not ready here (" + std::to_string(never_not_ready) +
           " of them never shown NotReady either)";
  }
  // The endpoints of the flips PendingFlips() counts.
  std::set<std::string> PendingIps() {
    std::lock_guard lock(mu_);
    std::set<std::string> ips;
    for (const auto& [ip, flip] : flips_) {
      if (flip.ready_written && !flip.seen_ready && !Coalesced(flip)) ips.insert(ip);
    }
    return ips;
  }
  // Whether each of `ips` has shown NotReady here since its last NotReadyWritten().
  bool AllShownNotReady(const std::set<std::string>& ips) {
    std::lock_guard lock(mu_);
    for (const std::string& ip : ips) {
      auto flip = flips_.find(ip);
      if (flip == flips_.end() || !flip->second.seen_not_ready) return false;
    }
    return true;
  }
  bool AllFlipsReady() {
    std::lock_guard lock(mu_);
    for (const auto& [ip, flip] : flips_) {
      if (flip.ready_written && !flip.seen_ready && !Coalesced(flip)) return false;
    }
    return true;
  }
  std::vector<double> TakeFlipDelaysMs(std::size_t* unmeasured, std::size_t* coalesced) {
    std::lock_guard lock(mu_);
    std::vector<double> delays;
    for (const auto& [ip, flip] : flips_) {
      if (!flip.ready_written) continue;
      if (flip.seen_ready) {
        delays.push_back(Ms(*flip.seen_ready - flip.since));
      } else if (Coalesced(flip)) {
        ++*coalesced;
      } else {
        ++*unmeasured;
      }
    }
    flips_.clear();
    return delays;
  }

 private:
  struct Flip {
    bool ready_written = false;
    bool seen_not_ready = false;
    bool ready_after_written = false;  // the last event since the Ready was written shows it ready
    SteadyClock::time_point since;
    std::optional<SteadyClock::time_point> seen_ready;
  };
  static bool Coalesced(const Flip& flip) {
    return flip.ready_written && !flip.seen_not_ready && flip.ready_after_written;
  }
  template <typename Map>
  static std::optional<SteadyClock::time_point> Find(const Map& map, const std::string& key) {
    auto it = map.find(key);
    if (it == map.end()) return std::nullopt;
    return it->second;
  }

  std::mutex mu_;
  std::int64_t writes_ = 0;
  std::unordered_map<std::string, std::int64_t> ready_by_slice_;
  std::unordered_map<std::string, std::int64_t> ready_by_service_;
  std::unordered_map<std::string, std::int64_t> awaited_;
  std::unordered_map<std::string, SteadyClock::time_point> ready_at_;
  std::unordered_map<std::string, SteadyClock::time_point> seen_;
  std::unordered_map<std::string, SteadyClock::time_point> present_;
  std::unordered_map<std::string, Flip> flips_;
};

struct RealMember {
  int index = 0;
  std::string id;
  std::filesystem::path dir;
  std::unique_ptr<Child> server;
  std::unique_ptr<Child> agent;
  std::unique_ptr<client::RestClient> client;
  MemberView view;
  std::vector<std::unique_ptr<StreamWatch>> watches;
  SteadyClock::time_point agent_started;
};

// CPU seconds of a process over a window.
struct CpuWindow {
  double start = 0;
  double Cores(const Child& child, double seconds) const {
    return (child.CpuSeconds() - start) / std::max(seconds, 1e-9);
  }
};

class Fleet final {
 public:
  explicit Fleet(Options options) : options_(std::move(options)) {
    if (options_.exporters <= 0 || options_.exporters > options_.members) {
      options_.exporters = options_.members;
    }
    if (options_.sim_watchers < 0) options_.sim_watchers = options_.members - options_.real;
  }

  int Run() {
    root_ = std::filesystem::temp_directory_path() / ("fleet_sim." + std::to_string(::getpid()));
    std::filesystem::create_directories(root_);
    const int code = RunPhases();
    stop_leases_ = true;
    if (lease_thread_.joinable()) lease_thread_.join();
    sim_watches_.clear();
    broker_watches_.clear();
    for (RealMember& member : real_) member.watches.clear();
    for (RealMember& member : real_) {
      if (member.agent) member.agent->Stop();
      if (member.server) member.server->Stop();
    }
    if (broker_) broker_->Stop();
    if (code == 0) {
      std::filesystem::remove_all(root_);
    } else {
      std::cerr << "fleet_sim: kept " << root_ << " for inspection\n";
    }
    return code;
  }

 private:
  // The figures of the phases that finished still make a summary line, marked with the phase
  // that failed, so a run that fails at its last phase still gives the table its other columns.
  int Fail(const std::string& phase, const Status& status) {
    std::cerr << "fleet_sim: " << phase << ": " << status.ToString() << "\n";
    for (RealMember& member : real_) {
      if (member.agent) std::cerr << member.agent->LogTail() << "\n";
    }
    Summary(phase);
    return 1;
  }

  int RunPhases() {
    if (Status s = StartBroker(); !s.ok()) return Fail("broker", s);
    if (Status s = Load(); !s.ok()) return Fail("load", s);
    if (Status s = Join(); !s.ok()) return Fail("join", s);
    if (Status s = StartSimulatedWatchers(); !s.ok()) return Fail("watchers", s);
    if (Status s = NewExports(); !s.ok()) return Fail("export", s);
    Idle();
    if (Status s = Churn(); !s.ok()) return Fail("churn", s);
    Summary();
    return 0;
  }

  // Whether member `member` exports name `service` (members from 0; the real ones first).
  bool Exports(int member, int service) const {
    const int n = options_.members;
    return ((member - service) % n + n) % n < options_.exporters;
  }
  // Endpoint `e` of `member`'s export of `service`: unique in the ClusterSet.
  std::string Ip(int member, int service, int e) const {
    const std::int64_t per_member =
        static_cast<std::int64_t>(options_.services + options_.new_exports) * options_.endpoints;
    const std::int64_t index =
        member * per_member + static_cast<std::int64_t>(service) * options_.endpoints + e;
    return "10." + std::to_string((index >> 16) & 255) + "." + std::to_string((index >> 8) & 255) +
           "." + std::to_string(index & 255);
  }
  std::vector<std::string> Ips(int member, int service) const {
    std::vector<std::string> ips;
    for (int e = 0; e < options_.endpoints; ++e) ips.push_back(Ip(member, service, e));
    return ips;
  }
  // Ready endpoints an import of `service` holds when the members in `present` export.
  std::int64_t ExpectedReady(int service) const {
    std::int64_t exporters = 0;
    for (int m = 0; m < options_.members; ++m) {
      if (present_.contains(m) && Exports(m, service)) ++exporters;
    }
    return exporters * options_.endpoints;
  }

  Status StartBroker() {
    const std::filesystem::path dir = root_ / "broker";
    std::filesystem::create_directories(dir);
    broker_kubeconfig_ = (root_ / "broker.kubeconfig").string();
    SW_ASSIGN_OR_RETURN(broker_,
                        Child::Start({options_.server, "apiserver", "--mcs-crds", "--insecure-http",
                                      "--listen", "127.0.0.1:0", "--data-dir", dir.string(),
                                      "--write-kubeconfig", broker_kubeconfig_},
                                     (root_ / "broker.log").string()));
    SW_RETURN_IF_ERROR(broker_->WaitForLine("serving on ", std::chrono::seconds(60)).status());
    SW_ASSIGN_OR_RETURN(broker_client_, UnthrottledClient(broker_kubeconfig_));
    model::Namespace ns;
    ns.metadata.name = std::string(model::kDefaultBrokerNamespace);
    SW_RETURN_IF_ERROR(
        client::TypedClient<model::Namespace>(*broker_client_, client::NamespaceCodec())
            .Create(ns)
            .status());
    // Every broker write, counted from watches of what agents write there.
    for (const auto& [resource, selector] :
         std::vector<std::pair<client::ResourceRef, std::string>>{
             {client::EndpointSlicesResource(), ""},
             {controllers::mcs::ServiceExportRecordsResource(), ""},
             {client::LeasesResource(), ""}}) {
      SW_ASSIGN_OR_RETURN(
          std::string from,
          CurrentVersion(*broker_client_, resource, std::string(model::kDefaultBrokerNamespace)));
      broker_watches_.push_back(std::make_unique<StreamWatch>(
          *broker_client_, resource, std::string(model::kDefaultBrokerNamespace), selector, from,
          nullptr));
    }
    return Status();
  }

  // A real member's API server, its namespaces, and (when `with_exports`) its Services, their own
  // slices and their ServiceExports; its agent is started by StartAgent.
  Status StartRealMember(int index) {
    RealMember& member = real_[static_cast<std::size_t>(index)];
    member.index = index;
    member.id = ClusterId(index);
    member.dir = root_ / member.id;
    std::filesystem::create_directories(member.dir);
    const std::string kubeconfig = (root_ / (member.id + ".kubeconfig")).string();
    SW_ASSIGN_OR_RETURN(member.server,
                        Child::Start({options_.server, "apiserver", "--mcs-crds", "--insecure-http",
                                      "--listen", "127.0.0.1:0", "--data-dir", member.dir.string(),
                                      "--write-kubeconfig", kubeconfig},
                                     (root_ / (member.id + "-apiserver.log")).string()));
    SW_RETURN_IF_ERROR(
        member.server->WaitForLine("serving on ", std::chrono::seconds(60)).status());
    SW_ASSIGN_OR_RETURN(member.client, UnthrottledClient(kubeconfig));
    client::RestClient& rest = *member.client;
    for (int i = 0; i < kNamespaces; ++i) {
      model::Namespace ns;
      ns.metadata.name = Namespace(i);
      SW_RETURN_IF_ERROR(client::TypedClient<model::Namespace>(rest, client::NamespaceCodec())
                             .Create(ns)
                             .status());
    }
    // The driver watches its MCS slices and imports from the start.
    const std::string mcs_slices =
        std::string(model::kLabelManagedBy) + "=" + std::string(model::kManagedByMcs);
    SW_ASSIGN_OR_RETURN(std::string slices_from,
                        CurrentVersion(rest, client::EndpointSlicesResource(), ""));
    member.watches.push_back(std::make_unique<StreamWatch>(
        rest, client::EndpointSlicesResource(), "", mcs_slices, slices_from,
        [&member](std::string_view line) { member.view.OnSlice(line); }));
    SW_ASSIGN_OR_RETURN(std::string imports_from,
                        CurrentVersion(rest, controllers::mcs::ServiceImportsResource(), ""));
    member.watches.push_back(std::make_unique<StreamWatch>(
        rest, controllers::mcs::ServiceImportsResource(), "", "", imports_from,
        [&member](std::string_view line) { member.view.OnImport(line); }));
    // What its users and its endpoint controller write: the exported Services.
    client::TypedClient<model::Service> services(rest, client::ServiceCodec());
    client::TypedClient<model::EndpointSlice> slices(rest, client::EndpointSliceCodec());
    client::TypedClient<model::ServiceExport> exports(rest, controllers::mcs::ServiceExportCodec());
    return ParallelFor(options_.clients, options_.services, [&](std::int64_t i) -> Status {
      const int s = static_cast<int>(i);
      if (!Exports(index, s)) return Status();
      SW_RETURN_IF_ERROR(
          services.Create(bench::SimulatedService(Namespace(s), ServiceName(s))).status());
      SW_RETURN_IF_ERROR(
          slices.Create(bench::SimulatedOwnSlice(Namespace(s), ServiceName(s), Ips(index, s)))
              .status());
      model::ServiceExport service_export;
      service_export.metadata.namespace_ = Namespace(s);
      service_export.metadata.name = ServiceName(s);
      return exports.Create(service_export).status();
    });
  }

  Status StartAgent(RealMember& member) {
    const std::string kubeconfig = (root_ / (member.id + ".kubeconfig")).string();
    member.agent_started = SteadyClock::now();
    SW_ASSIGN_OR_RETURN(member.agent, Child::Start({options_.server,
                                                    "controller-manager",
                                                    "--kubeconfig",
                                                    kubeconfig,
                                                    "--controllers=mcs",
                                                    "--cluster-id",
                                                    member.id,
                                                    "--broker-kubeconfig",
                                                    broker_kubeconfig_,
                                                    "--leader-elect=false",
                                                    "--port",
                                                    "-1",
                                                    "--mcs-dns-address",
                                                    "127.0.0.1:0",
                                                    "--mcs-lease-duration",
                                                    std::to_string(options_.lease_seconds) + "s",
                                                    "--kube-api-qps",
                                                    std::to_string(options_.agent_qps),
                                                    "--kube-api-burst",
                                                    std::to_string(2 * options_.agent_qps),
                                                    "-v",
                                                    std::to_string(options_.agent_verbosity)},
                                                   (root_ / (member.id + "-agent.log")).string()));
    present_.insert(member.index);
    return Status();
  }

  // Creates every simulated member's Lease, then renews each every third of its duration.
  Status StartLeases() {
    for (int m = options_.real; m < options_.members; ++m) {
      simulated_.push_back(std::make_unique<bench::SimulatedMember>(
          ClusterId(m), *broker_client_, std::string(model::kDefaultBrokerNamespace),
          std::chrono::seconds(options_.lease_seconds), "fleet-sim_" + ClusterId(m)));
    }
    for (auto& member : simulated_) SW_RETURN_IF_ERROR(member->RenewLease());
    lease_thread_ = std::thread([this] {
      const auto period = std::chrono::seconds(options_.lease_seconds) / 3;
      auto next = SteadyClock::now() + period;
      while (!stop_leases_) {
        if (SteadyClock::now() < next) {
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
          continue;
        }
        next += period;
        for (auto& member : simulated_) {
          if (const Status renewed = member->RenewLease(); !renewed.ok()) {
            std::cerr << "fleet_sim: renewing " << member->cluster_id()
                      << "'s Lease: " << renewed.ToString() << "\n";
            lease_failures_.fetch_add(1);
          }
        }
      }
    });
    return Status();
  }

  bench::SimulatedMember& Simulated(int member) {
    return *simulated_[static_cast<std::size_t>(member - options_.real)];
  }

  // Waits until `member` holds every import of `services` Present with every endpoint ready.
  Status WaitImported(RealMember& member, int first, int count, SteadyClock::duration timeout) {
    // A name none of the present members exports has no import to wait for.
    std::vector<int> awaited;
    for (int s = first; s < first + count; ++s) {
      if (ExpectedReady(s) == 0) continue;
      awaited.push_back(s);
      member.view.AwaitReady(ServiceKey(s), ExpectedReady(s));
    }
    const auto deadline = SteadyClock::now() + timeout;
    int missing = 0;
    auto last_report = SteadyClock::now();
    while (true) {
      missing = 0;
      for (const int s : awaited) {
        if (!member.view.PresentAt(ServiceKey(s)) || !member.view.ReadyAt(ServiceKey(s))) {
          ++missing;
        }
      }
      if (missing == 0) return Status();
      if (SteadyClock::now() > deadline) break;
      if (SteadyClock::now() - last_report > std::chrono::seconds(15)) {
        last_report = SteadyClock::now();
        std::cerr << "fleet_sim: " << member.id << ": " << missing << " of " << count
                  << " imports not complete; " << member.view.slices() << " MCS slices; agent rss "
                  << member.agent->MemoryMb("VmRSS") << " MB\n";
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return Status(StatusCode::kTimeout, member.id + ": " + std::to_string(missing) + " of " +
                                            std::to_string(awaited.size()) +
                                            " imports not Present with every endpoint ready");
  }

  std::int64_t BrokerEvents() const {
    std::int64_t events = 0;
    for (const auto& watch : broker_watches_) events += watch->events();
    return events;
  }
  std::int64_t SimWatcherEvents() const {
    std::int64_t events = 0;
    for (const auto& watch : sim_watches_) events += watch->events();
    return events;
  }

  std::string Rss(const Child& child) const {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.0f/%.0f", child.MemoryMb("VmRSS"),
                  child.MemoryMb("VmHWM"));
    return buffer;
  }

  // Per real member: agent cores, agent RSS/peak, API server RSS.
  std::string MemberFigures(const std::vector<CpuWindow>& agent_cpu, double seconds) {
    std::string out;
    char buffer[160];
    for (RealMember& member : real_) {
      if (!member.agent) continue;
      std::snprintf(buffer, sizeof buffer,
                    " %s_agent_cores=%.3f %s_agent_rss_mb=%s %s_apiserver_rss_mb=%s",
                    member.id.c_str(),
                    agent_cpu[static_cast<std::size_t>(member.index)].Cores(*member.agent, seconds),
                    member.id.c_str(), Rss(*member.agent).c_str(), member.id.c_str(),
                    Rss(*member.server).c_str());
      out += buffer;
    }
    return out;
  }
  std::vector<CpuWindow> AgentCpuNow() {
    std::vector<CpuWindow> cpu(real_.size());
    for (RealMember& member : real_) {
      if (member.agent)
        cpu[static_cast<std::size_t>(member.index)].start = member.agent->CpuSeconds();
    }
    return cpu;
  }

  Status Load() {
    real_ = std::vector<RealMember>(static_cast<std::size_t>(options_.real));
    const auto start = SteadyClock::now();
    // The real members but the joiner, with their agents running from the start.
    for (int r = 0; r + 1 < options_.real; ++r) {
      SW_RETURN_IF_ERROR(StartRealMember(r));
      SW_RETURN_IF_ERROR(StartAgent(real_[static_cast<std::size_t>(r)]));
    }
    SW_RETURN_IF_ERROR(StartLeases());
    for (int m = options_.real; m < options_.members; ++m) present_.insert(m);
    const CpuWindow broker_cpu{broker_->CpuSeconds()};
    const std::vector<CpuWindow> agent_cpu = AgentCpuNow();
    const std::int64_t events_before = BrokerEvents();
    // Every simulated member's exports, members interleaved so the imports fill evenly.
    std::vector<std::pair<int, int>> exports;  // (member, service)
    for (int service = 0; service < options_.services; ++service) {
      for (int member = options_.real; member < options_.members; ++member) {
        if (Exports(member, service)) exports.emplace_back(member, service);
      }
    }
    // The churn set: exports spread over every simulated member and name.
    const std::int64_t pairs = static_cast<std::int64_t>(exports.size());
    const std::int64_t stride = std::max<std::int64_t>(1, pairs / std::max(1, options_.churn_set));
    std::mutex kept_mu;
    const auto load_start = SteadyClock::now();
    std::atomic<std::int64_t> done{0};
    SW_RETURN_IF_ERROR(ParallelFor(options_.clients, pairs, [&](std::int64_t i) -> Status {
      const auto [member, service] = exports[static_cast<std::size_t>(i)];
      SW_ASSIGN_OR_RETURN(bench::SimulatedExport exported,
                          Simulated(member).Export(
                              bench::SimulatedService(Namespace(service), ServiceName(service)),
                              bench::SimulatedOwnSlice(Namespace(service), ServiceName(service),
                                                       Ips(member, service)),
                              WallNow()));
      if (i % stride == 0) {
        std::lock_guard lock(kept_mu);
        churn_set_.push_back({member, service, std::move(exported)});
      }
      if (const std::int64_t n = done.fetch_add(1) + 1; n % 20000 == 0) {
        std::cerr << "fleet_sim: " << n << " simulated exports written, broker rss "
                  << broker_->MemoryMb("VmRSS") << " MB\n";
      }
      return Status();
    }));
    const double write_seconds = SecondsSince(load_start);
    std::int64_t sim_writes = 0;
    for (auto& member : simulated_) sim_writes += member->writes();
    const double write_cores = broker_cpu.Cores(*broker_, write_seconds);
    std::fprintf(stderr, "fleet_sim: simulated exports written in %.1f s; waiting for %s\n",
                 write_seconds, real_[0].id.c_str());
    // The first real member holds every import.
    SW_RETURN_IF_ERROR(WaitImported(real_[0], 0, options_.services,
                                    std::chrono::seconds(options_.converge_seconds)));
    const double seconds = SecondsSince(start);
    std::printf(
        "load: members=%d real=%d services=%d endpoints=%d exporters=%d broker_records=%lld "
        "simulated_writes=%lld write_seconds=%.1f broker_writes_per_s=%.0f "
        "broker_cores_while_writing=%.2f seconds_to_all_imported=%.1f broker_events=%lld "
        "broker_rss_mb=%s member_1_mcs_slices=%zu%s\n",
        options_.members, options_.real, options_.services, options_.endpoints, options_.exporters,
        static_cast<long long>(options_.services) * options_.exporters,
        static_cast<long long>(sim_writes), write_seconds,
        static_cast<double>(sim_writes) / std::max(write_seconds, 1e-9), write_cores, seconds,
        static_cast<long long>(BrokerEvents() - events_before), Rss(*broker_).c_str(),
        real_[0].view.slices(), MemberFigures(agent_cpu, seconds).c_str());
    std::fflush(stdout);
    figures_["load_seconds"] = seconds;
    figures_["broker_rss_mb"] = broker_->MemoryMb("VmRSS");
    figures_["broker_writes_per_s_load"] =
        static_cast<double>(sim_writes) / std::max(write_seconds, 1e-9);
    return Status();
  }

  Status Join() {
    RealMember& joiner = real_.back();
    const auto start = SteadyClock::now();
    SW_RETURN_IF_ERROR(StartRealMember(options_.real - 1));
    const double fill_seconds = SecondsSince(start);
    const CpuWindow broker_cpu{broker_->CpuSeconds()};
    SW_RETURN_IF_ERROR(StartAgent(joiner));
    // Its own exports now count in every import (the first member's too).
    const auto agent_start = joiner.agent_started;
    SW_RETURN_IF_ERROR(WaitImported(joiner, 0, options_.services,
                                    std::chrono::seconds(options_.converge_seconds)));
    const double join_seconds = SecondsSince(agent_start);
    const double joiner_cpu = joiner.agent->CpuSeconds();
    // Every other real member sees the joiner's endpoints in every import it exports.
    for (RealMember& member : real_) {
      if (&member == &joiner) continue;
      SW_RETURN_IF_ERROR(WaitImported(member, 0, options_.services,
                                      std::chrono::seconds(options_.converge_seconds)));
    }
    const double everywhere_seconds = SecondsSince(agent_start);
    std::printf(
        "join: %s fill_seconds=%.1f join_seconds_to_every_import_ready=%.1f "
        "its_exports_everywhere_seconds=%.1f joiner_cpu_seconds=%.1f joiner_agent_rss_mb=%s "
        "joiner_apiserver_rss_mb=%s joiner_mcs_slices=%zu broker_cores=%.2f\n",
        joiner.id.c_str(), fill_seconds, join_seconds, everywhere_seconds, joiner_cpu,
        Rss(*joiner.agent).c_str(), Rss(*joiner.server).c_str(), joiner.view.slices(),
        broker_cpu.Cores(*broker_, everywhere_seconds));
    std::fflush(stdout);
    figures_["join_seconds"] = join_seconds;
    return Status();
  }

  // W simulated members' broker watches, as their agents hold them: records, MCS slices, Leases.
  Status StartSimulatedWatchers() {
    const std::string ns(model::kDefaultBrokerNamespace);
    const std::string mcs_slices =
        std::string(model::kLabelManagedBy) + "=" + std::string(model::kManagedByMcs);
    std::vector<std::pair<client::ResourceRef, std::string>> watched = {
        {controllers::mcs::ServiceExportRecordsResource(), ""},
        {client::EndpointSlicesResource(), mcs_slices},
        {client::LeasesResource(), ""}};
    std::vector<std::string> from;
    for (const auto& [resource, selector] : watched) {
      SW_ASSIGN_OR_RETURN(std::string version, CurrentVersion(*broker_client_, resource, ns));
      from.push_back(version);
    }
    for (int w = 0; w < options_.sim_watchers; ++w) {
      for (std::size_t k = 0; k < watched.size(); ++k) {
        sim_watches_.push_back(std::make_unique<StreamWatch>(*broker_client_, watched[k].first, ns,
                                                             watched[k].second, from[k], nullptr));
      }
    }
    return Status();
  }

  Status NewExports() {
    if (options_.new_exports <= 0) return Status();
    const int exporter = options_.members - 1;  // a simulated member (or the joiner)
    const int first = options_.services;
    for (RealMember& member : real_) {
      for (int s = first; s < first + options_.new_exports; ++s) {
        member.view.AwaitReady(ServiceKey(s), options_.endpoints);
      }
    }
    const std::int64_t events_before = BrokerEvents();
    const std::int64_t fanout_before = SimWatcherEvents();
    const auto start = SteadyClock::now();
    std::vector<SteadyClock::time_point> created;
    const auto interval = std::chrono::microseconds(1'000'000 / std::max(1, options_.export_rate));
    auto next = start;
    for (int s = first; s < first + options_.new_exports; ++s) {
      std::this_thread::sleep_until(next);
      next += interval;
      created.push_back(SteadyClock::now());
      if (exporter >= options_.real) {
        SW_RETURN_IF_ERROR(
            Simulated(exporter)
                .Export(bench::SimulatedService(Namespace(s), ServiceName(s)),
                        bench::SimulatedOwnSlice(Namespace(s), ServiceName(s), Ips(exporter, s)),
                        WallNow())
                .status());
      }
    }
    std::vector<double> visible;
    std::vector<double> ready;
    double slowest_ms = 0;
    std::string slowest;  // which import of which member, and its place in the export order
    int missing = 0;
    const auto deadline = SteadyClock::now() + std::chrono::seconds(120);
    while (true) {
      visible.clear();
      ready.clear();
      slowest_ms = 0;
      missing = 0;
      for (RealMember& member : real_) {
        for (int s = first; s < first + options_.new_exports; ++s) {
          const auto since = created[static_cast<std::size_t>(s - first)];
          const auto seen = member.view.SeenAt(ServiceKey(s));
          const auto at = member.view.ReadyAt(ServiceKey(s));
          const auto present = member.view.PresentAt(ServiceKey(s));
          if (!seen || !at || !present) {
            ++missing;
            continue;
          }
          visible.push_back(Ms(*seen - since));
          ready.push_back(Ms(std::max(*at, *present) - since));
          if (ready.back() >= slowest_ms) {
            slowest_ms = ready.back();
            slowest = member.id + ":" + ServiceName(s) + "(#" + std::to_string(s - first + 1) + ")";
          }
        }
      }
      if (missing == 0) break;
      if (SteadyClock::now() > deadline) {
        return Status(StatusCode::kTimeout,
                      std::to_string(missing) + " new imports never complete in a real member");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    const double seconds = SecondsSince(start);
    std::printf(
        "export: new_exports=%d rate_per_s=%d export_to_import_visible_p50_ms=%.1f p99_ms=%.1f "
        "max_ms=%.1f export_to_present_and_ready_p50_ms=%.1f p99_ms=%.1f max_ms=%.1f "
        "slowest=%s broker_events=%lld watch_events_delivered_to_simulated_members=%lld "
        "seconds=%.1f\n",
        options_.new_exports, options_.export_rate, Percentile(visible, 0.5),
        Percentile(visible, 0.99), Percentile(visible, 1.0), Percentile(ready, 0.5),
        Percentile(ready, 0.99), Percentile(ready, 1.0), slowest.c_str(),
        static_cast<long long>(BrokerEvents() - events_before),
        static_cast<long long>(SimWatcherEvents() - fanout_before), seconds);
    std::fflush(stdout);
    figures_["export_visible_p99_ms"] = Percentile(visible, 0.99);
    figures_["export_ready_p99_ms"] = Percentile(ready, 0.99);
    return Status();
  }

  void Idle() {
    const std::vector<CpuWindow> agent_cpu = AgentCpuNow();
    const CpuWindow broker_cpu{broker_->CpuSeconds()};
    const auto start = SteadyClock::now();
    std::this_thread::sleep_for(std::chrono::seconds(options_.lease_seconds / 3 + 1));
    const double seconds = SecondsSince(start);
    std::printf("idle: seconds=%.1f broker_cores=%.3f%s\n", seconds,
                broker_cpu.Cores(*broker_, seconds), MemberFigures(agent_cpu, seconds).c_str());
    std::fflush(stdout);
  }

  // Readiness flips of simulated members' endpoints: one endpoint of a pair turns NotReady; once
  // ten are NotReady the oldest turns Ready again. Each write must be one broker slice update.
  Status Churn() {
    if (churn_set_.empty() || options_.churn_seconds <= 0) return Status();
    std::mt19937_64 random(42);
    struct Down {
      std::size_t pair;
      int endpoint;
    };
    std::vector<Down> down;
    std::set<std::pair<std::size_t, int>> is_down;
    std::map<std::string, Down> flipped_at;  // by endpoint IP
    std::int64_t changes = 0;
    std::int64_t slice_writes = 0;
    std::vector<std::int64_t> member_writes_before;
    for (RealMember& member : real_) member_writes_before.push_back(member.view.writes());
    const std::int64_t events_before = BrokerEvents();
    const std::int64_t fanout_before = SimWatcherEvents();
    const std::vector<CpuWindow> agent_cpu = AgentCpuNow();
    const CpuWindow broker_cpu{broker_->CpuSeconds()};
    const CpuWindow self_cpu{bench::ProcessCpuSeconds(::getpid())};
    const auto start = SteadyClock::now();
    const auto interval = std::chrono::microseconds(1'000'000 / std::max(1, options_.rate));
    auto next = start;
    const auto end = start + std::chrono::seconds(options_.churn_seconds);
    const auto flip = [&](std::size_t pair, int endpoint, bool ready) -> Status {
      ChurnPair& p = churn_set_[pair];
      model::Endpoint& e = p.exported.own.endpoints[static_cast<std::size_t>(endpoint)];
      e.conditions.ready = ready;
      e.conditions.serving = ready;
      const std::string& ip = e.addresses.front();
      flipped_at[ip] = {pair, endpoint};
      for (RealMember& member : real_) {
        if (ready) {
          member.view.ReadyWritten(ip, SteadyClock::now());
        } else {
          member.view.NotReadyWritten(ip);
        }
      }
      SW_ASSIGN_OR_RETURN(const std::size_t writes, Simulated(p.member).Publish(p.exported));
      if (writes != 1) {
        return Status(StatusCode::kInternal,
                      "an endpoint change made " + std::to_string(writes) + " broker writes");
      }
      ++slice_writes;
      ++changes;
      return Status();
    };
    while (SteadyClock::now() < end) {
      std::this_thread::sleep_until(next);
      next += interval;
      if (down.size() >= 10) {
        const Down up = down.front();
        down.erase(down.begin());
        is_down.erase({up.pair, up.endpoint});
        SW_RETURN_IF_ERROR(flip(up.pair, up.endpoint, true));
      } else {
        std::size_t pair = random() % churn_set_.size();
        int endpoint = static_cast<int>(random() % static_cast<std::uint64_t>(options_.endpoints));
        while (is_down.contains({pair, endpoint})) pair = (pair + 1) % churn_set_.size();
        is_down.insert({pair, endpoint});
        down.push_back({pair, endpoint});
        SW_RETURN_IF_ERROR(flip(pair, endpoint, false));
      }
    }
    const double seconds = SecondsSince(start);
    const std::string members = MemberFigures(agent_cpu, seconds);
    const double broker_cores = broker_cpu.Cores(*broker_, seconds);
    const double self_cores =
        (bench::ProcessCpuSeconds(::getpid()) - self_cpu.start) / std::max(seconds, 1e-9);
    const std::int64_t broker_events = BrokerEvents() - events_before;
    const std::int64_t fanout = SimWatcherEvents() - fanout_before;
    for (const Down& d : down) SW_RETURN_IF_ERROR(flip(d.pair, d.endpoint, true));
    // Every Ready shows in every real member. A flip whose NotReady and Ready both came and went
    // while that import's sync was behind leaves nothing to write (the slice there is already as
    // the source ends): the member shows no event for it. Such flips, ready in a fresh list of the
    // member's slices, are counted as unwritten and probed: flipped down and up again, which the
    // member must then show, so a member that lost them cannot pass as one that coalesced them.
    std::map<std::string, std::size_t> unwritten;  // by member id
    const auto deadline = SteadyClock::now() + std::chrono::seconds(60);
    for (RealMember& member : real_) {
      bool probed = false;
      const auto first_look = SteadyClock::now() + std::chrono::seconds(15);
      while (!member.view.AllFlipsReady()) {
        if (!probed && SteadyClock::now() > first_look) {
          probed = true;
          const std::set<std::string> pending = member.view.PendingIps();
          Result<std::set<std::string>> ready = ReadyInApiServer(member, pending);
          if (ready.ok() && *ready == pending) {
            unwritten[member.id] += pending.size();
            for (const std::string& ip : pending) {
              const Down& at = flipped_at.at(ip);
              SW_RETURN_IF_ERROR(flip(at.pair, at.endpoint, false));
            }
            const auto shown_by = SteadyClock::now() + std::chrono::seconds(30);
            while (!member.view.AllShownNotReady(pending)) {
              if (SteadyClock::now() > shown_by) {
                return Status(
                    StatusCode::kTimeout,
                    member.id + ": a probe's NotReady never showed: " + WherePending(member));
              }
              std::this_thread::sleep_for(std::chrono::milliseconds(20));
            }
            for (const std::string& ip : pending) {
              const Down& at = flipped_at.at(ip);
              SW_RETURN_IF_ERROR(flip(at.pair, at.endpoint, true));
            }
            continue;
          }
        }
        if (SteadyClock::now() > deadline) {
          std::string watches;
          for (const auto& watch : member.watches) {
            if (!watch->error().ok()) watches += "; its watch ended: " + watch->error().ToString();
            watches += "; a watch resumed " + std::to_string(watch->resumes()) + " times, at " +
                       watch->version();
          }
          return Status(StatusCode::kTimeout,
                        member.id + ": a Ready never showed: " + member.view.PendingFlips() +
                            watches + "; " + WherePending(member));
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    std::string per_member;
    char buffer[300];
    std::vector<double> all;
    for (RealMember& member : real_) {
      std::size_t unmeasured = 0;
      std::size_t coalesced = 0;
      std::vector<double> delays = member.view.TakeFlipDelaysMs(&unmeasured, &coalesced);
      const double writes_per_change =
          static_cast<double>(member.view.writes() -
                              member_writes_before[static_cast<std::size_t>(member.index)]) /
          static_cast<double>(std::max<std::int64_t>(1, changes));
      std::snprintf(buffer, sizeof buffer,
                    " %s: ready_p50_ms=%.1f p99_ms=%.1f max_ms=%.1f unmeasured=%zu "
                    "coalesced=%zu unwritten_then_probed=%zu mcs_slice_writes_per_change=%.2f",
                    member.id.c_str(), Percentile(delays, 0.5), Percentile(delays, 0.99),
                    Percentile(delays, 1.0), unmeasured, coalesced, unwritten[member.id],
                    writes_per_change);
      per_member += buffer;
      all.insert(all.end(), delays.begin(), delays.end());
    }
    std::printf(
        "churn: seconds=%.1f changes=%lld broker_slice_writes_per_change=%.2f "
        "broker_events_per_s=%.0f watch_events_to_simulated_members_per_s=%.0f "
        "broker_cores=%.3f driver_cores=%.3f broker_rss_mb=%s ready_p99_ms_all=%.1f%s\n"
        "churn: cpu_and_rss:%s\n",
        seconds, static_cast<long long>(changes),
        static_cast<double>(slice_writes) / static_cast<double>(std::max<std::int64_t>(1, changes)),
        static_cast<double>(broker_events) / seconds, static_cast<double>(fanout) / seconds,
        broker_cores, self_cores, Rss(*broker_).c_str(), Percentile(all, 0.99), per_member.c_str(),
        members.c_str());
    std::fflush(stdout);
    figures_["churn_ready_p99_ms"] = Percentile(all, 0.99);
    figures_["churn_broker_cores"] = broker_cores;
    figures_["broker_rss_mb"] = broker_->MemoryMb("VmRSS");
    double agent_cores = 0;
    double agent_rss = 0;
    for (RealMember& member : real_) {
      agent_cores = std::max(agent_cores, agent_cpu[static_cast<std::size_t>(member.index)].Cores(
                                              *member.agent, seconds));
      agent_rss = std::max(agent_rss, member.agent->MemoryMb("VmHWM"));
    }
    figures_["churn_agent_cores_max"] = agent_cores;
    figures_["agent_peak_rss_mb_max"] = agent_rss;
    return Status();
  }

  // One line of the figures the plot and the table take (scripts/fleet_plot.py --tsv).
  void Summary(const std::string& failed_phase = "") {
    if (!figures_.contains("agent_peak_rss_mb_max")) {  // the churn, which sets it, did not end
      double agent_rss = 0;
      for (RealMember& member : real_) {
        if (member.agent) agent_rss = std::max(agent_rss, member.agent->MemoryMb("VmHWM"));
      }
      figures_["agent_peak_rss_mb_max"] = agent_rss;
    }
    std::string line = "summary: members=" + std::to_string(options_.members) +
                       " services=" + std::to_string(options_.services) +
                       " exporters=" + std::to_string(options_.exporters) +
                       " endpoints=" + std::to_string(options_.endpoints);
    char buffer[96];
    for (const auto& [key, value] : figures_) {
      std::snprintf(buffer, sizeof buffer, " %s=%.4g", key.c_str(), value);
      line += buffer;
    }
    std::snprintf(buffer, sizeof buffer, " lease_failures=%lld",
                  static_cast<long long>(lease_failures_.load()));
    line += buffer;
    for (const auto& watch : broker_watches_) {
      if (!watch->error().ok()) line += " broker_watch_error=1";
    }
    if (!failed_phase.empty()) line += " failed=" + failed_phase;
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  }

  // Of `ips`, those ready in a fresh list of the member's MCS slices (absent ones are not).
  Result<std::set<std::string>> ReadyInApiServer(RealMember& member,
                                                 const std::set<std::string>& ips,
                                                 std::string* where = nullptr) {
    client::TypedClient<model::EndpointSlice> slices(*member.client, client::EndpointSliceCodec());
    client::ListOptions options;
    options.label_selector =
        std::string(model::kLabelManagedBy) + "=" + std::string(model::kManagedByMcs);
    options.limit = 5000;
    SW_ASSIGN_OR_RETURN(codec::ListPage<model::EndpointSlice> listed, slices.ListAll("", options));
    std::set<std::string> ready;
    std::size_t not_ready = 0;
    for (const model::EndpointSlice& slice : listed.items) {
      for (const model::Endpoint& endpoint : slice.endpoints) {
        if (endpoint.addresses.empty() || !ips.contains(endpoint.addresses.front())) continue;
        if (endpoint.conditions.ready.value_or(true)) {
          ready.insert(endpoint.addresses.front());
        } else {
          ++not_ready;
        }
        if (where != nullptr && where->empty()) {
          *where = "e.g. " + endpoint.addresses.front() + " in " + slice.metadata.namespace_ + "/" +
                   slice.metadata.name + " at " + slice.metadata.resource_version;
        }
      }
    }
    if (where != nullptr) {
      *where = "listed now: " + std::to_string(ready.size()) + " ready, " +
               std::to_string(not_ready) + " not ready, " +
               std::to_string(ips.size() - ready.size() - not_ready) + " absent (list at " +
               listed.resource_version + "; " + *where + ")";
    }
    return ready;
  }

  // Where the flips the view still waits for stand, read afresh: ready in the member's API server
  // (the driver's watch missed it, or its agent had nothing to write) or not (not written).
  std::string WherePending(RealMember& member) {
    std::string where;
    Result<std::set<std::string>> ready =
        ReadyInApiServer(member, member.view.PendingIps(), &where);
    if (!ready.ok()) return "listing its MCS slices failed: " + ready.status().ToString();
    return where;
  }

  struct ChurnPair {
    int member;
    int service;
    bench::SimulatedExport exported;
  };

  Options options_;
  std::filesystem::path root_;
  std::string broker_kubeconfig_;
  std::unique_ptr<Child> broker_;
  std::unique_ptr<client::RestClient> broker_client_;
  std::vector<RealMember> real_;
  std::vector<std::unique_ptr<bench::SimulatedMember>> simulated_;
  std::set<int> present_;  // members whose exports are in the broker
  std::vector<ChurnPair> churn_set_;
  std::vector<std::unique_ptr<StreamWatch>> broker_watches_;
  std::vector<std::unique_ptr<StreamWatch>> sim_watches_;
  std::thread lease_thread_;
  std::atomic<bool> stop_leases_{false};
  std::atomic<std::int64_t> lease_failures_{0};
  std::map<std::string, double> figures_;
};

}  // namespace

int main(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const auto value = [&]() -> int {
      if (i + 1 >= argc) {
        std::cerr << "fleet_sim: " << arg << " needs a value\n";
        std::exit(2);
      }
      return std::atoi(argv[++i]);
    };
    if (arg == "--smoke") {
      options.members = 5;
      options.real = 2;
      options.services = 20;
      options.endpoints = 3;
      options.new_exports = 5;
      options.churn_seconds = 2;
      options.churn_set = 20;
      options.lease_seconds = 3;
      options.converge_seconds = 60;
    } else if (arg == "--server") {
      if (i + 1 >= argc) return 2;
      options.server = argv[++i];
    } else if (arg == "--members") {
      options.members = value();
    } else if (arg == "--real") {
      options.real = value();
    } else if (arg == "--services") {
      options.services = value();
    } else if (arg == "--endpoints") {
      options.endpoints = value();
    } else if (arg == "--exporters") {
      options.exporters = value();
    } else if (arg == "--new-exports") {
      options.new_exports = value();
    } else if (arg == "--export-rate") {
      options.export_rate = value();
    } else if (arg == "--rate") {
      options.rate = value();
    } else if (arg == "--churn-seconds") {
      options.churn_seconds = value();
    } else if (arg == "--churn-set") {
      options.churn_set = value();
    } else if (arg == "--agent-qps") {
      options.agent_qps = value();
    } else if (arg == "--lease-seconds") {
      options.lease_seconds = value();
    } else if (arg == "--clients") {
      options.clients = value();
    } else if (arg == "--sim-watchers") {
      options.sim_watchers = value();
    } else if (arg == "--converge-seconds") {
      options.converge_seconds = value();
    } else if (arg == "--agent-v") {
      options.agent_verbosity = value();
    } else {
      std::cerr << "fleet_sim: unknown argument " << arg << "\n";
      return 2;
    }
  }
  if (options.real < 2 || options.members <= options.real || options.services < 1 ||
      options.endpoints < 1 || options.endpoints > 100 || options.rate < 1 ||
      options.lease_seconds < 3 || options.clients < 1 || options.agent_qps < 1) {
    std::cerr << "fleet_sim: needs --real >= 2 (the last joins), --members > --real (at least one "
                 "simulated), "
                 "--endpoints 1..100 and positive counts\n";
    return 2;
  }
  if (::access(options.server.c_str(), X_OK) != 0) {
    std::cerr << "fleet_sim: --server " << options.server << ": not an executable; build it\n";
    return 2;
  }
  ::signal(SIGPIPE, SIG_IGN);
  // As deploy/mcs/member's Deployment runs the agent.
  ::setenv("MALLOC_ARENA_MAX", "2", 1);
  return Fleet(std::move(options)).Run();
}

#include "controllers/podsim/simulator.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "slicewright/base/log.h"
#include "slicewright/base/status.h"
#include "slicewright/codec/kubelet.h"
#include "slicewright/codec/multus.h"
#include "slicewright/codec/network_status.h"
#include "slicewright/model/meta.h"
#include "slicewright/model/network_status.h"
#include "slicewright/model/well_known.h"

#include "controllers/podsim/networks.h"
#include "runtime/wall_time.h"

namespace slicewright::controllers::podsim {
namespace {

constexpr std::string_view kPhaseRunning = "Running";
constexpr std::string_view kLabelHostname = "kubernetes.io/hostname";
// How many times one sync re-reads a pod from the server after a conflict before it leaves the
// retry to the work queue's rate limiter.
constexpr int kConflictRereads = 3;

bool IsFinished(const model::Pod& pod) {
  return pod.status.phase == "Succeeded" || pod.status.phase == "Failed";
}

std::string_view AnnotationOr(const model::Pod& pod, std::string_view key,
                              std::string_view fallback = {}) {
  auto it = pod.metadata.annotations.find(key);
  if (it == pod.metadata.annotations.end()) return fallback;
  return it->second;
}

bool HasAnnotation(const model::Pod& pod, std::string_view key) {
  return pod.metadata.annotations.contains(key);
}

model::ObjectReference ReferenceTo(const model::Pod& pod) {
  model::ObjectReference ref;
  ref.kind = "Pod";
  ref.api_version = "v1";
  ref.namespace_ = pod.metadata.namespace_;
  ref.name = pod.metadata.name;
  ref.uid = pod.metadata.uid;
  ref.resource_version = pod.metadata.resource_version;
  return ref;
}

// 64 bits of FNV-1a over `text`, seeded: the simulated container and image IDs.
std::uint64_t Fnv1a(std::string_view text, std::uint64_t seed) {
  std::uint64_t hash = 14695981039346656037ULL ^ seed;
  for (char ch : text) {
    hash ^= static_cast<unsigned char>(ch);
    hash *= 1099511628211ULL;
  }
  return hash;
}

// A 64-hex-digit ID derived from `text`, shaped like a container runtime's (stable across syncs,
// so status patches do not churn).
std::string HexId(std::string_view text) {
  std::string out;
  for (std::uint64_t seed = 0; seed < 4; ++seed) {
    out += fmt::format("{:016x}", Fnv1a(text, seed));
  }
  return out;
}

// status.containerStatuses for a running pod: every container started, ready with the pod.
std::vector<codec::RunningContainerStatus> ContainerStatuses(const model::Pod& pod, bool ready,
                                                             const model::Time& started_at) {
  std::vector<codec::RunningContainerStatus> out;
  for (const model::Container& container : pod.spec.containers) {
    codec::RunningContainerStatus status;
    status.name = container.name;
    status.image = container.image;
    status.image_id = container.image + "@sha256:" + HexId(container.image);
    status.container_id = "containerd://" + HexId(pod.metadata.uid + "/" + container.name);
    status.ready = ready;
    status.started_at = started_at;
    out.push_back(std::move(status));
  }
  return out;
}

// One condition as the pod should have it, keeping its transition time when its status stays.
model::PodCondition Condition(const model::Pod& pod, std::string_view type, bool status,
                              model::Time now, std::string_view reason = {},
                              std::string_view message = {}) {
  model::PodCondition out;
  out.type = std::string(type);
  out.status = status ? "True" : "False";
  if (!status) {
    out.reason = std::string(reason);
    out.message = std::string(message);
  }
  const model::PodCondition* old = model::FindPodCondition(pod.status.conditions, type);
  out.last_transition_time =
      old != nullptr && old->status == out.status && old->last_transition_time
          ? *old->last_transition_time
          : now;
  return out;
}

}  // namespace

Result<std::unique_ptr<PodSimulator>> PodSimulator::Create(PodSimulatorOptions options,
                                                           client::RestClient& client,
                                                           Clock& clock) {
  if (options.nodes < 1) return InvalidError("pod simulator: nodes must be at least 1");
  if (options.zones.empty()) return InvalidError("pod simulator: at least one zone is needed");
  if (options.node_prefix.empty()) return InvalidError("pod simulator: empty node prefix");
  if (options.default_network_name.empty()) {
    return InvalidError("pod simulator: empty default network name");
  }
  if (options.workers < 1) return InvalidError("pod simulator: workers must be at least 1");
  SW_ASSIGN_OR_RETURN(IpRange node_range, IpRange::Parse(options.node_cidr));
  SW_ASSIGN_OR_RETURN(IpRange v4, IpRange::Parse(options.pod_cidr_v4));
  if (node_range.family() != net::IpFamily::kIPv4 || v4.family() != net::IpFamily::kIPv4) {
    return InvalidError("pod simulator: node and IPv4 pod CIDRs must be IPv4");
  }
  if (static_cast<std::uint64_t>(options.nodes) > node_range.size()) {
    return InvalidError("pod simulator: " + std::to_string(options.nodes) + " nodes do not fit " +
                        node_range.ToString());
  }
  std::optional<IpRange> v6;
  if (options.dual_stack) {
    SW_ASSIGN_OR_RETURN(v6, IpRange::Parse(options.pod_cidr_v6));
    if (v6->family() != net::IpFamily::kIPv6) {
      return InvalidError("pod simulator: the IPv6 pod CIDR must be IPv6");
    }
  }
  std::vector<SimulatedNode> nodes;
  nodes.reserve(static_cast<std::size_t>(options.nodes));
  for (int i = 0; i < options.nodes; ++i) {
    nodes.push_back({options.node_prefix + std::to_string(i),
                     options.zones[static_cast<std::size_t>(i) % options.zones.size()],
                     net::FormatIp(node_range.At(static_cast<std::uint64_t>(i) + 1))});
  }
  std::unique_ptr<PodSimulator> simulator(
      new PodSimulator(std::move(options), client, clock, std::move(nodes), AddressPool(v4, v6)));

  runtime::WorkQueueOptions queue_options;
  queue_options.name = "podsim";
  queue_options.clock = &clock;
  SW_ASSIGN_OR_RETURN(simulator->queue_, runtime::WorkQueue::Create(std::move(queue_options)));

  runtime::EventRecorderOptions event_options;
  event_options.component = simulator->options_.component;
  event_options.clock = &clock;
  SW_ASSIGN_OR_RETURN(
      simulator->recorder_,
      runtime::EventRecorder::Create(runtime::NewRestEventSink(client), std::move(event_options)));

  cache::ReflectorOptions reflector_options;
  reflector_options.namespace_ = simulator->options_.namespace_;
  reflector_options.name = "podsim pods";
  simulator->informer_ =
      std::make_unique<cache::Informer<model::Pod>>(client, cache::PodKind(), reflector_options);

  PodSimulator* self = simulator.get();
  runtime::ControllerOptions controller_options;
  controller_options.name = "podsim";
  controller_options.workers = self->options_.workers;
  simulator->controller_ = std::make_unique<runtime::Controller>(
      controller_options, *self->queue_,
      [self](const std::string& key) { return self->Sync(key); });
  return simulator;
}

PodSimulator::PodSimulator(PodSimulatorOptions options, client::RestClient& client, Clock& clock,
                           std::vector<SimulatedNode> nodes, AddressPool pod_addresses)
    : options_(std::move(options)),
      client_(client),
      clock_(clock),
      pods_(client, client::PodCodec()),
      nodes_(std::move(nodes)),
      steady_origin_(clock.Now()),
      wall_origin_(runtime::internal::SystemWallTime()),
      pod_addresses_(std::move(pod_addresses)) {}

PodSimulator::~PodSimulator() { Stop(); }

Status PodSimulator::Start() {
  MutexLock run_lock(run_mu_);
  if (started_ || stopped_)
    return InvalidError("pod simulator: Start() called twice or after Stop()");
  started_ = true;
  SW_RETURN_IF_ERROR(RegisterNodes());
  // Handlers only enqueue keys; the cache's first list enqueues every pod, which the workers take
  // once the allocations are rebuilt.
  const auto enqueue = [this](const std::shared_ptr<const model::Pod>& pod) {
    queue_->Add(cache::KeyOf(*pod));
  };
  cache::EventHandler<model::Pod> handler;
  handler.on_add = [enqueue](const auto& pod, bool /*in_initial_list*/) { enqueue(pod); };
  handler.on_update = [enqueue](const auto& /*old_pod*/, const auto& pod) { enqueue(pod); };
  handler.on_delete = [enqueue](const auto& pod, bool /*final_state_unknown*/) { enqueue(pod); };
  informer_->AddEventHandler(std::move(handler));
  informer_->Start();
  if (!informer_->WaitForSync(options_.sync_timeout)) {
    return Status(StatusCode::kTimeout, "pod simulator: the pod cache did not sync");
  }
  RebuildFromCache();
  controller_->Start();
  SW_LOG(kInfo, "pod simulator: {} nodes, pods from {}{}", nodes_.size(), options_.pod_cidr_v4,
         options_.dual_stack ? " and " + options_.pod_cidr_v6 : std::string());
  return Status();
}

void PodSimulator::Stop() {
  MutexLock run_lock(run_mu_);
  if (stopped_) return;
  stopped_ = true;
  // The cache first, so no handler adds to a queue being drained.
  informer_->Stop();
  controller_->Stop();
  recorder_->ShutDown();
}

Status PodSimulator::RegisterNodes() {
  for (const SimulatedNode& node : nodes_) {
    codec::NodeRegistration registration;
    registration.metadata.name = node.name;
    registration.metadata.labels = {
        {std::string(kLabelHostname), node.name},
        {std::string(model::kLabelTopologyZone), node.zone},
        {"kubernetes.io/os", "linux"},
        {std::string(kLabelSimulatedNode), "true"},
    };
    registration.internal_ip = node.internal_ip;
    registration.resources = {{"cpu", options_.node_cpu},
                              {"memory", options_.node_memory},
                              {"pods", options_.node_max_pods}};
    registration.now = WallNow();
    // What KWOK's nodes report (its fake kubelet's defaults), with per-node stable IDs.
    codec::NodeSystemInfo& info = registration.node_info;
    info.machine_id = HexId(node.name).substr(0, 32);
    info.system_uuid = HexId("uuid/" + node.name).substr(0, 32);
    info.boot_id = HexId("boot/" + node.name).substr(0, 32);
    info.kernel_version = "6.1.0-slicewright";
    info.os_image = "slicewright simulated node";
    info.container_runtime_version = "containerd://1.7.0-simulated";
    info.kubelet_version = options_.kubelet_version;
    info.kube_proxy_version = options_.kubelet_version;
    info.operating_system = "linux";
    info.architecture = "amd64";
    Result<std::string> created =
        client_.Create(client::NodesResource(), "", codec::EncodeNodeRegistration(registration));
    if (created.ok()) {
      SW_LOG(kInfo, "pod simulator: registered node {} in {} at {}", node.name, node.zone,
             node.internal_ip);
    } else if (created.status().code() != StatusCode::kAlreadyExists) {
      Status status = created.status();
      return std::move(status.WithContext("registering node " + node.name));
    }
  }
  return Status();
}

void PodSimulator::RebuildFromCache() {
  const Clock::TimePoint now = clock_.Now();
  MutexLock lock(mu_);
  for (const std::shared_ptr<const model::Pod>& pod : informer_->store().List()) {
    // A finished pod's sandbox is gone: its addresses are free again.
    if (IsFinished(*pod) || pod->metadata.uid.empty()) continue;
    const std::string key = cache::KeyOf(*pod);
    Tracked& tracked = tracked_[key];
    tracked.uid = pod->metadata.uid;
    tracked.ready_at = now + options_.ready_delay;
    if (FindNode(pod->spec.node_name) != nullptr) tracked.node = pod->spec.node_name;
    if (Status status = pod_addresses_.Reserve(pod->status.pod_ips, tracked.uid); !status.ok()) {
      SW_LOG(kWarning, "pod simulator: pod {}: {}", key, status.ToString());
    }
    const std::string_view network_status = AnnotationOr(*pod, model::kAnnotationNetworkStatus);
    if (network_status.empty()) continue;
    Result<std::vector<model::NetworkStatus>> entries = codec::DecodeNetworkStatus(network_status);
    if (!entries.ok()) continue;  // not written by us: nothing of ours to keep
    for (const model::NetworkStatus& entry : *entries) {
      if (entry.is_default) continue;
      const std::string owner = tracked.uid + "/" + entry.interface;
      auto [pool, inserted] = network_addresses_.try_emplace(
          entry.name, SecondaryRangeV4(entry.name),
          options_.dual_stack ? std::optional(SecondaryRangeV6(entry.name)) : std::nullopt);
      if (Status status = pool->second.Reserve(entry.ips, owner); !status.ok()) {
        SW_LOG(kWarning, "pod simulator: pod {} network {}: {}", key, entry.name,
               status.ToString());
      }
      tracked.attachments.emplace_back(entry.name, owner);
    }
  }
  SW_LOG(kInfo, "pod simulator: {} pods known, {} pod addresses in use", tracked_.size(),
         pod_addresses_.used());
}

Status PodSimulator::Sync(const std::string& key) {
  std::shared_ptr<const model::Pod> cached = informer_->store().GetByKey(key);
  if (cached == nullptr) {
    Forget(key);
    return Status();
  }
  model::Pod pod = *cached;
  for (int attempt = 0;; ++attempt) {
    Status status = SyncPod(key, pod);
    if (status.code() != StatusCode::kConflict || attempt == kConflictRereads) return status;
    // The cache is behind the server (often by our own last write): decide again on the pod as
    // the server has it now, rather than wait for the rate limiter.
    Result<model::Pod> fresh = pods_.Get(pod.metadata.namespace_, pod.metadata.name);
    if (!fresh.ok()) {
      if (fresh.status().code() != StatusCode::kNotFound) return fresh.status();
      Forget(key);
      return Status();
    }
    pod = std::move(fresh).value();
  }
}

Status PodSimulator::SyncPod(const std::string& key, model::Pod pod) {
  const Clock::TimePoint now = clock_.Now();
  bool replaced = false;
  {
    MutexLock lock(mu_);
    Tracked& tracked = tracked_[key];
    if (tracked.uid != pod.metadata.uid) {
      // A new pod under an old name: what the old one held is free.
      replaced = ReleaseLocked(tracked);
      tracked = Tracked{};
      tracked.uid = pod.metadata.uid;
      tracked.ready_at = now + options_.ready_delay;
    }
    if (FindNode(pod.spec.node_name) != nullptr) tracked.node = pod.spec.node_name;
  }
  if (replaced) WakeWaiting(key);

  if (IsFinished(pod)) {
    // Its sandbox is gone: the addresses are free and it no longer loads its node.
    Forget(key);
    return Status();
  }
  if (pod.spec.node_name.empty()) {
    if (pod.metadata.deletion_timestamp) return Status();  // the server removes it at once
    SW_ASSIGN_OR_RETURN(pod, Bind(key, pod));
  }
  const SimulatedNode* node = FindNode(pod.spec.node_name);
  if (node == nullptr) return Status();  // another node's kubelet owns it
  if (pod.metadata.deletion_timestamp) return Terminate(key, pod, *node);

  if (pod.status.phase != kPhaseRunning) {
    Clock::TimePoint ready_at;
    {
      MutexLock lock(mu_);
      ready_at = tracked_[key].ready_at;
    }
    if (now < ready_at) {
      queue_->AddAfter(key, ready_at - now);
      return Status();
    }
  }
  std::optional<std::vector<std::string>> addresses = PodAddresses(key, pod);
  if (!addresses) return Status();  // waits for an address to be released
  if (HasAnnotation(pod, model::kAnnotationNetworks) &&
      !HasAnnotation(pod, model::kAnnotationNetworkStatus)) {
    SW_ASSIGN_OR_RETURN(pod, AttachNetworks(key, pod, *addresses));
  }
  const bool held = AnnotationOr(pod, kAnnotationSimReady) == "false";
  return WriteStatus(pod, *node, *addresses, !held,
                     "held not ready by the annotation sim.slicewright.io/ready");
}

Result<model::Pod> PodSimulator::Bind(const std::string& key, const model::Pod& pod) {
  std::string chosen;
  {
    MutexLock lock(mu_);
    // Least loaded by the pods known on each node (bindings in flight included); ties by order.
    std::map<std::string, std::size_t, std::less<>> load;
    for (const SimulatedNode& node : nodes_) load[node.name] = 0;
    for (const auto& [other_key, tracked] : tracked_) {
      if (!tracked.node.empty() && other_key != key) ++load[tracked.node];
    }
    std::size_t best = std::numeric_limits<std::size_t>::max();
    for (const auto& [name, count] : load) {
      if (count < best) {
        best = count;
        chosen = name;
      }
    }
    tracked_[key].node = chosen;
  }
  Result<model::Pod> bound =
      pods_.Patch(pod.metadata.namespace_, pod.metadata.name, client::PatchType::kMergePatch,
                  codec::EncodePodBindingPatch(pod.metadata.resource_version, chosen));
  if (!bound.ok()) {
    MutexLock lock(mu_);
    if (auto it = tracked_.find(key); it != tracked_.end() && it->second.node == chosen) {
      it->second.node.clear();
    }
    return bound.status();
  }
  SW_VLOG(2, "pod simulator: bound {} to {}", key, chosen);
  return bound;
}

Status PodSimulator::Terminate(const std::string& key, const model::Pod& pod,
                               const SimulatedNode& node) {
  const Clock::TimePoint now = clock_.Now();
  Clock::TimePoint stop_at;
  Clock::TimePoint delete_at;
  bool first_seen = false;
  {
    MutexLock lock(mu_);
    Tracked& tracked = tracked_[key];
    if (!tracked.delete_at) {
      // The grace left as the server set it, measured on our clock from the first sight of it.
      const std::int64_t remaining_nanos =
          pod.metadata.deletion_timestamp->unix_nanos - WallNow().unix_nanos;
      const Clock::Duration remaining = std::chrono::duration_cast<Clock::Duration>(
          std::chrono::nanoseconds(std::max<std::int64_t>(remaining_nanos, 0)));
      const Clock::Duration delay = std::min(remaining, options_.max_termination_delay);
      // The containers handle SIGTERM for the first half (the endpoint is terminating but still
      // serving), then have stopped (no longer serving) until the pod is gone.
      tracked.stop_at = now + delay / 2;
      tracked.delete_at = now + delay;
      first_seen = true;
    }
    stop_at = *tracked.stop_at;
    delete_at = *tracked.delete_at;
  }
  if (first_seen) {
    std::string containers;
    for (const model::Container& container : pod.spec.containers) {
      containers += (containers.empty() ? "" : ", ") + container.name;
    }
    // As a kubelet reports it; also tells a watcher that the termination delay has started.
    recorder_->Event(ReferenceTo(pod), runtime::EventType::kNormal, "Killing",
                     "Stopping container " + containers);
  }
  if (now < stop_at) {
    queue_->AddAfter(key, stop_at - now);
    return Status();
  }
  if (pod.status.phase == kPhaseRunning && !pod.status.pod_ips.empty()) {
    // What a kubelet reports once the containers are stopped: Ready and ContainersReady False,
    // which the EndpointSlice controller shows as serving=false on the terminating endpoint.
    std::string names;
    for (const model::Container& container : pod.spec.containers) {
      names += (names.empty() ? "" : " ") + container.name;
    }
    Status written = WriteStatus(pod, node, pod.status.pod_ips, /*ready=*/false,
                                 "containers with unready status: [" + names + "]");
    if (written.code() == StatusCode::kNotFound) return Status();  // deleted meanwhile
    SW_RETURN_IF_ERROR(written);
  }
  if (now < delete_at) {
    queue_->AddAfter(key, delete_at - now);
    return Status();
  }
  client::DeleteOptions options;
  options.grace_period_seconds = 0;
  options.precondition_uid = pod.metadata.uid;
  Status status = pods_.Delete(pod.metadata.namespace_, pod.metadata.name, options);
  if (status.code() == StatusCode::kNotFound) return Status();
  if (status.ok()) SW_VLOG(2, "pod simulator: finished deleting {}", key);
  // Its addresses are released when the cache sees it gone.
  return status;
}

std::optional<std::vector<std::string>> PodSimulator::PodAddresses(const std::string& key,
                                                                   const model::Pod& pod) {
  const std::string& uid = pod.metadata.uid;
  std::optional<std::vector<std::string>> addresses;
  {
    MutexLock lock(mu_);
    if (!pod.status.pod_ips.empty()) {
      // Already written (by us before a restart, or by someone else): keep them taken.
      if (Status status = pod_addresses_.Reserve(pod.status.pod_ips, uid); !status.ok()) {
        SW_LOG(kWarning, "pod simulator: pod {}: {}", key, status.ToString());
      }
      return pod.status.pod_ips;
    }
    addresses = pod_addresses_.Allocate(uid);
    if (addresses) {
      waiting_for_addresses_.erase(key);
      return addresses;
    }
    waiting_for_addresses_.insert(key);
  }
  WarnOnce(key, pod, "FailedAllocateAddress",
           "pod simulator: no free address left in " + options_.pod_cidr_v4 +
               (options_.dual_stack ? " or " + options_.pod_cidr_v6 : std::string()) +
               "; the pod stays Pending until one is released");
  return std::nullopt;
}

Result<model::Pod> PodSimulator::AttachNetworks(const std::string& key, const model::Pod& pod,
                                                const std::vector<std::string>& addresses) {
  Result<std::vector<codec::NetworkSelection>> selections =
      codec::ParseNetworkSelections(AnnotationOr(pod, model::kAnnotationNetworks));
  std::string problem;
  if (!selections.ok()) {
    problem = "malformed " + std::string(model::kAnnotationNetworks) +
              " annotation: " + selections.status().ToString();
  }
  std::vector<model::NetworkStatus> entries;
  entries.push_back({options_.default_network_name, "eth0", addresses, MacFor(addresses), true});
  if (problem.empty()) {
    std::set<std::string> interfaces = {"eth0"};
    MutexLock lock(mu_);
    Tracked& tracked = tracked_[key];
    for (std::size_t i = 0; i < selections->size() && problem.empty(); ++i) {
      const codec::NetworkSelection& selection = (*selections)[i];
      const std::string network =
          (selection.namespace_.empty() ? pod.metadata.namespace_ : selection.namespace_) + "/" +
          selection.name;
      const std::string interface_name = selection.interface_name.empty()
                                             ? "net" + std::to_string(i + 1)
                                             : selection.interface_name;
      if (!interfaces.insert(interface_name).second) {
        problem = "interface " + interface_name + " requested twice";
        break;
      }
      const std::string owner = pod.metadata.uid + "/" + interface_name;
      auto [pool, inserted] = network_addresses_.try_emplace(
          network, SecondaryRangeV4(network),
          options_.dual_stack ? std::optional(SecondaryRangeV6(network)) : std::nullopt);
      std::optional<std::vector<std::string>> ips = pool->second.Allocate(owner);
      if (!ips) {
        problem = "no free address left in network " + network;
        break;
      }
      if (std::find(tracked.attachments.begin(), tracked.attachments.end(),
                    std::pair(network, owner)) == tracked.attachments.end()) {
        tracked.attachments.emplace_back(network, owner);
      }
      entries.push_back({network, interface_name, *ips, MacFor(*ips), false});
    }
  }
  if (!problem.empty()) {
    // Multus would fail the sandbox; the simulator still starts the pod on its default network,
    // so a test of the other annotations is not blocked by this one.
    WarnOnce(key, pod, "NetworkAttachmentFailed", problem);
    return pod;
  }
  return pods_.Patch(pod.metadata.namespace_, pod.metadata.name, client::PatchType::kMergePatch,
                     codec::EncodeAnnotationPatch(model::kAnnotationNetworkStatus,
                                                  codec::EncodeNetworkStatusAnnotation(entries)));
}

Status PodSimulator::WriteStatus(const model::Pod& pod, const SimulatedNode& node,
                                 const std::vector<std::string>& addresses, bool ready,
                                 std::string_view not_ready_message) {
  const model::Time now = WallNow();
  std::vector<model::PodCondition> conditions = {
      Condition(pod, "PodScheduled", true, now),
      Condition(pod, "Initialized", true, now),
      Condition(pod, "ContainersReady", ready, now, "ContainersNotReady", not_ready_message),
      Condition(pod, "Ready", ready, now, "ContainersNotReady", not_ready_message),
  };
  const bool unchanged =
      pod.status.phase == kPhaseRunning && pod.status.pod_ips == addresses &&
      std::all_of(conditions.begin(), conditions.end(), [&](const model::PodCondition& want) {
        const model::PodCondition* have = model::FindPodCondition(pod.status.conditions, want.type);
        return have != nullptr && have->status == want.status;
      });
  if (unchanged) return Status();
  codec::PodStatusPatch patch;
  patch.resource_version = pod.metadata.resource_version;
  patch.phase = std::string(kPhaseRunning);
  patch.pod_ips = addresses;
  if (pod.status.phase != kPhaseRunning) {
    // Set once, when the pod starts; later patches leave them as they are.
    patch.host_ip = node.internal_ip;
    patch.start_time = now;
  }
  patch.conditions = std::move(conditions);
  model::Time started_at = now;
  {
    MutexLock lock(mu_);
    Tracked& tracked = tracked_[cache::KeyOf(pod)];
    if (!tracked.started_at) tracked.started_at = now;
    started_at = *tracked.started_at;
  }
  patch.container_statuses = ContainerStatuses(pod, ready, started_at);
  Result<model::Pod> written =
      pods_.Patch(pod.metadata.namespace_, pod.metadata.name, client::PatchType::kMergePatch,
                  codec::EncodePodStatusPatch(patch), "status");
  if (!written.ok()) return written.status();
  SW_VLOG(2, "pod simulator: {}/{} Running on {}, ready {}", pod.metadata.namespace_,
          pod.metadata.name, node.name, ready);
  return Status();
}

void PodSimulator::Forget(const std::string& key) {
  bool released = false;
  {
    MutexLock lock(mu_);
    waiting_for_addresses_.erase(key);
    auto it = tracked_.find(key);
    if (it == tracked_.end()) return;
    released = ReleaseLocked(it->second);
    tracked_.erase(it);
  }
  if (released) WakeWaiting(key);
}

bool PodSimulator::ReleaseLocked(const Tracked& tracked) {
  if (tracked.uid.empty()) return false;
  const std::size_t before = pod_addresses_.used();
  pod_addresses_.Release(tracked.uid);
  for (const auto& [network, owner] : tracked.attachments) {
    if (auto pool = network_addresses_.find(network); pool != network_addresses_.end()) {
      pool->second.Release(owner);
    }
  }
  return pod_addresses_.used() != before;
}

void PodSimulator::WakeWaiting(const std::string& except) {
  std::vector<std::string> keys;
  {
    MutexLock lock(mu_);
    for (const std::string& key : waiting_for_addresses_) {
      if (key != except) keys.push_back(key);
    }
  }
  for (const std::string& key : keys) queue_->Add(key);
}

void PodSimulator::WarnOnce(const std::string& key, const model::Pod& pod, std::string_view reason,
                            const std::string& message) {
  {
    MutexLock lock(mu_);
    Tracked& tracked = tracked_[key];
    if (tracked.warned) {
      SW_VLOG(2, "pod simulator: pod {}: {}", key, message);
      return;
    }
    tracked.warned = true;
  }
  SW_LOG(kWarning, "pod simulator: pod {}: {}", key, message);
  recorder_->Event(ReferenceTo(pod), runtime::EventType::kWarning, reason, message);
}

const SimulatedNode* PodSimulator::FindNode(std::string_view name) const {
  if (name.empty()) return nullptr;
  auto it = std::find_if(nodes_.begin(), nodes_.end(),
                         [&](const SimulatedNode& node) { return node.name == name; });
  return it == nodes_.end() ? nullptr : &*it;
}

model::Time PodSimulator::WallNow() const {
  return runtime::internal::WallTimeAt(clock_.Now(), steady_origin_, wall_origin_);
}

}  // namespace slicewright::controllers::podsim

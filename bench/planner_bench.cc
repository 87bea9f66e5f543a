// Benchmarks of the reconcile core (issue #2 §5): a full reconcile from no slices, a one-pod
// readiness flip with slices in place, unchanged resyncs (one large Service, many small ones),
// and dual-stack.
// Run: build/release/bench/slicewright_bench; `--smoke` runs every case once at a tiny size.
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <random>
#include <span>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <malloc.h>

#include "slicewright/base/allocator.h"
#include "slicewright/base/check.h"
#include "slicewright/base/result.h"
#include "slicewright/codec/json.h"
#include "slicewright/model/compact_pod.h"
#include "slicewright/model/core.h"
#include "slicewright/model/discovery.h"
#include "slicewright/reconcile/fingerprint.h"
#include "slicewright/reconcile/planner.h"
#include "slicewright/reconcile/pod_source.h"
#include "slicewright/reconcile/service_endpoints.h"
#include "slicewright/reconcile/topology_cache.h"

#include "fakes/allocation_counter.h"
#include "smoke.h"

namespace slicewright {
namespace {

using model::Node;
using model::Pod;
using model::Service;

const auto kControllerSliceCapacity =
    static_cast<std::size_t>(reconcile::PlanOptions{}.max_endpoints_per_slice);

std::int64_t Size(const benchmark::State& state) { return bench::SmokeMode() ? 1 : state.range(0); }

Service MakeService(std::string name, bool dual_stack) {
  Service service;
  service.metadata.name = std::move(name);
  service.metadata.namespace_ = "bench";
  service.metadata.uid =
      "5f0c3a4e-8d51-4a43-9d6b-" +
      std::to_string(std::hash<std::string>{}(service.metadata.name) % 1000000000000ULL);
  service.metadata.creation_timestamp = model::Time::FromUnixSeconds(1700000000);
  service.spec.selector = model::StringMap{{"app", service.metadata.name}};
  service.spec.cluster_ip = "10.96.0.10";
  service.spec.ip_families = {"IPv4"};
  if (dual_stack) service.spec.ip_families.push_back("IPv6");
  model::ServicePort port;
  port.name = "http";
  port.port = 80;
  port.target_port = model::IntOrString::FromInt(8080);
  service.spec.ports = {port};
  return service;
}

std::vector<Node> MakeNodes() {
  std::vector<Node> nodes(3);
  const char* zones[] = {"zone-a", "zone-b", "zone-c"};
  for (int i = 0; i < 3; ++i) {
    nodes[static_cast<std::size_t>(i)].metadata.name = "node-" + std::to_string(i);
    nodes[static_cast<std::size_t>(i)].metadata.labels = {
        {"topology.kubernetes.io/zone", zones[i]}};
    nodes[static_cast<std::size_t>(i)].status.allocatable = {{"cpu", "4"}};
    nodes[static_cast<std::size_t>(i)].status.conditions = {{"Ready", "True", {}, "", ""}};
  }
  return nodes;
}

Pod MakePod(const Service& service, std::int64_t i, bool dual_stack) {
  Pod pod;
  pod.metadata.name = service.metadata.name + "-" + std::to_string(i);
  pod.metadata.namespace_ = service.metadata.namespace_;
  pod.metadata.uid = "0a1b2c3d-4e5f-6789-abcd-" + std::to_string(100000000000 + i);
  pod.metadata.labels = *service.spec.selector;
  pod.spec.node_name = "node-" + std::to_string(i % 3);
  pod.spec.containers.push_back(
      model::Container{"app", "nginx", {{"http", 8080, "TCP", 0, ""}}, {}});
  pod.status.phase = "Running";
  const std::int64_t n = i + 1;
  pod.status.pod_ip = "10." + std::to_string((n >> 16) & 255) + "." +
                      std::to_string((n >> 8) & 255) + "." + std::to_string(n & 255);
  pod.status.pod_ips = {pod.status.pod_ip};
  if (dual_stack) pod.status.pod_ips.push_back("fd00::" + std::to_string(n));
  pod.status.conditions = {{"Ready", "True", model::Time::FromUnixSeconds(1700000100), "", ""}};
  return pod;
}

// A Service, its pods and Nodes. The pods are kept in both forms: model::Pod, and the CompactPod
// that the controllers' Pod cache holds, from which the EndpointSlice controller derives.
struct Fixture {
  Service service;
  std::vector<Node> nodes = MakeNodes();
  std::vector<Pod> pods;
  std::vector<const Pod*> pod_ptrs;
  model::PodInterners interners;
  std::vector<model::CompactPod> compact_pods;
  std::vector<const model::CompactPod*> compact_ptrs;

  Fixture(std::string name, std::int64_t count, bool dual_stack)
      : service(MakeService(std::move(name), dual_stack)) {
    pods.reserve(static_cast<std::size_t>(count));
    for (std::int64_t i = 0; i < count; ++i) pods.push_back(MakePod(service, i, dual_stack));
    for (const Pod& pod : pods) pod_ptrs.push_back(&pod);
    compact_pods.reserve(pods.size());
    for (const Pod& pod : pods) {
      compact_ptrs.push_back(
          &compact_pods.emplace_back(model::CompactPod::FromPod(pod, interners)));
    }
  }

  // Sets pod `index`'s Ready condition, in both forms (the cache re-projects an updated pod).
  void SetReady(std::size_t index, bool ready) {
    pods[index].status.conditions[0].status = ready ? "True" : "False";
    compact_pods[index] = model::CompactPod::FromPod(pods[index], interners);
  }

  // Deals the pods' IPs out again in a random order. The fixture's pods have their IPs in pod
  // order, so endpoint order is pod order; in a cluster, where a Service's pods are listed by
  // name and get their IPs from their Nodes' ranges, the two orders are unrelated.
  void ShuffleIps() {
    std::vector<std::string> ips;
    for (const Pod& pod : pods) ips.push_back(pod.status.pod_ip);
    std::mt19937 rng(42);
    std::shuffle(ips.begin(), ips.end(), rng);
    for (std::size_t i = 0; i < pods.size(); ++i) {
      pods[i].status.pod_ip = ips[i];
      pods[i].status.pod_ips = {ips[i]};
      compact_pods[i] = model::CompactPod::FromPod(pods[i], interners);
    }
  }

  // Names as a cloud cluster has them: a Deployment's pods are "<name>-<10 chars>-<5 chars>" (20
  // characters here, more than std::string keeps inline) and Nodes are named after their
  // hostnames ("ip-10-0-1-23.eu-west-1.compute.internal").
  void UseCloudNames() {
    for (std::size_t n = 0; n < nodes.size(); ++n) {
      nodes[n].metadata.name =
          "ip-10-0-" + std::to_string(n + 1) + "-23.eu-west-1.compute.internal";
    }
    std::mt19937 rng(7);
    const auto random_text = [&](std::size_t length) {
      static constexpr char kAlphabet[] = "bcdfghjklmnpqrstvwxz2456789";
      std::string text;
      for (std::size_t i = 0; i < length; ++i) text += kAlphabet[rng() % (sizeof(kAlphabet) - 1)];
      return text;
    };
    const std::string replica_set = service.metadata.name + "-" + random_text(10) + "-";
    for (std::size_t i = 0; i < pods.size(); ++i) {
      pods[i].metadata.name = replica_set + random_text(5);
      pods[i].spec.node_name = nodes[i % nodes.size()].metadata.name;
      compact_pods[i] = model::CompactPod::FromPod(pods[i], interners);
    }
  }

  const Node* FindNode(std::string_view name) const {
    for (const Node& node : nodes) {
      if (node.metadata.name == name) return &node;
    }
    return nullptr;
  }

  // What the controller and `slicewright plan` derive with: the trigger time a freshly started
  // controller's tracker reports (the Service's creation) and `slice_capacity`: as the controller
  // derives them, cut into runs of maxEndpointsPerSlice (the default, 100); 0 for one vector per
  // group, which a caller can edit in place.
  reconcile::ServiceSourceOptions SourceOptions(std::size_t slice_capacity) const {
    reconcile::ServiceSourceOptions options;
    options.trigger_time = service.metadata.creation_timestamp.value_or(model::Time{});
    options.slice_capacity = slice_capacity;
    return options;
  }

  // From the compact pods, as the controller and `slicewright plan` derive.
  reconcile::DesiredEndpoints Desired(std::size_t slice_capacity = kControllerSliceCapacity) const {
    auto lookup = [this](std::string_view name) { return FindNode(name); };
    return reconcile::DesiredFromService(service, compact_ptrs, lookup,
                                         SourceOptions(slice_capacity));
  }

  // A resync's derive, as the controller and `slicewright plan` do it: `stored` are the slices
  // it is planned with, and those that already hold endpoints unchanged are not rebuilt (held).
  reconcile::DesiredEndpoints Resync(std::span<const model::EndpointSlice> stored) const {
    auto lookup = [this](std::string_view name) { return FindNode(name); };
    reconcile::ServiceSourceOptions options = SourceOptions(kControllerSliceCapacity);
    options.stored_slices = stored;
    return reconcile::DesiredFromService(service, compact_ptrs, lookup, options);
  }

  // From model::Pods, as plugins that rewrite pods derive.
  reconcile::DesiredEndpoints DesiredFromModelPods() const {
    auto lookup = [this](std::string_view name) { return FindNode(name); };
    return reconcile::DesiredFromService(service, pod_ptrs, lookup,
                                         SourceOptions(kControllerSliceCapacity));
  }
};

// The PlanOptions the EndpointSlice controller and `slicewright plan` pass for a Service without
// kept state: the topology cache's snapshot of the Nodes (kube-controller-manager always runs
// the cache), and no fingerprints (the controller takes those only of kept Services' slices). Not
// movable (options points into it).
struct ControllerPlanOptions {
  reconcile::TopologyInput topology;
  reconcile::PlanOptions options;

  explicit ControllerPlanOptions(const Fixture& fixture) {
    reconcile::TopologyCache cache;
    cache.SetNodes(fixture.nodes);
    topology = cache.Snapshot(model::NamespacedName(fixture.service.metadata));
    options.topology = &topology;
  }
  ControllerPlanOptions(const ControllerPlanOptions&) = delete;
  ControllerPlanOptions& operator=(const ControllerPlanOptions&) = delete;
};

// What an API server stores after applying `plan` to nothing (names filled in), as an informer
// holds it: encoded and decoded again, so the stored endpoints lie in memory as a decoded list's
// do (as `slicewright plan -f` reads them), not as copies of the planner's own output.
std::vector<model::EndpointSlice> Stored(const reconcile::Plan& plan) {
  std::vector<model::EndpointSlice> slices;
  int counter = 0;
  for (const reconcile::SliceAction& action : plan.actions) {
    model::EndpointSlice slice = action.slice;
    slice.metadata.name = slice.metadata.generate_name + std::to_string(++counter);
    slice.metadata.uid = "uid-" + slice.metadata.name;
    slice.metadata.resource_version = "1";
    Result<model::EndpointSlice> decoded =
        codec::DecodeEndpointSlice(codec::EncodeEndpointSlice(slice));
    SW_CHECK(decoded.ok());
    slices.push_back(std::move(*decoded));
  }
  return slices;
}

void ReportPerEndpoint(benchmark::State& state, std::int64_t endpoints, std::int64_t allocations) {
  const double total = static_cast<double>(endpoints) * static_cast<double>(state.iterations());
  state.counters["ns_per_endpoint"] =
      benchmark::Counter(total, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["allocs_per_endpoint"] = static_cast<double>(allocations) / total;
}

// Times derive + plan from no slices with `derive` (the fixture's desired state), per endpoint.
template <typename Derive>
void TimeFullReconcile(benchmark::State& state, const Derive& derive) {
  const reconcile::PlanOptions options;
  const std::int64_t before = fakes::AllocationCount();
  for (auto _ : state) {
    reconcile::Plan plan = reconcile::PlanSlices(derive(), {}, options);
    benchmark::DoNotOptimize(plan.actions.data());
  }
  ReportPerEndpoint(state, Size(state), fakes::AllocationCount() - before);
}

// Full reconcile of one Service with N ready pods and no slices: derive (from the compact pods
// the controller's cache holds) + plan.
void BM_FullReconcile(benchmark::State& state) {
  const Fixture fixture("web", Size(state), false);
  TimeFullReconcile(state, [&] { return fixture.Desired(); });
}
BENCHMARK(BM_FullReconcile)
    ->Arg(100)
    ->Arg(1000)
    ->Arg(10000)
    ->Arg(100000)
    ->Unit(benchmark::kMicrosecond);

// The same with endpoint order unrelated to pod order (Fixture::ShuffleIps): the endpoint pass
// then reads the pods at random.
void BM_FullReconcileShuffledIps(benchmark::State& state) {
  Fixture fixture("web", Size(state), false);
  fixture.ShuffleIps();
  TimeFullReconcile(state, [&] { return fixture.Desired(); });
}
BENCHMARK(BM_FullReconcileShuffledIps)
    ->Arg(1000)
    ->Arg(10000)
    ->Arg(100000)
    ->Unit(benchmark::kMicrosecond);

// The same with cloud names too (Fixture::UseCloudNames): each endpoint then copies a pod name and
// a node name longer than std::string keeps inline. The figure to expect from a real cluster.
void BM_FullReconcileCloudNames(benchmark::State& state) {
  Fixture fixture("web", Size(state), false);
  fixture.ShuffleIps();
  fixture.UseCloudNames();
  TimeFullReconcile(state, [&] { return fixture.Desired(); });
}
BENCHMARK(BM_FullReconcileCloudNames)
    ->Arg(1000)
    ->Arg(10000)
    ->Arg(100000)
    ->Unit(benchmark::kMicrosecond);

// The same from model::Pods (each a ~600-byte object and about eight heap blocks).
void BM_FullReconcileFromModelPods(benchmark::State& state) {
  const Fixture fixture("web", Size(state), false);
  TimeFullReconcile(state, [&] { return fixture.DesiredFromModelPods(); });
}
BENCHMARK(BM_FullReconcileFromModelPods)
    ->Arg(1000)
    ->Arg(10000)
    ->Arg(100000)
    ->Unit(benchmark::kMicrosecond);

// The planner alone on pre-derived endpoints (the controller's cost when desired state is cached).
void BM_FullReconcilePlanOnly(benchmark::State& state) {
  const Fixture fixture("web", Size(state), false);
  const reconcile::DesiredEndpoints desired = fixture.Desired();
  const reconcile::PlanOptions options;
  const std::int64_t before = fakes::AllocationCount();
  for (auto _ : state) {
    reconcile::Plan plan = reconcile::PlanSlices(desired, {}, options);
    benchmark::DoNotOptimize(plan.actions.data());
  }
  ReportPerEndpoint(state, Size(state), fakes::AllocationCount() - before);
}
BENCHMARK(BM_FullReconcilePlanOnly)->Arg(10000)->Arg(100000)->Unit(benchmark::kMicrosecond);

// One pod turns unready on a Service whose slices are in place: exactly one slice write. Derive
// and plan as the controller does without kept state (`slicewright plan -f onechange.json`).
void BM_OnePodReadinessFlip(benchmark::State& state) {
  Fixture fixture("web", Size(state), false);
  const std::vector<model::EndpointSlice> slices =
      Stored(reconcile::PlanSlices(fixture.Desired(), {}, reconcile::PlanOptions()));
  const ControllerPlanOptions controller(fixture);
  std::size_t next = 0;
  const std::int64_t before = fakes::AllocationCount();
  for (auto _ : state) {
    fixture.SetReady(next, false);
    reconcile::Plan plan =
        reconcile::PlanSlices(fixture.Resync(slices), slices, controller.options);
    fixture.SetReady(next, true);
    next = (next + 97) % fixture.pods.size();
    if (plan.actions.size() != 1) {
      state.SkipWithError("a one-pod change must make exactly one write");
      break;
    }
  }
  ReportPerEndpoint(state, Size(state), fakes::AllocationCount() - before);
}
BENCHMARK(BM_OnePodReadinessFlip)->Arg(10000)->Unit(benchmark::kMicrosecond);

// The same flip measured on the planner alone, with the desired state already derived.
void BM_OnePodReadinessFlipPlanOnly(benchmark::State& state) {
  Fixture fixture("web", Size(state), false);
  const reconcile::PlanOptions options;
  reconcile::DesiredEndpoints desired = fixture.Desired(/*slice_capacity=*/0);
  const std::vector<model::EndpointSlice> slices =
      Stored(reconcile::PlanSlices(desired, {}, options));
  std::size_t next = 0;
  for (auto _ : state) {
    auto& conditions = desired.groups[0].endpoints[next].conditions;
    conditions.ready = false;
    reconcile::Plan plan = reconcile::PlanSlices(desired, slices, options);
    conditions.ready = true;
    next = (next + 97) % desired.groups[0].endpoints.size();
    if (plan.actions.size() != 1) {
      state.SkipWithError("a one-pod change must make exactly one write");
      break;
    }
  }
}
BENCHMARK(BM_OnePodReadinessFlipPlanOnly)->Arg(10000)->Unit(benchmark::kMicrosecond);

// The steady state: the controller keeps the Service's ServiceEndpointsBuilder and the stored
// slices' fingerprints (taken when the informer observed each slice). One pod event is: the pod
// changes readiness, its Node is looked up, the builder re-derives that pod, the planner plans
// against the stored slices (exactly one write), and the written slice comes back from the API
// server and is fingerprinted again. Only the I/O is left out. Each iteration flips another pod,
// so pods go unready and later ready again.
struct IncrementalService {
  Fixture fixture;
  reconcile::ServiceEndpointsBuilder builder;
  std::vector<model::EndpointSlice> slices;
  std::vector<reconcile::SliceFingerprints> fingerprints;
  reconcile::PlanOptions options;
  std::int64_t version = 1;

  explicit IncrementalService(std::int64_t pods)
      : fixture("web", pods, false), builder(fixture.service) {
    builder.SetPods(fixture.pod_ptrs,
                    [this](std::string_view name) { return fixture.FindNode(name); });
    slices = Stored(reconcile::PlanSlices(builder.desired(), {}, options));
    for (const model::EndpointSlice& slice : slices) {
      fingerprints.push_back(reconcile::FingerprintSlice(slice));
    }
    options.existing_fingerprints = &fingerprints;
  }

  // One pod event; returns the number of writes. Not inlined, so callgrind can count it alone
  // (--toggle-collect='*IncrementalService::Event*').
  [[gnu::noinline]] std::size_t Event(std::size_t index) {
    Pod& pod = fixture.pods[index];
    std::string& ready = pod.status.conditions[0].status;
    ready = ready == "True" ? "False" : "True";
    builder.SetPod(pod, fixture.FindNode(pod.spec.node_name));
    reconcile::Plan plan = reconcile::PlanSlices(builder.desired(), slices, options);
    if (plan.actions.size() != 1 || plan.actions[0].operation != reconcile::Operation::kUpdate) {
      return plan.actions.size() + 1000;
    }
    // The API server's answer, as the informer stores it and fingerprints it.
    model::EndpointSlice& written = plan.actions[0].slice;
    written.metadata.resource_version = std::to_string(++version);
    for (std::size_t i = 0; i < slices.size(); ++i) {
      if (slices[i].metadata.name == written.metadata.name) {
        slices[i] = std::move(written);
        fingerprints[i] = reconcile::FingerprintSlice(slices[i]);
        break;
      }
    }
    return 1;
  }
};

void BM_OnePodChangeIncremental(benchmark::State& state) {
  IncrementalService service(Size(state));
  std::size_t next = 0;
  const std::int64_t before = fakes::AllocationCount();
  for (auto _ : state) {
    if (service.Event(next) != 1) {
      state.SkipWithError("a one-pod change must make exactly one write");
      break;
    }
    next = (next + 97) % service.fixture.pods.size();
  }
  ReportPerEndpoint(state, Size(state), fakes::AllocationCount() - before);
}
BENCHMARK(BM_OnePodChangeIncremental)->Arg(10000)->Unit(benchmark::kMicrosecond);

// The memory the EndpointSlice controller keeps for a Service at or above
// Options::incremental_min_pods (controllers/endpointslice): the ServiceEndpointsBuilder, and the
// Service's slices materialized and fingerprinted. Heap bytes per pod by glibc's mallinfo2, with
// real-world names (as BM_FullReconcileCloudNames).
void BM_KeptServiceMemory(benchmark::State& state) {
  Fixture fixture("web", Size(state), false);
  fixture.ShuffleIps();
  fixture.UseCloudNames();
  const auto pods = static_cast<double>(Size(state));
  double builder_bytes = 0;
  double slice_bytes = 0;
  for (auto _ : state) {
    malloc_trim(0);
    const std::size_t before = mallinfo2().uordblks;
    reconcile::ServiceEndpointsBuilder builder(fixture.service);
    builder.SetPods(fixture.pod_ptrs,
                    [&fixture](std::string_view name) { return fixture.FindNode(name); });
    malloc_trim(0);
    const std::size_t built = mallinfo2().uordblks;
    std::vector<model::EndpointSlice> slices =
        Stored(reconcile::PlanSlices(builder.desired(), {}, reconcile::PlanOptions()));
    std::vector<reconcile::SliceFingerprints> fingerprints;
    for (const model::EndpointSlice& slice : slices) {
      fingerprints.push_back(reconcile::FingerprintSlice(slice));
    }
    malloc_trim(0);
    builder_bytes = static_cast<double>(built - before) / pods;
    slice_bytes = static_cast<double>(mallinfo2().uordblks - built) / pods;
    benchmark::DoNotOptimize(slices);
    benchmark::DoNotOptimize(fingerprints);
  }
  state.counters["builder_bytes_per_pod"] = benchmark::Counter(builder_bytes);
  state.counters["slice_bytes_per_pod"] = benchmark::Counter(slice_bytes);
}
BENCHMARK(BM_KeptServiceMemory)->Arg(10000)->Iterations(1)->Unit(benchmark::kMillisecond);

// 10k Services x 15 pods built from no slices: BM_ResyncUnchangedManyServices's full build. Each
// Service's pods, Nodes and slices are apart in memory, so both read mostly cold lines, unlike a
// full build of one Service (BM_FullReconcile/100), whose few kilobytes stay in cache across
// iterations.
void BM_FullReconcileManyServices(benchmark::State& state) {
  const std::int64_t services = bench::SmokeMode() ? 1 : state.range(0);
  std::vector<std::unique_ptr<Fixture>> fixtures;
  for (std::int64_t s = 0; s < services; ++s) {
    fixtures.push_back(std::make_unique<Fixture>("svc-" + std::to_string(s), 15, false));
  }
  const reconcile::PlanOptions options;
  const std::int64_t before = fakes::AllocationCount();
  for (auto _ : state) {
    std::size_t writes = 0;
    for (const std::unique_ptr<Fixture>& fixture : fixtures) {
      writes += reconcile::PlanSlices(fixture->Desired(), {}, options).actions.size();
    }
    benchmark::DoNotOptimize(writes);
  }
  ReportPerEndpoint(state, services * 15, fakes::AllocationCount() - before);
}
BENCHMARK(BM_FullReconcileManyServices)->Arg(10000)->Unit(benchmark::kMillisecond);

// A resync of one Service with nothing changed (zero writes), derived and planned as the
// controller does without kept state: the same work as `slicewright plan -f unchanged.json
// --repeat` on bench/resync_input.py's files (one Service, N ready pods on 3 Nodes in 3 zones,
// one int target port, the Service's creation as trigger time, the topology cache's snapshot,
// stored slices as decoded), less plan's pod selection. Until issue #22 this name timed 10k
// Services x 15 pods (now BM_ResyncUnchangedManyServices), whose per-endpoint figure is mostly
// per-Service cost and cold memory, and so was no measure of plan's 10k-pod resync.
void BM_ResyncUnchanged(benchmark::State& state) {
  const Fixture fixture("web", Size(state), false);
  const std::vector<model::EndpointSlice> slices =
      Stored(reconcile::PlanSlices(fixture.Desired(), {}, reconcile::PlanOptions()));
  const ControllerPlanOptions controller(fixture);
  const std::int64_t before = fakes::AllocationCount();
  for (auto _ : state) {
    const reconcile::Plan plan =
        reconcile::PlanSlices(fixture.Resync(slices), slices, controller.options);
    if (!plan.actions.empty()) {
      state.SkipWithError("an unchanged resync must make no writes");
      break;
    }
  }
  ReportPerEndpoint(state, Size(state), fakes::AllocationCount() - before);
}
BENCHMARK(BM_ResyncUnchanged)->Arg(10000)->Unit(benchmark::kMicrosecond);

// 10k Services x 15 pods resynced with nothing changed: zero writes. Derive and plan as the
// controller does without kept state. Compare with BM_FullReconcileManyServices, the full build
// of the same Services: at 15 endpoints a Service, its fixed costs (labels, port keys, the
// Planner's vectors, the topology outcome) and cold memory make most of the per-endpoint figure.
void BM_ResyncUnchangedManyServices(benchmark::State& state) {
  const std::int64_t services = bench::SmokeMode() ? 1 : state.range(0);
  std::vector<std::unique_ptr<Fixture>> fixtures;
  std::vector<std::vector<model::EndpointSlice>> slices;
  std::vector<std::unique_ptr<ControllerPlanOptions>> controller;
  for (std::int64_t s = 0; s < services; ++s) {
    fixtures.push_back(std::make_unique<Fixture>("svc-" + std::to_string(s), 15, false));
    slices.push_back(
        Stored(reconcile::PlanSlices(fixtures.back()->Desired(), {}, reconcile::PlanOptions())));
    controller.push_back(std::make_unique<ControllerPlanOptions>(*fixtures.back()));
  }
  const std::int64_t before = fakes::AllocationCount();
  for (auto _ : state) {
    std::size_t writes = 0;
    for (std::size_t s = 0; s < fixtures.size(); ++s) {
      writes +=
          reconcile::PlanSlices(fixtures[s]->Resync(slices[s]), slices[s], controller[s]->options)
              .actions.size();
    }
    if (writes != 0) {
      state.SkipWithError("an unchanged resync must make no writes");
      break;
    }
  }
  ReportPerEndpoint(state, services * 15, fakes::AllocationCount() - before);
}
BENCHMARK(BM_ResyncUnchangedManyServices)->Arg(10000)->Unit(benchmark::kMillisecond);

// A resync of one 10k-pod Service whose 100 slices another controller wrote: the same endpoints,
// but spread over the slices in a shuffled order, as upstream's reconciler appends them in its
// pod lister's order. Nothing changed: zero writes. The Service source finds each endpoint's pod
// by its address (the slices are not in its order) and holds every slice, so nothing is built.
void BM_ResyncUnchangedForeignOrder(benchmark::State& state) {
  Fixture fixture("web", Size(state), false);
  std::vector<model::EndpointSlice> slices =
      Stored(reconcile::PlanSlices(fixture.Desired(), {}, reconcile::PlanOptions()));
  std::vector<model::Endpoint> endpoints;
  for (model::EndpointSlice& slice : slices) {
    for (model::Endpoint& endpoint : slice.endpoints) endpoints.push_back(std::move(endpoint));
    slice.endpoints.clear();
  }
  std::mt19937 shuffle(42);
  std::shuffle(endpoints.begin(), endpoints.end(), shuffle);
  for (std::size_t i = 0; i < endpoints.size(); ++i) {
    slices[i % slices.size()].endpoints.push_back(std::move(endpoints[i]));
  }
  const ControllerPlanOptions controller(fixture);
  const std::int64_t before = fakes::AllocationCount();
  for (auto _ : state) {
    const reconcile::Plan plan =
        reconcile::PlanSlices(fixture.Resync(slices), slices, controller.options);
    if (!plan.actions.empty()) {
      state.SkipWithError("an unchanged resync must make no writes");
      break;
    }
  }
  ReportPerEndpoint(state, Size(state), fakes::AllocationCount() - before);
}
BENCHMARK(BM_ResyncUnchangedForeignOrder)->Arg(10000)->Unit(benchmark::kMicrosecond);

// Dual-stack full reconcile: every pod publishes an IPv4 and an IPv6 endpoint.
void BM_DualStackFullReconcile(benchmark::State& state) {
  const Fixture fixture("web", Size(state), true);
  const reconcile::PlanOptions options;
  const std::int64_t before = fakes::AllocationCount();
  for (auto _ : state) {
    reconcile::Plan plan = reconcile::PlanSlices(fixture.Desired(), {}, options);
    benchmark::DoNotOptimize(plan.actions.data());
  }
  ReportPerEndpoint(state, 2 * Size(state), fakes::AllocationCount() - before);
}
BENCHMARK(BM_DualStackFullReconcile)->Arg(10000)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace slicewright

int main(int argc, char** argv) {
  // The heap as the slicewright binary configures it (src/cli/main.cc), so the figures are the
  // controllers' own.
  slicewright::ConfigureAllocatorForReconcileLoops();
  // --smoke: every case once at size 1, so CI proves the benchmarks run without paying for them.
  std::vector<char*> args;
  static char min_time[] = "--benchmark_min_time=0.000001";
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--smoke") == 0) {
      slicewright::bench::SmokeMode() = true;
      args.push_back(min_time);
    } else {
      args.push_back(argv[i]);
    }
  }
  int count = static_cast<int>(args.size());
  benchmark::Initialize(&count, args.data());
  if (benchmark::ReportUnrecognizedArguments(count, args.data())) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

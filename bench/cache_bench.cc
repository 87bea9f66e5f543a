// Benchmarks of the informer caches (issue #4): memory per cached Pod at 150,000 Pods (target: at
// most 400 B) and the cost of projecting a decoded Pod into the cache; memory per cached
// EndpointSlice endpoint (issue #5, controller RSS). The Pods look like a
// Deployment's in a real cluster: 50 namespaces, 1,500 ReplicaSets of 100 Pods, 500 Nodes, three
// labels, two containers with three ports, one IP (dual-stack for every fifth ReplicaSet), the
// usual conditions and managedFields, decoded from JSON lines as a watch delivers them.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <malloc.h>

#include "slicewright/cache/compact_slice.h"
#include "slicewright/cache/store.h"
#include "slicewright/codec/json.h"
#include "slicewright/model/compact_pod.h"

#include "smoke.h"

namespace slicewright {
namespace {

constexpr int kPodsPerReplicaSet = 100;

// A watch event line for pod `i`, as kube-apiserver streams it.
std::string PodEventLine(int i) {
  const int replica_set = i / kPodsPerReplicaSet;
  const int ns = replica_set % 50;
  const int node = (i * 7) % 500;
  const bool dual_stack = replica_set % 5 == 0;
  const std::string hash = "7d9f" + std::to_string(100000 + replica_set);
  const std::string app = "app-" + std::to_string(replica_set);
  const std::string name = app + "-" + hash + "-" + std::to_string(10000 + i % 90000);
  const std::string ip = "10." + std::to_string(i / 65536 % 256) + "." +
                         std::to_string(i / 256 % 256) + "." + std::to_string(i % 256);
  std::string ips = R"([{"ip":")" + ip + R"("})";
  if (dual_stack) ips += R"(,{"ip":"fd00::)" + std::to_string(i % 65536) + R"("})";
  ips += "]";
  return R"({"type":"MODIFIED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":")" +
         name + R"(","generateName":")" + app + "-" + hash + R"(-","namespace":"team-)" +
         std::to_string(ns) + R"(","uid":"5b0c7a8e-3d2f-4e61-b7a9-)" +
         std::to_string(100000000000 + i) + R"(","resourceVersion":")" +
         std::to_string(1000000 + i) +
         R"(","creationTimestamp":"2026-11-30T09:21:37Z","labels":{"app":")" + app +
         R"(","pod-template-hash":")" + hash +
         R"(","tier":"backend"},"annotations":{"kubectl.kubernetes.io/restartedAt":)"
         R"("2026-11-30T09:00:00Z"},"ownerReferences":[{"apiVersion":"apps/v1","kind":)"
         R"("ReplicaSet","name":")" +
         app + "-" + hash +
         R"(","uid":"0d6b3f5e-8c3f-4a44-9d0e-2f1c9e0a7b11","controller":true,)"
         R"("blockOwnerDeletion":true}],"managedFields":[{"manager":"kube-controller-manager",)"
         R"("operation":"Update","apiVersion":"v1","time":"2026-11-30T09:21:37Z",)"
         R"("fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{}}}}]},"spec":{)"
         R"("containers":[{"name":"app","image":"registry.example.com/app:1.2.3","ports":[)"
         R"({"name":"http","containerPort":8080,"protocol":"TCP"},{"name":"grpc",)"
         R"("containerPort":9090,"protocol":"TCP"}],"resources":{"requests":{"cpu":"100m"}}},)"
         R"({"name":"metrics","image":"registry.example.com/exporter:0.9","ports":[{"name":)"
         R"("metrics","containerPort":9100,"protocol":"TCP"}]}],"restartPolicy":"Always",)"
         R"("nodeName":"node-)" +
         std::to_string(node) +
         R"(","serviceAccountName":"default"},"status":{"phase":"Running","conditions":[)"
         R"({"type":"Initialized","status":"True","lastTransitionTime":"2026-11-30T09:21:37Z"},)"
         R"({"type":"Ready","status":"True","lastTransitionTime":"2026-11-30T09:21:52Z"},)"
         R"({"type":"ContainersReady","status":"True","lastTransitionTime":"2026-11-30T09:21:52Z"},)"
         R"({"type":"PodScheduled","status":"True","lastTransitionTime":"2026-11-30T09:21:37Z"}],)"
         R"("hostIP":"192.168.0.)" +
         std::to_string(node % 250) + R"(","podIP":")" + ip + R"(","podIPs":)" + ips +
         R"(,"startTime":"2026-11-30T09:21:37Z"}}})";
}

// Heap bytes per cached Pod with everything the cache holds (objects, interned values, hash
// tables, shared_ptr control blocks), measured by glibc's mallinfo2 around the fill.
void BM_CompactPodCacheMemory(benchmark::State& state) {
  const int pods = bench::SmokeMode() ? 100 : static_cast<int>(state.range(0));
  double bytes_per_pod = 0;
  for (auto _ : state) {
    const std::size_t before = mallinfo2().uordblks;
    auto interners = std::make_shared<model::PodInterners>();
    auto store = std::make_unique<cache::Store<model::CompactPod>>();
    for (int i = 0; i < pods; ++i) {
      Result<codec::WatchEvent<model::Pod>> event = codec::DecodePodWatchEvent(PodEventLine(i));
      if (!event.ok()) {
        state.SkipWithError(event.status().ToString().c_str());
        return;
      }
      store->Upsert(std::make_shared<const model::CompactPod>(
          model::CompactPod::FromPod(event->object, *interners)));
    }
    malloc_trim(0);
    bytes_per_pod = static_cast<double>(mallinfo2().uordblks - before) / pods;
    benchmark::DoNotOptimize(store);
  }
  state.counters["heap_bytes_per_pod"] = benchmark::Counter(bytes_per_pod);
  state.counters["sizeof_compact_pod"] =
      benchmark::Counter(static_cast<double>(sizeof(model::CompactPod)));
}
BENCHMARK(BM_CompactPodCacheMemory)->Arg(150000)->Iterations(1)->Unit(benchmark::kMillisecond);

// An EndpointSlice of the pods of Service `service` as the controller writes it: `endpoints`
// pod-backed endpoints, one port, the usual labels, annotation and ownerReference.
model::EndpointSlice ServiceSlice(int service, int endpoints) {
  const std::string app = "app-" + std::to_string(service);
  model::EndpointSlice slice;
  slice.metadata.name = app + "-" + std::to_string(10000 + service % 90000);
  slice.metadata.generate_name = app + "-";
  slice.metadata.namespace_ = "team-" + std::to_string(service % 50);
  slice.metadata.uid = "9a1b2c3d-4e5f-4a6b-8c7d-" + std::to_string(100000000000 + service);
  slice.metadata.resource_version = std::to_string(2000000 + service);
  slice.metadata.generation = 1;
  slice.metadata.labels = {
      {"kubernetes.io/service-name", app},
      {"endpointslice.kubernetes.io/managed-by", "endpointslice-controller.k8s.io"}};
  slice.metadata.annotations = {
      {"endpoints.kubernetes.io/last-change-trigger-time", "2026-11-30T09:21:52Z"}};
  model::OwnerReference owner;
  owner.api_version = "v1";
  owner.kind = "Service";
  owner.name = app;
  owner.uid = "0d6b3f5e-8c3f-4a44-9d0e-" + std::to_string(100000000000 + service);
  owner.controller = true;
  owner.block_owner_deletion = true;
  slice.metadata.owner_references = {owner};
  slice.address_type = "IPv4";
  model::EndpointPort port;
  port.name = "http";
  port.protocol = "TCP";
  port.port = 8080;
  slice.ports = {port};
  for (int e = 0; e < endpoints; ++e) {
    const int i = service * endpoints + e;
    model::Endpoint& endpoint = slice.endpoints.emplace_back();
    endpoint.addresses = {"10." + std::to_string(i / 65536 % 256) + "." +
                          std::to_string(i / 256 % 256) + "." + std::to_string(i % 256)};
    endpoint.conditions = {true, true, false};
    endpoint.node_name = "node-" + std::to_string((i * 7) % 5000);
    endpoint.zone = "zone-" + std::string(1, static_cast<char>('a' + i % 3));
    model::ObjectReference& ref = endpoint.target_ref.emplace();
    ref.kind = "Pod";
    ref.namespace_ = slice.metadata.namespace_;
    ref.name = app + "-7d9f8c6b5-" + std::to_string(10000 + e);
    ref.uid = "5b0c7a8e-3d2f-4e61-b7a9-" + std::to_string(100000000000 + i);
  }
  return slice;
}

// Heap bytes per cached endpoint in the EndpointSlice cache at the scale simulator's shape
// (10,000 slices holding 75,000 endpoints), as model::EndpointSlice (arg 0) and as
// CompactEndpointSlice (arg 1), with the store's tables and control blocks; arg 2: compact, the
// endpoints as MCS slices carry them (no targetRef, no nodeName: DesiredBrokerSlices drops them),
// what the MCS agent caches twice per imported export.
void BM_EndpointSliceCacheMemory(benchmark::State& state) {
  const bool compact = state.range(0) >= 1;
  const bool mcs_shaped = state.range(0) == 2;
  const int slices = bench::SmokeMode() ? 10 : 10000;
  const int endpoints_per_slice = 75000 / 10000 + 1;  // 10,000 x 7.5 on average
  double bytes_per_endpoint = 0;
  int endpoints = 0;
  for (auto _ : state) {
    const std::size_t before = mallinfo2().uordblks;
    auto interners = std::make_shared<cache::SliceInterners>();
    auto model_store = std::make_unique<cache::Store<model::EndpointSlice>>();
    auto compact_store = std::make_unique<cache::Store<cache::CompactEndpointSlice>>();
    endpoints = 0;
    for (int i = 0; i < slices; ++i) {
      model::EndpointSlice slice = ServiceSlice(i, endpoints_per_slice - i % 2);
      if (mcs_shaped) {
        for (model::Endpoint& endpoint : slice.endpoints) {
          endpoint.target_ref.reset();
          endpoint.node_name.reset();
        }
      }
      endpoints += static_cast<int>(slice.endpoints.size());
      if (compact) {
        compact_store->Upsert(std::make_shared<const cache::CompactEndpointSlice>(
            cache::CompactEndpointSlice::FromSlice(slice, *interners)));
      } else {
        model_store->Upsert(std::make_shared<const model::EndpointSlice>(std::move(slice)));
      }
    }
    malloc_trim(0);
    bytes_per_endpoint = static_cast<double>(mallinfo2().uordblks - before) / endpoints;
    benchmark::DoNotOptimize(model_store);
    benchmark::DoNotOptimize(compact_store);
  }
  state.counters["heap_bytes_per_endpoint"] = benchmark::Counter(bytes_per_endpoint);
  state.counters["endpoints"] = benchmark::Counter(endpoints);
}
BENCHMARK(BM_EndpointSliceCacheMemory)
    ->ArgName("compact")
    ->Arg(0)
    ->Arg(1)
    ->Arg(2)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

// Materialising a cached slice of 100 endpoints for the planner (each sync of a Service does it
// for each of its slices).
void BM_CompactSliceToSlice(benchmark::State& state) {
  cache::SliceInterners interners;
  const cache::CompactEndpointSlice compact =
      cache::CompactEndpointSlice::FromSlice(ServiceSlice(1, 100), interners);
  for (auto _ : state) {
    model::EndpointSlice slice = compact.ToSlice();
    benchmark::DoNotOptimize(slice);
  }
  state.SetItemsProcessed(state.iterations() * 100);
}
BENCHMARK(BM_CompactSliceToSlice);

// Projecting one decoded Pod into its compact form, and materialising it back for the reconciler.
void BM_CompactPodProject(benchmark::State& state) {
  Result<codec::WatchEvent<model::Pod>> event = codec::DecodePodWatchEvent(PodEventLine(12345));
  if (!event.ok()) {
    state.SkipWithError(event.status().ToString().c_str());
    return;
  }
  model::PodInterners interners;
  for (auto _ : state) {
    model::CompactPod compact = model::CompactPod::FromPod(event->object, interners);
    benchmark::DoNotOptimize(compact);
  }
}
BENCHMARK(BM_CompactPodProject);

void BM_CompactPodToPod(benchmark::State& state) {
  Result<codec::WatchEvent<model::Pod>> event = codec::DecodePodWatchEvent(PodEventLine(12345));
  if (!event.ok()) {
    state.SkipWithError(event.status().ToString().c_str());
    return;
  }
  model::PodInterners interners;
  const model::CompactPod compact = model::CompactPod::FromPod(event->object, interners);
  for (auto _ : state) {
    model::Pod pod = compact.ToPod();
    benchmark::DoNotOptimize(pod);
  }
}
BENCHMARK(BM_CompactPodToPod);

}  // namespace
}  // namespace slicewright

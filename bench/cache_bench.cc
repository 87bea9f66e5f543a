// Benchmarks of the informer caches (issue #4): memory per cached Pod at 150,000 Pods (target: at
// most 400 B) and the cost of projecting a decoded Pod into the cache. The Pods look like a
// Deployment's in a real cluster: 50 namespaces, 1,500 ReplicaSets of 100 Pods, 500 Nodes, three
// labels, two containers with three ports, one IP (dual-stack for every fifth ReplicaSet), the
// usual conditions and managedFields, decoded from JSON lines as a watch delivers them.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <malloc.h>

#include "slicewright/cache/compact_pod.h"
#include "slicewright/cache/store.h"
#include "slicewright/codec/json.h"

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
    auto interners = std::make_shared<cache::PodInterners>();
    auto store = std::make_unique<cache::Store<cache::CompactPod>>();
    for (int i = 0; i < pods; ++i) {
      Result<codec::WatchEvent<model::Pod>> event = codec::DecodePodWatchEvent(PodEventLine(i));
      if (!event.ok()) {
        state.SkipWithError(event.status().ToString().c_str());
        return;
      }
      store->Upsert(std::make_shared<const cache::CompactPod>(
          cache::CompactPod::FromPod(event->object, *interners)));
    }
    malloc_trim(0);
    bytes_per_pod = static_cast<double>(mallinfo2().uordblks - before) / pods;
    benchmark::DoNotOptimize(store);
  }
  state.counters["heap_bytes_per_pod"] = benchmark::Counter(bytes_per_pod);
  state.counters["sizeof_compact_pod"] =
      benchmark::Counter(static_cast<double>(sizeof(cache::CompactPod)));
}
BENCHMARK(BM_CompactPodCacheMemory)->Arg(150000)->Iterations(1)->Unit(benchmark::kMillisecond);

// Projecting one decoded Pod into its compact form, and materialising it back for the reconciler.
void BM_CompactPodProject(benchmark::State& state) {
  Result<codec::WatchEvent<model::Pod>> event = codec::DecodePodWatchEvent(PodEventLine(12345));
  if (!event.ok()) {
    state.SkipWithError(event.status().ToString().c_str());
    return;
  }
  cache::PodInterners interners;
  for (auto _ : state) {
    cache::CompactPod compact = cache::CompactPod::FromPod(event->object, interners);
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
  cache::PodInterners interners;
  const cache::CompactPod compact = cache::CompactPod::FromPod(event->object, interners);
  for (auto _ : state) {
    model::Pod pod = compact.ToPod();
    benchmark::DoNotOptimize(pod);
  }
}
BENCHMARK(BM_CompactPodToPod);

}  // namespace
}  // namespace slicewright

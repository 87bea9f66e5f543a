// Benchmarks of the MCS agent's pure planning path (issue #23 §6: "a 1,000-backend import
// re-planned in under 1 ms of CPU"): reconcile/mcs_source.h's DesiredImportedSlices (import side)
// and DesiredBrokerSlices (export side), each followed by PlanSlices, with one endpoint changed
// and with nothing changed. The *FromCache cases add the copies out of the agent's compact
// EndpointSlice caches that a sync makes before it plans. Run:
// build/release/bench/slicewright_bench
// --benchmark_filter=Mcs; `--smoke` runs every case once at a tiny size.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "slicewright/cache/compact_slice.h"
#include "slicewright/model/discovery.h"
#include "slicewright/model/mcs.h"
#include "slicewright/reconcile/mcs_source.h"
#include "slicewright/reconcile/planner.h"

#include "smoke.h"

namespace slicewright {
namespace {

constexpr const char* kSourceCluster = "cluster-1";
constexpr const char* kDerivedService = "derived-vbm6ke2dlqhbbjxt";

std::int64_t Endpoints(const benchmark::State& state) {
  return bench::SmokeMode() ? 1 : state.range(0);
}

// What an API server stores after applying `plan` to nothing: names filled in.
std::vector<model::EndpointSlice> StoredSlices(const reconcile::Plan& plan) {
  std::vector<model::EndpointSlice> slices;
  int counter = 0;
  for (const reconcile::SliceAction& action : plan.actions) {
    model::EndpointSlice slice = action.slice;
    slice.metadata.name = slice.metadata.generate_name + std::to_string(++counter);
    slice.metadata.uid = "uid-" + slice.metadata.name;
    slice.metadata.resource_version = "1";
    slices.push_back(std::move(slice));
  }
  std::sort(slices.begin(), slices.end(),
            [](const auto& a, const auto& b) { return a.metadata.name < b.metadata.name; });
  return slices;
}

// The exporting cluster's own slices of a Service with `count` ready pods, 100 a slice, as its
// EndpointSlice controller writes them (node, zone, targetRef set).
std::vector<model::EndpointSlice> ExportedServiceSlices(std::int64_t count) {
  std::vector<model::EndpointSlice> slices;
  const char* zones[] = {"zone-a", "zone-b", "zone-c"};
  for (std::int64_t i = 0; i < count; ++i) {
    if (i % 100 == 0) {
      model::EndpointSlice& slice = slices.emplace_back();
      slice.metadata.namespace_ = "bench";
      slice.metadata.name = "web-" + std::to_string(i / 100);
      slice.metadata.labels = {
          {"kubernetes.io/service-name", "web"},
          {"endpointslice.kubernetes.io/managed-by", "endpointslice-controller.k8s.io"}};
      slice.address_type = "IPv4";
      model::EndpointPort port;
      port.name = "http";
      port.protocol = "TCP";
      port.port = 8080;
      slice.ports = {port};
    }
    model::Endpoint endpoint;
    const std::int64_t n = i + 1;
    endpoint.addresses = {"10.244." + std::to_string((n >> 8) & 255) + "." +
                          std::to_string(n & 255)};
    endpoint.conditions = {true, true, false};
    model::ObjectReference ref;
    ref.kind = "Pod";
    ref.namespace_ = "bench";
    ref.name = "web-" + std::to_string(i);
    ref.uid = "0a1b2c3d-4e5f-6789-abcd-" + std::to_string(100000000000 + i);
    endpoint.target_ref = ref;
    endpoint.node_name = "node-" + std::to_string(i % 3);
    endpoint.zone = zones[i % 3];
    slices.back().endpoints.push_back(std::move(endpoint));
  }
  return slices;
}

// One exported Service of `count` endpoints at each hop: the exporting cluster's slices, its
// record and broker slices, and an importing cluster's ServiceImport and MCS slices, all in place.
struct Fixture {
  std::vector<model::EndpointSlice> local;  // the exporting cluster's own slices
  model::ServiceExportRecord record;
  std::vector<model::EndpointSlice> broker;  // the record's slices in the broker
  model::ServiceImport service_import;
  std::vector<model::EndpointSlice> imported;  // the import's slices in a member

  explicit Fixture(std::int64_t count) : local(ExportedServiceSlices(count)) {
    record.metadata.namespace_ = std::string(model::kDefaultBrokerNamespace);
    record.metadata.name = "web.bench.cluster-1";
    record.metadata.uid = "7d3c1e2a-0b4f-4c6d-9e8a-1f2b3c4d5e6f";
    record.spec.cluster = kSourceCluster;
    record.spec.namespace_ = "bench";
    record.spec.name = "web";
    record.spec.type = std::string(model::kServiceImportClusterSetIP);
    broker = StoredSlices(reconcile::PlanSlices(reconcile::DesiredBrokerSlices(record, local), {},
                                                reconcile::McsPlanOptions()));
    service_import.metadata.namespace_ = "bench";
    service_import.metadata.name = "web";
    service_import.metadata.uid = "3e9f1a2b-6c7d-4e8f-a0b1-c2d3e4f5a6b7";
    imported =
        StoredSlices(reconcile::PlanSlices(Imported(broker), {}, reconcile::McsPlanOptions()));
  }

  reconcile::DesiredEndpoints Imported(const std::vector<model::EndpointSlice>& from) const {
    return reconcile::DesiredImportedSlices(service_import, kSourceCluster, kDerivedService, from);
  }

  static void SetReady(std::vector<model::EndpointSlice>& slices, std::size_t index, bool ready) {
    for (model::EndpointSlice& slice : slices) {
      if (index < slice.endpoints.size()) {
        slice.endpoints[index].conditions.ready = ready;
        return;
      }
      index -= slice.endpoints.size();
    }
  }
};

std::vector<cache::CompactEndpointSlice> Compact(const std::vector<model::EndpointSlice>& slices,
                                                 cache::SliceInterners& interners) {
  std::vector<cache::CompactEndpointSlice> out;
  for (const model::EndpointSlice& slice : slices) {
    out.push_back(cache::CompactEndpointSlice::FromSlice(slice, interners));
  }
  return out;
}

std::vector<model::EndpointSlice> Expand(const std::vector<cache::CompactEndpointSlice>& slices) {
  std::vector<model::EndpointSlice> out;
  out.reserve(slices.size());
  for (const cache::CompactEndpointSlice& slice : slices) out.push_back(slice.ToSlice());
  return out;
}

// Stops the benchmark when a plan's writes are not what the case expects.
bool Expect(benchmark::State& state, const reconcile::Plan& plan, std::size_t writes) {
  if (plan.actions.size() == writes) return true;
  state.SkipWithError(writes == 0 ? "an unchanged import must make no writes"
                                  : "a one-endpoint change must make exactly one write");
  return false;
}

// Import side: one endpoint of a 1,000-backend import turns unready in the broker; the member
// derives its MCS slices from the broker slices and plans against its own: one write.
void BM_McsImportOneEndpointChanged(benchmark::State& state) {
  Fixture fixture(Endpoints(state));
  const std::size_t count = static_cast<std::size_t>(Endpoints(state));
  std::size_t next = 0;
  for (auto _ : state) {
    Fixture::SetReady(fixture.broker, next, false);
    reconcile::Plan plan = reconcile::PlanSlices(fixture.Imported(fixture.broker), fixture.imported,
                                                 reconcile::McsPlanOptions());
    Fixture::SetReady(fixture.broker, next, true);
    next = (next + 97) % count;
    if (!Expect(state, plan, 1)) break;
  }
}
BENCHMARK(BM_McsImportOneEndpointChanged)->Arg(1000)->Unit(benchmark::kMicrosecond);

// Import side, nothing changed (a resync, or another cluster's change waking this import).
void BM_McsImportUnchanged(benchmark::State& state) {
  const Fixture fixture(Endpoints(state));
  for (auto _ : state) {
    reconcile::Plan plan = reconcile::PlanSlices(fixture.Imported(fixture.broker), fixture.imported,
                                                 reconcile::McsPlanOptions());
    if (!Expect(state, plan, 0)) break;
  }
}
BENCHMARK(BM_McsImportUnchanged)->Arg(1000)->Unit(benchmark::kMicrosecond);

// The import side as the agent's sync runs it: both slice sets copied out of the compact caches
// (the informers' stores), then derive + plan.
void BM_McsImportOneEndpointChangedFromCache(benchmark::State& state) {
  Fixture fixture(Endpoints(state));
  const std::size_t count = static_cast<std::size_t>(Endpoints(state));
  cache::SliceInterners interners;
  const std::vector<cache::CompactEndpointSlice> imported = Compact(fixture.imported, interners);
  std::size_t next = 0;
  for (auto _ : state) {
    state.PauseTiming();
    Fixture::SetReady(fixture.broker, next, false);
    const std::vector<cache::CompactEndpointSlice> broker = Compact(fixture.broker, interners);
    Fixture::SetReady(fixture.broker, next, true);
    next = (next + 97) % count;
    state.ResumeTiming();
    reconcile::Plan plan = reconcile::PlanSlices(fixture.Imported(Expand(broker)), Expand(imported),
                                                 reconcile::McsPlanOptions());
    if (!Expect(state, plan, 1)) break;
  }
}
BENCHMARK(BM_McsImportOneEndpointChangedFromCache)->Arg(1000)->Unit(benchmark::kMicrosecond);

// Export side: one pod of the exported Service turns unready in its own cluster; the exporting
// agent derives the broker slices from the Service's slices and plans: one broker write.
void BM_McsExportOneEndpointChanged(benchmark::State& state) {
  Fixture fixture(Endpoints(state));
  const std::size_t count = static_cast<std::size_t>(Endpoints(state));
  std::size_t next = 0;
  for (auto _ : state) {
    Fixture::SetReady(fixture.local, next, false);
    reconcile::Plan plan =
        reconcile::PlanSlices(reconcile::DesiredBrokerSlices(fixture.record, fixture.local),
                              fixture.broker, reconcile::McsPlanOptions());
    Fixture::SetReady(fixture.local, next, true);
    next = (next + 97) % count;
    if (!Expect(state, plan, 1)) break;
  }
}
BENCHMARK(BM_McsExportOneEndpointChanged)->Arg(1000)->Unit(benchmark::kMicrosecond);

// Export side, nothing changed.
void BM_McsExportUnchanged(benchmark::State& state) {
  const Fixture fixture(Endpoints(state));
  for (auto _ : state) {
    reconcile::Plan plan =
        reconcile::PlanSlices(reconcile::DesiredBrokerSlices(fixture.record, fixture.local),
                              fixture.broker, reconcile::McsPlanOptions());
    if (!Expect(state, plan, 0)) break;
  }
}
BENCHMARK(BM_McsExportUnchanged)->Arg(1000)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace slicewright

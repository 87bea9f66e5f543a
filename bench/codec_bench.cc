// Benchmarks of the codec's hot path for the API client (issue #4): decoding Pod watch events as
// kube-apiserver streams them. Figures are bytes and events per second of one thread, and heap
// allocations per event. Input: the real Pods of testdata/codec/pods.json (a kind cluster's
// PodList with managedFields), each wrapped as a MODIFIED event line.
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <malloc.h>
#include <nlohmann/json.hpp>

#include "slicewright/codec/json.h"

#include "fakes/allocation_counter.h"

namespace slicewright {
namespace {

// One event line per Pod of the test data, compact as the API server writes them.
std::vector<std::string> PodEventLines() {
  std::ifstream in(std::string(SW_SOURCE_DIR) + "/testdata/codec/pods.json");
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json list =
      nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  std::vector<std::string> lines;
  if (list.is_discarded() || !list.contains("items")) return lines;
  for (nlohmann::json item : list["items"]) {
    item["apiVersion"] = "v1";
    item["kind"] = "Pod";
    lines.push_back(nlohmann::json{{"type", "MODIFIED"}, {"object", item}}.dump() + "\n");
  }
  return lines;
}

void DecodeLines(benchmark::State& state, const std::vector<std::string>& lines) {
  if (lines.empty()) {
    state.SkipWithError("no test data (testdata/codec/pods.json)");
    return;
  }
  std::int64_t bytes = 0;
  std::int64_t events = 0;
  const std::int64_t allocations_before = fakes::AllocationCount();
  for (auto _ : state) {
    for (const std::string& line : lines) {
      Result<codec::WatchEvent<model::Pod>> event = codec::DecodePodWatchEvent(line);
      if (!event.ok()) {
        state.SkipWithError(event.status().ToString().c_str());
        return;
      }
      benchmark::DoNotOptimize(event);
      bytes += static_cast<std::int64_t>(line.size());
      ++events;
    }
  }
  state.SetBytesProcessed(bytes);
  state.SetItemsProcessed(events);
  state.counters["allocs_per_event"] =
      benchmark::Counter(static_cast<double>(fakes::AllocationCount() - allocations_before) /
                         static_cast<double>(events > 0 ? events : 1));
  state.counters["bytes_per_event"] =
      benchmark::Counter(static_cast<double>(bytes) / static_cast<double>(events > 0 ? events : 1));
}

// Every Pod of the test data in turn (4.5 KB, 1.6 KB and 0.4 KB lines).
void BM_DecodePodWatchEvents(benchmark::State& state) {
  static const std::vector<std::string> lines = PodEventLines();
  DecodeLines(state, lines);
}
BENCHMARK(BM_DecodePodWatchEvents);

// The largest Pod alone: a workload Pod with managedFields, labels and two containers' ports.
void BM_DecodeLargePodWatchEvent(benchmark::State& state) {
  static const std::vector<std::string> lines = [] {
    std::vector<std::string> all = PodEventLines();
    std::string largest;
    for (std::string& line : all) {
      if (line.size() > largest.size()) largest = std::move(line);
    }
    return largest.empty() ? std::vector<std::string>{} : std::vector<std::string>{largest};
  }();
  DecodeLines(state, lines);
}
BENCHMARK(BM_DecodeLargePodWatchEvent);

// Memory a decoded model::Pod holds (the object plus its heap), per Pod, over 30,000 Pods decoded
// from the test data's events and kept: the starting point for the informer cache's compact
// projections (issue #4: at most 400 B per cached Pod). glibc's mallinfo2 counts the bytes in use.
void BM_DecodedPodMemory(benchmark::State& state) {
  static const std::vector<std::string> lines = PodEventLines();
  if (lines.empty()) {
    state.SkipWithError("no test data (testdata/codec/pods.json)");
    return;
  }
  constexpr std::size_t kPods = 30000;
  double bytes_per_pod = 0;
  for (auto _ : state) {
    const std::size_t before = mallinfo2().uordblks;
    std::vector<model::Pod> pods;
    pods.reserve(kPods);
    for (std::size_t i = 0; i < kPods; ++i) {
      Result<codec::WatchEvent<model::Pod>> event =
          codec::DecodePodWatchEvent(lines[i % lines.size()]);
      if (!event.ok()) {
        state.SkipWithError(event.status().ToString().c_str());
        return;
      }
      pods.push_back(std::move(event->object));
    }
    bytes_per_pod = static_cast<double>(mallinfo2().uordblks - before) / static_cast<double>(kPods);
    benchmark::DoNotOptimize(pods);
  }
  state.counters["heap_bytes_per_pod"] = benchmark::Counter(bytes_per_pod);
  state.counters["sizeof_pod"] = benchmark::Counter(static_cast<double>(sizeof(model::Pod)));
}
BENCHMARK(BM_DecodedPodMemory)->Iterations(1)->Unit(benchmark::kMillisecond);

// Encoding a full EndpointSlice (100 endpoints, as the controllers write them) to the JSON body of
// a create or update: paid once per slice write.
void BM_EncodeEndpointSlice(benchmark::State& state) {
  model::EndpointSlice slice;
  slice.metadata.name = "web-x7k2p";
  slice.metadata.namespace_ = "default";
  slice.metadata.resource_version = "12345";
  slice.metadata.labels = {
      {"kubernetes.io/service-name", "web"},
      {"endpointslice.kubernetes.io/managed-by", "endpointslice-controller.k8s.io"}};
  slice.address_type = "IPv4";
  model::EndpointPort& port = slice.ports.emplace_back();
  port.name = "http";
  port.port = 8080;
  port.protocol = "TCP";
  for (int i = 0; i < 100; ++i) {
    model::Endpoint& endpoint = slice.endpoints.emplace_back();
    endpoint.addresses.push_back("10.244." + std::to_string(i / 250) + "." +
                                 std::to_string(i % 250));
    endpoint.conditions.ready = true;
    endpoint.conditions.serving = true;
    endpoint.conditions.terminating = false;
    endpoint.node_name = "ip-10-0-1-23.eu-west-1.compute.internal";
    endpoint.zone = "eu-west-1a";
    model::ObjectReference& ref = endpoint.target_ref.emplace();
    ref.kind = "Pod";
    ref.namespace_ = "default";
    ref.name = "web-7d4b9c8f6d-" + std::to_string(10000 + i);
    ref.uid = "0f8e5a1c-3b7d-4e2a-9c6f-" + std::to_string(100000000000 + i);
  }
  std::int64_t bytes = 0;
  for (auto _ : state) {
    const std::string body = codec::EncodeEndpointSlice(slice);
    bytes += static_cast<std::int64_t>(body.size());
    benchmark::DoNotOptimize(body);
  }
  state.SetBytesProcessed(bytes);
  state.counters["ns_per_endpoint"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * 100,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_EncodeEndpointSlice)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace slicewright

// The clusterset.local responder's cost per query, without the network (issue #24,
// docs/performance.md): decode, resolve and encode one UDP query, for A of a ClusterSetIP name
// and A of a headless name of 100 ready endpoints (EDNS 1232: its 1.6 kB answer does not fit, so
// TC), and the headless SRV over TCP, each encoded anew and through the Responder's cache; and
// BuildServiceView of a headless import (what a cache change costs).
#include <memory>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "slicewright/model/well_known.h"

#include "dns/responder.h"
#include "dns/wire.h"
#include "smoke.h"

namespace slicewright::dns {
namespace {

model::EndpointSlice HeadlessSlice(int endpoints) {
  model::EndpointSlice slice;
  slice.metadata.namespace_ = "bench";
  slice.metadata.labels[std::string(model::kLabelMcsServiceName)] = "big";
  slice.metadata.labels[std::string(model::kLabelMcsSourceCluster)] = "cluster-1";
  slice.address_type = "IPv4";
  for (int i = 0; i < endpoints; ++i) {
    slice.endpoints.emplace_back().addresses.push_back("10.244." + std::to_string(i / 250) + "." +
                                                       std::to_string(i % 250 + 1));
  }
  model::EndpointPort port;
  port.name = "tcp";
  port.port = 42;
  slice.ports.push_back(port);
  return slice;
}

model::ServiceImport Import(std::string name, std::string type) {
  model::ServiceImport si;
  si.metadata.namespace_ = "bench";
  si.metadata.name = std::move(name);
  si.spec.type = std::move(type);
  if (si.spec.type == "ClusterSetIP") {
    si.spec.ips = {"10.96.0.10", "fd00:96::a"};
    si.spec.ports = {{"http", "TCP", std::nullopt, 80}};
  }
  return si;
}

const auto kLive = [](std::string_view) { return true; };

Zone& BenchZone() {
  static Zone* zone = [] {
    auto* z = new Zone();  // NOLINT: lives for the process
    z->Put(std::make_shared<const ServiceView>(
        BuildServiceView(Import("web", "ClusterSetIP"), {}, kLive, {})));
    z->Put(std::make_shared<const ServiceView>(
        BuildServiceView(Import("big", "Headless"),
                         std::vector<model::EndpointSlice>{HeadlessSlice(100)}, kLive, {})));
    return z;
  }();
  return *zone;
}

void Ask(benchmark::State& state, const std::string& name, std::uint16_t type, bool tcp) {
  const std::vector<std::uint8_t> query = EncodeQuery(1, name, type, 1232);
  const ResponderOptions options;
  std::size_t bytes = 0;
  for (auto _ : state) {
    const std::vector<std::uint8_t> response = Respond(BenchZone(), query, tcp, options);
    bytes = response.size();
    benchmark::DoNotOptimize(response.data());
  }
  state.counters["response_bytes"] = static_cast<double>(bytes);
}

// Through the Responder and its cache of encoded answers (what the agent serves with).
void AskCached(benchmark::State& state, const std::string& name, std::uint16_t type, bool tcp) {
  static Responder responder(std::shared_ptr<const Zone>(&BenchZone(), [](const Zone*) {}),
                             ResponderOptions{});
  const std::vector<std::uint8_t> query = EncodeQuery(1, name, type, 1232);
  std::vector<std::uint8_t> response;  // reused, as the server reuses its buffers
  for (auto _ : state) {
    responder.Respond(query, tcp, response);
    benchmark::DoNotOptimize(response.data());
  }
}

void BM_DnsCachedClusterSetIpA(benchmark::State& state) {
  AskCached(state, "web.bench.svc.clusterset.local", 1, false);
}
BENCHMARK(BM_DnsCachedClusterSetIpA);

void BM_DnsCachedHeadless100SrvTcp(benchmark::State& state) {
  AskCached(state, "big.bench.svc.clusterset.local", 33, true);
}
BENCHMARK(BM_DnsCachedHeadless100SrvTcp);

void BM_DnsClusterSetIpA(benchmark::State& state) {
  Ask(state, "web.bench.svc.clusterset.local", 1, false);
}
BENCHMARK(BM_DnsClusterSetIpA);

void BM_DnsHeadless100A(benchmark::State& state) {
  Ask(state, "big.bench.svc.clusterset.local", 1, false);
}
BENCHMARK(BM_DnsHeadless100A);

void BM_DnsHeadless100SrvTcp(benchmark::State& state) {
  Ask(state, "big.bench.svc.clusterset.local", 33, true);
}
BENCHMARK(BM_DnsHeadless100SrvTcp);

void BM_DnsBuildHeadlessView(benchmark::State& state) {
  const std::vector<model::EndpointSlice> slices = {
      HeadlessSlice(bench::SmokeMode() ? 1 : static_cast<int>(state.range(0)))};
  const model::ServiceImport si = Import("big", "Headless");
  for (auto _ : state) {
    ServiceView view = BuildServiceView(si, slices, kLive, {});
    benchmark::DoNotOptimize(view.names.size());
  }
}
BENCHMARK(BM_DnsBuildHeadlessView)->Arg(100)->Arg(1000);

}  // namespace
}  // namespace slicewright::dns

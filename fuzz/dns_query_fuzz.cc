// libFuzzer target for the clusterset.local query decoder and the responder behind it (uncached,
// and through the Responder's cache, each over UDP and TCP): no input may crash them; a response,
// when there is one, decodes, echoes the query's id, and fits the size of its transport; a packet
// the plain scan accepts (the cache's lookup) decodes through libldns to the same query.
// Single-threaded. Built by fuzz/CMakeLists.txt; CI runs it on fuzz/corpus/dns_query (.ci/run).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "slicewright/model/well_known.h"

#include "dns/plain_query.h"
#include "dns/responder.h"
#include "dns/wire.h"

namespace {

const slicewright::dns::Zone& FuzzZone() {
  static const auto* zone = [] {
    auto* z = new slicewright::dns::Zone();  // NOLINT: lives for the process
    slicewright::model::ServiceImport web;
    web.metadata.namespace_ = "ns";
    web.metadata.name = "web";
    web.spec.type = "ClusterSetIP";
    web.spec.ips = {"10.96.0.10", "fd00::a"};
    web.spec.ports = {{"http", "TCP", std::nullopt, 80}};
    const auto live = [](std::string_view) { return true; };
    z->Put(std::make_shared<const slicewright::dns::ServiceView>(
        slicewright::dns::BuildServiceView(web, {}, live, {})));
    slicewright::model::ServiceImport db = web;
    db.metadata.name = "db";
    db.spec.type = "Headless";
    slicewright::model::EndpointSlice slice;
    slice.metadata.namespace_ = "ns";
    slice.metadata.labels[std::string(slicewright::model::kLabelMcsServiceName)] = "db";
    slice.metadata.labels[std::string(slicewright::model::kLabelMcsSourceCluster)] = "c1";
    for (int i = 0; i < 60; ++i) {
      slice.endpoints.emplace_back().addresses.push_back("10.1.0." + std::to_string(i + 1));
    }
    slicewright::model::EndpointPort port;
    port.name = "tcp";
    port.port = 42;
    slice.ports.push_back(port);
    z->Put(std::make_shared<const slicewright::dns::ServiceView>(slicewright::dns::BuildServiceView(
        db, std::vector<slicewright::model::EndpointSlice>{slice}, live, {})));
    return z;
  }();
  return *zone;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // The agent's path: the Responder and its cache of encoded answers (a hit rewrites the id,
  // flags and question name of a cached packet in place).
  static slicewright::dns::Responder responder(
      std::shared_ptr<const slicewright::dns::Zone>(&FuzzZone(),
                                                    [](const slicewright::dns::Zone*) {}),
      slicewright::dns::ResponderOptions{});
  const std::span<const std::uint8_t> packet(data, size);
  const slicewright::dns::Decoded decoded_query = slicewright::dns::DecodeQuery(packet);
  // The responder's cache trusts the plain scan: whatever it accepts, libldns decodes to the
  // same query.
  if (const std::optional<slicewright::dns::PlainQuery> plain =
          slicewright::dns::ScanPlainQuery(packet)) {
    const slicewright::dns::Query& query = decoded_query.query;
    if (decoded_query.outcome != slicewright::dns::DecodeOutcome::kQuery || query.id != plain->id ||
        query.rd != plain->rd || query.cd != plain->cd || query.type != plain->type ||
        query.klass != plain->klass || query.edns != plain->edns ||
        query.edns_udp_size != plain->edns_udp_size || query.edns_version != plain->edns_version) {
      std::abort();
    }
  }
  for (int round = 0; round < 4; ++round) {
    const bool tcp = round % 2 == 1;
    const std::vector<std::uint8_t> response =
        round < 2 ? slicewright::dns::Respond(FuzzZone(), packet, tcp,
                                              slicewright::dns::ResponderOptions{})
                  : responder.Respond(packet, tcp);
    if (response.empty()) continue;
    if (size < 2 || response.size() > (tcp ? 65535U : 1232U)) std::abort();
    slicewright::Result<slicewright::dns::DecodedResponse> decoded =
        slicewright::dns::DecodeResponse(response);
    if (!decoded.ok() || decoded->id != ((data[0] << 8) | data[1])) std::abort();
  }
  return 0;
}

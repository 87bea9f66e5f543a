// Tests the libldns adapter and the responder: queries decode, answers encode with AA, EDNS and
// TC as RFC 1035/6891/2181 ask, and hostile packets get FORMERR or nothing, never a crash.
#include "dns/wire.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "slicewright/model/well_known.h"

#include "dns/responder.h"

namespace slicewright::dns {
namespace {

constexpr std::uint16_t kA = 1;
constexpr std::uint16_t kSrv = 33;
constexpr std::uint16_t kTxt = 16;

std::vector<std::uint8_t> Header(std::uint16_t id, std::uint8_t flags, std::uint16_t qd,
                                 std::uint16_t an = 0, std::uint16_t ns = 0, std::uint16_t ar = 0) {
  return {static_cast<std::uint8_t>(id >> 8),
          static_cast<std::uint8_t>(id & 0xFF),
          flags,
          0,
          0,
          static_cast<std::uint8_t>(qd),
          0,
          static_cast<std::uint8_t>(an),
          0,
          static_cast<std::uint8_t>(ns),
          0,
          static_cast<std::uint8_t>(ar)};
}

class WireTest : public ::testing::Test {
 protected:
  void SetUp() override {
    model::ServiceImport web;
    web.metadata.namespace_ = "ns";
    web.metadata.name = "web";
    web.spec.type = "ClusterSetIP";
    web.spec.ips = {"10.96.0.10", "fd00::a"};
    web.spec.ports = {{"http", "TCP", std::nullopt, 80}};
    zone_.Put(std::make_shared<const ServiceView>(BuildServiceView(
        web, {}, [](std::string_view) { return true; }, options_.zone)));
    // A headless import of 100 endpoints: its A answer is larger than 512 bytes.
    model::ServiceImport big;
    big.metadata.namespace_ = "ns";
    big.metadata.name = "big";
    big.spec.type = "Headless";
    model::EndpointSlice slice;
    slice.metadata.namespace_ = "ns";
    slice.metadata.labels[std::string(model::kLabelMcsServiceName)] = "big";
    slice.metadata.labels[std::string(model::kLabelMcsSourceCluster)] = "cluster-a";
    slice.address_type = "IPv4";
    for (int i = 0; i < 100; ++i) {
      slice.endpoints.emplace_back().addresses.push_back("10.244.1." + std::to_string(i + 1));
    }
    model::EndpointPort port;
    port.name = "tcp";
    port.port = 42;
    slice.ports.push_back(port);
    zone_.Put(std::make_shared<const ServiceView>(BuildServiceView(
        big, std::vector<model::EndpointSlice>{slice}, [](std::string_view) { return true; },
        options_.zone)));
  }

  DecodedResponse Ask(const std::vector<std::uint8_t>& query, bool tcp = false) {
    const std::vector<std::uint8_t> response = Respond(zone_, query, tcp, options_);
    EXPECT_FALSE(response.empty());
    Result<DecodedResponse> decoded = DecodeResponse(response);
    EXPECT_TRUE(decoded.ok()) << decoded.status().ToString();
    return decoded.ok() ? *decoded : DecodedResponse{};
  }

  Zone zone_;
  ResponderOptions options_;
};

// A query decodes into its id, name (case kept), type, class and EDNS payload size.
TEST_F(WireTest, DecodesQuery) {
  const Decoded decoded = DecodeQuery(EncodeQuery(77, "Web.ns.svc.clusterset.local", kA, 4096));
  ASSERT_EQ(decoded.outcome, DecodeOutcome::kQuery);
  EXPECT_EQ(decoded.query.id, 77);
  EXPECT_EQ(decoded.query.name, "Web.ns.svc.clusterset.local");
  EXPECT_EQ(decoded.query.type, kA);
  EXPECT_EQ(decoded.query.klass, kClassIN);
  EXPECT_TRUE(decoded.query.rd);
  EXPECT_TRUE(decoded.query.edns);
  EXPECT_EQ(decoded.query.edns_udp_size, 4096);
  EXPECT_FALSE(DecodeQuery(EncodeQuery(1, "a.b", kA, 0)).query.edns);
}

// An answer is authoritative, echoes the id, keeps the asked case in the owner name and carries
// an OPT with our payload size when the query had one.
TEST_F(WireTest, EncodesAuthoritativeAnswerWithEdns) {
  const DecodedResponse r = Ask(EncodeQuery(9, "WEB.ns.svc.clusterset.local", kA, 4096));
  EXPECT_EQ(r.id, 9);
  EXPECT_TRUE(r.answer.authoritative);
  EXPECT_EQ(r.answer.rcode, Rcode::kNoError);
  EXPECT_TRUE(r.edns);
  EXPECT_EQ(r.edns_udp_size, 1232);
  ASSERT_EQ(r.answer.answer.size(), 1U);
  EXPECT_EQ(r.answer.answer[0].name, "WEB.ns.svc.clusterset.local");
  EXPECT_EQ(net::FormatIp(r.answer.answer[0].address), "10.96.0.10");
  EXPECT_EQ(r.answer.answer[0].ttl, 5U);
  const DecodedResponse plain = Ask(EncodeQuery(10, "web.ns.svc.clusterset.local", kA, 0));
  EXPECT_FALSE(plain.edns);
}

// SRV and TXT round-trip; NXDOMAIN and NODATA carry the SOA; REFUSED is not authoritative.
TEST_F(WireTest, EncodesEveryKind) {
  const DecodedResponse srv =
      Ask(EncodeQuery(1, "_http._tcp.web.ns.svc.clusterset.local", kSrv, 0));
  ASSERT_EQ(srv.answer.answer.size(), 1U);
  EXPECT_EQ(srv.answer.answer[0].srv.port, 80);
  EXPECT_EQ(srv.answer.answer[0].srv.target, "web.ns.svc.clusterset.local");
  EXPECT_EQ(srv.answer.additional.size(), 2U);  // the target's A and AAAA
  const DecodedResponse txt = Ask(EncodeQuery(2, "dns-version.clusterset.local", kTxt, 0));
  ASSERT_EQ(txt.answer.answer.size(), 1U);
  EXPECT_EQ(txt.answer.answer[0].text, "1.0.0");
  const DecodedResponse nx = Ask(EncodeQuery(3, "nope.ns.svc.clusterset.local", kA, 0));
  EXPECT_EQ(nx.answer.rcode, Rcode::kNxDomain);
  ASSERT_EQ(nx.answer.authority.size(), 1U);
  EXPECT_EQ(nx.answer.authority[0].type, RecordType::kSOA);
  EXPECT_EQ(nx.answer.authority[0].soa.minimum, 5U);
  const DecodedResponse refused = Ask(EncodeQuery(4, "example.com", kA, 0));
  EXPECT_EQ(refused.answer.rcode, Rcode::kRefused);
  EXPECT_FALSE(refused.answer.authoritative);
}

// A 100-endpoint answer does not fit 512 bytes: over UDP without EDNS it is truncated (TC, no
// records); with a 4096-byte EDNS payload it is capped at our 1232 and still truncated; over
// TCP it comes whole.
TEST_F(WireTest, TruncatesOverUdpAndAnswersWholeOverTcp) {
  const DecodedResponse udp = Ask(EncodeQuery(5, "big.ns.svc.clusterset.local", kA, 0));
  EXPECT_TRUE(udp.truncated);
  EXPECT_TRUE(udp.answer.answer.empty());
  const std::vector<std::uint8_t> edns =
      Respond(zone_, EncodeQuery(6, "big.ns.svc.clusterset.local", kA, 4096), false, options_);
  EXPECT_LE(edns.size(), 1232U);
  const DecodedResponse tcp = Ask(EncodeQuery(7, "big.ns.svc.clusterset.local", kA, 0), true);
  EXPECT_FALSE(tcp.truncated);
  EXPECT_EQ(tcp.answer.answer.size(), 100U);
  // An answer that fits without its additional section loses that section, not its records.
  options_.udp_payload = 1232;
  const DecodedResponse srv =
      Ask(EncodeQuery(8, "_tcp._tcp.big.ns.svc.clusterset.local", kSrv, 0), true);
  EXPECT_EQ(srv.answer.answer.size(), 100U);
  EXPECT_EQ(srv.answer.additional.size(), 100U);
}

// EDNS version 1 gets BADVERS (RFC 6891 §6.1.3).
TEST_F(WireTest, BadEdnsVersion) {
  std::vector<std::uint8_t> query = EncodeQuery(11, "web.ns.svc.clusterset.local", kA, 1232);
  // The OPT record ends the message: version, then the flags and rdata length (4 bytes).
  ASSERT_GT(query.size(), 8U);
  query[query.size() - 5] = 1;
  const DecodedResponse r = Ask(query);
  EXPECT_EQ(r.answer.rcode, Rcode::kBadVers);
}

// Hostile packets: FORMERR (with the id) or silence, never a crash; the responder still answers
// a good query after them.
TEST_F(WireTest, HostilePackets) {
  const auto rcode_of = [this](const std::vector<std::uint8_t>& packet) -> int {
    const std::vector<std::uint8_t> response = Respond(zone_, packet, false, options_);
    if (response.empty()) return -1;
    Result<DecodedResponse> decoded = DecodeResponse(response);
    if (!decoded.ok()) return -2;
    EXPECT_EQ(decoded->id, (packet[0] << 8) | packet[1]);
    return static_cast<int>(decoded->answer.rcode);
  };
  // Shorter than a header, and a response (QR set): dropped.
  EXPECT_EQ(rcode_of({0x12}), -1);
  EXPECT_EQ(Respond(zone_, std::vector<std::uint8_t>{}, false, options_).size(), 0U);
  std::vector<std::uint8_t> response = EncodeQuery(1, "web.ns.svc.clusterset.local", kA, 0);
  response[2] |= 0x80;
  EXPECT_EQ(rcode_of(response), -1);
  // No question, two questions, a truncated question: FORMERR.
  EXPECT_EQ(rcode_of(Header(0x1234, 0, 0)), 1);
  std::vector<std::uint8_t> two = EncodeQuery(2, "web.ns.svc.clusterset.local", kA, 0);
  two[5] = 2;
  EXPECT_EQ(rcode_of(two), 1);
  std::vector<std::uint8_t> cut = EncodeQuery(3, "web.ns.svc.clusterset.local", kA, 0);
  cut.resize(cut.size() - 3);
  EXPECT_EQ(rcode_of(cut), 1);
  // A name pointing at itself (a compression loop), and a label running past the end.
  std::vector<std::uint8_t> loop = Header(4, 0, 1);
  loop.insert(loop.end(), {0xC0, 0x0C, 0x00, 0x01, 0x00, 0x01});
  EXPECT_EQ(rcode_of(loop), 1);
  std::vector<std::uint8_t> overrun = Header(5, 0, 1);
  overrun.insert(overrun.end(), {0x3F, 'a', 'b'});
  EXPECT_EQ(rcode_of(overrun), 1);
  // Counts promising records that are not there.
  std::vector<std::uint8_t> counts = EncodeQuery(6, "web.ns.svc.clusterset.local", kA, 0);
  counts[7] = 5;
  EXPECT_EQ(rcode_of(counts), 1);
  // Oversize.
  std::vector<std::uint8_t> huge = EncodeQuery(7, "web.ns.svc.clusterset.local", kA, 0);
  huge.resize(kMaxQueryBytes + 1, 0);
  EXPECT_EQ(rcode_of(huge), 1);
  // Another opcode (NOTIFY): NOTIMP.
  std::vector<std::uint8_t> notify = EncodeQuery(8, "web.ns.svc.clusterset.local", kA, 0);
  notify[2] = static_cast<std::uint8_t>(4 << 3);
  EXPECT_EQ(rcode_of(notify), 4);
  // CHAOS class: REFUSED.
  std::vector<std::uint8_t> chaos = EncodeQuery(9, "version.bind", kTxt, 0);
  chaos[chaos.size() - 1] = 3;
  EXPECT_EQ(rcode_of(chaos), 5);
  const DecodedResponse good = Ask(EncodeQuery(10, "web.ns.svc.clusterset.local", kA, 0));
  EXPECT_EQ(good.answer.answer.size(), 1U);
}

// The responder's cache: a repeated question is answered from it with the asker's id, RD bit and
// case; a zone change (a new generation) is never answered from an older entry.
TEST_F(WireTest, CachedResponsesFollowTheZone) {
  auto zone = std::make_shared<Zone>();
  model::ServiceImport web;
  web.metadata.namespace_ = "ns";
  web.metadata.name = "web";
  web.spec.type = "ClusterSetIP";
  web.spec.ips = {"10.96.0.10"};
  const auto live = [](std::string_view) { return true; };
  zone->Put(std::make_shared<const ServiceView>(BuildServiceView(web, {}, live, {})));
  Responder responder(zone, ResponderOptions{});
  const auto ask = [&responder](std::uint16_t id, const std::string& name, bool rd) {
    std::vector<std::uint8_t> query = EncodeQuery(id, name, kA, 1232);
    if (!rd) query[2] &= 0xFE;
    const std::vector<std::uint8_t> response = responder.Respond(query, false);
    Result<DecodedResponse> decoded = DecodeResponse(response);
    EXPECT_TRUE(decoded.ok());
    EXPECT_EQ(response.size() > 2 && (response[2] & 0x01) != 0, rd);
    return decoded.ok() ? *decoded : DecodedResponse{};
  };
  ask(1, "web.ns.svc.clusterset.local", true);
  const DecodedResponse second = ask(2, "WEB.NS.svc.clusterset.local", false);
  EXPECT_EQ(responder.Stats().hits, 1U);
  EXPECT_EQ(second.id, 2);
  ASSERT_EQ(second.answer.answer.size(), 1U);
  EXPECT_EQ(second.answer.answer[0].name, "WEB.NS.svc.clusterset.local");
  EXPECT_EQ(net::FormatIp(second.answer.answer[0].address), "10.96.0.10");
  web.spec.ips = {"10.96.0.99"};
  zone->Put(std::make_shared<const ServiceView>(BuildServiceView(web, {}, live, {})));
  const DecodedResponse third = ask(4, "web.ns.svc.clusterset.local", true);
  ASSERT_EQ(third.answer.answer.size(), 1U);
  EXPECT_EQ(net::FormatIp(third.answer.answer[0].address), "10.96.0.99");
  zone->Remove("ns", "web");
  EXPECT_EQ(ask(5, "web.ns.svc.clusterset.local", true).answer.rcode, Rcode::kNxDomain);
  // Hostile input never reaches the cache.
  EXPECT_EQ(responder.Respond(std::vector<std::uint8_t>{1, 2, 3}, false).size(), 0U);
}

}  // namespace
}  // namespace slicewright::dns

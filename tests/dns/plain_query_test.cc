// Tests the plain-query scan the responder's cache looks up with: it reads the queries clients
// send (with and without EDNS), agrees with libldns's decoder on every field, and leaves every
// other shape (malformed, compressed, oversized, extra records, trailing bytes) to that decoder.
#include "dns/plain_query.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "dns/wire.h"

namespace slicewright::dns {
namespace {

constexpr std::uint16_t kA = 1;
constexpr std::uint16_t kSrv = 33;

// What the scan read, and whether libldns decoded the same packet to the same query.
void ExpectSameAsLdns(const std::vector<std::uint8_t>& packet, const PlainQuery& plain) {
  const Decoded decoded = DecodeQuery(packet);
  ASSERT_EQ(decoded.outcome, DecodeOutcome::kQuery);
  EXPECT_EQ(decoded.query.id, plain.id);
  EXPECT_EQ(decoded.query.rd, plain.rd);
  EXPECT_EQ(decoded.query.cd, plain.cd);
  EXPECT_EQ(decoded.query.type, plain.type);
  EXPECT_EQ(decoded.query.klass, plain.klass);
  EXPECT_EQ(decoded.query.edns, plain.edns);
  EXPECT_EQ(decoded.query.edns_udp_size, plain.edns_udp_size);
  EXPECT_EQ(decoded.query.edns_version, plain.edns_version);
}

// A query as dig and dnsperf send it (EDNS 1232) and one without EDNS: every field read, the name
// in wire form with its case, the same as libldns reads.
TEST(PlainQueryTest, ReadsQueriesWithAndWithoutEdns) {
  const std::vector<std::uint8_t> edns =
      EncodeQuery(0xBEEF, "Web.ns.svc.clusterset.local", kA, 1232);
  const std::optional<PlainQuery> with = ScanPlainQuery(edns);
  ASSERT_TRUE(with.has_value());
  EXPECT_EQ(with->id, 0xBEEF);
  EXPECT_TRUE(with->rd);
  EXPECT_FALSE(with->cd);
  EXPECT_EQ(with->type, kA);
  EXPECT_EQ(with->klass, 1);
  EXPECT_TRUE(with->edns);
  EXPECT_EQ(with->edns_udp_size, 1232);
  EXPECT_EQ(with->edns_version, 0);
  const std::string wire_name =
      "\x03Web\x02ns\x03svc\x0a"
      "clusterset\x05local";
  ASSERT_EQ(with->qname.size(), wire_name.size() + 1);
  EXPECT_EQ(std::string(with->qname.begin(), with->qname.end() - 1), wire_name);
  EXPECT_EQ(with->qname.back(), 0);
  ExpectSameAsLdns(edns, *with);

  std::vector<std::uint8_t> classic =
      EncodeQuery(7, "_http._tcp.web.ns.svc.clusterset.local", kSrv, 0);
  classic[3] |= 0x10;  // CD
  const std::optional<PlainQuery> without = ScanPlainQuery(classic);
  ASSERT_TRUE(without.has_value());
  EXPECT_FALSE(without->edns);
  EXPECT_TRUE(without->cd);
  EXPECT_EQ(without->type, kSrv);
  ExpectSameAsLdns(classic, *without);
}

// The longest name DNS allows (255 bytes in wire form) is plain; libldns agrees.
TEST(PlainQueryTest, LongestName) {
  std::string name;
  while (name.size() + 64 <= 253) name += std::string(63, 'a') + ".";
  name += std::string(253 - name.size(), 'b');  // 253 characters: 255 bytes in wire form
  const std::vector<std::uint8_t> query = EncodeQuery(1, name, kA, 0);
  ASSERT_FALSE(query.empty());
  const std::optional<PlainQuery> plain = ScanPlainQuery(query);
  ASSERT_TRUE(plain.has_value());
  EXPECT_EQ(plain->qname.size(), 255U);
  ExpectSameAsLdns(query, *plain);
}

// Every other shape is not plain, whatever libldns makes of it (FORMERR, NOTIMP, nothing, or a
// query the slow path answers).
TEST(PlainQueryTest, LeavesOtherShapesToTheDecoder) {
  const std::vector<std::uint8_t> good = EncodeQuery(9, "web.ns.svc.clusterset.local", kA, 1232);
  ASSERT_TRUE(ScanPlainQuery(good).has_value());
  const std::size_t name_end = 12 + 29;  // the question's name: 29 bytes in wire form
  struct Case {
    std::string_view name;
    std::vector<std::uint8_t> packet;
  };
  std::vector<Case> cases;
  cases.push_back({"empty", {}});
  cases.push_back({"shorter than a header", {0, 1, 0, 0, 0, 1}});
  cases.push_back({"header only", std::vector<std::uint8_t>(good.begin(), good.begin() + 12)});
  auto response = good;
  response[2] |= 0x80;
  cases.push_back({"a response (QR)", response});
  auto notify = good;
  notify[2] = static_cast<std::uint8_t>(4 << 3);
  cases.push_back({"opcode NOTIFY", notify});
  auto two_questions = good;
  two_questions[5] = 2;
  cases.push_back({"two questions", two_questions});
  auto answers = good;
  answers[7] = 1;
  cases.push_back({"an answer record", answers});
  auto authority = good;
  authority[9] = 1;
  cases.push_back({"an authority record", authority});
  auto two_additional = good;
  two_additional[11] = 2;
  cases.push_back({"two additional records", two_additional});
  auto pointer = good;
  pointer[12] = 0xC0;
  cases.push_back({"a compression pointer", pointer});
  auto long_label = good;
  long_label[12] = 64;
  cases.push_back({"a label over 63 bytes", long_label});
  auto cut_name = std::vector<std::uint8_t>(good.begin(), good.begin() + 20);
  cut_name[11] = 0;
  cases.push_back({"the name cut short", cut_name});
  auto cut_type = std::vector<std::uint8_t>(good.begin(), good.begin() + name_end + 2);
  cut_type[11] = 0;
  cases.push_back({"type and class cut short", cut_type});
  auto cut_opt = std::vector<std::uint8_t>(good.begin(), good.end() - 1);
  cases.push_back({"the OPT record cut short", cut_opt});
  // The last byte is the OPT record's RDLENGTH: 4, with no data after it.
  auto opt_rdata = std::vector<std::uint8_t>(good.begin(), good.end() - 1);
  opt_rdata.push_back(4);
  cases.push_back({"OPT data past the end", opt_rdata});
  auto not_opt = good;
  not_opt[name_end + 4 + 2] = 1;  // the additional record is an A, not an OPT
  cases.push_back({"an additional record that is not OPT", not_opt});
  auto opt_owner = good;
  opt_owner[name_end + 4] = 1;
  cases.push_back({"an OPT not owned by the root", opt_owner});
  auto trailing = EncodeQuery(9, "web.ns.svc.clusterset.local", kA, 0);
  trailing.push_back(0);
  cases.push_back({"a trailing byte", trailing});
  auto oversized = good;
  oversized.resize(kMaxQueryBytes + 1);
  cases.push_back({"over kMaxQueryBytes", oversized});
  std::vector<std::uint8_t> long_name = {0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0};
  for (int i = 0; i < 4; ++i) {  // 4 x 64 + 1 = 257 bytes
    long_name.push_back(63);
    long_name.insert(long_name.end(), 63, 'a');
  }
  long_name.insert(long_name.end(), {0, 0, 1, 0, 1});
  cases.push_back({"a name over 255 bytes", long_name});
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_FALSE(ScanPlainQuery(c.packet).has_value());
  }
}

}  // namespace
}  // namespace slicewright::dns

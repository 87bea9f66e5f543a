#include "controllers/podsim/ip_allocator.h"

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "controllers/podsim/networks.h"

// CIDR ranges, next-fit allocation, reservations after a restart, and per-network ranges.
namespace slicewright::controllers::podsim {
namespace {

net::IpAddress Ip(std::string_view text) { return net::ParseIpSloppy(text).value(); }
std::string Text(const std::optional<net::IpAddress>& address) {
  return address ? net::FormatIp(*address) : "none";
}

// Usable sizes leave out the network address (and the IPv4 broadcast); IPv6 is capped at 2^32.
TEST(IpRangeTest, ParsesAndSizes) {
  struct Case {
    std::string_view cidr;
    std::string_view shown;
    std::uint64_t size;
  };
  const Case cases[] = {
      {"10.244.0.0/16", "10.244.0.0/16", 65534},
      {"10.244.7.9/16", "10.244.0.0/16", 65534},  // host bits masked
      {"10.0.0.0/30", "10.0.0.0/30", 2},
      {"fd00:10:244::/64", "fd00:10:244::/64", std::uint64_t{1} << 32},
      {"fd00::/120", "fd00::/120", 255},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.cidr);
    const Result<IpRange> range = IpRange::Parse(c.cidr);
    ASSERT_TRUE(range.ok()) << range.status().ToString();
    EXPECT_EQ(range->ToString(), c.shown);
    EXPECT_EQ(range->size(), c.size);
  }
}

// Malformed or too small ranges are kInvalid with a message naming the CIDR.
TEST(IpRangeTest, RejectsBadCidrs) {
  struct Case {
    std::string_view cidr;
    std::string_view message;
  };
  const Case cases[] = {
      {"10.0.0.0", "CIDR \"10.0.0.0\": missing /prefix"},
      {"10.0.0/8", "CIDR \"10.0.0/8\": not an address/prefix"},
      {"10.0.0.0/33", "CIDR \"10.0.0.0/33\": not an address/prefix"},
      {"10.0.0.0/x", "CIDR \"10.0.0.0/x\": not an address/prefix"},
      {"10.0.0.0/31", "CIDR \"10.0.0.0/31\": too small to hold an address"},
      {"fd00::/127", "CIDR \"fd00::/127\": too small to hold an address"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.cidr);
    const Result<IpRange> range = IpRange::Parse(c.cidr);
    ASSERT_FALSE(range.ok());
    EXPECT_EQ(range.status().code(), StatusCode::kInvalid);
    EXPECT_EQ(range.status().message(), c.message);
  }
}

// At() and OffsetOf() are inverse over the usable addresses, with carries across bytes.
TEST(IpRangeTest, MapsOffsetsToAddresses) {
  const IpRange v4 = IpRange::Parse("10.244.0.0/16").value();
  EXPECT_EQ(net::FormatIp(v4.At(1)), "10.244.0.1");
  EXPECT_EQ(net::FormatIp(v4.At(256)), "10.244.1.0");
  EXPECT_EQ(net::FormatIp(v4.At(65534)), "10.244.255.254");
  EXPECT_EQ(v4.OffsetOf(Ip("10.244.1.0")), 256U);
  EXPECT_FALSE(v4.OffsetOf(Ip("10.244.0.0")));      // network
  EXPECT_FALSE(v4.OffsetOf(Ip("10.244.255.255")));  // broadcast
  EXPECT_FALSE(v4.OffsetOf(Ip("10.245.0.1")));
  EXPECT_FALSE(v4.OffsetOf(Ip("fd00::1")));
  const IpRange v6 = IpRange::Parse("fd00:10:244::/64").value();
  EXPECT_EQ(net::FormatIp(v6.At(0x1ff)), "fd00:10:244::1ff");
  EXPECT_EQ(v6.OffsetOf(Ip("fd00:10:244::1ff")), 0x1ffU);
  EXPECT_FALSE(v6.OffsetOf(Ip("fd00:10:244:0:1::")));  // past the 2^32 cap
  EXPECT_FALSE(v6.OffsetOf(Ip("fd00:10:245::1")));
}

// Addresses are handed out in order and a released one comes back only after the rest of the
// range was used (next-fit), so a deleted pod's address is not reused at once.
TEST(IpAllocatorTest, HandsOutNextFitAndReusesReleasedLast) {
  IpAllocator allocator(IpRange::Parse("10.0.0.0/29").value());  // .1 to .6
  EXPECT_EQ(Text(allocator.Allocate("a")), "10.0.0.1");
  EXPECT_EQ(Text(allocator.Allocate("b")), "10.0.0.2");
  allocator.Release("a");
  EXPECT_EQ(Text(allocator.Allocate("c")), "10.0.0.3");
  EXPECT_EQ(Text(allocator.Allocate("d")), "10.0.0.4");
  EXPECT_EQ(Text(allocator.Allocate("e")), "10.0.0.5");
  EXPECT_EQ(Text(allocator.Allocate("f")), "10.0.0.6");
  EXPECT_EQ(Text(allocator.Allocate("g")), "10.0.0.1");  // wrapped to the released one
  EXPECT_EQ(Text(allocator.Allocate("h")), "none");
  EXPECT_EQ(allocator.used(), 6U);
}

// Reserving records addresses held before a restart; another owner's address is refused.
TEST(IpAllocatorTest, ReservesAndRefusesTakenAddresses) {
  IpAllocator allocator(IpRange::Parse("10.0.0.0/29").value());
  ASSERT_TRUE(allocator.Reserve(Ip("10.0.0.1"), "a").ok());
  ASSERT_TRUE(allocator.Reserve(Ip("10.0.0.1"), "a").ok());  // idempotent
  const Status taken = allocator.Reserve(Ip("10.0.0.1"), "b");
  EXPECT_EQ(taken.code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(taken.message(), "10.0.0.1 is already held by a");
  const Status outside = allocator.Reserve(Ip("10.0.1.1"), "b");
  EXPECT_EQ(outside.code(), StatusCode::kInvalid);
  EXPECT_EQ(outside.message(), "10.0.1.1 is outside 10.0.0.0/29");
  EXPECT_EQ(Text(allocator.Allocate("b")), "10.0.0.2");
}

// A pool gives one address per family, the same ones again to the same owner, and nothing when
// a family is full.
TEST(AddressPoolTest, AllocatesPerFamilyAllOrNothing) {
  AddressPool pool(IpRange::Parse("10.0.0.0/29").value(), IpRange::Parse("fd00::/125").value());
  const auto first = pool.Allocate("a");
  ASSERT_TRUE(first);
  EXPECT_EQ(*first, (std::vector<std::string>{"10.0.0.1", "fd00::1"}));
  EXPECT_EQ(pool.Allocate("a"), first);
  EXPECT_TRUE(pool.Holds("a"));
  for (const char* owner : {"b", "c", "d", "e", "f"}) ASSERT_TRUE(pool.Allocate(owner)) << owner;
  // IPv4 is full (6), IPv6 has a seventh address: nothing is kept for "g".
  EXPECT_FALSE(pool.Allocate("g"));
  EXPECT_FALSE(pool.Holds("g"));
  EXPECT_EQ(pool.used(), 12U);
  pool.Release("c");
  EXPECT_EQ(pool.Allocate("g"), (std::vector<std::string>{"10.0.0.3", "fd00::7"}));
}

// Reserve keeps what it can and reports the first clash; addresses of other ranges are skipped.
TEST(AddressPoolTest, ReservesExistingAddresses) {
  AddressPool pool(IpRange::Parse("10.0.0.0/29").value(), std::nullopt);
  ASSERT_TRUE(pool.Reserve({"10.0.0.2", "fd00::5", "192.168.1.1"}, "a").ok());
  EXPECT_TRUE(pool.Holds("a"));
  const Status clash = pool.Reserve({"10.0.0.2"}, "b");
  EXPECT_EQ(clash.code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(pool.Allocate("b"), (std::vector<std::string>{"10.0.0.1"}));
  EXPECT_EQ(pool.Allocate("c"), (std::vector<std::string>{"10.0.0.3"}));
}

// Secondary network ranges are stable, in 10.100-199/16 and fd00:X::/64, and differ by name.
TEST(NetworksTest, DerivesRangesAndMacs) {
  const IpRange blue = SecondaryRangeV4("default/blue");
  EXPECT_EQ(blue.ToString(), SecondaryRangeV4("default/blue").ToString());
  const std::string text = blue.ToString();
  const int second_octet = std::stoi(text.substr(3, text.find('.', 3) - 3));
  EXPECT_GE(second_octet, 100);
  EXPECT_LT(second_octet, 200);
  EXPECT_EQ(text.substr(text.size() - 7), ".0.0/16");
  std::set<std::string> ranges;
  for (const char* name : {"default/blue", "default/red", "other/blue", "other/red"}) {
    ranges.insert(SecondaryRangeV6(name).ToString());
  }
  EXPECT_EQ(ranges.size(), 4U);
  EXPECT_EQ(SecondaryRangeV6("default/blue").ToString().substr(0, 5), "fd00:");
  EXPECT_EQ(MacFor({"fd00::1", "10.244.1.17"}), "0a:58:0a:f4:01:11");
  EXPECT_EQ(MacFor({"fd00::1"}), "0a:58:00:00:00:00");
}

}  // namespace
}  // namespace slicewright::controllers::podsim

#include "slicewright/net/ip.h"

#include <cstdlib>
#include <cstring>
#include <new>
#include <random>
#include <sstream>
#include <string>
#include <string_view>

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include "fakes/allocation_counter.h"

namespace slicewright::net {
namespace {

struct ParseCase {
  std::string_view name;
  std::string_view input;
  IpFamily family;
  std::string_view canonical;
};

// Accepted inputs parse to the right family and print in Go's canonical form.
TEST(IpTest, ParsesAndFormatsValidAddresses) {
  const ParseCase cases[] = {
      {"ipv4", "1.2.3.4", IpFamily::kIPv4, "1.2.3.4"},
      {"ipv4 leading zeros are decimal", "010.001.002.003", IpFamily::kIPv4, "10.1.2.3"},
      {"ipv4 many leading zeros", "0000000255.0.00.1", IpFamily::kIPv4, "255.0.0.1"},
      {"ipv4 zero", "0.0.0.0", IpFamily::kIPv4, "0.0.0.0"},
      {"ipv4 broadcast", "255.255.255.255", IpFamily::kIPv4, "255.255.255.255"},
      {"unspecified v6", "::", IpFamily::kIPv6, "::"},
      {"loopback v6", "::1", IpFamily::kIPv6, "::1"},
      {"trailing ellipsis", "1::", IpFamily::kIPv6, "1::"},
      {"longest run compressed", "1:0:0:1:0:0:0:1", IpFamily::kIPv6, "1:0:0:1::1"},
      {"leading zeros dropped", "1234::5678:0000:0000:9abc:def0", IpFamily::kIPv6,
       "1234::5678:0:0:9abc:def0"},
      {"first run wins a tie", "1:0:0:1:0:0:1:1", IpFamily::kIPv6, "1::1:0:0:1:1"},
      {"single zero group not compressed", "1:0:1:0:1:0:1:0", IpFamily::kIPv6, "1:0:1:0:1:0:1:0"},
      {"upper case lowered", "2001:DB8::ABCD", IpFamily::kIPv6, "2001:db8::abcd"},
      {"full form", "2001:0db8:0000:0000:0000:0000:0000:0001", IpFamily::kIPv6, "2001:db8::1"},
      {"ellipsis for one group at end", "1:2:3:4:5:6:7::", IpFamily::kIPv6, "1:2:3:4:5:6:7:0"},
      {"ellipsis for one group at start", "::2:3:4:5:6:7:8", IpFamily::kIPv6, "0:2:3:4:5:6:7:8"},
      {"ellipsis in the middle", "1:2:3::5:6:7:8", IpFamily::kIPv6, "1:2:3:0:5:6:7:8"},
      {"mapped dotted is ipv4", "::ffff:1.2.3.4", IpFamily::kIPv4, "1.2.3.4"},
      {"mapped hex is ipv4", "::ffff:0102:0304", IpFamily::kIPv4, "1.2.3.4"},
      {"mapped full form is ipv4", "0:0:0:0:0:FFFF:1.2.3.4", IpFamily::kIPv4, "1.2.3.4"},
      {"mapped tail sloppy", "::ffff:010.001.2.3", IpFamily::kIPv4, "10.1.2.3"},
      {"nat64 embedded ipv4", "64:ff9b::1.2.3.4", IpFamily::kIPv6, "64:ff9b::102:304"},
      {"compatible ipv4 stays v6", "::1.2.3.4", IpFamily::kIPv6, "::102:304"},
      {"ipv4 tail without ellipsis", "1:2:3:4:5:6:1.2.3.4", IpFamily::kIPv6, "1:2:3:4:5:6:102:304"},
      {"link local", "fe80::1", IpFamily::kIPv6, "fe80::1"},
      {"all groups", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", IpFamily::kIPv6,
       "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"},
  };
  for (const ParseCase& c : cases) {
    SCOPED_TRACE(c.name);
    std::optional<IpAddress> address = ParseIpSloppy(c.input);
    ASSERT_TRUE(address.has_value()) << c.input;
    EXPECT_EQ(address->family, c.family);
    EXPECT_EQ(FormatIp(*address), c.canonical);
    EXPECT_EQ(CanonicalIp(c.input), std::optional<std::string>(c.canonical));
  }
}

// The IPv4 bytes sit in [0, 4) with the rest zero, so parsed forms of one address compare equal.
TEST(IpTest, MappedAndPlainIPv4CompareEqual) {
  std::optional<IpAddress> plain = ParseIpSloppy("10.1.2.3");
  std::optional<IpAddress> mapped = ParseIpSloppy("::ffff:a01:203");
  std::optional<IpAddress> sloppy = ParseIpSloppy("010.01.2.003");
  ASSERT_TRUE(plain && mapped && sloppy);
  EXPECT_EQ(*plain, *mapped);
  EXPECT_EQ(*plain, *sloppy);
  EXPECT_EQ(plain->bytes[0], 10);
  EXPECT_EQ(plain->bytes[3], 3);
  for (std::size_t k = 4; k < 16; ++k) {
    EXPECT_EQ(plain->bytes[k], 0) << k;
  }
}

struct RejectCase {
  std::string_view name;
  std::string_view input;
};

// Everything Go's ParseIP refuses is refused, sloppy zeros aside.
TEST(IpTest, RejectsInvalidText) {
  const RejectCase cases[] = {
      {"empty", ""},
      {"space", " "},
      {"leading space", " 1.2.3.4"},
      {"trailing space", "1.2.3.4 "},
      {"three octets", "1.2.3"},
      {"five octets", "1.2.3.4.5"},
      {"octet too large", "256.1.1.1"},
      {"sloppy octet too large", "0256.1.1.1"},
      {"negative octet", "1.2.3.-4"},
      {"empty octet", "1..2.3"},
      {"trailing dot", "1.2.3.4."},
      {"letters", "a.b.c.d"},
      {"hex octet", "0x1.2.3.4"},
      {"cidr v4", "1.2.3.4/24"},
      {"port", "1.2.3.4:80"},
      {"no separators", "1234"},
      {"triple colon", ":::"},
      {"single colon", ":"},
      {"two groups", "1:2"},
      {"two ellipses", "1::2::3"},
      {"five hex digits", "12345::"},
      {"five digits with zeros", "00001::"},
      {"group too large is five digits", "fffff::"},
      {"nine groups", "1:2:3:4:5:6:7:8:9"},
      {"ellipsis plus eight groups", "::1:2:3:4:5:6:7:8"},
      {"eight groups plus ellipsis", "1:2:3:4:5:6:7:8::"},
      {"leading single colon", ":1::"},
      {"trailing single colon", "1::2:"},
      {"trailing colon after groups", "1:2:3:4:5:6:7:8:"},
      {"zone", "fe80::1%eth0"},
      {"empty zone", "fe80::1%"},
      {"percent only", "%"},
      {"cidr v6", "::1/128"},
      {"brackets", "[::1]"},
      {"bad hex", "::g"},
      {"short ipv4 tail", "::ffff:1.2.3"},
      {"ipv4 tail in wrong place", "1:2:3:4:5:1.2.3.4"},
      {"ipv4 tail without room", "1:2:3:4:5:6:7:1.2.3.4"},
      {"ipv4 tail not last", "::1.2.3.4:1"},
      {"ipv4 tail too large", "::ffff:1.2.3.256"},
      {"embedded nul", std::string_view("1.2.3.4\0", 8)},
  };
  for (const RejectCase& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_FALSE(ParseIpSloppy(c.input).has_value()) << c.input;
    EXPECT_FALSE(CanonicalIp(c.input).has_value()) << c.input;
  }
}

struct SpecialCase {
  std::string_view input;
  bool special;
};

// The ranges EndpointSlice validation refuses, judged with Go's net.IP predicates.
TEST(IpTest, ClassifiesSpecialAddresses) {
  const SpecialCase cases[] = {
      {"0.0.0.0", true},
      {"::", true},
      {"127.0.0.1", true},
      {"127.255.255.254", true},
      {"::1", true},
      {"169.254.0.1", true},
      {"169.254.255.255", true},
      {"fe80::1", true},
      {"febf::1", true},
      {"224.0.0.1", true},
      {"224.0.0.255", true},
      {"ff02::1", true},
      {"ff12::1", true},
      {"::ffff:127.0.0.1", true},
      {"::ffff:0.0.0.0", true},
      {"10.0.0.1", false},
      {"169.253.0.1", false},
      {"224.0.1.1", false},
      {"128.0.0.1", false},
      {"::2", false},
      {"fec0::1", false},
      {"ff05::1", false},
      {"2001:db8::1", false},
      {"::127.0.0.1", false},
  };
  for (const SpecialCase& c : cases) {
    SCOPED_TRACE(c.input);
    std::optional<IpAddress> address = ParseIpSloppy(c.input);
    ASSERT_TRUE(address.has_value());
    EXPECT_EQ(IsSpecialIp(*address), c.special);
  }
}

// A hand-built IPv6-family value holding a mapped address prints and classifies as IPv4, like Go.
TEST(IpTest, MappedIPv6ValueActsAsIPv4) {
  IpAddress address;
  address.family = IpFamily::kIPv6;
  address.bytes = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1};
  EXPECT_EQ(FormatIp(address), "127.0.0.1");
  EXPECT_TRUE(IsSpecialIp(address));
}

// Parsing and classifying allocate nothing: they run once per endpoint address.
TEST(IpTest, ParseAndClassifyDoNotAllocate) {
  const std::string_view inputs[] = {"10.1.2.3",    "010.001.002.003",     "::ffff:1.2.3.4",
                                     "2001:db8::1", "1:2:3:4:5:6:1.2.3.4", "not an ip"};
  int parsed = 0;
  int special = 0;
  const std::int64_t before = slicewright::fakes::AllocationCount();
  for (const std::string_view input : inputs) {
    if (std::optional<IpAddress> address = ParseIpSloppy(input)) {
      ++parsed;
      special += IsSpecialIp(*address) ? 1 : 0;
    }
  }
  const std::int64_t allocations = slicewright::fakes::AllocationCount() - before;
  EXPECT_EQ(allocations, 0);
  EXPECT_EQ(parsed, 5);
  EXPECT_EQ(special, 0);
  // The counter is live: a real allocation moves it.
  const std::int64_t live = slicewright::fakes::AllocationCount();
  const std::string heap(64, 'x');
  EXPECT_GT(slicewright::fakes::AllocationCount(), live) << heap;
}

// The EndpointSlice addressType strings.
TEST(IpTest, AddressTypeNames) {
  EXPECT_EQ(AddressTypeOf(IpFamily::kIPv4), "IPv4");
  EXPECT_EQ(AddressTypeOf(IpFamily::kIPv6), "IPv6");
}

// Streaming prints the canonical form.
TEST(IpTest, StreamsCanonicalText) {
  std::ostringstream os;
  os << *ParseIpSloppy("2001:0DB8::0001");
  EXPECT_EQ(os.str(), "2001:db8::1");
}

// True if an IPv4 octet in `text` has a leading zero: the one place we accept more than glibc.
bool HasSloppyOctet(std::string_view text) {
  if (text.find('.') == std::string_view::npos) {
    return false;
  }
  for (std::size_t k = 0; k + 1 < text.size(); ++k) {
    const bool at_start = k == 0 || text[k - 1] == '.' || text[k - 1] == ':';
    if (at_start && text[k] == '0' && text[k + 1] >= '0' && text[k + 1] <= '9') {
      return true;
    }
  }
  return false;
}

// Random text from the address alphabet never crashes the parser, agrees with glibc's inet_pton
// (RFC 4291 text forms) wherever sloppy zeros are absent, and round-trips through FormatIp.
TEST(IpTest, RandomInputsAgreeWithInetPton) {
  constexpr unsigned kSeed = 20240611;
  SCOPED_TRACE(testing::Message() << "seed " << kSeed);
  std::mt19937 rng(kSeed);
  const std::string_view alphabet = "0123456789abcdefABCDEF::::....%/ xg";
  int parsed = 0;
  for (int iteration = 0; iteration < 200000; ++iteration) {
    std::string text;
    const int length = static_cast<int>(rng() % 24);
    for (int k = 0; k < length; ++k) {
      // Mostly the address alphabet, sometimes any byte.
      text +=
          (rng() % 16 == 0) ? static_cast<char>(rng() % 256) : alphabet[rng() % alphabet.size()];
    }
    std::optional<IpAddress> address = ParseIpSloppy(text);
    if (text.find('\0') == std::string::npos && !HasSloppyOctet(text)) {
      unsigned char buffer[16];
      const std::size_t first = text.find_first_of(".:");
      const bool v6 = first != std::string::npos && text[first] == ':';
      const bool expected = inet_pton(v6 ? AF_INET6 : AF_INET, text.c_str(), buffer) == 1;
      ASSERT_EQ(address.has_value(), expected) << "input '" << text << "'";
    }
    if (address) {
      ++parsed;
      const std::string canonical = FormatIp(*address);
      std::optional<IpAddress> again = ParseIpSloppy(canonical);
      ASSERT_TRUE(again.has_value()) << text;
      EXPECT_EQ(*again, *address) << text;
      EXPECT_EQ(FormatIp(*again), canonical);
    }
  }
  EXPECT_GT(parsed, 100);  // the generator does reach valid addresses
}

// Canonical text of random 16-byte addresses matches glibc's inet_ntop (also RFC 5952) except for
// the IPv4 forms, which Go never prints for non-mapped IPv6.
TEST(IpTest, RandomAddressesFormatLikeInetNtop) {
  constexpr unsigned kSeed = 7;
  SCOPED_TRACE(testing::Message() << "seed " << kSeed);
  std::mt19937 rng(kSeed);
  for (int iteration = 0; iteration < 50000; ++iteration) {
    IpAddress address;
    address.family = IpFamily::kIPv6;
    for (std::size_t k = 0; k < 16; k += 2) {
      // Zero groups are common so the compression logic gets exercised.
      const unsigned group = rng() % 3 == 0 ? 0 : rng() % 0x10000;
      address.bytes[k] = static_cast<std::uint8_t>(group >> 8);
      address.bytes[k + 1] = static_cast<std::uint8_t>(group);
    }
    char expected[INET6_ADDRSTRLEN];
    ASSERT_NE(inet_ntop(AF_INET6, address.bytes.data(), expected, sizeof(expected)), nullptr);
    if (std::strchr(expected, '.') != nullptr) {
      continue;  // glibc prints ::a.b.c.d forms for some prefixes
    }
    EXPECT_EQ(FormatIp(address), expected);
  }
}

}  // namespace
}  // namespace slicewright::net

// IP addresses as Kubernetes handles them: Go's net.ParseIP rules plus the "sloppy" IPv4 leading
// zeros that k8s.io/utils/net.ParseIPSloppy accepts, and Go's canonical text form. Pure values and
// pure functions: thread-safe. Parsing allocates nothing (it runs per endpoint on the hot path).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>

namespace slicewright::net {

enum class IpFamily { kIPv4, kIPv6 };

struct IpAddress {
  IpFamily family = IpFamily::kIPv4;
  // IPv4 uses bytes [0, 4); IPv6 all 16.
  std::array<std::uint8_t, 16> bytes{};
  friend auto operator<=>(const IpAddress&, const IpAddress&) = default;
};

// Parses an IPv4 or IPv6 address. IPv4 octets may carry leading zeros, read as decimal ("010" is
// 10), as ParseIPSloppy does. An IPv4-mapped IPv6 address ("::ffff:1.2.3.4") is IPv4, as Go's
// To4() treats it. Zones ("%eth0"), CIDRs and surrounding spaces are rejected. nullopt if invalid.
// IPv6 groups take one to four hex digits (Go 1.18+ net.ParseIP). Bytes past the family's length
// are zero, so equal addresses compare equal.
std::optional<IpAddress> ParseIpSloppy(std::string_view text);

// The longest text FormatIp produces ("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff" is 39).
inline constexpr std::size_t kMaxIpTextLength = 39;

// Go's net.IP.String(): dotted quad for IPv4; RFC 5952 for IPv6 (lower case, the longest run of two
// or more zero groups compressed, the first run on ties). Like Go, an IPv6-family value holding an
// IPv4-mapped address prints as a dotted quad.
std::string FormatIp(const IpAddress& address);

// Parses sloppily and re-formats canonically: "1234::5678:0000:0000:9abc:def0" becomes
// "1234::5678:0:0:9abc:def0". nullopt if invalid.
std::optional<std::string> CanonicalIp(std::string_view text);

// "IPv4" / "IPv6": the EndpointSlice addressType of a family.
std::string_view AddressTypeOf(IpFamily family);

// Unspecified, loopback, link-local unicast or link-local multicast: addresses EndpointSlice
// validation rejects. Uses Go's net.IP predicates, so IPv6 link-local multicast is any ffX2::/16
// (ff02::, ff12::, ...) and an IPv4-mapped IPv6 value is judged as IPv4.
bool IsSpecialIp(const IpAddress& address);

// Prints FormatIp(address); lets test frameworks show addresses readably.
std::ostream& operator<<(std::ostream& os, const IpAddress& address);

}  // namespace slicewright::net

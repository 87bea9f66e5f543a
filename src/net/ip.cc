#include "slicewright/net/ip.h"

#include <ostream>

namespace slicewright::net {
namespace {

constexpr std::size_t kIPv6Length = 16;

int HexValue(char c) {
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  if (c >= 'a' && c <= 'f') {
    return c - 'a' + 10;
  }
  if (c >= 'A' && c <= 'F') {
    return c - 'A' + 10;
  }
  return -1;
}

// Parses exactly four dotted decimal octets filling all of `text` into out[0..4). Leading zeros are
// accepted and read as decimal: ParseIPSloppy strips them before handing the text to Go's parser.
bool ParseIPv4Into(std::string_view text, std::uint8_t* out) {
  std::size_t pos = 0;
  for (int octet = 0; octet < 4; ++octet) {
    if (octet > 0) {
      if (pos >= text.size() || text[pos] != '.') {
        return false;
      }
      ++pos;
    }
    const std::size_t start = pos;
    unsigned value = 0;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      value = value * 10 + static_cast<unsigned>(text[pos] - '0');
      if (value > 255) {  // also bounds the accumulator: no overflow on long digit runs
        return false;
      }
      ++pos;
    }
    if (pos == start) {
      return false;
    }
    out[octet] = static_cast<std::uint8_t>(value);
  }
  return pos == text.size();
}

// Go's parseIPv6 (net/netip): hex groups of one to four digits separated by ':', at most one "::"
// standing for one or more zero groups, and an optional dotted IPv4 tail in the last 32 bits.
bool ParseIPv6Into(std::string_view text, std::array<std::uint8_t, 16>& ip) {
  int ellipsis = -1;  // byte index where "::" sits, -1 if none
  std::size_t pos = 0;
  if (text.size() >= 2 && text[0] == ':' && text[1] == ':') {
    ellipsis = 0;
    pos = 2;
    if (pos == text.size()) {
      return true;  // "::" alone
    }
  }

  int i = 0;  // bytes filled
  while (i < static_cast<int>(kIPv6Length)) {
    std::size_t end = pos;
    while (end < text.size() && HexValue(text[end]) >= 0) {
      ++end;
    }
    // A dot after the digits means an IPv4 tail. Checked before the four-digit limit because the
    // sloppy pre-pass upstream strips leading zeros from the tail ("::ffff:00010.1.2.3").
    if (end < text.size() && text[end] == '.') {
      if (ellipsis < 0 && i != static_cast<int>(kIPv6Length) - 4) {
        return false;  // the tail must replace exactly the final two groups
      }
      if (i + 4 > static_cast<int>(kIPv6Length)) {
        return false;  // no room left for it
      }
      if (!ParseIPv4Into(text.substr(pos), &ip[static_cast<std::size_t>(i)])) {
        return false;
      }
      pos = text.size();
      i += 4;
      break;
    }
    const std::size_t digits = end - pos;
    if (digits == 0 || digits > 4) {
      return false;
    }
    unsigned group = 0;
    for (std::size_t k = pos; k < end; ++k) {
      group = (group << 4) | static_cast<unsigned>(HexValue(text[k]));
    }
    ip[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(group >> 8);
    ip[static_cast<std::size_t>(i) + 1] = static_cast<std::uint8_t>(group & 0xff);
    i += 2;
    pos = end;
    if (pos == text.size()) {
      break;
    }
    // Otherwise a colon and more must follow.
    if (text[pos] != ':' || pos + 1 == text.size()) {
      return false;
    }
    ++pos;
    if (text[pos] == ':') {
      if (ellipsis >= 0) {
        return false;  // a second "::"
      }
      ellipsis = i;
      ++pos;
      if (pos == text.size()) {
        break;  // "::" may end the address
      }
    }
  }
  if (pos != text.size()) {
    return false;  // more than eight groups
  }

  if (i < static_cast<int>(kIPv6Length)) {
    if (ellipsis < 0) {
      return false;  // too few groups and nothing to expand
    }
    // Slide the groups after "::" to the end and zero the gap.
    const auto filled = static_cast<std::size_t>(i);
    const auto start = static_cast<std::size_t>(ellipsis);
    const std::size_t gap = kIPv6Length - filled;
    for (std::size_t j = filled; j > start; --j) {
      ip[j - 1 + gap] = ip[j - 1];
    }
    for (std::size_t j = start; j < start + gap; ++j) {
      ip[j] = 0;
    }
  } else if (ellipsis >= 0) {
    return false;  // "::" must stand for at least one zero group
  }
  return true;
}

bool IsIPv4Mapped(const std::array<std::uint8_t, 16>& ip) {
  for (std::size_t k = 0; k < 10; ++k) {
    if (ip[k] != 0) {
      return false;
    }
  }
  return ip[10] == 0xff && ip[11] == 0xff;
}

// The four IPv4 bytes of `address` if it is IPv4 or IPv4-mapped IPv6 (Go's To4()), else nullptr.
const std::uint8_t* As4(const IpAddress& address) {
  if (address.family == IpFamily::kIPv4) {
    return address.bytes.data();
  }
  if (IsIPv4Mapped(address.bytes)) {
    return address.bytes.data() + 12;
  }
  return nullptr;
}

char* AppendDecimal(char* out, unsigned value) {
  if (value >= 100) {
    *out++ = static_cast<char>('0' + value / 100);
  }
  if (value >= 10) {
    *out++ = static_cast<char>('0' + (value / 10) % 10);
  }
  *out++ = static_cast<char>('0' + value % 10);
  return out;
}

char* AppendHexGroup(char* out, unsigned group) {
  constexpr std::string_view kDigits = "0123456789abcdef";
  bool started = false;
  for (int shift = 12; shift >= 0; shift -= 4) {
    const unsigned nibble = (group >> static_cast<unsigned>(shift)) & 0xf;
    if (nibble != 0 || started || shift == 0) {
      *out++ = kDigits[nibble];
      started = true;
    }
  }
  return out;
}

// Writes the canonical text into `out` (at least kMaxIpTextLength bytes) and returns its end.
char* FormatInto(const IpAddress& address, char* out) {
  if (const std::uint8_t* v4 = As4(address)) {
    for (int k = 0; k < 4; ++k) {
      if (k > 0) {
        *out++ = '.';
      }
      out = AppendDecimal(out, v4[k]);
    }
    return out;
  }
  std::array<unsigned, 8> groups{};
  for (std::size_t k = 0; k < 8; ++k) {
    groups[k] = (static_cast<unsigned>(address.bytes[2 * k]) << 8) | address.bytes[2 * k + 1];
  }
  // The longest run of two or more zero groups; a strictly longer run wins, so ties keep the first.
  int best_start = -1;
  int best_length = 1;
  for (int k = 0; k < 8;) {
    if (groups[k] != 0) {
      ++k;
      continue;
    }
    int end = k;
    while (end < 8 && groups[end] == 0) {
      ++end;
    }
    if (end - k > best_length) {
      best_start = k;
      best_length = end - k;
    }
    k = end;
  }
  for (int k = 0; k < 8; ++k) {
    if (k == best_start) {
      *out++ = ':';
      *out++ = ':';
      k += best_length - 1;
      continue;
    }
    if (k > 0 && k != best_start + best_length) {
      *out++ = ':';
    }
    out = AppendHexGroup(out, groups[k]);
  }
  return out;
}

}  // namespace

std::optional<IpAddress> ParseIpSloppy(std::string_view text) {
  // As in Go, the first '.' or ':' decides the family.
  for (const char c : text) {
    if (c == '.') {
      IpAddress address;
      if (!ParseIPv4Into(text, address.bytes.data())) {
        return std::nullopt;
      }
      return address;
    }
    if (c == ':') {
      std::array<std::uint8_t, 16> ip{};
      if (!ParseIPv6Into(text, ip)) {
        return std::nullopt;
      }
      IpAddress address;
      if (IsIPv4Mapped(ip)) {
        for (std::size_t k = 0; k < 4; ++k) {
          address.bytes[k] = ip[12 + k];
        }
        return address;
      }
      address.family = IpFamily::kIPv6;
      address.bytes = ip;
      return address;
    }
  }
  return std::nullopt;
}

std::string FormatIp(const IpAddress& address) {
  std::array<char, kMaxIpTextLength> buffer{};
  const char* end = FormatInto(address, buffer.data());
  return {buffer.data(), static_cast<std::size_t>(end - buffer.data())};
}

std::optional<std::string> CanonicalIp(std::string_view text) {
  std::optional<IpAddress> address = ParseIpSloppy(text);
  if (!address) {
    return std::nullopt;
  }
  return FormatIp(*address);
}

std::string_view AddressTypeOf(IpFamily family) {
  return family == IpFamily::kIPv4 ? "IPv4" : "IPv6";
}

bool IsSpecialIp(const IpAddress& address) {
  if (const std::uint8_t* v4 = As4(address)) {
    const bool unspecified = v4[0] == 0 && v4[1] == 0 && v4[2] == 0 && v4[3] == 0;
    const bool loopback = v4[0] == 127;
    const bool link_local_unicast = v4[0] == 169 && v4[1] == 254;
    const bool link_local_multicast = v4[0] == 224 && v4[1] == 0 && v4[2] == 0;
    return unspecified || loopback || link_local_unicast || link_local_multicast;
  }
  const std::array<std::uint8_t, 16>& ip = address.bytes;
  bool zero_prefix = true;  // bytes 0..14 all zero
  for (std::size_t k = 0; k < 15; ++k) {
    zero_prefix = zero_prefix && ip[k] == 0;
  }
  const bool unspecified = zero_prefix && ip[15] == 0;
  const bool loopback = zero_prefix && ip[15] == 1;
  const bool link_local_unicast = ip[0] == 0xfe && (ip[1] & 0xc0) == 0x80;
  const bool link_local_multicast = ip[0] == 0xff && (ip[1] & 0x0f) == 0x02;
  return unspecified || loopback || link_local_unicast || link_local_multicast;
}

std::ostream& operator<<(std::ostream& os, const IpAddress& address) {
  return os << FormatIp(address);
}

}  // namespace slicewright::net

#include "controllers/podsim/networks.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "slicewright/base/check.h"
#include "slicewright/net/ip.h"

namespace slicewright::controllers::podsim {
namespace {

std::uint32_t Fnv1a(std::string_view text) {
  std::uint32_t hash = 2166136261U;
  for (const char c : text) {
    hash ^= static_cast<std::uint8_t>(c);
    hash *= 16777619U;
  }
  return hash;
}

IpRange MustParse(const std::string& cidr) {
  Result<IpRange> range = IpRange::Parse(cidr);
  SW_CHECK(range.ok());  // built from constants and a hash above
  return *range;
}

}  // namespace

IpRange SecondaryRangeV4(std::string_view network) {
  return MustParse(fmt::format("10.{}.0.0/16", 100 + Fnv1a(network) % 100));
}

IpRange SecondaryRangeV6(std::string_view network) {
  return MustParse(fmt::format("fd00:{:x}::/64", (Fnv1a(network) >> 8) & 0xFFFFU));
}

std::string MacFor(const std::vector<std::string>& addresses) {
  for (const std::string& text : addresses) {
    const std::optional<net::IpAddress> address = net::ParseIpSloppy(text);
    if (address && address->family == net::IpFamily::kIPv4) {
      return fmt::format("0a:58:{:02x}:{:02x}:{:02x}:{:02x}", address->bytes[0], address->bytes[1],
                         address->bytes[2], address->bytes[3]);
    }
  }
  return "0a:58:00:00:00:00";
}

}  // namespace slicewright::controllers::podsim

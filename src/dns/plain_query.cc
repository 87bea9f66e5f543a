#include "dns/plain_query.h"

#include <cstddef>

#include "dns/wire.h"

namespace slicewright::dns {
namespace {

constexpr std::size_t kMaxNameBytes = 255;  // RFC 1035 §3.1, the root's byte included
constexpr std::size_t kMaxLabelBytes = 63;
constexpr std::uint16_t kTypeOpt = 41;

std::uint16_t Read16(std::span<const std::uint8_t> packet, std::size_t at) {
  return static_cast<std::uint16_t>((packet[at] << 8) | packet[at + 1]);
}

// The wire length of the uncompressed name at `at` (labels and the root byte), or 0 when there is
// none: a pointer, a label over 63 bytes, a name over 255 bytes, or the packet ends first.
std::size_t NameLength(std::span<const std::uint8_t> packet, std::size_t at) {
  std::size_t i = at;
  while (i < packet.size() && i - at < kMaxNameBytes) {
    const std::uint8_t length = packet[i];
    if (length == 0) return i + 1 - at;
    if (length > kMaxLabelBytes) return 0;  // a pointer (0xC0) or a reserved label type
    i += 1 + length;
  }
  return 0;
}

}  // namespace

std::optional<PlainQuery> ScanPlainQuery(std::span<const std::uint8_t> packet) {
  if (packet.size() < kHeaderBytes || packet.size() > kMaxQueryBytes) return std::nullopt;
  const std::uint8_t flags = packet[2];
  const bool response = (flags & 0x80U) != 0;
  const unsigned opcode = (flags >> 3) & 0xFU;
  const std::uint16_t additional = Read16(packet, 10);
  if (response || opcode != 0 || Read16(packet, 4) != 1 || Read16(packet, 6) != 0 ||
      Read16(packet, 8) != 0 || additional > 1) {
    return std::nullopt;
  }
  PlainQuery query;
  query.id = Read16(packet, 0);
  query.rd = (flags & 0x01U) != 0;
  query.cd = (packet[3] & 0x10U) != 0;
  const std::size_t name_length = NameLength(packet, kHeaderBytes);
  std::size_t at = kHeaderBytes + name_length;
  if (name_length == 0 || at + 4 > packet.size()) return std::nullopt;
  query.qname = packet.subspan(kHeaderBytes, name_length);
  query.type = Read16(packet, at);
  query.klass = Read16(packet, at + 2);
  at += 4;
  if (additional == 1) {
    // OPT (RFC 6891 §6.1.2): root owner, TYPE 41, CLASS = UDP payload size, TTL = extended
    // rcode, version and flags, then RDLENGTH bytes of options.
    constexpr std::size_t kOptFixed = 1 + 2 + 2 + 4 + 2;
    if (at + kOptFixed > packet.size() || packet[at] != 0 || Read16(packet, at + 1) != kTypeOpt) {
      return std::nullopt;
    }
    query.edns = true;
    query.edns_udp_size = Read16(packet, at + 3);
    query.edns_version = packet[at + 6];
    at += kOptFixed + Read16(packet, at + 9);
  }
  if (at != packet.size()) return std::nullopt;  // trailing bytes, or an OPT cut short
  return query;
}

}  // namespace slicewright::dns

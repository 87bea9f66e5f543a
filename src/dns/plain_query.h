// The common shape of a DNS query read straight from the wire, without libldns: a header, one
// question with an uncompressed name, and at most an OPT record. The responder looks its cache up
// with it, so a repeated question costs no allocation; anything of another shape (and every
// malformed packet) is left to DecodeQuery() (wire.h), which decides FORMERR, NOTIMP or nothing.
// Pure and reentrant.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

namespace slicewright::dns {

// A query of the plain shape. Whenever ScanPlainQuery() returns one, DecodeQuery() of the same
// packet is a kQuery with the same id, flags, type, class and EDNS fields (the fuzz target
// checks it), and `qname` is its question's name in wire form.
struct PlainQuery {
  std::uint16_t id = 0;
  bool rd = false;
  bool cd = false;
  // The question's name as sent: length-prefixed labels ending with the root's zero byte (a view
  // into the packet, valid while it is).
  std::span<const std::uint8_t> qname;
  std::uint16_t type = 0;
  std::uint16_t klass = 0;
  bool edns = false;
  std::uint16_t edns_udp_size = 0;
  std::uint8_t edns_version = 0;
};

// `packet` as a PlainQuery when it is exactly: a 12-byte header with QR clear and opcode QUERY,
// one question and no answer or authority records; a name of labels of 1 to 63 bytes, at most
// 255 bytes in all, with no compression pointer; the question's type and class; then either
// nothing or one OPT record owned by the root whose data ends the packet. Otherwise nullopt.
std::optional<PlainQuery> ScanPlainQuery(std::span<const std::uint8_t> packet);

}  // namespace slicewright::dns

// One DNS message in, one out: decodes a query (wire.h), answers it from the Zone (zone.h) and
// encodes the response for UDP (truncated to the client's size) or TCP. Thread-safe: the zone is,
// and the rest is pure.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "dns/zone.h"

namespace slicewright::dns {

struct ResponderOptions {
  ZoneOptions zone;
  // The EDNS(0) UDP payload we advertise and accept at most (RFC 6891 §6.2.5; 1232 is the DNS
  // flag day 2020 value that avoids IP fragmentation).
  std::uint16_t udp_payload = 1232;
};

// The response to `packet`; empty means send nothing (not a query, or too short to answer).
// Over TCP the response is complete (up to 65535 bytes); over UDP it fits MaxUdpResponse().
std::vector<std::uint8_t> Respond(const Zone& zone, std::span<const std::uint8_t> packet, bool tcp,
                                  const ResponderOptions& options);

}  // namespace slicewright::dns

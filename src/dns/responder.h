// One DNS message in, one out: decodes a query (wire.h), answers it from the Zone (zone.h) and
// encodes the response for UDP (truncated to the client's size) or TCP. Thread-safe: the zone is,
// and the rest is pure or under the cache's lock.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "slicewright/base/mutex.h"

#include "dns/zone.h"

namespace slicewright::dns {

struct ResponderOptions {
  ZoneOptions zone;
  // The EDNS(0) UDP payload we advertise and accept at most (RFC 6891 §6.2.5; 1232 is the DNS
  // flag day 2020 value that avoids IP fragmentation).
  std::uint16_t udp_payload = 1232;
  // Encoded responses kept for reuse (0: none); the cache is emptied when full.
  std::size_t cache_entries = 8192;
};

// The response to `packet`; empty means send nothing (not a query, or too short to answer).
// Over TCP the response is complete (up to 65535 bytes); over UDP it fits MaxUdpResponse().
std::vector<std::uint8_t> Respond(const Zone& zone, std::span<const std::uint8_t> packet, bool tcp,
                                  const ResponderOptions& options);

// The response to `packet` while there is no zone to answer from yet (the caches it is built from
// have not synced): SERVFAIL to a query, so that a resolver asks another server at once rather
// than waiting out a timeout, or trusting a wrong NXDOMAIN; FORMERR, NOTIMP or nothing as
// Respond() for the rest.
std::vector<std::uint8_t> RespondNotReady(std::span<const std::uint8_t> packet);

// Respond() with a cache of encoded responses: libldns builds each packet record by record, a few
// microseconds a record, while most queries repeat. An entry is keyed by the question (its wire
// name in lower case, type, class), EDNS presence and the size limit, and is valid while the
// zone's generation is the one it was built at (any change of the zone empties it in effect).
// A query of the plain shape (plain_query.h) is looked up without libldns and without allocating;
// a hit copies the bytes and writes the query's id, RD and CD bits and question name (its case)
// in. Every other packet takes Respond()'s path.
class Responder final {
 public:
  Responder(std::shared_ptr<const Zone> zone, ResponderOptions options);
  // The response to `packet` in `response` (its capacity reused; left empty: send nothing).
  void Respond(std::span<const std::uint8_t> packet, bool tcp, std::vector<std::uint8_t>& response);
  std::vector<std::uint8_t> Respond(std::span<const std::uint8_t> packet, bool tcp);

  struct CacheStats {
    std::uint64_t hits = 0;
    std::uint64_t misses = 0;
  };
  CacheStats Stats() const;

 private:
  struct Entry {
    std::uint64_t generation = 0;
    std::vector<std::uint8_t> response;
  };

  // Looks keys up by string_view, so a lookup builds no std::string.
  struct KeyHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view key) const {
      return std::hash<std::string_view>{}(key);
    }
  };

  const std::shared_ptr<const Zone> zone_;
  const ResponderOptions options_;
  mutable Mutex mu_;
  std::unordered_map<std::string, Entry, KeyHash, std::equal_to<>> cache_ SW_GUARDED_BY(mu_);
  CacheStats stats_ SW_GUARDED_BY(mu_);
};

}  // namespace slicewright::dns

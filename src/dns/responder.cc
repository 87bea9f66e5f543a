#include "dns/responder.h"

#include <algorithm>
#include <array>
#include <optional>
#include <string_view>
#include <utility>

#include "dns/plain_query.h"
#include "dns/wire.h"

namespace slicewright::dns {
namespace {

constexpr std::size_t kMaxTcpMessage = 65535;

// The answer to a packet that is not a query we answer: nothing (dropped), FORMERR or NOTIMP.
std::vector<std::uint8_t> RefusalOf(const Decoded& decoded) {
  switch (decoded.outcome) {
    case DecodeOutcome::kFormErr:
      return EncodeError(decoded.query, Rcode::kFormErr);
    case DecodeOutcome::kNotImp:
      return EncodeError(decoded.query, Rcode::kNotImp);
    case DecodeOutcome::kDrop:
    case DecodeOutcome::kQuery:
      break;
  }
  return {};
}

std::size_t MaxSize(bool edns, std::uint16_t edns_udp_size, bool tcp,
                    const ResponderOptions& options) {
  return tcp ? kMaxTcpMessage : MaxUdpResponse(edns, edns_udp_size, options.udp_payload);
}

Answer AnswerFor(const Zone& zone, const Query& query, const ResponderOptions& options) {
  Answer answer;
  if (query.klass == kClassIN || query.klass == kClassANY) {
    answer = Resolve(zone, query.name, query.type, options.zone);
  } else {
    answer.rcode = Rcode::kRefused;  // CHAOS and the other classes are not ours
  }
  return answer;
}

// The cache key of a plain query (its wire name in lower case, type, class, the size limit and
// EDNS presence), written into `buffer`: a lookup allocates nothing.
using KeyBuffer = std::array<char, 256 + 7>;
std::string_view CacheKey(const PlainQuery& query, std::size_t max_size, KeyBuffer& buffer) {
  std::size_t size = 0;
  for (const std::uint8_t byte : query.qname) {  // at most 255 bytes (ScanPlainQuery)
    buffer[size++] = static_cast<char>(byte >= 'A' && byte <= 'Z' ? byte - 'A' + 'a' : byte);
  }
  for (const unsigned value :
       {static_cast<unsigned>(query.type), static_cast<unsigned>(query.klass),
        static_cast<unsigned>(max_size)}) {
    buffer[size++] = static_cast<char>(value >> 8);
    buffer[size++] = static_cast<char>(value & 0xFFU);
  }
  buffer[size++] = query.edns ? 'e' : '-';
  return {buffer.data(), size};
}

// Makes a cached response the answer to `query`: its id, RD and CD bits, and the question's name
// as the asker wrote it (the same name but for case: the key says so).
void AddressTo(const PlainQuery& query, std::vector<std::uint8_t>& response) {
  response[0] = static_cast<std::uint8_t>(query.id >> 8);
  response[1] = static_cast<std::uint8_t>(query.id & 0xFFU);
  response[2] = static_cast<std::uint8_t>((response[2] & ~0x01U) | (query.rd ? 0x01U : 0U));
  response[3] = static_cast<std::uint8_t>((response[3] & ~0x10U) | (query.cd ? 0x10U : 0U));
  std::copy(query.qname.begin(), query.qname.end(), response.begin() + kHeaderBytes);
}

}  // namespace

std::vector<std::uint8_t> Respond(const Zone& zone, std::span<const std::uint8_t> packet, bool tcp,
                                  const ResponderOptions& options) {
  const Decoded decoded = DecodeQuery(packet);
  if (decoded.outcome != DecodeOutcome::kQuery) return RefusalOf(decoded);
  const Query& query = decoded.query;
  std::vector<std::uint8_t> response =
      EncodeResponse(query, AnswerFor(zone, query, options),
                     MaxSize(query.edns, query.edns_udp_size, tcp, options), options.udp_payload);
  if (response.empty()) return EncodeError(query, Rcode::kServFail);
  return response;
}

std::vector<std::uint8_t> RespondNotReady(std::span<const std::uint8_t> packet) {
  const Decoded decoded = DecodeQuery(packet);
  if (decoded.outcome != DecodeOutcome::kQuery) return RefusalOf(decoded);
  return EncodeError(decoded.query, Rcode::kServFail);
}

Responder::Responder(std::shared_ptr<const Zone> zone, ResponderOptions options)
    : zone_(std::move(zone)), options_(options) {}

std::vector<std::uint8_t> Responder::Respond(std::span<const std::uint8_t> packet, bool tcp) {
  std::vector<std::uint8_t> response;
  Respond(packet, tcp, response);
  return response;
}

void Responder::Respond(std::span<const std::uint8_t> packet, bool tcp,
                        std::vector<std::uint8_t>& response) {
  response.clear();
  std::optional<PlainQuery> plain;
  if (options_.cache_entries != 0) plain = ScanPlainQuery(packet);
  if (!plain.has_value() || (plain->edns && plain->edns_version != 0)) {
    response = dns::Respond(*zone_, packet, tcp, options_);
    return;
  }
  const std::size_t max_size = MaxSize(plain->edns, plain->edns_udp_size, tcp, options_);
  KeyBuffer buffer;
  const std::string_view key = CacheKey(*plain, max_size, buffer);
  const std::uint64_t generation = zone_->generation();
  {
    MutexLock lock(mu_);
    auto it = cache_.find(key);
    if (it != cache_.end() && it->second.generation == generation) {
      ++stats_.hits;
      response.assign(it->second.response.begin(), it->second.response.end());
    } else {
      ++stats_.misses;
    }
  }
  if (!response.empty()) {
    AddressTo(*plain, response);
    return;
  }
  // A miss: libldns decodes (and has the last word on the packet) and encodes.
  const Decoded decoded = DecodeQuery(packet);
  if (decoded.outcome != DecodeOutcome::kQuery) {
    response = RefusalOf(decoded);
    return;
  }
  const Query& query = decoded.query;
  response =
      EncodeResponse(query, AnswerFor(*zone_, query, options_), max_size, options_.udp_payload);
  if (response.empty()) {
    response = EncodeError(query, Rcode::kServFail);
    return;
  }
  // Stored only when its question is the client's name verbatim, so a hit can rewrite it.
  const std::span<const std::uint8_t> qname = plain->qname;
  if (response.size() >= kHeaderBytes + qname.size() &&
      std::equal(qname.begin(), qname.end(), response.begin() + kHeaderBytes)) {
    MutexLock lock(mu_);
    if (cache_.size() >= options_.cache_entries) cache_.clear();
    cache_.insert_or_assign(std::string(key), Entry{generation, response});
  }
}

Responder::CacheStats Responder::Stats() const {
  MutexLock lock(mu_);
  return stats_;
}

}  // namespace slicewright::dns

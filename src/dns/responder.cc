#include "dns/responder.h"

#include <algorithm>
#include <utility>

#include "dns/wire.h"

namespace slicewright::dns {
namespace {

constexpr std::size_t kHeaderBytes = 12;
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

std::size_t MaxSize(const Query& query, bool tcp, const ResponderOptions& options) {
  return tcp ? kMaxTcpMessage : MaxUdpResponse(query, options.udp_payload);
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

// The wire length of the uncompressed name at `at` (its labels and the root byte); 0 when it is
// not one (a pointer, or past the end).
std::size_t NameLength(std::span<const std::uint8_t> packet, std::size_t at) {
  std::size_t i = at;
  while (i < packet.size()) {
    const std::uint8_t length = packet[i];
    if (length == 0) return i + 1 - at;
    if ((length & 0xC0U) != 0) return 0;
    i += 1 + length;
  }
  return 0;
}

std::string CacheKey(const Query& query, std::size_t max_size) {
  std::string key = query.name;
  for (char& c : key) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  key.push_back('\0');
  for (const unsigned value :
       {static_cast<unsigned>(query.type), static_cast<unsigned>(query.klass),
        static_cast<unsigned>(max_size)}) {
    key.push_back(static_cast<char>(value >> 8));
    key.push_back(static_cast<char>(value & 0xFFU));
  }
  key.push_back(query.edns ? 'e' : '-');
  return key;
}

}  // namespace

std::vector<std::uint8_t> Respond(const Zone& zone, std::span<const std::uint8_t> packet, bool tcp,
                                  const ResponderOptions& options) {
  const Decoded decoded = DecodeQuery(packet);
  if (decoded.outcome != DecodeOutcome::kQuery) return RefusalOf(decoded);
  const Query& query = decoded.query;
  std::vector<std::uint8_t> response = EncodeResponse(
      query, AnswerFor(zone, query, options), MaxSize(query, tcp, options), options.udp_payload);
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
  const Decoded decoded = DecodeQuery(packet);
  if (decoded.outcome != DecodeOutcome::kQuery || options_.cache_entries == 0 ||
      (decoded.query.edns && decoded.query.edns_version != 0)) {
    return dns::Respond(*zone_, packet, tcp, options_);
  }
  const Query& query = decoded.query;
  // The question's name as the client wrote it (a query's first name is never compressed).
  const std::size_t name_length = NameLength(packet, kHeaderBytes);
  const std::size_t max_size = MaxSize(query, tcp, options_);
  const std::string key = CacheKey(query, max_size);
  const std::uint64_t generation = zone_->generation();
  std::vector<std::uint8_t> response;
  {
    MutexLock lock(mu_);
    auto it = cache_.find(key);
    if (it != cache_.end() && it->second.generation == generation && name_length != 0 &&
        it->second.response.size() >= kHeaderBytes + name_length) {
      ++stats_.hits;
      response = it->second.response;
    } else {
      ++stats_.misses;
    }
  }
  if (!response.empty()) {
    response[0] = packet[0];
    response[1] = packet[1];
    response[2] = static_cast<std::uint8_t>((response[2] & ~0x01U) | (packet[2] & 0x01U));
    response[3] = static_cast<std::uint8_t>((response[3] & ~0x10U) | (packet[3] & 0x10U));
    std::copy_n(packet.begin() + kHeaderBytes, name_length, response.begin() + kHeaderBytes);
    return response;
  }
  response =
      EncodeResponse(query, AnswerFor(*zone_, query, options_), max_size, options_.udp_payload);
  if (response.empty()) return EncodeError(query, Rcode::kServFail);
  // Stored only when its question is the client's name verbatim, so a hit can rewrite it.
  if (name_length != 0 && response.size() >= kHeaderBytes + name_length &&
      std::equal(packet.begin() + kHeaderBytes,
                 packet.begin() + static_cast<std::ptrdiff_t>(kHeaderBytes + name_length),
                 response.begin() + kHeaderBytes)) {
    MutexLock lock(mu_);
    if (cache_.size() >= options_.cache_entries) cache_.clear();
    cache_[key] = Entry{generation, response};
  }
  return response;
}

Responder::CacheStats Responder::Stats() const {
  MutexLock lock(mu_);
  return stats_;
}

}  // namespace slicewright::dns

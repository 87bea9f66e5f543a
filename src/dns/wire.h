// The DNS wire format of the clusterset.local responder (RFC 1035, EDNS(0) RFC 6891), through
// libldns: the one adapter that includes it. Decodes a query defensively (anything malformed is
// FORMERR or dropped, never a crash) and encodes an Answer to fit a size, setting TC when it does
// not. Pure functions, reentrant.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "slicewright/base/result.h"

#include "dns/zone.h"

namespace slicewright::dns {

// A DNS message's fixed header (RFC 1035 §4.1.1): id, flags and the four section counts.
inline constexpr std::size_t kHeaderBytes = 12;
// Queries larger than this are FORMERR: a question and an OPT record need a few hundred bytes.
inline constexpr std::size_t kMaxQueryBytes = 4096;
// The UDP payload a client may assume without EDNS (RFC 1035 §4.2.1).
inline constexpr std::size_t kClassicUdpPayload = 512;

struct Query {
  std::uint16_t id = 0;
  std::uint8_t opcode = 0;
  bool rd = false;
  bool cd = false;
  // The question's name in presentation form without the trailing dot ("hello.ns.svc.clusterset
  // .local"), as asked (its case kept); "" for the root.
  std::string name;
  std::uint16_t type = 0;
  std::uint16_t klass = 0;
  bool edns = false;  // an OPT record came with it
  std::uint16_t edns_udp_size = 0;
  std::uint8_t edns_version = 0;
};

enum class DecodeOutcome {
  kQuery,    // `query` holds a well-formed standard query of one question
  kFormErr,  // answer FORMERR (id and opcode in `query`, no question)
  kNotImp,   // an opcode other than QUERY: answer NOTIMP
  kDrop,     // no answer at all: shorter than a header, or a response (QR set)
};

struct Decoded {
  DecodeOutcome outcome = DecodeOutcome::kDrop;
  Query query;
};

// Decodes `packet` (one UDP datagram or one TCP message without its length prefix).
Decoded DecodeQuery(std::span<const std::uint8_t> packet);

// Encodes the response to `query` with `answer`'s content: QR and AA as the answer says, RD and CD
// copied, the question echoed when it has one, an OPT record advertising `udp_payload` when the
// query had one (BADVERS for an EDNS version other than 0). When the message would exceed
// `max_size`, the additional section is left out first, then the answer and authority sections
// with TC set (RFC 2181 §9: the client asks again over TCP). An empty vector only when libldns
// fails to allocate.
std::vector<std::uint8_t> EncodeResponse(const Query& query, const Answer& answer,
                                         std::size_t max_size, std::uint16_t udp_payload);

// The largest response a UDP client accepts, from its query's EDNS fields (whether it had an OPT
// record, and the size it asked): that size (at least 512, at most `udp_payload`), or 512 without
// EDNS.
std::size_t MaxUdpResponse(bool edns, std::uint16_t edns_udp_size, std::uint16_t udp_payload);

// A response with only a header (and the question, when there is one) and `rcode`: FORMERR,
// NOTIMP, SERVFAIL.
std::vector<std::uint8_t> EncodeError(const Query& query, Rcode rcode);

// For tests and tools: a query of one question, with an OPT record of `edns_udp_size` when it is
// not zero. Empty when the name is not a valid domain name.
std::vector<std::uint8_t> EncodeQuery(std::uint16_t id, const std::string& name, std::uint16_t type,
                                      std::uint16_t edns_udp_size);

// For tests and tools: a response decoded into the Answer it carries (names without the trailing
// dot), the TC bit and the EDNS payload size (0 without OPT). kDataLoss when it does not decode.
struct DecodedResponse {
  std::uint16_t id = 0;
  bool truncated = false;
  std::uint16_t edns_udp_size = 0;
  bool edns = false;
  Answer answer;
};
Result<DecodedResponse> DecodeResponse(std::span<const std::uint8_t> packet);

}  // namespace slicewright::dns

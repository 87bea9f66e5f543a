#include "dns/responder.h"

#include "dns/wire.h"

namespace slicewright::dns {

std::vector<std::uint8_t> Respond(const Zone& zone, std::span<const std::uint8_t> packet, bool tcp,
                                  const ResponderOptions& options) {
  const Decoded decoded = DecodeQuery(packet);
  switch (decoded.outcome) {
    case DecodeOutcome::kDrop:
      return {};
    case DecodeOutcome::kFormErr:
      return EncodeError(decoded.query, Rcode::kFormErr);
    case DecodeOutcome::kNotImp:
      return EncodeError(decoded.query, Rcode::kNotImp);
    case DecodeOutcome::kQuery:
      break;
  }
  const Query& query = decoded.query;
  Answer answer;
  if (query.klass == kClassIN || query.klass == kClassANY) {
    answer = Resolve(zone, query.name, query.type, options.zone);
  } else {
    answer.rcode = Rcode::kRefused;  // CHAOS and the other classes are not ours
  }
  constexpr std::size_t kMaxTcpMessage = 65535;
  const std::size_t max_size = tcp ? kMaxTcpMessage : MaxUdpResponse(query, options.udp_payload);
  std::vector<std::uint8_t> response = EncodeResponse(query, answer, max_size, options.udp_payload);
  if (response.empty()) return EncodeError(query, Rcode::kServFail);
  return response;
}

}  // namespace slicewright::dns

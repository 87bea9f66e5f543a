// The only file that includes libldns (scripts/check-layers.sh enforces it). libldns is C: every
// object it allocates is held by a unique_ptr with its free function, so no path leaks one.
#include "dns/wire.h"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string_view>

#include <ldns/ldns.h>

namespace slicewright::dns {
namespace {

struct PktFree {
  void operator()(ldns_pkt* p) const { ldns_pkt_free(p); }
};
struct RrFree {
  void operator()(ldns_rr* r) const { ldns_rr_free(r); }
};
struct RdfFree {
  void operator()(ldns_rdf* r) const { ldns_rdf_deep_free(r); }
};
struct CFree {
  void operator()(void* p) const { std::free(p); }  // NOLINT(cppcoreguidelines-no-malloc)
};
using PktPtr = std::unique_ptr<ldns_pkt, PktFree>;
using RrPtr = std::unique_ptr<ldns_rr, RrFree>;
using RdfPtr = std::unique_ptr<ldns_rdf, RdfFree>;

std::uint16_t Read16(std::span<const std::uint8_t> packet, std::size_t at) {
  return static_cast<std::uint16_t>((packet[at] << 8) | packet[at + 1]);
}

// A name in presentation form without the trailing dot; "" for the root.
std::string NameOf(const ldns_rdf* rdf) {
  std::unique_ptr<char, CFree> text(ldns_rdf2str(rdf));
  if (text == nullptr) return {};
  std::string name(text.get());
  if (!name.empty() && name.back() == '.') name.pop_back();
  return name;
}

RdfPtr Dname(const std::string& name) {
  return RdfPtr(ldns_dname_new_frm_str((name + ".").c_str()));
}

// `record` as an ldns_rr; its owner is `owner` when given (the question's name, so the answer
// keeps the case the client asked with). Null when something does not convert.
RrPtr ToLdns(const Record& record, const ldns_rdf* owner) {
  RrPtr rr(ldns_rr_new());
  if (rr == nullptr) return nullptr;
  RdfPtr owner_rdf(owner != nullptr ? ldns_rdf_clone(owner) : Dname(record.name).release());
  if (owner_rdf == nullptr) return nullptr;
  ldns_rr_set_owner(rr.get(), owner_rdf.release());
  ldns_rr_set_type(rr.get(), static_cast<ldns_rr_type>(record.type));
  ldns_rr_set_class(rr.get(), LDNS_RR_CLASS_IN);
  ldns_rr_set_ttl(rr.get(), record.ttl);
  std::vector<RdfPtr> fields;
  switch (record.type) {
    case RecordType::kA:
      fields.emplace_back(ldns_rdf_new_frm_data(LDNS_RDF_TYPE_A, 4, record.address.bytes.data()));
      break;
    case RecordType::kAAAA:
      fields.emplace_back(
          ldns_rdf_new_frm_data(LDNS_RDF_TYPE_AAAA, 16, record.address.bytes.data()));
      break;
    case RecordType::kSRV:
      fields.emplace_back(ldns_native2rdf_int16(LDNS_RDF_TYPE_INT16, record.srv.priority));
      fields.emplace_back(ldns_native2rdf_int16(LDNS_RDF_TYPE_INT16, record.srv.weight));
      fields.emplace_back(ldns_native2rdf_int16(LDNS_RDF_TYPE_INT16, record.srv.port));
      fields.push_back(Dname(record.srv.target));
      break;
    case RecordType::kTXT:
      fields.emplace_back(ldns_rdf_new_frm_str(LDNS_RDF_TYPE_STR, record.text.c_str()));
      break;
    case RecordType::kSOA:
      fields.push_back(Dname(record.soa.mname));
      fields.push_back(Dname(record.soa.rname));
      fields.emplace_back(ldns_native2rdf_int32(LDNS_RDF_TYPE_INT32, record.soa.serial));
      fields.emplace_back(ldns_native2rdf_int32(LDNS_RDF_TYPE_PERIOD, record.soa.refresh));
      fields.emplace_back(ldns_native2rdf_int32(LDNS_RDF_TYPE_PERIOD, record.soa.retry));
      fields.emplace_back(ldns_native2rdf_int32(LDNS_RDF_TYPE_PERIOD, record.soa.expire));
      fields.emplace_back(ldns_native2rdf_int32(LDNS_RDF_TYPE_PERIOD, record.soa.minimum));
      break;
    default:
      return nullptr;
  }
  for (RdfPtr& field : fields) {
    if (field == nullptr || !ldns_rr_push_rdf(rr.get(), field.get())) return nullptr;
    static_cast<void>(field.release());  // owned by the rr now
  }
  return rr;
}

bool Push(ldns_pkt* pkt, ldns_pkt_section section, const std::vector<Record>& records,
          const ldns_rdf* owner) {
  for (const Record& record : records) {
    RrPtr rr = ToLdns(record, owner);
    if (rr == nullptr) return false;
    if (!ldns_pkt_push_rr(pkt, section, rr.get())) return false;
    static_cast<void>(rr.release());
  }
  return true;
}

// The response header and question of `query`, with `rcode` (extended rcodes through OPT).
PktPtr Header(const Query& query, Rcode rcode, bool authoritative, std::uint16_t udp_payload) {
  PktPtr pkt(ldns_pkt_new());
  if (pkt == nullptr) return nullptr;
  ldns_pkt_set_id(pkt.get(), query.id);
  ldns_pkt_set_qr(pkt.get(), true);
  ldns_pkt_set_opcode(pkt.get(), static_cast<ldns_pkt_opcode>(query.opcode));
  ldns_pkt_set_aa(pkt.get(), authoritative);
  ldns_pkt_set_rd(pkt.get(), query.rd);
  ldns_pkt_set_cd(pkt.get(), query.cd);
  const auto code = static_cast<std::uint16_t>(rcode);
  ldns_pkt_set_rcode(pkt.get(), static_cast<std::uint8_t>(code & 0xF));
  if (query.edns) {
    ldns_pkt_set_edns_udp_size(pkt.get(), udp_payload);
    ldns_pkt_set_edns_version(pkt.get(), 0);
    ldns_pkt_set_edns_extended_rcode(pkt.get(), static_cast<std::uint8_t>(code >> 4));
  }
  return pkt;
}

bool PushQuestion(ldns_pkt* pkt, const Query& query, RdfPtr* owner) {
  if (query.klass == 0 && query.type == 0) return true;  // no question (FORMERR)
  *owner = Dname(query.name);
  if (*owner == nullptr) return false;
  RrPtr question(ldns_rr_new());
  if (question == nullptr) return false;
  ldns_rr_set_owner(question.get(), ldns_rdf_clone(owner->get()));
  ldns_rr_set_question(question.get(), true);
  ldns_rr_set_type(question.get(), static_cast<ldns_rr_type>(query.type));
  ldns_rr_set_class(question.get(), static_cast<ldns_rr_class>(query.klass));
  if (!ldns_pkt_push_rr(pkt, LDNS_SECTION_QUESTION, question.get())) return false;
  static_cast<void>(question.release());
  return true;
}

std::vector<std::uint8_t> ToWire(const ldns_pkt* pkt) {
  std::uint8_t* data = nullptr;
  std::size_t size = 0;
  if (ldns_pkt2wire(&data, pkt, &size) != LDNS_STATUS_OK || data == nullptr) {
    std::free(data);  // NOLINT(cppcoreguidelines-no-malloc)
    return {};
  }
  std::unique_ptr<std::uint8_t, CFree> owned(data);
  return std::vector<std::uint8_t>(data, data + size);
}

// The response with the sections chosen; empty on an allocation failure.
std::vector<std::uint8_t> Build(const Query& query, const Answer& answer, bool with_records,
                                bool with_additional, std::uint16_t udp_payload) {
  PktPtr pkt = Header(query, answer.rcode, answer.authoritative, udp_payload);
  if (pkt == nullptr) return {};
  RdfPtr owner;
  if (!PushQuestion(pkt.get(), query, &owner)) return {};
  if (with_records) {
    if (!Push(pkt.get(), LDNS_SECTION_ANSWER, answer.answer, owner.get()) ||
        !Push(pkt.get(), LDNS_SECTION_AUTHORITY, answer.authority, nullptr)) {
      return {};
    }
    if (with_additional && !Push(pkt.get(), LDNS_SECTION_ADDITIONAL, answer.additional, nullptr)) {
      return {};
    }
  } else {
    ldns_pkt_set_tc(pkt.get(), true);
  }
  return ToWire(pkt.get());
}

// A lower bound of the wire size of `records` (every owner and target compressed to a pointer):
// when even that does not fit, encoding the records at all is wasted work.
std::size_t MinBytes(const std::vector<Record>& records) {
  constexpr std::size_t kFixed = 2 + 10;  // a pointer, type, class, TTL, rdata length
  std::size_t total = 0;
  for (const Record& record : records) {
    switch (record.type) {
      case RecordType::kA:
        total += kFixed + 4;
        break;
      case RecordType::kAAAA:
        total += kFixed + 16;
        break;
      case RecordType::kSRV:
        total += kFixed + 6 + 2;
        break;
      case RecordType::kTXT:
        total += kFixed + 1 + record.text.size();
        break;
      default:
        total += kFixed;
        break;
    }
  }
  return total;
}

}  // namespace

Decoded DecodeQuery(std::span<const std::uint8_t> packet) {
  Decoded decoded;
  if (packet.size() < kHeaderBytes) return decoded;  // not even a header: nobody to answer
  Query& query = decoded.query;
  query.id = Read16(packet, 0);
  const std::uint8_t flags = packet[2];
  if ((flags & 0x80U) != 0) return decoded;  // a response: answering could start a loop
  query.opcode = static_cast<std::uint8_t>((flags >> 3) & 0xFU);
  query.rd = (flags & 0x01U) != 0;
  query.cd = (packet[3] & 0x10U) != 0;
  if (query.opcode != 0) {
    decoded.outcome = DecodeOutcome::kNotImp;
    return decoded;
  }
  decoded.outcome = DecodeOutcome::kFormErr;
  if (packet.size() > kMaxQueryBytes || Read16(packet, 4) != 1) return decoded;
  ldns_pkt* raw = nullptr;
  if (ldns_wire2pkt(&raw, packet.data(), packet.size()) != LDNS_STATUS_OK || raw == nullptr) {
    if (raw != nullptr) ldns_pkt_free(raw);
    return decoded;
  }
  PktPtr pkt(raw);
  const ldns_rr_list* questions = ldns_pkt_question(pkt.get());
  if (questions == nullptr || ldns_rr_list_rr_count(questions) != 1) return decoded;
  const ldns_rr* question = ldns_rr_list_rr(questions, 0);
  const ldns_rdf* owner = ldns_rr_owner(question);
  if (owner == nullptr) return decoded;
  query.name = NameOf(owner);
  query.type = static_cast<std::uint16_t>(ldns_rr_get_type(question));
  query.klass = static_cast<std::uint16_t>(ldns_rr_get_class(question));
  query.edns = pkt->_edns_present != 0 || ldns_pkt_edns(pkt.get());
  query.edns_udp_size = ldns_pkt_edns_udp_size(pkt.get());
  query.edns_version = ldns_pkt_edns_version(pkt.get());
  decoded.outcome = DecodeOutcome::kQuery;
  return decoded;
}

std::size_t MaxUdpResponse(bool edns, std::uint16_t edns_udp_size, std::uint16_t udp_payload) {
  if (!edns) return kClassicUdpPayload;
  const std::size_t asked = std::max<std::size_t>(edns_udp_size, kClassicUdpPayload);
  return std::min<std::size_t>(asked, std::max<std::size_t>(udp_payload, kClassicUdpPayload));
}

std::vector<std::uint8_t> EncodeResponse(const Query& query, const Answer& answer,
                                         std::size_t max_size, std::uint16_t udp_payload) {
  if (query.edns && query.edns_version != 0) {
    Answer badvers;
    badvers.rcode = Rcode::kBadVers;
    return Build(query, badvers, true, true, udp_payload);
  }
  if (kHeaderBytes + MinBytes(answer.answer) + MinBytes(answer.authority) > max_size) {
    return Build(query, answer, false, false, udp_payload);  // cannot fit: TC at once
  }
  std::vector<std::uint8_t> wire = Build(query, answer, true, true, udp_payload);
  if (wire.size() <= max_size) return wire;
  // The additional section is optional (RFC 2181 §9): drop it before truncating.
  if (!answer.additional.empty()) {
    wire = Build(query, answer, true, false, udp_payload);
    if (wire.size() <= max_size) return wire;
  }
  return Build(query, answer, false, false, udp_payload);
}

std::vector<std::uint8_t> EncodeError(const Query& query, Rcode rcode) {
  Answer error;
  error.rcode = rcode;
  return Build(query, error, true, true, static_cast<std::uint16_t>(kClassicUdpPayload));
}

std::vector<std::uint8_t> EncodeQuery(std::uint16_t id, const std::string& name, std::uint16_t type,
                                      std::uint16_t edns_udp_size) {
  RdfPtr owner = Dname(name);
  if (owner == nullptr) return {};
  PktPtr pkt(ldns_pkt_query_new(owner.release(), static_cast<ldns_rr_type>(type), LDNS_RR_CLASS_IN,
                                LDNS_RD));
  if (pkt == nullptr) return {};
  ldns_pkt_set_id(pkt.get(), id);
  if (edns_udp_size != 0) ldns_pkt_set_edns_udp_size(pkt.get(), edns_udp_size);
  return ToWire(pkt.get());
}

Result<DecodedResponse> DecodeResponse(std::span<const std::uint8_t> packet) {
  ldns_pkt* raw = nullptr;
  if (ldns_wire2pkt(&raw, packet.data(), packet.size()) != LDNS_STATUS_OK || raw == nullptr) {
    if (raw != nullptr) ldns_pkt_free(raw);
    return Status(StatusCode::kDataLoss, "not a DNS message");
  }
  PktPtr pkt(raw);
  DecodedResponse out;
  out.id = ldns_pkt_id(pkt.get());
  out.truncated = ldns_pkt_tc(pkt.get());
  out.edns = pkt->_edns_present != 0 || ldns_pkt_edns(pkt.get());
  out.edns_udp_size = out.edns ? ldns_pkt_edns_udp_size(pkt.get()) : 0;
  out.answer.authoritative = ldns_pkt_aa(pkt.get());
  out.answer.rcode = static_cast<Rcode>(ldns_pkt_get_rcode(pkt.get()) |
                                        (ldns_pkt_edns_extended_rcode(pkt.get()) << 4));
  const auto section = [](const ldns_rr_list* list, std::vector<Record>& into) -> Status {
    for (std::size_t i = 0; list != nullptr && i < ldns_rr_list_rr_count(list); ++i) {
      const ldns_rr* rr = ldns_rr_list_rr(list, i);
      Record record;
      record.name = NameOf(ldns_rr_owner(rr));
      record.type = static_cast<RecordType>(ldns_rr_get_type(rr));
      record.ttl = ldns_rr_ttl(rr);
      const auto field = [rr](std::size_t n) { return ldns_rr_rdf(rr, n); };
      switch (record.type) {
        case RecordType::kA:
        case RecordType::kAAAA: {
          const std::size_t size = record.type == RecordType::kA ? 4 : 16;
          if (field(0) == nullptr || ldns_rdf_size(field(0)) != size) {
            return Status(StatusCode::kDataLoss, "bad address record");
          }
          record.address.family =
              record.type == RecordType::kA ? net::IpFamily::kIPv4 : net::IpFamily::kIPv6;
          std::memcpy(record.address.bytes.data(), ldns_rdf_data(field(0)), size);
          break;
        }
        case RecordType::kSRV:
          if (ldns_rr_rd_count(rr) != 4) return Status(StatusCode::kDataLoss, "bad SRV");
          record.srv.priority = ldns_rdf2native_int16(field(0));
          record.srv.weight = ldns_rdf2native_int16(field(1));
          record.srv.port = ldns_rdf2native_int16(field(2));
          record.srv.target = NameOf(field(3));
          break;
        case RecordType::kTXT: {
          std::string text = NameOf(field(0));
          if (text.size() >= 2 && text.front() == '"' && text.back() == '"') {
            text = text.substr(1, text.size() - 2);
          }
          record.text = std::move(text);
          break;
        }
        case RecordType::kSOA:
          if (ldns_rr_rd_count(rr) != 7) return Status(StatusCode::kDataLoss, "bad SOA");
          record.soa.mname = NameOf(field(0));
          record.soa.rname = NameOf(field(1));
          record.soa.minimum = ldns_rdf2native_int32(field(6));
          break;
        default:
          break;
      }
      into.push_back(std::move(record));
    }
    return Status();
  };
  SW_RETURN_IF_ERROR(section(ldns_pkt_answer(pkt.get()), out.answer.answer));
  SW_RETURN_IF_ERROR(section(ldns_pkt_authority(pkt.get()), out.answer.authority));
  SW_RETURN_IF_ERROR(section(ldns_pkt_additional(pkt.get()), out.answer.additional));
  return out;
}

}  // namespace slicewright::dns

// coordination.k8s.io/v1 Lease: a simdjson walk for decoding (with the codec's shared readers and
// list and watch frames, json_readers.h) and plain string building for encoding, so this file
// needs no nlohmann.

#include "slicewright/codec/coordination.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <simdjson.h>

#include "slicewright/base/status.h"
#include "slicewright/model/time.h"

#include "codec/internal.h"
#include "codec/json_readers.h"

namespace slicewright::codec {
namespace {

using internal::ForEachField;
using internal::ReadOptInt;
using internal::ReadOptString;
using internal::ReadTime;
using internal::ReadTypeMeta;
using internal::SyntaxErrorOffset;
using simdjson::dom::element;

constexpr std::string_view kApiVersion = "coordination.k8s.io/v1";
constexpr std::string_view kKind = "Lease";

Status ReadLeaseSpec(element value, model::LeaseSpec& out) {
  return ForEachField(value, [&out](std::string_view key, element v) {
    if (key == "holderIdentity") return ReadOptString(v, out.holder_identity);
    if (key == "leaseDurationSeconds") return ReadOptInt(v, out.lease_duration_seconds);
    if (key == "acquireTime") return ReadTime(v, out.acquire_time);
    if (key == "renewTime") return ReadTime(v, out.renew_time);
    if (key == "leaseTransitions") return ReadOptInt(v, out.lease_transitions);
    return Status();  // preferredHolder, strategy
  });
}

// Type meta must agree when present: the client decodes what it asked for.
Status CheckTypeMeta(element root) {
  std::string_view api_version;
  std::string_view kind;
  SW_RETURN_IF_ERROR(ReadTypeMeta(root, api_version, kind));
  if ((!api_version.empty() && api_version != kApiVersion) || (!kind.empty() && kind != kKind)) {
    return BadRequestError("expected " + std::string(kApiVersion) + " " + std::string(kKind) +
                           ", got " + std::string(api_version) + " " + std::string(kind));
  }
  return Status();
}

// "leases/NAMESPACE/NAME" for error messages, from whatever metadata is readable.
std::string ObjectName(element root) {
  std::string_view name;
  std::string_view namespace_;
  element metadata;
  if (root.at_key("metadata").get(metadata) == simdjson::SUCCESS && metadata.is_object()) {
    element value;
    if (metadata.at_key("name").get(value) == simdjson::SUCCESS) {
      if (value.get_string().get(name) != simdjson::SUCCESS) name = {};
    }
    if (metadata.at_key("namespace").get(value) == simdjson::SUCCESS) {
      if (value.get_string().get(namespace_) != simdjson::SUCCESS) namespace_ = {};
    }
  }
  std::string out = "leases/";
  if (!namespace_.empty()) {
    out += namespace_;
    out += '/';
  }
  out += name;
  return out;
}

void AppendOptInt(std::string& out, std::string_view key, const std::optional<std::int32_t>& v) {
  if (!v.has_value()) return;
  out += ",\"";
  out += key;
  out += "\":";
  out += std::to_string(*v);
}

void AppendOptTime(std::string& out, std::string_view key, const std::optional<model::Time>& v) {
  if (!v.has_value()) return;
  out += ",\"";
  out += key;
  out += "\":";
  internal::AppendJsonString(out, model::FormatRfc3339Micro(*v));
}

// One Lease object (the top level, a list item or a watch event's object); errors name it,
// after `document` ("list", "watch event") when there is one.
Status DecodeLeaseElement(element root, std::string_view document, model::Lease& out) {
  Status status = CheckTypeMeta(root);
  if (status.ok()) {
    status = ForEachField(root, [&out](std::string_view key, element v) {
      if (key == "metadata") return internal::DecodeObjectMetaValue(v, out.metadata);
      if (key == "spec") return ReadLeaseSpec(v, out.spec);
      return Status();
    });
  }
  if (!status.ok()) status.WithObject(internal::Compose(document, ObjectName(root)));
  return status;
}

}  // namespace

Result<model::Lease> DecodeLease(std::string_view json) {
  model::Lease out;
  SW_RETURN_IF_ERROR(internal::WithParsed(
      json, {},
      [&out](element root) -> Status {
        if (!root.is_object()) return BadRequestError("expected a JSON object at the top level");
        return DecodeLeaseElement(root, {}, out);
      },
      SyntaxErrorOffset::kOmit));
  return out;
}

Result<ListPage<model::Lease>> DecodeLeaseList(std::string_view json) {
  return internal::DecodeListPage<model::Lease>(json, kKind, DecodeLeaseElement,
                                                SyntaxErrorOffset::kOmit);
}

Result<WatchEvent<model::Lease>> DecodeLeaseWatchEvent(std::string_view line) {
  return internal::DecodeWatchEventLine<model::Lease>(line, DecodeLeaseElement,
                                                      SyntaxErrorOffset::kOmit);
}

std::string EncodeLease(const model::Lease& lease) {
  std::string out = R"({"apiVersion":")";
  out += kApiVersion;
  out += R"(","kind":")";
  out += kKind;
  out += R"(","metadata":)";
  out += internal::EncodeObjectMeta(lease.metadata);
  // Keys in the Go struct's order.
  const model::LeaseSpec& spec = lease.spec;
  std::string fields;
  if (spec.holder_identity.has_value()) {
    fields += R"(,"holderIdentity":)";
    internal::AppendJsonString(fields, *spec.holder_identity);
  }
  AppendOptInt(fields, "leaseDurationSeconds", spec.lease_duration_seconds);
  AppendOptTime(fields, "acquireTime", spec.acquire_time);
  AppendOptTime(fields, "renewTime", spec.renew_time);
  AppendOptInt(fields, "leaseTransitions", spec.lease_transitions);
  out += R"(,"spec":{)";
  if (!fields.empty()) out.append(fields, 1);  // without the leading comma
  out += "}}";
  return out;
}

}  // namespace slicewright::codec

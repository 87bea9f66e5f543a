// coordination.k8s.io/v1 Lease: a simdjson walk for decoding (metadata through json.cc's walker)
// and plain string building for encoding, so this file needs neither nlohmann nor json.cc's
// private walkers beyond ObjectMeta.

#include "slicewright/codec/coordination.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <simdjson.h>

#include "slicewright/base/status.h"
#include "slicewright/model/time.h"

#include "codec/internal.h"
#include "codec/simdjson_internal.h"

namespace slicewright::codec {
namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

constexpr std::string_view kApiVersion = "coordination.k8s.io/v1";
constexpr std::string_view kKind = "Lease";

Status Expected(std::string_view what) { return BadRequestError("expected " + std::string(what)); }

Status AtKey(Status status, std::string_view key) {
  status.WithFieldPrefix("." + std::string(key));
  return status;
}

// Calls fn(key, value) for each field of an object; null is an empty object (Go's zero value).
template <typename Fn>
Status ForEachField(element value, Fn&& fn) {
  if (value.is_null()) return Status();
  simdjson::dom::object object;
  if (value.get_object().get(object) != simdjson::SUCCESS) return Expected("object");
  for (const simdjson::dom::key_value_pair field : object) {
    Status status = fn(field.key, field.value);
    if (!status.ok()) return AtKey(std::move(status), field.key);
  }
  return Status();
}

Status ReadOptString(element value, std::optional<std::string>& out) {
  if (value.is_null()) {
    out.reset();
    return Status();
  }
  std::string_view text;
  if (value.get_string().get(text) != simdjson::SUCCESS) return Expected("string");
  out.emplace(text);
  return Status();
}

Status ReadOptInt32(element value, std::optional<std::int32_t>& out) {
  switch (value.type()) {
    case element_type::NULL_VALUE:
      out.reset();
      return Status();
    case element_type::INT64: {
      const std::int64_t v = value.get_int64().value_unsafe();
      if (v < std::numeric_limits<std::int32_t>::min() ||
          v > std::numeric_limits<std::int32_t>::max()) {
        return BadRequestError("integer out of range");
      }
      out = static_cast<std::int32_t>(v);
      return Status();
    }
    case element_type::UINT64:
      return BadRequestError("integer out of range");
    default:
      return Expected("integer");
  }
}

// MicroTime parses as any RFC 3339 time (Go's MicroTime.UnmarshalJSON accepts RFC3339Micro, which
// is RFC 3339 with a fraction; a whole-second time from an older writer is accepted too).
Status ReadOptTime(element value, std::optional<model::Time>& out) {
  if (value.is_null()) {
    out.reset();
    return Status();
  }
  std::string_view text;
  if (value.get_string().get(text) != simdjson::SUCCESS) return Expected("RFC 3339 time");
  out = model::ParseRfc3339(text);
  if (!out.has_value()) return Expected("RFC 3339 time");
  return Status();
}

Status ReadLeaseSpec(element value, model::LeaseSpec& out) {
  return ForEachField(value, [&out](std::string_view key, element v) {
    if (key == "holderIdentity") return ReadOptString(v, out.holder_identity);
    if (key == "leaseDurationSeconds") return ReadOptInt32(v, out.lease_duration_seconds);
    if (key == "acquireTime") return ReadOptTime(v, out.acquire_time);
    if (key == "renewTime") return ReadOptTime(v, out.renew_time);
    if (key == "leaseTransitions") return ReadOptInt32(v, out.lease_transitions);
    return Status();  // preferredHolder, strategy
  });
}

// Type meta must agree when present: the client decodes what it asked for.
Status CheckTypeMeta(element root) {
  std::string_view api_version;
  std::string_view kind;
  for (auto [key, out] : {std::pair{"apiVersion", &api_version}, std::pair{"kind", &kind}}) {
    element value;
    if (root.at_key(key).get(value) != simdjson::SUCCESS || value.is_null()) continue;
    if (value.get_string().get(*out) != simdjson::SUCCESS) return AtKey(Expected("string"), key);
  }
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

// One Lease object (the top level, a list item or a watch event's object); errors name it.
Status DecodeLeaseElement(element root, model::Lease& out) {
  Status status = CheckTypeMeta(root);
  if (status.ok()) {
    status = ForEachField(root, [&out](std::string_view key, element v) {
      if (key == "metadata") return internal::DecodeObjectMetaValue(v, out.metadata);
      if (key == "spec") return ReadLeaseSpec(v, out.spec);
      return Status();
    });
  }
  if (!status.ok()) status.WithObject(ObjectName(root));
  return status;
}

}  // namespace

Result<model::Lease> DecodeLease(std::string_view json) {
  // Leases are small and rare (one read per retry period): a parser per call is cheap enough.
  simdjson::dom::parser parser;
  element root;
  const simdjson::error_code error = parser.parse(json.data(), json.size()).get(root);
  if (error != simdjson::SUCCESS) {
    return BadRequestError(std::string("malformed JSON: ") + simdjson::error_message(error));
  }
  if (!root.is_object()) return BadRequestError("expected a JSON object at the top level");
  model::Lease out;
  Status status = DecodeLeaseElement(root, out);
  if (!status.ok()) return status;
  return out;
}

Result<ListPage<model::Lease>> DecodeLeaseList(std::string_view json) {
  simdjson::dom::parser parser;
  element root;
  const simdjson::error_code error = parser.parse(json.data(), json.size()).get(root);
  if (error != simdjson::SUCCESS) {
    return BadRequestError(std::string("list: malformed JSON: ") + simdjson::error_message(error));
  }
  ListPage<model::Lease> out;
  Status status = [&]() -> Status {
    if (!root.is_object()) return Expected("a JSON object at the top level");
    element value;
    std::string_view kind;
    if (root.at_key("kind").get(value) == simdjson::SUCCESS && !value.is_null() &&
        value.get_string().get(kind) != simdjson::SUCCESS) {
      return AtKey(Expected("string"), "kind");
    }
    if (!kind.empty() && kind != "List" && kind != "LeaseList") {
      return AtKey(BadRequestError("expected LeaseList, got " + std::string(kind)), "kind");
    }
    element metadata;
    if (root.at_key("metadata").get(metadata) == simdjson::SUCCESS) {
      Status meta = ForEachField(metadata, [&out](std::string_view key, element v) -> Status {
        std::optional<std::string> text;
        if (key == "resourceVersion" || key == "continue") {
          SW_RETURN_IF_ERROR(ReadOptString(v, text));
          (key == "continue" ? out.continue_token : out.resource_version) = text.value_or("");
        } else if (key == "remainingItemCount" && !v.is_null()) {
          std::int64_t count = 0;
          if (v.get_int64().get(count) != simdjson::SUCCESS) return Expected("integer");
          out.remaining_item_count = count;
        }
        return Status();
      });
      SW_RETURN_IF_ERROR(AtKey(std::move(meta), "metadata"));
    }
    element items;
    if (root.at_key("items").get(items) != simdjson::SUCCESS || items.is_null()) return Status();
    simdjson::dom::array array;
    if (items.get_array().get(array) != simdjson::SUCCESS) return AtKey(Expected("array"), "items");
    std::size_t index = 0;
    for (const element item : array) {
      if (!item.is_null()) {
        model::Lease lease;
        Status item_status =
            item.is_object() ? DecodeLeaseElement(item, lease) : Expected("object");
        if (item_status.ok()) {
          out.items.push_back(std::move(lease));
        } else {
          if (!item.is_object()) item_status.WithObject("items[" + std::to_string(index) + "]");
          item_status.WithObject("list");
          out.item_errors.push_back(std::move(item_status));
        }
      }
      ++index;
    }
    return Status();
  }();
  if (!status.ok()) {
    status.WithObject("list");
    return status;
  }
  return out;
}

Result<WatchEvent<model::Lease>> DecodeLeaseWatchEvent(std::string_view line) {
  simdjson::dom::parser parser;
  element root;
  const simdjson::error_code error = parser.parse(line.data(), line.size()).get(root);
  if (error != simdjson::SUCCESS) {
    return BadRequestError(std::string("watch event: malformed JSON: ") +
                           simdjson::error_message(error));
  }
  WatchEvent<model::Lease> out;
  Status status = [&]() -> Status {
    if (!root.is_object()) return Expected("a JSON object at the top level");
    element value;
    std::string_view type;
    if (root.at_key("type").get(value) != simdjson::SUCCESS) {
      return AtKey(BadRequestError("required"), "type");
    }
    if (value.get_string().get(type) != simdjson::SUCCESS) return AtKey(Expected("string"), "type");
    const std::optional<WatchEventType> named = internal::WatchEventTypeFromName(type);
    if (!named) {
      return AtKey(BadRequestError("unknown watch event type \"" + std::string(type) + "\""),
                   "type");
    }
    out.type = *named;
    element object;
    if (root.at_key("object").get(object) != simdjson::SUCCESS || !object.is_object()) {
      return AtKey(Expected("object"), "object");
    }
    if (out.type == WatchEventType::kError) {
      std::int64_t code = 500;
      element code_value;
      if (object.at_key("code").get(code_value) != simdjson::SUCCESS ||
          code_value.get_int64().get(code) != simdjson::SUCCESS) {
        code = 500;
      }
      out.error = DecodeStatusResponse(simdjson::to_string(object), static_cast<int>(code));
      return Status();
    }
    return DecodeLeaseElement(object, out.object);
  }();
  if (!status.ok()) {
    status.WithObject("watch event");
    return status;
  }
  return out;
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

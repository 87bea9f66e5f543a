// The simdjson readers every decoder of the codec shares (json.cc, mcs.cc, coordination.cc,
// apps.cc): error paths, null-as-zero-value field readers, and the LIST and watch-event frames.
// Only the codec's .cc files include it (it names simdjson types); reentrant.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <simdjson.h>

#include "slicewright/base/result.h"
#include "slicewright/base/status.h"
#include "slicewright/codec/json.h"
#include "slicewright/model/meta.h"
#include "slicewright/model/time.h"

#include "codec/internal.h"

namespace slicewright::codec::internal {

// ---- Errors ----
// Paths are built only on the error path, innermost segment first, as the Status bubbles up.

inline Status Expected(std::string_view what) {
  std::string message = "expected ";
  message += what;
  return BadRequestError(std::move(message));
}

inline Status AtKey(Status status, std::string_view key) {
  std::string prefix;
  prefix.reserve(key.size() + 1);
  prefix += '.';
  prefix += key;
  status.WithFieldPrefix(prefix);
  return status;
}

inline Status AtIndex(Status status, std::size_t index) {
  std::string prefix = "[";
  prefix += std::to_string(index);
  prefix += ']';
  status.WithFieldPrefix(prefix);
  return status;
}

// Map entries read as Kubernetes' field.Path.Key does: ".metadata.labels[app.kubernetes.io/name]".
inline Status AtMapKey(Status status, std::string_view key) {
  std::string prefix = "[";
  prefix += key;
  prefix += ']';
  status.WithFieldPrefix(prefix);
  return status;
}

// "pods.json: pods/default/web-1"; the bare object when there is no document name.
inline std::string Compose(std::string_view document, std::string_view object) {
  std::string out;
  if (!document.empty()) {
    out.reserve(document.size() + 2 + object.size());
    out += document;
    if (!object.empty()) out += ": ";
  }
  out += object;
  return out;
}

// Names the status's object "<document>: <object>" unless it is named already.
inline Status AtDocument(Status status, std::string_view document, std::string_view object = {}) {
  const std::string composed = Compose(document, object);
  if (!composed.empty()) status.WithObject(composed);
  return status;
}

// ---- Walkers ----
// null decodes as Go's encoding/json does: the zero value (an absent field, an empty list, a
// default list element, an empty map value). API servers really send `"endpoints": null`.

// Calls fn(key, value) for each field of an object; errors get the key as a path prefix.
template <typename Fn>
Status ForEachField(simdjson::dom::element value, Fn&& fn) {
  const simdjson::dom::element_type type = value.type();
  if (type == simdjson::dom::element_type::NULL_VALUE) return Status();
  if (type != simdjson::dom::element_type::OBJECT) return Expected("object");
  // A named copy: value_unsafe() refers into the temporary simdjson_result, which a range-for
  // over it would outlive.
  const simdjson::dom::object object = value.get_object().value_unsafe();
  for (const simdjson::dom::key_value_pair field : object) {
    Status status = fn(field.key, field.value);
    if (!status.ok()) return AtKey(std::move(status), field.key);
  }
  return Status();
}

// Replaces `out` with the array's elements, each decoded by `decode(element, T&)`.
template <typename List, typename Decode>
Status ReadList(simdjson::dom::element value, List& out, Decode&& decode) {
  out.clear();
  const simdjson::dom::element_type type = value.type();
  if (type == simdjson::dom::element_type::NULL_VALUE) return Status();
  if (type != simdjson::dom::element_type::ARRAY) return Expected("array");
  const simdjson::dom::array array = value.get_array().value_unsafe();
  out.reserve(array.size());
  std::size_t index = 0;
  for (const simdjson::dom::element item : array) {
    Status status = decode(item, out.emplace_back());
    if (!status.ok()) return AtIndex(std::move(status), index);
    ++index;
  }
  return Status();
}

// An optional sub-object: null resets it, anything else is decoded into it.
// `Optional` is std::optional or model::OptionalBox.
template <typename Optional, typename Decode>
Status ReadOptional(simdjson::dom::element value, Optional& out, Decode&& decode) {
  if (value.is_null()) {
    out.reset();
    return Status();
  }
  if (!out.has_value()) out.emplace();
  return decode(value, *out);
}

// ---- Scalars ----

// A JSON string into any of our text types (std::string, model::InlineString, ...); null leaves
// it as it is.
template <typename Text>
Status ReadString(simdjson::dom::element value, Text& out) {
  switch (value.type()) {
    case simdjson::dom::element_type::STRING:
      out = value.get_string().value_unsafe();
      return Status();
    case simdjson::dom::element_type::NULL_VALUE:
      return Status();
    default:
      return Expected("string");
  }
}

// `Optional`: std::optional or model::OptionalBox of std::string or model::InlineString.
template <typename Optional>
Status ReadOptString(simdjson::dom::element value, Optional& out) {
  switch (value.type()) {
    case simdjson::dom::element_type::STRING:
      out.emplace(value.get_string().value_unsafe());
      return Status();
    case simdjson::dom::element_type::NULL_VALUE:
      out.reset();
      return Status();
    default:
      return Expected("string");
  }
}

inline Status ReadBool(simdjson::dom::element value, bool& out) {
  switch (value.type()) {
    case simdjson::dom::element_type::BOOL:
      out = value.get_bool().value_unsafe();
      return Status();
    case simdjson::dom::element_type::NULL_VALUE:
      return Status();
    default:
      return Expected("boolean");
  }
}

inline Status ReadOptBool(simdjson::dom::element value, std::optional<bool>& out) {
  switch (value.type()) {
    case simdjson::dom::element_type::BOOL:
      out = value.get_bool().value_unsafe();
      return Status();
    case simdjson::dom::element_type::NULL_VALUE:
      out.reset();
      return Status();
    default:
      return Expected("boolean");
  }
}

// Integer errors. `format` names a schema's integer format ("int32", as a CRD's openAPI schema
// says) in the message: "expected int32", "integer out of range for int32"; empty: "expected
// integer", "integer out of range".
inline Status OutOfRange(std::string_view format = {}) {
  std::string message = "integer out of range";
  if (!format.empty()) {
    message += " for ";
    message += format;
  }
  return BadRequestError(std::move(message));
}

inline Status NotAnInteger(std::string_view format) {
  return Expected(format.empty() ? std::string_view("integer") : format);
}

// An integer field. simdjson types an integer INT64 when it fits, UINT64 only above INT64_MAX,
// DOUBLE if written with a fraction or exponent (integers beyond uint64 fail the parse). A DOUBLE
// is "out of range" when it is integral but beyond int64 (1e19), else not an integer: Go rejects
// 80.0 for an int too.
template <typename Int>
Status ReadInt(simdjson::dom::element value, Int& out, std::string_view format = {}) {
  switch (value.type()) {
    case simdjson::dom::element_type::INT64: {
      const std::int64_t v = value.get_int64().value_unsafe();
      if constexpr (sizeof(Int) < sizeof(std::int64_t)) {
        if (v < std::numeric_limits<Int>::min() || v > std::numeric_limits<Int>::max()) {
          return OutOfRange(format);
        }
      }
      out = static_cast<Int>(v);
      return Status();
    }
    case simdjson::dom::element_type::UINT64:
      return OutOfRange(format);
    case simdjson::dom::element_type::DOUBLE: {
      const double d = value.get_double().value_unsafe();
      if (std::isfinite(d) && std::trunc(d) == d && std::fabs(d) >= 9.2e18) {
        return OutOfRange(format);
      }
      return NotAnInteger(format);
    }
    case simdjson::dom::element_type::NULL_VALUE:
      return Status();
    default:
      return NotAnInteger(format);
  }
}

template <typename Int>
Status ReadOptInt(simdjson::dom::element value, std::optional<Int>& out,
                  std::string_view format = {}) {
  if (value.is_null()) {
    out.reset();
    return Status();
  }
  Int v = 0;
  SW_RETURN_IF_ERROR(ReadInt(value, v, format));
  out = v;
  return Status();
}

// metav1.Time and MicroTime: any RFC 3339 time (Go's MicroTime.UnmarshalJSON accepts RFC3339Micro,
// which is RFC 3339 with a fraction).
inline Status ReadTime(simdjson::dom::element value, std::optional<model::Time>& out) {
  switch (value.type()) {
    case simdjson::dom::element_type::STRING: {
      out = model::ParseRfc3339(value.get_string().value_unsafe());
      if (!out.has_value()) return Expected("RFC 3339 time");
      return Status();
    }
    case simdjson::dom::element_type::NULL_VALUE:
      out.reset();
      return Status();
    default:
      return Expected("RFC 3339 time");
  }
}

// A map of strings (labels, annotations, selectors), each value read by read_value(element,
// std::string&). Go writes map keys sorted, so inserting at the end is amortized constant; a
// duplicate key keeps the last value, as Go does.
template <typename ReadValue>
Status ReadMap(simdjson::dom::element value, model::StringMap& out, ReadValue&& read_value) {
  out.clear();
  const simdjson::dom::element_type type = value.type();
  if (type == simdjson::dom::element_type::NULL_VALUE) return Status();
  if (type != simdjson::dom::element_type::OBJECT) return Expected("object");
  const simdjson::dom::object object = value.get_object().value_unsafe();
  for (const simdjson::dom::key_value_pair field : object) {
    auto it = out.emplace_hint(out.end(), field.key, std::string());
    Status status = read_value(field.value, it->second);
    if (!status.ok()) return AtMapKey(std::move(status), field.key);
  }
  return Status();
}

inline Status ReadStringMap(simdjson::dom::element value, model::StringMap& out) {
  return ReadMap(value, out, [](simdjson::dom::element v, std::string& s) {
    s.clear();
    return ReadString(v, s);
  });
}

// A list of strings into std::vector<std::string> or model::EndpointAddresses.
template <typename List>
Status ReadStringList(simdjson::dom::element value, List& out) {
  return ReadList(value, out,
                  [](simdjson::dom::element v, auto& text) { return ReadString(v, text); });
}

// Reads apiVersion and kind (absent or null: ""). The views point into the parser's tape.
inline Status ReadTypeMeta(simdjson::dom::element object, std::string_view& api_version,
                           std::string_view& kind) {
  const auto read = [&object](std::string_view key, std::string_view& out) -> Status {
    simdjson::dom::element value;
    if (object.at_key(key).get(value) != simdjson::SUCCESS || value.is_null()) return Status();
    if (value.get_string().get(out) != simdjson::SUCCESS) return AtKey(Expected("string"), key);
    return Status();
  };
  SW_RETURN_IF_ERROR(read("apiVersion", api_version));
  return read("kind", kind);
}

// ---- Shared with json.cc's decoders (defined there) ----

// Decodes metadata into `out`; errors carry the field path inside metadata (".labels[a]").
Status DecodeObjectMetaValue(simdjson::dom::element value, model::ObjectMeta& out);

// The object of an ERROR watch event, a metav1.Status, as a Status (by reason, else by HTTP code;
// kExpired for 410 Gone).
Status ReadApiStatus(simdjson::dom::element object);

// The thread's parser for documents up to kReusedParserCapacity: simdjson keeps its buffers
// between calls, so the many small decodes of a watch stream allocate nothing. A decoder must not
// parse again while it holds elements of this parser.
inline constexpr std::size_t kReusedParserCapacity = std::size_t{1} << 20;
simdjson::dom::parser& ReusedParser();

// "malformed JSON[ at byte N]: <simdjson's message>", named `document`. `locate` runs a second,
// strict syntax pass (on the error path only) for the byte offset.
Status Malformed(std::string_view text, std::string_view document, simdjson::error_code error,
                 bool locate);

// ---- Frames ----

// A UTF-8 byte order mark is not JSON, but editors write one; skip it.
inline std::string_view StripBom(std::string_view text) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  return text;
}

// How a parse failure is reported: the core kinds (json.cc), which also come from users' files,
// say where; the custom and coordination kinds, read only from an API server, keep the short form.
enum class SyntaxErrorOffset { kLocate, kOmit };

// Parses `text` and calls fn(root) with the document root; the element is valid only inside fn.
template <typename Fn>
Status WithParsed(std::string_view text, std::string_view document, Fn&& fn,
                  SyntaxErrorOffset offset = SyntaxErrorOffset::kLocate) {
  text = StripBom(text);
  std::optional<simdjson::dom::parser> large_parser;
  simdjson::dom::parser& parser =
      text.size() <= kReusedParserCapacity ? ReusedParser() : large_parser.emplace();
  simdjson::dom::element root;
  // parse() copies the text into a padded buffer: our callers' strings carry no simdjson padding.
  const simdjson::error_code error = parser.parse(text.data(), text.size()).get(root);
  if (error != simdjson::SUCCESS) {
    return Malformed(text, document, error, offset == SyntaxErrorOffset::kLocate);
  }
  return fn(root);
}

// The most list items whose storage is reserved up front.
inline constexpr std::size_t kMaxReservedItems = 1 << 16;

// A LIST answer of one kind: a typed list ("<item_kind>List") or a "List", its metadata
// (resourceVersion, continue, remainingItemCount), and its items, each object decoded by
// decode_object(element, "list", T&), which names its object in errors. An item that fails goes
// to item_errors (named "list: items[i]" when it has no name of its own) and the others still
// decode; null items are skipped. Errors of the frame itself are named "list".
template <typename T, typename DecodeObject>
Result<ListPage<T>> DecodeListPage(std::string_view json, std::string_view item_kind,
                                   DecodeObject&& decode_object, SyntaxErrorOffset offset) {
  ListPage<T> out;
  Status status = WithParsed(
      json, "list",
      [&](simdjson::dom::element root) -> Status {
        if (!root.is_object()) return BadRequestError("expected a JSON object at the top level");
        std::string_view api_version;
        std::string_view kind;
        SW_RETURN_IF_ERROR(ReadTypeMeta(root, api_version, kind));
        const bool typed_list = kind.size() == item_kind.size() + 4 &&
                                kind.starts_with(item_kind) && kind.ends_with("List");
        if (!kind.empty() && kind != "List" && !typed_list) {
          return AtKey(BadRequestError("expected " + std::string(item_kind) + "List, got " +
                                       std::string(kind)),
                       "kind");
        }
        simdjson::dom::element metadata;
        if (root.at_key("metadata").get(metadata) == simdjson::SUCCESS) {
          Status meta_status =
              ForEachField(metadata, [&](std::string_view key, simdjson::dom::element v) {
                if (key == "resourceVersion") return ReadString(v, out.resource_version);
                if (key == "continue") return ReadString(v, out.continue_token);
                if (key == "remainingItemCount") return ReadOptInt(v, out.remaining_item_count);
                return Status();
              });
          if (!meta_status.ok()) return AtKey(std::move(meta_status), "metadata");
        }
        simdjson::dom::element items;
        if (root.at_key("items").get(items) != simdjson::SUCCESS || items.is_null()) {
          return Status();
        }
        if (!items.is_array()) return AtKey(Expected("array"), "items");
        const simdjson::dom::array array = items.get_array().value_unsafe();
        out.items.reserve(std::min<std::size_t>(array.size(), kMaxReservedItems));
        std::size_t index = 0;
        for (const simdjson::dom::element item : array) {
          if (!item.is_null()) {
            T& slot = out.items.emplace_back();
            Status item_status =
                item.is_object() ? decode_object(item, "list", slot) : Expected("object");
            if (!item_status.ok()) {
              out.items.pop_back();
              item_status.WithObject(Compose("list", "items[" + std::to_string(index) + "]"));
              out.item_errors.push_back(std::move(item_status));
            }
          }
          ++index;
        }
        return Status();
      },
      offset);
  if (!status.ok()) return AtDocument(std::move(status), "list");
  return out;
}

// One watch event line: its type, and for ADDED, MODIFIED and DELETED its object decoded by
// decode_object(element, "watch event", T&); for BOOKMARK only the object's metadata; for ERROR
// the metav1.Status it carries. Errors of the frame itself are named "watch event".
template <typename T, typename DecodeObject>
Result<WatchEvent<T>> DecodeWatchEventLine(std::string_view line, DecodeObject&& decode_object,
                                           SyntaxErrorOffset offset) {
  WatchEvent<T> out;
  Status status = WithParsed(
      line, "watch event",
      [&](simdjson::dom::element root) -> Status {
        if (!root.is_object()) return BadRequestError("expected a JSON object at the top level");
        simdjson::dom::element value;
        std::string_view type;
        if (root.at_key("type").get(value) != simdjson::SUCCESS) {
          return AtKey(BadRequestError("missing"), "type");
        }
        if (value.get_string().get(type) != simdjson::SUCCESS) {
          return AtKey(Expected("string"), "type");
        }
        const std::optional<WatchEventType> named = WatchEventTypeFromName(type);
        if (!named) {
          return AtKey(BadRequestError("unknown watch event type \"" + std::string(type) + "\""),
                       "type");
        }
        out.type = *named;
        simdjson::dom::element object;
        if (root.at_key("object").get(object) != simdjson::SUCCESS || !object.is_object()) {
          return AtKey(Expected("object"), "object");
        }
        if (out.type == WatchEventType::kError) {
          out.error = ReadApiStatus(object);
          return Status();
        }
        // A BOOKMARK's object is only kind, apiVersion and metadata.resourceVersion: a kind with
        // required fields (the MCS export record) would refuse it as a whole object.
        if (out.type == WatchEventType::kBookmark) {
          simdjson::dom::element metadata;
          if (object.at_key("metadata").get(metadata) != simdjson::SUCCESS) return Status();
          Status meta = DecodeObjectMetaValue(metadata, out.object.metadata);
          if (!meta.ok()) return AtKey(AtKey(std::move(meta), "metadata"), "object");
          return Status();
        }
        return decode_object(object, "watch event", out.object);
      },
      offset);
  if (!status.ok()) return AtDocument(std::move(status), "watch event");
  return out;
}

}  // namespace slicewright::codec::internal

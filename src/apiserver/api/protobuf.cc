#include "apiserver/api/protobuf.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "slicewright/base/status.h"
#include "slicewright/model/time.h"

#include "apiserver/api/go_types.h"
#include "apiserver/api/json_depth.h"

namespace slicewright::apiserver {
namespace {

using nlohmann::json;

constexpr std::string_view kMagic("k8s\0", 4);
// Deeper messages are refused (JSONSchemaProps is recursive, so the tables alone bound nothing).
constexpr int kMaxDepth = 100;
// Protobuf field numbers are 29 bits.
constexpr std::uint64_t kMaxFieldNumber = (std::uint64_t{1} << 29) - 1;

// The message tables are generated from upstream types.go (apiserver/api/go_types.h). Field
// numbers are those of each type's generated.proto; modes follow the Go struct fields the JSON
// comes from (pointer or not, `omitempty` or not), because gogo-protobuf writes every non-pointer
// scalar, zero or not, and kube-apiserver's JSON is Go's encoding of the decoded struct.
using gotypes::Field;
using gotypes::Kind;
using gotypes::Message;
using gotypes::Mode;
using gotypes::Shape;
using enum gotypes::Kind;
using enum gotypes::Mode;

// The envelope (runtime.Unknown, apimachinery/pkg/runtime/generated.proto).
constexpr Field kTypeMetaFields[] = {{1, "apiVersion", kString, kOmitEmpty, nullptr, "string", ""},
                                     {2, "kind", kString, kOmitEmpty, nullptr, "string", ""}};
constexpr Message kTypeMeta{"TypeMeta", "runtime.TypeMeta", kTypeMetaFields};

// ---------------------------------------------------------------------------------------------
// Helpers.

std::string Base64(std::string_view bytes) {
  static constexpr std::string_view kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const std::uint32_t n = (std::uint32_t{static_cast<unsigned char>(bytes[i])} << 16) |
                            (std::uint32_t{static_cast<unsigned char>(bytes[i + 1])} << 8) |
                            std::uint32_t{static_cast<unsigned char>(bytes[i + 2])};
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += kAlphabet[(n >> 6) & 63];
    out += kAlphabet[n & 63];
  }
  if (const std::size_t rest = bytes.size() - i; rest > 0) {
    std::uint32_t n = std::uint32_t{static_cast<unsigned char>(bytes[i])} << 16;
    if (rest == 2) {
      n |= std::uint32_t{static_cast<unsigned char>(bytes[i + 1])} << 8;
    }
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += rest == 2 ? kAlphabet[(n >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

// Well-formed UTF-8: no overlong forms, no surrogates, nothing above U+10FFFF.
bool IsValidUtf8(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t length = 0;
    std::uint32_t code = 0;
    std::uint32_t min = 0;
    if ((c & 0xE0) == 0xC0) {
      length = 2, code = c & 0x1F, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
      length = 3, code = c & 0x0F, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
      length = 4, code = c & 0x07, min = 0x10000;
    } else {
      return false;
    }
    if (text.size() - i < length) {
      return false;
    }
    for (std::size_t k = 1; k < length; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xC0) != 0x80) {
        return false;
      }
      code = (code << 6) | (next & 0x3F);
    }
    if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) {
      return false;
    }
    i += length;
  }
  return true;
}

// The Go zero value a kAlways scalar field takes when it is not on the wire.
json ZeroValue(Kind kind) {
  switch (kind) {
    case kString:
    case kBytes:
      return "";
    case kBool:
      return false;
    case kInt32:
    case kInt64:
      return 0;
    case kDouble:
      return 0.0;
    case kMessage:
      break;
  }
  return nullptr;
}

bool IsZero(const json& value) {
  return (value.is_string() && value.get_ref<const std::string&>().empty()) ||
         (value.is_boolean() && !value.get<bool>()) ||
         (value.is_number_integer() && value.get<std::int64_t>() == 0) ||
         (value.is_number_float() && value.get<double>() == 0.0);
}

// One field as read from the wire; `begin`/`end` delimit a length-delimited value.
struct WireField {
  std::uint32_t number = 0;
  int wire_type = 0;
  std::size_t tag_offset = 0;  // where the field's key starts
  std::uint64_t varint = 0;    // wire type 0
  std::size_t begin = 0;       // wire types 1, 2 and 5: the value's bytes
  std::size_t end = 0;
};

// Decodes one body. Offsets are into the whole body, so every error names an absolute byte.
class Decoder final {
 public:
  explicit Decoder(std::string_view body) : body_(body) {}

  // Calls visit(const WireField&) -> Status for each field of body_[begin, end).
  template <typename Visit>
  Status ForEachField(std::size_t begin, std::size_t end, Visit&& visit) {
    std::size_t pos = begin;
    while (pos < end) {
      WireField field;
      field.tag_offset = pos;
      std::uint64_t key = 0;
      SW_RETURN_IF_ERROR(ReadVarint(pos, end, "field key", key));
      const std::uint64_t number = key >> 3;
      field.wire_type = static_cast<int>(key & 7);
      if (number == 0 || number > kMaxFieldNumber) {
        return Error(field.tag_offset, "invalid field number " + std::to_string(number));
      }
      field.number = static_cast<std::uint32_t>(number);
      switch (field.wire_type) {
        case 0:
          SW_RETURN_IF_ERROR(ReadVarint(pos, end, "varint of " + FieldName(field), field.varint));
          break;
        case 1:
        case 5: {
          const std::size_t size = field.wire_type == 1 ? 8 : 4;
          if (end - pos < size) {
            return Error(
                pos, "truncated " + std::to_string(size * 8) + "-bit value of " + FieldName(field));
          }
          field.begin = pos;
          field.end = pos + size;
          pos += size;
          break;
        }
        case 2: {
          const std::size_t length_offset = pos;
          std::uint64_t length = 0;
          SW_RETURN_IF_ERROR(ReadVarint(pos, end, "length of " + FieldName(field), length));
          if (length > end - pos) {
            return Error(length_offset, "length " + std::to_string(length) + " of " +
                                            FieldName(field) + " runs past the end (byte " +
                                            std::to_string(end) + ")");
          }
          field.begin = pos;
          field.end = pos + static_cast<std::size_t>(length);
          pos = field.end;
          break;
        }
        default:
          return Error(field.tag_offset, "unsupported wire type " +
                                             std::to_string(field.wire_type) + " of " +
                                             FieldName(field));
      }
      SW_RETURN_IF_ERROR(visit(field));
    }
    return Status::Ok();
  }

  // Decodes body_[begin, end) as `type` into `out` (an object; fields already there are merged
  // into, as protobuf merges a message that occurs twice).
  Status DecodeInto(const Message& type, std::size_t begin, std::size_t end, int depth, json& out) {
    if (depth > kMaxDepth) {
      return Error(begin, "messages nested deeper than " + std::to_string(kMaxDepth));
    }
    SW_RETURN_IF_ERROR(ForEachField(begin, end, [&](const WireField& wire) -> Status {
      for (const Field& field : type.fields) {
        if (field.number == wire.number) {
          return DecodeField(type, field, wire, depth, out);
        }
      }
      return Status::Ok();  // unknown field: skipped, for forward compatibility
    }));
    for (const Field& field : type.fields) {
      if (field.mode == kInline) {
        // The embedded struct's unset fields take their zero values in the parent.
        SW_RETURN_IF_ERROR(DecodeInto(*field.message, end, end, depth + 1, out));
        continue;
      }
      if ((field.mode == kRepeatedNull || field.mode == kMapNull) &&
          !out.contains(field.json_name)) {
        out[field.json_name] = nullptr;  // Go writes a nil slice or map without omitempty as null
        continue;
      }
      if (field.mode != kAlways || out.contains(field.json_name)) {
        continue;
      }
      if (field.kind != kMessage) {
        out[field.json_name] = ZeroValue(field.kind);
        continue;
      }
      // A struct value absent from the wire is its zero value: the message decoded from nothing.
      const std::size_t saved = path_.size();
      path_ += '.';
      path_ += field.json_name;
      SW_ASSIGN_OR_RETURN(json zero, DecodeValue(*field.message, end, end, depth + 1));
      path_.resize(saved);
      out[field.json_name] = std::move(zero);
    }
    return Status::Ok();
  }

  // Decodes body_[begin, end) as `type` and converts it to its JSON shape.
  Result<json> DecodeValue(const Message& type, std::size_t begin, std::size_t end, int depth) {
    json object = json::object();
    SW_RETURN_IF_ERROR(DecodeInto(type, begin, end, depth, object));
    switch (type.shape) {
      case Shape::kObject:
        return object;
      case Shape::kIntOrString: {
        const std::int64_t kind = object["type"].get<std::int64_t>();
        if (kind == 0) {
          return object["intVal"];
        }
        if (kind == 1) {
          return object["strVal"];
        }
        return Error(begin, "IntOrString type " + std::to_string(kind) + " is neither 0 nor 1");
      }
      case Shape::kTime:
      case Shape::kMicroTime: {
        if (begin == end) {
          return json(nullptr);  // metav1.Time unmarshals no bytes as the zero time: null
        }
        const std::int64_t seconds = object["seconds"].get<std::int64_t>();
        constexpr std::int64_t kLimit = 9'223'372'035;  // what int64 nanoseconds hold
        if (seconds < -kLimit || seconds > kLimit) {
          return Error(begin, "timestamp " + std::to_string(seconds) + " s is out of range");
        }
        if (type.shape == Shape::kTime) {
          // metav1.Time marshals whole seconds: nanos dropped.
          return json(model::FormatRfc3339(model::Time::FromUnixSeconds(seconds)));
        }
        // MicroTime keeps the microseconds of time.Unix(seconds, nanos).
        const std::int64_t nanos = std::clamp<std::int64_t>(object["nanos"].get<std::int64_t>(),
                                                            -999'999'999, 999'999'999);
        return json(model::FormatRfc3339Micro(
            model::Time{model::Time::FromUnixSeconds(seconds).unix_nanos + nanos}));
      }
      case Shape::kSchemaOrArray:  // JSONSchemaPropsOrArray.MarshalJSON: the array if any
        if (object["JSONSchemas"].is_array() && !object["JSONSchemas"].empty()) {
          return object["JSONSchemas"];
        }
        return object.contains("Schema") ? object["Schema"] : json(nullptr);
      case Shape::kSchemaOrBool:  // JSONSchemaPropsOrBool.MarshalJSON: the schema, else allows
        if (object.contains("Schema")) {
          return object["Schema"];
        }
        return object["Allows"];
      case Shape::kSchemaOrStringArray:  // the property list if any, else the schema, else null
        if (object["Property"].is_array() && !object["Property"].empty()) {
          return object["Property"];
        }
        return object.contains("Schema") ? object["Schema"] : json(nullptr);
      case Shape::kQuantity:
        return object["string"];
      case Shape::kFieldsV1:
      case Shape::kRawJson: {
        // Raw JSON text (FieldsV1, RawExtension, apiextensions JSON); none marshals as null.
        const std::string what =
            type.shape == Shape::kFieldsV1 ? "fieldsV1" : std::string(type.name);
        const char* raw_name = type.shape == Shape::kFieldsV1 ? "Raw" : "raw";
        const json* raw = object.contains(raw_name) ? &object[raw_name] : nullptr;
        if (raw == nullptr) {
          return json(nullptr);
        }
        const auto& text = raw->get_ref<const std::string&>();
        if (JsonNestingDepth(text) > kMaxDepth) {
          return Error(begin, what + " nests deeper than " + std::to_string(kMaxDepth));
        }
        json parsed;
        try {
          parsed = json::parse(text, nullptr, /*allow_exceptions=*/false);
        } catch (const std::exception& e) {
          return Error(begin, what + " is not JSON: " + e.what());
        }
        if (parsed.is_discarded()) {
          return Error(begin, what + " is not JSON");
        }
        return parsed;
      }
    }
    return Error(begin, "unknown shape of " + std::string(type.name));
  }

  Status Error(std::size_t offset, std::string_view what) const {
    std::string message = "invalid protobuf body: ";
    message += what;
    message += " at byte ";
    message += std::to_string(offset);
    if (!path_.empty()) {
      message += " (in ";
      message += path_;
      message += ')';
    }
    return BadRequestError(std::move(message));
  }

  std::string& path() { return path_; }

 private:
  // Reads a base-128 varint of at most 10 bytes from body_[pos, end).
  Status ReadVarint(std::size_t& pos, std::size_t end, std::string_view what,
                    std::uint64_t& value) const {
    const std::size_t start = pos;
    value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos >= end) {
        return Error(start, "truncated varint (" + std::string(what) + ")");
      }
      const auto byte = static_cast<unsigned char>(body_[pos++]);
      value |= std::uint64_t{byte & 0x7FU} << shift;
      if (byte < 0x80) {
        return Status::Ok();
      }
    }
    return Error(start, "varint longer than 10 bytes (" + std::string(what) + ")");
  }

  static std::string FieldName(const WireField& field) {
    return "field " + std::to_string(field.number);
  }

  Status DecodeField(const Message& type, const Field& field, const WireField& wire, int depth,
                     json& out) {
    const int want_wire = field.kind == kBool || field.kind == kInt32 || field.kind == kInt64 ? 0
                          : field.kind == kDouble                                             ? 1
                                                                                              : 2;
    if (wire.wire_type != want_wire) {
      return Error(wire.tag_offset,
                   "field " + std::to_string(field.number) + " (" + std::string(field.json_name) +
                       ") of " + std::string(type.name) + " has wire type " +
                       std::to_string(wire.wire_type) + ", want " + std::to_string(want_wire));
    }
    const std::string_view bytes = body_.substr(wire.begin, wire.end - wire.begin);
    json value;
    switch (field.kind) {
      case kString:
        if (!IsValidUtf8(bytes)) {
          return Error(wire.begin, "field " + std::to_string(field.number) + " (" +
                                       std::string(field.json_name) + ") of " +
                                       std::string(type.name) + " is not valid UTF-8");
        }
        value = std::string(bytes);
        break;
      case kBytes:
        value = Base64(bytes);
        break;
      case kBool:
        value = wire.varint != 0;
        break;
      case kInt32:
        value = static_cast<std::int32_t>(static_cast<std::uint32_t>(wire.varint));
        break;
      case kInt64:
        value = static_cast<std::int64_t>(wire.varint);
        break;
      case kDouble: {
        std::uint64_t bits = 0;
        for (std::size_t i = 0; i < 8; ++i) {
          bits |= std::uint64_t{static_cast<unsigned char>(bytes[i])} << (8 * i);
        }
        const double number = std::bit_cast<double>(bits);
        if (!std::isfinite(number)) {
          return Error(wire.begin, "field " + std::to_string(field.number) + " (" +
                                       std::string(field.json_name) + ") of " +
                                       std::string(type.name) + " is not a finite number");
        }
        value = number;
        break;
      }
      case kMessage: {
        const std::size_t saved = path_.size();
        path_ += '.';
        path_ += field.json_name;
        if (field.mode == kInline) {
          SW_RETURN_IF_ERROR(DecodeInto(*field.message, wire.begin, wire.end, depth + 1, out));
          path_.resize(saved);
          return Status::Ok();
        }
        if (field.mode == kRepeated || field.mode == kRepeatedNull) {
          const json* existing = out.contains(field.json_name) ? &out[field.json_name] : nullptr;
          path_ += '[' + std::to_string(existing != nullptr ? existing->size() : 0) + ']';
        }
        if (field.message->shape == Shape::kObject && field.mode != kRepeated &&
            field.mode != kRepeatedNull && field.mode != kMap && field.mode != kMapNull) {
          json& slot = out[field.json_name];
          if (!slot.is_object()) {
            slot = json::object();
          }
          SW_RETURN_IF_ERROR(DecodeInto(*field.message, wire.begin, wire.end, depth + 1, slot));
          path_.resize(saved);
          return Status::Ok();
        }
        SW_ASSIGN_OR_RETURN(value, DecodeValue(*field.message, wire.begin, wire.end, depth + 1));
        path_.resize(saved);
        break;
      }
    }
    switch (field.mode) {
      case kOmitEmpty:
        if (IsZero(value)) {
          out.erase(std::string(field.json_name));  // a later zero overrides an earlier value
        } else {
          out[field.json_name] = std::move(value);
        }
        break;
      case kPointer:
      case kAlways:
        out[field.json_name] = std::move(value);  // the last occurrence wins
        break;
      case kRepeated:
      case kRepeatedNull:
        out[field.json_name].push_back(std::move(value));
        break;
      case kInline:
        break;  // decoded into `out` above
      case kMap:
      case kMapNull: {
        json& map = out[field.json_name];
        if (!map.is_object()) {
          map = json::object();
        }
        map[value["key"].get<std::string>()] = std::move(value["value"]);
        break;
      }
    }
    return Status::Ok();
  }

  std::string_view body_;
  std::string path_;  // the field path being decoded, e.g. "Service.spec.ports[1]"
};

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; };
    if (lower(a[i]) != lower(b[i])) {
      return false;
    }
  }
  return true;
}

std::string_view TrimSpace(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) {
    text.remove_prefix(1);
  }
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) {
    text.remove_suffix(1);
  }
  return text;
}

// The envelope's fields (runtime.Unknown, apimachinery/pkg/runtime/generated.proto).
struct Envelope {
  json type_meta = json::object();  // TypeMeta {apiVersion=1, kind=2}
  bool has_raw = false;             // raw=2, the object
  std::size_t raw_begin = 0;
  std::size_t raw_end = 0;
  std::string content_encoding;  // contentEncoding=3
  std::string content_type;      // contentType=4
  std::string api_version;       // type_meta's, "" when absent
  std::string kind;
};

constexpr Field kUnknownFields[] = {
    {1, "typeMeta", kMessage, kPointer, &kTypeMeta, "runtime.TypeMeta", ""},
    {2, "raw", kBytes, kPointer, nullptr, "[]uint8", ""},
    {3, "contentEncoding", kString, kOmitEmpty, nullptr, "string", ""},
    {4, "contentType", kString, kOmitEmpty, nullptr, "string", ""}};
constexpr Message kUnknown{"runtime.Unknown", "runtime.Unknown", kUnknownFields};

// Reads the magic bytes and the runtime.Unknown envelope of `body` into `envelope`. The raw
// object is decoded by the caller once its kind is known, so the envelope's fields are read one by
// one; the table only fixes their numbers and names.
Status ReadEnvelope(Decoder& decoder, std::string_view body, Envelope& envelope) {
  if (body.substr(0, kMagic.size()) != kMagic) {
    return BadRequestError(
        R"(invalid protobuf body: it does not start with the magic bytes "k8s\x00" at byte 0)");
  }
  decoder.path() = kUnknown.name;
  const auto visit = [&](const WireField& wire) -> Status {
    if (wire.number < 1 || wire.number > 4) {
      return Status::Ok();
    }
    const Field& field = kUnknownFields[wire.number - 1];
    if (wire.wire_type != 2) {
      return decoder.Error(wire.tag_offset, "field " + std::to_string(wire.number) + " (" +
                                                std::string(field.json_name) +
                                                ") of runtime.Unknown has wire type " +
                                                std::to_string(wire.wire_type) + ", want 2");
    }
    const std::string_view bytes = body.substr(wire.begin, wire.end - wire.begin);
    switch (wire.number) {
      case 1: {
        decoder.path() += ".typeMeta";
        SW_RETURN_IF_ERROR(
            decoder.DecodeInto(kTypeMeta, wire.begin, wire.end, 1, envelope.type_meta));
        decoder.path() = kUnknown.name;
        break;
      }
      case 2:
        envelope.has_raw = true;
        envelope.raw_begin = wire.begin;
        envelope.raw_end = wire.end;
        break;
      case 3:
        envelope.content_encoding = std::string(bytes);
        break;
      default:
        envelope.content_type = std::string(bytes);
        break;
    }
    return Status::Ok();
  };
  SW_RETURN_IF_ERROR(decoder.ForEachField(kMagic.size(), body.size(), visit));
  envelope.api_version = envelope.type_meta.value("apiVersion", std::string());
  envelope.kind = envelope.type_meta.value("kind", std::string());
  return Status::Ok();
}

// kUnsupportedMediaType unless the raw object is plain protobuf (no contentEncoding, and no
// contentType or ours).
Status CheckRawEncoding(const Envelope& envelope) {
  if (!envelope.content_encoding.empty()) {
    return Status(
        StatusCode::kUnsupportedMediaType,
        "protobuf body with contentEncoding " +
            json(envelope.content_encoding).dump(-1, ' ', false, json::error_handler_t::replace) +
            " is not supported");
  }
  if (!envelope.content_type.empty() && envelope.content_type != kKubernetesProtobufContentType) {
    return Status(
        StatusCode::kUnsupportedMediaType,
        "protobuf body whose raw object has contentType " +
            json(envelope.content_type).dump(-1, ' ', false, json::error_handler_t::replace) +
            " is not supported");
  }
  return Status::Ok();
}

}  // namespace

bool IsKubernetesProtobuf(std::string_view content_type) {
  const std::size_t semicolon = content_type.find(';');
  if (semicolon != std::string_view::npos) {
    content_type = content_type.substr(0, semicolon);
  }
  return EqualsIgnoreCase(TrimSpace(content_type), kKubernetesProtobufContentType);
}

Result<json> DecodeKubernetesProtobuf(std::string_view body) {
  Decoder decoder(body);
  Envelope envelope;
  SW_RETURN_IF_ERROR(ReadEnvelope(decoder, body, envelope));
  const std::string& api_version = envelope.api_version;
  const std::string& kind = envelope.kind;
  if (kind.empty()) {
    return BadRequestError("invalid protobuf body: runtime.Unknown names no kind");
  }
  SW_RETURN_IF_ERROR(CheckRawEncoding(envelope));
  if (!envelope.has_raw) {
    // kubectl always sends the object (its metadata at least); a body cut right after typeMeta
    // must not pass as an empty object.
    return BadRequestError("invalid protobuf body: runtime.Unknown carries no raw object");
  }
  const Message* type = gotypes::FindKind(api_version, kind);
  if (type == nullptr) {
    const std::string group_version = api_version.empty() ? "<no apiVersion>" : api_version;
    return Status(StatusCode::kUnsupportedMediaType,
                  "protobuf request bodies are supported only for built-in kinds, not " +
                      group_version + " " + kind + "; send " + kind + " as application/json");
  }
  json object = {{"apiVersion", api_version}, {"kind", kind}};
  decoder.path() = type->name;
  SW_RETURN_IF_ERROR(decoder.DecodeInto(*type, envelope.raw_begin, envelope.raw_end, 1, object));
  return object;
}

Result<json> DecodeDeleteOptionsProtobuf(std::string_view body) {
  Decoder decoder(body);
  Envelope envelope;
  SW_RETURN_IF_ERROR(ReadEnvelope(decoder, body, envelope));
  // kube-apiserver decodes DeleteOptions whatever group version the body names (client-go sends
  // its client's: "v1" for core kinds, "apps/v1" for Deployments) and takes a typeMeta without a
  // kind as DeleteOptions too; any other kind is refused.
  if (!envelope.kind.empty() && envelope.kind != "DeleteOptions") {
    const std::string group_version =
        envelope.api_version.empty() ? "<no apiVersion>" : envelope.api_version;
    return BadRequestError("invalid protobuf body: runtime.Unknown holds " + group_version + " " +
                           envelope.kind + ", not DeleteOptions");
  }
  SW_RETURN_IF_ERROR(CheckRawEncoding(envelope));
  json options = json::object();
  if (!envelope.has_raw) {
    return options;  // as kube-apiserver decodes it: no raw object, no options set
  }
  const Message& type = gotypes::MetaV1DeleteOptions();
  decoder.path() = type.name;
  SW_RETURN_IF_ERROR(decoder.DecodeInto(type, envelope.raw_begin, envelope.raw_end, 1, options));
  return options;
}

}  // namespace slicewright::apiserver

// Private seams between the codec's three adapters (simdjson in json.cc, nlohmann in
// json_encode.cc, yaml-cpp in yaml.cc), so each third-party header stays in one translation unit.
// Pure functions, reentrant; no third-party type appears here.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "slicewright/base/result.h"
#include "slicewright/codec/json.h"

namespace slicewright::codec::internal {

// Nesting deeper than this is refused by every walker in the codec (JSON->YAML, YAML->JSON);
// Kubernetes objects nest a few dozen levels at most. simdjson applies its own limit of 1024.
inline constexpr int kMaxNestingDepth = 256;

// Where DecodeJsonWithSite found the error: the absolute JSON path of the offending value
// (".items[3].status.podIPs[0].ip"; "" when the error is not about one value, e.g. malformed
// text). Lets the YAML decoder map an error back to a line of its own input.
struct ErrorSite {
  std::string path;
};

// DecodeJsonDocument that also reports the error site (`site` may be null).
Result<ObjectSet> DecodeJsonWithSite(std::string_view text, std::string_view document_name,
                                     ErrorSite* site);

// The 0-based byte offset at which a strict JSON parser first fails on `text`, and its
// description; nullopt if it finds no syntax error (simdjson also rejects some text a syntax
// check accepts: numbers out of range, nesting deeper than 1024). Runs only on the error path.
struct SyntaxError {
  std::size_t offset = 0;
  std::string what;
};
std::optional<SyntaxError> FindJsonSyntaxError(std::string_view text);

// EncodeEndpointSlice through an ordered_json document: the reference the streaming encoder is
// tested against, byte for byte.
std::string EncodeEndpointSliceDocument(const model::EndpointSlice& slice);

// How a plain (unquoted, untagged) YAML scalar resolves, following go-yaml v2 as kubectl and
// sigs.k8s.io/yaml use it: YAML 1.1 booleans (yes/no/on/off/y/n in three casings), null/~/"",
// integers with 0x/0o/0b/leading-0-octal and '_' separators, and floats in YAML style.
enum class PlainScalarKind { kNull, kBool, kInt, kFloat, kString };
struct PlainScalar {
  PlainScalarKind kind = PlainScalarKind::kString;
  bool bool_value = false;
  // kInt: the value as JSON number text (decimal; may exceed int64 when it fits uint64).
  // kFloat: JSON number text, or "" for .inf/.nan, which JSON cannot represent.
  std::string number;
};
PlainScalar ResolvePlainScalar(std::string_view text);

// True when `text` written as a plain YAML scalar would read back as something other than this
// string, under go-yaml v2's rules or YAML 1.2's core schema (timestamps and base-60 numbers
// included), so it must be quoted. Syntax-level problems (indicators, ": ", " #") are separate:
// see PlainScalarSyntaxAllowed.
bool PlainScalarIsAmbiguous(std::string_view text);

// True when `text` can be written as a block-context plain scalar at all (no leading indicator,
// no ": " or " #", no leading/trailing space, no control characters).
bool PlainScalarSyntaxAllowed(std::string_view text);

// True when `text` is valid UTF-8 (simdjson's validator; JSON requires it, YAML input is checked
// up front so the error names the YAML rather than the JSON made from it).
bool IsValidUtf8(std::string_view text);

// Appends `text` as a JSON string literal (quotes, escapes; UTF-8 passes through).
void AppendJsonString(std::string& out, std::string_view text);

// ObjectMeta as the encoders of json.h write it (compact JSON, omitempty), for encoders of kinds
// kept in their own file (coordination.cc).
std::string EncodeObjectMeta(const model::ObjectMeta& meta);

// The WatchEventType a watch event's "type" names (ADDED, MODIFIED, DELETED, BOOKMARK, ERROR);
// nullopt for anything else.
std::optional<WatchEventType> WatchEventTypeFromName(std::string_view name);

}  // namespace slicewright::codec::internal

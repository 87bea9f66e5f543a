// PATCH bodies as kube-apiserver applies them (staging/src/k8s.io/apiserver/pkg/endpoints/
// handlers/patch.go). JSON patch follows gopkg.in/evanphx/json-patch.v4, the library upstream
// uses, operation for operation and message for message; nlohmann's own patch() is not used
// because it asserts on an "add" below a scalar. This file is the adapter that catches nlohmann's
// exceptions.
#include "apiserver/api/patch.h"

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "slicewright/base/result.h"
#include "slicewright/base/status.h"

#include "apiserver/api/json_depth.h"
#include "apiserver/api/strategic_merge.h"

namespace slicewright::apiserver {
namespace {

using nlohmann::json;

constexpr std::string_view kJsonPatchMediaType = "application/json-patch+json";
constexpr std::string_view kMergePatchMediaType = "application/merge-patch+json";
constexpr std::string_view kStrategicMergePatchMediaType = "application/strategic-merge-patch+json";
constexpr std::string_view kApplyPatchMediaType = "application/apply-patch+yaml";

// negotiation.NewUnsupportedMediaTypeError, with the patch types a resource accepts.
Status UnsupportedMediaType(bool strategic) {
  std::string message =
      "the body of the request was in an unknown format - accepted media types include: ";
  message += kJsonPatchMediaType;
  message += ", ";
  message += kMergePatchMediaType;
  if (strategic) {
    message += ", ";
    message += kStrategicMergePatchMediaType;
  }
  return BadRequestError(std::move(message));
}

// handlers.maxJSONPatchOperations and the genericapiserver default of JSONPatchMaxCopyBytes.
constexpr std::size_t kMaxJsonPatchOperations = 10000;
constexpr std::int64_t kMaxJsonPatchCopyBytes = std::int64_t{3} * 1024 * 1024;

std::string_view Trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())) != 0) {
    text.remove_prefix(1);
  }
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())) != 0) {
    text.remove_suffix(1);
  }
  return text;
}

// Rejects bodies nested deeper than kMaxPatchDepth before parsing them; everything that recurses
// over a patch afterwards is bounded by this.
Status CheckNesting(std::string_view body) {
  if (JsonNestingDepth(body, internal::kMaxPatchDepth) > internal::kMaxPatchDepth) {
    return BadRequestError("the patch is nested more than " +
                           std::to_string(internal::kMaxPatchDepth) + " levels deep");
  }
  return Status::Ok();
}

// Parses a patch body. Syntax errors read like Go's for a truncated body ("unexpected end of JSON
// input") and carry nlohmann's description otherwise.
Result<json> ParseBody(std::string_view body) {
  SW_RETURN_IF_ERROR(CheckNesting(body));
  try {
    return json::parse(body.begin(), body.end());
  } catch (const json::exception& e) {  // parse_error, or out_of_range for a number overflow
    std::string_view what = e.what();
    if (what.find("unexpected end of input") != std::string_view::npos) {
      return BadRequestError("unexpected end of JSON input");
    }
    if (auto bracket = what.find("] "); bracket != std::string_view::npos) {
      what.remove_prefix(bracket + 2);
    }
    return BadRequestError("invalid JSON: " + std::string(what));
  }
}

// The word encoding/json uses for a value's JSON type in "cannot unmarshal X into ...".
std::string_view JsonTypeWord(const json& value) {
  switch (value.type()) {
    case json::value_t::object:
      return "object";
    case json::value_t::array:
      return "array";
    case json::value_t::string:
      return "string";
    case json::value_t::boolean:
      return "bool";
    default:
      return "number";
  }
}

std::string CannotUnmarshal(const json& value, std::string_view go_type) {
  return "json: cannot unmarshal " + std::string(JsonTypeWord(value)) + " into Go value of type " +
         std::string(go_type);
}

// ---- JSON merge patch (RFC 7386) ----

Result<json> ApplyMergePatch(const json& original, std::string_view body) {
  auto parsed = ParseBody(body);
  if (!parsed.ok()) return BadRequestError("error decoding patch: " + parsed.status().ToString());
  json patch = std::move(parsed).value();
  if (patch.is_null()) return BadRequestError("Invalid JSON Patch");  // jsonpatch.ErrBadJSONPatch
  if (!patch.is_object()) {
    return BadRequestError("error decoding patch: " +
                           CannotUnmarshal(patch, "map[string]interface {}"));
  }
  json result = original;
  result.merge_patch(patch);
  return result;
}

// ---- JSON patch (RFC 6902), as evanphx/json-patch v4 applies it ----

// strconv.Quote for the ASCII a path token holds; other bytes are escaped as \xNN.
std::string GoQuote(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string quoted = "\"";
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      quoted += '\\';
      quoted += c;
    } else if (byte >= 0x20 && byte < 0x7f) {
      quoted += c;
    } else {
      quoted += "\\x";
      quoted += kHex[byte >> 4];
      quoted += kHex[byte & 0xf];
    }
  }
  quoted += '"';
  return quoted;
}

// strconv.Atoi: an optional sign and decimal digits that fit an int64.
std::optional<std::int64_t> GoAtoi(std::string_view text, std::string& error) {
  std::string_view digits = text;
  bool negative = false;
  if (!digits.empty() && (digits.front() == '+' || digits.front() == '-')) {
    negative = digits.front() == '-';
    digits.remove_prefix(1);
  }
  if (digits.empty()) {
    error = "strconv.Atoi: parsing " + GoQuote(text) + ": invalid syntax";
    return std::nullopt;
  }
  std::uint64_t magnitude = 0;
  bool overflow = false;
  for (const char c : digits) {
    if (c < '0' || c > '9') {
      error = "strconv.Atoi: parsing " + GoQuote(text) + ": invalid syntax";
      return std::nullopt;
    }
    if (magnitude > (UINT64_MAX - 9) / 10) overflow = true;
    if (!overflow) magnitude = magnitude * 10 + static_cast<std::uint64_t>(c - '0');
  }
  const std::uint64_t limit = negative ? std::uint64_t{1} << 63 : (std::uint64_t{1} << 63) - 1;
  if (overflow || magnitude > limit) {
    error = "strconv.Atoi: parsing " + GoQuote(text) + ": value out of range";
    return std::nullopt;
  }
  if (negative) return magnitude == limit ? INT64_MIN : -static_cast<std::int64_t>(magnitude);
  return static_cast<std::int64_t>(magnitude);
}

std::string InvalidIndex(std::int64_t index) {
  return "Unable to access invalid index: " + std::to_string(index) + ": invalid index referenced";
}

// RFC 6901 token decoding: "~1" is "/", "~0" is "~".
std::string DecodePatchKey(std::string_view token) {
  std::string key;
  key.reserve(token.size());
  for (std::size_t i = 0; i < token.size(); ++i) {
    if (token[i] == '~' && i + 1 < token.size() && (token[i + 1] == '1' || token[i + 1] == '0')) {
      key += token[i + 1] == '1' ? '/' : '~';
      ++i;
    } else {
      key += token[i];
    }
  }
  return key;
}

std::vector<std::string_view> SplitPath(std::string_view path) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) {
      parts.push_back(path.substr(start));
      return parts;
    }
    parts.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
}

// One container lookup: the value (nullptr for a JSON null), or an error; `missing` marks
// upstream's ErrMissing, which "test" tolerates.
struct Lookup {
  json* value = nullptr;
  std::string error;
  bool missing = false;
};

// partialArray's index rule: negative indices count from the end.
std::optional<std::size_t> ArrayIndex(std::int64_t index, std::size_t size, std::string& error) {
  const auto length = static_cast<std::int64_t>(size);
  if (index < 0) {
    if (index < -length) {
      error = InvalidIndex(index);
      return std::nullopt;
    }
    index += length;
  }
  if (index >= length) {
    error = InvalidIndex(index);
    return std::nullopt;
  }
  return static_cast<std::size_t>(index);
}

Lookup Get(json& container, const std::string& key) {
  Lookup lookup;
  if (container.is_object()) {
    auto it = container.find(key);
    if (it == container.end()) {
      lookup.error = "unable to get nonexistent key: " + key + ": missing value";
      lookup.missing = true;
    } else if (!it->is_null()) {
      lookup.value = &*it;
    }
    return lookup;
  }
  std::optional<std::int64_t> index = GoAtoi(key, lookup.error);
  if (!index) return lookup;
  std::optional<std::size_t> position = ArrayIndex(*index, container.size(), lookup.error);
  if (position && !container[*position].is_null()) lookup.value = &container[*position];
  return lookup;
}

// partialDoc.add / partialArray.add.
std::string Add(json& container, const std::string& key, json value) {
  if (container.is_object()) {
    container[key] = std::move(value);
    return "";
  }
  if (key == "-") {
    container.push_back(std::move(value));
    return "";
  }
  std::string error;
  std::optional<std::int64_t> index = GoAtoi(key, error);
  if (!index) return "value was not a proper array index: '" + key + "': " + error;
  const auto size = static_cast<std::int64_t>(container.size()) + 1;
  std::int64_t position = *index;
  if (position >= size) return InvalidIndex(position);
  if (position < 0) {
    if (position < -size) return InvalidIndex(position);
    position += size;
  }
  container.insert(container.begin() + position, std::move(value));
  return "";
}

// partialDoc.remove / partialArray.remove.
std::string Remove(json& container, const std::string& key) {
  if (container.is_object()) {
    if (container.erase(key) == 0) {
      return "unable to remove nonexistent key: " + key + ": missing value";
    }
    return "";
  }
  std::string error;
  std::optional<std::int64_t> index = GoAtoi(key, error);
  if (!index) return error;
  std::optional<std::size_t> position = ArrayIndex(*index, container.size(), error);
  if (!position) return error;
  container.erase(container.begin() + static_cast<std::ptrdiff_t>(*position));
  return "";
}

// findObject: the container that holds the last token of `path`, with that token decoded;
// nullptr when a parent is missing, null or a scalar.
json* FindObject(json& doc, std::string_view path, std::string& key) {
  const std::vector<std::string_view> parts = SplitPath(path);
  if (parts.size() < 2) return nullptr;
  json* current = &doc;
  for (std::size_t i = 1; i + 1 < parts.size(); ++i) {
    Lookup next = Get(*current, DecodePatchKey(parts[i]));
    if (next.value == nullptr || !next.value->is_structured()) return nullptr;
    current = next.value;
  }
  key = DecodePatchKey(parts.back());
  return current;
}

class JsonPatcher final {
 public:
  explicit JsonPatcher(json doc) : doc_(std::move(doc)) {}

  // Applies one operation (an object, or null, as decoding allows). kInvalid on failure.
  Status Apply(const json& operation) {
    const std::string kind = Field(operation, "op").value_or("unknown");
    std::string error;
    if (kind == "add") {
      error = AddOp(operation);
    } else if (kind == "remove") {
      error = RemoveOp(operation);
    } else if (kind == "replace") {
      error = ReplaceOp(operation);
    } else if (kind == "move") {
      error = MoveOp(operation);
    } else if (kind == "test") {
      error = TestOp(operation);
    } else if (kind == "copy") {
      error = CopyOp(operation);
    } else {
      error = "Unexpected kind: " + kind;
    }
    if (error.empty()) return Status::Ok();
    return InvalidError(std::move(error));
  }

  json& doc() { return doc_; }

 private:
  // A string member ("op", "path", "from"); nullopt when absent or null.
  static std::optional<std::string> Field(const json& operation, std::string_view name) {
    if (!operation.is_object()) return std::nullopt;
    auto it = operation.find(name);
    if (it == operation.end() || !it->is_string()) return std::nullopt;
    return it->get<std::string>();
  }
  // The "value" member; null when absent.
  static json Value(const json& operation) {
    if (!operation.is_object()) return nullptr;
    auto it = operation.find("value");
    return it == operation.end() ? json(nullptr) : *it;
  }
  static bool HasValue(const json& operation) {
    return operation.is_object() && operation.contains("value");
  }

  std::string AddOp(const json& operation) {
    const std::optional<std::string> path = Field(operation, "path");
    if (!path) return "add operation failed to decode path: missing value";
    std::string key;
    json* container = FindObject(doc_, *path, key);
    if (container == nullptr) {
      return "add operation does not apply: doc is missing path: \"" + *path + "\": missing value";
    }
    std::string error = Add(*container, key, Value(operation));
    if (!error.empty()) return "error in add for path: '" + *path + "': " + error;
    return "";
  }

  std::string RemoveOp(const json& operation) {
    const std::optional<std::string> path = Field(operation, "path");
    if (!path) return "remove operation failed to decode path: missing value";
    std::string key;
    json* container = FindObject(doc_, *path, key);
    if (container == nullptr) {
      return "remove operation does not apply: doc is missing path: \"" + *path +
             "\": missing value";
    }
    std::string error = Remove(*container, key);
    if (!error.empty()) return "error in remove for path: '" + *path + "': " + error;
    return "";
  }

  std::string ReplaceOp(const json& operation) {
    const std::optional<std::string> path = Field(operation, "path");
    if (!path) {
      return "replace operation failed to decode path: operation missing path field: missing "
             "value";
    }
    if (path->empty()) {
      // Upstream replaces the whole document with an object or an array and silently ignores
      // anything else.
      json value = Value(operation);
      if (value.is_structured()) doc_ = std::move(value);
      return "";
    }
    std::string key;
    json* container = FindObject(doc_, *path, key);
    if (container == nullptr) {
      return "replace operation does not apply: doc is missing path: " + *path + ": missing value";
    }
    if (!Get(*container, key).error.empty()) {
      return "replace operation does not apply: doc is missing key: " + *path + ": missing value";
    }
    if (container->is_object()) {
      (*container)[key] = Value(operation);
    } else {
      std::string error;
      const std::optional<std::size_t> position =
          ArrayIndex(GoAtoi(key, error).value_or(0), container->size(), error);
      if (position) (*container)[*position] = Value(operation);
    }
    return "";
  }

  std::string MoveOp(const json& operation) {
    const std::optional<std::string> from = Field(operation, "from");
    if (!from) {
      return "move operation failed to decode from: operation, missing from field: missing value";
    }
    std::string key;
    json* container = FindObject(doc_, *from, key);
    if (container == nullptr) {
      return "move operation does not apply: doc is missing from path: " + *from +
             ": missing value";
    }
    Lookup source = Get(*container, key);
    if (!source.error.empty()) return "error in move for path: '" + key + "': " + source.error;
    json value = source.value == nullptr ? json(nullptr) : std::move(*source.value);
    std::string error = Remove(*container, key);
    if (!error.empty()) return "error in move for path: '" + key + "': " + error;
    const std::optional<std::string> path = Field(operation, "path");
    if (!path) {
      return "move operation failed to decode path: operation missing path field: missing value";
    }
    container = FindObject(doc_, *path, key);
    if (container == nullptr) {
      return "move operation does not apply: doc is missing destination path: " + *path +
             ": missing value";
    }
    error = Add(*container, key, std::move(value));
    if (!error.empty()) return "error in move for path: '" + *path + "': " + error;
    return "";
  }

  std::string TestOp(const json& operation) {
    const std::optional<std::string> path = Field(operation, "path");
    if (!path) {
      return "test operation failed to decode path: operation missing path field: missing value";
    }
    std::string failed = "testing value " + *path + " failed: test failed";
    if (path->empty()) return doc_ == Value(operation) ? "" : failed;
    std::string key;
    json* container = FindObject(doc_, *path, key);
    if (container == nullptr) {
      return "test operation does not apply: is missing path: " + *path + ": missing value";
    }
    Lookup target = Get(*container, key);
    if (!target.error.empty() && !target.missing) {
      return "error in test for path: '" + *path + "': " + target.error;
    }
    if (target.value == nullptr) {
      // A missing or null value matches a null (or, where upstream panics, an absent) value.
      return Value(operation).is_null() ? "" : failed;
    }
    if (!HasValue(operation)) return failed;
    return *target.value == Value(operation) ? "" : failed;
  }

  std::string CopyOp(const json& operation) {
    const std::optional<std::string> from = Field(operation, "from");
    if (!from) {
      return "copy operation failed to decode from: operation, missing from field: missing value";
    }
    std::string key;
    json* container = FindObject(doc_, *from, key);
    if (container == nullptr) {
      return "copy operation does not apply: doc is missing from path: " + *from +
             ": missing value";
    }
    Lookup source = Get(*container, key);
    if (!source.error.empty()) return "error in copy for from: '" + *from + "': " + source.error;
    const std::optional<std::string> path = Field(operation, "path");
    if (!path) return "copy operation failed to decode path: missing value";
    json* destination = FindObject(doc_, *path, key);
    if (destination == nullptr) {
      return "copy operation does not apply: doc is missing destination path: " + *path +
             ": missing value";
    }
    json value = nullptr;
    if (source.value != nullptr) {
      // Copies can nest the document without bound; check before anything recurses over it.
      if (internal::JsonDepth(*source.value) + static_cast<int>(SplitPath(*path).size()) >
          internal::kMaxPatchDepth) {
        return "copy operation would nest the document more than " +
               std::to_string(internal::kMaxPatchDepth) + " levels deep";
      }
      copied_bytes_ += static_cast<std::int64_t>(
          source.value->dump(-1, ' ', false, json::error_handler_t::replace).size());
      if (copied_bytes_ > kMaxJsonPatchCopyBytes) {
        return "Unable to complete the copy, the accumulated size increase of copy is " +
               std::to_string(copied_bytes_) + ", exceeding the limit " +
               std::to_string(kMaxJsonPatchCopyBytes);
      }
      value = *source.value;
    }
    std::string error = Add(*destination, key, std::move(value));
    if (!error.empty()) return "error while adding value during copy: " + error;
    return "";
  }

  json doc_;
  std::int64_t copied_bytes_ = 0;
};

// Upstream decodes the body into []handlers.jsonPatchOp first (strict decoding), so shape errors
// read as encoding/json's.
Status CheckJsonPatchShape(const json& patch) {
  if (patch.is_null()) return Status::Ok();
  if (!patch.is_array()) {
    return BadRequestError("error decoding patch: " +
                           CannotUnmarshal(patch, "[]handlers.jsonPatchOp"));
  }
  for (const json& operation : patch) {
    if (operation.is_null()) continue;
    if (!operation.is_object()) {
      return BadRequestError("error decoding patch: " +
                             CannotUnmarshal(operation, "handlers.jsonPatchOp"));
    }
    for (const std::string_view name : {"op", "path", "from"}) {
      auto it = operation.find(name);
      if (it != operation.end() && !it->is_null() && !it->is_string()) {
        return BadRequestError(
            "error decoding patch: json: cannot unmarshal " + std::string(JsonTypeWord(*it)) +
            " into Go struct field jsonPatchOp." + std::string(name) + " of type string");
      }
    }
  }
  if (patch.size() > kMaxJsonPatchOperations) {
    // Upstream answers 413 RequestEntityTooLarge, which Status has no code for.
    return BadRequestError(
        "Request entity too large: The allowed maximum operations in a JSON patch is " +
        std::to_string(kMaxJsonPatchOperations) + ", got " + std::to_string(patch.size()));
  }
  return Status::Ok();
}

Result<json> ApplyJsonPatch(const json& original, std::string_view body) {
  auto parsed = ParseBody(body);
  if (!parsed.ok()) return BadRequestError("error decoding patch: " + parsed.status().ToString());
  const json patch = std::move(parsed).value();
  SW_RETURN_IF_ERROR(CheckJsonPatchShape(patch));
  JsonPatcher patcher(original);
  if (patch.is_array()) {
    for (const json& operation : patch) SW_RETURN_IF_ERROR(patcher.Apply(operation));
  }
  // Moves can deepen the document too; nothing below has recursed over it yet.
  if (internal::JsonDepth(patcher.doc()) > internal::kMaxPatchDepth) {
    return InvalidError("the patched object is nested more than " +
                        std::to_string(internal::kMaxPatchDepth) + " levels deep");
  }
  if (!patcher.doc().is_object()) {
    return BadRequestError(CannotUnmarshal(patcher.doc(), "map[string]interface {}"));
  }
  return std::move(patcher.doc());
}

// ---- Strategic merge patch ----

Result<json> ApplyStrategicMergePatch(const json& original, std::string_view body,
                                      std::string_view api_version, std::string_view kind) {
  const internal::PatchSchema* schema = internal::FindPatchSchema(api_version, kind);
  if (schema == nullptr) return UnsupportedMediaType(/*strategic=*/false);
  SW_ASSIGN_OR_RETURN(json patch, ParseBody(body));
  // encoding/json decodes null into a map as "no change".
  if (patch.is_null()) patch = json::object();
  if (!patch.is_object()) return BadRequestError(CannotUnmarshal(patch, "map[string]interface {}"));
  if (!original.is_object()) return InternalError("the object to patch is not a JSON object");
  json result = original;
  SW_RETURN_IF_ERROR(internal::StrategicMerge(result, std::move(patch), *schema));
  return result;
}

}  // namespace

Result<PatchType> PatchTypeFromContentType(std::string_view content_type) {
  std::string_view media_type = content_type.substr(0, content_type.find(';'));
  media_type = Trim(media_type);
  std::string lower(media_type);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == kJsonPatchMediaType) return PatchType::kJsonPatch;
  if (lower == kMergePatchMediaType) return PatchType::kMergePatch;
  if (lower == kStrategicMergePatchMediaType) return PatchType::kStrategicMergePatch;
  if (lower == kApplyPatchMediaType) return PatchType::kApplyPatch;
  return UnsupportedMediaType(/*strategic=*/true);
}

bool SupportsStrategicMergePatch(std::string_view api_version, std::string_view kind) {
  return internal::FindPatchSchema(api_version, kind) != nullptr;
}

Result<json> ApplyPatch(const json& original, std::string_view patch, PatchType type,
                        std::string_view api_version, std::string_view kind) {
  try {
    switch (type) {
      case PatchType::kJsonPatch:
        return ApplyJsonPatch(original, patch);
      case PatchType::kMergePatch:
        return ApplyMergePatch(original, patch);
      case PatchType::kStrategicMergePatch:
        return ApplyStrategicMergePatch(original, patch, api_version, kind);
      case PatchType::kApplyPatch:
        break;
    }
    // Server-side apply is not served: answer as kube-apiserver does without it.
    return UnsupportedMediaType(SupportsStrategicMergePatch(api_version, kind));
  } catch (const json::exception& e) {
    return InternalError(std::string("applying the patch: ") + e.what());
  } catch (const std::exception& e) {
    return InternalError(std::string("applying the patch: ") + e.what());
  }
}

}  // namespace slicewright::apiserver

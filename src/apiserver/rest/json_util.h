// JSON helpers for the REST layer: bounded, exception-free parsing of request bodies and stored
// objects, exception-free serialization, and typed accessors that never throw on a wrong type.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "slicewright/base/result.h"

namespace slicewright::apiserver {

using Json = nlohmann::json;

// The deepest nesting a request body may have; deeper bodies are refused before parsing (the
// parser recurses, and a 3 MiB body of '[' would exhaust the stack).
inline constexpr int kMaxJsonDepth = 1000;

// Parses `text`. kBadRequest naming `what` for invalid JSON, invalid UTF-8 or nesting deeper than
// kMaxJsonDepth. Never throws.
Result<Json> ParseJson(std::string_view text, std::string_view what);
// Serializes compactly; invalid UTF-8 in strings is replaced, never thrown on.
std::string DumpJson(const Json& value);

// The string at `key` of an object, or nullptr when `object` is not an object, the key is absent
// or the value is not a string.
const std::string* StringField(const Json& object, std::string_view key);
// The string at `key`, or "" (same rules as StringField).
std::string StringOr(const Json& object, std::string_view key, std::string_view fallback = "");
// The integer at `key`, or nullopt.
std::optional<std::int64_t> IntField(const Json& object, std::string_view key);
// The object at `key`, or nullptr when absent or not an object.
const Json* ObjectField(const Json& object, std::string_view key);
Json* ObjectField(Json& object, std::string_view key);
// The array at `key`, or nullptr when absent or not an array.
const Json* ArrayField(const Json& object, std::string_view key);
Json* ArrayField(Json& object, std::string_view key);
// The object at `key`, created empty when absent or null. Fails (returns nullptr) when `object`
// is not an object or the value there is not an object.
Json* EnsureObject(Json& object, std::string_view key);

// A meta/v1 Status object for a failed request: message, reason (StatusCodeReason) and code (the
// HTTP status).
Json FailureStatus(const Status& status);

// metadata of an object (nullptr when absent or not an object).
const Json* Metadata(const Json& object);
Json* Metadata(Json& object);

}  // namespace slicewright::apiserver

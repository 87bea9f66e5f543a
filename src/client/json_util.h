// The client's one nlohmann adapter: parsing, dumping and typed field reads that never throw.
// Every other file of src/client reads JSON through these functions. Pure and reentrant.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "slicewright/base/result.h"

namespace slicewright::client::internal {

// Parses one JSON document. kBadRequest "malformed JSON: <nlohmann's message>" on error. The
// message names only the byte offset and token kind, never the input (it may hold a token).
Result<nlohmann::json> ParseJson(std::string_view text);

// Compact JSON text; invalid UTF-8 in strings is replaced by U+FFFD. Never fails.
std::string DumpJson(const nlohmann::json& value);

// The member `key` of `object` when `object` is an object holding `key` with a non-null value;
// nullptr otherwise (Go's encoding/json treats null as absent).
const nlohmann::json* Member(const nlohmann::json& object, std::string_view key);

// Typed reads of an optional member: absent or null leaves `out` unchanged; a value of another
// type is kBadRequest "expected string" (bool, list of strings, object) with field() ".<key>".
Status ReadString(const nlohmann::json& object, std::string_view key, std::string& out);
Status ReadBool(const nlohmann::json& object, std::string_view key, bool& out);
Status ReadStringList(const nlohmann::json& object, std::string_view key,
                      std::vector<std::string>& out);
// Requires an object (or absent/null, giving nullptr in `out`).
Status ReadObject(const nlohmann::json& object, std::string_view key, const nlohmann::json*& out);
// Requires a list (or absent/null, giving nullptr in `out`).
Status ReadList(const nlohmann::json& object, std::string_view key, const nlohmann::json*& out);

}  // namespace slicewright::client::internal

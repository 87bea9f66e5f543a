#include "apiserver/rest/json_util.h"

#include <exception>
#include <string>

namespace slicewright::apiserver {
namespace {

// Returns the deepest array/object nesting of `text`, stopping early once past `limit`.
int NestingDepth(std::string_view text, int limit) {
  int depth = 0;
  int deepest = 0;
  bool in_string = false;
  bool escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      ++depth;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > limit) {
          return deepest;
        }
      }
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

}  // namespace

Result<Json> ParseJson(std::string_view text, std::string_view what) {
  if (NestingDepth(text, kMaxJsonDepth) > kMaxJsonDepth) {
    return BadRequestError(std::string(what) + ": JSON nested deeper than " +
                           std::to_string(kMaxJsonDepth) + " levels");
  }
  try {
    Json parsed = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/true,
                              /*ignore_comments=*/false);
    return parsed;
  } catch (const std::exception& e) {
    return BadRequestError(std::string(what) + ": invalid JSON: " + e.what());
  }
}

std::string DumpJson(const Json& value) {
  try {
    return value.dump(-1, ' ', false, Json::error_handler_t::replace);
  } catch (const std::exception& e) {
    // Only allocation failure remains possible here.
    return "null";
  }
}

const std::string* StringField(const Json& object, std::string_view key) {
  if (!object.is_object()) {
    return nullptr;
  }
  auto it = object.find(key);
  if (it == object.end() || !it->is_string()) {
    return nullptr;
  }
  return it->get_ptr<const std::string*>();
}

std::string StringOr(const Json& object, std::string_view key, std::string_view fallback) {
  const std::string* value = StringField(object, key);
  return value != nullptr ? *value : std::string(fallback);
}

std::optional<std::int64_t> IntField(const Json& object, std::string_view key) {
  if (!object.is_object()) {
    return std::nullopt;
  }
  auto it = object.find(key);
  if (it == object.end()) {
    return std::nullopt;
  }
  if (it->is_number_integer()) {
    return it->get<std::int64_t>();
  }
  if (it->is_number_unsigned()) {
    return static_cast<std::int64_t>(it->get<std::uint64_t>());
  }
  return std::nullopt;
}

const Json* ObjectField(const Json& object, std::string_view key) {
  if (!object.is_object()) {
    return nullptr;
  }
  auto it = object.find(key);
  return it != object.end() && it->is_object() ? &*it : nullptr;
}

Json* ObjectField(Json& object, std::string_view key) {
  if (!object.is_object()) {
    return nullptr;
  }
  auto it = object.find(key);
  return it != object.end() && it->is_object() ? &*it : nullptr;
}

const Json* ArrayField(const Json& object, std::string_view key) {
  if (!object.is_object()) {
    return nullptr;
  }
  auto it = object.find(key);
  return it != object.end() && it->is_array() ? &*it : nullptr;
}

Json* ArrayField(Json& object, std::string_view key) {
  if (!object.is_object()) {
    return nullptr;
  }
  auto it = object.find(key);
  return it != object.end() && it->is_array() ? &*it : nullptr;
}

Json* EnsureObject(Json& object, std::string_view key) {
  if (!object.is_object()) {
    return nullptr;
  }
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) {
    Json& slot = object[std::string(key)];
    slot = Json::object();
    return &slot;
  }
  return it->is_object() ? &*it : nullptr;
}

const Json* Metadata(const Json& object) { return ObjectField(object, "metadata"); }
Json* Metadata(Json& object) { return ObjectField(object, "metadata"); }

}  // namespace slicewright::apiserver

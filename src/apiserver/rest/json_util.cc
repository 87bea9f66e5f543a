#include "apiserver/rest/json_util.h"

#include <exception>
#include <string>

#include "apiserver/api/json_depth.h"

namespace slicewright::apiserver {

Result<Json> ParseJson(std::string_view text, std::string_view what) {
  if (JsonNestingDepth(text, kMaxJsonDepth) > kMaxJsonDepth) {
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

Json FailureStatus(const Status& status) {
  return {{"kind", "Status"},
          {"apiVersion", "v1"},
          {"metadata", Json::object()},
          {"status", "Failure"},
          {"message", std::string(status.message())},
          {"reason", std::string(StatusCodeReason(status.code()))},
          {"code", StatusCodeHttp(status.code())}};
}

const Json* Metadata(const Json& object) { return ObjectField(object, "metadata"); }
Json* Metadata(Json& object) { return ObjectField(object, "metadata"); }

}  // namespace slicewright::apiserver

#include "client/json_util.h"

#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "slicewright/base/status.h"

namespace slicewright::client::internal {
namespace {

Status WrongType(std::string_view key, std::string_view expected) {
  Status status = BadRequestError("expected " + std::string(expected));
  status.WithFieldPrefix("." + std::string(key));
  return status;
}

}  // namespace

Result<nlohmann::json> ParseJson(std::string_view text) {
  try {
    return nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    // nlohmann's parse_error text names the byte and the last token read, which for a string
    // token can hold part of a secret: report the byte offset only.
    return BadRequestError("malformed JSON at byte " + std::to_string(e.byte));
  } catch (const std::exception& e) {
    return BadRequestError(std::string("malformed JSON: ") + e.what());
  }
}

std::string DumpJson(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

const nlohmann::json* Member(const nlohmann::json& object, std::string_view key) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(std::string(key));
  if (it == object.end() || it->is_null()) return nullptr;
  return &*it;
}

Status ReadString(const nlohmann::json& object, std::string_view key, std::string& out) {
  const nlohmann::json* value = Member(object, key);
  if (value == nullptr) return Status();
  if (!value->is_string()) return WrongType(key, "string");
  out = value->get_ref<const std::string&>();
  return Status();
}

Status ReadBool(const nlohmann::json& object, std::string_view key, bool& out) {
  const nlohmann::json* value = Member(object, key);
  if (value == nullptr) return Status();
  if (!value->is_boolean()) return WrongType(key, "boolean");
  out = value->get_ref<const nlohmann::json::boolean_t&>();
  return Status();
}

Status ReadStringList(const nlohmann::json& object, std::string_view key,
                      std::vector<std::string>& out) {
  const nlohmann::json* value = Member(object, key);
  if (value == nullptr) return Status();
  if (!value->is_array()) return WrongType(key, "list of strings");
  std::vector<std::string> items;
  for (std::size_t i = 0; i < value->size(); ++i) {
    const nlohmann::json& item = (*value)[i];
    if (!item.is_string()) {
      return WrongType(std::string(key) + "[" + std::to_string(i) + "]", "string");
    }
    items.push_back(item.get_ref<const std::string&>());
  }
  out = std::move(items);
  return Status();
}

Status ReadObject(const nlohmann::json& object, std::string_view key, const nlohmann::json*& out) {
  out = Member(object, key);
  if (out != nullptr && !out->is_object()) {
    out = nullptr;
    return WrongType(key, "object");
  }
  return Status();
}

Status ReadList(const nlohmann::json& object, std::string_view key, const nlohmann::json*& out) {
  out = Member(object, key);
  if (out != nullptr && !out->is_array()) {
    out = nullptr;
    return WrongType(key, "list");
  }
  return Status();
}

}  // namespace slicewright::client::internal

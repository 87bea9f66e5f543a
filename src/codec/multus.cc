// Multus annotations: a simdjson walk for the JSON forms, plain string building for the
// network-status we write (a fixed, small shape).

#include "slicewright/codec/multus.h"

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <simdjson.h>

#include "slicewright/base/status.h"
#include "slicewright/labels/validation.h"

#include "codec/internal.h"

namespace slicewright::codec {
namespace {

using simdjson::dom::element;

std::string_view Trim(std::string_view text) {
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const std::size_t last = text.find_last_not_of(" \t\r\n");
  return text.substr(first, last - first + 1);
}

// Multus requires names and namespaces to be DNS-1123 labels; the first problem is reported.
Status CheckLabel(std::string_view what, std::string_view value) {
  const std::vector<std::string> problems = labels::IsDNS1123Label(value);
  if (problems.empty()) return Status();
  return BadRequestError(std::string(what) + " \"" + std::string(value) +
                         "\": " + problems.front());
}

Status CheckSelection(const NetworkSelection& selection) {
  if (selection.name.empty()) return BadRequestError("empty network name");
  SW_RETURN_IF_ERROR(CheckLabel("network name", selection.name));
  if (!selection.namespace_.empty()) {
    SW_RETURN_IF_ERROR(CheckLabel("namespace", selection.namespace_));
  }
  return Status();
}

// "ns/name@iface", one item of the comma-separated form.
Result<NetworkSelection> ParseTextItem(std::string_view item) {
  NetworkSelection out;
  std::string_view rest = item;
  if (const std::size_t at = rest.find('@'); at != std::string_view::npos) {
    if (rest.find('@', at + 1) != std::string_view::npos) {
      return BadRequestError("more than one '@'");
    }
    out.interface_name = std::string(rest.substr(at + 1));
    if (out.interface_name.empty()) return BadRequestError("empty interface name after '@'");
    rest = rest.substr(0, at);
  }
  if (const std::size_t slash = rest.find('/'); slash != std::string_view::npos) {
    if (rest.find('/', slash + 1) != std::string_view::npos) {
      return BadRequestError("more than one '/'");
    }
    out.namespace_ = std::string(rest.substr(0, slash));
    if (out.namespace_.empty()) return BadRequestError("empty namespace before '/'");
    rest = rest.substr(slash + 1);
  }
  out.name = std::string(rest);
  SW_RETURN_IF_ERROR(CheckSelection(out));
  return out;
}

Status Expected(std::string_view what) { return BadRequestError("expected " + std::string(what)); }

Status ReadString(element value, std::string& out) {
  std::string_view text;
  if (value.get_string().get(text) != simdjson::SUCCESS) return Expected("string");
  out = std::string(text);
  return Status();
}

Result<element> ParseRoot(simdjson::dom::parser& parser, std::string_view text) {
  element root;
  const simdjson::error_code error = parser.parse(text.data(), text.size()).get(root);
  if (error != simdjson::SUCCESS) {
    return BadRequestError(std::string("malformed JSON: ") + simdjson::error_message(error));
  }
  if (!root.is_array()) return Expected("a JSON list");
  return root;
}

std::string Indexed(std::size_t index) { return "[" + std::to_string(index) + "]"; }

Status AtPrefix(Status status, std::string_view prefix) {
  status.WithFieldPrefix(prefix);
  return status;
}

Result<std::vector<NetworkSelection>> ParseJsonSelections(std::string_view annotation) {
  simdjson::dom::parser parser;
  SW_ASSIGN_OR_RETURN(element root, ParseRoot(parser, annotation));
  std::vector<NetworkSelection> out;
  std::size_t index = 0;
  // A named copy: value_unsafe() refers into the temporary simdjson_result.
  const simdjson::dom::array items = root.get_array().value_unsafe();
  for (const element item : items) {
    simdjson::dom::object object;
    if (item.get_object().get(object) != simdjson::SUCCESS) {
      return AtPrefix(Expected("object"), Indexed(index));
    }
    NetworkSelection selection;
    for (const simdjson::dom::key_value_pair field : object) {
      std::string* target = nullptr;
      if (field.key == "name") target = &selection.name;
      if (field.key == "namespace") target = &selection.namespace_;
      if (field.key == "interface") target = &selection.interface_name;
      if (target == nullptr) continue;
      Status status = ReadString(field.value, *target);
      if (!status.ok()) {
        return AtPrefix(AtPrefix(std::move(status), "." + std::string(field.key)), Indexed(index));
      }
    }
    Status status = CheckSelection(selection);
    if (!status.ok()) return AtPrefix(std::move(status), Indexed(index));
    out.push_back(std::move(selection));
    ++index;
  }
  return out;
}

}  // namespace

Result<std::vector<NetworkSelection>> ParseNetworkSelections(std::string_view annotation) {
  const std::string_view text = Trim(annotation);
  if (text.empty()) return std::vector<NetworkSelection>{};
  if (text.front() == '[') return ParseJsonSelections(text);
  std::vector<NetworkSelection> out;
  std::size_t begin = 0;
  for (int index = 1;; ++index) {
    const std::size_t comma = text.find(',', begin);
    const std::string_view raw = text.substr(
        begin, comma == std::string_view::npos ? std::string_view::npos : comma - begin);
    const std::string_view item = Trim(raw);
    Result<NetworkSelection> selection = ParseTextItem(item);
    if (!selection.ok()) {
      return BadRequestError("item " + std::to_string(index) + " (\"" + std::string(item) +
                             "\"): " + std::string(selection.status().message()));
    }
    out.push_back(std::move(selection).value());
    if (comma == std::string_view::npos) break;
    begin = comma + 1;
  }
  return out;
}

std::string EncodeNetworkStatusAnnotation(const std::vector<model::NetworkStatus>& entries) {
  std::string out = "[";
  for (const model::NetworkStatus& entry : entries) {
    if (out.size() > 1) out += ',';
    out += R"({"name":)";
    internal::AppendJsonString(out, entry.name);
    out += R"(,"interface":)";
    internal::AppendJsonString(out, entry.interface);
    out += R"(,"ips":[)";
    for (std::size_t i = 0; i < entry.ips.size(); ++i) {
      if (i > 0) out += ',';
      internal::AppendJsonString(out, entry.ips[i]);
    }
    out += R"(],"mac":)";
    internal::AppendJsonString(out, entry.mac);
    if (entry.is_default) out += R"(,"default":true)";
    out += R"(,"dns":{}})";
  }
  out += ']';
  return out;
}

}  // namespace slicewright::codec

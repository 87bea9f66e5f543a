// The nlohmann adapter: every nlohmann call of the codec is in this file, and every exception it
// can raise is caught here. It encodes the objects controllers write (ordered_json, so keys come
// in the Go structs' order), prints JSON as YAML for `-o yaml`, and locates JSON syntax errors.

#include <charconv>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "slicewright/base/check.h"
#include "slicewright/base/status.h"
#include "slicewright/codec/json.h"
#include "slicewright/model/time.h"

#include "codec/internal.h"

namespace slicewright::codec {
namespace {

using Json = nlohmann::ordered_json;

// ---- Field helpers: Go's omitempty ----

void PutString(Json& object, const char* key, const std::string& value) {
  if (!value.empty()) object[key] = value;
}

// model::InlineString and model::RareString.
void PutString(Json& object, const char* key, std::string_view value) {
  if (!value.empty()) object[key] = std::string(value);
}

// `Optional`: std::optional or model::OptionalBox of std::string or model::InlineString.
template <typename Optional>
void PutOptString(Json& object, const char* key, const Optional& value) {
  if (value.has_value()) object[key] = std::string(std::string_view(*value));
}

void PutOptBool(Json& object, const char* key, const std::optional<bool>& value) {
  if (value.has_value()) object[key] = *value;
}

template <typename Int>
void PutInt(Json& object, const char* key, Int value) {
  if (value != 0) object[key] = value;
}

// metav1.Time marshals as RFC 3339 in whole seconds; an unset time is omitted.
void PutTime(Json& object, const char* key, const std::optional<model::Time>& value) {
  if (value.has_value()) object[key] = model::FormatRfc3339(*value);
}

Json StringMapJson(const model::StringMap& map) {
  Json object = Json::object();
  for (const auto& [key, value] : map) object[key] = value;
  return object;
}

void PutStringMap(Json& object, const char* key, const model::StringMap& map) {
  if (!map.empty()) object[key] = StringMapJson(map);
}

void PutStringList(Json& object, const char* key, const std::vector<std::string>& list) {
  if (!list.empty()) object[key] = list;
}

// A list written even when empty (Go fields without omitempty), as [] rather than Go's null.
template <typename T, typename ToJson>
Json ListJson(const std::vector<T>& list, ToJson&& to_json) {
  Json array = Json::array();
  for (const T& item : list) array.push_back(to_json(item));
  return array;
}

template <typename T, typename ToJson>
void PutList(Json& object, const char* key, const std::vector<T>& list, ToJson&& to_json) {
  if (!list.empty()) object[key] = ListJson(list, to_json);
}

// ---- meta/v1 ----

Json OwnerReferenceJson(const model::OwnerReference& ref) {
  Json object = Json::object();
  object["apiVersion"] = ref.api_version;
  object["kind"] = ref.kind;
  object["name"] = ref.name;
  object["uid"] = ref.uid;
  PutOptBool(object, "controller", ref.controller);
  PutOptBool(object, "blockOwnerDeletion", ref.block_owner_deletion);
  return object;
}

Json ObjectMetaJson(const model::ObjectMeta& meta) {
  Json object = Json::object();
  PutString(object, "name", meta.name);
  PutString(object, "generateName", meta.generate_name);
  PutString(object, "namespace", meta.namespace_);
  PutString(object, "uid", meta.uid);
  PutString(object, "resourceVersion", meta.resource_version);
  PutInt(object, "generation", meta.generation);
  PutTime(object, "creationTimestamp", meta.creation_timestamp);
  PutTime(object, "deletionTimestamp", meta.deletion_timestamp);
  PutStringMap(object, "labels", meta.labels);
  PutStringMap(object, "annotations", meta.annotations);
  PutList(object, "ownerReferences", meta.owner_references, OwnerReferenceJson);
  PutStringList(object, "finalizers", meta.finalizers);
  return object;
}

Json ObjectReferenceJson(const model::ObjectReference& ref) {
  Json object = Json::object();
  PutString(object, "kind", ref.kind);
  PutString(object, "namespace", ref.namespace_);
  PutString(object, "name", ref.name);
  PutString(object, "uid", ref.uid);
  PutString(object, "apiVersion", ref.api_version);
  PutString(object, "resourceVersion", ref.resource_version);
  PutString(object, "fieldPath", ref.field_path);
  return object;
}

Json TypedObject(std::string_view api_version, std::string_view kind,
                 const model::ObjectMeta& meta) {
  Json object = Json::object();
  object["apiVersion"] = api_version;
  object["kind"] = kind;
  object["metadata"] = ObjectMetaJson(meta);
  return object;
}

// ---- core/v1 ----

Json ServicePortJson(const model::ServicePort& port) {
  Json object = Json::object();
  PutString(object, "name", port.name);
  PutString(object, "protocol", port.protocol);
  PutOptString(object, "appProtocol", port.app_protocol);
  object["port"] = port.port;
  // An unset targetPort (0 or "") is left to the server, which defaults it to port.
  if (port.target_port.is_string) {
    PutString(object, "targetPort", port.target_port.string_value);
  } else {
    PutInt(object, "targetPort", port.target_port.int_value);
  }
  PutInt(object, "nodePort", port.node_port);
  return object;
}

Json ServiceSpecJson(const model::ServiceSpec& spec) {
  Json object = Json::object();
  PutList(object, "ports", spec.ports, ServicePortJson);
  // An empty selector is written as {} (it selects every pod); no selector at all is omitted.
  if (spec.selector.has_value()) object["selector"] = StringMapJson(*spec.selector);
  PutString(object, "clusterIP", spec.cluster_ip);
  PutStringList(object, "clusterIPs", spec.cluster_ips);
  PutString(object, "type", spec.type);
  PutString(object, "sessionAffinity", spec.session_affinity);
  if (spec.session_affinity_config.has_value()) {
    Json config = Json::object();
    if (spec.session_affinity_config->client_ip.has_value()) {
      Json client_ip = Json::object();
      if (spec.session_affinity_config->client_ip->timeout_seconds.has_value()) {
        client_ip["timeoutSeconds"] = *spec.session_affinity_config->client_ip->timeout_seconds;
      }
      config["clientIP"] = std::move(client_ip);
    }
    object["sessionAffinityConfig"] = std::move(config);
  }
  PutString(object, "externalName", spec.external_name);
  PutString(object, "externalTrafficPolicy", spec.external_traffic_policy);
  if (spec.publish_not_ready_addresses) object["publishNotReadyAddresses"] = true;
  PutStringList(object, "ipFamilies", spec.ip_families);
  PutString(object, "ipFamilyPolicy", spec.ip_family_policy);
  PutString(object, "internalTrafficPolicy", spec.internal_traffic_policy);
  PutOptString(object, "trafficDistribution", spec.traffic_distribution);
  return object;
}

Json ContainerPortJson(const model::ContainerPort& port) {
  Json object = Json::object();
  PutString(object, "name", port.name);
  PutInt(object, "hostPort", port.host_port);
  object["containerPort"] = port.container_port;
  PutString(object, "protocol", port.protocol);
  PutString(object, "hostIP", port.host_ip);
  return object;
}

Json ContainerJson(const model::Container& container) {
  Json object = Json::object();
  object["name"] = container.name;
  PutString(object, "image", container.image);
  PutList(object, "ports", container.ports, ContainerPortJson);
  PutOptString(object, "restartPolicy", container.restart_policy);
  return object;
}

Json ConditionJson(const model::PodCondition& condition) {
  Json object = Json::object();
  object["type"] = condition.type;
  object["status"] = condition.status;
  PutTime(object, "lastTransitionTime", condition.last_transition_time);
  PutString(object, "reason", condition.reason);
  PutString(object, "message", condition.message);
  return object;
}

Json PodIpJson(const std::string& ip) {
  Json object = Json::object();
  object["ip"] = ip;
  return object;
}

Json EndpointAddressJson(const model::EndpointAddress& address) {
  Json object = Json::object();
  object["ip"] = address.ip;
  PutString(object, "hostname", address.hostname);
  PutOptString(object, "nodeName", address.node_name);
  if (address.target_ref.has_value())
    object["targetRef"] = ObjectReferenceJson(*address.target_ref);
  return object;
}

Json CoreEndpointPortJson(const model::CoreEndpointPort& port) {
  Json object = Json::object();
  PutString(object, "name", port.name);
  object["port"] = port.port;
  PutString(object, "protocol", port.protocol);
  PutOptString(object, "appProtocol", port.app_protocol);
  return object;
}

Json EndpointSubsetJson(const model::EndpointSubset& subset) {
  Json object = Json::object();
  PutList(object, "addresses", subset.addresses, EndpointAddressJson);
  PutList(object, "notReadyAddresses", subset.not_ready_addresses, EndpointAddressJson);
  PutList(object, "ports", subset.ports, CoreEndpointPortJson);
  return object;
}

// ---- discovery.k8s.io/v1 ----

Json NameRefJson(const std::string& name) {
  Json object = Json::object();
  object["name"] = name;
  return object;
}

Json EndpointJson(const model::Endpoint& endpoint) {
  Json object = Json::object();
  object["addresses"] = endpoint.addresses;
  // Conditions are always an object, each one a JSON boolean when set (an unset one is "unknown").
  Json conditions = Json::object();
  PutOptBool(conditions, "ready", endpoint.conditions.ready);
  PutOptBool(conditions, "serving", endpoint.conditions.serving);
  PutOptBool(conditions, "terminating", endpoint.conditions.terminating);
  object["conditions"] = std::move(conditions);
  PutOptString(object, "hostname", endpoint.hostname);
  if (endpoint.target_ref.has_value()) {
    object["targetRef"] = ObjectReferenceJson(*endpoint.target_ref);
  }
  PutOptString(object, "nodeName", endpoint.node_name);
  PutOptString(object, "zone", endpoint.zone);
  if (endpoint.hints.has_value()) {
    Json hints = Json::object();
    PutList(hints, "forZones", endpoint.hints->for_zones, NameRefJson);
    PutList(hints, "forNodes", endpoint.hints->for_nodes, NameRefJson);
    object["hints"] = std::move(hints);
  }
  return object;
}

// Every field of a discovery/v1 EndpointPort is optional: unset ones are left out, never sent as
// "" or 0 (an empty name and a nil name are different ports to the API).
Json EndpointPortJson(const model::EndpointPort& port) {
  Json object = Json::object();
  PutOptString(object, "name", port.name);
  PutOptString(object, "protocol", port.protocol);
  if (port.port.has_value()) object["port"] = *port.port;
  PutOptString(object, "appProtocol", port.app_protocol);
  return object;
}

// Serializes without throwing: invalid UTF-8 in a string becomes U+FFFD instead of an exception.
// Building an ordered_json from our types cannot raise a json::exception; if it ever does, that is
// a bug, counted and reported, and the result is empty.
template <typename Build>
std::string Dump(Build&& build) {
  try {
    return build().dump(-1, ' ', false, Json::error_handler_t::replace);
  } catch (const Json::exception& e) {
    SW_BUG(e.what());
    return std::string();
  }
}

// ---- Streaming: the EndpointSlice, the object every sync writes ----

// Writes JSON text directly, for the kinds whose document would cost more than the work that
// produced them (a 100-endpoint EndpointSlice took 233-244 us through ordered_json, about 2.4 us
// per endpoint, more than ten times the reconcile; docs/performance.md). Same output as Dump() of
// the document, byte for byte (the tests compare them): keys in the same order, Go's omitempty,
// compact. Text that needs no escaping (printable ASCII without '"' or '\\': names, IPs, UIDs) is
// copied as it is; anything else goes through nlohmann's serializer, so escaping and invalid UTF-8
// stay nlohmann's.
class JsonStream {
 public:
  void BeginObject() { Open('{'); }
  void EndObject() { Close('}'); }
  void BeginArray() { Open('['); }
  void EndArray() { Close(']'); }

  void Key(std::string_view key) {
    Separate();
    Quoted(key);
    out_ += ':';
    need_comma_ = false;
  }
  void String(std::string_view text) {
    Separate();
    Quoted(text);
  }
  void Bool(bool value) {
    Separate();
    out_ += value ? "true" : "false";
  }
  template <typename Number>
  void Integer(Number value) {
    Separate();
    char digits[24];
    const auto [end, error] = std::to_chars(digits, digits + sizeof(digits), value);
    SW_CHECK(error == std::errc());
    out_.append(digits, end);
  }

  // Go's omitempty, as the Put* helpers above.
  void NonEmptyString(std::string_view key, std::string_view value) {
    if (value.empty()) return;
    Key(key);
    String(value);
  }
  template <typename Optional>
  void OptString(std::string_view key, const Optional& value) {
    if (!value.has_value()) return;
    Key(key);
    String(std::string_view(*value));
  }
  void OptBool(std::string_view key, const std::optional<bool>& value) {
    if (!value.has_value()) return;
    Key(key);
    Bool(*value);
  }
  template <typename Number>
  void Int(std::string_view key, Number value) {
    Key(key);
    Integer(value);
  }

  void Reserve(std::size_t bytes) { out_.reserve(bytes); }
  std::string Take() { return std::move(out_); }

 private:
  void Separate() {
    if (need_comma_) out_ += ',';
    need_comma_ = true;
  }
  void Open(char bracket) {
    Separate();
    out_ += bracket;
    need_comma_ = false;
  }
  void Close(char bracket) {
    out_ += bracket;
    need_comma_ = true;
  }
  void Quoted(std::string_view text) {
    for (const char c : text) {
      const auto byte = static_cast<unsigned char>(c);
      if (byte < 0x20 || byte >= 0x7F || c == '"' || c == '\\') {
        out_ += Json(std::string(text)).dump(-1, ' ', false, Json::error_handler_t::replace);
        return;
      }
    }
    out_ += '"';
    out_ += text;
    out_ += '"';
  }

  std::string out_;
  bool need_comma_ = false;
};

void StreamStringMap(JsonStream& out, std::string_view key, const model::StringMap& map) {
  if (map.empty()) return;
  out.Key(key);
  out.BeginObject();
  for (const auto& [name, value] : map) {
    out.Key(name);
    out.String(value);
  }
  out.EndObject();
}

// ObjectMetaJson, streamed.
void StreamObjectMeta(JsonStream& out, const model::ObjectMeta& meta) {
  out.BeginObject();
  out.NonEmptyString("name", meta.name);
  out.NonEmptyString("generateName", meta.generate_name);
  out.NonEmptyString("namespace", meta.namespace_);
  out.NonEmptyString("uid", meta.uid);
  out.NonEmptyString("resourceVersion", meta.resource_version);
  if (meta.generation != 0) out.Int("generation", meta.generation);
  if (meta.creation_timestamp) {
    out.NonEmptyString("creationTimestamp", model::FormatRfc3339(*meta.creation_timestamp));
  }
  if (meta.deletion_timestamp) {
    out.NonEmptyString("deletionTimestamp", model::FormatRfc3339(*meta.deletion_timestamp));
  }
  StreamStringMap(out, "labels", meta.labels);
  StreamStringMap(out, "annotations", meta.annotations);
  if (!meta.owner_references.empty()) {
    out.Key("ownerReferences");
    out.BeginArray();
    for (const model::OwnerReference& ref : meta.owner_references) {
      out.BeginObject();
      out.Key("apiVersion");
      out.String(ref.api_version);
      out.Key("kind");
      out.String(ref.kind);
      out.Key("name");
      out.String(ref.name);
      out.Key("uid");
      out.String(ref.uid);
      out.OptBool("controller", ref.controller);
      out.OptBool("blockOwnerDeletion", ref.block_owner_deletion);
      out.EndObject();
    }
    out.EndArray();
  }
  if (!meta.finalizers.empty()) {
    out.Key("finalizers");
    out.BeginArray();
    for (const std::string& finalizer : meta.finalizers) out.String(finalizer);
    out.EndArray();
  }
  out.EndObject();
}

void StreamNameRefs(JsonStream& out, std::string_view key, const std::vector<std::string>& names) {
  if (names.empty()) return;
  out.Key(key);
  out.BeginArray();
  for (const std::string& name : names) {
    out.BeginObject();
    out.Key("name");
    out.String(name);
    out.EndObject();
  }
  out.EndArray();
}

// EndpointJson, streamed.
void StreamEndpoint(JsonStream& out, const model::Endpoint& endpoint) {
  out.BeginObject();
  out.Key("addresses");
  out.BeginArray();
  for (const std::string& address : endpoint.addresses) out.String(address);
  out.EndArray();
  out.Key("conditions");
  out.BeginObject();
  out.OptBool("ready", endpoint.conditions.ready);
  out.OptBool("serving", endpoint.conditions.serving);
  out.OptBool("terminating", endpoint.conditions.terminating);
  out.EndObject();
  out.OptString("hostname", endpoint.hostname);
  if (endpoint.target_ref.has_value()) {
    const model::ObjectReference& ref = *endpoint.target_ref;
    out.Key("targetRef");
    out.BeginObject();
    out.NonEmptyString("kind", ref.kind);
    out.NonEmptyString("namespace", ref.namespace_);
    out.NonEmptyString("name", ref.name);
    out.NonEmptyString("uid", ref.uid);
    out.NonEmptyString("apiVersion", ref.api_version);
    out.NonEmptyString("resourceVersion", ref.resource_version);
    out.NonEmptyString("fieldPath", ref.field_path);
    out.EndObject();
  }
  out.OptString("nodeName", endpoint.node_name);
  out.OptString("zone", endpoint.zone);
  if (endpoint.hints.has_value()) {
    out.Key("hints");
    out.BeginObject();
    StreamNameRefs(out, "forZones", endpoint.hints->for_zones);
    StreamNameRefs(out, "forNodes", endpoint.hints->for_nodes);
    out.EndObject();
  }
  out.EndObject();
}

// ---- JSON -> YAML ----

// Bytes YAML cannot carry outside double quotes: C0 controls, DEL, NEL, LS, PS and the BOM.
bool HasSpecialCharacters(std::string_view text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7F) return true;
    const std::string_view rest = text.substr(i);
    if (rest.starts_with("\xC2\x85") || rest.starts_with("\xE2\x80\xA8") ||
        rest.starts_with("\xE2\x80\xA9") || rest.starts_with("\xEF\xBB\xBF")) {
      return true;
    }
  }
  return false;
}

void AppendDoubleQuoted(std::string& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const auto byte = static_cast<unsigned char>(c);
    switch (c) {
      case '"':
        out += "\\\"";
        continue;
      case '\\':
        out += "\\\\";
        continue;
      case '\n':
        out += "\\n";
        continue;
      case '\t':
        out += "\\t";
        continue;
      case '\r':
        out += "\\r";
        continue;
      default:
        break;
    }
    if (byte < 0x20 || byte == 0x7F) {
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xF];
      continue;
    }
    const std::string_view rest = text.substr(i);
    // \u escapes rather than YAML's \N, \L, \P: yaml-cpp decodes those to raw Latin-1 bytes.
    if (rest.starts_with("\xC2\x85")) {
      out += "\\u0085";
      i += 1;
    } else if (rest.starts_with("\xE2\x80\xA8")) {
      out += "\\u2028";
      i += 2;
    } else if (rest.starts_with("\xE2\x80\xA9")) {
      out += "\\u2029";
      i += 2;
    } else if (rest.starts_with("\xEF\xBB\xBF")) {
      out += "\\uFEFF";
      i += 2;
    } else {
      out += c;
    }
  }
  out += '"';
}

// A literal block ("|") keeps multi-line text readable, as kubectl prints
// last-applied-configuration. It needs text whose first line does not start with a space or a
// break (the indentation would be misread) and no character other than '\n' that needs escaping.
bool LiteralBlockAllowed(std::string_view text) {
  if (text.find('\n') == std::string_view::npos) return false;
  if (text.front() == ' ' || text.front() == '\n') return false;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    if (HasSpecialCharacters(text.substr(start, end - start))) return false;
    start = end + 1;
  }
  return true;
}

class YamlEmitter final {
 public:
  explicit YamlEmitter(std::string& out) : out_(out) {}

  Status Document(const Json& value) {
    if (value.is_object() && !value.empty()) return Map(value, 0, 1);
    if (value.is_array() && !value.empty()) return Seq(value, 0, 1);
    Scalar(value, 2);
    return Status();
  }

 private:
  void Indent(int columns) { out_.append(static_cast<std::size_t>(columns), ' '); }

  // A non-empty mapping whose first key goes at the cursor, already at column `indent`.
  Status Map(const Json& map, int indent, int depth) {
    bool first = true;
    for (const auto& item : map.items()) {
      if (!first) Indent(indent);
      first = false;
      Key(item.key());
      out_ += ':';
      SW_RETURN_IF_ERROR(AfterIndicator(item.value(), indent, /*in_map=*/true, depth));
    }
    return Status();
  }

  // A non-empty sequence whose first "-" goes at the cursor, already at column `indent`.
  Status Seq(const Json& seq, int indent, int depth) {
    bool first = true;
    for (const Json& item : seq) {
      if (!first) Indent(indent);
      first = false;
      out_ += '-';
      SW_RETURN_IF_ERROR(AfterIndicator(item, indent, /*in_map=*/false, depth));
    }
    return Status();
  }

  // The value after "key:" or "-", the indicator at column `indent`. kubectl's layout (go-yaml
  // v2): a sequence under a key is not indented further; a mapping or sequence inside a sequence
  // starts on the dash's line.
  Status AfterIndicator(const Json& value, int indent, bool in_map, int depth) {
    if (depth >= internal::kMaxNestingDepth) {
      return BadRequestError("JSON nests deeper than " +
                             std::to_string(internal::kMaxNestingDepth) + " levels");
    }
    const bool container = (value.is_object() || value.is_array()) && !value.empty();
    if (!container) {
      out_ += ' ';
      Scalar(value, indent + 2);
      return Status();
    }
    if (in_map) {
      out_ += '\n';
      if (value.is_object()) {
        Indent(indent + 2);
        return Map(value, indent + 2, depth + 1);
      }
      Indent(indent);
      return Seq(value, indent, depth + 1);
    }
    out_ += ' ';
    return value.is_object() ? Map(value, indent + 2, depth + 1)
                             : Seq(value, indent + 2, depth + 1);
  }

  void Key(const std::string& key) {
    if (!internal::PlainScalarIsAmbiguous(key) && internal::PlainScalarSyntaxAllowed(key)) {
      out_ += key;
    } else {
      Quoted(key);
    }
  }

  // Single quotes for text that is only syntactically unsafe ("*", "a: b"), as libyaml picks
  // them; double quotes for text that would read as another type ("80", "true", a timestamp), as
  // go-yaml does, and for anything that needs escapes.
  void Quoted(std::string_view text) {
    if (HasSpecialCharacters(text) || internal::PlainScalarIsAmbiguous(text)) {
      AppendDoubleQuoted(out_, text);
      return;
    }
    out_ += '\'';
    for (const char c : text) {
      if (c == '\'') out_ += '\'';
      out_ += c;
    }
    out_ += '\'';
  }

  // A scalar (or an empty container) followed by a newline; a literal block's lines are indented
  // to `content_indent`.
  void Scalar(const Json& value, int content_indent) {
    switch (value.type()) {
      case Json::value_t::object:
        out_ += "{}";
        break;
      case Json::value_t::array:
        out_ += "[]";
        break;
      case Json::value_t::null:
        out_ += "null";
        break;
      case Json::value_t::boolean:
        out_ += value.get<bool>() ? "true" : "false";
        break;
      case Json::value_t::string: {
        const auto& text = value.get_ref<const std::string&>();
        if (LiteralBlockAllowed(text)) {
          Literal(text, content_indent);
          return;
        }
        Key(text);
        break;
      }
      default:
        out_ += value.dump();
        break;  // numbers, as JSON wrote them
    }
    out_ += '\n';
  }

  void Literal(std::string_view text, int content_indent) {
    // Chomping: "|-" strips the final break, "|" keeps one, "|+" keeps them all.
    std::size_t trailing = 0;
    while (trailing < text.size() && text[text.size() - 1 - trailing] == '\n') ++trailing;
    std::string_view body = text;
    if (trailing == 0) {
      out_ += "|-\n";
    } else {
      out_ += trailing == 1 ? "|\n" : "|+\n";
      body.remove_suffix(1);
    }
    std::size_t start = 0;
    while (start <= body.size()) {
      std::size_t end = body.find('\n', start);
      if (end == std::string_view::npos) end = body.size();
      const std::string_view line = body.substr(start, end - start);
      if (!line.empty()) {
        Indent(content_indent);
        out_ += line;
      }
      out_ += '\n';
      start = end + 1;
    }
  }

  std::string& out_;
};

// Records where a strict syntax pass first fails; accepts everything else without building
// anything.
class LocatingSax final : public nlohmann::json_sax<nlohmann::json> {
 public:
  bool null() override { return true; }
  bool boolean(bool /*value*/) override { return true; }
  bool number_integer(number_integer_t /*value*/) override { return true; }
  bool number_unsigned(number_unsigned_t /*value*/) override { return true; }
  bool number_float(number_float_t /*value*/, const string_t& /*text*/) override { return true; }
  bool string(string_t& /*value*/) override { return true; }
  bool binary(binary_t& /*value*/) override { return true; }
  bool start_object(std::size_t /*elements*/) override { return true; }
  bool key(string_t& /*value*/) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t /*elements*/) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t position, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& /*error*/) override {
    // nlohmann counts the characters read, including the offending one.
    offset = position > 0 ? position - 1 : 0;
    return false;
  }

  std::optional<std::size_t> offset;
};

}  // namespace

namespace internal {

std::optional<SyntaxError> FindJsonSyntaxError(std::string_view text) {
  try {
    LocatingSax sax;
    nlohmann::json::sax_parse(text.begin(), text.end(), &sax);
    if (!sax.offset.has_value()) return std::nullopt;
    return SyntaxError{*sax.offset, {}};
  } catch (const std::exception&) {
    return std::nullopt;  // only a diagnostic: the caller reports the error without an offset
  }
}

}  // namespace internal

std::string QuoteJsonString(std::string_view text) {
  return Dump([text] { return Json(std::string(text)); });
}

namespace internal {

std::string EncodeEndpointSliceDocument(const model::EndpointSlice& slice) {
  return Dump([&slice] {
    Json object = TypedObject("discovery.k8s.io/v1", "EndpointSlice", slice.metadata);
    object["addressType"] = slice.address_type;
    object["endpoints"] = ListJson(slice.endpoints, EndpointJson);
    object["ports"] = ListJson(slice.ports, EndpointPortJson);
    return object;
  });
}

}  // namespace internal

std::string EncodeEndpointSlice(const model::EndpointSlice& slice) {
  try {
    JsonStream out;
    // A pod's endpoint takes about 300 bytes: one allocation for most slices.
    out.Reserve(1024 + 320 * slice.endpoints.size());
    out.BeginObject();
    out.Key("apiVersion");
    out.String("discovery.k8s.io/v1");
    out.Key("kind");
    out.String("EndpointSlice");
    out.Key("metadata");
    StreamObjectMeta(out, slice.metadata);
    out.Key("addressType");
    out.String(slice.address_type);
    out.Key("endpoints");
    out.BeginArray();
    for (const model::Endpoint& endpoint : slice.endpoints) StreamEndpoint(out, endpoint);
    out.EndArray();
    out.Key("ports");
    out.BeginArray();
    for (const model::EndpointPort& port : slice.ports) {
      out.BeginObject();
      out.OptString("name", port.name);
      out.OptString("protocol", port.protocol);
      if (port.port.has_value()) out.Int("port", *port.port);
      out.OptString("appProtocol", port.app_protocol);
      out.EndObject();
    }
    out.EndArray();
    out.EndObject();
    return out.Take();
  } catch (const Json::exception& e) {
    SW_BUG(e.what());
    return std::string();
  }
}

std::string EncodeEndpoints(const model::Endpoints& endpoints) {
  return Dump([&endpoints] {
    Json object = TypedObject("v1", "Endpoints", endpoints.metadata);
    PutList(object, "subsets", endpoints.subsets, EndpointSubsetJson);
    return object;
  });
}

std::string EncodeService(const model::Service& service) {
  return Dump([&service] {
    Json object = TypedObject("v1", "Service", service.metadata);
    object["spec"] = ServiceSpecJson(service.spec);
    return object;
  });
}

std::string EncodePod(const model::Pod& pod) {
  return Dump([&pod] {
    Json object = TypedObject("v1", "Pod", pod.metadata);
    Json spec = Json::object();
    PutString(spec, "nodeName", pod.spec.node_name);
    PutString(spec, "hostname", pod.spec.hostname);
    PutString(spec, "subdomain", pod.spec.subdomain);
    PutList(spec, "initContainers", pod.spec.init_containers, ContainerJson);
    spec["containers"] = ListJson(pod.spec.containers, ContainerJson);
    object["spec"] = std::move(spec);
    Json status = Json::object();
    PutString(status, "phase", pod.status.phase);
    PutList(status, "conditions", pod.status.conditions, ConditionJson);
    PutString(status, "podIP", pod.status.pod_ip);
    PutList(status, "podIPs", pod.status.pod_ips, PodIpJson);
    object["status"] = std::move(status);
    return object;
  });
}

std::string EncodeNode(const model::Node& node) {
  return Dump([&node] {
    Json object = TypedObject("v1", "Node", node.metadata);
    Json status = Json::object();
    PutStringMap(status, "allocatable", node.status.allocatable);
    PutList(status, "conditions", node.status.conditions, ConditionJson);
    object["status"] = std::move(status);
    return object;
  });
}

std::string EncodeNamespace(const model::Namespace& ns) {
  return Dump([&ns] {
    Json object = TypedObject("v1", "Namespace", ns.metadata);
    Json status = Json::object();
    PutString(status, "phase", ns.phase);
    object["status"] = std::move(status);
    return object;
  });
}

std::string EncodeEvent(const model::Event& event) {
  return Dump([&event] {
    Json object = TypedObject("v1", "Event", event.metadata);
    object["involvedObject"] = ObjectReferenceJson(event.involved_object);
    PutString(object, "reason", event.reason);
    PutString(object, "message", event.message);
    Json source = Json::object();
    PutString(source, "component", event.source_component);
    PutString(source, "host", event.source_host);
    object["source"] = std::move(source);
    PutTime(object, "firstTimestamp", event.first_timestamp);
    PutTime(object, "lastTimestamp", event.last_timestamp);
    PutInt(object, "count", event.count);
    PutString(object, "type", event.type);
    PutString(object, "action", event.action);
    PutString(object, "reportingComponent", event.reporting_component);
    PutString(object, "reportingInstance", event.reporting_instance);
    return object;
  });
}

Result<std::string> JsonToYaml(std::string_view json) {
  try {
    // allow_exceptions=false: malformed text yields a discarded value instead of a throw. The DOM
    // parser is iterative, so deep input cannot exhaust the stack; the emitter bounds its depth.
    const Json document = Json::parse(json.begin(), json.end(), nullptr, false);
    if (document.is_discarded()) {
      std::string message = "malformed JSON";
      if (const auto syntax = internal::FindJsonSyntaxError(json)) {
        message += " at byte " + std::to_string(syntax->offset);
      }
      return BadRequestError(std::move(message));
    }
    std::string out;
    SW_RETURN_IF_ERROR(YamlEmitter(out).Document(document));
    return out;
  } catch (const std::exception& e) {
    return InternalError(std::string("converting JSON to YAML: ") + e.what());
  }
}

namespace internal {

std::string EncodeObjectMeta(const model::ObjectMeta& meta) {
  return Dump([&meta] { return ObjectMetaJson(meta); });
}

}  // namespace internal

}  // namespace slicewright::codec

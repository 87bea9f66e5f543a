#include "apiserver/api/protobuf.h"

#include <algorithm>
#include <array>
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

#include "apiserver/api/json_depth.h"

namespace slicewright::apiserver {
namespace {

using nlohmann::json;

constexpr std::string_view kMagic("k8s\0", 4);
// Deeper messages are refused. The tables below are acyclic (at most 7 levels), so this only
// guards future recursive schemas.
constexpr int kMaxDepth = 100;
// Protobuf field numbers are 29 bits.
constexpr std::uint64_t kMaxFieldNumber = (std::uint64_t{1} << 29) - 1;

// ---------------------------------------------------------------------------------------------
// Schema tables. A message is a list of (field number, JSON name, kind, mode, nested message).
// Field numbers are those of k8s.io/api core/v1 and apimachinery meta/v1 generated.proto (v1.32);
// modes follow the Go struct fields the JSON comes from (pointer or not, `omitempty` or not),
// because gogo-protobuf writes every non-pointer scalar, zero or not, and kube-apiserver's JSON is
// Go's encoding of the decoded struct.

enum class Kind : std::uint8_t {
  kString,   // wire type 2, UTF-8
  kBytes,    // wire type 2, base64 in JSON
  kBool,     // wire type 0
  kInt32,    // wire type 0, low 32 bits as two's complement
  kInt64,    // wire type 0
  kMessage,  // wire type 2, a nested message
};

enum class Mode : std::uint8_t {
  kOmitEmpty,  // a scalar with `omitempty`: in JSON when on the wire and not zero
  kPointer,    // a Go pointer (*T): in JSON exactly when on the wire, zero or not
  kAlways,     // no `omitempty`, or a struct value: always in JSON, the zero value when absent
  kRepeated,   // a slice: in JSON when at least one element is on the wire
  kMap,        // a map: repeated entry messages {key=1, value=2}; in JSON when one entry is there
};

// What a message becomes in JSON.
enum class Shape : std::uint8_t {
  kObject,       // an object of its fields
  kIntOrString,  // intstr.IntOrString {type=1, intVal=2, strVal=3}: a number or a string
  kTime,         // metav1.Time {seconds=1, nanos=2}: RFC 3339 seconds; null when empty on the wire
  kQuantity,     // resource.Quantity {string=1}: its string
  kFieldsV1,     // metav1.FieldsV1 {Raw=1}: the JSON text it holds
};

struct Message;

struct Field {
  // Arguments in table order; members in the order that packs them into 32 bytes.
  constexpr Field(std::uint32_t number_in, std::string_view json_name_in, Kind kind_in,
                  Mode mode_in = Mode::kOmitEmpty, const Message* message_in = nullptr)
      : json_name(json_name_in),
        message(message_in),
        number(number_in),
        kind(kind_in),
        mode(mode_in) {}

  std::string_view json_name;
  const Message* message;  // kMessage: the nested type (for kMap: the entry type)
  std::uint32_t number;
  Kind kind;
  Mode mode;
};

struct Message {
  std::string_view name;
  std::span<const Field> fields;
  Shape shape = Shape::kObject;
};

using enum Kind;
using enum Mode;

// apimachinery/pkg/util/intstr, pkg/api/resource and pkg/apis/meta/v1.
constexpr Field kIntOrStringFields[] = {
    {1, "type", kInt64, kAlways}, {2, "intVal", kInt32, kAlways}, {3, "strVal", kString, kAlways}};
constexpr Message kIntOrString{"IntOrString", kIntOrStringFields, Shape::kIntOrString};
constexpr Field kQuantityFields[] = {{1, "string", kString, kAlways}};
constexpr Message kQuantity{"Quantity", kQuantityFields, Shape::kQuantity};
constexpr Field kTimeFields[] = {{1, "seconds", kInt64, kAlways}, {2, "nanos", kInt32, kAlways}};
constexpr Message kTime{"Time", kTimeFields, Shape::kTime};
constexpr Field kFieldsV1Fields[] = {{1, "Raw", kString, kPointer}};
constexpr Message kFieldsV1{"FieldsV1", kFieldsV1Fields, Shape::kFieldsV1};

// Map entries (map<string, V> is `repeated Entry` with key=1, value=2).
constexpr Field kStringEntryFields[] = {{1, "key", kString, kAlways},
                                        {2, "value", kString, kAlways}};
constexpr Message kStringEntry{"StringEntry", kStringEntryFields};
constexpr Field kBytesEntryFields[] = {{1, "key", kString, kAlways}, {2, "value", kBytes, kAlways}};
constexpr Message kBytesEntry{"BytesEntry", kBytesEntryFields};
constexpr Field kQuantityEntryFields[] = {{1, "key", kString, kAlways},
                                          {2, "value", kMessage, kAlways, &kQuantity}};
constexpr Message kQuantityEntry{"QuantityEntry", kQuantityEntryFields};

constexpr Field kTypeMetaFields[] = {{1, "apiVersion", kString}, {2, "kind", kString}};
constexpr Message kTypeMeta{"TypeMeta", kTypeMetaFields};

constexpr Field kOwnerReferenceFields[] = {
    {5, "apiVersion", kString, kAlways}, {1, "kind", kString, kAlways},
    {3, "name", kString, kAlways},       {4, "uid", kString, kAlways},
    {6, "controller", kBool, kPointer},  {7, "blockOwnerDeletion", kBool, kPointer}};
constexpr Message kOwnerReference{"OwnerReference", kOwnerReferenceFields};

constexpr Field kManagedFieldsEntryFields[] = {
    {1, "manager", kString},    {2, "operation", kString},
    {3, "apiVersion", kString}, {4, "time", kMessage, kPointer, &kTime},
    {6, "fieldsType", kString}, {7, "fieldsV1", kMessage, kPointer, &kFieldsV1},
    {8, "subresource", kString}};
constexpr Message kManagedFieldsEntry{"ManagedFieldsEntry", kManagedFieldsEntryFields};

constexpr Field kObjectMetaFields[] = {
    {1, "name", kString},
    {2, "generateName", kString},
    {3, "namespace", kString},
    {4, "selfLink", kString},
    {5, "uid", kString},
    {6, "resourceVersion", kString},
    {7, "generation", kInt64},
    {8, "creationTimestamp", kMessage, kAlways, &kTime},
    {9, "deletionTimestamp", kMessage, kPointer, &kTime},
    {10, "deletionGracePeriodSeconds", kInt64, kPointer},
    {11, "labels", kMessage, kMap, &kStringEntry},
    {12, "annotations", kMessage, kMap, &kStringEntry},
    {13, "ownerReferences", kMessage, kRepeated, &kOwnerReference},
    {14, "finalizers", kString, kRepeated},
    {17, "managedFields", kMessage, kRepeated, &kManagedFieldsEntry}};
constexpr Message kObjectMeta{"ObjectMeta", kObjectMetaFields};

constexpr Field kConditionFields[] = {
    {1, "type", kString, kAlways},     {2, "status", kString, kAlways},
    {3, "observedGeneration", kInt64}, {4, "lastTransitionTime", kMessage, kAlways, &kTime},
    {5, "reason", kString, kAlways},   {6, "message", kString, kAlways}};
constexpr Message kCondition{"Condition", kConditionFields};

// k8s.io/api/core/v1.
constexpr Field kObjectReferenceFields[] = {
    {1, "kind", kString},     {2, "namespace", kString},  {3, "name", kString},
    {4, "uid", kString},      {5, "apiVersion", kString}, {6, "resourceVersion", kString},
    {7, "fieldPath", kString}};
constexpr Message kObjectReference{"ObjectReference", kObjectReferenceFields};
constexpr Field kLocalObjectReferenceFields[] = {{1, "name", kString}};
constexpr Message kLocalObjectReference{"LocalObjectReference", kLocalObjectReferenceFields};

constexpr Field kNamespaceSpecFields[] = {{1, "finalizers", kString, kRepeated}};
constexpr Message kNamespaceSpec{"NamespaceSpec", kNamespaceSpecFields};
constexpr Field kNamespaceConditionFields[] = {{1, "type", kString, kAlways},
                                               {2, "status", kString, kAlways},
                                               {4, "lastTransitionTime", kMessage, kAlways, &kTime},
                                               {5, "reason", kString},
                                               {6, "message", kString}};
constexpr Message kNamespaceCondition{"NamespaceCondition", kNamespaceConditionFields};
constexpr Field kNamespaceStatusFields[] = {
    {1, "phase", kString}, {2, "conditions", kMessage, kRepeated, &kNamespaceCondition}};
constexpr Message kNamespaceStatus{"NamespaceStatus", kNamespaceStatusFields};
constexpr Field kNamespaceFields[] = {{1, "metadata", kMessage, kAlways, &kObjectMeta},
                                      {2, "spec", kMessage, kAlways, &kNamespaceSpec},
                                      {3, "status", kMessage, kAlways, &kNamespaceStatus}};
constexpr Message kNamespace{"Namespace", kNamespaceFields};

constexpr Field kConfigMapFields[] = {{1, "metadata", kMessage, kAlways, &kObjectMeta},
                                      {4, "immutable", kBool, kPointer},
                                      {2, "data", kMessage, kMap, &kStringEntry},
                                      {3, "binaryData", kMessage, kMap, &kBytesEntry}};
constexpr Message kConfigMap{"ConfigMap", kConfigMapFields};

constexpr Field kSecretFields[] = {{1, "metadata", kMessage, kAlways, &kObjectMeta},
                                   {5, "immutable", kBool, kPointer},
                                   {2, "data", kMessage, kMap, &kBytesEntry},
                                   {4, "stringData", kMessage, kMap, &kStringEntry},
                                   {3, "type", kString}};
constexpr Message kSecret{"Secret", kSecretFields};

constexpr Field kServiceAccountFields[] = {
    {1, "metadata", kMessage, kAlways, &kObjectMeta},
    {2, "secrets", kMessage, kRepeated, &kObjectReference},
    {3, "imagePullSecrets", kMessage, kRepeated, &kLocalObjectReference},
    {4, "automountServiceAccountToken", kBool, kPointer}};
constexpr Message kServiceAccount{"ServiceAccount", kServiceAccountFields};

constexpr Field kServicePortFields[] = {{1, "name", kString},
                                        {2, "protocol", kString},
                                        {6, "appProtocol", kString, kPointer},
                                        {3, "port", kInt32, kAlways},
                                        {4, "targetPort", kMessage, kAlways, &kIntOrString},
                                        {5, "nodePort", kInt32}};
constexpr Message kServicePort{"ServicePort", kServicePortFields};
constexpr Field kClientIPConfigFields[] = {{1, "timeoutSeconds", kInt32, kPointer}};
constexpr Message kClientIPConfig{"ClientIPConfig", kClientIPConfigFields};
constexpr Field kSessionAffinityConfigFields[] = {
    {1, "clientIP", kMessage, kPointer, &kClientIPConfig}};
constexpr Message kSessionAffinityConfig{"SessionAffinityConfig", kSessionAffinityConfigFields};
constexpr Field kServiceSpecFields[] = {
    {1, "ports", kMessage, kRepeated, &kServicePort},
    {2, "selector", kMessage, kMap, &kStringEntry},
    {3, "clusterIP", kString},
    {18, "clusterIPs", kString, kRepeated},
    {4, "type", kString},
    {5, "externalIPs", kString, kRepeated},
    {7, "sessionAffinity", kString},
    {8, "loadBalancerIP", kString},
    {9, "loadBalancerSourceRanges", kString, kRepeated},
    {10, "externalName", kString},
    {11, "externalTrafficPolicy", kString},
    {12, "healthCheckNodePort", kInt32},
    {13, "publishNotReadyAddresses", kBool},
    {14, "sessionAffinityConfig", kMessage, kPointer, &kSessionAffinityConfig},
    {19, "ipFamilies", kString, kRepeated},
    {17, "ipFamilyPolicy", kString, kPointer},
    {20, "allocateLoadBalancerNodePorts", kBool, kPointer},
    {21, "loadBalancerClass", kString, kPointer},
    {22, "internalTrafficPolicy", kString, kPointer},
    {23, "trafficDistribution", kString, kPointer}};
constexpr Message kServiceSpec{"ServiceSpec", kServiceSpecFields};
constexpr Field kPortStatusFields[] = {{1, "port", kInt32, kAlways},
                                       {2, "protocol", kString, kAlways},
                                       {3, "error", kString, kPointer}};
constexpr Message kPortStatus{"PortStatus", kPortStatusFields};
constexpr Field kLoadBalancerIngressFields[] = {{1, "ip", kString},
                                                {2, "hostname", kString},
                                                {3, "ipMode", kString, kPointer},
                                                {4, "ports", kMessage, kRepeated, &kPortStatus}};
constexpr Message kLoadBalancerIngress{"LoadBalancerIngress", kLoadBalancerIngressFields};
constexpr Field kLoadBalancerStatusFields[] = {
    {1, "ingress", kMessage, kRepeated, &kLoadBalancerIngress}};
constexpr Message kLoadBalancerStatus{"LoadBalancerStatus", kLoadBalancerStatusFields};
constexpr Field kServiceStatusFields[] = {
    {1, "loadBalancer", kMessage, kAlways, &kLoadBalancerStatus},
    {2, "conditions", kMessage, kRepeated, &kCondition}};
constexpr Message kServiceStatus{"ServiceStatus", kServiceStatusFields};
constexpr Field kServiceFields[] = {{1, "metadata", kMessage, kAlways, &kObjectMeta},
                                    {2, "spec", kMessage, kAlways, &kServiceSpec},
                                    {3, "status", kMessage, kAlways, &kServiceStatus}};
constexpr Message kService{"Service", kServiceFields};

constexpr Field kScopedResourceSelectorRequirementFields[] = {{1, "scopeName", kString, kAlways},
                                                              {2, "operator", kString, kAlways},
                                                              {3, "values", kString, kRepeated}};
constexpr Message kScopedResourceSelectorRequirement{"ScopedResourceSelectorRequirement",
                                                     kScopedResourceSelectorRequirementFields};
constexpr Field kScopeSelectorFields[] = {
    {1, "matchExpressions", kMessage, kRepeated, &kScopedResourceSelectorRequirement}};
constexpr Message kScopeSelector{"ScopeSelector", kScopeSelectorFields};
constexpr Field kResourceQuotaSpecFields[] = {
    {1, "hard", kMessage, kMap, &kQuantityEntry},
    {2, "scopes", kString, kRepeated},
    {3, "scopeSelector", kMessage, kPointer, &kScopeSelector}};
constexpr Message kResourceQuotaSpec{"ResourceQuotaSpec", kResourceQuotaSpecFields};
constexpr Field kResourceQuotaStatusFields[] = {{1, "hard", kMessage, kMap, &kQuantityEntry},
                                                {2, "used", kMessage, kMap, &kQuantityEntry}};
constexpr Message kResourceQuotaStatus{"ResourceQuotaStatus", kResourceQuotaStatusFields};
constexpr Field kResourceQuotaFields[] = {{1, "metadata", kMessage, kAlways, &kObjectMeta},
                                          {2, "spec", kMessage, kAlways, &kResourceQuotaSpec},
                                          {3, "status", kMessage, kAlways, &kResourceQuotaStatus}};
constexpr Message kResourceQuota{"ResourceQuota", kResourceQuotaFields};

struct KindEntry {
  std::string_view api_version;
  std::string_view kind;
  const Message* message;
};
constexpr std::array<KindEntry, 6> kKinds = {{{"v1", "ConfigMap", &kConfigMap},
                                              {"v1", "Namespace", &kNamespace},
                                              {"v1", "ResourceQuota", &kResourceQuota},
                                              {"v1", "Secret", &kSecret},
                                              {"v1", "Service", &kService},
                                              {"v1", "ServiceAccount", &kServiceAccount}}};

// Checks a table at compile time: nested types where needed and only there, modes that fit the
// kind, map entries with key=1 and value=2, and no field number twice.
constexpr bool WellFormed(const Message& message, int depth = 0) {
  if (depth > 10) {
    return false;  // the tables are acyclic; a cycle would recurse forever here
  }
  for (std::size_t i = 0; i < message.fields.size(); ++i) {
    const Field& field = message.fields[i];
    if (field.number == 0 || field.number > kMaxFieldNumber) {
      return false;
    }
    for (std::size_t j = i + 1; j < message.fields.size(); ++j) {
      if (message.fields[j].number == field.number) {
        return false;
      }
    }
    if ((field.kind == kMessage) != (field.message != nullptr)) {
      return false;
    }
    if (field.kind == kMessage && field.mode == kOmitEmpty) {
      return false;  // Go never omits a struct value; it is kAlways or a pointer
    }
    if (field.mode == kMap &&
        (field.kind != kMessage || field.message->fields.size() != 2 ||
         field.message->fields[0].number != 1 || field.message->fields[0].kind != kString ||
         field.message->fields[1].number != 2)) {
      return false;
    }
    if (field.message != nullptr && !WellFormed(*field.message, depth + 1)) {
      return false;
    }
  }
  return true;
}
static_assert(std::ranges::all_of(kKinds, [](const KindEntry& entry) {
  return WellFormed(*entry.message);
}));

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
    case kMessage:
      break;
  }
  return nullptr;
}

bool IsZero(const json& value) {
  return (value.is_string() && value.get_ref<const std::string&>().empty()) ||
         (value.is_boolean() && !value.get<bool>()) ||
         (value.is_number_integer() && value.get<std::int64_t>() == 0);
}

// One field as read from the wire; `begin`/`end` delimit a length-delimited value.
struct WireField {
  std::uint32_t number = 0;
  int wire_type = 0;
  std::size_t tag_offset = 0;  // where the field's key starts
  std::uint64_t varint = 0;    // wire type 0
  std::size_t begin = 0;       // wire type 2: the value's bytes
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
      case Shape::kTime: {
        if (begin == end) {
          return json(nullptr);  // metav1.Time unmarshals no bytes as the zero time: null
        }
        // Like metav1.Time.Unmarshal: whole seconds, nanos dropped.
        const std::int64_t seconds = object["seconds"].get<std::int64_t>();
        constexpr std::int64_t kLimit = 9'223'372'035;  // what int64 nanoseconds hold
        if (seconds < -kLimit || seconds > kLimit) {
          return Error(begin, "timestamp " + std::to_string(seconds) + " s is out of range");
        }
        return json(model::FormatRfc3339(model::Time::FromUnixSeconds(seconds)));
      }
      case Shape::kQuantity:
        return object["string"];
      case Shape::kFieldsV1: {
        const json* raw = object.contains("Raw") ? &object["Raw"] : nullptr;
        if (raw == nullptr) {
          return json(nullptr);
        }
        const auto& text = raw->get_ref<const std::string&>();
        if (JsonNestingDepth(text) > kMaxDepth) {
          return Error(begin, "fieldsV1 nests deeper than " + std::to_string(kMaxDepth));
        }
        json parsed;
        try {
          parsed = json::parse(text, nullptr, /*allow_exceptions=*/false);
        } catch (const std::exception& e) {
          return Error(begin, std::string("fieldsV1 is not JSON: ") + e.what());
        }
        if (parsed.is_discarded()) {
          return Error(begin, "fieldsV1 is not JSON");
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
    const int want_wire =
        field.kind == kBool || field.kind == kInt32 || field.kind == kInt64 ? 0 : 2;
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
      case kMessage: {
        const std::size_t saved = path_.size();
        path_ += '.';
        path_ += field.json_name;
        if (field.mode == kRepeated) {
          const json* existing = out.contains(field.json_name) ? &out[field.json_name] : nullptr;
          path_ += '[' + std::to_string(existing != nullptr ? existing->size() : 0) + ']';
        }
        if (field.message->shape == Shape::kObject && field.mode != kRepeated &&
            field.mode != kMap) {
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
        out[field.json_name].push_back(std::move(value));
        break;
      case kMap: {
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

std::string SupportedKinds() {
  std::string out;
  for (const KindEntry& entry : kKinds) {
    out += out.empty() ? "" : ", ";
    out += entry.api_version;
    out += ' ';
    out += entry.kind;
  }
  return out;
}

// The envelope's fields (runtime.Unknown, apimachinery/pkg/runtime/generated.proto).
struct Envelope {
  json type_meta = json::object();  // TypeMeta {apiVersion=1, kind=2}
  bool has_raw = false;             // raw=2, the object
  std::size_t raw_begin = 0;
  std::size_t raw_end = 0;
  std::string content_encoding;  // contentEncoding=3
  std::string content_type;      // contentType=4
};

constexpr Field kUnknownFields[] = {{1, "typeMeta", kMessage, kPointer, &kTypeMeta},
                                    {2, "raw", kBytes, kPointer},
                                    {3, "contentEncoding", kString},
                                    {4, "contentType", kString}};
constexpr Message kUnknown{"runtime.Unknown", kUnknownFields};

}  // namespace

bool IsKubernetesProtobuf(std::string_view content_type) {
  const std::size_t semicolon = content_type.find(';');
  if (semicolon != std::string_view::npos) {
    content_type = content_type.substr(0, semicolon);
  }
  return EqualsIgnoreCase(TrimSpace(content_type), kKubernetesProtobufContentType);
}

Result<json> DecodeKubernetesProtobuf(std::string_view body) {
  if (body.substr(0, kMagic.size()) != kMagic) {
    return BadRequestError(
        R"(invalid protobuf body: it does not start with the magic bytes "k8s\x00" at byte 0)");
  }
  Decoder decoder(body);
  decoder.path() = kUnknown.name;
  // The raw object is decoded once its kind is known, so the envelope's fields are read one by
  // one; the table only fixes their numbers and names.
  Envelope envelope;
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
  const std::string api_version = envelope.type_meta.value("apiVersion", std::string());
  const std::string kind = envelope.type_meta.value("kind", std::string());
  if (kind.empty()) {
    return BadRequestError("invalid protobuf body: runtime.Unknown names no kind");
  }
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
  if (!envelope.has_raw) {
    // kubectl always sends the object (its metadata at least); a body cut right after typeMeta
    // must not pass as an empty object.
    return BadRequestError("invalid protobuf body: runtime.Unknown carries no raw object");
  }
  const Message* type = nullptr;
  for (const KindEntry& entry : kKinds) {
    if (entry.api_version == api_version && entry.kind == kind) {
      type = entry.message;
    }
  }
  if (type == nullptr) {
    const std::string group_version = api_version.empty() ? "<no apiVersion>" : api_version;
    return Status(StatusCode::kUnsupportedMediaType,
                  "protobuf request bodies are supported only for " + SupportedKinds() + ", not " +
                      group_version + " " + kind + "; send " + kind + " as application/json");
  }
  json object = {{"apiVersion", api_version}, {"kind", kind}};
  decoder.path() = type->name;
  SW_RETURN_IF_ERROR(decoder.DecodeInto(*type, envelope.raw_begin, envelope.raw_end, 1, object));
  return object;
}

}  // namespace slicewright::apiserver

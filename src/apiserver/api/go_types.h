// The Go API types of the built-in kinds (k8s.io/api, apimachinery, apiextensions v1) as constant
// tables generated from upstream types.go (scripts/gen-go-types.py): JSON names, protobuf field
// numbers, Go type names and Go's JSON presence rules. Read by the protobuf decoder and the strict
// JSON checker. Immutable data; thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace slicewright::apiserver::gotypes {

// A field's value as protobuf carries it.
enum class Kind : std::uint8_t {
  kString,   // wire type 2, UTF-8
  kBytes,    // wire type 2, base64 in JSON
  kBool,     // wire type 0
  kInt32,    // wire type 0, low 32 bits as two's complement
  kInt64,    // wire type 0
  kDouble,   // wire type 1, float64
  kMessage,  // wire type 2, a nested message (for maps: the entry message)
};

// How Go's encoding/json writes the field, and so when it is in the JSON.
enum class Mode : std::uint8_t {
  kOmitEmpty,     // a scalar with `omitempty`: in JSON when not zero
  kPointer,       // a Go pointer (*T): in JSON exactly when set, zero or not
  kAlways,        // no `omitempty`, or a struct value: always in JSON, the zero value when unset
  kRepeated,      // a slice with `omitempty`: in JSON when not empty
  kRepeatedNull,  // a slice without `omitempty`: null when empty
  kMap,           // a map with `omitempty` (entries {key=1, value=2} on the wire)
  kMapNull,       // a map without `omitempty`: null when empty
  kInline,        // an embedded struct (`json:",inline"`): its fields are the parent's in JSON
};

// What a message becomes in JSON.
enum class Shape : std::uint8_t {
  kObject,               // an object of its fields
  kIntOrString,          // intstr.IntOrString {type=1, intVal=2, strVal=3}: a number or a string
  kTime,                 // metav1.Time {seconds=1, nanos=2}: RFC 3339 seconds, UTC; null if zero
  kMicroTime,            // metav1.MicroTime: RFC 3339 with six fraction digits, UTC
  kQuantity,             // resource.Quantity {string=1}: its string
  kFieldsV1,             // metav1.FieldsV1 {Raw=1}: the JSON text it holds
  kRawJson,              // runtime.RawExtension, apiextensions JSON {raw=1}: any JSON value
  kSchemaOrArray,        // JSONSchemaPropsOrArray {schema=1, jSONSchemas=2}
  kSchemaOrBool,         // JSONSchemaPropsOrBool {allows=1, schema=2}
  kSchemaOrStringArray,  // JSONSchemaPropsOrStringArray {schema=1, property=2}
};

struct Message;

struct Field {
  // Arguments in table order; members in the order that packs them.
  constexpr Field(std::uint32_t number_in, std::string_view json_name_in, Kind kind_in,
                  Mode mode_in, const Message* message_in, std::string_view go_type_in,
                  std::string_view elem_go_type_in)
      : json_name(json_name_in),
        message(message_in),
        go_type(go_type_in),
        elem_go_type(elem_go_type_in),
        number(number_in),
        kind(kind_in),
        mode(mode_in) {}

  std::string_view json_name;     // empty for kInline
  const Message* message;         // kMessage: the nested type (maps: the entry type)
  std::string_view go_type;       // the Go type as reflect prints it, pointer removed: "int32",
                                  // "[]v1.ServicePort", "map[string]string", "v1.ResourceList"
  std::string_view elem_go_type;  // slices and maps: the element's Go type ("v1.ServicePort")
  std::uint32_t number;           // protobuf field number; 0 for JSON-only (inline TypeMeta)
  Kind kind;
  Mode mode;
};

struct Message {
  std::string_view name;     // the Go struct's name: "ServicePort"
  std::string_view go_name;  // "v1.ServicePort", "intstr.IntOrString"
  std::span<const Field> fields;
  Shape shape = Shape::kObject;
};

// The Go type of a built-in kind, by apiVersion ("apps/v1") and kind ("Deployment"); nullptr
// when the kind is not built in. Covers core/v1, apps/v1, discovery/v1, coordination/v1,
// events/v1, policy/v1, rbac/v1, autoscaling/v1 and apiextensions/v1, List kinds included.
const Message* FindKind(std::string_view api_version, std::string_view kind);

// metav1.DeleteOptions: the body of a DELETE or deletecollection, in every group version (it is
// an options type, not a kind of its own, so FindKind does not know it).
const Message& MetaV1DeleteOptions();

}  // namespace slicewright::apiserver::gotypes

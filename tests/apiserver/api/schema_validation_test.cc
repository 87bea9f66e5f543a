// Tests for structural-schema pruning, defaulting and validation, one keyword at a time, against
// the messages kube-apiserver (v1.32) gives; then the real ServiceImport schema of deploy/mcs/crds.
#include "apiserver/api/schema_validation.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "slicewright/base/status.h"

namespace slicewright::apiserver {
namespace {

using nlohmann::json;

std::shared_ptr<const CompiledSchema> MustCompile(const json& schema) {
  Result<std::shared_ptr<const CompiledSchema>> compiled = CompiledSchema::Compile(schema, "s");
  EXPECT_TRUE(compiled.ok()) << compiled.status().ToString();
  return compiled.ok() ? *compiled : nullptr;
}

// "field: message" of each cause, in order.
std::vector<std::string> Render(const std::vector<StatusCause>& causes) {
  std::vector<std::string> out;
  for (const StatusCause& cause : causes) out.push_back(cause.field + ": " + cause.message);
  return out;
}

// A resource whose spec has the one property `x` with `property`'s keywords.
json SpecWith(const json& property) {
  return {{"type", "object"},
          {"properties",
           {{"spec", {{"type", "object"}, {"properties", {{"x", property}}}}},
            {"status", {{"type", "object"}, {"properties", {{"x", property}}}}}}}};
}

std::vector<std::string> ValidateX(const json& property, const json& value) {
  auto schema = MustCompile(SpecWith(property));
  if (!schema) return {"(no schema)"};
  return Render(schema->Validate({{"spec", {{"x", value}}}}));
}

// Each keyword, valid and invalid, with kube's field error.
TEST(SchemaValidationTest, KeywordsAsKubeReportsThem) {
  struct Case {
    std::string_view name;
    json property;
    json value;
    std::vector<std::string> errors;
  };
  const Case cases[] = {
      {"type string ok", {{"type", "string"}}, "a", {}},
      {"type mismatch",
       {{"type", "array"}},
       "a",
       {"spec.x: Invalid value: \"string\": spec.x in body must be of type array: \"string\""}},
      {"integer accepts an integral float", {{"type", "integer"}}, 2.0, {}},
      {"integer refuses a fraction (and kube's range check says so again)",
       {{"type", "integer"}},
       1.5,
       {"spec.x: Invalid value: \"number\": spec.x in body must be of type integer: \"number\"",
        "<nil>: Invalid value: \"\": Checked value must be of type integer (default format) in "
        "spec.x"}},
      {"number accepts an integer", {{"type", "number"}}, 3, {}},
      {"boolean",
       {{"type", "boolean"}},
       "true",
       {"spec.x: Invalid value: \"string\": spec.x in body must be of type boolean: \"string\""}},
      {"int-or-string",
       {{"x-kubernetes-int-or-string", true}},
       true,
       {"spec.x: Invalid value: \"boolean\": spec.x in body must be of type integer,string: "
        "\"boolean\""}},
      {"enum ok", {{"type", "string"}, {"enum", {"Present", "Absent"}}}, "Absent", {}},
      {"enum",
       {{"type", "string"}, {"enum", {"Present", "Absent"}}},
       "Maybe",
       {"spec.x: Unsupported value: \"Maybe\": supported values: \"Present\", \"Absent\""}},
      {"numeric enum",
       {{"type", "integer"}, {"enum", {1, 2}}},
       3,
       {"spec.x: Unsupported value: 3: supported values: \"1\", \"2\""}},
      {"minimum",
       {{"type", "integer"}, {"format", "int64"}, {"minimum", 0}},
       -1,
       {"spec.x: Invalid value: -1: spec.x in body should be greater than or equal to 0"}},
      {"exclusive maximum",
       {{"type", "integer"}, {"maximum", 10}, {"exclusiveMaximum", true}},
       10,
       {"spec.x: Invalid value: 10: spec.x in body should be less than 10"}},
      {"maximum on a float",
       {{"type", "number"}, {"maximum", 1.5}},
       2.25,
       {"spec.x: Invalid value: 2.25: spec.x in body should be less than or equal to 1.5"}},
      {"an integer against a bound beyond int64", {{"type", "number"}, {"maximum", 1e300}}, 5, {}},
      {"a huge float against an integer enum",
       {{"enum", {1}}},
       1e300,
       {"spec.x: Unsupported value: 1e+300: supported values: \"1\""}},
      {"multipleOf",
       {{"type", "integer"}, {"multipleOf", 5}},
       12,
       {"spec.x: Invalid value: 12: spec.x in body should be a multiple of 5"}},
      {"int32 range",
       {{"type", "integer"}, {"format", "int32"}},
       3000000000LL,
       {"<nil>: Invalid value: \"\": Checked value must be of type integer with format int32 in "
        "spec.x"}},
      {"maxLength counts code points",
       {{"type", "string"}, {"maxLength", 3}},
       "\xc3\xa9t\xc3\xa9",
       {}},
      {"maxLength",
       {{"type", "string"}, {"maxLength", 3}},
       "abcd",
       {"spec.x: Too long: may not be more than 3 bytes"}},
      {"minLength",
       {{"type", "string"}, {"minLength", 1}},
       "",
       {"spec.x: Invalid value: \"\": spec.x in body should be at least 1 chars long"}},
      {"pattern ok",
       {{"type", "string"}, {"pattern", "^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$"}},
       "PortConflict,TypeConflict",
       {}},
      {"pattern",
       {{"type", "string"}, {"pattern", "^[a-z]+$"}},
       "Abc",
       {"spec.x: Invalid value: \"Abc\": spec.x in body should match '^[a-z]+$'"}},
      {"pattern searches, as Go's MatchString",
       {{"type", "string"}, {"pattern", "[0-9]"}},
       "a1",
       {}},
      {"maxLength before pattern",
       {{"type", "string"}, {"maxLength", 1}, {"pattern", "^[0-9]$"}},
       "ab",
       {"spec.x: Too long: may not be more than 1 bytes"}},
      {"date-time ok", {{"type", "string"}, {"format", "date-time"}}, "2024-02-29T10:00:00Z", {}},
      {"date-time with offset and fraction",
       {{"type", "string"}, {"format", "date-time"}},
       "2024-01-01T10:00:00.123+02:00",
       {}},
      {"date-time",
       {{"type", "string"}, {"format", "date-time"}},
       "yesterday",
       {"spec.x: Invalid value: \"yesterday\": spec.x in body must be of type date-time: "
        "\"yesterday\""}},
      {"date-time refuses a day that does not exist",
       {{"type", "string"}, {"format", "date-time"}},
       "2023-02-29T10:00:00Z",
       {"spec.x: Invalid value: \"2023-02-29T10:00:00Z\": spec.x in body must be of type "
        "date-time: \"2023-02-29T10:00:00Z\""}},
      {"uuid",
       {{"type", "string"}, {"format", "uuid"}},
       "not-a-uuid",
       {"spec.x: Invalid value: \"not-a-uuid\": spec.x in body must be of type uuid: "
        "\"not-a-uuid\""}},
      {"an unchecked format passes", {{"type", "string"}, {"format", "hostname"}}, "-", {}},
      {"maxItems",
       {{"type", "array"}, {"maxItems", 2}, {"items", {{"type", "string"}}}},
       {"1.2.3.4", "5.6.7.8", "9.9.9.9"},
       {"spec.x: Too many: 3: must have at most 2 items"}},
      {"minItems",
       {{"type", "array"}, {"minItems", 1}},
       json::array(),
       {"spec.x: Invalid value: 0: spec.x in body should have at least 1 items"}},
      {"items are validated with their index",
       {{"type", "array"}, {"items", {{"type", "string"}, {"enum", {"IPv4", "IPv6"}}}}},
       {"IPv4", "IPv5"},
       {"spec.x[1]: Unsupported value: \"IPv5\": supported values: \"IPv4\", \"IPv6\""}},
      {"required",
       {{"type", "object"},
        {"required", {"port", "name"}},
        {"properties", {{"port", {{"type", "integer"}}}}}},
       {{"port", 80}},
       {"spec.x.name: Required value"}},
      {"maxProperties",
       {{"type", "object"}, {"maxProperties", 1}, {"additionalProperties", {{"type", "string"}}}},
       {{"a", "1"}, {"b", "2"}},
       {"spec.x: Too many: 2: must have at most 1 items"}},
      {"additionalProperties values",
       {{"type", "object"}, {"additionalProperties", {{"type", "string"}}}},
       {{"a", 1}},
       {"spec.x.a: Invalid value: \"integer\": spec.x.a in body must be of type string: "
        "\"integer\""}},
      {"nullable accepts null", {{"type", "string"}, {"nullable", true}}, nullptr, {}},
      {"list-type set",
       {{"type", "array"}, {"x-kubernetes-list-type", "set"}, {"items", {{"type", "string"}}}},
       {"a", "b", "a", "a"},
       {"spec.x[2]: Duplicate value: \"a\""}},
      {"list-type map",
       {{"type", "array"},
        {"x-kubernetes-list-type", "map"},
        {"x-kubernetes-list-map-keys", {"type"}},
        {"items", {{"type", "object"}, {"properties", {{"type", {{"type", "string"}}}}}}}},
       {{{"type", "Ready"}}, {{"type", "Valid"}}, {{"type", "Ready"}}},
       {"spec.x[2]: Duplicate value: map[string]interface {}{\"type\":\"Ready\"}"}},
      {"list-type map with two keys",
       {{"type", "array"},
        {"x-kubernetes-list-type", "map"},
        {"x-kubernetes-list-map-keys", {"port", "protocol"}},
        {"items", {{"type", "object"}, {"x-kubernetes-preserve-unknown-fields", true}}}},
       {{{"port", 80}, {"protocol", "TCP"}},
        {{"port", 80}, {"protocol", "UDP"}},
        {{"port", 80}, {"protocol", "TCP"}}},
       {"spec.x[2]: Duplicate value: map[string]interface {}{\"port\":80, \"protocol\":\"TCP\"}"}},
      {"list-type map items must be objects",
       {{"type", "array"},
        {"x-kubernetes-list-type", "map"},
        {"x-kubernetes-list-map-keys", {"k"}}},
       {"a"},
       {"spec.x[0]: Invalid value: \"a\": must be an object for an array of list-type map"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(ValidateX(c.property, c.value), c.errors);
  }
}

// Several errors are reported together, the root's required fields too.
TEST(SchemaValidationTest, ReportsEveryError) {
  auto schema = MustCompile(json::parse(R"({
    "type": "object", "required": ["spec"],
    "properties": {"spec": {"type": "object", "required": ["ports", "type"],
      "properties": {"type": {"type": "string"}, "ports": {"type": "array"},
                     "ips": {"type": "array", "maxItems": 1}}}}})"));
  ASSERT_TRUE(schema);
  EXPECT_EQ(Render(schema->Validate(json::object())),
            std::vector<std::string>{"spec: Required value"});
  EXPECT_EQ(Render(schema->Validate({{"spec", {{"ips", {"a", "b"}}}}})),
            (std::vector<std::string>{"spec.ips: Too many: 2: must have at most 1 items",
                                      "spec.ports: Required value", "spec.type: Required value"}));
  // The reasons are field.ErrorType's.
  std::vector<StatusCause> causes = schema->Validate({{"spec", {{"ports", 1}, {"type", "a"}}}});
  ASSERT_EQ(causes.size(), 1u);
  EXPECT_EQ(causes[0].reason, "FieldValueTypeInvalid");
}

// Unknown fields are pruned (apiVersion, kind and metadata at the root are kept), and their paths
// reported as fieldValidation=Strict shows them; preserve-unknown-fields and additionalProperties
// keep what they allow.
TEST(SchemaValidationTest, PrunesUnknownFields) {
  auto schema = MustCompile(json::parse(R"({
    "type": "object",
    "properties": {
      "spec": {"type": "object", "properties": {
        "ports": {"type": "array", "items": {"type": "object", "properties": {"port": {"type": "integer"}}}},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                 "properties": {"typed": {"type": "object", "properties": {"a": {"type": "string"}}}}},
        "template": {"type": "object", "x-kubernetes-embedded-resource": true,
                     "x-kubernetes-preserve-unknown-fields": true}}}}})"));
  ASSERT_TRUE(schema);
  json object = json::parse(R"({
    "apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "odd": 1},
    "top": 1,
    "spec": {"foo": "bar",
             "ports": [{"port": 80, "name": "http"}, {"port": 81}],
             "labels": {"a": "b"},
             "free": {"anything": {"deep": true}, "typed": {"a": "x", "b": "y"}},
             "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                          "spec": {"x": 1}}}})");
  EXPECT_EQ(schema->Prune(object), (std::vector<std::string>{"spec.foo", "spec.free.typed.b",
                                                             "spec.ports[0].name", "top"}));
  EXPECT_EQ(object, json::parse(R"({
    "apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "odd": 1},
    "spec": {"ports": [{"port": 80}, {"port": 81}], "labels": {"a": "b"},
             "free": {"anything": {"deep": true}, "typed": {"a": "x"}},
             "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                          "spec": {"x": 1}}}})"));
  // A schema with no properties prunes everything but the type and object meta.
  auto bare = MustCompile({{"type", "object"}});
  json widget = {{"apiVersion", "v"}, {"kind", "K"}, {"metadata", {{"name", "n"}}}, {"spec", 1}};
  EXPECT_EQ(bare->Prune(widget), std::vector<std::string>{"spec"});
  EXPECT_EQ(widget, (json{{"apiVersion", "v"}, {"kind", "K"}, {"metadata", {{"name", "n"}}}}));
}

// Nulls where the schema is not nullable are dropped (so a required field set to null is
// missing), nullable ones kept.
TEST(SchemaValidationTest, DropsNonNullableNulls) {
  auto schema = MustCompile(json::parse(R"({
    "type": "object", "properties": {"spec": {"type": "object", "required": ["a"], "properties": {
      "a": {"type": "string"}, "b": {"type": "string", "nullable": true}}}}})"));
  ASSERT_TRUE(schema);
  json object = {{"spec", {{"a", nullptr}, {"b", nullptr}}}};
  EXPECT_TRUE(schema->Prune(object).empty());
  EXPECT_EQ(object, (json{{"spec", {{"b", nullptr}}}}));
  EXPECT_EQ(Render(schema->Validate(object)), std::vector<std::string>{"spec.a: Required value"});
}

// Defaults fill missing fields (and non-nullable nulls) top down, including inside list items
// and a defaulted object's own defaults.
TEST(SchemaValidationTest, AppliesDefaults) {
  auto schema = MustCompile(json::parse(R"({
    "type": "object", "properties": {"spec": {"type": "object", "properties": {
      "ports": {"type": "array", "items": {"type": "object", "properties": {
        "protocol": {"type": "string", "default": "TCP"}, "port": {"type": "integer"}}}},
      "policy": {"type": "object", "default": {}, "properties": {
        "mode": {"type": "string", "default": "all"}}},
      "kept": {"type": "string", "default": "d"}}}}})"));
  ASSERT_TRUE(schema);
  json object = {
      {"spec",
       {{"ports", {{{"port", 80}}, {{"port", 53}, {"protocol", "UDP"}}}}, {"kept", "mine"}}}};
  schema->ApplyDefaults(object);
  EXPECT_EQ(object, json::parse(R"({"spec": {
    "ports": [{"port": 80, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}],
    "policy": {"mode": "all"}, "kept": "mine"}})"));
}

// A status write validates status alone, named "status.…" with the detail relative to it.
TEST(SchemaValidationTest, ValidatesStatusAlone) {
  auto schema = MustCompile(SpecWith({{"type", "string"}, {"enum", {"Present", "Absent"}}}));
  ASSERT_TRUE(schema);
  json object = {{"spec", {{"x", 1}}}, {"status", {{"x", "Maybe"}}}};
  EXPECT_EQ(
      Render(schema->ValidateStatus(object)),
      std::vector<std::string>{
          "status.x: Unsupported value: \"Maybe\": supported values: \"Present\", \"Absent\""});
  json typed = {{"status", {{"x", 5}}}};
  EXPECT_EQ(Render(schema->ValidateStatus(typed)),
            (std::vector<std::string>{
                "status.x: Invalid value: \"integer\": x in body must be of type string: "
                "\"integer\"",
                "status.x: Unsupported value: 5: supported values: \"Present\", \"Absent\""}));
}

// List-type errors count on update only when the stored object had none (kube's ratchet).
TEST(SchemaValidationTest, ListTypesRatchetOnUpdate) {
  auto schema = MustCompile(SpecWith(
      {{"type", "array"}, {"x-kubernetes-list-type", "set"}, {"items", {{"type", "string"}}}}));
  ASSERT_TRUE(schema);
  json dup = {{"spec", {{"x", {"a", "a"}}}}};
  json clean = {{"spec", {{"x", {"a"}}}}};
  EXPECT_EQ(ValidateCustomResource(*schema, dup, nullptr, false).size(), 1u);
  EXPECT_EQ(ValidateCustomResource(*schema, dup, &clean, false).size(), 1u);
  EXPECT_TRUE(ValidateCustomResource(*schema, dup, &dup, false).empty());
}

// On update, an error about a value the stored object holds unchanged does not block the write
// (kube's validation ratcheting); a changed or new invalid value does.
TEST(SchemaValidationTest, RatchetsUnchangedValuesOnUpdate) {
  auto schema = MustCompile(json::parse(R"({"type": "object", "properties": {"spec": {
    "type": "object", "required": ["type"], "properties": {
      "type": {"type": "string", "enum": ["A", "B"]}, "note": {"type": "string"}}}}})"));
  ASSERT_TRUE(schema);
  const json old = {{"spec", {{"type", "Legacy"}}}};
  EXPECT_TRUE(
      ValidateCustomResource(*schema, {{"spec", {{"type", "Legacy"}}}}, &old, false).empty());
  EXPECT_EQ(ValidateCustomResource(*schema, {{"spec", {{"type", "Other"}}}}, &old, false).size(),
            1u);
  EXPECT_EQ(
      ValidateCustomResource(*schema, {{"spec", {{"type", "Legacy"}}}}, nullptr, false).size(), 1u);
  // A missing required field is judged on its parent: unchanged parent, no error.
  const json missing = {{"spec", {{"note", "n"}}}};
  EXPECT_TRUE(ValidateCustomResource(*schema, missing, &missing, false).empty());
  EXPECT_EQ(ValidateCustomResource(*schema, missing, &old, false).size(), 1u);
}

// Malformed schemas are refused with the keyword named, never a crash.
TEST(SchemaValidationTest, RefusesMalformedSchemas) {
  struct Case {
    std::string_view name;
    json schema;
    std::string message;
  };
  const Case cases[] = {
      {"not an object", json::array(), "s: Invalid value: []interface {}{}: must be an object"},
      {"unknown type",
       {{"type", "strin"}},
       "s.type: Unsupported value: \"strin\": supported values: \"array\", \"boolean\", "
       "\"integer\", \"number\", \"object\", \"string\""},
      {"bad pattern",
       {{"type", "object"}, {"properties", {{"a", {{"type", "string"}, {"pattern", "("}}}}}},
       "s.properties[a].pattern: Invalid value: \"(\": must be a valid regular expression, but "
       "isn't: "},
      {"negative maxLength",
       {{"maxLength", -1}},
       "s.maxLength: Invalid value: -1: must be a non-negative integer"},
      {"maxItems as a string",
       {{"maxItems", "2"}},
       "s.maxItems: Invalid value: \"2\": must be a non-negative integer"},
      {"properties as a list",
       {{"properties", {1}}},
       "s.properties: Invalid value: []interface {}{1}: must be an object"},
      {"items as a list",
       {{"items", json::array()}},
       "s.items: Forbidden: items must be a schema object and not an array"},
      {"list map without keys",
       {{"x-kubernetes-list-type", "map"}},
       "s.x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type "
       "is map"},
      {"required not strings",
       {{"required", {1}}},
       "s.required: Invalid value: []interface {}{1}: must be a list of strings"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Result<std::shared_ptr<const CompiledSchema>> compiled = CompiledSchema::Compile(c.schema, "s");
    ASSERT_FALSE(compiled.ok());
    EXPECT_EQ(compiled.status().code(), StatusCode::kInvalid);
    EXPECT_EQ(std::string(compiled.status().message()).substr(0, c.message.size()), c.message);
  }
  // A deeply nested schema is refused, not recursed into without bound.
  json deep = {{"type", "object"}};
  for (int i = 0; i < 300; ++i) deep = {{"type", "object"}, {"properties", {{"a", deep}}}};
  EXPECT_FALSE(CompiledSchema::Compile(deep, "s").ok());
}

// A long value against a pattern does not exhaust the stack: a pattern without escapes matches
// at any length; one that needs std::regex refuses values beyond 2 KiB.
TEST(SchemaValidationTest, LongValuesAgainstAPattern) {
  const json plain = {{"type", "string"}, {"pattern", "^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$"}};
  EXPECT_TRUE(ValidateX(plain, std::string(1024 * 1024, 'a')).empty());
  EXPECT_EQ(ValidateX(plain, std::string(1024 * 1024, 'a') + "-").size(), 1u);
  const json escaped = {{"type", "string"}, {"pattern", "^\\w*$"}};
  EXPECT_TRUE(ValidateX(escaped, std::string(1024, 'a')).empty());
  EXPECT_EQ(ValidateX(escaped, std::string(64 * 1024, 'a')).size(), 1u);
}

// Random schemas (keywords with values of every JSON type) and random objects: compiling either
// refuses or accepts, and an accepted schema prunes, defaults and validates anything without
// crashing (run under the sanitizers in CI). Seeded, so a failure reproduces.
TEST(SchemaValidationTest, SurvivesRandomSchemasAndObjects) {
  std::mt19937 rng(20261206);
  const std::vector<std::string> keys = {"type",
                                         "format",
                                         "nullable",
                                         "enum",
                                         "default",
                                         "required",
                                         "properties",
                                         "items",
                                         "additionalProperties",
                                         "maxLength",
                                         "minLength",
                                         "pattern",
                                         "maximum",
                                         "minimum",
                                         "exclusiveMaximum",
                                         "multipleOf",
                                         "maxItems",
                                         "minItems",
                                         "maxProperties",
                                         "x-kubernetes-list-type",
                                         "x-kubernetes-list-map-keys",
                                         "x-kubernetes-int-or-string",
                                         "x-kubernetes-preserve-unknown-fields",
                                         "x-kubernetes-embedded-resource",
                                         "spec",
                                         "a",
                                         "b"};
  const std::vector<json> scalars = {
      nullptr,      true,     false,   0,          -1,        2,
      3000000000LL, 1.5,      -1e300,  "",         "a",       "string",
      "integer",    "object", "array", "number",   "boolean", "int32",
      "date-time",  "map",    "set",   "^[a-z]+$", "(",       "2024-01-01T00:00:00Z"};
  std::function<json(int)> random_value = [&](int depth) -> json {
    const int pick = static_cast<int>(rng() % (depth > 0 ? 4 : 2));
    if (pick < 2) return scalars[rng() % scalars.size()];
    if (pick == 2) {
      json array = json::array();
      for (std::uint32_t i = rng() % 4; i > 0; --i) array.push_back(random_value(depth - 1));
      return array;
    }
    json object = json::object();
    for (std::uint32_t i = rng() % 5; i > 0; --i) {
      object[keys[rng() % keys.size()]] = random_value(depth - 1);
    }
    return object;
  };
  int accepted = 0;
  for (int i = 0; i < 3000; ++i) {
    const json schema = random_value(5);
    Result<std::shared_ptr<const CompiledSchema>> compiled = CompiledSchema::Compile(schema, "s");
    if (!compiled.ok()) {
      EXPECT_EQ(compiled.status().code(), StatusCode::kInvalid);
      continue;
    }
    ++accepted;
    for (int j = 0; j < 5; ++j) {
      json object = random_value(5);
      json before = object;
      (void)(*compiled)->Prune(object);
      (*compiled)->ApplyDefaults(object);
      (void)(*compiled)->Validate(object);
      (void)(*compiled)->ValidateStatus(object);
      (void)ValidateCustomResource(**compiled, object, &before, j % 2 == 0);
    }
  }
  EXPECT_GT(accepted, 100);
}

}  // namespace
}  // namespace slicewright::apiserver

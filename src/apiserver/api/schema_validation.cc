// Structural-schema pruning, defaulting and validation; see schema_validation.h. Upstream:
// k8s.io/apiextensions-apiserver pkg/apiserver/schema/{pruning,defaulting,listtype} and
// pkg/apiserver/validation over kube-openapi's validator (read, not copied). The validator
// follows kube-openapi's (pkg/validation/validate: the validators of one schema run in its order,
// type, string, format, number, slice, enum, object) and its messages (pkg/validation/errors), and
// apiextensions-apiserver's conversion of them to field errors (kubeOpenAPIResultToFieldErrors):
// the field is the error's name with the validated root's path in front, the detail repeats the
// name relative to that root ("status.x: Invalid value: 1: x in body ..." on /status), and an
// error that is no openapi Validation (a number out of its format's range) has no field at all
// and reads "<nil>: Invalid value: \"\": ...", as kube's does. Go iterates maps in random order;
// we walk keys sorted, so when several errors exist their order is stable where kube's is not.
#include "apiserver/api/schema_validation.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include <arpa/inet.h>
#include <nlohmann/json.hpp>
#include <regex.h>

namespace slicewright::apiserver {

namespace internal {

// One compiled schema node: the keywords kube's structural schemas use, type-checked.
struct SchemaNode {
  std::vector<std::string> types;  // empty: any; x-kubernetes-int-or-string: integer, string
  std::string format;
  bool nullable = false;
  bool preserve_unknown_fields = false;
  bool embedded_resource = false;
  std::map<std::string, SchemaNode, std::less<>> properties;
  // additionalProperties: a schema, or `true` (any value, pruned as by no schema) when
  // additional_allows without a node; `false` or absent: none.
  std::unique_ptr<SchemaNode> additional;
  bool additional_allows = false;
  std::unique_ptr<SchemaNode> items;
  std::unique_ptr<nlohmann::json> default_value;
  std::unique_ptr<nlohmann::json> enum_values;  // an array
  std::optional<double> maximum, minimum, multiple_of;
  bool exclusive_maximum = false, exclusive_minimum = false;
  std::optional<std::int64_t> max_length, min_length, max_items, min_items, max_properties,
      min_properties;
  std::string pattern;
  // The pattern as POSIX ERE when it reads the same there (no escapes, no "(?"): glibc's matcher
  // needs no stack per input character, unlike libstdc++'s std::regex (used otherwise).
  std::shared_ptr<regex_t> posix;
  std::optional<std::regex> regex;
  std::vector<std::string> required;
  std::string list_type;  // "", atomic, set, map
  std::vector<std::string> list_map_keys;

  bool HasType(std::string_view t) const {
    return std::find(types.begin(), types.end(), t) != types.end();
  }
};

}  // namespace internal

namespace {

using internal::SchemaNode;
using nlohmann::json;

// Strings longer than this are not matched against a pattern that needs std::regex: libstdc++'s
// executor recurses once per repeated character (a 8 KiB value overflowed an 8 MiB stack under
// AddressSanitizer). Such a value is refused as not matching (kube has no such limit; see
// docs/design.md). Patterns without escapes run on glibc's POSIX matcher, with no limit.
constexpr std::size_t kMaxPatternInput = std::size_t{2} * 1024;

// --- Go-style rendering of values, as field.Error's ErrorBody prints them ----------------------

std::string GoQuote(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\a':
        out += "\\a";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\v':
        out += "\\v";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          static constexpr char kHex[] = "0123456789abcdef";
          out += "\\x";
          out += kHex[c >> 4];
          out += kHex[c & 0xf];
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

// Go's %v of a float64 (strconv's 'g' with the shortest digits): exponent form when the exponent
// is below -4 or at least 6, so 86400 but 1e+06.
std::string GoFloat(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific);
  if (ec != std::errc()) return "0";
  std::string sci(buf, end);  // d.ddde±XX
  const std::size_t e = sci.find('e');
  const int exp = std::stoi(sci.substr(e + 1));
  std::string digits;
  const bool negative = sci[0] == '-';
  for (std::size_t i = negative ? 1 : 0; i < e; ++i) {
    if (sci[i] != '.') digits += sci[i];
  }
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  std::string out = negative ? "-" : "";
  if (exp < -4 || exp >= 6) {
    out += digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    const std::string magnitude = std::to_string(std::abs(exp));
    return out + (exp < 0 ? "e-" : "e+") + (magnitude.size() < 2 ? "0" : "") + magnitude;
  }
  if (exp < 0) return out + "0." + std::string(static_cast<std::size_t>(-exp - 1), '0') + digits;
  const std::size_t point = static_cast<std::size_t>(exp) + 1;
  if (digits.size() <= point) return out + digits + std::string(point - digits.size(), '0');
  return out + digits.substr(0, point) + "." + digits.substr(point);
}

// A JSON number as Go's decoder into interface{} holds it: int64, or float64 beyond.
bool AsInt64(const json& v, std::int64_t& out) {
  if (v.is_number_unsigned()) {
    const std::uint64_t u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return false;
    out = static_cast<std::int64_t>(u);
    return true;
  }
  if (v.is_number_integer()) {
    out = v.get<std::int64_t>();
    return true;
  }
  return false;
}

double AsDouble(const json& v) { return v.is_number() ? v.get<double>() : 0; }

// Whether converting `d` to int64 is defined (Go's conversion would not fail either way).
bool FitsInt64(double d) {
  return std::isfinite(d) && d >= -9.223372036854775808e18 && d < 9.223372036854775808e18;
}

// Go's %#v of a decoded JSON value (map[string]interface {}{...}, []interface {}{...}).
std::string GoSharpV(const json& v) {
  std::int64_t i = 0;
  if (v.is_null()) return "interface {}(nil)";
  if (v.is_string()) return GoQuote(v.get_ref<const std::string&>());
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (AsInt64(v, i)) return std::to_string(i);
  if (v.is_number()) return GoFloat(AsDouble(v));
  std::string out;
  if (v.is_array()) {
    out = "[]interface {}{";
    for (std::size_t k = 0; k < v.size(); ++k) out += (k > 0 ? ", " : "") + GoSharpV(v[k]);
    return out + "}";
  }
  out = "map[string]interface {}{";
  bool first = true;
  for (const auto& [key, value] : v.items()) {
    out += (first ? "" : ", ") + GoQuote(key) + ":" + GoSharpV(value);
    first = false;
  }
  return out + "}";
}

// field.Error's rendering of a bad value (ErrorBody): nil as "null" quoted, simple types bare,
// strings quoted, compound values with %#v.
std::string GoValue(const json& v) {
  std::int64_t i = 0;
  if (v.is_null()) return "\"null\"";
  if (v.is_string()) return GoQuote(v.get_ref<const std::string&>());
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (AsInt64(v, i)) return std::to_string(i);
  if (v.is_number()) return GoFloat(AsDouble(v));
  return GoSharpV(v);
}

// The JSON type name kube-openapi gives a value, and the format Go's reflection implies.
std::string_view TypeOf(const json& v) {
  if (v.is_boolean()) return "boolean";
  if (v.is_string()) return "string";
  std::int64_t i = 0;
  if (AsInt64(v, i)) return "integer";
  if (v.is_number()) return "number";
  if (v.is_array()) return "array";
  if (v.is_object()) return "object";
  return "null";
}

std::string_view FormatOf(const json& v) {
  std::int64_t i = 0;
  if (AsInt64(v, i)) return "int64";
  if (v.is_number()) return "float64";
  return "";
}

// a + b + c (+ d) in one allocation.
std::string Cat(std::string_view a, std::string_view b, std::string_view c,
                std::string_view d = "") {
  std::string out;
  out.reserve(a.size() + b.size() + c.size() + d.size());
  out.append(a).append(b).append(c).append(d);
  return out;
}

std::size_t CodePoints(std::string_view s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xc0) != 0x80;
  return n;
}

// --- compiling -----------------------------------------------------------------------------

class Compiler final {
 public:
  void Add(std::string field, std::string reason, std::string message) {
    causes_.push_back(StatusCause{std::move(reason), std::move(message), std::move(field)});
  }
  const std::vector<StatusCause>& causes() const { return causes_; }

  void Node(const json& s, const std::string& path, SchemaNode& node, int depth) {
    if (!s.is_object()) {
      Add(path, "FieldValueInvalid", "Invalid value: " + GoValue(s) + ": must be an object");
      return;
    }
    if (depth > 200) {
      Add(path, "FieldValueForbidden", "Forbidden: schema nested too deeply");
      return;
    }
    if (const json* type = Find(s, "type")) {
      static const std::vector<std::string> kTypes = {"array",  "boolean", "integer",
                                                      "number", "object",  "string"};
      if (!type->is_string() ||
          std::find(kTypes.begin(), kTypes.end(), type->get<std::string>()) == kTypes.end()) {
        std::string supported;
        for (const std::string& t : kTypes)
          supported += (supported.empty() ? "" : ", ") + GoQuote(t);
        Add(path + ".type", "FieldValueNotSupported",
            "Unsupported value: " + GoValue(*type) + ": supported values: " + supported);
      } else {
        node.types = {type->get<std::string>()};
      }
    }
    Bool(s, "x-kubernetes-int-or-string", path, [&](bool b) {
      if (b) node.types = {"integer", "string"};
    });
    String(s, "format", path, node.format);
    Bool(s, "nullable", path, [&](bool b) { node.nullable = b; });
    Bool(s, "x-kubernetes-preserve-unknown-fields", path,
         [&](bool b) { node.preserve_unknown_fields = b; });
    Bool(s, "x-kubernetes-embedded-resource", path, [&](bool b) { node.embedded_resource = b; });
    Bool(s, "exclusiveMaximum", path, [&](bool b) { node.exclusive_maximum = b; });
    Bool(s, "exclusiveMinimum", path, [&](bool b) { node.exclusive_minimum = b; });
    Number(s, "maximum", path, node.maximum);
    Number(s, "minimum", path, node.minimum);
    Number(s, "multipleOf", path, node.multiple_of);
    if (node.multiple_of && *node.multiple_of <= 0) {
      Add(path + ".multipleOf", "FieldValueInvalid",
          "Invalid value: " + GoFloat(*node.multiple_of) + ": must be greater than zero");
      node.multiple_of.reset();
    }
    Count(s, "maxLength", path, node.max_length);
    Count(s, "minLength", path, node.min_length);
    Count(s, "maxItems", path, node.max_items);
    Count(s, "minItems", path, node.min_items);
    Count(s, "maxProperties", path, node.max_properties);
    Count(s, "minProperties", path, node.min_properties);
    if (String(s, "pattern", path, node.pattern) && !node.pattern.empty()) {
      try {
        node.regex.emplace(node.pattern, std::regex::ECMAScript);
        if (node.pattern.find('\\') == std::string::npos &&
            node.pattern.find("(?") == std::string::npos) {
          auto compiled = std::make_unique<regex_t>();
          if (regcomp(compiled.get(), node.pattern.c_str(), REG_EXTENDED | REG_NOSUB) == 0) {
            node.posix = std::shared_ptr<regex_t>(compiled.release(), [](regex_t* r) {
              regfree(r);
              delete r;
            });
          }
        }
      } catch (const std::regex_error& e) {
        Add(path + ".pattern", "FieldValueInvalid",
            "Invalid value: " + GoQuote(node.pattern) +
                ": must be a valid regular expression, but isn't: " + e.what());
      }
    }
    if (const json* e = Find(s, "enum")) {
      if (e->is_array()) {
        node.enum_values = std::make_unique<json>(*e);
      } else {
        Add(path + ".enum", "FieldValueInvalid",
            "Invalid value: " + GoValue(*e) + ": must be a list");
      }
    }
    if (const json* d = Find(s, "default")) node.default_value = std::make_unique<json>(*d);
    Strings(s, "required", path, node.required);
    if (String(s, "x-kubernetes-list-type", path, node.list_type) && node.list_type != "atomic" &&
        node.list_type != "set" && node.list_type != "map") {
      Add(path + ".x-kubernetes-list-type", "FieldValueNotSupported",
          "Unsupported value: " + GoQuote(node.list_type) +
              ": supported values: \"atomic\", \"set\", \"map\"");
      node.list_type.clear();
    }
    Strings(s, "x-kubernetes-list-map-keys", path, node.list_map_keys);
    if (node.list_type == "map" && node.list_map_keys.empty()) {
      Add(path + ".x-kubernetes-list-map-keys", "FieldValueRequired",
          "Required value: must not be empty if x-kubernetes-list-type is map");
    }
    if (const json* props = Find(s, "properties")) {
      if (!props->is_object()) {
        Add(path + ".properties", "FieldValueInvalid",
            "Invalid value: " + GoValue(*props) + ": must be an object");
      } else {
        for (const auto& [key, sub] : props->items()) {
          Node(sub, Cat(path, ".properties[", key, "]"), node.properties[key], depth + 1);
        }
      }
    }
    if (const json* additional = Find(s, "additionalProperties")) {
      if (additional->is_boolean()) {
        node.additional_allows = additional->get<bool>();
      } else {
        node.additional_allows = true;
        node.additional = std::make_unique<SchemaNode>();
        Node(*additional, path + ".additionalProperties", *node.additional, depth + 1);
      }
    }
    if (const json* items = Find(s, "items")) {
      if (items->is_array()) {
        Add(path + ".items", "FieldValueForbidden",
            "Forbidden: items must be a schema object and not an array");
      } else {
        node.items = std::make_unique<SchemaNode>();
        Node(*items, path + ".items", *node.items, depth + 1);
      }
    }
  }

 private:
  static const json* Find(const json& s, std::string_view key) {
    auto it = s.find(key);
    return it == s.end() || it->is_null() ? nullptr : &*it;
  }
  template <typename F>
  void Bool(const json& s, std::string_view key, const std::string& path, F set) {
    if (const json* v = Find(s, key)) {
      if (v->is_boolean()) {
        set(v->get<bool>());
      } else {
        Add(path + "." + std::string(key), "FieldValueInvalid",
            "Invalid value: " + GoValue(*v) + ": must be a boolean");
      }
    }
  }
  bool String(const json& s, std::string_view key, const std::string& path, std::string& out) {
    const json* v = Find(s, key);
    if (v == nullptr) return false;
    if (!v->is_string()) {
      Add(path + "." + std::string(key), "FieldValueInvalid",
          "Invalid value: " + GoValue(*v) + ": must be a string");
      return false;
    }
    out = v->get<std::string>();
    return true;
  }
  void Number(const json& s, std::string_view key, const std::string& path,
              std::optional<double>& out) {
    if (const json* v = Find(s, key)) {
      if (v->is_number()) {
        out = v->get<double>();
      } else {
        Add(path + "." + std::string(key), "FieldValueInvalid",
            "Invalid value: " + GoValue(*v) + ": must be a number");
      }
    }
  }
  void Count(const json& s, std::string_view key, const std::string& path,
             std::optional<std::int64_t>& out) {
    if (const json* v = Find(s, key)) {
      std::int64_t n = 0;
      if (AsInt64(*v, n) && n >= 0) {
        out = n;
      } else {
        Add(path + "." + std::string(key), "FieldValueInvalid",
            "Invalid value: " + GoValue(*v) + ": must be a non-negative integer");
      }
    }
  }
  void Strings(const json& s, std::string_view key, const std::string& path,
               std::vector<std::string>& out) {
    const json* v = Find(s, key);
    if (v == nullptr) return;
    bool ok = v->is_array();
    if (ok) {
      for (const json& item : *v) {
        if (!item.is_string()) {
          ok = false;
          break;
        }
        out.push_back(item.get<std::string>());
      }
    }
    if (!ok) {
      out.clear();
      Add(path + "." + std::string(key), "FieldValueInvalid",
          "Invalid value: " + GoValue(*v) + ": must be a list of strings");
    }
  }

  std::vector<StatusCause> causes_;
};

// --- pruning and defaulting ----------------------------------------------------------------

bool IsMetaField(std::string_view key) {
  return key == "apiVersion" || key == "kind" || key == "metadata";
}

// Tracks the path of the value being pruned, as kube's UnknownFieldPathOptions does.
class Pruner final {
 public:
  std::vector<std::string> unknown;

  // `s` null: no schema (everything inside an object is unknown). `embedded`: the node skips the
  // type and object meta fields (the resource root, x-kubernetes-embedded-resource).
  void Prune(json& x, const SchemaNode* s, bool embedded, std::string& path) {
    if (s != nullptr && s->preserve_unknown_fields) {
      SkipPrune(x, *s, embedded, path);
      return;
    }
    const std::size_t len = path.size();
    if (x.is_object()) {
      for (auto it = x.begin(); it != x.end();) {
        const std::string key = it.key();
        if (s != nullptr && embedded && IsMetaField(key)) {
          ++it;
          continue;
        }
        const SchemaNode* sub = nullptr;
        bool known = false;
        if (s != nullptr) {
          if (auto p = s->properties.find(key); p != s->properties.end()) {
            sub = &p->second;
            known = true;
          } else if (s->additional_allows) {
            sub = s->additional.get();
            known = true;
          }
        }
        if (known) {
          AppendKey(path, key);
          Prune(it.value(), sub, sub != nullptr && sub->embedded_resource, path);
          path.resize(len);
          ++it;
        } else {
          // kube leaves a root meta field it prunes out of the report (it handles those itself).
          if (!IsMetaField(key) || len > 0) {
            AppendKey(path, key);
            unknown.push_back(path);
            path.resize(len);
          }
          it = x.erase(it);
        }
      }
    } else if (x.is_array()) {
      const SchemaNode* items = s != nullptr ? s->items.get() : nullptr;
      for (std::size_t i = 0; i < x.size(); ++i) {
        path += "[" + std::to_string(i) + "]";
        Prune(x[i], items, items != nullptr && items->embedded_resource, path);
        path.resize(len);
      }
    }
  }

 private:
  static void AppendKey(std::string& path, const std::string& key) {
    if (!path.empty()) path += ".";
    path += key;
  }

  void SkipPrune(json& x, const SchemaNode& s, bool embedded, std::string& path) {
    const std::size_t len = path.size();
    if (x.is_object()) {
      for (auto it = x.begin(); it != x.end(); ++it) {
        if (embedded && IsMetaField(it.key())) continue;
        const SchemaNode* sub = nullptr;
        if (auto p = s.properties.find(it.key()); p != s.properties.end()) {
          sub = &p->second;
        } else if (s.additional_allows) {
          sub = s.additional.get();
        } else {
          continue;
        }
        AppendKey(path, it.key());
        Prune(it.value(), sub, sub != nullptr && sub->embedded_resource, path);
        path.resize(len);
      }
    } else if (x.is_array() && s.items != nullptr) {
      for (std::size_t i = 0; i < x.size(); ++i) {
        path += "[" + std::to_string(i) + "]";
        SkipPrune(x[i], *s.items, s.items->embedded_resource, path);
        path.resize(len);
      }
    }
  }
};

const SchemaNode* SchemaForField(const SchemaNode* s, const std::string& key) {
  if (s == nullptr) return nullptr;
  if (auto p = s->properties.find(key); p != s->properties.end()) return &p->second;
  return s->additional.get();
}

// defaulting.PruneNonNullableNullsWithoutDefaults.
void PruneNulls(json& x, const SchemaNode* s) {
  if (x.is_object()) {
    for (auto it = x.begin(); it != x.end();) {
      const SchemaNode* sub = SchemaForField(s, it.key());
      if (it->is_null() && sub != nullptr && !sub->nullable && sub->default_value == nullptr) {
        it = x.erase(it);
      } else {
        PruneNulls(it.value(), sub);
        ++it;
      }
    }
  } else if (x.is_array()) {
    const SchemaNode* items = s != nullptr ? s->items.get() : nullptr;
    for (json& item : x) PruneNulls(item, items);
  }
}

bool NonNullableNull(const json& x, const SchemaNode* s) {
  return x.is_null() && s != nullptr && !s->nullable;
}

// defaulting.Default.
void Default(json& x, const SchemaNode* s) {
  if (s == nullptr) return;
  if (x.is_object()) {
    for (const auto& [key, prop] : s->properties) {
      if (prop.default_value == nullptr) continue;
      auto it = x.find(key);
      if (it == x.end() || NonNullableNull(*it, &prop)) x[key] = *prop.default_value;
    }
    for (auto it = x.begin(); it != x.end(); ++it) {
      if (auto p = s->properties.find(it.key()); p != s->properties.end()) {
        Default(it.value(), &p->second);
      } else if (s->additional != nullptr) {
        if (NonNullableNull(*it, s->additional.get())) {
          it.value() = s->additional->default_value ? *s->additional->default_value : json();
        }
        Default(it.value(), s->additional.get());
      }
    }
  } else if (x.is_array() && s->items != nullptr) {
    for (json& item : x) {
      if (NonNullableNull(item, s->items.get()) && s->items->default_value != nullptr) {
        item = *s->items->default_value;
      }
      Default(item, s->items.get());
    }
  }
}

// --- validation ----------------------------------------------------------------------------

// Collects kube-openapi's errors as the field errors kube-apiserver turns them into.
class Validator final {
 public:
  // `prefix`: the field path of the validated root ("" for the object, "status" for /status).
  explicit Validator(std::string prefix) : prefix_(std::move(prefix)) {}

  std::vector<StatusCause> causes;

  void Validate(const SchemaNode& s, const json& data, const std::string& name) {
    if (data.is_null()) {
      CheckType(s, data, name);
      CheckEnum(s, data, name);
      return;
    }
    CheckType(s, data, name);
    if (data.is_string()) {
      CheckString(s, data.get_ref<const std::string&>(), name);
      CheckFormat(s, data.get_ref<const std::string&>(), name);
    }
    if (data.is_number()) CheckNumber(s, data, name);
    if (data.is_array()) CheckArray(s, data, name);
    CheckEnum(s, data, name);
    if (data.is_object()) CheckObject(s, data, name);
  }

 private:
  // The field kube derives from an openapi error's name.
  std::string Field(const std::string& name) const {
    std::string_view n = name;
    if (n == ".") n = "";
    if (!n.empty() && n.front() == '.') n.remove_prefix(1);
    if (n.empty()) return prefix_.empty() ? "<nil>" : prefix_;
    return prefix_.empty() ? std::string(n) : prefix_ + "." + std::string(n);
  }
  void Push(std::string_view reason, const std::string& name, std::string body) {
    causes.push_back(StatusCause{std::string(reason), std::move(body), Field(name)});
  }
  void Invalid(const std::string& name, const json& value, const std::string& message) {
    Push("FieldValueInvalid", name, "Invalid value: " + GoValue(value) + ": " + message);
  }
  // kube-openapi's InvalidType: a string value is quoted into the message.
  void TypeInvalid(const std::string& name, std::string_view expected, const json& value) {
    std::string message = name + " in body must be of type " + std::string(expected);
    if (value.is_string()) message += ": " + GoQuote(value.get_ref<const std::string&>());
    Push("FieldValueTypeInvalid", name, "Invalid value: " + GoValue(value) + ": " + message);
  }
  // An error that is not an openapi Validation: kube gives it no field.
  void Unplaced(const std::string& message) {
    causes.push_back(StatusCause{"FieldValueInvalid", "Invalid value: \"\": " + message,
                                 prefix_.empty() ? "<nil>" : prefix_});
  }

  static std::string JoinTypes(const std::vector<std::string>& types) {
    std::string out;
    for (const std::string& t : types) out += (out.empty() ? "" : ",") + t;
    return out;
  }

  void CheckType(const SchemaNode& s, const json& data, const std::string& name) {
    if (s.types.empty() && s.format.empty()) return;
    if (data.is_null()) {
      if (!s.types.empty() && !s.HasType("null") && !s.nullable) {
        TypeInvalid(name, JoinTypes(s.types), json("null"));
      }
      return;
    }
    const std::string_view type = TypeOf(data);
    const std::string_view format = FormatOf(data);
    const bool float_int = type == "number" && s.HasType("integer") &&
                           std::trunc(AsDouble(data)) == AsDouble(data) &&
                           std::isfinite(AsDouble(data));
    const bool int_float = type == "integer" && s.HasType("number");
    const bool string_or_array = data.is_string() || data.is_array();
    if (!string_or_array && !s.format.empty() &&
        !(s.HasType(type) || format == s.format || float_int || int_float)) {
      TypeInvalid(name, s.format, json(std::string(format)));
      return;
    }
    if (!(s.HasType("number") || s.HasType("integer")) && !s.format.empty() && string_or_array) {
      return;
    }
    if (!(s.HasType(type) || float_int || int_float)) {
      TypeInvalid(name, JoinTypes(s.types), json(std::string(type)));
    }
  }

  // The string validator stops at its first failure: maxLength, minLength, pattern.
  void CheckString(const SchemaNode& s, const std::string& data, const std::string& name) {
    const std::size_t length = CodePoints(data);
    if (s.max_length && static_cast<std::int64_t>(length) > *s.max_length) {
      Push("FieldValueTooLong", name,
           "Too long: may not be more than " + std::to_string(*s.max_length) + " bytes");
      return;
    }
    if (s.min_length && static_cast<std::int64_t>(length) < *s.min_length) {
      Invalid(
          name, json(data),
          name + " in body should be at least " + std::to_string(*s.min_length) + " chars long");
      return;
    }
    if (s.regex) {
      bool matched = false;
      if (s.posix != nullptr && data.find('\0') == std::string::npos) {
        matched = regexec(s.posix.get(), data.c_str(), 0, nullptr, 0) == 0;
      } else if (data.size() <= kMaxPatternInput) {
        try {
          matched = std::regex_search(data, *s.regex);
        } catch (const std::regex_error&) {
          matched = false;  // too complex to evaluate: refused as not matching
        }
      }
      if (!matched) {
        Invalid(name, json(data), name + " in body should match '" + s.pattern + "'");
      }
    }
  }

  void CheckFormat(const SchemaNode& s, const std::string& data, const std::string& name) {
    std::string format = s.format;
    format.erase(std::remove(format.begin(), format.end(), '-'), format.end());
    std::optional<bool> ok;
    if (format == "datetime") ok = IsDateTime(data);
    if (format == "date") ok = IsDate(data);
    if (format == "uuid" || format == "uuid3" || format == "uuid4" || format == "uuid5") {
      ok = IsUuid(data, format);
    }
    if (format == "byte") ok = IsBase64(data);
    if (format == "ipv4") {
      in_addr addr{};
      ok = inet_pton(AF_INET, data.c_str(), &addr) == 1;
    }
    if (format == "ipv6") {
      in6_addr addr{};
      ok = inet_pton(AF_INET6, data.c_str(), &addr) == 1;
    }
    if (ok.has_value() && !*ok) TypeInvalid(name, s.format, json(data));
  }

  void CheckNumber(const SchemaNode& s, const json& data, const std::string& name) {
    std::string type_name;
    std::string format;
    if (s.types.size() == 1 && s.types[0] == "integer") {
      type_name = "integer";
      if (s.format == "int32" || s.format == "int64") format = s.format;
    } else if (s.types.size() == 1 && s.types[0] == "number") {
      type_name = "number";
      if (s.format == "float" || s.format == "double") format = s.format;
    }
    std::int64_t i = 0;
    const bool is_int = AsInt64(data, i);
    const double d = AsDouble(data);
    if (!InRange(data, type_name, format)) {
      Unplaced("Checked value must be of type " + type_name +
               (format.empty() ? " (default format)" : " with format " + format) + " in " + name);
    }
    if (s.multiple_of) {
      const double factor = *s.multiple_of;
      bool multiple = true;
      if (is_int && FitsInt64(factor) && InRange(json(factor), type_name, format) && factor >= 1 &&
          std::trunc(factor) == factor) {
        const auto f = static_cast<std::int64_t>(factor);
        multiple = i % f == 0;
      } else {
        const double mult = factor < 1 ? 1 / factor * d : d / factor;
        multiple = std::trunc(mult) == mult;
      }
      if (!multiple) {
        Invalid(name, data,
                name + " in body should be a multiple of " +
                    (is_int && FitsInt64(factor) && std::trunc(factor) == factor
                         ? std::to_string(static_cast<std::int64_t>(factor))
                         : GoFloat(factor)));
      }
    }
    // Int data is compared (and printed) as int64 against a bound that fits the format; anything
    // else as float64.
    auto bound_text = [&](double bound) {
      return is_int && FitsInt64(bound) && InRange(json(bound), type_name, format)
                 ? std::to_string(static_cast<std::int64_t>(bound))
                 : GoFloat(bound);
    };
    auto compare = [&](double bound, bool exclusive, bool maximum) {
      if (is_int && FitsInt64(bound) && InRange(json(bound), type_name, format)) {
        const auto b = static_cast<std::int64_t>(bound);
        return maximum ? (exclusive ? i >= b : i > b) : (exclusive ? i <= b : i < b);
      }
      return maximum ? (exclusive ? d >= bound : d > bound) : (exclusive ? d <= bound : d < bound);
    };
    if (s.maximum && compare(*s.maximum, s.exclusive_maximum, true)) {
      Invalid(name, data,
              name + " in body should be less than " + (s.exclusive_maximum ? "" : "or equal to ") +
                  bound_text(*s.maximum));
    }
    if (s.minimum && compare(*s.minimum, s.exclusive_minimum, false)) {
      Invalid(name, data,
              name + " in body should be greater than " +
                  (s.exclusive_minimum ? "" : "or equal to ") + bound_text(*s.minimum));
    }
  }

  // kube-openapi's IsValueValidAgainstRange: the value as text, parsed as the format's Go type.
  static bool InRange(const json& v, const std::string& type_name, const std::string& format) {
    std::int64_t i = 0;
    const bool is_int = AsInt64(v, i);
    const double d = AsDouble(v);
    if (type_name == "integer") {
      if (!is_int) {
        // swag.FormatFloat64 ('f', shortest) parses as an int64 only when integral and in range.
        if (!FitsInt64(d) || std::trunc(d) != d) {
          return false;
        }
        i = static_cast<std::int64_t>(d);
      }
      if (format == "int32") {
        return i >= std::numeric_limits<std::int32_t>::min() &&
               i <= std::numeric_limits<std::int32_t>::max();
      }
      return true;
    }
    if (format == "float") {
      return std::fabs(d) <= static_cast<double>(std::numeric_limits<float>::max());
    }
    return true;
  }

  void CheckArray(const SchemaNode& s, const json& data, const std::string& name) {
    if (s.items != nullptr) {
      for (std::size_t i = 0; i < data.size(); ++i) {
        Validate(*s.items, data[i], name + "[" + std::to_string(i) + "]");
      }
    }
    const auto size = static_cast<std::int64_t>(data.size());
    if (s.min_items && size < *s.min_items) {
      Invalid(name, json(size),
              name + " in body should have at least " + std::to_string(*s.min_items) + " items");
    }
    if (s.max_items && size > *s.max_items) {
      Push("FieldValueTooMany", name,
           "Too many: " + std::to_string(size) + ": must have at most " +
               std::to_string(*s.max_items) + " items");
    }
  }

  // Go's reflect conversion of the value to the enum value's type, then DeepEqual.
  static bool EnumMatches(const json& data, const json& value) {
    if (data.is_null()) return false;
    if (data.is_number() && value.is_number()) {
      std::int64_t want = 0;
      if (AsInt64(value, want)) {
        std::int64_t got = 0;
        if (AsInt64(data, got)) return got == want;
        const double d = AsDouble(data);
        return FitsInt64(d) && static_cast<std::int64_t>(d) == want;
      }
      return AsDouble(data) == AsDouble(value);
    }
    return data == value;
  }

  void CheckEnum(const SchemaNode& s, const json& data, const std::string& name) {
    if (s.enum_values == nullptr || s.enum_values->empty()) return;
    for (const json& value : *s.enum_values) {
      if (EnumMatches(data, value)) return;
    }
    std::string supported;
    for (const json& value : *s.enum_values) {
      supported += (supported.empty() ? "" : ", ") +
                   GoQuote(value.is_string() ? value.get<std::string>() : value.dump());
    }
    Push("FieldValueNotSupported", name,
         "Unsupported value: " + GoValue(data) + ": supported values: " + supported);
  }

  void CheckObject(const SchemaNode& s, const json& data, const std::string& name) {
    const auto keys = static_cast<std::int64_t>(data.size());
    if (s.min_properties && keys < *s.min_properties) {
      Invalid(name, json(keys),
              name + " in body should have at least " + std::to_string(*s.min_properties) +
                  " properties");
    }
    if (s.max_properties && keys > *s.max_properties) {
      Push("FieldValueTooMany", name,
           "Too many: " + std::to_string(keys) + ": must have at most " +
               std::to_string(*s.max_properties) + " items");
    }
    for (const auto& [key, value] : data.items()) {
      if (s.properties.contains(key)) continue;
      if (s.additional != nullptr) {
        Validate(*s.additional, value, Cat(name, ".", key));
      }
    }
    for (const auto& [key, prop] : s.properties) {
      auto it = data.find(key);
      if (it != data.end()) Validate(prop, *it, name.empty() ? key : Cat(name, ".", key));
    }
    for (const std::string& key : s.required) {
      if (!data.contains(key)) Push("FieldValueRequired", Cat(name, ".", key), "Required value");
    }
  }

  static bool IsDate(std::string_view s) {
    // Go's time.Parse("2006-01-02"): exactly this shape, a real day of a real month.
    if (s.size() != 10 || s[4] != '-' || s[7] != '-') return false;
    for (std::size_t i : {0, 1, 2, 3, 5, 6, 8, 9}) {
      if (s[i] < '0' || s[i] > '9') return false;
    }
    const int year = std::stoi(std::string(s.substr(0, 4)));
    const int month = std::stoi(std::string(s.substr(5, 2)));
    const int day = std::stoi(std::string(s.substr(8, 2)));
    static constexpr int kDays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (month < 1 || month > 12 || day < 1 || day > kDays[month - 1]) return false;
    const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    return !(month == 2 && day == 29 && !leap);
  }

  // strfmt.IsDateTime: lower-cased, split at each 't'; a date, then hh:mm:ss, an optional
  // fraction and z or an offset.
  static bool IsDateTime(std::string_view str) {
    if (str.size() < 4) return false;
    std::string lower(str);
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const std::size_t t = lower.find('t');
    if (t == std::string::npos || !IsDate(std::string_view(lower).substr(0, t))) return false;
    std::string rest = lower.substr(t + 1);
    if (const std::size_t next = rest.find('t'); next != std::string::npos) rest.resize(next);
    static const std::regex kTime(
        R"(^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$)");
    std::smatch m;
    if (rest.size() > 256 || !std::regex_search(rest, m, kTime)) return false;
    return m[1].str() <= "23" && m[2].str() <= "59" && m[3].str() <= "59";
  }

  static bool IsUuid(std::string_view s, std::string_view format) {
    if (s.size() != 36) return false;
    for (std::size_t i = 0; i < s.size(); ++i) {
      const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
      if (dash != (s[i] == '-')) return false;
      if (!dash && !std::isxdigit(static_cast<unsigned char>(s[i]))) return false;
    }
    if (format.size() == 5) return s[14] == format[4];  // the version digit of uuid3/4/5
    return true;
  }

  static bool IsBase64(std::string_view s) {
    if (s.size() % 4 != 0) return false;
    std::size_t padding = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
      const char c = s[i];
      if (c == '=') {
        ++padding;
        if (i + 2 < s.size()) return false;
        continue;
      }
      if (padding > 0) return false;
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '+' && c != '/') return false;
    }
    return true;
  }

  std::string prefix_;
};

// --- list types ----------------------------------------------------------------------------

class ListTypes final {
 public:
  std::vector<StatusCause> causes;

  void Object(const std::string& path, const SchemaNode& s, const json& obj) {
    if (!obj.is_object()) return;
    if (s.additional != nullptr) {
      for (const auto& [key, value] : obj.items()) {
        Value(Cat(path, "[", key, "]"), *s.additional, value);
      }
    }
    for (const auto& [key, value] : obj.items()) {
      if (auto p = s.properties.find(key); p != s.properties.end()) {
        Value(path.empty() ? key : Cat(path, ".", key), p->second, value);
      }
    }
  }

 private:
  void Value(const std::string& path, const SchemaNode& s, const json& obj) {
    if (obj.is_array()) {
      Array(path, s, obj);
    } else if (obj.is_object()) {
      Object(path, s, obj);
    }
  }

  void Duplicate(const std::string& path, const json& value) {
    causes.push_back(
        StatusCause{"FieldValueDuplicate", "Duplicate value: " + GoValue(value), path});
  }

  static std::string Index(const std::string& path, std::size_t i) {
    return path + "[" + std::to_string(i) + "]";
  }

  // validateListSet: the index of each value's second occurrence.
  static std::vector<std::size_t> NonUnique(const std::vector<json>& values) {
    std::map<std::string, int> seen;
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < values.size(); ++i) {
      // Type-tagged so that 1 and "1" (and Go's int64 1 and float64 1 among scalars) differ.
      const json& v = values[i];
      std::string key =
          std::string(TypeOf(v)) + ":" + v.dump(-1, ' ', false, json::error_handler_t::replace);
      if (++seen[key] == 2) out.push_back(i);
    }
    return out;
  }

  void Array(const std::string& path, const SchemaNode& s, const json& obj) {
    if (s.list_type == "set") {
      std::vector<json> values(obj.begin(), obj.end());
      for (std::size_t i : NonUnique(values)) Duplicate(Index(path, i), obj[i]);
    } else if (s.list_type == "map") {
      Map(path, s, obj);
    }
    if (s.items != nullptr) {
      for (std::size_t i = 0; i < obj.size(); ++i) Value(Index(path, i), *s.items, obj[i]);
    }
  }

  void Map(const std::string& path, const SchemaNode& s, const json& obj) {
    for (std::size_t i = 0; i < obj.size(); ++i) {
      if (!obj[i].is_null() && !obj[i].is_object()) {
        causes.push_back(StatusCause{"FieldValueInvalid",
                                     "Invalid value: " + GoValue(obj[i]) +
                                         ": must be an object for an array of list-type map",
                                     Index(path, i)});
        return;
      }
    }
    if (obj.size() <= 1) return;
    std::vector<json> keys;
    for (const json& item : obj) {
      json key = json::object();
      for (const std::string& field : s.list_map_keys) {
        if (item.is_object() && item.contains(field)) key[field] = item[field];
      }
      keys.push_back(std::move(key));
    }
    for (std::size_t i : NonUnique(keys)) Duplicate(Index(path, i), keys[i]);
  }
};

// The value at a field path as the causes name it ("spec.ports[0].port"), or null when absent.
const json* AtPath(const json& root, std::string_view path) {
  const json* at = &root;
  while (!path.empty()) {
    if (path.front() == '[') {
      const std::size_t close = path.find(']');
      if (close == std::string_view::npos || !at->is_array()) return nullptr;
      std::size_t index = 0;
      const auto [end, ec] = std::from_chars(path.data() + 1, path.data() + close, index);
      if (ec != std::errc() || end != path.data() + close || index >= at->size()) return nullptr;
      at = &(*at)[index];
      path.remove_prefix(close + 1);
      continue;
    }
    if (path.front() == '.') path.remove_prefix(1);
    const std::size_t stop = path.find_first_of(".[");
    const std::string key(path.substr(0, stop));
    if (!at->is_object()) return nullptr;
    auto it = at->find(key);
    if (it == at->end()) return nullptr;
    at = &*it;
    path.remove_prefix(stop == std::string_view::npos ? path.size() : stop);
  }
  return at;
}

// CRD validation ratcheting (on by default since kube 1.30): on update, an error about a value
// that the stored object holds unchanged at the same path does not block the write. A missing
// required field is judged on its parent object.
bool Ratcheted(const StatusCause& cause, const json& object, const json& old) {
  std::string_view path = cause.field;
  if (path == "<nil>") return false;
  if (cause.reason == "FieldValueRequired") {
    const std::size_t cut = path.find_last_of(".[");
    path = cut == std::string_view::npos ? std::string_view() : path.substr(0, cut);
  }
  const json* now = AtPath(object, path);
  const json* before = AtPath(old, path);
  return now != nullptr && before != nullptr && *now == *before;
}

std::vector<StatusCause> Dedupe(std::vector<StatusCause> causes) {
  // field.ErrorList.ToAggregate drops repeated messages.
  std::set<std::pair<std::string, std::string>> seen;
  std::vector<StatusCause> out;
  for (StatusCause& cause : causes) {
    if (seen.insert({cause.field, cause.message}).second) out.push_back(std::move(cause));
  }
  return out;
}

}  // namespace

CompiledSchema::CompiledSchema(std::unique_ptr<SchemaNode> root) : root_(std::move(root)) {}
CompiledSchema::~CompiledSchema() = default;

Result<std::shared_ptr<const CompiledSchema>> CompiledSchema::Compile(const json& schema,
                                                                      std::string_view path) {
  try {
    auto root = std::make_unique<SchemaNode>();
    Compiler compiler;
    compiler.Node(schema, std::string(path), *root, 0);
    if (!compiler.causes().empty()) {
      std::string message;
      for (const StatusCause& cause : compiler.causes()) {
        message += (message.empty() ? "" : ", ") + cause.field + ": " + cause.message;
      }
      if (compiler.causes().size() > 1) message = "[" + message + "]";
      Status status = InvalidError(std::move(message));
      status.WithCauses(compiler.causes());
      return status;
    }
    return std::shared_ptr<const CompiledSchema>(new CompiledSchema(std::move(root)));
  } catch (const std::exception& e) {
    return InvalidError(std::string(path) + ": malformed schema: " + e.what());
  }
}

std::vector<std::string> CompiledSchema::Prune(json& object) const {
  Pruner pruner;
  std::string path;
  pruner.Prune(object, root_.get(), /*embedded=*/true, path);
  PruneNulls(object, root_.get());
  std::sort(pruner.unknown.begin(), pruner.unknown.end());
  return pruner.unknown;
}

void CompiledSchema::ApplyDefaults(json& object) const { Default(object, root_.get()); }

std::vector<StatusCause> CompiledSchema::Validate(const json& object) const {
  Validator validator("");
  validator.Validate(*root_, object, "");
  std::vector<StatusCause> causes = std::move(validator.causes);
  for (StatusCause& cause : ValidateListTypes(object)) causes.push_back(std::move(cause));
  return Dedupe(std::move(causes));
}

std::vector<StatusCause> CompiledSchema::ValidateStatus(const json& object) const {
  std::vector<StatusCause> causes;
  auto status = object.is_object() ? object.find("status") : object.end();
  auto schema = root_->properties.find("status");
  if (object.is_object() && status != object.end() && schema != root_->properties.end()) {
    Validator validator("status");
    validator.Validate(schema->second, *status, "");
    causes = std::move(validator.causes);
  }
  for (StatusCause& cause : ValidateListTypes(object)) causes.push_back(std::move(cause));
  return Dedupe(std::move(causes));
}

std::vector<StatusCause> CompiledSchema::ValidateListTypes(const json& object) const {
  ListTypes list_types;
  list_types.Object("", *root_, object);
  return std::move(list_types.causes);
}

std::vector<StatusCause> ValidateCustomResource(const CompiledSchema& schema, const json& object,
                                                const json* old, bool status_subresource) {
  std::vector<StatusCause> causes =
      status_subresource ? schema.ValidateStatus(object) : schema.Validate(object);
  if (old != nullptr) {
    std::erase_if(causes, [&](const StatusCause& cause) { return Ratcheted(cause, object, *old); });
  }
  if (old != nullptr && !schema.ValidateListTypes(*old).empty()) {
    // kube's ratchet: list-type errors count only when the stored object had none.
    std::vector<StatusCause> list_causes = schema.ValidateListTypes(object);
    std::erase_if(causes, [&](const StatusCause& cause) {
      return std::find(list_causes.begin(), list_causes.end(), cause) != list_causes.end();
    });
  }
  return causes;
}

}  // namespace slicewright::apiserver

// CRD validation, conversion and status; see crd.h. Messages follow k8s.io/apiextensions-apiserver
// pkg/apis/apiextensions/validation and apimachinery's field.Error formatting.
#include "apiserver/api/crd.h"

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "slicewright/labels/validation.h"
#include "slicewright/model/time.h"

#include "apiserver/api/schema_validation.h"

namespace slicewright::apiserver {
namespace {

using nlohmann::json;

const json& Null() {
  static const json kNull;
  return kNull;
}

// Safe member access: a missing member, or a non-object parent, reads as null.
const json& Get(const json& j, std::string_view key) {
  if (!j.is_object()) return Null();
  auto it = j.find(key);
  return it == j.end() ? Null() : *it;
}

std::string Str(const json& j) { return j.is_string() ? j.get<std::string>() : std::string(); }

bool Bool(const json& j) { return j.is_boolean() && j.get<bool>(); }

std::string Quote(std::string_view s) {
  return json(std::string(s)).dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string ToLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::string Join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += sep;
    out += parts[i];
  }
  return out;
}

// apimachinery's IsDNS1035Label.
std::vector<std::string> IsDNS1035Label(std::string_view value) {
  std::vector<std::string> errs;
  if (value.size() > labels::kDNS1123LabelMaxLength) {
    errs.push_back(labels::MaxLenError(labels::kDNS1123LabelMaxLength));
  }
  bool ok = !value.empty() && value.front() >= 'a' && value.front() <= 'z';
  for (char c : value) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) ok = false;
  }
  if (ok && value.back() == '-') ok = false;
  if (!ok) {
    errs.push_back(labels::RegexError(
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with "
        "an alphabetic character, and end with an alphanumeric character",
        "[a-z]([-a-z0-9]*[a-z0-9])?", {"my-name", "abc-123"}));
  }
  return errs;
}

// A field.ErrorList rendered as apimachinery does, with one metav1.StatusCause per error.
class Errors final {
 public:
  void Required(std::string_view path, std::string_view detail = "") {
    Push("FieldValueRequired", path,
         "Required value" + (detail.empty() ? "" : ": " + std::string(detail)));
  }
  void Invalid(std::string_view path, std::string_view value_repr, std::string_view detail) {
    Push("FieldValueInvalid", path,
         "Invalid value: " + std::string(value_repr) + ": " + std::string(detail));
  }
  void NotSupported(std::string_view path, std::string_view value,
                    const std::vector<std::string>& supported) {
    std::vector<std::string> quoted;
    for (const std::string& s : supported) quoted.push_back(Quote(s));
    Push("FieldValueNotSupported", path,
         "Unsupported value: " + Quote(value) + ": supported values: " + Join(quoted, ", "));
  }
  void Duplicate(std::string_view path, std::string_view value) {
    Push("FieldValueDuplicate", path, "Duplicate value: " + Quote(value));
  }
  void TooMany(std::string_view path, std::size_t actual, std::size_t max) {
    Push("FieldValueTooMany", path,
         "Too many: " + std::to_string(actual) + ": must have at most " + std::to_string(max) +
             " items");
  }
  void TypeError(std::string_view path, std::string_view expected) {
    Push("FieldValueInvalid", path, "Invalid value: " + std::string(expected) + ": wrong type");
  }
  // An error already in cause form (a schema's).
  void Raw(StatusCause cause) { causes_.push_back(std::move(cause)); }
  bool empty() const { return causes_.empty(); }
  std::string Message() const {
    std::vector<std::string> errs;
    for (const StatusCause& c : causes_) errs.push_back(c.field + ": " + c.message);
    return errs.size() == 1 ? errs[0] : "[" + Join(errs, ", ") + "]";
  }
  const std::vector<StatusCause>& causes() const { return causes_; }

 private:
  void Push(std::string_view reason, std::string_view path, std::string body) {
    causes_.push_back(StatusCause{std::string(reason), std::move(body), std::string(path)});
  }
  std::vector<StatusCause> causes_;
};

void CheckDns1035(Errors& errs, std::string_view path, std::string_view value,
                  bool mixed_case = false) {
  std::vector<std::string> msgs = IsDNS1035Label(mixed_case ? ToLower(value) : std::string(value));
  if (msgs.empty()) return;
  std::string detail = Join(msgs, ",");
  if (mixed_case) detail = "may have mixed case, but should otherwise match: " + detail;
  errs.Invalid(path, Quote(value), detail);
}

// validateSimpleJSONPath.
void CheckSimpleJsonPath(Errors& errs, std::string_view path, std::string_view value) {
  if (value.empty()) {
    errs.Invalid(path, Quote(value), "must not be empty");
  } else if (value.front() != '.') {
    errs.Invalid(path, Quote(value), "must be a simple json path starting with .");
  }
}

std::vector<std::string> StringList(Errors& errs, const json& j, const std::string& path) {
  std::vector<std::string> out;
  if (j.is_null()) return out;
  if (!j.is_array()) {
    errs.TypeError(path, "array");
    return out;
  }
  for (std::size_t i = 0; i < j.size(); ++i) {
    if (!j[i].is_string()) {
      errs.TypeError(path + "[" + std::to_string(i) + "]", "string");
      continue;
    }
    out.push_back(j[i].get<std::string>());
  }
  return out;
}

struct Names {
  std::string plural, singular, kind, list_kind;
  std::vector<std::string> short_names, categories;
};

Names ReadNames(Errors& errs, const json& names, const std::string& path) {
  Names n;
  n.plural = Str(Get(names, "plural"));
  n.kind = Str(Get(names, "kind"));
  n.singular = Str(Get(names, "singular"));
  if (n.singular.empty()) n.singular = ToLower(n.kind);
  n.list_kind = Str(Get(names, "listKind"));
  if (n.list_kind.empty() && !n.kind.empty()) n.list_kind = n.kind + "List";
  n.short_names = StringList(errs, Get(names, "shortNames"), path + ".shortNames");
  n.categories = StringList(errs, Get(names, "categories"), path + ".categories");
  return n;
}

void ValidateNames(Errors& errs, const Names& n, const std::string& path) {
  if (n.plural.empty()) errs.Required(path + ".plural");
  if (n.singular.empty()) errs.Required(path + ".singular");
  if (n.kind.empty()) errs.Required(path + ".kind");
  if (n.list_kind.empty()) errs.Required(path + ".listKind");
  if (!n.plural.empty()) CheckDns1035(errs, path + ".plural", n.plural);
  if (!n.singular.empty()) CheckDns1035(errs, path + ".singular", n.singular);
  if (!n.kind.empty()) CheckDns1035(errs, path + ".kind", n.kind, true);
  if (!n.list_kind.empty()) CheckDns1035(errs, path + ".listKind", n.list_kind, true);
  for (std::size_t i = 0; i < n.short_names.size(); ++i) {
    CheckDns1035(errs, path + ".shortNames[" + std::to_string(i) + "]", n.short_names[i]);
  }
  if (!n.kind.empty() && n.kind == n.list_kind) {
    errs.Invalid(path + ".listKind", Quote(n.list_kind), "kind and listKind may not be the same");
  }
  for (std::size_t i = 0; i < n.categories.size(); ++i) {
    CheckDns1035(errs, path + ".categories[" + std::to_string(i) + "]", n.categories[i]);
  }
}

std::vector<PrinterColumn> ReadColumns(Errors& errs, const json& columns, const std::string& path) {
  static const std::vector<std::string> kTypes = {"boolean", "date", "integer", "number", "string"};
  static const std::vector<std::string> kFormats = {"byte",  "date",  "date-time", "double",
                                                    "float", "int32", "int64",     "password"};
  std::vector<PrinterColumn> out;
  if (columns.is_null()) return out;
  if (!columns.is_array()) {
    errs.TypeError(path, "array");
    return out;
  }
  for (std::size_t i = 0; i < columns.size(); ++i) {
    const json& c = columns[i];
    std::string p = path + "[" + std::to_string(i) + "]";
    PrinterColumn col;
    col.name = Str(Get(c, "name"));
    col.type = Str(Get(c, "type"));
    col.format = Str(Get(c, "format"));
    col.json_path = Str(Get(c, "jsonPath"));
    col.description = Str(Get(c, "description"));
    const json& priority = Get(c, "priority");
    if (priority.is_number_integer()) col.priority = priority.get<std::int32_t>();
    if (col.name.empty()) errs.Required(p + ".name");
    if (col.type.empty()) {
      errs.Required(p + ".type", "must be one of " + Join(kTypes, ","));
    } else if (std::find(kTypes.begin(), kTypes.end(), col.type) == kTypes.end()) {
      errs.Invalid(p + ".type", Quote(col.type), "must be one of " + Join(kTypes, ","));
    }
    if (!col.format.empty() &&
        std::find(kFormats.begin(), kFormats.end(), col.format) == kFormats.end()) {
      errs.Invalid(p + ".format", Quote(col.format), "must be one of " + Join(kFormats, ","));
    }
    if (col.json_path.empty()) {
      errs.Required(p + ".jsonPath");
    } else {
      CheckSimpleJsonPath(errs, p + ".jsonPath", col.json_path);
    }
    out.push_back(std::move(col));
  }
  return out;
}

std::vector<std::string> ReadSelectableFields(Errors& errs, const json& fields,
                                              const std::string& path) {
  constexpr std::size_t kMaxSelectableFields = 8;
  std::vector<std::string> out;
  if (fields.is_null()) return out;
  if (!fields.is_array()) {
    errs.TypeError(path, "array");
    return out;
  }
  if (fields.size() > kMaxSelectableFields) {
    errs.TooMany(path, fields.size(), kMaxSelectableFields);
  }
  std::vector<std::string> seen;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    std::string p = path + "[" + std::to_string(i) + "].jsonPath";
    std::string jp = Str(Get(fields[i], "jsonPath"));
    if (jp.empty()) {
      errs.Required(p);
      continue;
    }
    CheckSimpleJsonPath(errs, p, jp);
    if (std::find(seen.begin(), seen.end(), jp) != seen.end()) {
      errs.Duplicate(p, jp);
      continue;
    }
    seen.push_back(jp);
    if (jp.size() > 1 && jp.front() == '.') out.push_back(jp.substr(1));
  }
  return out;
}

// --- API approval of the protected groups (apiextensions' apihelpers) -------------------------

constexpr std::string_view kApprovalAnnotation = "api-approved.kubernetes.io";

enum class Approval { kInvalid, kApproved, kBypassed, kMissing };

bool IsAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

bool IsHex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// Go's url.ParseRequestURI(value) succeeding with a scheme and a host, as GetAPIApprovalState asks
// of an approval URL: "scheme://host[:port][/path][?query]", the scheme a letter then letters,
// digits, '+', '-' or '.', no control bytes, the host in the characters Go's parser allows there.
bool IsApprovalUrl(std::string_view value) {
  for (char c : value) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return false;
  }
  const std::size_t colon = value.find(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  const std::string_view scheme = value.substr(0, colon);
  if (!((scheme[0] >= 'a' && scheme[0] <= 'z') || (scheme[0] >= 'A' && scheme[0] <= 'Z'))) {
    return false;
  }
  for (char c : scheme) {
    if (!IsAlnum(c) && c != '+' && c != '-' && c != '.') return false;
  }
  std::string_view rest = value.substr(colon + 1);
  if (!rest.starts_with("//")) return false;  // opaque ("mailto:x"): no host
  rest.remove_prefix(2);
  std::string_view authority = rest.substr(0, rest.find_first_of("/?"));
  if (const std::size_t at = authority.rfind('@'); at != std::string_view::npos) {
    for (char c : authority.substr(0, at)) {
      if (!IsAlnum(c) && std::string_view("-._:~!$&'()*+,;=%@").find(c) == std::string_view::npos) {
        return false;
      }
    }
    authority.remove_prefix(at + 1);
  }
  std::string_view host = authority;
  if (host.starts_with('[')) {
    const std::size_t close = host.find(']');
    if (close == std::string_view::npos) return false;
    const std::string_view port = host.substr(close + 1);
    if (!port.empty() && port[0] != ':') return false;
    for (char c : port.substr(port.empty() ? 0 : 1)) {
      if (c < '0' || c > '9') return false;
    }
    return close > 1;
  }
  if (const std::size_t port_at = host.rfind(':'); port_at != std::string_view::npos) {
    for (char c : host.substr(port_at + 1)) {
      if (c < '0' || c > '9') return false;
    }
    host = host.substr(0, port_at);
  }
  if (host.empty()) return false;
  for (std::size_t i = 0; i < host.size(); ++i) {
    const char c = host[i];
    if (static_cast<unsigned char>(c) >= 0x80 || IsAlnum(c) ||
        std::string_view("-_.~!$&'()*+,;=[]<>\"").find(c) != std::string_view::npos) {
      continue;
    }
    if (c == '%' && i + 2 < host.size() && IsHex(host[i + 1]) && IsHex(host[i + 2])) {
      i += 2;
      continue;
    }
    return false;
  }
  return true;
}

std::pair<Approval, std::string> ApprovalState(const json& crd) {
  const std::string value =
      Str(Get(Get(Get(crd, "metadata"), "annotations"), std::string(kApprovalAnnotation)));
  if (value.empty()) {
    return {Approval::kMissing, "protected groups must have approval annotation \"" +
                                    std::string(kApprovalAnnotation) +
                                    "\", see https://github.com/kubernetes/enhancements/pull/1111"};
  }
  if (value.starts_with("unapproved")) {
    return {Approval::kBypassed, "not approved: " + Quote(value)};
  }
  if (IsApprovalUrl(value)) {
    return {Approval::kApproved, "approved in " + value};
  }
  return {Approval::kInvalid, "protected groups must have approval annotation \"" +
                                  std::string(kApprovalAnnotation) +
                                  "\" with either a URL or a reason starting with \"unapproved\", "
                                  "see https://github.com/kubernetes/enhancements/pull/1111"};
}

void ValidateApiApproval(Errors& errs, const json& crd, const json* old) {
  if (!IsProtectedCrdGroup(Str(Get(Get(crd, "spec"), "group")))) return;
  const auto [state, reason] = ApprovalState(crd);
  if (old != nullptr && ApprovalState(*old).first == state) return;
  const std::string path = "metadata.annotations[" + std::string(kApprovalAnnotation) + "]";
  switch (state) {
    case Approval::kMissing:
      errs.Required(path, reason);
      return;
    case Approval::kInvalid:
      errs.Invalid(path,
                   Quote(Str(Get(Get(Get(crd, "metadata"), "annotations"),
                                 std::string(kApprovalAnnotation)))),
                   reason);
      return;
    case Approval::kApproved:
    case Approval::kBypassed:
      return;
  }
}

Result<std::vector<ResourceInfo>> Convert(const json& crd, const json* old) {
  if (!crd.is_object()) return BadRequestError("a CustomResourceDefinition must be a JSON object");
  Errors errs;
  const json& spec = Get(crd, "spec");
  const std::string name = Str(Get(Get(crd, "metadata"), "name"));
  const std::string group = Str(Get(spec, "group"));
  Names names = ReadNames(errs, Get(spec, "names"), "spec.names");

  if (name.empty()) {
    errs.Required("metadata.name", "name or generateName is required");
  } else {
    for (const std::string& msg : labels::NameIsDNSSubdomain(name, false)) {
      errs.Invalid("metadata.name", Quote(name), msg);
    }
    if (name != names.plural + "." + group) {
      errs.Invalid("metadata.name", Quote(name), "must be spec.names.plural+\".\"+spec.group");
    }
  }
  if (group.empty()) {
    errs.Required("spec.group");
  } else if (std::vector<std::string> msgs = labels::IsDNS1123Subdomain(group); !msgs.empty()) {
    errs.Invalid("spec.group", Quote(group), Join(msgs, ","));
  } else if (group.find('.') == std::string::npos) {
    errs.Invalid("spec.group", Quote(group), "should be a domain with at least one dot");
  }
  const std::string scope = Str(Get(spec, "scope"));
  if (scope.empty()) {
    errs.Required("spec.scope");
  } else if (scope != "Cluster" && scope != "Namespaced") {
    errs.NotSupported("spec.scope", scope, {"Cluster", "Namespaced"});
  }

  const json& versions = Get(spec, "versions");
  std::vector<ResourceInfo> out;
  std::vector<std::string> version_names;
  int storage_count = 0;
  bool unique = true;
  if (!versions.is_null() && !versions.is_array()) errs.TypeError("spec.versions", "array");
  const std::size_t count = versions.is_array() ? versions.size() : 0;
  for (std::size_t i = 0; i < count; ++i) {
    const json& v = versions[i];
    const std::string p = "spec.versions[" + std::to_string(i) + "]";
    const std::string vname = Str(Get(v, "name"));
    if (std::find(version_names.begin(), version_names.end(), vname) != version_names.end()) {
      unique = false;
    }
    version_names.push_back(vname);
    CheckDns1035(errs, p + ".name", vname);
    if (Bool(Get(v, "storage"))) ++storage_count;
    const json& schema = Get(Get(v, "schema"), "openAPIV3Schema");
    std::shared_ptr<const CompiledSchema> structural;
    if (!schema.is_object()) {
      errs.Required(p + ".schema.openAPIV3Schema", "schemas are required");
    } else {
      Result<std::shared_ptr<const CompiledSchema>> compiled =
          CompiledSchema::Compile(schema, p + ".schema.openAPIV3Schema");
      if (compiled.ok()) {
        structural = std::move(compiled).value();
      } else {
        const Status refused = compiled.status();
        for (const StatusCause& cause : refused.causes()) {
          errs.Raw(cause);
        }
      }
    }
    const json& subresources = Get(v, "subresources");
    const json& status = Get(subresources, "status");
    std::vector<PrinterColumn> columns =
        ReadColumns(errs, Get(v, "additionalPrinterColumns"), p + ".additionalPrinterColumns");
    std::vector<std::string> selectable =
        ReadSelectableFields(errs, Get(v, "selectableFields"), p + ".selectableFields");
    if (!Bool(Get(v, "served"))) continue;
    ResourceInfo r;
    r.group = group;
    r.version = vname;
    r.resource = names.plural;
    r.singular = names.singular;
    r.kind = names.kind;
    r.list_kind = names.list_kind;
    r.namespaced = scope != "Cluster";
    r.has_status = status.is_object();
    r.short_names = names.short_names;
    r.categories = names.categories;
    r.tracks_generation = true;
    r.builtin = false;
    r.selectable_fields = std::move(selectable);
    if (columns.empty()) {
      PrinterColumn age;
      age.name = "Age";
      age.type = "date";
      age.json_path = ".metadata.creationTimestamp";
      age.description =
          "CreationTimestamp is a timestamp representing the server time when "
          "this object was created.";
      columns.push_back(std::move(age));
    }
    r.printer_columns = std::move(columns);
    r.crd_name = name;
    if (schema.is_object()) r.schema = std::make_shared<const json>(schema);
    r.structural = std::move(structural);
    out.push_back(std::move(r));
  }
  const std::string versions_repr =
      json(version_names).dump(-1, ' ', false, json::error_handler_t::replace);
  if (!unique) errs.Invalid("spec.versions", versions_repr, "must contain unique version names");
  if (storage_count != 1) {
    errs.Invalid("spec.versions", versions_repr,
                 "must have exactly one version marked as storage version");
  }
  ValidateNames(errs, names, "spec.names");
  ValidateApiApproval(errs, crd, old);
  if (!errs.empty()) {
    Status status = InvalidError(errs.Message());
    status.WithCauses(errs.causes());
    status.WithObject("customresourcedefinitions/" + name);
    return status;
  }
  return out;
}

json ConditionTrue(const json& existing, std::string_view type, std::string_view reason,
                   std::string_view message, const std::string& now) {
  std::string when = now;
  if (existing.is_array()) {
    for (const json& c : existing) {
      if (Str(Get(c, "type")) == type && Str(Get(c, "status")) == "True" &&
          Get(c, "lastTransitionTime").is_string()) {
        when = Str(Get(c, "lastTransitionTime"));
      }
    }
  }
  return {{"type", type},
          {"status", "True"},
          {"lastTransitionTime", when},
          {"reason", reason},
          {"message", message}};
}

}  // namespace

bool IsProtectedCrdGroup(std::string_view group) {
  return group == "k8s.io" || group.ends_with(".k8s.io") || group == "kubernetes.io" ||
         group.ends_with(".kubernetes.io");
}

json CrdApprovalCondition(const json& crd) {
  if (!IsProtectedCrdGroup(Str(Get(Get(crd, "spec"), "group")))) return json();
  const auto [state, reason] = ApprovalState(crd);
  std::string status = "False";
  std::string why;
  switch (state) {
    case Approval::kApproved:
      status = "True";
      why = "ApprovedAnnotation";
      break;
    case Approval::kBypassed:
      why = "UnapprovedAnnotation";
      break;
    case Approval::kMissing:
      why = "MissingAnnotation";
      break;
    case Approval::kInvalid:
      why = "InvalidAnnotation";
      break;
  }
  return {{"type", "KubernetesAPIApprovalPolicyConformant"},
          {"status", status},
          {"reason", why},
          {"message", reason}};
}

Result<std::vector<ResourceInfo>> ResourcesFromCrd(const json& crd, const json* old) {
  try {
    return Convert(crd, old);
  } catch (const json::exception& e) {
    return InvalidError(std::string("malformed CustomResourceDefinition: ") + e.what());
  }
}

json CrdEstablishedStatus(const json& crd, std::chrono::system_clock::time_point now) {
  try {
    const std::string when = model::FormatRfc3339(model::Time{
        std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count()});
    const json& spec = Get(crd, "spec");
    Errors ignored;
    Names n = ReadNames(ignored, Get(spec, "names"), "spec.names");
    json accepted = {{"plural", n.plural},
                     {"singular", n.singular},
                     {"kind", n.kind},
                     {"listKind", n.list_kind}};
    if (!n.short_names.empty()) accepted["shortNames"] = n.short_names;
    if (!n.categories.empty()) accepted["categories"] = n.categories;
    const json& old_status = Get(crd, "status");
    std::vector<std::string> stored = StringList(ignored, Get(old_status, "storedVersions"), "");
    const json& versions = Get(spec, "versions");
    if (versions.is_array()) {
      for (const json& v : versions) {
        std::string vname = Str(Get(v, "name"));
        if (Bool(Get(v, "storage")) && !vname.empty() &&
            std::find(stored.begin(), stored.end(), vname) == stored.end()) {
          stored.push_back(vname);
        }
      }
    }
    const json& old_conditions = Get(old_status, "conditions");
    json conditions = json::array(
        {ConditionTrue(old_conditions, "NamesAccepted", "NoConflicts", "no conflicts found", when),
         ConditionTrue(old_conditions, "Established", "InitialNamesAccepted",
                       "the initial names have been accepted", when)});
    if (json approval = CrdApprovalCondition(crd); !approval.is_null()) {
      // Its transition time moves only when its status does (apihelpers.SetCRDCondition).
      approval["lastTransitionTime"] = when;
      if (old_conditions.is_array()) {
        for (const json& c : old_conditions) {
          if (Str(Get(c, "type")) == Str(approval["type"]) &&
              Str(Get(c, "status")) == Str(approval["status"]) &&
              Get(c, "lastTransitionTime").is_string()) {
            approval["lastTransitionTime"] = c["lastTransitionTime"];
          }
        }
      }
      conditions.push_back(std::move(approval));
    }
    return {{"conditions", conditions}, {"acceptedNames", accepted}, {"storedVersions", stored}};
  } catch (const json::exception&) {
    return json::object();
  }
}

void DefaultCrd(json& crd) {
  if (!crd.is_object() || !crd["spec"].is_object()) return;
  json& spec = crd["spec"];
  if (spec["names"].is_object()) {
    json& names = spec["names"];
    const std::string kind = Str(Get(names, "kind"));
    if (Str(Get(names, "singular")).empty() && !kind.empty()) names["singular"] = ToLower(kind);
    if (Str(Get(names, "listKind")).empty() && !kind.empty()) names["listKind"] = kind + "List";
  }
  if (!spec.contains("conversion") || spec["conversion"].is_null()) {
    spec["conversion"] = {{"strategy", "None"}};
  }
}

}  // namespace slicewright::apiserver

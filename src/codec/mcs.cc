// The Multi-Cluster Services kinds: a simdjson walk for decoding (the codec's shared readers and
// list and watch frames, json_readers.h, with one set of templates for the four kinds) and plain
// string building for encoding, as coordination.cc does for Leases.

#include "slicewright/codec/mcs.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <simdjson.h>

#include "slicewright/base/status.h"
#include "slicewright/model/time.h"

#include "codec/internal.h"
#include "codec/json_readers.h"

namespace slicewright::codec {
namespace {

using internal::AtIndex;
using internal::AtKey;
using internal::Expected;
using internal::ForEachField;
using internal::ReadInt;
using internal::ReadList;
using internal::ReadOptBool;
using internal::ReadOptInt;
using internal::ReadOptString;
using internal::ReadString;
using internal::ReadStringList;
using internal::ReadStringMap;
using internal::ReadTime;
using internal::ReadTypeMeta;
using internal::SyntaxErrorOffset;
using simdjson::dom::element;

// The CRDs' schemas declare their integers format int32, and errors name it.
constexpr std::string_view kInt32 = "int32";

Status Required() { return BadRequestError("required field missing"); }

// "expected A or B, got \"C\"" for a string outside its enum.
Status NotInEnum(std::string_view allowed, std::string_view got) {
  std::string message = "expected " + std::string(allowed) + ", got ";
  internal::AppendJsonString(message, got);
  return BadRequestError(std::move(message));
}

// ---- Shared parts ----

Status ReadCondition(element value, model::Condition& out) {
  return ForEachField(value, [&out](std::string_view key, element v) {
    if (key == "type") return ReadString(v, out.type);
    if (key == "status") return ReadString(v, out.status);
    if (key == "observedGeneration") return ReadInt(v, out.observed_generation);
    if (key == "lastTransitionTime") return ReadTime(v, out.last_transition_time);
    if (key == "reason") return ReadString(v, out.reason);
    if (key == "message") return ReadString(v, out.message);
    return Status();
  });
}

Status ReadConditions(element value, std::vector<model::Condition>& out) {
  return ReadList(value, out, ReadCondition);
}

// `strict`: the record's schema (port required, protocol in the enum); a ServiceImport written by
// another implementation is read as it is.
Status ReadPort(element value, model::McsServicePort& out, bool strict) {
  bool has_port = false;
  SW_RETURN_IF_ERROR(ForEachField(value, [&](std::string_view key, element v) {
    if (key == "name") return ReadString(v, out.name);
    if (key == "protocol") return ReadString(v, out.protocol);
    if (key == "appProtocol") return ReadOptString(v, out.app_protocol);
    if (key == "port") {
      has_port = !v.is_null();
      return ReadInt(v, out.port, kInt32);
    }
    return Status();
  }));
  if (out.protocol.empty()) out.protocol = "TCP";  // the convention the CRD documents
  if (strict) {
    if (!has_port) return AtKey(Required(), "port");
    if (out.protocol != "TCP" && out.protocol != "UDP" && out.protocol != "SCTP") {
      return AtKey(NotInEnum("TCP, UDP or SCTP", out.protocol), "protocol");
    }
  }
  return Status();
}

Status ReadPorts(element value, std::vector<model::McsServicePort>& out, bool strict) {
  return ReadList(value, out,
                  [strict](element v, model::McsServicePort& p) { return ReadPort(v, p, strict); });
}

Status ReadClientIPConfig(element value, model::ClientIPConfig& out) {
  return ForEachField(value, [&out](std::string_view key, element v) {
    if (key == "timeoutSeconds") return ReadOptInt(v, out.timeout_seconds, kInt32);
    return Status();
  });
}

Status ReadSessionAffinityConfig(element value, std::optional<model::SessionAffinityConfig>& out) {
  if (value.is_null()) {
    out.reset();
    return Status();
  }
  model::SessionAffinityConfig config;
  SW_RETURN_IF_ERROR(ForEachField(value, [&config](std::string_view key, element v) -> Status {
    if (key != "clientIP") return Status();
    if (v.is_null()) {
      config.client_ip.reset();
      return Status();
    }
    config.client_ip.emplace();
    return ReadClientIPConfig(v, *config.client_ip);
  }));
  out = config;
  return Status();
}

// ---- ServiceExport ----

Status ReadServiceExport(element root, model::ServiceExport& out) {
  return ForEachField(root, [&out](std::string_view key, element v) {
    if (key == "metadata") return internal::DecodeObjectMetaValue(v, out.metadata);
    if (key == "spec") {
      return ForEachField(v, [&out](std::string_view k, element f) {
        if (k == "exportedLabels") return ReadStringMap(f, out.spec.exported_labels);
        if (k == "exportedAnnotations") return ReadStringMap(f, out.spec.exported_annotations);
        return Status();
      });
    }
    if (key == "status") {
      return ForEachField(v, [&out](std::string_view k, element f) {
        if (k == "conditions") return ReadConditions(f, out.status.conditions);
        return Status();
      });
    }
    return Status();
  });
}

// ---- ServiceImport ----

Status ReadEndpointSliceObjects(element value, model::EndpointSliceObjects& out) {
  std::string text;
  SW_RETURN_IF_ERROR(ReadString(value, text));
  if (text.empty()) {
    out = model::EndpointSliceObjects::kUnset;
  } else if (text == "Present") {
    out = model::EndpointSliceObjects::kPresent;
  } else if (text == "Absent") {
    out = model::EndpointSliceObjects::kAbsent;
  } else {
    return NotInEnum("Present or Absent", text);
  }
  return Status();
}

Status ReadServiceImportSpec(element value, model::ServiceImportSpec& out) {
  return ForEachField(value, [&out](std::string_view key, element v) {
    if (key == "ports") return ReadPorts(v, out.ports, /*strict=*/false);
    if (key == "ips") return ReadStringList(v, out.ips);
    if (key == "type") return ReadString(v, out.type);
    if (key == "sessionAffinity") return ReadString(v, out.session_affinity);
    if (key == "sessionAffinityConfig") {
      return ReadSessionAffinityConfig(v, out.session_affinity_config);
    }
    if (key == "ipFamilies") return ReadStringList(v, out.ip_families);
    if (key == "internalTrafficPolicy") return ReadString(v, out.internal_traffic_policy);
    if (key == "trafficDistribution") return ReadString(v, out.traffic_distribution);
    return Status();
  });
}

Status ReadServiceImportStatus(element value, model::ServiceImportStatus& out) {
  return ForEachField(value, [&out](std::string_view key, element v) {
    if (key == "clusters") {
      return ReadList(v, out.clusters, [](element item, std::string& cluster) {
        return ForEachField(item, [&cluster](std::string_view k, element f) {
          return k == "cluster" ? ReadString(f, cluster) : Status();
        });
      });
    }
    if (key == "conditions") return ReadConditions(v, out.conditions);
    if (key == "endpointSliceObjects") {
      return ReadEndpointSliceObjects(v, out.endpoint_slice_objects);
    }
    return Status();
  });
}

Status ReadServiceImport(element root, model::ServiceImport& out) {
  return ForEachField(root, [&out](std::string_view key, element v) {
    if (key == "metadata") return internal::DecodeObjectMetaValue(v, out.metadata);
    if (key == "spec") return ReadServiceImportSpec(v, out.spec);
    if (key == "status") return ReadServiceImportStatus(v, out.status);
    return Status();
  });
}

// ---- ClusterProperty ----

Status ReadClusterProperty(element root, model::ClusterProperty& out) {
  return ForEachField(root, [&out](std::string_view key, element v) {
    if (key == "metadata") return internal::DecodeObjectMetaValue(v, out.metadata);
    if (key == "spec") {
      return ForEachField(v, [&out](std::string_view k, element f) {
        return k == "value" ? ReadString(f, out.value) : Status();
      });
    }
    return Status();
  });
}

// ---- ServiceExportRecord (checked against its CRD's schema) ----

// maxItems 2, items IPv4 or IPv6.
Status ReadIPFamilies(element value, std::vector<std::string>& out) {
  SW_RETURN_IF_ERROR(ReadStringList(value, out));
  if (out.size() > 2) return BadRequestError("at most 2 items allowed");
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i] != model::kIPFamilyIPv4 && out[i] != model::kIPFamilyIPv6) {
      return AtIndex(NotInEnum("IPv4 or IPv6", out[i]), i);
    }
  }
  return Status();
}

Status ReadRecordSpec(element value, model::ServiceExportRecordSpec& out) {
  if (!value.is_object()) return Expected("object");
  std::optional<model::Time> created;
  bool has_ports = false;
  SW_RETURN_IF_ERROR(ForEachField(value, [&](std::string_view key, element v) -> Status {
    if (key == "cluster") return ReadString(v, out.cluster);
    if (key == "namespace") return ReadString(v, out.namespace_);
    if (key == "name") return ReadString(v, out.name);
    if (key == "exportCreationTimestamp") return ReadTime(v, created);
    if (key == "type") return ReadString(v, out.type);
    if (key == "ports") {
      has_ports = !v.is_null();
      return ReadPorts(v, out.ports, /*strict=*/true);
    }
    if (key == "ipFamilies") return ReadIPFamilies(v, out.ip_families);
    if (key == "sessionAffinity") return ReadString(v, out.session_affinity);
    if (key == "sessionAffinityConfig") {
      return ReadSessionAffinityConfig(v, out.session_affinity_config);
    }
    if (key == "internalTrafficPolicy") return ReadString(v, out.internal_traffic_policy);
    if (key == "trafficDistribution") return ReadString(v, out.traffic_distribution);
    if (key == "exportedLabels") return ReadStringMap(v, out.exported_labels);
    if (key == "exportedAnnotations") return ReadStringMap(v, out.exported_annotations);
    if (key == "endpointSliceSync") return ReadOptBool(v, out.endpoint_slice_sync);
    return Status();
  }));
  // Required fields, in the schema's order.
  if (out.cluster.empty()) return AtKey(Required(), "cluster");
  if (out.namespace_.empty()) return AtKey(Required(), "namespace");
  if (out.name.empty()) return AtKey(Required(), "name");
  if (!created.has_value()) return AtKey(Required(), "exportCreationTimestamp");
  out.export_creation_timestamp = *created;
  if (out.type.empty()) return AtKey(Required(), "type");
  if (out.type != model::kServiceImportClusterSetIP && out.type != model::kServiceImportHeadless) {
    return AtKey(NotInEnum("ClusterSetIP or Headless", out.type), "type");
  }
  if (!has_ports) return AtKey(Required(), "ports");
  return Status();
}

Status ReadServiceExportRecord(element root, model::ServiceExportRecord& out) {
  bool has_spec = false;
  SW_RETURN_IF_ERROR(ForEachField(root, [&](std::string_view key, element v) -> Status {
    if (key == "metadata") return internal::DecodeObjectMetaValue(v, out.metadata);
    if (key == "spec") {
      has_spec = !v.is_null();
      return has_spec ? ReadRecordSpec(v, out.spec) : Status();
    }
    return Status();
  }));
  if (!has_spec) return AtKey(Required(), "spec");
  return Status();
}

// ---- The four kinds, and decoding any of them ----

template <typename T>
struct KindSpec {
  std::string_view resource;     // "serviceexports": names objects in errors
  std::string_view kind;         // "ServiceExport"
  std::string_view api_version;  // the one written, and named in errors
  std::string_view group;        // any version of this group is accepted (when accept_any)
  bool accept_any_version;
  Status (*read)(element, T&);
};

bool ApiVersionAccepted(std::string_view api_version, std::string_view written,
                        std::string_view group, bool any_version) {
  if (api_version == written) return true;
  if (group == model::kMcsGroup) return api_version == model::kMcsApiVersionV1alpha1;
  return any_version && api_version.size() > group.size() + 1 && api_version.starts_with(group) &&
         api_version[group.size()] == '/';
}

constexpr KindSpec<model::ServiceExport> kServiceExportKind{
    "serviceexports", model::kKindServiceExport, model::kMcsApiVersion, model::kMcsGroup, false,
    ReadServiceExport};
constexpr KindSpec<model::ServiceImport> kServiceImportKind{
    "serviceimports", model::kKindServiceImport, model::kMcsApiVersion, model::kMcsGroup, false,
    ReadServiceImport};
constexpr KindSpec<model::ClusterProperty> kClusterPropertyKind{"clusterproperties",
                                                                model::kKindClusterProperty,
                                                                model::kClusterPropertyApiVersion,
                                                                model::kAboutGroup,
                                                                true,
                                                                ReadClusterProperty};
constexpr KindSpec<model::ServiceExportRecord> kRecordKind{"serviceexportrecords",
                                                           model::kKindServiceExportRecord,
                                                           model::kMcsRecordApiVersion,
                                                           model::kMcsRecordGroup,
                                                           false,
                                                           ReadServiceExportRecord};

// "serviceexports/NAMESPACE/NAME" from whatever metadata is readable.
template <typename T>
std::string ObjectName(const KindSpec<T>& spec, element root) {
  std::string_view name;
  std::string_view namespace_;
  element metadata;
  if (root.at_key("metadata").get(metadata) == simdjson::SUCCESS && metadata.is_object()) {
    element value;
    if (metadata.at_key("name").get(value) != simdjson::SUCCESS ||
        value.get_string().get(name) != simdjson::SUCCESS) {
      name = {};
    }
    if (metadata.at_key("namespace").get(value) != simdjson::SUCCESS ||
        value.get_string().get(namespace_) != simdjson::SUCCESS) {
      namespace_ = {};
    }
  }
  std::string out(spec.resource);
  out += '/';
  if (!namespace_.empty()) {
    out += namespace_;
    out += '/';
  }
  out += name;
  return out;
}

// Errors about the object are named "<document>: <resource>/<namespace>/<name>" ("list",
// "watch event"), or without the document for a single object.
template <typename T>
Status DecodeObjectOf(element root, const KindSpec<T>& spec, std::string_view document, T& out) {
  if (!root.is_object()) return Expected("a JSON object");
  std::string_view api_version;
  std::string_view kind;
  Status status = ReadTypeMeta(root, api_version, kind);
  if (status.ok() &&
      ((!api_version.empty() &&
        !ApiVersionAccepted(api_version, spec.api_version, spec.group, spec.accept_any_version)) ||
       (!kind.empty() && kind != spec.kind))) {
    status =
        BadRequestError("expected " + std::string(spec.api_version) + " " + std::string(spec.kind) +
                        ", got " + std::string(api_version) + " " + std::string(kind));
  }
  if (status.ok()) status = spec.read(root, out);
  if (!status.ok()) {
    status.WithObject(document.empty() ? ObjectName(spec, root)
                                       : std::string(document) + ": " + ObjectName(spec, root));
  }
  return status;
}

template <typename T>
Result<T> DecodeSingleOf(std::string_view json, const KindSpec<T>& spec) {
  T out;
  SW_RETURN_IF_ERROR(internal::WithParsed(
      json, {}, [&](element root) { return DecodeObjectOf(root, spec, {}, out); },
      SyntaxErrorOffset::kOmit));
  return out;
}

template <typename T>
Result<ListPage<T>> DecodeListOf(std::string_view json, const KindSpec<T>& spec) {
  return internal::DecodeListPage<T>(
      json, spec.kind,
      [&spec](element item, std::string_view document, T& out) {
        return DecodeObjectOf(item, spec, document, out);
      },
      SyntaxErrorOffset::kOmit);
}

template <typename T>
Result<WatchEvent<T>> DecodeWatchEventOf(std::string_view line, const KindSpec<T>& spec) {
  return internal::DecodeWatchEventLine<T>(
      line,
      [&spec](element object, std::string_view document, T& out) {
        return DecodeObjectOf(object, spec, document, out);
      },
      SyntaxErrorOffset::kOmit);
}

// ---- Encoding ----

// Appends `,"key":` (or `"key":` for the first field of an object).
void Key(std::string& out, std::string_view key, bool& first) {
  if (!first) out += ',';
  first = false;
  out += '"';
  out += key;
  out += "\":";
}

void PutString(std::string& out, std::string_view key, std::string_view value, bool& first) {
  if (value.empty()) return;
  Key(out, key, first);
  internal::AppendJsonString(out, value);
}

void PutStringMap(std::string& out, std::string_view key, const model::StringMap& map,
                  bool& first) {
  if (map.empty()) return;
  Key(out, key, first);
  out += '{';
  bool inner = true;
  for (const auto& [k, v] : map) {
    if (!inner) out += ',';
    inner = false;
    internal::AppendJsonString(out, k);
    out += ':';
    internal::AppendJsonString(out, v);
  }
  out += '}';
}

void PutStringList(std::string& out, std::string_view key, const std::vector<std::string>& list,
                   bool& first) {
  if (list.empty()) return;
  Key(out, key, first);
  out += '[';
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (i > 0) out += ',';
    internal::AppendJsonString(out, list[i]);
  }
  out += ']';
}

void PutTime(std::string& out, std::string_view key, const std::optional<model::Time>& time,
             bool& first) {
  if (!time.has_value()) return;
  Key(out, key, first);
  internal::AppendJsonString(out, model::FormatRfc3339(*time));
}

void AppendPorts(std::string& out, const std::vector<model::McsServicePort>& ports) {
  out += '[';
  for (std::size_t i = 0; i < ports.size(); ++i) {
    const model::McsServicePort& port = ports[i];
    if (i > 0) out += ',';
    out += '{';
    bool first = true;
    PutString(out, "name", port.name, first);
    // Always written: a reader that does not default it would otherwise see "".
    Key(out, "protocol", first);
    internal::AppendJsonString(out, port.protocol.empty() ? "TCP" : port.protocol);
    if (port.app_protocol.has_value()) {
      Key(out, "appProtocol", first);
      internal::AppendJsonString(out, *port.app_protocol);
    }
    Key(out, "port", first);
    out += std::to_string(port.port);
    out += '}';
  }
  out += ']';
}

void PutSessionAffinityConfig(std::string& out,
                              const std::optional<model::SessionAffinityConfig>& config,
                              bool& first) {
  if (!config.has_value()) return;
  Key(out, "sessionAffinityConfig", first);
  out += '{';
  if (config->client_ip.has_value()) {
    out += R"("clientIP":{)";
    if (config->client_ip->timeout_seconds.has_value()) {
      out += R"("timeoutSeconds":)" + std::to_string(*config->client_ip->timeout_seconds);
    }
    out += '}';
  }
  out += '}';
}

void AppendConditions(std::string& out, const std::vector<model::Condition>& conditions) {
  out += '[';
  for (std::size_t i = 0; i < conditions.size(); ++i) {
    const model::Condition& c = conditions[i];
    if (i > 0) out += ',';
    // metav1.Condition marshals type, status, reason and message even when empty.
    out += R"({"type":)";
    internal::AppendJsonString(out, c.type);
    out += R"(,"status":)";
    internal::AppendJsonString(out, c.status);
    bool first = false;
    if (c.observed_generation != 0) {
      Key(out, "observedGeneration", first);
      out += std::to_string(c.observed_generation);
    }
    PutTime(out, "lastTransitionTime", c.last_transition_time, first);
    out += R"(,"reason":)";
    internal::AppendJsonString(out, c.reason);
    out += R"(,"message":)";
    internal::AppendJsonString(out, c.message);
    out += '}';
  }
  out += ']';
}

std::string Head(std::string_view api_version, std::string_view kind,
                 const model::ObjectMeta& metadata) {
  std::string out = R"({"apiVersion":)";
  internal::AppendJsonString(out, api_version);
  out += R"(,"kind":)";
  internal::AppendJsonString(out, kind);
  out += R"(,"metadata":)";
  out += internal::EncodeObjectMeta(metadata);
  return out;
}

// The status object's fields (without braces); "" when the status is empty.
std::string ServiceExportStatusFields(const model::ServiceExportStatus& status) {
  std::string out;
  if (!status.conditions.empty()) {
    out += R"("conditions":)";
    AppendConditions(out, status.conditions);
  }
  return out;
}

std::string ServiceImportStatusFields(const model::ServiceImportStatus& status, bool for_patch) {
  std::string out;
  bool first = true;
  if (!status.clusters.empty() || for_patch) {
    Key(out, "clusters", first);
    out += '[';
    for (std::size_t i = 0; i < status.clusters.size(); ++i) {
      if (i > 0) out += ',';
      out += R"({"cluster":)";
      internal::AppendJsonString(out, status.clusters[i]);
      out += '}';
    }
    out += ']';
  }
  if (!status.conditions.empty() || for_patch) {
    Key(out, "conditions", first);
    AppendConditions(out, status.conditions);
  }
  const std::string_view objects = model::EndpointSliceObjectsName(status.endpoint_slice_objects);
  if (!objects.empty()) {
    Key(out, "endpointSliceObjects", first);
    internal::AppendJsonString(out, objects);
  } else if (for_patch) {
    Key(out, "endpointSliceObjects", first);
    out += "null";
  }
  return out;
}

}  // namespace

Result<model::ServiceExport> DecodeServiceExport(std::string_view json) {
  return DecodeSingleOf(json, kServiceExportKind);
}
Result<ListPage<model::ServiceExport>> DecodeServiceExportList(std::string_view json) {
  return DecodeListOf(json, kServiceExportKind);
}
Result<WatchEvent<model::ServiceExport>> DecodeServiceExportWatchEvent(std::string_view line) {
  return DecodeWatchEventOf(line, kServiceExportKind);
}

Result<model::ServiceImport> DecodeServiceImport(std::string_view json) {
  return DecodeSingleOf(json, kServiceImportKind);
}
Result<ListPage<model::ServiceImport>> DecodeServiceImportList(std::string_view json) {
  return DecodeListOf(json, kServiceImportKind);
}
Result<WatchEvent<model::ServiceImport>> DecodeServiceImportWatchEvent(std::string_view line) {
  return DecodeWatchEventOf(line, kServiceImportKind);
}

Result<model::ClusterProperty> DecodeClusterProperty(std::string_view json) {
  return DecodeSingleOf(json, kClusterPropertyKind);
}
Result<ListPage<model::ClusterProperty>> DecodeClusterPropertyList(std::string_view json) {
  return DecodeListOf(json, kClusterPropertyKind);
}
Result<WatchEvent<model::ClusterProperty>> DecodeClusterPropertyWatchEvent(std::string_view line) {
  return DecodeWatchEventOf(line, kClusterPropertyKind);
}

Result<model::ServiceExportRecord> DecodeServiceExportRecord(std::string_view json) {
  return DecodeSingleOf(json, kRecordKind);
}
Result<ListPage<model::ServiceExportRecord>> DecodeServiceExportRecordList(std::string_view json) {
  return DecodeListOf(json, kRecordKind);
}
Result<WatchEvent<model::ServiceExportRecord>> DecodeServiceExportRecordWatchEvent(
    std::string_view line) {
  return DecodeWatchEventOf(line, kRecordKind);
}

std::string EncodeServiceExport(const model::ServiceExport& service_export) {
  std::string out = Head(model::kMcsApiVersion, model::kKindServiceExport, service_export.metadata);
  out += R"(,"spec":{)";
  bool first = true;
  PutStringMap(out, "exportedLabels", service_export.spec.exported_labels, first);
  PutStringMap(out, "exportedAnnotations", service_export.spec.exported_annotations, first);
  out += '}';
  const std::string status = ServiceExportStatusFields(service_export.status);
  if (!status.empty()) out += R"(,"status":{)" + status + '}';
  out += '}';
  return out;
}

std::string EncodeServiceImport(const model::ServiceImport& service_import) {
  const model::ServiceImportSpec& spec = service_import.spec;
  std::string out = Head(model::kMcsApiVersion, model::kKindServiceImport, service_import.metadata);
  out += R"(,"spec":{"ports":)";
  AppendPorts(out, spec.ports);
  bool first = false;
  PutStringList(out, "ips", spec.ips, first);
  Key(out, "type", first);
  internal::AppendJsonString(out, spec.type);
  PutString(out, "sessionAffinity", spec.session_affinity, first);
  PutSessionAffinityConfig(out, spec.session_affinity_config, first);
  PutStringList(out, "ipFamilies", spec.ip_families, first);
  PutString(out, "internalTrafficPolicy", spec.internal_traffic_policy, first);
  PutString(out, "trafficDistribution", spec.traffic_distribution, first);
  out += '}';
  const std::string status = ServiceImportStatusFields(service_import.status, false);
  if (!status.empty()) out += R"(,"status":{)" + status + '}';
  out += '}';
  return out;
}

std::string EncodeClusterProperty(const model::ClusterProperty& property) {
  std::string out =
      Head(model::kClusterPropertyApiVersion, model::kKindClusterProperty, property.metadata);
  out += R"(,"spec":{"value":)";
  internal::AppendJsonString(out, property.value);
  out += "}}";
  return out;
}

std::string EncodeServiceExportRecord(const model::ServiceExportRecord& record) {
  const model::ServiceExportRecordSpec& spec = record.spec;
  std::string out =
      Head(model::kMcsRecordApiVersion, model::kKindServiceExportRecord, record.metadata);
  out += R"(,"spec":{"cluster":)";
  internal::AppendJsonString(out, spec.cluster);
  out += R"(,"namespace":)";
  internal::AppendJsonString(out, spec.namespace_);
  out += R"(,"name":)";
  internal::AppendJsonString(out, spec.name);
  out += R"(,"exportCreationTimestamp":)";
  internal::AppendJsonString(out, model::FormatRfc3339(spec.export_creation_timestamp));
  out += R"(,"type":)";
  internal::AppendJsonString(out, spec.type);
  out += R"(,"ports":)";
  AppendPorts(out, spec.ports);
  bool first = false;
  PutStringList(out, "ipFamilies", spec.ip_families, first);
  PutString(out, "sessionAffinity", spec.session_affinity, first);
  PutSessionAffinityConfig(out, spec.session_affinity_config, first);
  PutString(out, "internalTrafficPolicy", spec.internal_traffic_policy, first);
  PutString(out, "trafficDistribution", spec.traffic_distribution, first);
  PutStringMap(out, "exportedLabels", spec.exported_labels, first);
  PutStringMap(out, "exportedAnnotations", spec.exported_annotations, first);
  if (spec.endpoint_slice_sync.has_value()) {
    Key(out, "endpointSliceSync", first);
    out += *spec.endpoint_slice_sync ? "true" : "false";
  }
  out += "}}";
  return out;
}

std::string EncodeServiceExportStatusPatch(const model::ServiceExportStatus& status) {
  std::string out = R"({"status":{"conditions":)";
  AppendConditions(out, status.conditions);
  out += "}}";
  return out;
}

std::string EncodeServiceImportStatusPatch(const model::ServiceImportStatus& status) {
  return R"({"status":{)" + ServiceImportStatusFields(status, true) + "}}";
}

}  // namespace slicewright::codec

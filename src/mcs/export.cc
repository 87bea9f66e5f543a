#include "slicewright/mcs/export.h"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "slicewright/labels/validation.h"
#include "slicewright/mcs/identity.h"
#include "slicewright/model/time.h"

namespace slicewright::mcs {
namespace {

std::string Quoted(std::string_view text) { return "\"" + std::string(text) + "\""; }

model::Condition MakeCondition(std::string_view type, std::string_view status,
                               std::string_view reason, std::string message) {
  model::Condition condition;
  condition.type = std::string(type);
  condition.status = std::string(status);
  condition.reason = std::string(reason);
  condition.message = std::move(message);
  return condition;
}

Status FieldError(std::string_view field, std::string message) {
  Status status = InvalidError(std::move(message));
  status.WithFieldPrefix(field);
  return status;
}

// A DNS label field of the record: the first of upstream's messages.
Status CheckLabel(std::string_view field, std::string_view value) {
  const std::vector<std::string> errors = labels::IsDNS1123Label(value);
  if (errors.empty()) return Status();
  return FieldError(field, "Invalid value: " + Quoted(value) + ": " + errors.front());
}

Status CheckRecord(const model::ServiceExportRecord& record) {
  const model::ServiceExportRecordSpec& spec = record.spec;
  Status cluster = ValidateClusterId(spec.cluster);
  if (!cluster.ok()) return FieldError(".spec.cluster", std::string(cluster.message()));
  SW_RETURN_IF_ERROR(CheckLabel(".spec.namespace", spec.namespace_));
  SW_RETURN_IF_ERROR(CheckLabel(".spec.name", spec.name));
  const std::string want_name = ExportRecordName(spec.namespace_, spec.name, spec.cluster);
  if (record.metadata.name != want_name) {
    return FieldError(".metadata.name", "must be " + Quoted(want_name) +
                                            " (<service>.<namespace>.<cluster>), is " +
                                            Quoted(record.metadata.name));
  }
  const auto source = record.metadata.labels.find(model::kLabelMcsSourceCluster);
  if (source != record.metadata.labels.end() && source->second != spec.cluster) {
    return FieldError(
        ".metadata.labels[" + std::string(model::kLabelMcsSourceCluster) + "]",
        "must equal spec.cluster " + Quoted(spec.cluster) + ", is " + Quoted(source->second));
  }
  if (spec.type != model::kServiceImportClusterSetIP &&
      spec.type != model::kServiceImportHeadless) {
    return FieldError(".spec.type", "must be ClusterSetIP or Headless, is " + Quoted(spec.type));
  }
  for (std::size_t i = 0; i < spec.ports.size(); ++i) {
    const model::McsServicePort& port = spec.ports[i];
    const std::string at = ".spec.ports[" + std::to_string(i) + "]";
    if (port.port < 1 || port.port > 65535) {
      return FieldError(at + ".port", "must be between 1 and 65535, inclusive");
    }
    if (port.protocol != "TCP" && port.protocol != "UDP" && port.protocol != "SCTP") {
      return FieldError(at + ".protocol", "must be TCP, UDP or SCTP, is " + Quoted(port.protocol));
    }
    if (spec.ports.size() > 1 && port.name.empty()) {
      return FieldError(at + ".name", "required when there is more than one port");
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (spec.ports[j].name == port.name) {
        return FieldError(at + ".name", "duplicate port name " + Quoted(port.name));
      }
      if (spec.ports[j].protocol == port.protocol && spec.ports[j].port == port.port) {
        return FieldError(at, "duplicate " + port.protocol + " port " + std::to_string(port.port));
      }
    }
  }
  if (spec.ip_families.size() > 2) {
    return FieldError(".spec.ipFamilies", "must have at most 2 items");
  }
  for (std::size_t i = 0; i < spec.ip_families.size(); ++i) {
    const std::string at = ".spec.ipFamilies[" + std::to_string(i) + "]";
    const std::string& family = spec.ip_families[i];
    if (family != model::kIPFamilyIPv4 && family != model::kIPFamilyIPv6) {
      return FieldError(at, "must be IPv4 or IPv6, is " + Quoted(family));
    }
    if (i > 0 && spec.ip_families[0] == family) return FieldError(at, "duplicate " + family);
  }
  return Status();
}

}  // namespace

std::optional<bool> ParseEndpointSliceSync(std::string_view value) {
  if (value == "true") return true;
  if (value == "false") return false;
  return std::nullopt;
}

ExportValidation ValidateExport(const model::ServiceExport& service_export,
                                const model::Service* service, std::string_view cluster_id,
                                std::string_view broker_namespace) {
  ExportValidation out;
  const model::ObjectMeta& meta = service_export.metadata;
  const std::string key = meta.namespace_ + "/" + meta.name;
  if (service == nullptr) {
    out.valid =
        MakeCondition(model::kConditionValid, model::kConditionFalse, model::kReasonNoService,
                      "Service " + Quoted(key) + " does not exist in this cluster.");
    return out;
  }
  if (service->spec.type == "ExternalName") {
    out.valid = MakeCondition(
        model::kConditionValid, model::kConditionFalse, model::kReasonInvalidServiceType,
        "Service " + Quoted(key) + " is of type ExternalName, which cannot be exported.");
    return out;
  }
  const bool headless = service->spec.cluster_ip == "None";
  out.valid = MakeCondition(
      model::kConditionValid, model::kConditionTrue, model::kReasonValid,
      "Service " + Quoted(key) + " is exported as " + (headless ? "Headless." : "ClusterSetIP."));

  model::ServiceExportRecord record;
  model::ServiceExportRecordSpec& spec = record.spec;
  spec.cluster = std::string(cluster_id);
  spec.namespace_ = meta.namespace_;
  spec.name = meta.name;
  if (meta.creation_timestamp.has_value()) {
    spec.export_creation_timestamp = *meta.creation_timestamp;
  } else {
    // Never so from an API server; the export then ranks as the oldest.
    out.warnings.push_back("the ServiceExport has no creationTimestamp: it ranks as the oldest");
  }
  spec.type =
      std::string(headless ? model::kServiceImportHeadless : model::kServiceImportClusterSetIP);
  for (const model::ServicePort& port : service->spec.ports) {
    spec.ports.push_back({port.name, port.protocol.empty() ? std::string("TCP") : port.protocol,
                          port.app_protocol, port.port});
  }
  spec.ip_families = service->spec.ip_families;
  spec.session_affinity = service->spec.session_affinity.empty()
                              ? std::string(model::kSessionAffinityNone)
                              : service->spec.session_affinity;
  spec.session_affinity_config = service->spec.session_affinity_config;
  spec.internal_traffic_policy = service->spec.internal_traffic_policy;
  spec.traffic_distribution = service->spec.traffic_distribution.value_or("");
  spec.exported_labels = service_export.spec.exported_labels;
  spec.exported_annotations = service_export.spec.exported_annotations;
  if (const auto it = meta.annotations.find(model::kAnnotationEndpointSliceSync);
      it != meta.annotations.end()) {
    spec.endpoint_slice_sync = ParseEndpointSliceSync(it->second);
    if (!spec.endpoint_slice_sync.has_value()) {
      out.warnings.push_back("annotation " + std::string(model::kAnnotationEndpointSliceSync) +
                             ": expected \"true\" or \"false\", got " + Quoted(it->second) +
                             "; ignored");
    }
  }

  record.metadata.name = ExportRecordName(spec.namespace_, spec.name, spec.cluster);
  record.metadata.namespace_ = std::string(broker_namespace);
  record.metadata.labels.emplace(model::kLabelMcsSourceCluster, spec.cluster);
  record.metadata.labels.emplace(model::kLabelMcsServiceName, spec.name);
  record.metadata.labels.emplace(model::kLabelMcsServiceNamespace, spec.namespace_);
  if (record.metadata.name.size() > labels::kDNS1123SubdomainMaxLength) {
    out.ready_failure = MakeCondition(
        model::kConditionReady, model::kConditionFalse, model::kReasonFailed,
        "The broker record name " + Quoted(record.metadata.name) + " is " +
            std::to_string(record.metadata.name.size()) +
            " characters, more than 253: shorten the Service name, its namespace or the cluster "
            "id.");
    return out;
  }
  out.record = std::move(record);
  return out;
}

Status ValidateExportRecord(const model::ServiceExportRecord& record) {
  Status status = CheckRecord(record);
  if (!status.ok()) {
    status.WithObject("serviceexportrecords/" + record.metadata.namespace_ + "/" +
                      record.metadata.name);
  }
  return status;
}

model::Condition ExportReadyCondition(const Status& publish) {
  if (publish.ok()) {
    return MakeCondition(model::kConditionReady, model::kConditionTrue, model::kReasonExported,
                         "The export is published in the broker.");
  }
  return MakeCondition(model::kConditionReady, model::kConditionFalse, model::kReasonFailed,
                       "Publishing the export in the broker failed: " + publish.ToString());
}

model::Condition ExportPendingCondition() {
  return MakeCondition(model::kConditionReady, model::kConditionUnknown, model::kReasonPending,
                       "The export is not yet published in the broker.");
}

}  // namespace slicewright::mcs

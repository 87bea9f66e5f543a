// Multi-Cluster Services values (KEP-1645, group multicluster.x-k8s.io; KEP-2149 ClusterProperty;
// slicewright's broker export record, docs/design.md "Multi-Cluster Services: aggregation"), and
// their well-known keys. Copyable aggregates with defaulted equality; thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "slicewright/model/core.h"
#include "slicewright/model/meta.h"
#include "slicewright/model/time.h"

namespace slicewright::model {

// ---- Groups, versions, kinds ----
inline constexpr std::string_view kMcsGroup = "multicluster.x-k8s.io";
// v1beta1 is the stored version; v1alpha1 has the same schema and is accepted by the decoders.
inline constexpr std::string_view kMcsApiVersion = "multicluster.x-k8s.io/v1beta1";
inline constexpr std::string_view kMcsApiVersionV1alpha1 = "multicluster.x-k8s.io/v1alpha1";
inline constexpr std::string_view kKindServiceExport = "ServiceExport";
inline constexpr std::string_view kKindServiceImport = "ServiceImport";
// KEP-2149 (about-api's CRD is v1alpha1; the decoder accepts any version of about.k8s.io).
inline constexpr std::string_view kAboutGroup = "about.k8s.io";
inline constexpr std::string_view kClusterPropertyApiVersion = "about.k8s.io/v1alpha1";
inline constexpr std::string_view kKindClusterProperty = "ClusterProperty";
// The broker's export record (one per exporting cluster, namespace and service).
inline constexpr std::string_view kMcsRecordGroup = "mcs.slicewright.io";
inline constexpr std::string_view kMcsRecordApiVersion = "mcs.slicewright.io/v1alpha1";
inline constexpr std::string_view kKindServiceExportRecord = "ServiceExportRecord";
inline constexpr std::string_view kDefaultBrokerNamespace = "slicewright-mcs";

// ---- Labels and annotations ----
inline constexpr std::string_view kLabelMcsServiceName = "multicluster.kubernetes.io/service-name";
inline constexpr std::string_view kLabelMcsSourceCluster =
    "multicluster.kubernetes.io/source-cluster";
// Ours: the namespace of the exported Service, on broker records and broker EndpointSlices (the
// broker keeps every namespace's exports in one namespace).
inline constexpr std::string_view kLabelMcsServiceNamespace =
    "mcs.slicewright.io/service-namespace";
// endpointslice.kubernetes.io/managed-by of every MCS EndpointSlice we write.
inline constexpr std::string_view kManagedByMcs = "mcs.slicewright.io";
inline constexpr std::string_view kAnnotationDerivedService =
    "multicluster.kubernetes.io/derived-service";
// Ours, on a ServiceExport: "true" or "false" overrides --mcs-endpointslice-sync for the import.
inline constexpr std::string_view kAnnotationEndpointSliceSync =
    "mcs.slicewright.io/endpointslice-sync";

// ---- ClusterProperty names (KEP-2149; spec §10: prefer id.k8s.io when both exist) ----
inline constexpr std::string_view kClusterPropertyId = "id.k8s.io";
inline constexpr std::string_view kClusterPropertyClusterId = "cluster.clusterset.k8s.io";
inline constexpr std::string_view kClusterPropertyClusterSet = "clusterset.k8s.io";

// ---- Values ----
inline constexpr std::string_view kServiceImportClusterSetIP = "ClusterSetIP";
inline constexpr std::string_view kServiceImportHeadless = "Headless";
inline constexpr std::string_view kIPFamilyIPv4 = "IPv4";
inline constexpr std::string_view kIPFamilyIPv6 = "IPv6";
inline constexpr std::string_view kSessionAffinityNone = "None";
inline constexpr std::string_view kSessionAffinityClientIP = "ClientIP";

// ---- Condition types and reasons (spec §2.5) ----
inline constexpr std::string_view kConditionValid = "Valid";
inline constexpr std::string_view kConditionReady = "Ready";
inline constexpr std::string_view kConditionConflict = "Conflict";
inline constexpr std::string_view kConditionTrue = "True";
inline constexpr std::string_view kConditionFalse = "False";
inline constexpr std::string_view kConditionUnknown = "Unknown";
// ServiceExport Valid.
inline constexpr std::string_view kReasonValid = "Valid";
inline constexpr std::string_view kReasonNoService = "NoService";
inline constexpr std::string_view kReasonInvalidServiceType = "InvalidServiceType";
// ServiceExport Ready (Exported: pushed to the broker) and ServiceImport Ready.
inline constexpr std::string_view kReasonExported = "Exported";
inline constexpr std::string_view kReasonReady = "Ready";
inline constexpr std::string_view kReasonPending = "Pending";
inline constexpr std::string_view kReasonFailed = "Failed";
inline constexpr std::string_view kReasonIPFamilyNotSupported = "IPFamilyNotSupported";
// ServiceExport Conflict, in the order they are comma-joined.
inline constexpr std::string_view kReasonNoConflicts = "NoConflicts";
inline constexpr std::string_view kReasonPortConflict = "PortConflict";
inline constexpr std::string_view kReasonTypeConflict = "TypeConflict";
inline constexpr std::string_view kReasonSessionAffinityConflict = "SessionAffinityConflict";
inline constexpr std::string_view kReasonSessionAffinityConfigConflict =
    "SessionAffinityConfigConflict";
inline constexpr std::string_view kReasonAnnotationsConflict = "AnnotationsConflict";
inline constexpr std::string_view kReasonLabelsConflict = "LabelsConflict";
inline constexpr std::string_view kReasonInternalTrafficPolicyConflict =
    "InternalTrafficPolicyConflict";
inline constexpr std::string_view kReasonTrafficDistributionConflict =
    "TrafficDistributionConflict";
inline constexpr std::string_view kReasonIPFamilyConflict = "IPFamilyConflict";

// ---- Types ----

// mcs-api's ServicePort: no targetPort and no nodePort. The decoders default protocol to TCP.
struct McsServicePort {
  std::string name;
  std::string protocol = "TCP";
  std::optional<std::string> app_protocol;
  std::int32_t port = 0;
  friend bool operator==(const McsServicePort&, const McsServicePort&) = default;
};

struct ServiceExportSpec {
  StringMap exported_labels;
  StringMap exported_annotations;
  friend bool operator==(const ServiceExportSpec&, const ServiceExportSpec&) = default;
};

struct ServiceExportStatus {
  std::vector<Condition> conditions;
  friend bool operator==(const ServiceExportStatus&, const ServiceExportStatus&) = default;
};

struct ServiceExport {
  ObjectMeta metadata;
  ServiceExportSpec spec;
  ServiceExportStatus status;
  friend bool operator==(const ServiceExport&, const ServiceExport&) = default;
};

// Optional strings of the wire ("*string" with omitempty in Go) are "" when unset here: "" is never
// a valid value of any of them.
struct ServiceImportSpec {
  std::vector<McsServicePort> ports;
  std::vector<std::string> ips;
  std::string type;  // ClusterSetIP, Headless
  std::string session_affinity;
  std::optional<SessionAffinityConfig> session_affinity_config;
  std::vector<std::string> ip_families;
  std::string internal_traffic_policy;
  std::string traffic_distribution;
  friend bool operator==(const ServiceImportSpec&, const ServiceImportSpec&) = default;
};

// status.endpointSliceObjects. kUnset is a legacy implementation's import (no field at all); ours
// always writes Present or Absent after its first reconcile (spec §8.4).
enum class EndpointSliceObjects { kUnset, kPresent, kAbsent };
// "Present", "Absent", "" (unset).
std::string_view EndpointSliceObjectsName(EndpointSliceObjects value);

struct ServiceImportStatus {
  std::vector<std::string> clusters;  // status.clusters[].cluster, in wire order
  std::vector<Condition> conditions;
  EndpointSliceObjects endpoint_slice_objects = EndpointSliceObjects::kUnset;
  friend bool operator==(const ServiceImportStatus&, const ServiceImportStatus&) = default;
};

struct ServiceImport {
  ObjectMeta metadata;
  ServiceImportSpec spec;
  ServiceImportStatus status;
  friend bool operator==(const ServiceImport&, const ServiceImport&) = default;
};

// Cluster-scoped; metadata.name is the property name ("id.k8s.io").
struct ClusterProperty {
  ObjectMeta metadata;
  std::string value;  // spec.value
  friend bool operator==(const ClusterProperty&, const ClusterProperty&) = default;
};

// The broker's record of one exporting cluster's export (mcs.slicewright.io/v1alpha1
// ServiceExportRecord; schema in docs/design.md). Everything the aggregation needs, nothing more.
struct ServiceExportRecordSpec {
  std::string cluster;             // the exporting cluster's id
  std::string namespace_;          // of the exported Service
  std::string name;                // of the exported Service
  Time export_creation_timestamp;  // the ServiceExport's metadata.creationTimestamp
  std::string type;                // ClusterSetIP, Headless
  std::vector<McsServicePort> ports;
  std::vector<std::string> ip_families;
  std::string session_affinity;
  std::optional<SessionAffinityConfig> session_affinity_config;
  std::string internal_traffic_policy;
  std::string traffic_distribution;
  StringMap exported_labels;
  StringMap exported_annotations;
  // The ServiceExport's mcs.slicewright.io/endpointslice-sync annotation; nullopt when unset.
  std::optional<bool> endpoint_slice_sync;
  friend bool operator==(const ServiceExportRecordSpec&, const ServiceExportRecordSpec&) = default;
};

struct ServiceExportRecord {
  ObjectMeta metadata;
  ServiceExportRecordSpec spec;
  friend bool operator==(const ServiceExportRecord&, const ServiceExportRecord&) = default;
};

}  // namespace slicewright::model

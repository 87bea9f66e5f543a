// The export side of the MCS agent, pure: a ServiceExport and its Service -> the Valid condition
// and the broker record (spec §3), the record's own validation (what an importing agent checks
// before aggregating a record from the broker), and the ServiceExport's Ready condition. No I/O,
// clock or log; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "slicewright/base/status.h"
#include "slicewright/model/core.h"
#include "slicewright/model/mcs.h"

namespace slicewright::mcs {

// The value of the mcs.slicewright.io/endpointslice-sync annotation: "true" or "false"; nullopt
// for anything else (absent, or a value we do not understand, which ValidateExport reports).
std::optional<bool> ParseEndpointSliceSync(std::string_view value);

struct ExportValidation {
  // The ServiceExport's Valid condition (no lastTransitionTime: see SetCondition):
  // True Valid; False NoService (no such Service); False InvalidServiceType (ExternalName).
  model::Condition valid;
  // The record to publish in the broker when the export is valid and publishable.
  std::optional<model::ServiceExportRecord> record;
  // Set when the export is valid but cannot be published: the ServiceExport's Ready condition,
  // False Failed with the cause (a record name over 253 characters).
  std::optional<model::Condition> ready_failure;
  // Problems that do not stop the export, for an Event: an endpointslice-sync annotation that is
  // neither "true" nor "false", a ServiceExport without creationTimestamp.
  std::vector<std::string> warnings;
};

// Validates `service_export` against `service` (nullptr when the Service does not exist in this
// cluster) and builds the broker record of `cluster_id` in `broker_namespace` (spec §3 E1-E6):
// ClusterIP, NodePort and LoadBalancer Services export as ClusterSetIP (node ports and load
// balancers stay local), headless ones (clusterIP None) as Headless, ExternalName not at all. The
// record carries the Service's ports (name, protocol, appProtocol, port), ipFamilies,
// sessionAffinity ("" read as None) and its config, internalTrafficPolicy and trafficDistribution;
// labels and annotations come only from spec.exportedLabels/exportedAnnotations (E4).
ExportValidation ValidateExport(const model::ServiceExport& service_export,
                                const model::Service* service, std::string_view cluster_id,
                                std::string_view broker_namespace);

// OK when `record` is one an exporting agent could have written: its name is
// ExportRecordName(spec.namespace, spec.name, spec.cluster), its cluster id is valid, namespace and
// name are DNS labels, ports are 1..65535 with unique names and unique protocol+port, ipFamilies
// are IPv4/IPv6 without duplicates, and the source-cluster label agrees. kInvalid naming the record
// and field otherwise ("serviceexportrecords/slicewright-mcs/x: .spec.ports[1].port: must be
// between 1 and 65535, inclusive"). The aggregation is total on any input; this is the gate in
// front of it that turns a forged or corrupted record into an error instead of a merged port.
Status ValidateExportRecord(const model::ServiceExportRecord& record);

// The ServiceExport's Ready condition after trying to publish its record: True Exported when
// `publish` is OK, False Failed with the error otherwise.
model::Condition ExportReadyCondition(const Status& publish);
// Ready Unknown Pending: validated, not yet published.
model::Condition ExportPendingCondition();

}  // namespace slicewright::mcs

// The import side of the MCS agent, pure: the export records of one (namespace, name) from every
// live cluster -> the ServiceImport this cluster should have (spec, status.clusters, the Ready
// condition), each exporting cluster's Conflict condition, and whether this import gets MCS
// EndpointSlices here; plus the status.endpointSliceObjects transition of spec §8.4. No I/O,
// clock or log; reentrant. The rules are written down in docs/design.md "Multi-Cluster Services:
// aggregation".
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "slicewright/base/result.h"
#include "slicewright/model/mcs.h"

namespace slicewright::mcs {

// --mcs-endpointslice-sync: which imports get MCS EndpointSlices (overridden per service by the
// oldest export's mcs.slicewright.io/endpointslice-sync annotation).
enum class EndpointSliceSyncPolicy { kAll, kHeadless, kAnnotated };
// "all", "headless", "annotated"; anything else is kInvalid naming the flag.
Result<EndpointSliceSyncPolicy> ParseEndpointSliceSyncPolicy(std::string_view flag);
std::string_view EndpointSliceSyncPolicyName(EndpointSliceSyncPolicy policy);

// What the importing cluster contributes.
struct ImportingCluster {
  std::string cluster_id;
  // The IP families this cluster can give a Service ("IPv4", "IPv6"; its primary first). Empty
  // means unknown: no family is filtered out.
  std::vector<std::string> ip_families;
  EndpointSliceSyncPolicy policy = EndpointSliceSyncPolicy::kAll;
};

// One exporting cluster's Conflict condition. Like every condition here it has no
// lastTransitionTime (see SetCondition) and observedGeneration 0 (the agent sets its object's).
struct ExportConflict {
  std::string cluster;
  model::Condition condition;
};

struct Aggregation {
  // The import's spec; `ips` is left empty (the agent copies them from the derived Service).
  model::ServiceImportSpec spec;
  // The import's metadata labels and annotations: the oldest export's exported ones (the agent
  // adds multicluster.kubernetes.io/derived-service to the annotations of a ClusterSetIP import).
  model::StringMap labels;
  model::StringMap annotations;
  // status.clusters: every exporting cluster, sorted.
  std::vector<std::string> clusters;
  // status.conditions' Ready: True Ready, or False IPFamilyNotSupported when none of the import's
  // families is usable here.
  model::Condition ready;
  // Conflict for every exporting cluster's ServiceExport (all of them, as conformance checks),
  // sorted by cluster: True with every conflict reason comma-joined, else False NoConflicts.
  std::vector<ExportConflict> conflicts;
  // The export whose global properties won: the oldest (ties: the smaller cluster id).
  std::string oldest_cluster;
  // Whether this cluster maintains MCS EndpointSlices for the import, and why (for explain).
  bool endpoint_slices = false;
  std::string endpoint_slices_reason;
};

// Aggregates the records of one (namespace, name); each should have passed ValidateExportRecord,
// and records of one cluster beyond its first (oldest) are ignored. Total on any input: a record
// set is never an error. nullopt when `records` is empty: no ServiceImport should exist.
// The result does not depend on the order of `records`.
std::optional<Aggregation> Aggregate(std::span<const model::ServiceExportRecord> records,
                                     const ImportingCluster& here);

// The import's Ready when this cluster's API server refused a write the import needs (`what`:
// "the derived Service derived-abc"; `refusal`: the server's answer, a terminal error): False, and
// the reason is IPFamilyNotSupported when the refusal is about the IP families (a field
// spec.ipFamilies or spec.ipFamilyPolicy: e.g. a RequireDualStack Service on a single-stack
// cluster, spec §2.5), else Failed (as a ServiceExport's Ready for a refused publication); the
// message names what was refused and gives the server's answer.
model::Condition ImportRefusedCondition(std::string_view what, const Status& refusal);

// The spec §8.4 transition of status.endpointSliceObjects.
struct EndpointSliceObjectsDecision {
  model::EndpointSliceObjects write = model::EndpointSliceObjects::kAbsent;  // never kUnset
  // True once the import's MCS EndpointSlices may be deleted: the policy says no slices and the
  // field already reads Absent (flipped first, deleted after).
  bool delete_slices = false;
};
// `wanted`: Aggregation::endpoint_slices. `synced`: the slices of every live source cluster are
// written (zero endpoints count as written). `current`: the field as the import has it now.
//   wanted,  synced            -> Present
//   wanted,  not synced        -> Present if it already was (a cluster joining only adds
//                                 endpoints), else Absent until the first full sync
//   not wanted                 -> Absent; delete_slices only when `current` is already Absent
EndpointSliceObjectsDecision DecideEndpointSliceObjects(bool wanted, bool synced,
                                                        model::EndpointSliceObjects current);

}  // namespace slicewright::mcs

// Multi-Cluster Services as one more source of desired endpoints (spec mcs.md §7): an exported
// Service's endpoints published into the broker, and one source cluster's broker slices imported
// into a member. Both are planned by PlanSlices like every other source, so a one-pod change is
// one slice write at each hop. Pure.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "slicewright/model/discovery.h"
#include "slicewright/model/mcs.h"
#include "slicewright/reconcile/desired.h"
#include "slicewright/reconcile/planner.h"

namespace slicewright::reconcile {

// The broker slices of one export `record` (its uid must be set: the slices are owned by it):
// the endpoints of the exported Service's `local_slices` (all of them, whoever manages them),
// grouped by address type and port set. Cluster-local fields are dropped: nodeName and targetRef
// name objects of the exporting cluster, hints its zones. Labels: both MCS labels, the service's
// namespace (mcs.slicewright.io/service-namespace) and managed-by mcs.slicewright.io.
DesiredEndpoints DesiredBrokerSlices(const model::ServiceExportRecord& record,
                                     std::span<const model::EndpointSlice> local_slices);

// A member's MCS slices of `service_import` (uid set: it owns them) from one source cluster's
// `broker_slices`: the same endpoints and ports, labelled with both MCS labels, managed-by
// mcs.slicewright.io, and kubernetes.io/service-name=`derived_service` when it is not empty (a
// ClusterSetIP import: kube-proxy then routes the derived Service's IPs to them; spec §17.1).
// Only slices of the import's families (spec.ipFamilies; all when it has none): a dual-stack
// export imported into an IPv4-only cluster gets IPv4 slices alone (spec §12.2 T16 counts slices
// per import family), not IPv6 endpoints that cluster cannot reach.
DesiredEndpoints DesiredImportedSlices(const model::ServiceImport& service_import,
                                       std::string_view source_cluster,
                                       std::string_view derived_service,
                                       std::span<const model::EndpointSlice> broker_slices);

// The keys an EndpointSliceTracker files MCS slices under (its OwnerKeyFn), so that a sync never
// plans on a cache older than its own writes: a broker slice under "<broker ns>/<record name>"
// (<service>.<namespace>.<cluster>), an imported slice under "<namespace>/<service>/<cluster>".
// Ask the tracker about a synthetic Service of that namespace and name, with the owner's uid.
std::string BrokerSliceOwnerKey(const model::ObjectMeta& slice);
std::string ImportedSliceOwnerKey(const model::ObjectMeta& slice);

// How both are planned: managed-by mcs.slicewright.io, no placeholder slice (an MCS slice holds a
// cluster's endpoints or does not exist), slices not controlled by the owner deleted.
PlanOptions McsPlanOptions(int max_endpoints_per_slice = 100);

}  // namespace slicewright::reconcile

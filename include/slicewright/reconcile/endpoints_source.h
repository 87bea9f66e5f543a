// The Endpoints adapter of the EndpointSlice Mirroring controller (spec §12): which Endpoints are
// mirrored, and the DesiredEndpoints of their mirrored slices. Pure and reentrant; inputs are never
// modified and nothing is retained.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "slicewright/model/core.h"
#include "slicewright/model/discovery.h"
#include "slicewright/model/meta.h"
#include "slicewright/model/well_known.h"
#include "slicewright/reconcile/desired.h"
#include "slicewright/reconcile/plan.h"
#include "slicewright/reconcile/planner.h"
#include "slicewright/reconcile/pod_source.h"

namespace slicewright::reconcile {

struct MirroringOptions {
  // --mirroring-max-endpoints-per-subset: 1..1000, validated by the caller. Upstream's flag help
  // says 100 but its defaults code says 1000, which is what matches the Endpoints controller's
  // capacity (spec §12, §13).
  int max_endpoints_per_subset = 1000;
  // The endpointslice.kubernetes.io/managed-by value written on mirrored slices.
  std::string managed_by = std::string(model::kManagedByMirroringController);
  // KEP-4770's ExternalEndpointController gate: a Service labelled
  // service.kubernetes.io/endpoint-controller-name is not mirrored (spec §11.4).
  bool external_endpoint_controller = true;
};

// Why an Endpoints object is, or is not, mirrored (spec §12 "Mirror if and only if").
enum class MirrorDecision {
  kMirror,
  kEndpointsNotFound,
  kSkipMirrorLabel,     // endpointslice.kubernetes.io/skip-mirror=true
  kLeaderElection,      // control-plane.alpha.kubernetes.io/leader annotation
  kServiceNotFound,     // no Service of the same name
  kServiceHasSelector,  // the Endpoints controller (or EndpointSlice controller) serves it
  kServiceDelegated,    // KEP-4770: the Service names another endpoint controller
};

// "mirror", "skip-mirror label", ...: for logs.
std::string_view MirrorDecisionName(MirrorDecision decision);

// The part of the decision that depends on the Endpoints alone (the event handlers' filter): not
// labelled skip-mirror=true and no leader-election annotation.
bool ShouldMirrorEndpoints(const model::Endpoints& endpoints);

// The whole decision. `endpoints` and `service` may be nullptr (not found); the Service is the one
// of the Endpoints' namespace and name. Checked in upstream's order: Endpoints, then Service.
MirrorDecision DecideMirroring(const model::Endpoints* endpoints, const model::Service* service,
                               const MirroringOptions& options);

// RepackSubsets (endpoints_builder.h) gives the canonical form mirroring reads (spec §12 step 1).

// Labels of a mirrored slice: every Endpoints label, then kubernetes.io/service-name = the
// Endpoints name and endpointslice.kubernetes.io/managed-by = `managed_by` (overriding those keys).
model::StringMap MirroredSliceLabels(const model::Endpoints& endpoints,
                                     std::string_view managed_by);

// Annotations of a mirrored slice: every Endpoints annotation except
// endpoints.kubernetes.io/last-change-trigger-time and kubectl's last-applied-configuration (as
// upstream), and our Endpoints controller's mark (kAnnotationWrittenSubsets, endpoints_builder.h:
// it describes the Endpoints' subsets, not the slice's; an Endpoints we wrote mirrored once its
// Service lost its selector gives the slices kube-controller-manager would).
model::StringMap MirroredSliceAnnotations(const model::Endpoints& endpoints);

// Address counts of one derivation, for addresses_skipped_per_sync (spec §9, §12 step 4).
struct MirroringStats {
  std::int64_t addresses = 0;  // addresses of the repacked subsets, ready and not ready
  std::int64_t mirrored = 0;   // of those, turned into endpoints
  std::int64_t invalid = 0;    // of those, skipped because the IP does not parse
  std::int64_t skipped() const { return addresses - mirrored; }
  friend bool operator==(const MirroringStats&, const MirroringStats&) = default;
};

// Reason of the diagnostic for addresses beyond max_endpoints_per_subset (upstream's).
inline constexpr std::string_view kReasonTooManyAddressesToMirror = "TooManyAddressesToMirror";
// Invalid IPs use kReasonInvalidIPAddress (pod_source.h), upstream's mirroring reason too.

// The desired state of the slices mirrored from `endpoints` (spec §12 "Desired state"); `service`
// is the Service of the same namespace and name.
//
// Owner: a controller reference to the Endpoints (v1 Endpoints, its UID), being_deleted from its
// deletionTimestamp (no creates then). Address types: IPv4 and IPv6. Per repacked subset, one group
// per address type with the subset's ports converted 1:1 (name and protocol always set), both
// groups present even when empty (an empty group deletes the slices of its port set). Ready
// addresses first, then not-ready ones, at most max_endpoints_per_subset per subset over both
// families; an address whose IP does not parse is skipped and counted, and does not use up the
// subset's budget. Endpoint: the canonical IP, conditions.ready only (serving and terminating
// unset), targetRef and nodeName copied, hostname if non-empty, no zone. Endpoints of a group are
// unique by identity (a later one replaces an earlier one, spec §3.7) and sorted by
// CompareEndpointIdentity. Labels and annotations: MirroredSliceLabels/Annotations. Trigger time:
// zero (the Endpoints' annotation is not mirrored).
//
// Diagnostics (Warnings, no retry): kReasonInvalidIPAddress "Skipped N invalid IP addresses when
// mirroring to EndpointSlices" when N > 0; kReasonTooManyAddressesToMirror "A max of M addresses
// can be mirrored to EndpointSlices per Endpoints subset. K addresses were skipped" when the K
// skipped addresses (invalid ones included) outnumber the invalid ones.
//
// When DecideMirroring(&endpoints, &service, options) is not kMirror the result has no groups, so
// PlanSlices deletes every mirrored slice. `stats` (optional) receives the address counts.
DesiredEndpoints DesiredFromEndpoints(const model::Endpoints& endpoints,
                                      const model::Service& service,
                                      const MirroringOptions& options,
                                      MirroringStats* stats = nullptr);

// The PlanOptions mirroring plans with: slices of max_endpoints_per_subset endpoints (so one
// subset fits one slice), no placeholder, no ownership check (upstream mirroring does not check
// it; a non-owned slice is also recycled), labels compared without service-name and managed-by
// (headless is an ordinary Endpoints label here), annotations compared. One difference from
// upstream's mirroring reconciler remains by design: upstream keeps only the first slice of a port
// set and deletes the others, while PlanSlices keeps every slice that still holds desired
// endpoints (fewer writes; duplicates are still removed).
PlanOptions MirroringPlanOptions(const MirroringOptions& options);

// How many endpoints the plan's updates rewrite in a changed form: endpoints whose identity is in
// the existing slice of the same name but that are not EndpointEqualBeyondIdentity to it (the
// "updated" total of upstream's endpoints_updated_per_sync).
std::int64_t CountUpdatedEndpoints(const Plan& plan,
                                   std::span<const model::EndpointSlice> existing);

// The plan that deletes every slice in `mirrored` (an Endpoints no longer mirrored, spec §12 "In
// every other case"), in the given order; no creates, no updates.
Plan PlanDeleteMirrored(std::span<const model::EndpointSlice> mirrored);

}  // namespace slicewright::reconcile

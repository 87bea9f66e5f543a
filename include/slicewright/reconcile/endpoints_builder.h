// The core/v1 Endpoints object kube-controller-manager's Endpoints controller writes for a Service
// and its pods (spec §13), and whether a stored Endpoints already says it. Pure and reentrant;
// inputs are never modified and nothing is retained.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "slicewright/model/core.h"
#include "slicewright/model/time.h"
#include "slicewright/reconcile/desired.h"

namespace slicewright::reconcile {

// Upstream maxCapacity: an Endpoints carries at most this many addresses (ready + not ready,
// counted per subset); beyond it the object is truncated and annotated.
inline constexpr std::size_t kMaxEndpointsCapacity = 1000;
// The value of endpoints.kubernetes.io/over-capacity on a truncated Endpoints.
inline constexpr std::string_view kOverCapacityTruncated = "truncated";
// slicewright's mark on the Endpoints objects it writes: a fingerprint of the subsets written
// (SubsetsFingerprint). KEP-4770 (spec §11.4, §15.8) deletes only Endpoints we wrote when their
// Service is handed to another controller; a fingerprint rather than a plain flag, because another
// writer's read-modify-write keeps annotations but changes the subsets.
inline constexpr std::string_view kAnnotationWrittenSubsets =
    "endpoints.slicewright.io/written-subsets";

// Upstream RepackSubsets: the canonical layout of `subsets`. Addresses are de-duplicated by IP and
// targetRef UID (the first copy is kept); per port, an address that is not ready in any subset is
// not ready; ports served by the same addresses (with the same readiness) share one subset;
// addresses without any port share a port-less subset. Addresses are sorted by IP text then UID
// (no targetRef first), ports and then subsets by the MD5 of Go's printout of each, all as
// upstream's SortSubsets: kube-controller-manager compares subsets in order, so the same order is
// what lets it take over our Endpoints without a write. Subsets left with no address are dropped.
std::vector<model::EndpointSubset> RepackSubsets(std::span<const model::EndpointSubset> subsets);

// Upstream truncateEndpoints over `subsets`, in place; true when it truncated (then the object is
// annotated over-capacity). With more than `max_capacity` addresses in all: if the ready ones alone
// exceed it, only ready addresses are kept, else every ready one and the not-ready ones up to the
// rest of the budget. Each subset keeps its first ⌈count / total of that kind × budget⌉
// addresses of that kind, capped by what is left of the budget. Unlike upstream, a subset left
// with no address at all is removed (the API server rejects one).
bool TruncateSubsets(std::vector<model::EndpointSubset>& subsets,
                     std::size_t max_capacity = kMaxEndpointsCapacity);

// Whether two subset lists say the same thing, ignoring targetRef resourceVersions (as upstream's
// endpointSubsetsEqualIgnoreResourceVersion) and order (both sides are repacked when they differ
// as given, so an Endpoints written by kube-controller-manager in its hash order compares equal).
bool EndpointSubsetsEqual(std::span<const model::EndpointSubset> a,
                          std::span<const model::EndpointSubset> b);

// A fingerprint of the repacked `subsets` (targetRef resourceVersions ignored): 16 hex digits of
// FNV-1a 64 over a length-prefixed encoding of every field. The kAnnotationWrittenSubsets value.
std::string SubsetsFingerprint(std::span<const model::EndpointSubset> subsets);

// The subsets the Service's pods call for (spec §13), repacked, before truncation.
struct EndpointsSubsets {
  std::vector<model::EndpointSubset> subsets;
  std::size_t ready = 0;      // ready address entries, summed over subsets
  std::size_t not_ready = 0;  // not-ready address entries, summed over subsets
  // One Warning kReasonInvalidIPAddress (pod_source.h) when pod IPs were skipped as invalid.
  std::vector<Diagnostic> diagnostics;
};

// From the pods `service`'s selector matches (the caller lists them; same namespace; no nullptr):
// pods that are terminal, have no IP, or are terminating (unless publishNotReadyAddresses) are left
// out. One address per pod: the first status.podIPs entry of the Service's family (ipFamilies[0];
// without families, the ClusterIP's family, or for a headless Service the family of status.podIP),
// canonicalised; invalid entries are skipped (decision §15.4); no entry of the family: the pod is
// left out. The address carries nodeName (always set, as upstream's), targetRef {Pod, namespace,
// name, uid} and the hostname when the pod's subdomain names the Service. It is ready when
// publishNotReadyAddresses or the pod is Ready. Ports per Service port through FindPort (a port not
// found on the pod is left out for that pod); a Service with clusterIP None and no ports gives
// port-less subsets; any other Service without ports gives none.
EndpointsSubsets EndpointsSubsetsForService(const model::Service& service,
                                            std::span<const model::Pod* const> pods);

struct EndpointsBuildOptions {
  // The change that triggered this sync (trigger_time.h); zero removes the annotation.
  model::Time trigger_time;
  std::size_t max_capacity = kMaxEndpointsCapacity;
  // Kubernetes 1.33+: the Endpoints written carries endpoints.kubernetes.io/managed-by:
  // endpoint-controller, and a stored one without it is rewritten (upstream's
  // labelsCorrectForEndpoints). Off, as kube-controller-manager before 1.33: no such label is
  // written, and one found is tolerated rather than removed.
  bool managed_by_label = true;
};

struct EndpointsPlan {
  enum class Action { kNone, kCreate, kUpdate };
  Action action = Action::kNone;
  // The object to write: for an update, the stored one (resourceVersion kept as the precondition,
  // other annotations kept) with subsets, labels and our annotations replaced; for a create, a new
  // object named after the Service. Filled for kNone too, as what would be written.
  model::Endpoints endpoints;
  bool truncated = false;
  std::size_t ready = 0;      // before truncation
  std::size_t not_ready = 0;  // before truncation
  std::vector<Diagnostic> diagnostics;
};

// Decides the write for `service` given its selected `pods` and the stored Endpoints (`current`,
// nullptr when there is none). No write when the stored object has the subsets that would be
// written (EndpointSubsetsEqual), its labels are right and its over-capacity annotation is right
// (absent, or `truncated` when the object is truncated). Labels are right when, leaving out
// service.kubernetes.io/headless and endpoints.kubernetes.io/managed-by on both sides, they equal
// the Service's, and (options.managed_by_label) the stored managed-by is endpoint-controller.
// Upstream compares the stored subsets with the untruncated ones, so it rewrites a truncated
// Endpoints on every sync; we compare with the truncated ones (decision recorded in
// docs/design.md). The trigger time and other annotations are not compared, as upstream's.
//
// The written object: labels = the Service's, plus service.kubernetes.io/headless "" when the
// Service has no cluster IP (else that key removed), plus (options.managed_by_label)
// endpoints.kubernetes.io/managed-by: endpoint-controller (else that key removed);
// endpoints.kubernetes.io/last-change-trigger-time = the trigger time in RFC 3339 with nanoseconds,
// removed when zero; over-capacity `truncated` or removed; kAnnotationWrittenSubsets.
EndpointsPlan PlanEndpoints(const model::Service& service, std::span<const model::Pod* const> pods,
                            const model::Endpoints* current,
                            const EndpointsBuildOptions& options = {});

// Whether `stored` carries kAnnotationWrittenSubsets matching its subsets: we wrote it, and no one
// has changed its subsets since.
bool CarriesWrittenSubsetsMark(const model::Endpoints& stored);

// KEP-4770: whether `stored` is an Endpoints this controller wrote, judged without memory of past
// writes: CarriesWrittenSubsetsMark, or its subsets are exactly the ones `plan` would write (an
// object kube-controller-manager, or we before the mark, wrote).
bool WrittenByEndpointsController(const model::Endpoints& stored, const EndpointsPlan& plan);

}  // namespace slicewright::reconcile

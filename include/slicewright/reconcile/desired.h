// The reconciler's input: the owner of a set of EndpointSlices and the endpoints it should publish,
// grouped by address type and port set. Every source (Service + Pods, Endpoints for mirroring,
// Multus network-status, remote clusters) is an adapter producing this. Plain values.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "slicewright/model/discovery.h"
#include "slicewright/model/meta.h"
#include "slicewright/reconcile/fingerprint.h"

namespace slicewright::reconcile {

// The object that owns the slices (a Service, an Endpoints, a ServiceImport).
struct Owner {
  std::string api_version = "v1";
  std::string kind = "Service";
  std::string namespace_;
  std::string name;
  std::string uid;
  // The owner has a deletionTimestamp: no slice is created (updates and deletes still are).
  bool being_deleted = false;
  friend bool operator==(const Owner&, const Owner&) = default;
};

// One address type and port set, and the endpoints that serve it. A group may be empty: it then
// empties (and so deletes) existing slices of that port set but creates none (spec §3.6).
struct EndpointGroup {
  std::string address_type;  // "IPv4" or "IPv6"
  std::vector<model::EndpointPort> ports;
  std::vector<model::Endpoint> endpoints;
  // Empty, or FingerprintEndpoints(endpoints): key i is endpoints[i]'s (fingerprint.h). Sources
  // that keep their endpoints between syncs fill it, and whoever changes an endpoint must update
  // or clear it. With the stored slices' fingerprints (PlanOptions), the planner compares
  // unchanged endpoints by key. The initializer keeps three-field aggregate initialization
  // warning-free.
  FingerprintRun fingerprints = {};
  // The source emitted `endpoints` sorted by CompareEndpointIdentity and unique, so the planner
  // only checks adjacent pairs instead of sorting (in every build). A broken promise is repaired
  // (sorted, the later duplicate winning) and reported as a Warning diagnostic
  // EndpointOrderPromiseBroken. Sources that cannot promise it leave it false.
  bool sorted_unique = false;
  // The source set no endpoint's hints (the Service source never does). Then a new slice made of
  // them needs no hints removed, and removing them, which read every endpoint once more, is
  // skipped. Sources that cannot promise it leave it false.
  bool without_hints = false;
  // Instead of `endpoints` (then empty), a source may hand over the same sorted, unique endpoints
  // cut into runs of `run_capacity` (the last one shorter). When that capacity is the planner's
  // maxEndpointsPerSlice, a run that becomes a new slice whole is moved into it as one vector: a
  // full reconcile then builds every endpoint once, in the place it is written from.
  std::vector<std::vector<model::Endpoint>> runs = {};
  std::size_t run_capacity = 0;
  // Stored slices, among those handed to the planner with this desired state, that the source
  // found holding some of this group's endpoints unchanged; those endpoints are then left out of
  // `endpoints` and `runs`, so a resync need not build what it would only compare. The source
  // vouches, for each: it is the owner's, of this address type and port set; every endpoint in
  // it is desired here, once, and equal to its desired form (CompareEndpointIdentity and
  // EndpointEqualBeyondIdentity); and no other stored slice of the address type holds one of
  // them. The planner then keeps it as it would have (unchanged, or updated for its metadata or
  // hints) without looking at its endpoints.
  std::vector<const model::EndpointSlice*> held = {};

  // Endpoints in either form.
  std::size_t endpoint_count() const;
  // endpoint_count() and the endpoints of the held slices.
  std::size_t desired_count() const;
  // The endpoint at `index` in either form (past the first run, found by division).
  const model::Endpoint& endpoint_at(std::size_t index) const;
};

// A problem worth an Event on the owner (a skipped pod, an invalid IP, a hints decision).
struct Diagnostic {
  enum class Severity { kNormal, kWarning };
  Severity severity = Severity::kWarning;
  std::string reason;
  std::string message;
  // The sync must be retried even though the plan is applied (e.g. a pod's Node is missing).
  bool retry = false;
  friend bool operator==(const Diagnostic&, const Diagnostic&) = default;
};

struct DesiredEndpoints {
  Owner owner;
  // Address types served; existing slices of any other type are deleted.
  std::vector<std::string> address_types;
  std::vector<EndpointGroup> groups;
  // The full label set every written slice carries (reserved keys included).
  model::StringMap labels;
  // Annotations every written slice carries, besides the trigger-time annotation.
  model::StringMap annotations;
  // The change that triggered this sync; zero removes the trigger-time annotation on written
  // slices.
  model::Time trigger_time;
  // The owner's spec.trafficDistribution, if any.
  std::optional<std::string> traffic_distribution;
  // The owner asks for topology-aware hints (service.kubernetes.io/topology-mode: Auto).
  bool topology_hints_requested = false;
  // Problems met while deriving this state.
  std::vector<Diagnostic> diagnostics;
};

}  // namespace slicewright::reconcile

// PlanSlices turns desired endpoints and the existing slices of one owner into the minimal write
// plan upstream's EndpointSlice reconciler would send (spec §4-§6, decisions of §15). Pure and
// reentrant: no I/O, no clock, no logging; inputs are never modified, except the cache that
// PlanOptions::verified_runs points to.
#pragma once

#include <map>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "slicewright/model/discovery.h"
#include "slicewright/reconcile/desired.h"
#include "slicewright/reconcile/fingerprint.h"
#include "slicewright/reconcile/plan.h"

namespace slicewright::reconcile {

// What the TopologyCache knows, handed to the pure planner.
struct TopologyInput {
  // allocatable-CPU share per zone; empty means insufficient node information.
  std::map<std::string, double> zone_ratios;
  // Address types for which the owner had hints allocated before (events fire on transitions).
  std::set<std::string> populated_address_types;
};

struct PlanOptions {
  int max_endpoints_per_slice = 100;  // 1..1000, validated by the caller
  std::string managed_by = "endpointslice-controller.k8s.io";
  // Publish an empty slice when an address type has no endpoints (the Service controller does).
  bool placeholder_enabled = true;
  // Delete existing slices not controlled by the owner's UID (the Service controller does).
  bool ownership_enforced = true;
  // Accept PreferSameZone and PreferSameNode as trafficDistribution values.
  bool prefer_same_traffic_distribution = true;
  // Label keys whose differences alone do not make a slice "changed" (spec §5).
  std::vector<std::string> labels_ignored_for_change = {"kubernetes.io/service-name",
                                                        "endpointslice.kubernetes.io/managed-by",
                                                        "service.kubernetes.io/headless"};
  // Compare slice annotations (minus the trigger time) with the desired ones (mirroring does).
  bool compare_annotations = false;
  // nullptr: no topology cache (annotation-driven hints disabled).
  const TopologyInput* topology = nullptr;
  // nullptr, or FingerprintSlice() of each existing slice, in the same order (the informer cache
  // computes them once per slice version). Only a speed-up: a fingerprint that does not describe
  // its slice (FingerprintsDescribe) is ignored, and so are all when the sizes differ.
  const std::vector<SliceFingerprints>* existing_fingerprints = nullptr;
  // nullptr, or a cache that this planner reads and updates and the caller keeps between plans
  // of one owner: for each existing slice, in the same order, the desired keys it was last found
  // to hold (VerifiedRun). A slice whose version and desired keys are unchanged since is then
  // matched without reading its keys. Used with existing_fingerprints only, and resized to
  // `existing` when the sizes differ. Only a speed-up: the plan is the same without it.
  std::vector<VerifiedRun>* verified_runs = nullptr;
};

Plan PlanSlices(const DesiredEndpoints& desired, std::span<const model::EndpointSlice> existing,
                const PlanOptions& options);
// The same plan; endpoints are moved out of `desired` instead of copied.
Plan PlanSlices(DesiredEndpoints&& desired, std::span<const model::EndpointSlice> existing,
                const PlanOptions& options);

// The order-insensitive key of a port set (nil and empty are the same): slices of one key are
// interchangeable. Canonical text, so it sorts and prints deterministically.
std::string PortMapKey(std::span<const model::EndpointPort> ports);

// metadata.generateName for slices of `owner_name` (spec §1.3).
std::string SliceGenerateName(std::string_view owner_name);

}  // namespace slicewright::reconcile

namespace slicewright::reconcile {

// Total order on endpoint identity (spec §3.7): sorted addresses, hostname, targetRef namespace,
// targetRef name. Sources that emit each group's endpoints sorted by it (and unique) let the
// planner skip sorting; any other order is accepted and sorted.
int CompareEndpointIdentity(const model::Endpoint& a, const model::Endpoint& b);

// Whether a kept endpoint needs rewriting (spec §3.7 EqualBeyondHash): nodeName, zone, the three
// conditions (nil differs from set) and targetRef ignoring resourceVersion. Hints are not compared.
bool EndpointEqualBeyondIdentity(const model::Endpoint& desired, const model::Endpoint& stored);

}  // namespace slicewright::reconcile

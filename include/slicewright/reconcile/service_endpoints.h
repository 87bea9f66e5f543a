// ServiceEndpointsBuilder keeps one Service's desired endpoints between syncs and re-derives only
// the pod that changed: the steady-state form of DesiredFromService (pod_source.h) that the
// EndpointSlice controller holds per Service. Thread-compatible; it owns a copy of the Service
// and retains no pointer to a Pod or Node.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "slicewright/model/core.h"
#include "slicewright/model/discovery.h"
#include "slicewright/model/rare.h"
#include "slicewright/model/time.h"
#include "slicewright/reconcile/desired.h"
#include "slicewright/reconcile/pod_source.h"

namespace slicewright::reconcile {

// desired() always equals DesiredFromService(service, pods, nodes, options) over the pods set so
// far in name order, with the nodes given with each pod, plus every group's fingerprints
// (desired.h), so PlanSlices compares unchanged endpoints by fingerprint.
//
// Costs: a pod whose endpoint keeps its identity (addresses, hostname, name; e.g. a readiness or
// node change) is updated in place, O(log n). A pod that gains, loses or changes its addresses
// moves the endpoints after it in its group, O(n). SetPods rebuilds everything, O(n log n).
//
// The caller re-sets the pods of a Node whose zone label changed, and builds a new builder when
// the Service changes: its ports, selector, IP families and labels are read only here.
class ServiceEndpointsBuilder final {
 public:
  explicit ServiceEndpointsBuilder(const model::Service& service,
                                   const ServiceSourceOptions& options = {});

  // Replaces every pod by `pods` (the Service's namespace, unique names, no nullptr).
  void SetPods(std::span<const model::Pod* const> pods, const NodeLookup& nodes);

  // Adds `pod` or replaces the pod of the same name. `node` is the pod's Node, or nullptr when it
  // is not found. The pod must be in the Service's namespace and match its selector (the caller
  // removes pods that stop matching).
  void SetPod(const model::Pod& pod, const model::Node* node);

  // Removes the pod named `name`; false when there is none.
  bool RemovePod(std::string_view name);

  // The trigger time written on slices (trigger_time.h); zero removes the annotation.
  void SetTriggerTime(model::Time trigger_time) { desired_.trigger_time = trigger_time; }

  const DesiredEndpoints& desired() const { return desired_; }
  std::size_t pod_count() const { return pods_.size(); }

 private:
  static constexpr std::size_t kMaxTypes = 2;
  static constexpr std::size_t kNoRank = ~std::size_t{0};

  // The identity fields of a pod's endpoint besides its targetRef, which names the pod itself
  // (the Service's namespace, the pod's name): enough to find the endpoint in its group.
  struct Identity {  // NOLINT(bugprone-exception-escape): as PodState
    model::EndpointAddresses addresses;
    model::OptionalBox<std::string> hostname;  // as model::Endpoint::hostname
  };

  // What one pod contributes, kept per pod: small, since large Services keep one per pod for as
  // long as they exist. Its implicit moves are noexcept through small_vector's, which never
  // allocate for one address; clang-tidy cannot see into Boost's small_vector.
  struct PodState {  // NOLINT(bugprone-exception-escape)
    // The PortMapKey of the pod's port set; nullopt when the pod is not in endpoints at all.
    std::optional<std::string> port_key;
    // Per address type, the identity of the pod's endpoint; nullopt when there is none.
    std::array<std::optional<Identity>, kMaxTypes> identity;
    // The NodeNotFound diagnostic, when the pod was skipped for a missing Node.
    model::OptionalBox<Diagnostic> node_not_found;
    // Invalid pod IPs: how many, and the first one named.
    std::int64_t invalid_ips = 0;
    model::RareString first_invalid;
  };

  // A port set and how many pods are in it (a group exists while one is, spec §3.6).
  struct PortSet {
    std::vector<model::EndpointPort> ports;
    std::size_t pods = 0;
    std::size_t rank = kNoRank;  // position among the port sets, kNoRank until placed
  };

  // A pod's contribution before it is applied.
  struct Derived {
    PodState state;
    std::vector<model::EndpointPort> ports;
    std::array<std::optional<model::Endpoint>, kMaxTypes> endpoints;
  };

  Derived Derive(const model::Pod& pod, const model::Node* node) const;
  // The endpoint CompareEndpointIdentity orders as the endpoint of pod `name` with `identity`.
  model::Endpoint IdentityEndpoint(const Identity& identity, std::string_view name) const;
  // Applies `derived` as the state of pod `name` (replacing `old`, if any).
  void Apply(const std::string& name, const PodState* old, Derived&& derived);
  void AcquirePortSet(const std::string& key, std::vector<model::EndpointPort>&& ports);
  void ReleasePortSet(const std::string& key);
  // Reorders desired_.groups after port sets were added or removed (`old_count` before).
  void RegroupPortSets(std::size_t old_count);
  EndpointGroup& GroupFor(const std::string& key, std::size_t type);
  void RebuildDiagnostics();

  model::Service service_;
  ServiceSourceOptions options_;
  DesiredEndpoints desired_;
  std::size_t type_count_ = 0;
  std::map<std::string, PortSet, std::less<>> port_sets_;
  std::map<std::string, PodState, std::less<>> pods_;
  // Pods with a diagnostic, by name: diagnostics are rebuilt from these alone.
  std::map<std::string, const PodState*, std::less<>> problem_pods_;
};

}  // namespace slicewright::reconcile

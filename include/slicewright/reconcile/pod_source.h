// The Service + Pods + Nodes adapter: derives DesiredEndpoints for the EndpointSlice controller
// (spec §3, §5). Pure and reentrant; inputs are never modified and nothing is retained.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "slicewright/model/compact_pod.h"
#include "slicewright/model/core.h"
#include "slicewright/model/discovery.h"
#include "slicewright/model/meta.h"
#include "slicewright/model/time.h"
#include "slicewright/model/well_known.h"
#include "slicewright/reconcile/desired.h"

namespace slicewright::reconcile {

// The address types a Service is served with (spec §3.1), sorted ("IPv4" before "IPv6"):
// spec.ipFamilies when it names a known family, else the family of a set ClusterIP, else (headless
// or empty ClusterIP during an upgrade from an old API server) both.
std::vector<std::string> SupportedAddressTypes(const model::Service& service);

// ClusterIP "None" or empty: the slices carry service.kubernetes.io/headless (spec §5).
bool IsHeadless(const model::Service& service);

// Spec §3.2: not Failed or Succeeded, has status.podIP or status.podIPs, and (unless
// `include_terminating`) no deletionTimestamp. The EndpointSlice controller passes true.
bool ShouldPodBeInEndpoints(const model::Pod& pod, bool include_terminating);

// The container port a Service port targets on `pod` (spec §3.5): an int targetPort as is; a named
// one is the first regular container port with that name and the Service port's protocol, else the
// first such port of a sidecar (an init container with restartPolicy Always). nullopt: not found.
std::optional<std::int32_t> FindPort(const model::Pod& pod, const model::ServicePort& port);

// The ports of `pod`'s endpoint, in Service port order: empty for a headless Service without ports;
// a Service port whose target is not found on the pod is left out (spec §3.5). name and protocol
// are always set; appProtocol only when the Service port has one.
std::vector<model::EndpointPort> EndpointPortsForPod(const model::Service& service,
                                                     const model::Pod& pod);

// Spec §3.4. `node` is the pod's Node or nullptr when not found. Addresses are the pod's
// status.podIPs of `address_type`'s family in order, canonicalised; invalid IPs are skipped
// (decision §15.4), so the result may have no address (such an endpoint is not published).
model::Endpoint PodToEndpoint(const model::Pod& pod, const model::Node* node,
                              const model::Service& service, std::string_view address_type);

// The label set every slice of `service` carries (spec §5): the Service's labels minus the reserved
// keys, plus service.kubernetes.io/headless "" when headless, kubernetes.io/service-name and
// endpointslice.kubernetes.io/managed-by.
model::StringMap ServiceSliceLabels(const model::Service& service, std::string_view managed_by);

// upstream setEndpointSliceLabels (spec §5, scenario 21): the labels to write on a slice that
// currently has `slice_labels`, and whether its non-reserved labels differ from the Service's
// (differences in reserved keys alone do not count).
struct SliceLabels {
  model::StringMap labels;
  bool changed = false;
};
SliceLabels SetEndpointSliceLabels(const model::StringMap& slice_labels,
                                   const model::Service& service, std::string_view managed_by);

// Resolves a Node name to the Node, nullptr when not found. A non-owning reference to a callable
// (like absl::FunctionRef): the callable must outlive every call, so pass it as a temporary
// argument and do not keep a NodeLookup beyond the statement that builds it from a temporary.
class NodeLookup final {
 public:
  // Any callable taking a name and returning a (const) Node pointer, e.g. a lambda over a lister.
  template <typename F>
  NodeLookup(const F& fn)  // NOLINT(google-explicit-constructor): a lambda converts naturally
      requires(!std::is_same_v<F, NodeLookup> &&
               std::is_invocable_r_v<const model::Node*, const F&, std::string_view>)
      : callable_(&fn), invoke_(&Invoke<F>) {}

  const model::Node* operator()(std::string_view name) const { return invoke_(callable_, name); }

 private:
  template <typename F>
  static const model::Node* Invoke(const void* callable, std::string_view name) {
    return (*static_cast<const F*>(callable))(name);
  }

  const void* callable_;
  const model::Node* (*invoke_)(const void*, std::string_view);
};

struct ServiceSourceOptions {
  // The endpointslice.kubernetes.io/managed-by value written on slices.
  std::string managed_by = std::string(model::kManagedByEndpointSliceController);
  // The change that triggered this sync (trigger_time.h); zero removes the annotation.
  model::Time trigger_time;
  // Non-zero: each group's endpoints are handed over as EndpointGroup::runs of this many (pass
  // the planner's maxEndpointsPerSlice), so new slices take them without moving an endpoint.
  std::size_t slice_capacity = 0;
  // The stored slices the result will be planned with (PlanSlices' `existing`: the same objects,
  // which must outlive the result). One that already holds, unchanged, a run of a group's
  // endpoints, and that no other stored slice contests, is handed over as EndpointGroup::held
  // and those endpoints are not built. Empty: every endpoint is built.
  std::span<const model::EndpointSlice> stored_slices;
  // service.kubernetes.io/topology-mode requests topology hints (Kubernetes 1.27+); off, only the
  // deprecated topology-aware-hints key does, as in kube-controller-manager before 1.27.
  bool topology_mode_annotation = true;
};

// Reason of the diagnostic for a pod skipped because its Node is missing (retry = true).
inline constexpr std::string_view kReasonNodeNotFound = "NodeNotFound";
// Reason of the one diagnostic per sync counting skipped invalid pod IPs (decision §15.4).
inline constexpr std::string_view kReasonInvalidIPAddress = "InvalidIPAddress";

// The desired state of `service`'s slices from the pods its selector matches (the caller lists
// them; same namespace). Fills owner (v1 Service, being_deleted from deletionTimestamp),
// address_types, labels, trigger_time, traffic_distribution, topology_hints_requested and groups:
// one per address type x port set, ordered by address type then PortMapKey. A group exists as soon
// as a pod passes ShouldPodBeInEndpoints, even if the pod is then skipped (spec §3.6). Endpoints of
// a group are unique by identity (a later pod replaces an earlier one, spec §3.7) and sorted by
// CompareEndpointIdentity (planner.h), so the planner need not sort them (decision §15.1).
//
// A pod whose Node is not found (or that has no nodeName) is skipped with a Warning
// kReasonNodeNotFound diagnostic "skipping Pod <pod> for Service <ns>/<name>: Node <node> Not
// Found" (retry = true), once per pod, unless publishNotReadyAddresses (then it is published
// without zone, spec §3.3). Invalid pod IPs are skipped and counted in one Warning
// kReasonInvalidIPAddress diagnostic (decision §15.4). `pods` must not hold nullptr.
DesiredEndpoints DesiredFromService(const model::Service& service,
                                    std::span<const model::Pod* const> pods,
                                    const NodeLookup& nodes, const ServiceSourceOptions& options);

// The same from the compact pods the controllers' Pod caches keep, read in place: equal to
// DesiredFromService over their ToPod(), without building them.
DesiredEndpoints DesiredFromService(const model::Service& service,
                                    std::span<const model::CompactPod* const> pods,
                                    const NodeLookup& nodes, const ServiceSourceOptions& options);

}  // namespace slicewright::reconcile

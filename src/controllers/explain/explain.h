// `slicewright explain service`: who manages a Service's endpoints and why, what its slices hold,
// and which selected pods are left out and why. Pure: the caller fetches the objects.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "slicewright/model/core.h"
#include "slicewright/model/discovery.h"

namespace slicewright::controllers::explain {

struct Input {
  model::Service service;
  // Pods of the Service's namespace (those the selector does not match are ignored).
  std::vector<model::Pod> pods;
  // Nodes the pods name; a name missing here is a missing Node.
  std::vector<model::Node> nodes;
  // Slices labelled kubernetes.io/service-name=<service>, whoever manages them.
  std::vector<model::EndpointSlice> slices;
  // The Endpoints object of the same name, if there is one.
  std::optional<model::Endpoints> endpoints;
  // --feature-gates ExternalEndpointController of the controllers being explained.
  bool external_endpoint_controller = true;
  // --controller-name of our EndpointSlice controller.
  std::string managed_by = "endpointslice-controller.k8s.io";
  int max_endpoints_per_slice = 100;
};

// Why a selected pod is, or is not, an endpoint. Stable names: scripts match on them.
enum class PodVerdict {
  kReady,             // published, ready: receives traffic
  kNotReady,          // published with ready=false: no traffic (unless publishNotReadyAddresses)
  kTerminating,       // published with terminating=true
  kPodFinished,       // left out: phase Succeeded or Failed
  kNoPodIP,           // left out: no IP yet (not scheduled or not started)
  kNoIPForFamily,     // left out: no IP of the Service's address family
  kNodeNotFound,      // left out: its Node is missing (retried)
  kNotOnNetwork,      // left out: not attached to the Service's network (multi-network)
  kBadNetworkStatus,  // left out: its network-status annotation does not parse
};
std::string_view PodVerdictName(PodVerdict verdict);
bool IsLeftOut(PodVerdict verdict);

struct PodReport {
  std::string name;
  PodVerdict verdict = PodVerdict::kReady;
  std::string detail;
  // Service ports whose targetPort the pod does not have: its endpoint is published without
  // them, in a slice of another port set.
  std::vector<std::string> unresolved_ports;
};

struct SliceReport {
  std::string name;
  std::string managed_by;
  std::string address_type;
  std::int64_t endpoints = 0;
  std::int64_t ready = 0;
  std::int64_t serving = 0;
  std::int64_t terminating = 0;
};

// A slice's name, manager, address type and endpoint counts (unset conditions counted as
// discovery/v1 defines them: ready and serving true, terminating false).
SliceReport SummariseSlice(const model::EndpointSlice& slice);

struct Explanation {
  std::string service;  // namespace/name
  // The controller expected to write this Service's endpoints ("" when none does), its
  // managed-by value, and why it is that one.
  std::string controller;
  std::string managed_by;
  std::string reason;
  // Slices of `managed_by`; those of other managers are listed in `other_slices`.
  std::vector<SliceReport> slices;
  std::vector<SliceReport> other_slices;
  std::int64_t ready = 0;
  std::int64_t serving = 0;
  std::int64_t terminating = 0;
  std::int64_t selected_pods = 0;
  std::vector<PodReport> pods;  // every selected pod, by name
  // Whether the slices equal what the controller would write now (as `slicewright plan`
  // computes it), and the writes it would make; unset when not computable (no selector, not
  // ours, or topology-aware hints that depend on the whole cluster's Nodes).
  std::optional<bool> in_sync;
  std::string pending_writes;
  std::vector<std::string> notes;  // anything else an operator should know
};

Explanation Explain(const Input& input);

// Human-readable text (the default output) and compact JSON (-o json; field names in camelCase).
std::string RenderText(const Explanation& explanation);
std::string EncodeJson(const Explanation& explanation);

}  // namespace slicewright::controllers::explain

// The reconciler's output: the EndpointSlice writes to send, in order, and what the metrics and
// events need to know about them. Plain values.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "slicewright/model/discovery.h"
#include "slicewright/reconcile/desired.h"

namespace slicewright::reconcile {

enum class Operation { kCreate, kUpdate, kDelete };
std::string_view OperationName(Operation op);  // "create", "update", "delete"

struct SliceAction {
  Operation operation;
  // create: a new object with generateName and no name; update: the full object, carrying the
  // resourceVersion it was based on (a conflict means a retry, not a lost update); delete: the
  // stored object (name, uid and resourceVersion serve as preconditions).
  model::EndpointSlice slice;
};

// Endpoints and slices of one port set of one address type, for the metrics cache (spec §9).
struct GroupStats {
  std::string address_type;
  std::string port_key;
  std::int64_t endpoints = 0;
  std::int64_t slices = 0;
  friend bool operator==(const GroupStats&, const GroupStats&) = default;
};

struct AddressTypeStats {
  std::string address_type;
  std::int64_t added = 0;
  std::int64_t removed = 0;
  friend bool operator==(const AddressTypeStats&, const AddressTypeStats&) = default;
};

// What the topology-aware hints stage decided for one address type, for the TopologyCache.
struct TopologyOutcome {
  std::string address_type;
  // true: hints were allocated (`allocation` holds endpoints hinted per zone); false: the cache
  // entry for this owner and address type must be dropped.
  bool hints_allocated = false;
  std::map<std::string, std::int64_t> allocation;
  friend bool operator==(const TopologyOutcome&, const TopologyOutcome&) = default;
};

struct PlanStats {
  std::vector<AddressTypeStats> per_address_type;
  std::vector<GroupStats> groups;
  // Labels of endpoint_slice_controller_endpointslices_changed_per_sync.
  std::string topology_label = "Disabled";  // "Auto" or "Disabled"
  // The trafficDistribution in effect (valid, and topology hints not requested), or "". Also what
  // the Service counts under in services_count_by_traffic_distribution ("" = none in effect).
  std::string traffic_distribution_label;
  std::int64_t added() const;
  std::int64_t removed() const;
};

struct Plan {
  std::vector<SliceAction> actions;    // in the order they are to be sent
  std::vector<std::string> unchanged;  // names of existing slices left as they are
  PlanStats stats;
  std::vector<Diagnostic> diagnostics;
  std::vector<TopologyOutcome> topology;

  std::size_t Count(Operation op) const;
  bool empty() const { return actions.empty(); }
  // A diagnostic asked for the sync to be retried.
  bool NeedsRetry() const;
};

}  // namespace slicewright::reconcile

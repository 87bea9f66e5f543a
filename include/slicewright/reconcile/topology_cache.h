// TopologyCache: the zone shares of allocatable CPU across Nodes and the topology-aware hints each
// Service was given, for annotation-driven hints (spec §6.3). Thread-safe: every method locks one
// mutex; the planner gets an immutable Snapshot and reports back with Apply.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "slicewright/base/mutex.h"
#include "slicewright/model/core.h"
#include "slicewright/reconcile/plan.h"
#include "slicewright/reconcile/planner.h"

namespace slicewright::reconcile {

namespace internal {

// No endpoint should receive more than 20% more traffic than its share (upstream
// overloadThreshold).
inline constexpr double kOverloadThreshold = 0.2;

// How many endpoints a zone should be hinted: at least `minimum` (below which its endpoints are
// overloaded), at most `maximum`, ideally `desired`.
struct ZoneAllocation {
  std::int64_t minimum = 0;
  std::int64_t maximum = 0;
  double desired = 0;
  friend bool operator==(const ZoneAllocation&, const ZoneAllocation&) = default;
};

// upstream getAllocations for `ready_endpoints` ready endpoints. On failure `allocations` is empty
// and `error` holds the event message (without the ", addressType: …" suffix): insufficient node
// information, nodes ready in one zone only, too few endpoints, or minimums above the threshold.
struct AllocationResult {
  std::map<std::string, ZoneAllocation> allocations;
  std::string error;
};
AllocationResult GetAllocations(const std::map<std::string, double>& zone_ratios,
                                std::int64_t ready_endpoints);

// upstream getGivingAndReceivingZones (scenario 35): how many endpoints each zone hinted beyond its
// desired share should give, and each zone short of it should receive. Go breaks ties between
// equal remainders by map order (random); here the zone that sorts first wins.
struct GivingAndReceiving {
  std::map<std::string, std::int64_t> giving;
  std::map<std::string, std::int64_t> receiving;
  friend bool operator==(const GivingAndReceiving&, const GivingAndReceiving&) = default;
};
GivingAndReceiving GetGivingAndReceivingZones(
    const std::map<std::string, ZoneAllocation>& allocations,
    const std::map<std::string, std::int64_t>& allocated_hints_by_zone);

// upstream serviceOverloaded: some zone with a CPU share has fewer hinted endpoints than its
// minimum, or no share is known at all. An empty allocation is never overloaded.
bool ServiceOverloaded(const std::map<std::string, std::int64_t>& hints_by_zone,
                       const std::map<std::string, double>& zone_ratios);

}  // namespace internal

class TopologyCache final {
 public:
  TopologyCache() = default;
  TopologyCache(const TopologyCache&) = delete;
  TopologyCache& operator=(const TopologyCache&) = delete;

  // Recomputes the zone ratios from every Node (spec §6.3): control-plane/master and not-Ready
  // nodes are ignored; if any other node lacks a zone or has zero allocatable CPU (absent or
  // unparseable counts as zero), or total CPU is zero, or fewer than two zones remain, the node
  // information is insufficient and the ratios are cleared.
  void SetNodes(std::span<const model::Node> nodes);
  void SetNodes(std::span<const model::Node* const> nodes);

  // What the planner needs for `service_key` ("namespace/name"): the current ratios and the
  // address types the Service had hints allocated for.
  TopologyInput Snapshot(std::string_view service_key) const;

  // Records the hints stage's outcome per address type: allocated hints replace the entry,
  // otherwise the entry is dropped.
  void Apply(std::string_view service_key, const std::vector<TopologyOutcome>& outcomes);

  // The Service had hints allocated for any address type.
  bool HasPopulatedHints(std::string_view service_key) const;

  // Forgets the Service (it was deleted, or no longer asks for hints).
  void RemoveService(std::string_view service_key);

  // Services, sorted, whose hinted endpoints no longer respect the overload threshold for the
  // current ratios (call after SetNodes and requeue them).
  std::vector<std::string> GetOverloadedServices() const;

  // Introspection for metrics and tests.
  std::map<std::string, double> ZoneRatios() const;
  bool SufficientNodeInfo() const;
  // Allocatable milli-CPU per zone while the node information is sufficient, else empty.
  std::map<std::string, std::int64_t> CpuByZone() const;

 private:
  template <typename NodeRange>
  void SetNodesImpl(const NodeRange& nodes);

  using ZoneCounts = std::map<std::string, std::int64_t>;

  mutable Mutex mu_;
  bool sufficient_node_info_ SW_GUARDED_BY(mu_) = false;
  std::map<std::string, std::int64_t> cpu_by_zone_ SW_GUARDED_BY(mu_);
  std::map<std::string, double> ratios_ SW_GUARDED_BY(mu_);
  // service key -> address type -> hinted endpoints per zone
  std::map<std::string, std::map<std::string, ZoneCounts>, std::less<>> hints_by_service_
      SW_GUARDED_BY(mu_);
};

}  // namespace slicewright::reconcile

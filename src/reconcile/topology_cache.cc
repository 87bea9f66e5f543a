#include "slicewright/reconcile/topology_cache.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "slicewright/model/core.h"
#include "slicewright/model/quantity.h"
#include "slicewright/model/well_known.h"

namespace slicewright::reconcile {
namespace internal {
namespace {

// Computed once, as Go folds the constant expression 1 / (1 + overloadThreshold).
constexpr double kMinimumShare = 1.0 / (1.0 + kOverloadThreshold);

// upstream getMost: the zone with the largest strictly positive remainder; the first in key order
// on ties. nullptr when none is positive.
const std::pair<const std::string, double>* GetMost(const std::map<std::string, double>& zones) {
  const std::pair<const std::string, double>* most = nullptr;
  double value = 0.0;
  for (const auto& entry : zones) {
    if (entry.second > value) {
      most = &entry;
      value = entry.second;
    }
  }
  return most;
}

}  // namespace

AllocationResult GetAllocations(const std::map<std::string, double>& zone_ratios,
                                std::int64_t ready_endpoints) {
  AllocationResult result;
  const auto zones = static_cast<std::int64_t>(zone_ratios.size());
  if (zone_ratios.empty()) {
    result.error =
        "Insufficient Node information: allocatable CPU or zone not specified on one or more nodes";
    return result;
  }
  if (zones < 2) {
    result.error = "Nodes only ready in one zone";
    return result;
  }
  const std::string counts =
      " (" + std::to_string(ready_endpoints) + " endpoints, " + std::to_string(zones) + " zones)";
  if (zones > ready_endpoints) {
    result.error = "Insufficient number of endpoints" + counts;
    return result;
  }
  std::int64_t min_total = 0;
  for (const auto& [zone, ratio] : zone_ratios) {
    const double desired = ratio * static_cast<double>(ready_endpoints);
    const auto minimum = static_cast<std::int64_t>(std::ceil(desired * kMinimumShare));
    result.allocations[zone] =
        ZoneAllocation{minimum, 0, std::max(desired, static_cast<double>(minimum))};
    min_total += minimum;
  }
  // Whether the minimums fit does not depend on the (random, in Go) order the zones are visited.
  if (min_total > ready_endpoints) {
    result.allocations.clear();
    result.error =
        "Unable to allocate minimum required endpoints to each zone without exceeding overload "
        "threshold" +
        counts;
    return result;
  }
  for (auto& [zone, allocation] : result.allocations) {
    allocation.maximum = allocation.minimum + ready_endpoints - min_total;
  }
  return result;
}

GivingAndReceiving GetGivingAndReceivingZones(
    const std::map<std::string, ZoneAllocation>& allocations,
    const std::map<std::string, std::int64_t>& allocated_hints_by_zone) {
  // 1. The precise surplus or deficit of each zone.
  std::map<std::string, double> giving_desired;
  std::map<std::string, double> receiving_desired;
  for (const auto& [zone, allocation] : allocations) {
    auto it = allocated_hints_by_zone.find(zone);
    const double allocated =
        it == allocated_hints_by_zone.end() ? 0.0 : static_cast<double>(it->second);
    if (allocated > allocation.desired) {
      giving_desired[zone] = allocated - allocation.desired;
    } else if (allocated < allocation.desired) {
      receiving_desired[zone] = allocation.desired - allocated;
    }
  }
  // 2. Whole endpoints moved one at a time from the largest surplus to the largest deficit.
  GivingAndReceiving result;
  while (true) {
    const auto* giving = GetMost(giving_desired);
    const auto* receiving = GetMost(receiving_desired);
    if (giving == nullptr || receiving == nullptr) {
      break;
    }
    const double to_give = giving->second;
    const double to_receive = receiving->second;
    if ((to_give < 1.0 && to_receive < 1.0) || to_give < 0.5 || to_receive < 0.5) {
      break;
    }
    ++result.giving[giving->first];
    giving_desired[giving->first] -= 1;
    ++result.receiving[receiving->first];
    receiving_desired[receiving->first] -= 1;
  }
  return result;
}

bool ServiceOverloaded(const std::map<std::string, std::int64_t>& hints_by_zone,
                       const std::map<std::string, double>& zone_ratios) {
  if (hints_by_zone.empty()) {
    return false;
  }
  if (zone_ratios.empty()) {
    return true;
  }
  double total = 0.0;
  for (const auto& [zone, count] : hints_by_zone) {
    total += static_cast<double>(count);
  }
  for (const auto& [zone, ratio] : zone_ratios) {
    auto it = hints_by_zone.find(zone);
    if (it == hints_by_zone.end()) {
      return true;
    }
    const double minimum = std::ceil(total * ratio * kMinimumShare);
    if (static_cast<double>(it->second) < minimum) {
      return true;
    }
  }
  return false;
}

}  // namespace internal

namespace {

bool IsNodeReady(const model::Node& node) {
  const model::PodCondition* ready = model::FindPodCondition(node.status.conditions, "Ready");
  return ready != nullptr && ready->status == "True";
}

bool HasExcludedLabels(const model::Node& node) {
  const model::StringMap& labels = node.metadata.labels;
  return labels.contains(model::kLabelNodeRoleControlPlane) ||
         labels.contains(model::kLabelNodeRoleMaster);
}

// Allocatable CPU in millicores; zero when absent or unparseable (API validation makes the latter
// impossible for stored Nodes).
std::int64_t AllocatableMilliCpu(const model::Node& node) {
  auto it = node.status.allocatable.find("cpu");
  if (it == node.status.allocatable.end()) {
    return 0;
  }
  return model::ParseQuantityMilli(it->second).value_or(0);
}

const model::Node& Deref(const model::Node& node) { return node; }
const model::Node& Deref(const model::Node* node) { return *node; }

}  // namespace

template <typename NodeRange>
void TopologyCache::SetNodesImpl(const NodeRange& nodes) {
  std::map<std::string, std::int64_t> cpu_by_zone;
  std::int64_t total = 0;
  bool sufficient = true;
  for (const auto& entry : nodes) {
    const model::Node& node = Deref(entry);
    if (HasExcludedLabels(node) || !IsNodeReady(node)) {
      continue;
    }
    auto zone = node.metadata.labels.find(model::kLabelTopologyZone);
    const std::int64_t cpu = AllocatableMilliCpu(node);
    // One node without a zone or CPU makes every ratio unknown (upstream's TODO keeps it so).
    if (zone == node.metadata.labels.end() || zone->second.empty() || cpu == 0 ||
        __builtin_add_overflow(total, cpu, &total)) {
      sufficient = false;
      break;
    }
    cpu_by_zone[zone->second] += cpu;
  }
  MutexLock lock(mu_);
  if (!sufficient || total == 0 || cpu_by_zone.size() < 2) {
    sufficient_node_info_ = false;
    cpu_by_zone_.clear();
    ratios_.clear();
    return;
  }
  sufficient_node_info_ = true;
  ratios_.clear();
  for (const auto& [zone, cpu] : cpu_by_zone) {
    ratios_[zone] = static_cast<double>(cpu) / static_cast<double>(total);
  }
  cpu_by_zone_ = std::move(cpu_by_zone);
}

void TopologyCache::SetNodes(std::span<const model::Node> nodes) { SetNodesImpl(nodes); }

void TopologyCache::SetNodes(std::span<const model::Node* const> nodes) { SetNodesImpl(nodes); }

TopologyInput TopologyCache::Snapshot(std::string_view service_key) const {
  TopologyInput input;
  MutexLock lock(mu_);
  input.zone_ratios = ratios_;
  auto it = hints_by_service_.find(service_key);
  if (it != hints_by_service_.end()) {
    for (const auto& [address_type, counts] : it->second) {
      input.populated_address_types.insert(address_type);
    }
  }
  return input;
}

void TopologyCache::Apply(std::string_view service_key,
                          const std::vector<TopologyOutcome>& outcomes) {
  MutexLock lock(mu_);
  auto it = hints_by_service_.find(service_key);
  for (const TopologyOutcome& outcome : outcomes) {
    if (outcome.hints_allocated) {
      if (it == hints_by_service_.end()) {
        it =
            hints_by_service_.emplace(std::string(service_key), std::map<std::string, ZoneCounts>())
                .first;
      }
      it->second[outcome.address_type] = outcome.allocation;
    } else if (it != hints_by_service_.end()) {
      it->second.erase(outcome.address_type);
    }
  }
  if (it != hints_by_service_.end() && it->second.empty()) {
    hints_by_service_.erase(it);
  }
}

bool TopologyCache::HasPopulatedHints(std::string_view service_key) const {
  MutexLock lock(mu_);
  return hints_by_service_.find(service_key) != hints_by_service_.end();
}

void TopologyCache::RemoveService(std::string_view service_key) {
  MutexLock lock(mu_);
  auto it = hints_by_service_.find(service_key);
  if (it != hints_by_service_.end()) {
    hints_by_service_.erase(it);
  }
}

std::vector<std::string> TopologyCache::GetOverloadedServices() const {
  std::vector<std::string> keys;
  MutexLock lock(mu_);
  for (const auto& [key, by_address_type] : hints_by_service_) {
    // A loop, not std::any_of: the analysis cannot see that a lambda runs under the lock.
    bool overloaded = false;
    for (const auto& entry : by_address_type) {
      overloaded = overloaded || internal::ServiceOverloaded(entry.second, ratios_);
    }
    if (overloaded) {
      keys.push_back(key);
    }
  }
  return keys;
}

std::map<std::string, double> TopologyCache::ZoneRatios() const {
  MutexLock lock(mu_);
  return ratios_;
}

bool TopologyCache::SufficientNodeInfo() const {
  MutexLock lock(mu_);
  return sufficient_node_info_;
}

std::map<std::string, std::int64_t> TopologyCache::CpuByZone() const {
  MutexLock lock(mu_);
  return cpu_by_zone_;
}

}  // namespace slicewright::reconcile

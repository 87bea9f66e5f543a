#include "slicewright/reconcile/topology_cache.h"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "slicewright/model/core.h"
#include "slicewright/model/well_known.h"

namespace slicewright::reconcile {
namespace {

using internal::ZoneAllocation;

struct NodeSpec {
  NodeSpec(std::string zone_in, std::optional<std::string> cpu_in, std::string ready_in = "True",
           std::vector<std::string> labels_in = {})
      : zone(std::move(zone_in)),
        cpu(std::move(cpu_in)),
        ready(std::move(ready_in)),
        labels(std::move(labels_in)) {}
  std::string zone;
  std::optional<std::string> cpu;  // nullopt: no allocatable cpu entry
  std::string ready;
  std::vector<std::string> labels;  // extra label keys (value "")
};

model::Node MakeNode(const NodeSpec& spec) {
  model::Node node;
  if (!spec.zone.empty()) {
    node.metadata.labels[std::string(model::kLabelTopologyZone)] = spec.zone;
  }
  for (const std::string& key : spec.labels) {
    node.metadata.labels[key] = "";
  }
  if (spec.cpu) {
    node.status.allocatable["cpu"] = *spec.cpu;
  }
  node.status.conditions = {model::PodCondition{"Ready", spec.ready, {}, "", ""}};
  return node;
}

std::vector<model::Node> MakeNodes(const std::vector<NodeSpec>& specs) {
  std::vector<model::Node> nodes;
  nodes.reserve(specs.size());
  for (const NodeSpec& spec : specs) {
    nodes.push_back(MakeNode(spec));
  }
  return nodes;
}

// Scenario 36 (TestSetNodes): ratios are allocatable-CPU shares; control-plane and unready nodes
// are ignored; one zone, no nodes, a zoneless node or a node without CPU are insufficient.
TEST(TopologyCacheTest, Scenario36_SetNodes) {
  const std::string control_plane(model::kLabelNodeRoleControlPlane);
  const std::string master(model::kLabelNodeRoleMaster);
  struct Case {
    std::string_view name;
    std::vector<NodeSpec> nodes;
    bool want_sufficient;
    std::map<std::string, double> want_ratios;
    std::map<std::string, std::int64_t> want_cpu;
  };
  const Case cases[] = {
      {"empty", {}, false, {}, {}},
      {"single node", {{"zone-a", "1000m"}}, false, {}, {}},
      {"single zone", {{"zone-a", "1000m"}, {"zone-a", "1000m"}}, false, {}, {}},
      {"2 zones",
       {{"zone-a", "1000m"}, {"zone-b", "1000m"}},
       true,
       {{"zone-a", 0.5}, {"zone-b", 0.5}},
       {{"zone-a", 1000}, {"zone-b", 1000}}},
      {"2 zones, unready node in 1",
       {{"zone-a", "1000m", "False"}, {"zone-b", "1000m"}},
       false,
       {},
       {}},
      {"2 zones, control plane node in 1",
       {{"zone-a", "1000m"}, {"zone-b", "1000m", "True", {control_plane}}},
       false,
       {},
       {}},
      {"2 zones, unready node in 1 of 2",
       {{"zone-a", "1000m"}, {"zone-b", "1000m"}, {"zone-b", "1000m", "False"}},
       true,
       {{"zone-a", 0.5}, {"zone-b", 0.5}},
       {{"zone-a", 1000}, {"zone-b", 1000}}},
      {"master node ignored",
       {{"zone-a", "1000m"}, {"zone-b", "1000m"}, {"zone-b", "1000m", "True", {master}}},
       true,
       {{"zone-a", 0.5}, {"zone-b", 0.5}},
       {{"zone-a", 1000}, {"zone-b", 1000}}},
      {"3 zones, 4 nodes in 1, 2 nodes in 1, 1 node in 1",
       {{"zone-a", "1000m"},
        {"zone-a", "1000m"},
        {"zone-a", "1000m"},
        {"zone-a", "2"},
        {"zone-b", "3000m"},
        {"zone-b", "1.5"},
        {"zone-c", "500m"}},
       true,
       {{"zone-a", 0.5}, {"zone-b", 0.45}, {"zone-c", 0.05}},
       {{"zone-a", 5000}, {"zone-b", 4500}, {"zone-c", 500}}},
      {"node without zone", {{"zone-a", "1"}, {"zone-b", "1"}, {"", "1"}}, false, {}, {}},
      {"node without cpu",
       {{"zone-a", "1"}, {"zone-b", "1"}, {"zone-b", std::nullopt}},
       false,
       {},
       {}},
      {"node with zero cpu", {{"zone-a", "1"}, {"zone-b", "1"}, {"zone-b", "0"}}, false, {}, {}},
      {"unparseable cpu counts as zero", {{"zone-a", "1"}, {"zone-b", "lots"}}, false, {}, {}},
      {"node missing Ready is ignored",
       {{"zone-a", "1"}, {"zone-b", "1"}, {"", "1", "Unknown"}},
       true,
       {{"zone-a", 0.5}, {"zone-b", 0.5}},
       {{"zone-a", 1000}, {"zone-b", 1000}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    TopologyCache cache;
    const std::vector<model::Node> nodes = MakeNodes(c.nodes);
    cache.SetNodes(nodes);
    EXPECT_EQ(cache.SufficientNodeInfo(), c.want_sufficient);
    EXPECT_EQ(cache.ZoneRatios(), c.want_ratios);  // exact, as upstream's test compares
    EXPECT_EQ(cache.CpuByZone(), c.want_cpu);
  }
}

// A later SetNodes with insufficient information clears earlier ratios; the pointer overload
// behaves the same.
TEST(TopologyCacheTest, SetNodesReplacesRatios) {
  TopologyCache cache;
  const std::vector<model::Node> nodes = MakeNodes({{"zone-a", "1"}, {"zone-b", "3"}});
  std::vector<const model::Node*> pointers = {nodes.data(), nodes.data() + 1};
  cache.SetNodes(std::span<const model::Node* const>(pointers));
  EXPECT_EQ(cache.ZoneRatios(),
            (std::map<std::string, double>{{"zone-a", 0.25}, {"zone-b", 0.75}}));
  pointers.pop_back();
  cache.SetNodes(std::span<const model::Node* const>(pointers));
  EXPECT_TRUE(cache.ZoneRatios().empty());
  EXPECT_FALSE(cache.SufficientNodeInfo());
}

// Scenario 35 (Test_getGivingAndReceivingZones), upstream's table.
TEST(TopologyCacheTest, Scenario35_GetGivingAndReceivingZones) {
  using Counts = std::map<std::string, std::int64_t>;
  const auto desired = [](double a, double b, double c) {
    return std::map<std::string, ZoneAllocation>{
        {"zone-a", {0, 0, a}}, {"zone-b", {0, 0, b}}, {"zone-c", {0, 0, c}}};
  };
  struct Case {
    std::string_view name;
    std::map<std::string, ZoneAllocation> allocations;
    Counts allocated;
    Counts want_giving;
    Counts want_receiving;
  };
  const Case cases[] = {
      {"empty", {}, {}, {}, {}},
      {"no rebalancing needed",
       desired(1.2, 1.1, 1.0),
       {{"zone-a", 1}, {"zone-b", 1}, {"zone-c", 1}},
       {},
       {}},
      {"same zone preferred over a slightly better spread",
       desired(5.1, 5.1, 5.8),
       {{"zone-a", 16}},
       {{"zone-a", 10}},
       {{"zone-b", 5}, {"zone-c", 5}}},
      {"two zones needing < 1: the neediest receives",
       desired(5.0, 5.6, 5.4),
       {{"zone-a", 16}},
       {{"zone-a", 11}},
       {{"zone-b", 6}, {"zone-c", 5}}},
      {"two zones with extra: the richest gives",
       desired(5.0, 5.6, 5.4),
       {{"zone-b", 8}, {"zone-c", 8}},
       {{"zone-b", 2}, {"zone-c", 3}},
       {{"zone-a", 5}}},
      {"more allocated than allocations",
       desired(5.0, 5.0, 5.0),
       {{"zone-a", 6}, {"zone-b", 6}, {"zone-c", 6}},
       {},
       {}},
      {"negative allocations",
       desired(-5.0, -5.0, -5.0),
       {{"zone-a", 6}, {"zone-b", 6}, {"zone-c", 6}},
       {},
       {}},
      {"negative allocated",
       desired(5.0, 5.0, 5.0),
       {{"zone-a", -4}, {"zone-b", -3}, {"zone-c", -2}},
       {},
       {}},
      {"negative for one zone",
       desired(5.0, 5.0, 5.0),
       {{"zone-a", -40}, {"zone-b", 20}, {"zone-c", 20}},
       {{"zone-b", 15}, {"zone-c", 15}},
       {{"zone-a", 30}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const internal::GivingAndReceiving got =
        internal::GetGivingAndReceivingZones(c.allocations, c.allocated);
    EXPECT_EQ(got.giving, c.want_giving);
    EXPECT_EQ(got.receiving, c.want_receiving);
  }
}

// upstream getAllocations: minimum = ceil(desired / 1.2), desired raised to the minimum, maximum =
// minimum + N - sum of minimums.
TEST(TopologyCacheTest, GetAllocations) {
  const internal::AllocationResult result =
      internal::GetAllocations({{"zone-a", 0.35}, {"zone-b", 0.35}, {"zone-c", 0.30}}, 10);
  EXPECT_EQ(result.error, "");
  EXPECT_EQ(result.allocations,
            (std::map<std::string, ZoneAllocation>{
                {"zone-a", {3, 4, 3.5}}, {"zone-b", {3, 4, 3.5}}, {"zone-c", {3, 4, 3.0}}}));
  // A tiny share still needs one endpoint: desired is raised to the minimum.
  const internal::AllocationResult tiny =
      internal::GetAllocations({{"zone-a", 0.95}, {"zone-b", 0.05}}, 10);
  EXPECT_EQ(tiny.allocations.at("zone-b"), (ZoneAllocation{1, 2, 1.0}));
  EXPECT_EQ(tiny.allocations.at("zone-a"), (ZoneAllocation{8, 9, 9.5}));
  EXPECT_EQ(internal::GetAllocations({{"zone-a", 0.5}, {"zone-b", 0.5}}, 1).error,
            "Insufficient number of endpoints (1 endpoints, 2 zones)");
}

// upstream serviceOverloaded: every zone with a CPU share needs at least ceil(total*ratio/1.2).
TEST(TopologyCacheTest, ServiceOverloaded) {
  const std::map<std::string, double> ratios = {{"zone-a", 0.5}, {"zone-b", 0.5}};
  EXPECT_FALSE(internal::ServiceOverloaded({}, ratios));
  EXPECT_TRUE(internal::ServiceOverloaded({{"zone-a", 1}}, {}));
  EXPECT_TRUE(internal::ServiceOverloaded({{"zone-a", 2}}, ratios));  // zone-b unhinted
  EXPECT_FALSE(internal::ServiceOverloaded({{"zone-a", 5}, {"zone-b", 5}}, ratios));
  EXPECT_FALSE(internal::ServiceOverloaded({{"zone-a", 6}, {"zone-b", 5}}, ratios));  // min 5
  EXPECT_TRUE(internal::ServiceOverloaded({{"zone-a", 6}, {"zone-b", 4}}, ratios));
  EXPECT_TRUE(internal::ServiceOverloaded({{"zone-a", 7}, {"zone-b", 3}}, ratios));
}

std::vector<model::Node> TwoEvenZones() { return MakeNodes({{"zone-a", "1"}, {"zone-b", "1"}}); }

// Snapshot hands the planner the ratios and the address types hinted before; Apply records or
// drops per address type; RemoveService forgets.
TEST(TopologyCacheTest, SnapshotApplyAndRemove) {
  TopologyCache cache;
  cache.SetNodes(TwoEvenZones());
  TopologyInput input = cache.Snapshot("ns/svc");
  EXPECT_EQ(input.zone_ratios, (std::map<std::string, double>{{"zone-a", 0.5}, {"zone-b", 0.5}}));
  EXPECT_TRUE(input.populated_address_types.empty());
  EXPECT_FALSE(cache.HasPopulatedHints("ns/svc"));

  cache.Apply("ns/svc", {TopologyOutcome{"IPv4", true, {{"zone-a", 1}, {"zone-b", 1}}},
                         TopologyOutcome{"IPv6", true, {{"zone-a", 2}, {"zone-b", 2}}}});
  EXPECT_TRUE(cache.HasPopulatedHints("ns/svc"));
  EXPECT_EQ(cache.Snapshot("ns/svc").populated_address_types,
            (std::set<std::string>{"IPv4", "IPv6"}));
  EXPECT_TRUE(cache.Snapshot("ns/other").populated_address_types.empty());

  cache.Apply("ns/svc", {TopologyOutcome{"IPv6", false, {}}});
  EXPECT_EQ(cache.Snapshot("ns/svc").populated_address_types, std::set<std::string>{"IPv4"});
  cache.Apply("ns/svc", {TopologyOutcome{"IPv4", false, {}}});
  EXPECT_FALSE(cache.HasPopulatedHints("ns/svc"));

  cache.Apply("ns/svc", {TopologyOutcome{"IPv4", true, {{"zone-a", 1}}}});
  cache.RemoveService("ns/svc");
  EXPECT_FALSE(cache.HasPopulatedHints("ns/svc"));
  cache.RemoveService("ns/never-seen");  // harmless
}

// GetOverloadedServices after a node change: sorted, and only Services whose hints no longer fit
// the new ratios (or any hinted Service once ratios are unknown).
TEST(TopologyCacheTest, GetOverloadedServices) {
  TopologyCache cache;
  cache.SetNodes(TwoEvenZones());
  cache.Apply("ns/balanced", {TopologyOutcome{"IPv4", true, {{"zone-a", 5}, {"zone-b", 5}}}});
  cache.Apply("ns/skewed", {TopologyOutcome{"IPv4", true, {{"zone-a", 9}, {"zone-b", 1}}}});
  cache.Apply("ns/dual", {TopologyOutcome{"IPv4", true, {{"zone-a", 5}, {"zone-b", 5}}},
                          TopologyOutcome{"IPv6", true, {{"zone-a", 10}}}});
  EXPECT_EQ(cache.GetOverloadedServices(), (std::vector<std::string>{"ns/dual", "ns/skewed"}));

  cache.SetNodes(MakeNodes({{"zone-a", "1"}}));  // insufficient now
  EXPECT_EQ(cache.GetOverloadedServices(),
            (std::vector<std::string>{"ns/balanced", "ns/dual", "ns/skewed"}));
}

// Concurrent SetNodes, Snapshot and Apply are safe (run under TSan/ASan to mean something).
TEST(TopologyCacheTest, ConcurrentUse) {
  TopologyCache cache;
  const std::vector<model::Node> nodes = TwoEvenZones();
  std::thread writer([&] {
    for (int i = 0; i < 200; ++i) {
      cache.SetNodes(nodes);
    }
  });
  std::thread planner([&] {
    for (int i = 0; i < 200; ++i) {
      TopologyInput input = cache.Snapshot("ns/svc");
      cache.Apply("ns/svc", {TopologyOutcome{"IPv4", !input.zone_ratios.empty(), {{"zone-a", 1}}}});
      (void)cache.GetOverloadedServices();
    }
  });
  writer.join();
  planner.join();
  EXPECT_EQ(cache.ZoneRatios().size(), 2U);
}

}  // namespace
}  // namespace slicewright::reconcile

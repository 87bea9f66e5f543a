// Spec §16 scenarios that need the whole reconcile core: Service + Pods + Nodes through
// DesiredFromService, the planner, the hints stage, the topology and metrics caches.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "slicewright/model/core.h"
#include "slicewright/reconcile/metrics_cache.h"
#include "slicewright/reconcile/planner.h"
#include "slicewright/reconcile/pod_source.h"
#include "slicewright/reconcile/render.h"
#include "slicewright/reconcile/topology_cache.h"

#include "reconcile/planner_test_util.h"

namespace slicewright::reconcile {
namespace {

using testing::ApplyPlan;
using testing::Lengths;
using testing::PodIp;

model::Service FooService() {
  model::Service service;
  service.metadata.name = "foo";
  service.metadata.namespace_ = "test";
  service.metadata.uid = "test-foo";
  service.spec.selector = model::StringMap{{"foo", "bar"}};
  service.spec.ip_families = {"IPv4"};
  model::ServicePort port;
  port.name = "foo";
  port.port = 80;
  port.target_port = model::IntOrString::FromInt(80);
  service.spec.ports = {port};
  return service;
}

model::Pod FooPod(int i, bool ready = true, std::string node = "node-1") {
  model::Pod pod;
  pod.metadata.name = "pod" + std::to_string(i);
  pod.metadata.namespace_ = "test";
  pod.metadata.uid = "uid-pod" + std::to_string(i);
  pod.metadata.labels = {{"foo", "bar"}};
  pod.spec.node_name = std::move(node);
  pod.status.phase = "Running";
  pod.status.pod_ip = PodIp(i);
  pod.status.pod_ips = {PodIp(i)};
  pod.status.conditions = {{"Ready", ready ? "True" : "False", {}, "", ""}};
  return pod;
}

model::Node MakeNode(std::string name, std::string zone = "", std::string cpu = "100m") {
  model::Node node;
  node.metadata.name = std::move(name);
  if (!zone.empty()) node.metadata.labels = {{"topology.kubernetes.io/zone", std::move(zone)}};
  node.status.allocatable = {{"cpu", std::move(cpu)}};
  node.status.conditions = {{"Ready", "True", {}, "", ""}};
  return node;
}

// Derives and plans in one go, as the controller's sync does.
struct Harness {
  std::vector<model::Node> nodes = {MakeNode("node-1")};
  PlanOptions options;
  ServiceSourceOptions source;

  DesiredEndpoints Desired(const model::Service& service, const std::vector<model::Pod>& pods) {
    std::vector<const model::Pod*> pointers;
    for (const model::Pod& pod : pods) pointers.push_back(&pod);
    auto lookup = [this](std::string_view name) -> const model::Node* {
      for (const model::Node& node : nodes) {
        if (node.metadata.name == name) return &node;
      }
      return nullptr;
    };
    return DesiredFromService(service, pointers, lookup, source);
  }

  Plan Run(const model::Service& service, const std::vector<model::Pod>& pods,
           const std::vector<model::EndpointSlice>& existing = {}) {
    return PlanSlices(Desired(service, pods), existing, options);
  }
};

std::vector<model::Pod> FooPods(int count, int unready_every = 0) {
  std::vector<model::Pod> pods;
  for (int i = 0; i < count; ++i)
    pods.push_back(FooPod(i, unready_every == 0 || i % unready_every != 0));
  return pods;
}

// Hints of every endpoint written by the plan, counted by zone ("zone->hint").
std::map<std::string, int> HintCounts(const Plan& plan, bool nodes = false) {
  std::map<std::string, int> counts;
  for (const SliceAction& action : plan.actions) {
    for (const model::Endpoint& endpoint : action.slice.endpoints) {
      if (!endpoint.hints) continue;
      for (const std::string& hint :
           nodes ? endpoint.hints->for_nodes : endpoint.hints->for_zones) {
        ++counts[hint];
      }
    }
  }
  return counts;
}

int CrossZoneHints(const Plan& plan) {
  int cross = 0;
  for (const SliceAction& action : plan.actions) {
    for (const model::Endpoint& endpoint : action.slice.endpoints) {
      if (!endpoint.hints || endpoint.hints->for_zones.empty()) continue;
      if (endpoint.hints->for_zones[0] != endpoint.zone.value_or("")) ++cross;
    }
  }
  return cross;
}

// Scenario 1 (metrics part): the placeholder counts as one desired and one actual slice.
TEST(ReconcilerScenarioTest, Scenario01_EmptyServiceMetrics) {
  Harness harness;
  const Plan plan = harness.Run(FooService(), {});
  ASSERT_EQ(plan.actions.size(), 1U);
  MetricsCache cache(MetricsCache::Options{});
  cache.UpdateService("test/foo", plan.stats.groups);
  EXPECT_EQ(cache.Totals(), (MetricsTotals{0, 1, 1}));
}

// Scenario 12: a named target port resolving to five numbers makes five slices of 60.
TEST(ReconcilerScenarioTest, Scenario12_NamedTargetPorts) {
  model::Service service = FooService();
  service.spec.ports[0].name = "";
  service.spec.ports[0].target_port = model::IntOrString::FromString("http");
  std::vector<model::Pod> pods = FooPods(300);
  for (int i = 0; i < 300; ++i) {
    pods[static_cast<std::size_t>(i)].spec.containers = {
        model::Container{"app", "", {{"http", 8080 + i % 5, "TCP", 0, ""}}, {}}};
  }
  Harness harness;
  const Plan plan = harness.Run(service, pods);
  ASSERT_EQ(plan.Count(Operation::kCreate), 5U);
  std::vector<int> ports;
  for (const SliceAction& action : plan.actions) {
    EXPECT_EQ(action.slice.endpoints.size(), 60U);
    ASSERT_EQ(action.slice.ports.size(), 1U);
    EXPECT_EQ(action.slice.ports[0].name, "");
    EXPECT_EQ(action.slice.ports[0].protocol, "TCP");
    ports.push_back(*action.slice.ports[0].port);
  }
  std::sort(ports.begin(), ports.end());
  EXPECT_EQ(ports, (std::vector<int>{8080, 8081, 8082, 8083, 8084}));
}

// Scenario 14: publishNotReadyAddresses makes every endpoint ready.
TEST(ReconcilerScenarioTest, Scenario14_PublishNotReadyAddresses) {
  model::Service service = FooService();
  service.spec.publish_not_ready_addresses = true;
  Harness harness;
  const Plan plan = harness.Run(service, FooPods(50, 3));
  ASSERT_EQ(plan.actions.size(), 1U);
  ASSERT_EQ(plan.actions[0].slice.endpoints.size(), 50U);
  for (const model::Endpoint& endpoint : plan.actions[0].slice.endpoints) {
    EXPECT_TRUE(endpoint.conditions.ready.value());
  }
}

// Scenario 17: gauges after two pods with trafficDistribution PreferClose.
TEST(ReconcilerScenarioTest, Scenario17_Gauges) {
  model::Service service = FooService();
  service.spec.traffic_distribution = "PreferClose";
  Harness harness;
  const Plan plan = harness.Run(service, FooPods(2));
  MetricsCache cache(MetricsCache::Options{});
  cache.UpdateService("test/foo", plan.stats.groups);
  cache.UpdateTrafficDistribution("test/foo", plan.stats.traffic_distribution_label);
  EXPECT_EQ(cache.Totals(), (MetricsTotals{2, 1, 1}));
  EXPECT_EQ(cache.ServicesByTrafficDistribution().at("PreferClose"), 1);
}

// Scenario 20: reserved labels on the Service are ignored; new slices get ours.
TEST(ReconcilerScenarioTest, Scenario20_ReservedServiceLabels) {
  model::Service service = FooService();
  service.metadata.labels = {{"kubernetes.io/service-name", "bad"},
                             {"endpointslice.kubernetes.io/managed-by", "actor"},
                             {"service.kubernetes.io/headless", "invalid"}};
  service.spec.cluster_ip = "1.1.1.1";
  Harness harness;
  const Plan plan = harness.Run(service, FooPods(1));
  ASSERT_EQ(plan.actions.size(), 1U);
  const model::StringMap want = {
      {"kubernetes.io/service-name", "foo"},
      {"endpointslice.kubernetes.io/managed-by", "endpointslice-controller.k8s.io"}};
  EXPECT_EQ(plan.actions[0].slice.metadata.labels, want);
  std::vector<model::EndpointSlice> cluster;
  ApplyPlan(plan, cluster);
  EXPECT_TRUE(harness.Run(service, FooPods(1), cluster).empty());
}

// Scenario 22: new slices carry only the trigger-time annotation and one controller reference.
TEST(ReconcilerScenarioTest, Scenario22_NewSliceMetadata) {
  model::Service service = FooService();
  service.metadata.annotations = {{"foo", "bar"}};
  Harness harness;
  harness.source.trigger_time = model::Time::FromUnixSeconds(1546300801);
  const Plan plan = harness.Run(service, FooPods(1));
  ASSERT_EQ(plan.actions.size(), 1U);
  const model::EndpointSlice& slice = plan.actions[0].slice;
  EXPECT_EQ(slice.metadata.annotations,
            (model::StringMap{
                {"endpoints.kubernetes.io/last-change-trigger-time", "2019-01-01T00:00:01Z"}}));
  EXPECT_EQ(slice.metadata.generate_name, "foo-");
  EXPECT_EQ(slice.metadata.namespace_, "test");
  ASSERT_EQ(slice.metadata.owner_references.size(), 1U);
  EXPECT_EQ(slice.metadata.owner_references[0],
            (model::OwnerReference{"v1", "Service", "foo", "test-foo", true, true}));
}

// Scenario 24: dual-stack pods publish one canonical address per family and slice.
TEST(ReconcilerScenarioTest, Scenario24_DualStackPod) {
  model::Pod pod = FooPod(0);
  pod.spec.hostname = "example-hostname";
  pod.status.pod_ips = {"1.2.3.4", "1234::5678:0000:0000:9abc:def0"};
  struct Case {
    std::vector<std::string> families;
    std::vector<std::string> addresses;
  };
  const Case cases[] = {{{"IPv4"}, {"1.2.3.4"}},
                        {{"IPv6"}, {"1234::5678:0:0:9abc:def0"}},
                        {{"IPv4", "IPv6"}, {"1.2.3.4", "1234::5678:0:0:9abc:def0"}}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.families.size());
    model::Service service = FooService();
    service.spec.ip_families = c.families;
    service.spec.cluster_ip = "1.1.1.1";
    Harness harness;
    harness.source.trigger_time = model::Time{1546300801500000000};
    const Plan plan = harness.Run(service, {pod});
    ASSERT_EQ(plan.actions.size(), c.addresses.size());
    for (std::size_t i = 0; i < c.addresses.size(); ++i) {
      const model::EndpointSlice& slice = plan.actions[i].slice;
      ASSERT_EQ(slice.endpoints.size(), 1U);
      EXPECT_EQ(slice.endpoints[0].addresses, model::EndpointAddresses{c.addresses[i]});
      EXPECT_FALSE(slice.endpoints[0].hostname.has_value());  // no subdomain
      EXPECT_EQ(slice.metadata.annotations.at("endpoints.kubernetes.io/last-change-trigger-time"),
                "2019-01-01T00:00:01.5Z");
      EXPECT_FALSE(slice.metadata.labels.contains("service.kubernetes.io/headless"));
    }
  }
}

// Scenario 27: pods on missing nodes are skipped with a retry unless publishNotReadyAddresses.
TEST(ReconcilerScenarioTest, Scenario27_PodOnMissingNode) {
  const std::vector<model::Pod> pods = {FooPod(0, true, "node-0"), FooPod(1, true, "node-1")};
  model::Service service = FooService();

  Harness only_node0;
  only_node0.nodes = {MakeNode("node-0")};
  Plan plan = only_node0.Run(service, pods);
  ASSERT_EQ(plan.actions.size(), 1U);
  EXPECT_EQ(plan.actions[0].slice.endpoints.size(), 1U);
  EXPECT_TRUE(plan.NeedsRetry());
  ASSERT_FALSE(plan.diagnostics.empty());
  EXPECT_EQ(plan.diagnostics[0].message,
            "skipping Pod pod1 for Service test/foo: Node node-1 Not Found");

  service.spec.publish_not_ready_addresses = true;
  plan = only_node0.Run(service, pods);
  ASSERT_EQ(plan.actions.size(), 1U);
  EXPECT_EQ(plan.actions[0].slice.endpoints.size(), 2U);
  EXPECT_FALSE(plan.NeedsRetry());

  // A slice holding both endpoints exists.
  Harness both;
  both.nodes = {MakeNode("node-0"), MakeNode("node-1")};
  std::vector<model::EndpointSlice> cluster;
  ApplyPlan(both.Run(FooService(), pods), cluster);
  ASSERT_EQ(cluster.size(), 1U);

  plan = only_node0.Run(FooService(), pods, cluster);
  ASSERT_EQ(plan.actions.size(), 1U);
  EXPECT_EQ(plan.actions[0].operation, Operation::kUpdate);
  EXPECT_EQ(plan.stats.removed(), 1);
  EXPECT_TRUE(plan.NeedsRetry());

  Harness no_nodes;
  no_nodes.nodes = {};
  plan = no_nodes.Run(service, pods, cluster);  // publishNotReadyAddresses
  EXPECT_TRUE(plan.empty()) << Render(plan);
  EXPECT_FALSE(plan.NeedsRetry());

  plan = no_nodes.Run(FooService(), pods, cluster);
  ASSERT_EQ(plan.actions.size(), 1U) << Render(plan);
  EXPECT_EQ(plan.actions[0].operation, Operation::kUpdate);
  EXPECT_TRUE(plan.actions[0].slice.endpoints.empty());
  EXPECT_EQ(plan.stats.removed(), 2);
  EXPECT_TRUE(plan.NeedsRetry());
  MetricsCache cache(MetricsCache::Options{});
  cache.UpdateService("test/foo", plan.stats.groups);
  EXPECT_EQ(cache.Totals().desired_endpoints, 0);
  EXPECT_EQ(cache.Totals().actual_slices, 1);
}

// The pods of the hints scenarios: node-0 zone-a: pod0; node-1 zone-b: pods 1-3; node-2 zone-c:
// 4-5.
std::vector<model::Pod> ZonedPods() {
  std::vector<model::Pod> pods;
  for (int i = 0; i < 6; ++i) {
    pods.push_back(FooPod(i, true, i == 0 ? "node-0" : (i <= 3 ? "node-1" : "node-2")));
  }
  return pods;
}

std::vector<model::Node> ZonedNodes() {
  return {MakeNode("node-0", "zone-a"), MakeNode("node-1", "zone-b"), MakeNode("node-2", "zone-c")};
}

// The zoned pods planned with a topology cache fed the zoned nodes, as kube-controller-manager
// runs.
Plan RunZonedWithTopologyCache(const model::Service& service) {
  Harness harness;
  harness.nodes = ZonedNodes();
  TopologyCache topology;
  topology.SetNodes(harness.nodes);
  const TopologyInput input = topology.Snapshot("test/foo");
  harness.options.topology = &input;
  return harness.Run(service, ZonedPods());
}

// Scenario 29: PreferClose hints each endpoint to its own zone.
TEST(ReconcilerScenarioTest, Scenario29_TrafficDistributionPreferClose) {
  model::Service service = FooService();
  service.spec.traffic_distribution = "PreferClose";
  service.metadata.annotations = {{"service.kubernetes.io/topology-mode", "Disabled"}};
  const Plan plan = RunZonedWithTopologyCache(service);
  EXPECT_EQ(HintCounts(plan),
            (std::map<std::string, int>{{"zone-a", 1}, {"zone-b", 3}, {"zone-c", 2}}));
  EXPECT_EQ(CrossZoneHints(plan), 0);
  EXPECT_EQ(plan.stats.topology_label, "Disabled");
  EXPECT_EQ(plan.stats.traffic_distribution_label, "PreferClose");
  EXPECT_EQ(plan.actions.size(), 1U);
}

// Scenario 30: with the topology annotation Auto the topology cache wins over trafficDistribution.
TEST(ReconcilerScenarioTest, Scenario30_TopologyAnnotationWins) {
  model::Service service = FooService();
  service.spec.traffic_distribution = "PreferClose";
  service.metadata.annotations = {{"service.kubernetes.io/topology-mode", "Auto"}};
  const Plan plan = RunZonedWithTopologyCache(service);
  EXPECT_EQ(HintCounts(plan),
            (std::map<std::string, int>{{"zone-a", 2}, {"zone-b", 2}, {"zone-c", 2}}));
  EXPECT_EQ(CrossZoneHints(plan), 1);
  EXPECT_EQ(plan.stats.topology_label, "Auto");
  EXPECT_EQ(plan.stats.traffic_distribution_label, "");
}

// Scenario 31: PreferSameNode adds node hints when enabled; disabled, PreferSameZone gives none.
TEST(ReconcilerScenarioTest, Scenario31_PreferSameNode) {
  model::Service service = FooService();
  service.spec.traffic_distribution = "PreferSameNode";
  Harness harness;
  harness.nodes = ZonedNodes();
  Plan plan = harness.Run(service, ZonedPods());
  EXPECT_EQ(HintCounts(plan),
            (std::map<std::string, int>{{"zone-a", 1}, {"zone-b", 3}, {"zone-c", 2}}));
  EXPECT_EQ(HintCounts(plan, true),
            (std::map<std::string, int>{{"node-0", 1}, {"node-1", 3}, {"node-2", 2}}));

  service.spec.traffic_distribution = "PreferSameZone";
  harness.options.prefer_same_traffic_distribution = false;
  plan = harness.Run(service, ZonedPods());
  EXPECT_TRUE(HintCounts(plan).empty());
  EXPECT_EQ(plan.stats.traffic_distribution_label, "");
}

// Scenario 33: topology-aware hints through the annotation with 3 zones x 10 nodes.
TEST(ReconcilerScenarioTest, Scenario33_TopologyAnnotation) {
  Harness harness;
  harness.nodes.clear();
  const char* zones[] = {"zone-a", "zone-b", "zone-c"};
  for (int i = 0; i < 30; ++i) {
    harness.nodes.push_back(MakeNode("node-" + std::to_string(i), zones[i / 10]));
  }
  std::vector<model::Pod> pods;
  for (int i = 27; i < 30; ++i) pods.push_back(FooPod(i, true, "node-" + std::to_string(i)));
  model::Service service = FooService();
  std::vector<model::EndpointSlice> cluster;
  ApplyPlan(harness.Run(service, pods), cluster);  // one slice, all endpoints in zone-c

  TopologyCache topology;
  topology.SetNodes(harness.nodes);
  const TopologyInput input = topology.Snapshot("test/foo");

  // Cache disabled: no hints, no writes.
  service.metadata.annotations = {{"service.kubernetes.io/topology-mode", "auto"}};
  EXPECT_TRUE(harness.Run(service, pods, cluster).empty());

  // Cache enabled: one update with one hint per zone, two of them cross-zone.
  harness.options.topology = &input;
  Plan plan = harness.Run(service, pods, cluster);
  ASSERT_EQ(plan.actions.size(), 1U) << Render(plan);
  EXPECT_EQ(plan.actions[0].operation, Operation::kUpdate);
  EXPECT_EQ(HintCounts(plan),
            (std::map<std::string, int>{{"zone-a", 1}, {"zone-b", 1}, {"zone-c", 1}}));
  EXPECT_EQ(CrossZoneHints(plan), 2);

  // Annotation disabled: no hints and nothing to write.
  service.metadata.annotations = {{"service.kubernetes.io/topology-mode", "disabled"}};
  plan = harness.Run(service, pods, cluster);
  EXPECT_TRUE(plan.empty()) << Render(plan);
}

// Scenario 33 (threshold part): four endpoints in two of three zones cannot be allocated.
TEST(ReconcilerScenarioTest, Scenario33_TopologyAllocationBeyondThreshold) {
  Harness harness;
  harness.nodes.clear();
  const char* zones[] = {"zone-a", "zone-b", "zone-c"};
  for (int i = 0; i < 30; ++i) {
    harness.nodes.push_back(MakeNode("node-" + std::to_string(i), zones[i / 10]));
  }
  std::vector<model::Pod> pods = {FooPod(0, true, "node-0"), FooPod(1, true, "node-1"),
                                  FooPod(2, true, "node-20"), FooPod(3, true, "node-21")};
  model::Service service = FooService();
  std::vector<model::EndpointSlice> cluster;
  ApplyPlan(harness.Run(service, pods), cluster);
  TopologyCache topology;
  topology.SetNodes(harness.nodes);
  const TopologyInput input = topology.Snapshot("test/foo");
  harness.options.topology = &input;
  service.metadata.annotations = {{"service.kubernetes.io/topology-mode", "auto"}};
  const Plan plan = harness.Run(service, pods, cluster);
  EXPECT_TRUE(plan.empty()) << Render(plan);
  EXPECT_TRUE(HintCounts(plan).empty());
}

}  // namespace
}  // namespace slicewright::reconcile

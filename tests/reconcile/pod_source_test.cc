#include "slicewright/reconcile/pod_source.h"

#include <algorithm>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "slicewright/model/compact_pod.h"
#include "slicewright/model/core.h"
#include "slicewright/model/discovery.h"
#include "slicewright/model/well_known.h"
#include "slicewright/net/ip.h"
#include "slicewright/reconcile/planner.h"

#include "reconcile/planner_test_util.h"
#include "reconcile/reference_planner.h"

namespace slicewright::reconcile {
namespace {

// ---- builders (spec §16 conventions: namespace test, Service foo, pods on node-1) ----

model::Service FooService() {
  model::Service service;
  service.metadata.namespace_ = "test";
  service.metadata.name = "foo";
  service.metadata.uid = "test-foo";
  service.spec.selector = model::StringMap{{"foo", "bar"}};
  service.spec.ip_families = {"IPv4"};
  model::ServicePort port;
  port.name = "foo";
  port.protocol = "TCP";
  port.port = 80;
  port.target_port = model::IntOrString::FromInt(80);
  service.spec.ports = {port};
  return service;
}

std::string PodIpv4(int i) {
  const int n = i + 4;
  return "1.2." + std::to_string(3 + n / 256) + "." + std::to_string(n % 256);
}

model::Pod MakePod(int i, bool ready = true, std::vector<std::string> ips = {}) {
  model::Pod pod;
  pod.metadata.namespace_ = "test";
  pod.metadata.name = "pod" + std::to_string(i);
  pod.metadata.uid = "uid-pod" + std::to_string(i);
  pod.metadata.labels = {{"foo", "bar"}};
  pod.spec.node_name = "node-1";
  pod.status.phase = "Running";
  if (ips.empty()) {
    ips = {PodIpv4(i)};
  }
  pod.status.pod_ip = ips[0];
  pod.status.pod_ips = std::move(ips);
  pod.status.conditions = {model::PodCondition{"Ready", ready ? "True" : "False", {}, "", ""}};
  return pod;
}

model::Node MakeNode(std::string name, const std::string& zone = "") {
  model::Node node;
  node.metadata.name = std::move(name);
  if (!zone.empty()) {
    node.metadata.labels[std::string(model::kLabelTopologyZone)] = zone;
  }
  return node;
}

// Nodes by name for NodeLookup.
struct Nodes {
  std::map<std::string, model::Node, std::less<>> by_name;
  const model::Node* operator()(std::string_view name) const {
    auto it = by_name.find(name);
    return it == by_name.end() ? nullptr : &it->second;
  }
};

Nodes DefaultNodes() {
  Nodes nodes;
  nodes.by_name.emplace("node-1", MakeNode("node-1"));
  return nodes;
}

std::vector<const model::Pod*> Pointers(const std::vector<model::Pod>& pods) {
  std::vector<const model::Pod*> pointers;
  pointers.reserve(pods.size());
  for (const model::Pod& pod : pods) {
    pointers.push_back(&pod);
  }
  return pointers;
}

// `pods` in the compact form the controllers' Pod caches keep them in, with pointers to read them
// in place (DesiredFromService's CompactPod overload).
struct CompactPods {
  explicit CompactPods(const std::vector<model::Pod>& pods) {
    compact.reserve(pods.size());
    for (const model::Pod& pod : pods) {
      pointers.push_back(&compact.emplace_back(model::CompactPod::FromPod(pod, interners)));
    }
  }
  model::PodInterners interners;
  std::vector<model::CompactPod> compact;
  std::vector<const model::CompactPod*> pointers;
};

// The compact form of `pods` derives exactly `want`.
void ExpectSameFromCompactPods(const model::Service& service, const std::vector<model::Pod>& pods,
                               const Nodes& nodes, const ServiceSourceOptions& options,
                               const DesiredEndpoints& want) {
  const CompactPods compact(pods);
  const DesiredEndpoints got = DesiredFromService(service, compact.pointers, nodes, options);
  EXPECT_EQ(got.owner, want.owner);
  EXPECT_EQ(got.address_types, want.address_types);
  EXPECT_EQ(got.labels, want.labels);
  EXPECT_EQ(got.diagnostics, want.diagnostics);
  ASSERT_EQ(got.groups.size(), want.groups.size());
  for (std::size_t g = 0; g < want.groups.size(); ++g) {
    SCOPED_TRACE("compact pods, group " + std::to_string(g));
    EXPECT_EQ(got.groups[g].address_type, want.groups[g].address_type);
    EXPECT_EQ(got.groups[g].ports, want.groups[g].ports);
    EXPECT_EQ(got.groups[g].endpoints, want.groups[g].endpoints);
    EXPECT_EQ(got.groups[g].runs, want.groups[g].runs);
    EXPECT_EQ(got.groups[g].sorted_unique, want.groups[g].sorted_unique);
  }
}

// DesiredFromService over `pods`, checking on the way that their compact form derives the same.
DesiredEndpoints Derive(const model::Service& service, const std::vector<model::Pod>& pods,
                        const Nodes& nodes = DefaultNodes(),
                        const ServiceSourceOptions& options = {}) {
  const std::vector<const model::Pod*> pointers = Pointers(pods);
  DesiredEndpoints desired = DesiredFromService(service, pointers, nodes, options);
  ExpectSameFromCompactPods(service, pods, nodes, options, desired);
  return desired;
}

model::EndpointPort Port(std::string name, int number, std::string protocol = "TCP") {
  return model::EndpointPort{std::move(name), std::move(protocol), number, std::nullopt};
}

std::vector<std::string> Names(const EndpointGroup& group) {
  std::vector<std::string> names;
  for (const model::Endpoint& endpoint : group.endpoints) {
    names.push_back(endpoint.target_ref->name.str());
  }
  return names;
}

// ---- §3.1 address types ----

// Scenario 25: served address types from ipFamilies, else from the ClusterIP family, else both.
TEST(PodSourceTest, Scenario25_SupportedAddressTypes) {
  struct Case {
    std::string_view name;
    std::vector<std::string> ip_families;
    std::string cluster_ip;
    std::vector<std::string> want;
  };
  const Case cases[] = {
      {"v4 from ClusterIP", {}, "10.0.0.10", {"IPv4"}},
      {"v6 from ClusterIP", {}, "2000::1", {"IPv6"}},
      {"dual-stack families", {"IPv6", "IPv4"}, "", {"IPv4", "IPv6"}},
      {"headless without families", {}, "None", {"IPv4", "IPv6"}},
      {"empty ClusterIP without families", {}, "", {"IPv4", "IPv6"}},
      {"families win over ClusterIP", {"IPv6"}, "10.0.0.10", {"IPv6"}},
      {"unknown family falls back", {"IPv5"}, "10.0.0.10", {"IPv4"}},
      {"unparseable ClusterIP counts as IPv4", {}, "not-an-ip", {"IPv4"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    model::Service service = FooService();
    service.spec.ip_families = c.ip_families;
    service.spec.cluster_ip = c.cluster_ip;
    EXPECT_EQ(SupportedAddressTypes(service), c.want);
  }
}

// ---- §3.2 pod filter ----

// Terminal pods and pods without IPs are left out; terminating ones only on request.
TEST(PodSourceTest, ShouldPodBeInEndpoints) {
  struct Case {
    std::string_view name;
    std::string phase;
    std::string pod_ip;
    std::vector<std::string> pod_ips;
    bool terminating;
    bool include_terminating;
    bool want;
  };
  const Case cases[] = {
      {"running", "Running", "1.2.3.4", {"1.2.3.4"}, false, true, true},
      {"failed", "Failed", "1.2.3.4", {"1.2.3.4"}, false, true, false},
      {"succeeded", "Succeeded", "1.2.3.4", {"1.2.3.4"}, false, true, false},
      {"pending with IP", "Pending", "1.2.3.4", {}, false, true, true},
      {"no IPs", "Running", "", {}, false, true, false},
      {"only podIPs", "Running", "", {"1.2.3.4"}, false, true, true},
      {"terminating included", "Running", "1.2.3.4", {"1.2.3.4"}, true, true, true},
      {"terminating excluded", "Running", "1.2.3.4", {"1.2.3.4"}, true, false, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    model::Pod pod = MakePod(0);
    pod.status.phase = c.phase;
    pod.status.pod_ip = c.pod_ip;
    pod.status.pod_ips = c.pod_ips;
    if (c.terminating) {
      pod.metadata.deletion_timestamp = model::Time::FromUnixSeconds(1);
    }
    EXPECT_EQ(ShouldPodBeInEndpoints(pod, c.include_terminating), c.want);
  }
}

// ---- §3.5 ports ----

model::Container ContainerWithPorts(std::vector<model::ContainerPort> ports,
                                    std::optional<std::string> restart_policy = std::nullopt) {
  model::Container container;
  container.name = "c";
  container.ports = std::move(ports);
  container.restart_policy = std::move(restart_policy);
  return container;
}

model::ContainerPort ContainerPort(std::string name, int number, std::string protocol = "TCP") {
  model::ContainerPort port;
  port.name = std::move(name);
  port.container_port = number;
  port.protocol = std::move(protocol);
  return port;
}

// Scenario 26: int target ports as is; named ones by name and protocol, regular containers first,
// then sidecars (restartable init containers) only.
TEST(PodSourceTest, Scenario26_FindPort) {
  struct Case {
    std::string_view name;
    model::IntOrString target;
    std::string protocol;
    std::vector<model::Container> containers;
    std::vector<model::Container> init_containers;
    std::optional<std::int32_t> want;
  };
  const std::vector<model::Container> three_ports = {ContainerWithPorts(
      {ContainerPort("", 11, "UDP"), ContainerPort("p", 22), ContainerPort("q", 33)})};
  const Case cases[] = {
      {"int target", model::IntOrString::FromInt(93), "TCP", {}, {}, 93},
      {"named among several", model::IntOrString::FromString("q"), "TCP", three_ports, {}, 33},
      {"protocol mismatch",
       model::IntOrString::FromString("a"),
       "TCP",
       {ContainerWithPorts({ContainerPort("a", 11, "snmp")})},
       {},
       std::nullopt},
      {"sidecar",
       model::IntOrString::FromString("http"),
       "TCP",
       {},
       {ContainerWithPorts({ContainerPort("http", 8080)}, "Always")},
       8080},
      {"non-restartable init container",
       model::IntOrString::FromString("http"),
       "TCP",
       {},
       {ContainerWithPorts({ContainerPort("http", 8080)})},
       std::nullopt},
      {"init container restartPolicy Never",
       model::IntOrString::FromString("http"),
       "TCP",
       {},
       {ContainerWithPorts({ContainerPort("http", 8080)}, "Never")},
       std::nullopt},
      {"app container wins over sidecar",
       model::IntOrString::FromString("http"),
       "TCP",
       {ContainerWithPorts({ContainerPort("http", 8090)})},
       {ContainerWithPorts({ContainerPort("http", 8080)}, "Always")},
       8090},
      {"first container wins",
       model::IntOrString::FromString("http"),
       "TCP",
       {ContainerWithPorts({ContainerPort("http", 1)}),
        ContainerWithPorts({ContainerPort("http", 2)})},
       {},
       1},
      {"negative port passed through",
       model::IntOrString::FromString("neg"),
       "TCP",
       {ContainerWithPorts({ContainerPort("neg", -1)})},
       {},
       -1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    model::Pod pod = MakePod(0);
    pod.spec.containers = c.containers;
    pod.spec.init_containers = c.init_containers;
    model::ServicePort port;
    port.name = "svc";
    port.protocol = c.protocol;
    port.target_port = c.target;
    EXPECT_EQ(FindPort(pod, port), c.want);
  }
}

// Endpoint ports follow Service port order, keep the Service name and appProtocol, and drop ports
// not found on the pod; a headless Service without ports has none.
TEST(PodSourceTest, EndpointPortsForPod) {
  model::Service service = FooService();
  service.spec.ports[0].app_protocol = "http";
  model::ServicePort named;
  named.name = "named";
  named.protocol = "UDP";
  named.port = 53;
  named.target_port = model::IntOrString::FromString("dns");
  service.spec.ports.push_back(named);
  model::Pod pod = MakePod(0);
  std::vector<model::EndpointPort> ports = EndpointPortsForPod(service, pod);
  model::EndpointPort foo = Port("foo", 80);
  foo.app_protocol = "http";
  EXPECT_EQ(ports, std::vector<model::EndpointPort>{foo});

  pod.spec.containers = {ContainerWithPorts({ContainerPort("dns", 5353, "UDP")})};
  ports = EndpointPortsForPod(service, pod);
  EXPECT_EQ(ports, (std::vector<model::EndpointPort>{foo, Port("named", 5353, "UDP")}));

  model::Service headless = FooService();
  headless.spec.cluster_ip = "None";
  headless.spec.ports.clear();
  EXPECT_TRUE(EndpointPortsForPod(headless, pod).empty());
}

// ---- §3.4 pod -> endpoint ----

// Scenario 23: ready/serving/terminating from the Ready condition, deletionTimestamp and
// publishNotReadyAddresses; all three always set.
TEST(PodSourceTest, Scenario23_PodToEndpointConditions) {
  struct Case {
    std::string_view name;
    bool pod_ready;
    bool terminating;
    bool publish_not_ready;
    bool want_ready;
    bool want_serving;
    bool want_terminating;
  };
  const Case cases[] = {
      {"ready", true, false, false, true, true, false},
      {"unready", false, false, false, false, false, false},
      {"unready, publishNotReadyAddresses", false, false, true, true, false, false},
      {"ready, terminating", true, true, false, false, true, true},
      {"unready, terminating", false, true, false, false, false, true},
      {"ready, terminating, publishNotReadyAddresses", true, true, true, true, true, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    model::Service service = FooService();
    service.spec.publish_not_ready_addresses = c.publish_not_ready;
    model::Pod pod = MakePod(0, c.pod_ready);
    if (c.terminating) {
      pod.metadata.deletion_timestamp = model::Time::FromUnixSeconds(1);
    }
    const model::Node node = MakeNode("node-1");
    const model::Endpoint endpoint = PodToEndpoint(pod, &node, service, "IPv4");
    EXPECT_EQ(endpoint.conditions.ready, c.want_ready);
    EXPECT_EQ(endpoint.conditions.serving, c.want_serving);
    EXPECT_EQ(endpoint.conditions.terminating, c.want_terminating);
  }
}

// A pod without a Ready condition is neither serving nor ready.
TEST(PodSourceTest, MissingReadyConditionIsNotServing) {
  model::Pod pod = MakePod(0);
  pod.status.conditions.clear();
  const model::Endpoint endpoint = PodToEndpoint(pod, nullptr, FooService(), "IPv4");
  EXPECT_EQ(endpoint.conditions, (model::EndpointConditions{false, false, false}));
}

// Scenario 24: hostname (with subdomain == Service name), zone and nodeName are carried over; the
// targetRef names the pod without apiVersion or resourceVersion.
TEST(PodSourceTest, Scenario24_PodToEndpointHostnameZoneNode) {
  model::Pod pod = MakePod(0);
  pod.spec.hostname = "example-hostname";
  pod.spec.subdomain = "foo";
  pod.metadata.resource_version = "42";
  const model::Node node = MakeNode("node-1", "us-central1-a");
  const model::Endpoint endpoint = PodToEndpoint(pod, &node, FooService(), "IPv4");
  model::Endpoint want;
  want.addresses = {"1.2.3.4"};
  want.conditions = {true, true, false};
  want.hostname = "example-hostname";
  want.target_ref = model::ObjectReference{"Pod", "test", "pod0", "uid-pod0", "", "", ""};
  want.node_name = "node-1";
  want.zone = "us-central1-a";
  EXPECT_EQ(endpoint, want);
}

// Hostname needs a non-empty hostname, subdomain == Service name and the same namespace; nodeName
// needs spec.nodeName; zone needs a found node with a non-empty zone label.
TEST(PodSourceTest, HostnameNodeNameAndZoneRules) {
  struct Case {
    std::string_view name;
    std::string hostname;
    std::string subdomain;
    std::string service_namespace;
    std::string node_name;
    std::optional<std::string> node_zone;  // nullopt: node not found
    bool want_hostname;
    bool want_node_name;
    bool want_zone;
  };
  const Case cases[] = {
      {"all set", "h", "foo", "test", "node-1", "zone-a", true, true, true},
      {"no subdomain", "h", "", "test", "node-1", "zone-a", false, true, true},
      {"other subdomain", "h", "bar", "test", "node-1", "zone-a", false, true, true},
      {"other namespace", "h", "foo", "other", "node-1", "zone-a", false, true, true},
      {"empty hostname", "", "foo", "test", "node-1", "zone-a", false, true, true},
      {"no node name", "h", "foo", "test", "", std::nullopt, true, false, false},
      {"node not found", "h", "foo", "test", "node-1", std::nullopt, true, true, false},
      {"empty zone label", "h", "foo", "test", "node-1", "", true, true, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    model::Service service = FooService();
    service.metadata.namespace_ = c.service_namespace;
    model::Pod pod = MakePod(0);
    pod.spec.hostname = c.hostname;
    pod.spec.subdomain = c.subdomain;
    pod.spec.node_name = c.node_name;
    model::Node node = MakeNode("node-1");
    if (c.node_zone) {
      node.metadata.labels[std::string(model::kLabelTopologyZone)] = *c.node_zone;
    }
    const model::Endpoint endpoint =
        PodToEndpoint(pod, c.node_zone ? &node : nullptr, service, "IPv4");
    EXPECT_EQ(endpoint.hostname.has_value(), c.want_hostname);
    EXPECT_EQ(endpoint.node_name.has_value(), c.want_node_name);
    EXPECT_EQ(endpoint.zone.has_value(), c.want_zone);
  }
}

// Scenario 24: dual-stack pod IPs are split by family and canonicalised; invalid IPs are skipped
// (decision §15.4); status.podIP alone is not used.
TEST(PodSourceTest, Scenario24_PodToEndpointAddressesByFamily) {
  struct Case {
    std::string_view name;
    std::vector<std::string> pod_ips;
    std::string address_type;
    model::EndpointAddresses want;
  };
  const Case cases[] = {
      {"IPv4 of dual-stack", {"1.2.3.4", "1234::5678:0000:0000:9abc:def0"}, "IPv4", {"1.2.3.4"}},
      {"IPv6 canonicalised",
       {"1.2.3.4", "1234::5678:0000:0000:9abc:def0"},
       "IPv6",
       {"1234::5678:0:0:9abc:def0"}},
      {"sloppy IPv4 leading zeros", {"010.001.002.003"}, "IPv4", {"10.1.2.3"}},
      {"IPv4-mapped IPv6 is IPv4", {"::ffff:1.2.3.4"}, "IPv4", {"1.2.3.4"}},
      {"invalid skipped", {"not-an-ip", "1.2.3.4"}, "IPv4", {"1.2.3.4"}},
      {"only invalid", {"1.2.3.256"}, "IPv4", {}},
      {"no family match", {"1.2.3.4"}, "IPv6", {}},
      {"FQDN gets nothing", {"1.2.3.4"}, "FQDN", {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    model::Pod pod = MakePod(0, true, c.pod_ips);
    EXPECT_EQ(PodToEndpoint(pod, nullptr, FooService(), c.address_type).addresses, c.want);
  }
  model::Pod only_pod_ip = MakePod(0);
  only_pod_ip.status.pod_ips.clear();
  EXPECT_TRUE(PodToEndpoint(only_pod_ip, nullptr, FooService(), "IPv4").addresses.empty());
}

// ---- §5 labels ----

// Scenario 21 (setEndpointSliceLabels, ClusterIP 1.1.1.1): reserved keys are overridden and never
// count as a change; other differences do.
TEST(PodSourceTest, Scenario21_SetEndpointSliceLabels) {
  const std::string service_name(model::kLabelServiceName);
  const std::string managed_by(model::kLabelManagedBy);
  const std::string headless(model::kLabelHeadless);
  const std::string ours(model::kManagedByEndpointSliceController);
  struct Case {
    std::string_view name;
    model::StringMap slice_labels;
    std::string cluster_ip;
    model::StringMap service_labels;
    model::StringMap want;
    bool want_changed;
  };
  const Case cases[] = {
      {"empty slice, unlabelled Service",
       {},
       "1.1.1.1",
       {},
       {{service_name, "foo"}, {managed_by, ours}},
       false},
      {"headless Service with a label",
       {},
       "None",
       {{"foo", "bar"}},
       {{"foo", "bar"}, {headless, ""}, {service_name, "foo"}, {managed_by, ours}},
       true},
      {"headless label removed once ClusterIP is set",
       {{headless, ""}, {service_name, "foo"}, {managed_by, ours}},
       "1.1.1.1",
       {},
       {{service_name, "foo"}, {managed_by, ours}},
       false},
      {"slice-only label removed",
       {{"foo", "bar"}, {service_name, "foo"}, {managed_by, ours}},
       "1.1.1.1",
       {},
       {{service_name, "foo"}, {managed_by, ours}},
       true},
      {"foreign managed-by alone is no change",
       {{service_name, "other"}, {managed_by, "actor"}},
       "1.1.1.1",
       {},
       {{service_name, "foo"}, {managed_by, ours}},
       false},
      {"label value differs",
       {{"foo", "baz"}},
       "1.1.1.1",
       {{"foo", "bar"}},
       {{"foo", "bar"}, {service_name, "foo"}, {managed_by, ours}},
       true},
      {"same labels",
       {{"foo", "bar"}},
       "1.1.1.1",
       {{"foo", "bar"}},
       {{"foo", "bar"}, {service_name, "foo"}, {managed_by, ours}},
       false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    model::Service service = FooService();
    service.spec.cluster_ip = c.cluster_ip;
    service.metadata.labels = c.service_labels;
    const SliceLabels got = SetEndpointSliceLabels(c.slice_labels, service, ours);
    EXPECT_EQ(got.labels, c.want);
    EXPECT_EQ(got.changed, c.want_changed);
  }
}

// Scenario 20: reserved keys on the Service are ignored; headless "" follows the ClusterIP only.
TEST(PodSourceTest, Scenario20_ReservedServiceLabelsIgnored) {
  model::Service service = FooService();
  service.spec.cluster_ip = "10.0.0.1";
  service.metadata.labels = {{std::string(model::kLabelServiceName), "bad"},
                             {std::string(model::kLabelManagedBy), "actor"},
                             {std::string(model::kLabelHeadless), "invalid"},
                             {"app", "web"}};
  const model::StringMap want = {{"app", "web"},
                                 {std::string(model::kLabelServiceName), "foo"},
                                 {std::string(model::kLabelManagedBy), "custom-controller"}};
  EXPECT_EQ(ServiceSliceLabels(service, "custom-controller"), want);
  service.spec.cluster_ip = "";
  EXPECT_EQ(ServiceSliceLabels(service, "custom-controller").at(std::string(model::kLabelHeadless)),
            "");
  EXPECT_TRUE(IsHeadless(service));
}

// ---- DesiredFromService ----

// Scenario 22 (desired side) and owner/metadata: v1 Service owner, no copied annotations, labels,
// trigger time and trafficDistribution passed through, topology mode read from the annotation.
TEST(PodSourceTest, Scenario22_DesiredMetadata) {
  model::Service service = FooService();
  service.metadata.annotations = {{"foo", "bar"},
                                  {std::string(model::kAnnotationTopologyMode), "Auto"}};
  service.spec.traffic_distribution = "PreferClose";
  ServiceSourceOptions options;
  options.trigger_time = model::Time::FromUnixSeconds(1546300801);
  const DesiredEndpoints desired = Derive(service, {MakePod(0)}, DefaultNodes(), options);
  EXPECT_EQ(desired.owner, (Owner{"v1", "Service", "test", "foo", "test-foo", false}));
  EXPECT_TRUE(desired.annotations.empty());
  EXPECT_EQ(desired.labels, ServiceSliceLabels(service, model::kManagedByEndpointSliceController));
  EXPECT_EQ(desired.trigger_time, options.trigger_time);
  EXPECT_EQ(desired.traffic_distribution, "PreferClose");
  EXPECT_TRUE(desired.topology_hints_requested);
  EXPECT_EQ(desired.address_types, std::vector<std::string>{"IPv4"});
  EXPECT_TRUE(desired.diagnostics.empty());

  service.metadata.deletion_timestamp = model::Time::FromUnixSeconds(5);
  service.metadata.annotations.clear();
  const DesiredEndpoints deleting = Derive(service, {});
  EXPECT_TRUE(deleting.owner.being_deleted);
  EXPECT_FALSE(deleting.topology_hints_requested);
  EXPECT_TRUE(deleting.groups.empty());
}

// One group per port set; endpoints sorted and unique by identity, whatever the pod order.
TEST(PodSourceTest, GroupsAreSortedByIdentity) {
  std::vector<model::Pod> pods;
  for (int i : {7, 3, 252, 0, 12}) {
    pods.push_back(MakePod(i));
  }
  const DesiredEndpoints desired = Derive(FooService(), pods);
  ASSERT_EQ(desired.groups.size(), 1U);
  const EndpointGroup& group = desired.groups[0];
  EXPECT_EQ(group.address_type, "IPv4");
  EXPECT_EQ(group.ports, std::vector<model::EndpointPort>{Port("foo", 80)});
  // String order of addresses: 1.2.3.11 < 1.2.3.16 < 1.2.3.4 < 1.2.3.7 < 1.2.4.0.
  EXPECT_EQ(Names(group), (std::vector<std::string>{"pod7", "pod12", "pod0", "pod3", "pod252"}));
  for (std::size_t i = 1; i < group.endpoints.size(); ++i) {
    EXPECT_LT(CompareEndpointIdentity(group.endpoints[i - 1], group.endpoints[i]), 0);
  }
}

// Spec §3.7: a later pod with the same identity replaces the earlier one; pods sharing an IP but
// not a name are distinct endpoints.
TEST(PodSourceTest, SameIdentityLaterPodWins) {
  model::Pod first = MakePod(0, /*ready=*/false);
  model::Pod second = MakePod(0, /*ready=*/true);
  model::Pod other_name = MakePod(0);
  other_name.metadata.name = "pod0-twin";
  const DesiredEndpoints desired = Derive(FooService(), {first, second, other_name});
  ASSERT_EQ(desired.groups.size(), 1U);
  ASSERT_EQ(desired.groups[0].endpoints.size(), 2U);
  EXPECT_EQ(Names(desired.groups[0]), (std::vector<std::string>{"pod0", "pod0-twin"}));
  EXPECT_EQ(desired.groups[0].endpoints[0].conditions.ready, true);
}

// Identity ties in the 16-byte sort prefix (long IPv6 addresses) are resolved on the full text.
TEST(PodSourceTest, LongIpv6AddressesSortByFullText) {
  model::Service service = FooService();
  service.spec.ip_families = {"IPv6"};
  std::vector<model::Pod> pods;
  pods.push_back(MakePod(0, true, {"fd00:10:244:1::1b"}));
  pods.push_back(MakePod(1, true, {"fd00:10:244:1::1"}));
  pods.push_back(MakePod(2, true, {"fd00:10:244:1::1a"}));
  const DesiredEndpoints desired = Derive(service, pods);
  ASSERT_EQ(desired.groups.size(), 1U);
  EXPECT_EQ(Names(desired.groups[0]), (std::vector<std::string>{"pod1", "pod2", "pod0"}));
}

// IPv4 endpoints are ordered by their text (spec §3.7), which the source sorts by a numeric key:
// every octet value in every position, shuffled, through both sorts (std::sort below 512 records,
// radix above), in both pod forms (Derive checks the compact one).
TEST(PodSourceTest, Ipv4EndpointsInTextOrderForEveryOctet) {
  std::vector<std::string> texts;
  for (int v = 0; v < 256; ++v) {
    const std::string octet = std::to_string(v);
    texts.push_back(octet + ".1.2.3");
    texts.push_back("1." + octet + ".2.3");
    texts.push_back("1.2." + octet + ".3");
    texts.push_back("1.2.3." + octet);
  }
  std::sort(texts.begin(), texts.end());
  texts.erase(std::unique(texts.begin(), texts.end()), texts.end());
  std::mt19937 rng(11);
  for (const std::size_t count : {std::size_t{300}, texts.size()}) {
    std::vector<std::string> chosen = texts;
    std::shuffle(chosen.begin(), chosen.end(), rng);
    chosen.resize(count);
    std::vector<model::Pod> pods;
    for (const std::string& text : chosen) {
      pods.push_back(MakePod(static_cast<int>(pods.size()), true, {text}));
    }
    std::sort(chosen.begin(), chosen.end());
    const DesiredEndpoints desired = Derive(FooService(), pods);
    ASSERT_EQ(desired.groups.size(), 1U);
    std::vector<std::string> got;
    for (const model::Endpoint& endpoint : desired.groups[0].endpoints) {
      ASSERT_EQ(endpoint.addresses.size(), 1U);
      got.push_back(endpoint.addresses[0]);
    }
    EXPECT_EQ(got, chosen) << count << " pods";
  }
}

// A pod's only address of a family is taken from its 16-byte sort prefix when it fits there;
// texts of 16 characters or more are not, and must come out whole. Both pod forms (Derive checks
// the compact one) and both sorts (std::sort below kRadixSortMinimum, radix above).
TEST(PodSourceTest, AddressesOfEveryLengthAroundTheSortPrefix) {
  model::Service service = FooService();
  service.spec.ip_families = {"IPv6"};
  const std::vector<std::string> addresses = {
      "fd00::1",             // 7
      "fd00:10:244::1b",     // 15
      "fd00:10:244::1bc",    // 16
      "fd00:10:244:1::1b",   // 17
      "fd00:10:244:1::1bc",  // 18
      "fd00:1:2:3:4:5:6:7",  // 18, no compression
  };
  for (const std::size_t copies : {std::size_t{1}, std::size_t{200}}) {
    std::vector<model::Pod> pods;
    std::vector<std::string> want;
    for (std::size_t c = 0; c < copies; ++c) {
      for (const std::string& address : addresses) {
        // A distinct address per pod: the copy number in the last group.
        const std::string text =
            c == 0 ? address : address.substr(0, address.rfind(':') + 1) + std::to_string(c);
        pods.push_back(MakePod(static_cast<int>(pods.size()), true, {text}));
        want.push_back(net::FormatIp(*net::ParseIpSloppy(text)));
      }
    }
    std::sort(want.begin(), want.end());  // pods sharing an address are distinct endpoints
    const DesiredEndpoints desired = Derive(service, pods);
    ASSERT_EQ(desired.groups.size(), 1U);
    std::vector<std::string> got;
    for (const model::Endpoint& endpoint : desired.groups[0].endpoints) {
      ASSERT_EQ(endpoint.addresses.size(), 1U);
      got.push_back(endpoint.addresses[0]);
    }
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, want) << copies << " copies";
  }
}

// Scenario 12 (desired side): a named target port resolving to 5 numbers makes 5 groups of 60,
// each with ports [{name "", TCP, 808x}], ordered by PortMapKey.
TEST(PodSourceTest, Scenario12_NamedTargetPortGroups) {
  model::Service service = FooService();
  service.spec.ports[0].name = "";
  service.spec.ports[0].target_port = model::IntOrString::FromString("http");
  std::vector<model::Pod> pods;
  for (int i = 0; i < 300; ++i) {
    model::Pod pod = MakePod(i);
    pod.spec.containers = {ContainerWithPorts({ContainerPort("http", 8080 + i % 5)})};
    pods.push_back(std::move(pod));
  }
  const DesiredEndpoints desired = Derive(service, pods);
  ASSERT_EQ(desired.groups.size(), 5U);
  for (std::size_t g = 0; g < desired.groups.size(); ++g) {
    SCOPED_TRACE(g);
    EXPECT_EQ(desired.groups[g].endpoints.size(), 60U);
    EXPECT_EQ(desired.groups[g].ports,
              std::vector<model::EndpointPort>{Port("", 8080 + static_cast<int>(g))});
    if (g > 0) {
      EXPECT_LT(PortMapKey(desired.groups[g - 1].ports), PortMapKey(desired.groups[g].ports));
    }
  }

  // Fed to the planner: 5 creates of 60 endpoints.
  const Plan plan = PlanSlices(desired, {}, PlanOptions{});
  ASSERT_EQ(plan.Count(Operation::kCreate), 5U);
  for (const SliceAction& action : plan.actions) {
    EXPECT_EQ(action.slice.endpoints.size(), 60U);
  }
}

// A pod whose named port is missing lands in the group with fewer ports (possibly none).
TEST(PodSourceTest, MissingNamedPortLandsInSmallerGroup) {
  model::Service service = FooService();
  service.spec.ports[0].target_port = model::IntOrString::FromString("http");
  model::Pod with_port = MakePod(0);
  with_port.spec.containers = {ContainerWithPorts({ContainerPort("http", 8080)})};
  model::Pod without_port = MakePod(1);
  const DesiredEndpoints desired = Derive(service, {with_port, without_port});
  ASSERT_EQ(desired.groups.size(), 2U);
  // The empty key sorts first.
  EXPECT_TRUE(desired.groups[0].ports.empty());
  EXPECT_EQ(Names(desired.groups[0]), std::vector<std::string>{"pod1"});
  EXPECT_EQ(desired.groups[1].ports, std::vector<model::EndpointPort>{Port("foo", 8080)});
  EXPECT_EQ(Names(desired.groups[1]), std::vector<std::string>{"pod0"});
}

// Scenario 24 (desired side): a dual-stack Service gets one group per family, IPv4 first, each
// with that family's canonical address; the hostname needs the subdomain.
TEST(PodSourceTest, Scenario24_DualStackGroups) {
  model::Service service = FooService();
  service.spec.ip_families = {"IPv6", "IPv4"};
  model::Pod pod = MakePod(0, true, {"1.2.3.4", "1234::5678:0000:0000:9abc:def0"});
  pod.spec.hostname = "example-hostname";
  const DesiredEndpoints desired = Derive(service, {pod});
  ASSERT_EQ(desired.groups.size(), 2U);
  EXPECT_EQ(desired.groups[0].address_type, "IPv4");
  EXPECT_EQ(desired.groups[1].address_type, "IPv6");
  ASSERT_EQ(desired.groups[0].endpoints.size(), 1U);
  ASSERT_EQ(desired.groups[1].endpoints.size(), 1U);
  EXPECT_EQ(desired.groups[0].endpoints[0].addresses, model::EndpointAddresses{"1.2.3.4"});
  EXPECT_EQ(desired.groups[1].endpoints[0].addresses,
            model::EndpointAddresses{"1234::5678:0:0:9abc:def0"});
  EXPECT_FALSE(desired.groups[0].endpoints[0].hostname.has_value());
  EXPECT_EQ(desired.groups[0].ports, desired.groups[1].ports);

  // Fed to the planner: one create per family.
  const Plan plan = PlanSlices(desired, {}, PlanOptions{});
  EXPECT_EQ(plan.Count(Operation::kCreate), 2U);
}

// Spec §3.6: a single-stack pod in a dual-stack Service still creates the group of the other
// family (empty), so existing slices there are emptied.
TEST(PodSourceTest, GroupExistsForFamilyWithoutAddresses) {
  model::Service service = FooService();
  service.spec.ip_families = {"IPv4", "IPv6"};
  const DesiredEndpoints desired = Derive(service, {MakePod(0)});
  ASSERT_EQ(desired.groups.size(), 2U);
  EXPECT_EQ(desired.groups[0].endpoints.size(), 1U);
  EXPECT_EQ(desired.groups[1].address_type, "IPv6");
  EXPECT_TRUE(desired.groups[1].endpoints.empty());
}

// Pods filtered out by §3.2 create no group at all; no pods, no groups.
TEST(PodSourceTest, FilteredPodsCreateNoGroup) {
  model::Pod failed = MakePod(0);
  failed.status.phase = "Failed";
  model::Pod no_ip = MakePod(1);
  no_ip.status.pod_ip.clear();
  no_ip.status.pod_ips.clear();
  EXPECT_TRUE(Derive(FooService(), {failed, no_ip}).groups.empty());
  EXPECT_TRUE(Derive(FooService(), {}).groups.empty());
}

// Terminating pods are published (not ready, still serving) by the EndpointSlice controller.
TEST(PodSourceTest, TerminatingPodsArePublished) {
  model::Pod pod = MakePod(0);
  pod.metadata.deletion_timestamp = model::Time::FromUnixSeconds(9);
  const DesiredEndpoints desired = Derive(FooService(), {pod});
  ASSERT_EQ(desired.groups.size(), 1U);
  ASSERT_EQ(desired.groups[0].endpoints.size(), 1U);
  EXPECT_EQ(desired.groups[0].endpoints[0].conditions,
            (model::EndpointConditions{false, true, true}));
}

// Scenario 27 (desired side): a pod on a missing node is skipped with a retryable diagnostic,
// but its group exists; with publishNotReadyAddresses it is published without zone.
TEST(PodSourceTest, Scenario27_MissingNode) {
  Nodes nodes;
  nodes.by_name.emplace("node-0", MakeNode("node-0", "zone-a"));
  model::Pod pod0 = MakePod(0);
  pod0.spec.node_name = "node-0";
  model::Pod pod1 = MakePod(1);
  pod1.spec.node_name = "node-1";

  DesiredEndpoints desired = Derive(FooService(), {pod0, pod1}, nodes);
  ASSERT_EQ(desired.groups.size(), 1U);
  EXPECT_EQ(Names(desired.groups[0]), std::vector<std::string>{"pod0"});
  EXPECT_EQ(desired.groups[0].endpoints[0].zone, "zone-a");
  ASSERT_EQ(desired.diagnostics.size(), 1U);
  EXPECT_EQ(desired.diagnostics[0],
            (Diagnostic{Diagnostic::Severity::kWarning, "NodeNotFound",
                        "skipping Pod pod1 for Service test/foo: Node node-1 Not Found", true}));

  // No node at all: the group still exists, empty, so existing slices get emptied.
  desired = Derive(FooService(), {pod0, pod1}, Nodes{});
  ASSERT_EQ(desired.groups.size(), 1U);
  EXPECT_TRUE(desired.groups[0].endpoints.empty());
  EXPECT_EQ(desired.diagnostics.size(), 2U);

  model::Service publish = FooService();
  publish.spec.publish_not_ready_addresses = true;
  desired = Derive(publish, {pod0, pod1}, nodes);
  ASSERT_EQ(desired.groups.size(), 1U);
  EXPECT_EQ(Names(desired.groups[0]), (std::vector<std::string>{"pod0", "pod1"}));
  EXPECT_FALSE(desired.groups[0].endpoints[1].zone.has_value());
  EXPECT_EQ(desired.groups[0].endpoints[1].node_name, "node-1");
  EXPECT_TRUE(desired.diagnostics.empty());
}

// A pod without nodeName counts as on a missing node (upstream looks up "" and gets NotFound).
TEST(PodSourceTest, PodWithoutNodeNameIsSkipped) {
  model::Pod pod = MakePod(0);
  pod.spec.node_name.clear();
  int lookups = 0;
  const std::vector<const model::Pod*> pods = {&pod};
  const auto lookup = [&](std::string_view) -> const model::Node* {
    ++lookups;
    return nullptr;
  };
  const DesiredEndpoints desired = DesiredFromService(FooService(), pods, lookup, {});
  EXPECT_EQ(lookups, 0);
  ASSERT_EQ(desired.diagnostics.size(), 1U);
  EXPECT_EQ(desired.diagnostics[0].message,
            "skipping Pod pod0 for Service test/foo: Node  Not Found");
}

// Decision §15.4: invalid pod IPs are never written and are reported once per sync, counted.
TEST(PodSourceTest, InvalidPodIpsReportedOnce) {
  model::Service service = FooService();
  service.spec.ip_families = {"IPv4", "IPv6"};
  std::vector<model::Pod> pods;
  pods.push_back(MakePod(0, true, {"garbage", "1.2.3.4"}));
  pods.push_back(MakePod(1, true, {"1.2.3.999"}));
  pods.push_back(MakePod(2, true, {"fe80::1%eth0", "1.2.3.6"}));
  const DesiredEndpoints desired = Derive(service, pods);
  ASSERT_EQ(desired.groups.size(), 2U);
  EXPECT_EQ(Names(desired.groups[0]), (std::vector<std::string>{"pod0", "pod2"}));
  EXPECT_TRUE(desired.groups[1].endpoints.empty());
  for (const EndpointGroup& group : desired.groups) {
    for (const model::Endpoint& endpoint : group.endpoints) {
      for (const std::string& address : endpoint.addresses) {
        EXPECT_NE(address, "<nil>");
      }
    }
  }
  ASSERT_EQ(desired.diagnostics.size(), 1U);
  EXPECT_EQ(desired.diagnostics[0],
            (Diagnostic{Diagnostic::Severity::kWarning, "InvalidIPAddress",
                        "Skipped 3 invalid Pod IP addresses for Service test/foo (first: "
                        "pods/test/pod0: .status.podIPs[0].ip: \"garbage\" is not an IP address)",
                        false}));
}

// Addresses are canonical in the desired state too: sloppy IPv4, mapped IPv6 and long IPv6 forms.
TEST(PodSourceTest, DesiredAddressesAreCanonical) {
  model::Service service = FooService();
  service.spec.ip_families = {"IPv4", "IPv6"};
  const DesiredEndpoints desired =
      Derive(service, {MakePod(0, true, {"010.001.002.003", "2001:DB8:0:0:0:0:0:1"}),
                       MakePod(1, true, {"::ffff:10.0.0.9"}), MakePod(2, true, {"10.0.0.10"})});
  ASSERT_EQ(desired.groups.size(), 2U);
  std::vector<std::string> v4;
  for (const model::Endpoint& endpoint : desired.groups[0].endpoints) {
    v4.push_back(endpoint.addresses.at(0));
  }
  EXPECT_EQ(v4, (std::vector<std::string>{"10.0.0.10", "10.0.0.9", "10.1.2.3"}));
  ASSERT_EQ(desired.groups[1].endpoints.size(), 1U);
  EXPECT_EQ(desired.groups[1].endpoints[0].addresses, model::EndpointAddresses{"2001:db8::1"});
}

// Scenario 18 (desired side): a headless Service without ports has one group with no ports.
TEST(PodSourceTest, HeadlessWithoutPorts) {
  model::Service service = FooService();
  service.spec.cluster_ip = "None";
  service.spec.ports.clear();
  const DesiredEndpoints desired = Derive(service, {MakePod(0)});
  ASSERT_EQ(desired.groups.size(), 1U);
  EXPECT_TRUE(desired.groups[0].ports.empty());
  EXPECT_EQ(desired.groups[0].endpoints.size(), 1U);
  EXPECT_EQ(desired.labels.count(std::string(model::kLabelHeadless)), 1U);
}

// The managed-by option reaches the labels (custom controllers, spec §11.4).
TEST(PodSourceTest, CustomManagedBy) {
  ServiceSourceOptions options;
  options.managed_by = "multus.example.com";
  const DesiredEndpoints desired = Derive(FooService(), {}, DefaultNodes(), options);
  EXPECT_EQ(desired.labels.at(std::string(model::kLabelManagedBy)), "multus.example.com");
}

// The Node lookup (a locked cache read in the controller) runs once per Node name, not per pod or
// per address type; a missing Node is remembered as missing.
TEST(PodSourceTest, NodeLookupOncePerNodeName) {
  model::Service service = FooService();
  service.spec.ip_families = {"IPv4", "IPv6"};
  const model::Node node = MakeNode("node-1");
  std::map<std::string, int, std::less<>> lookups;
  const auto lookup = [&](std::string_view name) -> const model::Node* {
    ++lookups[std::string(name)];
    return name == "node-1" ? &node : nullptr;
  };
  std::vector<model::Pod> pods = {MakePod(0, true, {"1.2.3.4", "::1:2"}), MakePod(1), MakePod(2),
                                  MakePod(3), MakePod(4)};
  pods[2].spec.node_name = "node-gone";
  pods[4].spec.node_name = "node-gone";
  const std::vector<const model::Pod*> pointers = Pointers(pods);
  const DesiredEndpoints desired = DesiredFromService(service, pointers, lookup, {});
  EXPECT_EQ(lookups, (std::map<std::string, int, std::less<>>{{"node-1", 1}, {"node-gone", 1}}));
  ASSERT_EQ(desired.groups.size(), 2U);
  EXPECT_EQ(desired.groups[0].endpoints.size(), 3U);
  EXPECT_EQ(desired.groups[1].endpoints.size(), 1U);
  // Each pod on the missing Node still gets its own diagnostic.
  EXPECT_EQ(std::count_if(desired.diagnostics.begin(), desired.diagnostics.end(),
                          [](const Diagnostic& d) { return d.reason == kReasonNodeNotFound; }),
            2);
}

// Many Nodes whose names share their endings (the memo's recent-name slots collide): still one
// lookup per Node name, and every endpoint gets its own pod's Node and zone.
TEST(PodSourceTest, NodeLookupOncePerNameWithManyNodes) {
  const model::Service service = FooService();
  std::map<std::string, model::Node, std::less<>> nodes;
  for (int n = 0; n < 40; ++n) {
    const std::string name = (n % 2 == 0 ? "a-" : "bb-") + std::to_string(n);
    nodes.emplace(name, MakeNode(name, "zone-" + name));
  }
  std::map<std::string, int, std::less<>> lookups;
  const auto lookup = [&](std::string_view name) -> const model::Node* {
    ++lookups[std::string(name)];
    auto it = nodes.find(name);
    return it == nodes.end() ? nullptr : &it->second;
  };
  ASSERT_EQ(nodes.size(), 40U);
  std::vector<model::Pod> pods;
  for (int i = 0; i < 200; ++i) {
    pods.push_back(MakePod(i));
    pods.back().spec.node_name = std::next(nodes.begin(), (i * 7) % 40)->first;
  }
  const std::vector<const model::Pod*> pointers = Pointers(pods);
  const DesiredEndpoints desired = DesiredFromService(service, pointers, lookup, {});
  EXPECT_EQ(lookups.size(), nodes.size());
  for (const auto& [name, count] : lookups) {
    EXPECT_EQ(count, 1) << name;
  }
  ASSERT_EQ(desired.groups.size(), 1U);
  std::map<std::string, std::string> node_of_pod;
  for (const model::Pod& pod : pods) {
    node_of_pod[pod.metadata.name] = pod.spec.node_name;
  }
  std::size_t seen = 0;
  for (const model::Endpoint& endpoint : desired.groups[0].endpoints) {
    ASSERT_TRUE(endpoint.target_ref.has_value() && endpoint.node_name.has_value());
    EXPECT_EQ(*endpoint.node_name, node_of_pod[endpoint.target_ref->name.str()]);
    EXPECT_EQ(endpoint.zone, "zone-" + *endpoint.node_name);
    ++seen;
  }
  EXPECT_EQ(seen, pods.size());
}

// Compact pods share one interned name per Node, which the memo goes by: cloud Node names that
// differ only in their first characters, some Nodes missing. One lookup per name, and every
// endpoint gets its own pod's Node and zone.
TEST(PodSourceTest, CompactPodsNodeLookupOncePerInternedName) {
  const model::Service service = FooService();
  std::map<std::string, model::Node, std::less<>> nodes;
  std::vector<std::string> names;
  for (int n = 0; n < 40; ++n) {
    names.push_back("ip-10-0-" + std::to_string(n) + "-17.eu-west-1.compute.internal");
    if (n % 10 != 9) nodes.emplace(names.back(), MakeNode(names.back(), "zone-" + names.back()));
  }
  std::map<std::string, int, std::less<>> lookups;
  const auto lookup = [&](std::string_view name) -> const model::Node* {
    ++lookups[std::string(name)];
    auto it = nodes.find(name);
    return it == nodes.end() ? nullptr : &it->second;
  };
  std::vector<model::Pod> pods;
  for (int i = 0; i < 200; ++i) {
    pods.push_back(MakePod(i));
    pods.back().spec.node_name = names[static_cast<std::size_t>((i * 7) % 40)];
  }
  const CompactPods compact(pods);
  const DesiredEndpoints desired = DesiredFromService(service, compact.pointers, lookup, {});
  EXPECT_EQ(lookups.size(), names.size());
  for (const auto& [name, count] : lookups) {
    EXPECT_EQ(count, 1) << name;
  }
  std::map<std::string, std::string> node_of_pod;
  for (const model::Pod& pod : pods) {
    node_of_pod[pod.metadata.name] = pod.spec.node_name;
  }
  ASSERT_EQ(desired.groups.size(), 1U);
  for (const model::Endpoint& endpoint : desired.groups[0].endpoints) {
    ASSERT_TRUE(endpoint.target_ref.has_value() && endpoint.node_name.has_value());
    EXPECT_EQ(*endpoint.node_name, node_of_pod[endpoint.target_ref->name.str()]);
    EXPECT_EQ(endpoint.zone, "zone-" + endpoint.node_name->str());
  }
  // The pods on the 4 missing Nodes (5 each) are left out, each with its own diagnostic.
  EXPECT_EQ(desired.groups[0].endpoints.size(), pods.size() - 20);
  EXPECT_EQ(std::count_if(desired.diagnostics.begin(), desired.diagnostics.end(),
                          [](const Diagnostic& d) { return d.reason == kReasonNodeNotFound; }),
            20);
}

// ---- randomized comparison with a direct transcription of upstream's loop ----

// The reference: per address type, every pod through PodToEndpoint into a set keyed by identity
// (later replaces earlier), groups keyed by PortMapKey, then everything sorted.
std::vector<EndpointGroup> ReferenceGroups(const model::Service& service,
                                           const std::vector<model::Pod>& pods,
                                           const Nodes& nodes) {
  std::vector<EndpointGroup> groups;
  for (const std::string& type : SupportedAddressTypes(service)) {
    std::map<std::string, EndpointGroup> by_key;
    for (const model::Pod& pod : pods) {
      if (!ShouldPodBeInEndpoints(pod, true)) {
        continue;
      }
      std::vector<model::EndpointPort> ports = EndpointPortsForPod(service, pod);
      EndpointGroup& group = by_key[PortMapKey(ports)];
      group.address_type = type;
      group.ports = ports;
      const model::Node* node = pod.spec.node_name.empty() ? nullptr : nodes(pod.spec.node_name);
      if (node == nullptr && !service.spec.publish_not_ready_addresses) {
        continue;
      }
      model::Endpoint endpoint = PodToEndpoint(pod, node, service, type);
      if (endpoint.addresses.empty()) {
        continue;
      }
      auto same = std::find_if(
          group.endpoints.begin(), group.endpoints.end(),
          [&](const model::Endpoint& e) { return CompareEndpointIdentity(e, endpoint) == 0; });
      if (same != group.endpoints.end()) {
        *same = std::move(endpoint);
      } else {
        group.endpoints.push_back(std::move(endpoint));
      }
    }
    for (auto& [key, group] : by_key) {
      std::sort(group.endpoints.begin(), group.endpoints.end(),
                [](const model::Endpoint& a, const model::Endpoint& b) {
                  return CompareEndpointIdentity(a, b) < 0;
                });
      groups.push_back(std::move(group));
    }
  }
  return groups;
}

// DesiredFromService matches the reference on random inputs full of identity collisions, shared
// IPv6 prefixes, invalid and repeated IPs, named ports, missing nodes and dual-stack Services.
TEST(PodSourceTest, MatchesReferenceOnRandomInputs) {
  for (std::uint32_t seed = 1; seed <= 60; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    const auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
    model::Service service = FooService();
    service.spec.ip_families =
        pick(2) == 0 ? std::vector<std::string>{"IPv4", "IPv6"} : std::vector<std::string>{"IPv6"};
    service.spec.publish_not_ready_addresses = pick(3) == 0;
    if (pick(2) == 0) {
      service.spec.ports[0].target_port = model::IntOrString::FromString("http");
    }
    Nodes nodes;
    nodes.by_name.emplace("node-1", MakeNode("node-1", "zone-a"));
    nodes.by_name.emplace("node-2", MakeNode("node-2"));
    std::vector<model::Pod> pods;
    // Every fifth seed is large enough for the radix-sort path (groups of 512 or more).
    const bool large = seed % 5 == 0;
    const int count = large ? 1500 + pick(1000) : 1 + pick(80);
    for (int i = 0; i < count; ++i) {
      std::vector<std::string> ips;
      const int ip_count = pick(4);
      for (int k = 0; k < ip_count; ++k) {
        switch (pick(4)) {
          case 0:
            ips.push_back(large ? "10." + std::to_string(pick(3)) + "." +
                                      std::to_string(pick(256)) + "." + std::to_string(pick(256))
                                : "10.0.0." + std::to_string(pick(12)));
            break;
          case 1:
            ips.push_back("fd00:10:244:1::" + std::to_string(pick(30)));
            break;
          case 2:
            ips.push_back("fd00:10:244:1::1" + std::to_string(pick(3)) + ":" +
                          std::to_string(pick(3)));
            break;
          default:
            ips.push_back(pick(2) == 0 ? "garbage" : "010.0.0.00" + std::to_string(pick(9)));
        }
      }
      model::Pod pod = MakePod(i, pick(2) == 0, ips.empty() ? std::vector<std::string>{"x"} : ips);
      if (ips.empty()) {
        pod.status.pod_ips.clear();  // keeps podIP only
      }
      pod.metadata.name = "pod" + std::to_string(pick(large ? 2000 : 25));  // identity collisions
      pod.spec.node_name = std::vector<std::string>{"node-1", "node-2", "node-3", ""}[pick(4)];
      if (pick(3) == 0) {
        pod.spec.hostname = "h" + std::to_string(pick(2));
        pod.spec.subdomain = pick(2) == 0 ? "foo" : "bar";
      }
      if (pick(8) == 0) {
        pod.status.phase = "Succeeded";
      }
      if (pick(6) == 0) {
        pod.metadata.deletion_timestamp = model::Time::FromUnixSeconds(1);
      }
      if (pick(2) == 0) {
        pod.spec.containers = {ContainerWithPorts({ContainerPort("http", 8080 + pick(3))})};
      }
      if (pick(4) == 0) {  // the port only on a sidecar (a restartable init container)
        model::Container sidecar = ContainerWithPorts({ContainerPort("http", 9090 + pick(2))});
        sidecar.restart_policy = "Always";
        pod.spec.init_containers = {sidecar};
      }
      if (pick(2) == 0) {  // a UUID, which a compact pod keeps in binary
        pod.metadata.uid = "5b0c7a8e-3d2f-4e61-b7a9-1c2d3e4f" + std::to_string(1000 + pick(9000));
      }
      if (pick(10) == 0) {
        pod.status.phase = std::vector<std::string>{"Failed", "Pending", "", "Odd"}[pick(4)];
      }
      pods.push_back(std::move(pod));
    }
    const DesiredEndpoints desired = Derive(service, pods, nodes);
    ServiceSourceOptions cut;
    cut.slice_capacity = 1 + rng() % 7;
    const std::vector<const model::Pod*> pointers = Pointers(pods);
    ExpectSameFromCompactPods(service, pods, nodes, cut,
                              DesiredFromService(service, pointers, nodes, cut));
    const std::vector<EndpointGroup> want = ReferenceGroups(service, pods, nodes);
    ASSERT_EQ(desired.groups.size(), want.size());
    for (std::size_t g = 0; g < want.size(); ++g) {
      SCOPED_TRACE("group " + std::to_string(g));
      EXPECT_EQ(desired.groups[g].address_type, want[g].address_type);
      EXPECT_EQ(desired.groups[g].ports, want[g].ports);
      EXPECT_EQ(desired.groups[g].endpoints, want[g].endpoints);
    }
  }
}

// The endpoints of `group` in one vector, whichever form it holds them in.
std::vector<model::Endpoint> Flatten(const EndpointGroup& group) {
  std::vector<model::Endpoint> all = group.endpoints;
  for (const std::vector<model::Endpoint>& run : group.runs) {
    all.insert(all.end(), run.begin(), run.end());
  }
  return all;
}

// Random pods (collisions, dual-stack, named ports, missing nodes) for the runs tests.
std::vector<model::Pod> RandomPods(std::mt19937& rng, int count) {
  const auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  std::vector<model::Pod> pods;
  for (int i = 0; i < count; ++i) {
    std::vector<std::string> ips = {"10.0." + std::to_string(pick(2)) + "." +
                                    std::to_string(pick(120))};
    if (pick(3) == 0) {
      ips.push_back("fd00::" + std::to_string(pick(150)));
    }
    model::Pod pod = MakePod(i, pick(4) != 0, ips);
    pod.metadata.name = "pod" + std::to_string(pick(count + 10));
    pod.spec.node_name = std::vector<std::string>{"node-1", "node-2", "node-3"}[pick(3)];
    if (pick(3) == 0) {
      pod.spec.containers = {ContainerWithPorts({ContainerPort("http", 8080 + pick(2))})};
    }
    pods.push_back(std::move(pod));
  }
  return pods;
}

// `got` makes the writes `want` makes, and says the same of them.
void ExpectSamePlan(const Plan& got, const Plan& want) {
  ASSERT_EQ(got.actions.size(), want.actions.size());
  for (std::size_t a = 0; a < want.actions.size(); ++a) {
    EXPECT_EQ(got.actions[a].operation, want.actions[a].operation);
    EXPECT_EQ(got.actions[a].slice, want.actions[a].slice);
  }
  EXPECT_EQ(got.unchanged, want.unchanged);
  EXPECT_EQ(got.stats.groups, want.stats.groups);
  EXPECT_EQ(got.stats.per_address_type, want.stats.per_address_type);
  EXPECT_EQ(got.diagnostics, want.diagnostics);
}

// Some pods change readiness or address, some go, some come: up to `most` of them.
void ChangeSomePods(std::mt19937& rng, int most, std::vector<model::Pod>& pods) {
  const std::vector<model::Pod> fresh = RandomPods(rng, 1 + static_cast<int>(rng() % most));
  for (const model::Pod& pod : fresh) {
    const std::size_t victim = rng() % pods.size();
    switch (rng() % 3) {
      case 0:
        pods[victim] = pod;
        break;
      case 1:
        pods.erase(pods.begin() + static_cast<std::ptrdiff_t>(victim));
        break;
      default:
        pods.push_back(pod);
    }
    if (pods.empty()) {
      pods.push_back(pod);
    }
  }
}

// With slice_capacity, each group holds the same endpoints as without, cut into full runs of that
// capacity and a shorter last one; nothing else about the desired state changes.
TEST(PodSourceTest, SliceCapacityCutsTheSameEndpointsIntoRuns) {
  for (std::uint32_t seed = 1; seed <= 20; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    model::Service service = FooService();
    service.spec.ip_families = {"IPv4", "IPv6"};
    service.spec.ports[0].target_port = model::IntOrString::FromString("http");
    Nodes nodes;
    nodes.by_name.emplace("node-1", MakeNode("node-1", "zone-a"));
    nodes.by_name.emplace("node-2", MakeNode("node-2", "zone-b"));
    const std::vector<model::Pod> pods = RandomPods(rng, 1 + static_cast<int>(rng() % 300));
    std::vector<const model::Pod*> pointers;
    for (const model::Pod& pod : pods) {
      pointers.push_back(&pod);
    }
    const std::size_t capacity = 1 + rng() % 40;
    ServiceSourceOptions cut;
    cut.slice_capacity = capacity;
    const DesiredEndpoints flat = DesiredFromService(service, pointers, nodes, {});
    const DesiredEndpoints runs = DesiredFromService(service, pointers, nodes, cut);
    EXPECT_EQ(runs.diagnostics, flat.diagnostics);
    EXPECT_EQ(runs.address_types, flat.address_types);
    ASSERT_EQ(runs.groups.size(), flat.groups.size());
    for (std::size_t g = 0; g < flat.groups.size(); ++g) {
      const EndpointGroup& group = runs.groups[g];
      EXPECT_EQ(group.ports, flat.groups[g].ports);
      EXPECT_TRUE(group.endpoints.empty());
      EXPECT_EQ(group.run_capacity, capacity);
      EXPECT_TRUE(group.sorted_unique);
      EXPECT_EQ(Flatten(group), flat.groups[g].endpoints);
      EXPECT_EQ(group.endpoint_count(), flat.groups[g].endpoints.size());
      for (std::size_t r = 0; r < group.runs.size(); ++r) {
        if (r + 1 < group.runs.size()) {
          EXPECT_EQ(group.runs[r].size(), capacity);
        } else {
          EXPECT_GE(group.runs[r].size(), 1U);
          EXPECT_LE(group.runs[r].size(), capacity);
        }
      }
      for (std::size_t i = 0; i < group.endpoint_count(); ++i) {
        EXPECT_EQ(group.endpoint_at(i), flat.groups[g].endpoints[i]);
      }
    }
  }
}

// Plans from endpoints handed over as runs equal plans from one vector, through a sequence of
// pod changes applied like an API server would: a capacity equal to maxEndpointsPerSlice (runs
// become slices whole) or not, given up (moved) or only lent (copied).
TEST(PodSourceTest, PlansFromRunsEqualPlansFromOneVector) {
  for (std::uint32_t seed = 1; seed <= 24; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    model::Service service = FooService();
    if (seed % 2 == 0) {
      service.spec.ip_families = {"IPv4", "IPv6"};
    }
    service.spec.ports[0].target_port = model::IntOrString::FromString("http");
    Nodes nodes;
    nodes.by_name.emplace("node-1", MakeNode("node-1", "zone-a"));
    nodes.by_name.emplace("node-2", MakeNode("node-2", "zone-b"));
    nodes.by_name.emplace("node-3", MakeNode("node-3", "zone-c"));
    PlanOptions options;
    options.max_endpoints_per_slice = std::vector<int>{1, 2, 7, 16, 100}[seed % 5];
    const auto max = static_cast<std::size_t>(options.max_endpoints_per_slice);
    const std::size_t capacity = seed % 3 == 0 ? max + 1 : max;
    std::vector<model::Pod> pods = RandomPods(rng, 20 + static_cast<int>(rng() % 200));
    std::vector<model::EndpointSlice> stored;
    for (int step = 0; step < 12; ++step) {
      SCOPED_TRACE("step " + std::to_string(step));
      std::vector<const model::Pod*> pointers;
      for (const model::Pod& pod : pods) {
        pointers.push_back(&pod);
      }
      ServiceSourceOptions cut;
      cut.slice_capacity = capacity;
      const Plan want =
          PlanSlices(DesiredFromService(service, pointers, nodes, {}), stored, options);
      const DesiredEndpoints lent = DesiredFromService(service, pointers, nodes, cut);
      const Plan copied = PlanSlices(lent, stored, options);
      const Plan moved =
          PlanSlices(DesiredFromService(service, pointers, nodes, cut), stored, options);
      ExpectSamePlan(copied, want);
      ExpectSamePlan(moved, want);
      if (::testing::Test::HasFailure()) {
        return;
      }
      testing::ApplyPlan(want, stored);
      ChangeSomePods(rng, 30, pods);
    }
  }
}

// What another writer may do to stored slices between syncs, so that a held slice must not be
// trusted: move or copy an endpoint into another slice (a contested claim) or into its own, change
// a field the planner compares or one it ignores, reorder a slice or deal the endpoints of its
// address type out again in another order (kube-controller-manager's order), take a slice's owner
// away, add hints, relabel, reorder ports, or add a slice of another owner holding the same
// endpoints.
void DisturbStoredSlices(std::mt19937& rng, std::vector<model::EndpointSlice>& stored) {
  if (stored.empty()) {
    return;
  }
  const auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  model::EndpointSlice& slice = stored[pick(stored.size())];
  model::EndpointSlice& other = stored[pick(stored.size())];
  model::Endpoint* endpoint =
      slice.endpoints.empty() ? nullptr : &slice.endpoints[pick(slice.endpoints.size())];
  switch (pick(15)) {
    case 0:  // the same endpoint in two slices
      if (endpoint != nullptr) {
        other.endpoints.push_back(*endpoint);
      }
      break;
    case 1:
      if (endpoint != nullptr) {
        endpoint->zone = "zone-elsewhere";
      }
      break;
    case 2:
      if (endpoint != nullptr) {
        endpoint->conditions.ready = !endpoint->conditions.ready.value_or(false);
      }
      break;
    case 3:  // ignored by the planner: the slice stays unchanged
      if (endpoint != nullptr && endpoint->target_ref) {
        endpoint->target_ref->resource_version = "42";
      }
      break;
    case 4:
      std::reverse(slice.endpoints.begin(), slice.endpoints.end());
      break;
    case 5:
      slice.metadata.owner_references.clear();
      break;
    case 6:
      if (endpoint != nullptr) {
        endpoint->hints = model::EndpointHints{{"zone-a"}, {}};
      }
      break;
    case 7:
      slice.metadata.labels["extra"] = "label";
      break;
    case 8:
      std::reverse(slice.ports.begin(), slice.ports.end());
      break;
    case 9: {  // another owner's slice of the same endpoints
      model::EndpointSlice copy = slice;
      copy.metadata.name += "-foreign";
      copy.metadata.owner_references = {
          model::OwnerReference{"v1", "Service", "bar", "other", true, true}};
      stored.push_back(std::move(copy));
      break;
    }
    case 10:
      if (endpoint != nullptr && endpoint->target_ref) {
        endpoint->target_ref->uid = "uid-replaced";
      }
      break;
    case 11:  // the same endpoint twice in one slice
      if (endpoint != nullptr) {
        slice.endpoints.insert(slice.endpoints.begin(), *endpoint);
      }
      break;
    case 12:
      std::shuffle(slice.endpoints.begin(), slice.endpoints.end(), rng);
      break;
    case 13: {  // the same slices, holding the same endpoints dealt out in another order
      std::vector<model::Endpoint> all;
      for (const model::EndpointSlice& each : stored) {
        if (each.address_type == slice.address_type) {
          all.insert(all.end(), each.endpoints.begin(), each.endpoints.end());
        }
      }
      std::shuffle(all.begin(), all.end(), rng);
      auto next = all.begin();
      for (model::EndpointSlice& each : stored) {
        if (each.address_type == slice.address_type) {
          const auto count = static_cast<std::ptrdiff_t>(each.endpoints.size());
          each.endpoints.assign(next, next + count);
          next += count;
        }
      }
      break;
    }
    default:
      if (endpoint != nullptr) {
        endpoint->node_name.reset();
      }
  }
}

// Plans made with held slices (ServiceSourceOptions::stored_slices) equal plans made with every
// endpoint built, through pod changes and other writers' changes to the stored slices; and a sync
// that changes nothing holds every slice and builds no endpoint.
TEST(PodSourceTest, HeldSlicesPlanAsIfBuilt) {
  std::size_t held_total = 0;
  for (std::uint32_t seed = 1; seed <= 24; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    model::Service service = FooService();
    if (seed % 2 == 0) {
      service.spec.ip_families = {"IPv4", "IPv6"};
    }
    if (seed % 3 == 0) {
      service.spec.ports[0].target_port = model::IntOrString::FromString("http");
    }
    if (seed % 5 == 0) {
      service.spec.publish_not_ready_addresses = true;
    }
    if (seed % 7 == 0) {
      service.spec.traffic_distribution = "PreferClose";
    }
    Nodes nodes;
    nodes.by_name.emplace("node-1", MakeNode("node-1", "zone-a"));
    nodes.by_name.emplace("node-2", MakeNode("node-2", "zone-b"));
    nodes.by_name.emplace("node-3", MakeNode("node-3"));
    PlanOptions options;
    options.max_endpoints_per_slice = std::vector<int>{1, 2, 7, 16, 100}[seed % 5];
    const auto max = static_cast<std::size_t>(options.max_endpoints_per_slice);
    TopologyInput topology;
    if (seed % 4 == 1) {  // topology-aware hints, which rewrite unchanged slices too
      service.metadata.annotations["service.kubernetes.io/topology-mode"] = "Auto";
      topology.zone_ratios = {{"zone-a", 0.5}, {"zone-b", 0.5}};
      topology.populated_address_types = {"IPv4"};
      options.topology = &topology;
    }
    std::vector<model::Pod> pods = RandomPods(rng, 20 + static_cast<int>(rng() % 200));
    for (model::Pod& pod : pods) {
      if (rng() % 5 == 0) {
        pod.spec.hostname = "h" + std::to_string(rng() % 3);
        pod.spec.subdomain = rng() % 2 == 0 ? "foo" : "bar";
      }
      if (rng() % 9 == 0) {
        pod.metadata.deletion_timestamp = model::Time::FromUnixSeconds(1);
      }
      if (rng() % 2 == 0) {
        pod.metadata.uid = "5b0c7a8e-3d2f-4e61-b7a9-1c2d3e4f" + std::to_string(1000 + rng() % 9000);
      }
    }
    std::vector<model::EndpointSlice> stored;
    for (int step = 0; step < 12; ++step) {
      SCOPED_TRACE("step " + std::to_string(step));
      const std::vector<const model::Pod*> pointers = Pointers(pods);
      const CompactPods compact(pods);
      ServiceSourceOptions built;
      built.slice_capacity = seed % 4 == 0 ? max + 1 : max;
      ServiceSourceOptions holding = built;
      holding.stored_slices = stored;
      const Plan want =
          PlanSlices(DesiredFromService(service, pointers, nodes, built), stored, options);
      DesiredEndpoints from_pods = DesiredFromService(service, pointers, nodes, holding);
      DesiredEndpoints from_compact = DesiredFromService(service, compact.pointers, nodes, holding);
      for (const EndpointGroup& group : from_pods.groups) {
        held_total += group.held.size();
      }
      ASSERT_EQ(from_pods.groups.size(), from_compact.groups.size());
      for (std::size_t g = 0; g < from_pods.groups.size(); ++g) {
        EXPECT_EQ(from_pods.groups[g].held, from_compact.groups[g].held);
      }
      const Plan lent = PlanSlices(from_pods, stored, options);
      const Plan moved = PlanSlices(std::move(from_compact), stored, options);
      ExpectSamePlan(lent, want);
      ExpectSamePlan(moved, want);
      if (::testing::Test::HasFailure()) {
        return;
      }
      testing::ApplyPlan(want, stored);

      // Nothing changed since: every slice that holds endpoints is held, nothing is built.
      ServiceSourceOptions again = built;
      again.stored_slices = stored;
      const DesiredEndpoints settled = DesiredFromService(service, compact.pointers, nodes, again);
      std::size_t held = 0;
      std::size_t built_count = 0;
      for (const EndpointGroup& group : settled.groups) {
        built_count += group.endpoint_count();
        held += group.held.size();
      }
      // Slices another writer reordered are held too.
      const auto holdable = static_cast<std::size_t>(std::count_if(
          stored.begin(), stored.end(),
          [](const model::EndpointSlice& slice) { return !slice.endpoints.empty(); }));
      EXPECT_EQ(held, holdable);
      if (holdable == stored.size()) {
        EXPECT_EQ(built_count, 0U);
      }
      // Settled, as the plan built from every endpoint says too (hints may take another pass).
      const Plan settled_plan = PlanSlices(settled, stored, options);
      const Plan settled_want =
          PlanSlices(DesiredFromService(service, compact.pointers, nodes, built), stored, options);
      EXPECT_EQ(settled_plan.actions.size(), settled_want.actions.size());
      if (options.topology == nullptr) {
        EXPECT_TRUE(settled_plan.empty());
      }

      // Some pods change readiness or address, some go, some come (or none do); other writers
      // meddle with the stored slices.
      if (rng() % 3 != 0) {
        ChangeSomePods(rng, 20, pods);
      }
      for (std::size_t n = rng() % 4; n > 0; --n) {
        DisturbStoredSlices(rng, stored);
      }
    }
  }
  EXPECT_GT(held_total, 0U);
}

// Slices as kube-controller-manager writes them: the desired endpoints, but dealt out in its pod
// cache's order instead of the records'. A cluster migrated from it keeps them until churn
// rewrites each one. Unchanged, every one is held (nothing is built) and the plan is empty; with
// one pod changed, gone or come, or a slice holding an endpoint twice, the slices that still hold
// their endpoints unchanged are held and the plan is the reference planner's, and the one made
// with every endpoint built.
TEST(PodSourceTest, SlicesInAnotherControllersOrderAreHeld) {
  const model::Service service = FooService();
  Nodes nodes;
  nodes.by_name.emplace("node-1", MakeNode("node-1", "zone-a"));
  std::vector<model::Pod> pods;
  for (int i = 0; i < 1000; ++i) {
    pods.push_back(MakePod(i));
  }
  PlanOptions options;
  options.max_endpoints_per_slice = 100;
  ServiceSourceOptions built;
  built.slice_capacity = 100;

  // The slices a first sync writes, then their endpoints dealt out again at random.
  std::vector<model::EndpointSlice> stored;
  testing::ApplyPlan(
      PlanSlices(DesiredFromService(service, Pointers(pods), nodes, built), stored, options),
      stored);
  ASSERT_EQ(stored.size(), 10U);
  std::mt19937 rng(7);
  std::vector<model::Endpoint> all;
  for (const model::EndpointSlice& slice : stored) {
    all.insert(all.end(), slice.endpoints.begin(), slice.endpoints.end());
  }
  std::shuffle(all.begin(), all.end(), rng);
  for (std::size_t s = 0; s < stored.size(); ++s) {
    stored[s].endpoints.assign(all.begin() + static_cast<std::ptrdiff_t>(s * 100),
                               all.begin() + static_cast<std::ptrdiff_t>((s + 1) * 100));
  }

  struct Case {
    std::string_view name;
    std::size_t want_held;
    std::size_t want_writes;
  };
  const Case cases[] = {
      {"unchanged", 10, 0},
      {"one pod not ready", 9, 1},
      {"one pod gone", 9, 1},
      {"one pod come", 10, 1},
      {"one slice holds an endpoint twice", 9, 1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.name));
    std::vector<model::Pod> changed = pods;
    std::vector<model::EndpointSlice> slices = stored;
    if (c.name == "one pod not ready") {
      changed[430] = MakePod(430, /*ready=*/false);
    } else if (c.name == "one pod gone") {
      changed.erase(changed.begin() + 430);
    } else if (c.name == "one pod come") {
      changed.push_back(MakePod(1000));
    } else if (c.name == "one slice holds an endpoint twice") {
      slices[3].endpoints.push_back(slices[3].endpoints[17]);
    }
    const CompactPods compact(changed);
    ServiceSourceOptions holding = built;
    holding.stored_slices = slices;
    const DesiredEndpoints desired = DesiredFromService(service, compact.pointers, nodes, holding);
    ASSERT_EQ(desired.groups.size(), 1U);
    EXPECT_EQ(desired.groups[0].held.size(), c.want_held);
    EXPECT_EQ(desired.groups[0].endpoint_count(), changed.size() - c.want_held * 100);

    const Plan got = PlanSlices(desired, slices, options);
    EXPECT_EQ(got.actions.size(), c.want_writes);
    const DesiredEndpoints every = DesiredFromService(service, compact.pointers, nodes, built);
    ExpectSamePlan(got, testing::ReferencePlan(every, slices, options));
    ExpectSamePlan(got, PlanSlices(every, slices, options));
  }
}

}  // namespace
}  // namespace slicewright::reconcile

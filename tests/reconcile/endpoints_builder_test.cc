#include "slicewright/reconcile/endpoints_builder.h"

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "slicewright/model/core.h"
#include "slicewright/model/time.h"
#include "slicewright/model/well_known.h"
#include "slicewright/reconcile/pod_source.h"

// The Endpoints controller's pure core (spec §13, scenario 54): which pods become which addresses,
// RepackSubsets, the 1000-address truncation, the labels and annotations written, and when a stored
// Endpoints needs no write.
namespace slicewright::reconcile {
namespace {

constexpr std::string_view kManagedBy = "endpoints.kubernetes.io/managed-by";

// ---- builders (spec §16 conventions: namespace test, Service foo, pods on node-1) ----

model::Service FooService() {
  model::Service service;
  service.metadata.namespace_ = "test";
  service.metadata.name = "foo";
  service.metadata.uid = "test-foo";
  service.metadata.labels = {{"app", "foo"}};
  service.spec.selector = model::StringMap{{"foo", "bar"}};
  service.spec.cluster_ip = "10.0.0.10";
  service.spec.ip_families = {"IPv4"};
  model::ServicePort port;
  port.name = "foo";
  port.protocol = "TCP";
  port.port = 80;
  port.target_port = model::IntOrString::FromInt(8080);
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

std::vector<const model::Pod*> Ptrs(const std::vector<model::Pod>& pods) {
  std::vector<const model::Pod*> out;
  out.reserve(pods.size());
  for (const model::Pod& pod : pods) {
    out.push_back(&pod);
  }
  return out;
}

EndpointsSubsets SubsetsOf(const model::Service& service, const std::vector<model::Pod>& pods) {
  const std::vector<const model::Pod*> ptrs = Ptrs(pods);
  return EndpointsSubsetsForService(service, ptrs);
}

EndpointsPlan Plan(const model::Service& service, const std::vector<model::Pod>& pods,
                   const model::Endpoints* current, const EndpointsBuildOptions& options = {}) {
  const std::vector<const model::Pod*> ptrs = Ptrs(pods);
  return PlanEndpoints(service, ptrs, current, options);
}

model::EndpointAddress Address(const std::string& ip, const std::string& uid = "") {
  model::EndpointAddress address;
  address.ip = ip;
  if (!uid.empty()) {
    address.target_ref = model::ObjectReference{"Pod", "test", uid, uid, {}, {}, {}};
  }
  return address;
}

model::CoreEndpointPort Port(const std::string& name, int number) {
  return model::CoreEndpointPort{name, number, "TCP", std::nullopt};
}

std::vector<std::string> Ips(const std::vector<model::EndpointAddress>& addresses) {
  std::vector<std::string> out;
  out.reserve(addresses.size());
  for (const model::EndpointAddress& address : addresses) {
    out.push_back(address.ip);
  }
  return out;
}

std::size_t Count(const std::vector<model::EndpointSubset>& subsets, bool ready) {
  std::size_t n = 0;
  for (const model::EndpointSubset& subset : subsets) {
    n += ready ? subset.addresses.size() : subset.not_ready_addresses.size();
  }
  return n;
}

// The stored object as the server would return it after our write.
model::Endpoints Stored(const EndpointsPlan& plan, const std::string& resource_version = "7") {
  model::Endpoints stored = plan.endpoints;
  stored.metadata.resource_version = resource_version;
  stored.metadata.uid = "uid-endpoints-foo";
  return stored;
}

// ---- pods -> addresses ----

// Ready pods are addresses, unready ones notReadyAddresses, in one subset with the resolved port;
// each address carries nodeName and a Pod targetRef without resourceVersion.
TEST(EndpointsBuilderTest, ReadyAndNotReadyPodsShareOneSubset) {
  const EndpointsSubsets got = SubsetsOf(FooService(), {MakePod(0), MakePod(1, false), MakePod(2)});
  ASSERT_EQ(got.subsets.size(), 1U);
  const model::EndpointSubset& subset = got.subsets[0];
  EXPECT_EQ(Ips(subset.addresses), (std::vector<std::string>{"1.2.3.4", "1.2.3.6"}));
  EXPECT_EQ(Ips(subset.not_ready_addresses), (std::vector<std::string>{"1.2.3.5"}));
  EXPECT_EQ(subset.ports, (std::vector<model::CoreEndpointPort>{Port("foo", 8080)}));
  EXPECT_EQ(got.ready, 2U);
  EXPECT_EQ(got.not_ready, 1U);
  const model::EndpointAddress& first = subset.addresses[0];
  EXPECT_EQ(first.node_name, std::optional<std::string>("node-1"));
  ASSERT_TRUE(first.target_ref.has_value());
  EXPECT_EQ(*first.target_ref,
            (model::ObjectReference{"Pod", "test", "pod0", "uid-pod0", "", "", ""}));
  EXPECT_EQ(first.hostname, "");
}

// publishNotReadyAddresses: every pod is ready, terminating ones included; without it
// terminating pods are left out (ShouldPodBeInEndpoints(pod, publishNotReadyAddresses)).
TEST(EndpointsBuilderTest, PublishNotReadyAddressesAndTerminatingPods) {
  std::vector<model::Pod> pods = {MakePod(0), MakePod(1, false), MakePod(2)};
  pods[2].metadata.deletion_timestamp = model::Time::FromUnixSeconds(100);
  EndpointsSubsets got = SubsetsOf(FooService(), pods);
  ASSERT_EQ(got.subsets.size(), 1U);
  EXPECT_EQ(Ips(got.subsets[0].addresses), (std::vector<std::string>{"1.2.3.4"}));
  EXPECT_EQ(Ips(got.subsets[0].not_ready_addresses), (std::vector<std::string>{"1.2.3.5"}));

  model::Service publish = FooService();
  publish.spec.publish_not_ready_addresses = true;
  got = SubsetsOf(publish, pods);
  ASSERT_EQ(got.subsets.size(), 1U);
  EXPECT_EQ(Ips(got.subsets[0].addresses),
            (std::vector<std::string>{"1.2.3.4", "1.2.3.5", "1.2.3.6"}));
  EXPECT_TRUE(got.subsets[0].not_ready_addresses.empty());
}

// Terminal pods and pods without an IP are never published.
TEST(EndpointsBuilderTest, TerminalAndIpLessPodsAreLeftOut) {
  std::vector<model::Pod> pods = {MakePod(0), MakePod(1), MakePod(2), MakePod(3)};
  pods[1].status.phase = "Succeeded";
  pods[2].status.phase = "Failed";
  pods[3].status.pod_ip.clear();
  pods[3].status.pod_ips.clear();
  const EndpointsSubsets got = SubsetsOf(FooService(), pods);
  ASSERT_EQ(got.subsets.size(), 1U);
  EXPECT_EQ(Ips(got.subsets[0].addresses), (std::vector<std::string>{"1.2.3.4"}));
}

// The hostname is published only when the pod's subdomain names the Service (same namespace).
TEST(EndpointsBuilderTest, HostnameOnlyWithMatchingSubdomain) {
  std::vector<model::Pod> pods = {MakePod(0), MakePod(1)};
  pods[0].spec.hostname = "example-hostname";
  pods[0].spec.subdomain = "foo";
  pods[1].spec.hostname = "other-hostname";
  const EndpointsSubsets got = SubsetsOf(FooService(), pods);
  ASSERT_EQ(got.subsets.size(), 1U);
  ASSERT_EQ(got.subsets[0].addresses.size(), 2U);
  EXPECT_EQ(got.subsets[0].addresses[0].hostname, "example-hostname");
  EXPECT_EQ(got.subsets[0].addresses[1].hostname, "");
}

// One IP per pod, of the Service's family: ipFamilies[0]; else the ClusterIP's family; else (a
// headless Service on an old API server) the family of each pod's status.podIP. IPv6 text is
// canonicalised; a pod with no IP of the family is left out.
TEST(EndpointsBuilderTest, OneAddressOfTheServiceFamily) {
  const std::vector<model::Pod> pods = {
      MakePod(0, true, {"1.2.3.4", "1234::5678:0000:0000:9abc:def0"}),
      MakePod(1, true, {"1.2.3.5"}),
      MakePod(2, true, {"2001:db8::2", "1.2.3.6"}),
  };
  model::Service v6 = FooService();
  v6.spec.ip_families = {"IPv6", "IPv4"};
  EndpointsSubsets got = SubsetsOf(v6, pods);
  ASSERT_EQ(got.subsets.size(), 1U);
  EXPECT_EQ(Ips(got.subsets[0].addresses),
            (std::vector<std::string>{"1234::5678:0:0:9abc:def0", "2001:db8::2"}));

  got = SubsetsOf(FooService(), pods);
  ASSERT_EQ(got.subsets.size(), 1U);
  EXPECT_EQ(Ips(got.subsets[0].addresses),
            (std::vector<std::string>{"1.2.3.4", "1.2.3.5", "1.2.3.6"}));

  model::Service old_v6 = FooService();
  old_v6.spec.ip_families.clear();
  old_v6.spec.cluster_ip = "fd00::10";
  got = SubsetsOf(old_v6, pods);
  ASSERT_EQ(got.subsets.size(), 1U);
  EXPECT_EQ(got.subsets[0].addresses.size(), 2U);

  model::Service old_headless = FooService();
  old_headless.spec.ip_families.clear();
  old_headless.spec.cluster_ip = "None";
  got = SubsetsOf(old_headless, pods);
  ASSERT_EQ(got.subsets.size(), 1U);
  EXPECT_EQ(Ips(got.subsets[0].addresses),
            (std::vector<std::string>{"1.2.3.4", "1.2.3.5", "2001:db8::2"}));
}

// Decision §15.4: an invalid pod IP is skipped (the next entry of the family is used) and reported
// in one diagnostic.
TEST(EndpointsBuilderTest, InvalidPodIpsAreSkippedAndReported) {
  const std::vector<model::Pod> pods = {MakePod(0, true, {"not-an-ip", "1.2.3.4"}),
                                        MakePod(1, true, {"300.1.1.1"})};
  const EndpointsSubsets got = SubsetsOf(FooService(), pods);
  ASSERT_EQ(got.subsets.size(), 1U);
  EXPECT_EQ(Ips(got.subsets[0].addresses), (std::vector<std::string>{"1.2.3.4"}));
  ASSERT_EQ(got.diagnostics.size(), 1U);
  EXPECT_EQ(got.diagnostics[0].reason, kReasonInvalidIPAddress);
  EXPECT_EQ(got.diagnostics[0].message,
            "Skipped 2 invalid Pod IP addresses for Service test/foo (first: pods/test/pod0: "
            ".status.podIPs[0].ip: \"not-an-ip\" is not an IP address)");
}

// Named target ports resolve per pod (FindPort): pods serving different numbers land in different
// subsets; a pod without the port serves only the others.
TEST(EndpointsBuilderTest, NamedTargetPortsSplitSubsets) {
  model::Service service = FooService();
  service.spec.ports[0].target_port = model::IntOrString::FromString("http");
  model::ServicePort metrics;
  metrics.name = "metrics";
  metrics.port = 9090;
  metrics.target_port = model::IntOrString::FromInt(9090);
  service.spec.ports.push_back(metrics);
  std::vector<model::Pod> pods = {MakePod(0), MakePod(1), MakePod(2)};
  for (int i = 0; i < 2; ++i) {
    model::Container& container = pods[static_cast<std::size_t>(i)].spec.containers.emplace_back();
    container.name = "app";
    container.ports.push_back(model::ContainerPort{"http", 8080 + i, "TCP", 0, ""});
  }
  const EndpointsSubsets got = SubsetsOf(service, pods);
  ASSERT_EQ(got.subsets.size(), 3U);
  // In upstream's order, by the MD5 of go-spew's printout of each subset (the expected order
  // computed apart, by tests/realcluster/endpoint_harness.py's upstream_subset_order, which the
  // real-cluster differential checks against kube-controller-manager's own Endpoints).
  EXPECT_EQ(got.subsets[0].ports, (std::vector<model::CoreEndpointPort>{Port("foo", 8081)}));
  EXPECT_EQ(Ips(got.subsets[0].addresses), (std::vector<std::string>{"1.2.3.5"}));
  EXPECT_EQ(got.subsets[1].ports, (std::vector<model::CoreEndpointPort>{Port("foo", 8080)}));
  EXPECT_EQ(Ips(got.subsets[1].addresses), (std::vector<std::string>{"1.2.3.4"}));
  EXPECT_EQ(got.subsets[2].ports, (std::vector<model::CoreEndpointPort>{Port("metrics", 9090)}));
  EXPECT_EQ(Ips(got.subsets[2].addresses),
            (std::vector<std::string>{"1.2.3.4", "1.2.3.5", "1.2.3.6"}));
}

// All pods serving all ports: one subset carrying every port (in upstream's hash order, computed
// apart as above), appProtocol kept.
TEST(EndpointsBuilderTest, PortsServedByTheSamePodsShareASubset) {
  model::Service service = FooService();
  model::ServicePort https;
  https.name = "https";
  https.port = 443;
  https.target_port = model::IntOrString::FromInt(8443);
  https.app_protocol = "https";
  service.spec.ports.insert(service.spec.ports.begin(), https);
  const EndpointsSubsets got = SubsetsOf(service, {MakePod(1), MakePod(0)});
  ASSERT_EQ(got.subsets.size(), 1U);
  EXPECT_EQ(got.subsets[0].ports,
            (std::vector<model::CoreEndpointPort>{
                model::CoreEndpointPort{"https", 8443, "TCP", "https"}, Port("foo", 8080)}));
  EXPECT_EQ(Ips(got.subsets[0].addresses), (std::vector<std::string>{"1.2.3.4", "1.2.3.5"}));
}

// A headless Service (clusterIP None) without ports gets one port-less subset; a Service with a
// cluster IP and no ports gets none.
TEST(EndpointsBuilderTest, ServicesWithoutPorts) {
  model::Service headless = FooService();
  headless.spec.cluster_ip = "None";
  headless.spec.ports.clear();
  EndpointsSubsets got = SubsetsOf(headless, {MakePod(0), MakePod(1, false)});
  ASSERT_EQ(got.subsets.size(), 1U);
  EXPECT_TRUE(got.subsets[0].ports.empty());
  EXPECT_EQ(Ips(got.subsets[0].addresses), (std::vector<std::string>{"1.2.3.4"}));
  EXPECT_EQ(Ips(got.subsets[0].not_ready_addresses), (std::vector<std::string>{"1.2.3.5"}));

  model::Service portless = FooService();
  portless.spec.ports.clear();
  EXPECT_TRUE(SubsetsOf(portless, {MakePod(0)}).subsets.empty());
}

// ---- RepackSubsets ----

// Subsets with the same addresses merge their ports; an address not ready on a port in any subset
// is not ready there; duplicates (same IP and UID) collapse; addresses sort by IP then UID.
TEST(EndpointsBuilderTest, RepackMergesAndSorts) {
  std::vector<model::EndpointSubset> in(4);
  in[0].addresses = {Address("10.0.0.2", "b"), Address("10.0.0.1", "a")};
  in[0].ports = {Port("p", 80)};
  in[1].addresses = {Address("10.0.0.1", "a"), Address("10.0.0.2", "b")};
  in[1].ports = {Port("q", 81)};
  in[2].addresses = {Address("10.0.0.1", "a")};
  in[2].not_ready_addresses = {Address("10.0.0.2", "b")};
  in[2].ports = {Port("r", 82)};
  in[3].addresses = {Address("10.0.0.2", "b")};
  in[3].ports = {Port("r", 82)};  // ready here, not ready in in[2]: not ready wins
  const std::vector<model::EndpointSubset> got = RepackSubsets(in);
  ASSERT_EQ(got.size(), 2U);
  EXPECT_EQ(got[0].ports, (std::vector<model::CoreEndpointPort>{Port("p", 80), Port("q", 81)}));
  EXPECT_EQ(Ips(got[0].addresses), (std::vector<std::string>{"10.0.0.1", "10.0.0.2"}));
  EXPECT_TRUE(got[0].not_ready_addresses.empty());
  EXPECT_EQ(got[1].ports, (std::vector<model::CoreEndpointPort>{Port("r", 82)}));
  EXPECT_EQ(Ips(got[1].addresses), (std::vector<std::string>{"10.0.0.1"}));
  EXPECT_EQ(Ips(got[1].not_ready_addresses), (std::vector<std::string>{"10.0.0.2"}));

  // Canonical: repacking again, or repacking a shuffled input, gives the same.
  EXPECT_EQ(RepackSubsets(got), got);
  std::vector<model::EndpointSubset> shuffled(in.rbegin(), in.rend());
  EXPECT_EQ(RepackSubsets(shuffled), got);
}

// The same IP from two pods (different UIDs) is two addresses, the one without targetRef first;
// port-less subsets survive; subsets without addresses are dropped.
TEST(EndpointsBuilderTest, RepackKeepsDistinctUidsAndPortlessAddresses) {
  std::vector<model::EndpointSubset> in(3);
  in[0].addresses = {Address("10.0.0.1", "b"), Address("10.0.0.1", "a"), Address("10.0.0.1")};
  in[1].ports = {Port("p", 80)};  // no addresses
  in[2].not_ready_addresses = {Address("10.0.0.9", "z")};
  const std::vector<model::EndpointSubset> got = RepackSubsets(in);
  ASSERT_EQ(got.size(), 1U);
  EXPECT_TRUE(got[0].ports.empty());
  ASSERT_EQ(got[0].addresses.size(), 3U);
  EXPECT_FALSE(got[0].addresses[0].target_ref.has_value());
  EXPECT_EQ(got[0].addresses[1].target_ref->uid, "a");
  EXPECT_EQ(got[0].addresses[2].target_ref->uid, "b");
  EXPECT_EQ(Ips(got[0].not_ready_addresses), (std::vector<std::string>{"10.0.0.9"}));
}

// Equality ignores order and targetRef resourceVersions, not other fields.
TEST(EndpointsBuilderTest, SubsetEqualityIgnoresOrderAndResourceVersion) {
  std::vector<model::EndpointSubset> a(2);
  a[0].addresses = {Address("10.0.0.1", "a")};
  a[0].ports = {Port("p", 80)};
  a[1].addresses = {Address("10.0.0.2", "b")};
  a[1].ports = {Port("q", 81)};
  std::vector<model::EndpointSubset> b(a.rbegin(), a.rend());
  b[0].addresses[0].target_ref->resource_version = "42";
  EXPECT_TRUE(EndpointSubsetsEqual(a, b));
  EXPECT_EQ(SubsetsFingerprint(a), SubsetsFingerprint(b));
  b[0].addresses[0].node_name = "node-9";
  EXPECT_FALSE(EndpointSubsetsEqual(a, b));
  EXPECT_NE(SubsetsFingerprint(a), SubsetsFingerprint(b));
  EXPECT_EQ(SubsetsFingerprint(a).size(), 16U);
}

// ---- truncation (scenario 54) ----

std::vector<model::Pod> ManyPods(int ready, int not_ready) {
  std::vector<model::Pod> pods;
  pods.reserve(static_cast<std::size_t>(ready) + static_cast<std::size_t>(not_ready));
  for (int i = 0; i < ready + not_ready; ++i) {
    pods.push_back(MakePod(i, i < ready));
  }
  return pods;
}

// Scenario 54: 1001 ready addresses are written as 1000 with over-capacity "truncated"; back to
// 1000 the annotation is removed.
TEST(EndpointsBuilderTest, Scenario54TruncatesOverCapacity) {
  std::vector<model::Pod> pods = ManyPods(1001, 0);
  const EndpointsPlan first = Plan(FooService(), pods, nullptr);
  EXPECT_EQ(first.action, EndpointsPlan::Action::kCreate);
  EXPECT_TRUE(first.truncated);
  EXPECT_EQ(first.ready, 1001U);
  EXPECT_EQ(Count(first.endpoints.subsets, true), 1000U);
  EXPECT_EQ(
      first.endpoints.metadata.annotations.at(std::string(model::kAnnotationEndpointsOverCapacity)),
      "truncated");

  // Unchanged pods: the truncated object is not rewritten (upstream would, every sync).
  const model::Endpoints stored = Stored(first);
  EXPECT_EQ(Plan(FooService(), pods, &stored).action, EndpointsPlan::Action::kNone);

  pods.pop_back();
  const EndpointsPlan second = Plan(FooService(), pods, &stored);
  EXPECT_EQ(second.action, EndpointsPlan::Action::kUpdate);
  EXPECT_FALSE(second.truncated);
  EXPECT_EQ(Count(second.endpoints.subsets, true), 1000U);
  EXPECT_FALSE(
      second.endpoints.metadata.annotations.contains(model::kAnnotationEndpointsOverCapacity));
}

// Scenario 54: 900 ready + 300 not ready keep every ready address and 100 not-ready ones.
TEST(EndpointsBuilderTest, Scenario54KeepsReadyFirst) {
  const EndpointsPlan plan = Plan(FooService(), ManyPods(900, 300), nullptr);
  EXPECT_TRUE(plan.truncated);
  EXPECT_EQ(plan.ready, 900U);
  EXPECT_EQ(plan.not_ready, 300U);
  EXPECT_EQ(Count(plan.endpoints.subsets, true), 900U);
  EXPECT_EQ(Count(plan.endpoints.subsets, false), 100U);
}

// More than 1000 ready: only ready addresses are kept, 1000 of them.
TEST(EndpointsBuilderTest, TruncatesReadyAndDropsNotReady) {
  const EndpointsPlan plan = Plan(FooService(), ManyPods(1100, 50), nullptr);
  EXPECT_TRUE(plan.truncated);
  EXPECT_EQ(Count(plan.endpoints.subsets, true), 1000U);
  EXPECT_EQ(Count(plan.endpoints.subsets, false), 0U);
}

// Each subset keeps ⌈its share × budget⌉ of its first addresses, capped by what is left; a subset
// left empty is dropped.
TEST(EndpointsBuilderTest, TruncationSharesTheBudgetBySubset) {
  std::vector<model::EndpointSubset> subsets(3);
  for (int i = 0; i < 3; ++i) {
    subsets[0].addresses.push_back(Address("10.0.0." + std::to_string(i)));
  }
  for (int i = 0; i < 2; ++i) {
    subsets[1].addresses.push_back(Address("10.0.1." + std::to_string(i)));
  }
  subsets[2].not_ready_addresses = {Address("10.0.2.1")};
  // 5 ready > 4: budget 4 over ready only; ⌈3/5×4⌉ = 3, then ⌈2/5×4⌉ = 2 capped to 1.
  ASSERT_TRUE(TruncateSubsets(subsets, 4));
  ASSERT_EQ(subsets.size(), 2U);
  EXPECT_EQ(Ips(subsets[0].addresses),
            (std::vector<std::string>{"10.0.0.0", "10.0.0.1", "10.0.0.2"}));
  EXPECT_EQ(Ips(subsets[1].addresses), (std::vector<std::string>{"10.0.1.0"}));

  std::vector<model::EndpointSubset> fits(1);
  fits[0].addresses = {Address("10.0.0.1")};
  fits[0].not_ready_addresses = {Address("10.0.0.2")};
  EXPECT_FALSE(TruncateSubsets(fits, 2));
  EXPECT_EQ(fits[0].not_ready_addresses.size(), 1U);
}

// ---- PlanEndpoints: metadata and when to write ----

// A new Endpoints is named after the Service, carries the Service's labels (plus the headless
// label when there is no cluster IP), the trigger time and our mark.
TEST(EndpointsBuilderTest, CreateCarriesLabelsAndAnnotations) {
  EndpointsBuildOptions options;
  options.trigger_time = model::Time{1'546'300'801'500'000'000};
  EndpointsPlan plan = Plan(FooService(), {MakePod(0)}, nullptr, options);
  EXPECT_EQ(plan.action, EndpointsPlan::Action::kCreate);
  EXPECT_EQ(plan.endpoints.metadata.name, "foo");
  EXPECT_EQ(plan.endpoints.metadata.namespace_, "test");
  EXPECT_EQ(plan.endpoints.metadata.labels,
            (model::StringMap{{"app", "foo"}, {std::string(kManagedBy), "endpoint-controller"}}));
  EXPECT_EQ(
      plan.endpoints.metadata.annotations,
      (model::StringMap{
          {std::string(model::kAnnotationLastChangeTriggerTime), "2019-01-01T00:00:01.5Z"},
          {std::string(kAnnotationWrittenSubsets), SubsetsFingerprint(plan.endpoints.subsets)}}));
  EXPECT_TRUE(plan.endpoints.metadata.owner_references.empty());

  model::Service headless = FooService();
  headless.spec.cluster_ip = "None";
  plan = Plan(headless, {MakePod(0)}, nullptr);
  EXPECT_EQ(plan.endpoints.metadata.labels,
            (model::StringMap{{"app", "foo"},
                              {std::string(model::kLabelHeadless), ""},
                              {std::string(kManagedBy), "endpoint-controller"}}));
  EXPECT_FALSE(
      plan.endpoints.metadata.annotations.contains(model::kAnnotationLastChangeTriggerTime));
}

// What is not compared does not cause a write: the trigger time, other annotations, the headless
// label, targetRef resourceVersions, and the subset order of an object kube-controller-manager
// wrote (its order is a hash's).
TEST(EndpointsBuilderTest, NoWriteWhenOnlyIgnoredFieldsDiffer) {
  model::Service service = FooService();
  model::ServicePort second = service.spec.ports[0];
  second.name = "bar";
  second.target_port = model::IntOrString::FromString("bar");
  service.spec.ports.push_back(second);
  std::vector<model::Pod> pods = {MakePod(0), MakePod(1)};
  pods[0].spec.containers.push_back(
      model::Container{"app", "", {model::ContainerPort{"bar", 9000, "TCP", 0, ""}}, {}});
  const EndpointsPlan first = Plan(service, pods, nullptr);
  ASSERT_EQ(first.endpoints.subsets.size(), 2U);

  model::Endpoints stored = Stored(first);
  stored.metadata.annotations.erase(std::string(kAnnotationWrittenSubsets));
  stored.metadata.annotations["note"] = "kept";
  stored.metadata.labels[std::string(model::kLabelHeadless)] = "";
  std::reverse(stored.subsets.begin(), stored.subsets.end());
  stored.subsets[0].addresses[0].target_ref->resource_version = "123";
  EndpointsBuildOptions options;
  options.trigger_time = model::Time::FromUnixSeconds(5);
  const EndpointsPlan again = Plan(service, pods, &stored, options);
  EXPECT_EQ(again.action, EndpointsPlan::Action::kNone);
}

// A pod change, a Service label change or a stale over-capacity annotation is written as an
// update of the stored object (resourceVersion and foreign annotations kept).
TEST(EndpointsBuilderTest, UpdatesWhenSomethingCompareDiffers) {
  const EndpointsPlan first = Plan(FooService(), {MakePod(0), MakePod(1)}, nullptr);
  model::Endpoints stored = Stored(first);
  stored.metadata.annotations["note"] = "kept";

  EndpointsPlan plan = Plan(FooService(), {MakePod(0), MakePod(1, false)}, &stored);
  EXPECT_EQ(plan.action, EndpointsPlan::Action::kUpdate);
  EXPECT_EQ(plan.endpoints.metadata.resource_version, "7");
  EXPECT_EQ(plan.endpoints.metadata.uid, "uid-endpoints-foo");
  EXPECT_EQ(plan.endpoints.metadata.annotations.at("note"), "kept");
  EXPECT_EQ(Ips(plan.endpoints.subsets[0].not_ready_addresses),
            (std::vector<std::string>{"1.2.3.5"}));

  model::Service relabelled = FooService();
  relabelled.metadata.labels["tier"] = "web";
  plan = Plan(relabelled, {MakePod(0), MakePod(1)}, &stored);
  EXPECT_EQ(plan.action, EndpointsPlan::Action::kUpdate);
  EXPECT_EQ(plan.endpoints.metadata.labels.at("tier"), "web");

  model::Endpoints annotated = stored;
  annotated.metadata.annotations[std::string(model::kAnnotationEndpointsOverCapacity)] = "warning";
  plan = Plan(FooService(), {MakePod(0), MakePod(1)}, &annotated);
  EXPECT_EQ(plan.action, EndpointsPlan::Action::kUpdate);
  EXPECT_FALSE(
      plan.endpoints.metadata.annotations.contains(model::kAnnotationEndpointsOverCapacity));

  // A stored object without a resourceVersion is not from the server: create.
  model::Endpoints unsaved = first.endpoints;
  EXPECT_EQ(Plan(FooService(), {MakePod(0), MakePod(1)}, &unsaved).action,
            EndpointsPlan::Action::kCreate);
}

// Kubernetes 1.33+ (managed_by_label, the default): the label is written, a stored Endpoints
// without it (one kube-controller-manager before 1.33 wrote) is rewritten to carry it, one with it
// (kube-controller-manager 1.33+) is not. Before 1.33 none is written and one found is tolerated,
// so either version's objects are taken over without a write.
TEST(EndpointsBuilderTest, ManagedByLabelAsTheServersVersion) {
  const std::vector<model::Pod> pods = {MakePod(0), MakePod(1)};
  const model::Endpoints labelled = Stored(Plan(FooService(), pods, nullptr));
  ASSERT_EQ(labelled.metadata.labels.at(std::string(kManagedBy)), "endpoint-controller");
  model::Endpoints unlabelled = labelled;
  unlabelled.metadata.labels.erase(std::string(kManagedBy));

  EXPECT_EQ(Plan(FooService(), pods, &labelled).action, EndpointsPlan::Action::kNone);
  const EndpointsPlan relabel = Plan(FooService(), pods, &unlabelled);
  EXPECT_EQ(relabel.action, EndpointsPlan::Action::kUpdate);
  EXPECT_EQ(relabel.endpoints.metadata.labels.at(std::string(kManagedBy)), "endpoint-controller");
  model::Endpoints wrong_value = labelled;
  wrong_value.metadata.labels[std::string(kManagedBy)] = "someone-else";
  EXPECT_EQ(Plan(FooService(), pods, &wrong_value).action, EndpointsPlan::Action::kUpdate);

  EndpointsBuildOptions before_133;
  before_133.managed_by_label = false;
  const EndpointsPlan created = Plan(FooService(), pods, nullptr, before_133);
  EXPECT_FALSE(created.endpoints.metadata.labels.contains(std::string(kManagedBy)));
  EXPECT_EQ(Plan(FooService(), pods, &unlabelled, before_133).action, EndpointsPlan::Action::kNone);
  EXPECT_EQ(Plan(FooService(), pods, &labelled, before_133).action, EndpointsPlan::Action::kNone);
  // A write for another reason drops it, as kube-controller-manager before 1.33 would.
  const EndpointsPlan changed = Plan(FooService(), {MakePod(0)}, &labelled, before_133);
  EXPECT_EQ(changed.action, EndpointsPlan::Action::kUpdate);
  EXPECT_FALSE(changed.endpoints.metadata.labels.contains(std::string(kManagedBy)));

  // A Service that carries the key itself is not rewritten forever (upstream compares the
  // Service's labels with the stored ones less the key, and never finds them equal).
  model::Service odd = FooService();
  odd.metadata.labels[std::string(kManagedBy)] = "mine";
  const model::Endpoints odd_stored = Stored(Plan(odd, pods, nullptr));
  EXPECT_EQ(odd_stored.metadata.labels.at(std::string(kManagedBy)), "endpoint-controller");
  EXPECT_EQ(Plan(odd, pods, &odd_stored).action, EndpointsPlan::Action::kNone);
}

// KEP-4770: an Endpoints is ours when it carries our mark matching its subsets, or when its subsets
// are what we would write; another writer's object (subsets changed under our mark, no mark) is
// not.
TEST(EndpointsBuilderTest, WrittenByEndpointsController) {
  const std::vector<model::Pod> pods = {MakePod(0), MakePod(1)};
  const EndpointsPlan first = Plan(FooService(), pods, nullptr);
  const model::Endpoints ours = Stored(first);
  // Pods changed since our write: the mark still identifies it.
  const EndpointsPlan now = Plan(FooService(), {MakePod(0)}, &ours);
  EXPECT_TRUE(WrittenByEndpointsController(ours, now));

  model::Endpoints unmarked = ours;
  unmarked.metadata.annotations.clear();
  EXPECT_TRUE(WrittenByEndpointsController(unmarked, first));
  EXPECT_FALSE(WrittenByEndpointsController(unmarked, now));

  model::Endpoints rewritten = ours;  // another controller rewrote the subsets, keeping annotations
  rewritten.subsets[0].addresses = {Address("192.168.0.1", "x")};
  EXPECT_FALSE(WrittenByEndpointsController(rewritten, now));
}

}  // namespace
}  // namespace slicewright::reconcile

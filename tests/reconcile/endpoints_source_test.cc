#include "slicewright/reconcile/endpoints_source.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "slicewright/model/core.h"
#include "slicewright/model/well_known.h"
#include "slicewright/reconcile/endpoints_builder.h"
#include "slicewright/reconcile/planner.h"
#include "slicewright/reconcile/render.h"

#include "reconcile/planner_test_util.h"

namespace slicewright::reconcile {
namespace {

using model::CoreEndpointPort;
using model::EndpointAddress;
using model::EndpointSubset;

// ---- builders (namespace test, Endpoints and selector-less Service foo) ----

EndpointAddress Address(std::string ip, std::string hostname = "",
                        std::optional<std::string> node = std::nullopt,
                        const std::string& pod = "") {
  EndpointAddress address;
  address.ip = std::move(ip);
  address.hostname = std::move(hostname);
  address.node_name = std::move(node);
  if (!pod.empty()) {
    address.target_ref = model::ObjectReference{"Pod", "test", pod, "uid-" + pod, "", "", ""};
  }
  return address;
}

CoreEndpointPort CorePort(std::string name, int port, std::string protocol = "TCP") {
  return CoreEndpointPort{std::move(name), port, std::move(protocol), std::nullopt};
}

model::Endpoints FooEndpoints(std::vector<EndpointSubset> subsets = {}) {
  model::Endpoints endpoints;
  endpoints.metadata.namespace_ = "test";
  endpoints.metadata.name = "foo";
  endpoints.metadata.uid = "uid-ep-foo";
  endpoints.subsets = std::move(subsets);
  return endpoints;
}

model::Service SelectorlessFoo() {
  model::Service service;
  service.metadata.namespace_ = "test";
  service.metadata.name = "foo";
  service.metadata.uid = "test-foo";
  return service;
}

// Upstream's two-subset fixture: ports 80/443 with 2 addresses, ports 3000/3001 with 3.
EndpointSubset Subset1(std::vector<EndpointAddress> addresses = {}) {
  if (addresses.empty()) {
    addresses = {Address("10.0.0.1", "pod-1", "node-1"), Address("10.0.0.2", "pod-2", "node-2")};
  }
  return EndpointSubset{
      std::move(addresses), {}, {CorePort("http", 80), CorePort("https", 443, "UDP")}};
}

EndpointSubset Subset2(std::vector<EndpointAddress> addresses = {}) {
  if (addresses.empty()) {
    addresses = {Address("10.0.1.1", "pod-11", "node-1"), Address("10.0.1.2", "pod-12", "node-2"),
                 Address("10.0.1.3", "pod-13", "node-3")};
  }
  return EndpointSubset{
      std::move(addresses), {}, {CorePort("http", 3000), CorePort("https", 3001, "UDP")}};
}

std::vector<model::EndpointPort> SlicePorts(const EndpointSubset& subset) {
  std::vector<model::EndpointPort> out;
  for (const CoreEndpointPort& port : subset.ports) {
    out.push_back(model::EndpointPort{port.name, port.protocol, port.port, port.app_protocol});
  }
  return out;
}

model::StringMap MirrorLabels(model::StringMap extra = {}) {
  extra[std::string(model::kLabelServiceName)] = "foo";
  extra[std::string(model::kLabelManagedBy)] = std::string(model::kManagedByMirroringController);
  return extra;
}

// A mirrored slice as the controller would have stored it.
model::EndpointSlice MirroredSlice(std::string name, std::vector<model::EndpointPort> ports,
                                   std::vector<model::Endpoint> endpoints,
                                   std::string address_type = "IPv4") {
  model::EndpointSlice slice;
  slice.metadata.name = std::move(name);
  slice.metadata.namespace_ = "test";
  slice.metadata.uid = "uid-" + slice.metadata.name;
  slice.metadata.resource_version = "3";
  slice.metadata.generation = 1;
  slice.metadata.labels = MirrorLabels();
  slice.metadata.owner_references = {
      model::OwnerReference{"v1", "Endpoints", "foo", "uid-ep-foo", true, true}};
  slice.address_type = std::move(address_type);
  slice.ports = std::move(ports);
  slice.endpoints = std::move(endpoints);
  return slice;
}

model::Endpoint MirroredEndpoint(std::string ip, std::string hostname,
                                 std::optional<std::string> node, bool ready = true) {
  model::Endpoint endpoint;
  endpoint.addresses = {std::move(ip)};
  endpoint.conditions.ready = ready;
  if (!hostname.empty()) endpoint.hostname = std::move(hostname);
  endpoint.node_name = std::move(node);
  return endpoint;
}

struct Planned {
  Plan plan;
  MirroringStats stats;
};

Planned Mirror(const model::Endpoints& endpoints,
               const std::vector<model::EndpointSlice>& existing = {},
               const MirroringOptions& options = {},
               const model::Service& service = SelectorlessFoo()) {
  Planned out;
  const DesiredEndpoints desired = DesiredFromEndpoints(endpoints, service, options, &out.stats);
  out.plan = PlanSlices(desired, existing, MirroringPlanOptions(options));
  return out;
}

std::size_t EndpointCount(const Plan& plan) {
  std::size_t count = 0;
  for (const SliceAction& action : plan.actions) {
    if (action.operation != Operation::kDelete) count += action.slice.endpoints.size();
  }
  return count;
}

std::vector<std::string> Reasons(const Plan& plan) {
  std::vector<std::string> out;
  for (const Diagnostic& diagnostic : plan.diagnostics) out.push_back(diagnostic.reason);
  return out;
}

// ---- which Endpoints are mirrored ----

// Spec §12 "Mirror if and only if", with KEP-4770's label and its gate (§11.4).
TEST(EndpointsSourceTest, DecidesWhichEndpointsAreMirrored) {
  const model::Endpoints plain = FooEndpoints();
  const model::Service service = SelectorlessFoo();
  const MirroringOptions options;
  EXPECT_EQ(DecideMirroring(&plain, &service, options), MirrorDecision::kMirror);
  EXPECT_EQ(DecideMirroring(nullptr, &service, options), MirrorDecision::kEndpointsNotFound);
  EXPECT_EQ(DecideMirroring(&plain, nullptr, options), MirrorDecision::kServiceNotFound);

  model::Endpoints skip = plain;
  skip.metadata.labels[std::string(model::kLabelSkipMirror)] = "true";
  EXPECT_EQ(DecideMirroring(&skip, &service, options), MirrorDecision::kSkipMirrorLabel);
  EXPECT_FALSE(ShouldMirrorEndpoints(skip));
  skip.metadata.labels[std::string(model::kLabelSkipMirror)] = "false";  // only "true" skips
  EXPECT_EQ(DecideMirroring(&skip, &service, options), MirrorDecision::kMirror);
  EXPECT_TRUE(ShouldMirrorEndpoints(skip));

  model::Endpoints leader = plain;
  leader.metadata.annotations[std::string(model::kAnnotationLeader)] = "{}";
  EXPECT_EQ(DecideMirroring(&leader, &service, options), MirrorDecision::kLeaderElection);
  EXPECT_FALSE(ShouldMirrorEndpoints(leader));

  model::Service selected = service;
  selected.spec.selector = model::StringMap{};  // empty but not nil: still a selector
  EXPECT_EQ(DecideMirroring(&plain, &selected, options), MirrorDecision::kServiceHasSelector);

  model::Service delegated = service;
  delegated.metadata.labels[std::string(model::kLabelEndpointControllerName)] = "multus";
  EXPECT_EQ(DecideMirroring(&plain, &delegated, options), MirrorDecision::kServiceDelegated);
  MirroringOptions gate_off;
  gate_off.external_endpoint_controller = false;
  EXPECT_EQ(DecideMirroring(&plain, &delegated, gate_off), MirrorDecision::kMirror);
  EXPECT_EQ(MirrorDecisionName(MirrorDecision::kServiceDelegated),
            "Service labelled endpoint-controller-name");
}

// ---- RepackSubsets ----

// Addresses are de-duplicated by (IP, UID); ports with equal address sets share a subset.
TEST(EndpointsSourceTest, RepackMergesPortsWithTheSameAddresses) {
  const std::vector<EndpointSubset> subsets = {
      EndpointSubset{{Address("10.0.0.2", "", std::nullopt, "b"), Address("10.0.0.1")},
                     {},
                     {CorePort("http", 80)}},
      EndpointSubset{{Address("10.0.0.1"), Address("10.0.0.2", "", std::nullopt, "b")},
                     {},
                     {CorePort("https", 443)}},
      EndpointSubset{{Address("10.0.0.1")}, {}, {CorePort("http", 80)}},  // a duplicate pair
  };
  const std::vector<EndpointSubset> repacked = RepackSubsets(subsets);
  ASSERT_EQ(repacked.size(), 1U);
  ASSERT_EQ(repacked[0].addresses.size(), 2U);
  EXPECT_EQ(repacked[0].addresses[0].ip, "10.0.0.1");
  EXPECT_EQ(repacked[0].addresses[1].ip, "10.0.0.2");
  EXPECT_TRUE(repacked[0].not_ready_addresses.empty());
  // Both ports (in upstream's hash order: endpoints_builder_test pins it).
  ASSERT_EQ(repacked[0].ports.size(), 2U);
  EXPECT_NE(std::find(repacked[0].ports.begin(), repacked[0].ports.end(), CorePort("http", 80)),
            repacked[0].ports.end());
  EXPECT_NE(std::find(repacked[0].ports.begin(), repacked[0].ports.end(), CorePort("https", 443)),
            repacked[0].ports.end());
}

// For one port, not-ready wins over ready; differing readiness splits the port sets.
TEST(EndpointsSourceTest, RepackNotReadyWinsPerPort) {
  const std::vector<EndpointSubset> subsets = {
      EndpointSubset{{Address("10.0.0.1")}, {}, {CorePort("a", 1), CorePort("b", 2)}},
      EndpointSubset{{}, {Address("10.0.0.1")}, {CorePort("a", 1)}},
  };
  const std::vector<EndpointSubset> repacked = RepackSubsets(subsets);
  ASSERT_EQ(repacked.size(), 2U);
  // In upstream's hash order; which one is port 1's does not matter here.
  const bool a_first = repacked[0].ports == std::vector<CoreEndpointPort>{CorePort("a", 1)};
  const EndpointSubset& a = repacked[a_first ? 0 : 1];
  const EndpointSubset& b = repacked[a_first ? 1 : 0];
  EXPECT_EQ(a.ports, std::vector<CoreEndpointPort>{CorePort("a", 1)});
  EXPECT_TRUE(a.addresses.empty());
  ASSERT_EQ(a.not_ready_addresses.size(), 1U);
  EXPECT_EQ(b.ports, std::vector<CoreEndpointPort>{CorePort("b", 2)});
  ASSERT_EQ(b.addresses.size(), 1U);
}

// Same IP, different targetRef UIDs: two addresses, the one without a targetRef first. A subset
// without ports stays without ports unless a ported subset has exactly its addresses.
TEST(EndpointsSourceTest, RepackKeepsDistinctUidsAndPortlessSubsets) {
  const std::vector<EndpointSubset> subsets = {
      EndpointSubset{{Address("10.0.0.5", "", std::nullopt, "p2"), Address("10.0.0.5")}, {}, {}},
      EndpointSubset{{Address("10.0.0.9")}, {}, {}},
      EndpointSubset{{Address("10.0.0.9")}, {}, {CorePort("x", 9)}},
  };
  std::vector<EndpointSubset> repacked = RepackSubsets(subsets);
  ASSERT_EQ(repacked.size(), 2U);
  // The portless stand-in has 10.0.0.5 x2 and 10.0.0.9; port 9 has 10.0.0.9 only.
  EXPECT_TRUE(repacked[0].ports.empty());
  ASSERT_EQ(repacked[0].addresses.size(), 3U);
  EXPECT_EQ(repacked[0].addresses[0].ip, "10.0.0.5");
  EXPECT_FALSE(repacked[0].addresses[0].target_ref.has_value());
  EXPECT_EQ(repacked[0].addresses[1].target_ref->uid, "uid-p2");
  EXPECT_EQ(repacked[1].ports, std::vector<CoreEndpointPort>{CorePort("x", 9)});

  // Exactly the same addresses: the portless subset merges into the ported one.
  const std::vector<EndpointSubset> same = {
      EndpointSubset{{Address("10.0.0.9")}, {}, {}},
      EndpointSubset{{Address("10.0.0.9")}, {}, {CorePort("x", 9)}},
  };
  repacked = RepackSubsets(same);
  ASSERT_EQ(repacked.size(), 1U);
  EXPECT_EQ(repacked[0].ports, std::vector<CoreEndpointPort>{CorePort("x", 9)});

  // Ports without addresses vanish.
  EXPECT_TRUE(RepackSubsets(std::vector<EndpointSubset>{{{}, {}, {CorePort("x", 9)}}}).empty());
}

// ---- desired state ----

// Owner, address types, labels, annotations and the endpoint form (spec §12).
TEST(EndpointsSourceTest, DesiredStateMirrorsTheEndpoints) {
  model::Endpoints endpoints = FooEndpoints(
      {EndpointSubset{{Address("010.000.000.001", "pod-1", "node-1", "pod-1"),
                       Address("1234::5678:0000:0000:9abc:def0")},
                      {Address("10.0.0.7", "", "node-2")},
                      {CoreEndpointPort{"http", 80, "TCP", std::string("kubernetes.io/h2c")}}}});
  endpoints.metadata.labels = {{"app", "web"},
                               {std::string(model::kLabelServiceName), "spoofed"},
                               {std::string(model::kLabelHeadless), ""}};
  endpoints.metadata.annotations = {
      {"team", "net"},
      {std::string(model::kAnnotationLastChangeTriggerTime), "2024-01-01T00:00:00Z"},
      {std::string(model::kAnnotationLastAppliedConfig), "{}"},
      {std::string(kAnnotationWrittenSubsets), "0123456789abcdef"},
      {std::string(model::kAnnotationEndpointsOverCapacity), "truncated"}};

  MirroringStats stats;
  const DesiredEndpoints desired =
      DesiredFromEndpoints(endpoints, SelectorlessFoo(), MirroringOptions{}, &stats);
  EXPECT_EQ(desired.owner, (Owner{"v1", "Endpoints", "test", "foo", "uid-ep-foo", false}));
  EXPECT_EQ(desired.address_types, (std::vector<std::string>{"IPv4", "IPv6"}));
  // Headless is an ordinary label here; service-name and managed-by are ours.
  EXPECT_EQ(desired.labels,
            MirrorLabels({{"app", "web"}, {std::string(model::kLabelHeadless), ""}}));
  // The over-capacity annotation of a truncated Endpoints is mirrored like any other.
  EXPECT_EQ(
      desired.annotations,
      (model::StringMap{{"team", "net"},
                        {std::string(model::kAnnotationEndpointsOverCapacity), "truncated"}}));
  EXPECT_TRUE(desired.trigger_time.IsZero());
  EXPECT_TRUE(desired.diagnostics.empty());
  EXPECT_EQ(stats, (MirroringStats{3, 3, 0}));

  ASSERT_EQ(desired.groups.size(), 2U);
  const EndpointGroup& ipv4 = desired.groups[0];
  const EndpointGroup& ipv6 = desired.groups[1];
  EXPECT_EQ(ipv4.address_type, "IPv4");
  EXPECT_EQ(ipv6.address_type, "IPv6");
  const std::vector<model::EndpointPort> ports = {
      model::EndpointPort{"http", "TCP", 80, std::string("kubernetes.io/h2c")}};
  EXPECT_EQ(ipv4.ports, ports);
  EXPECT_EQ(ipv6.ports, ports);

  ASSERT_EQ(ipv4.endpoints.size(), 2U);
  const model::Endpoint& ready = ipv4.endpoints[0];
  EXPECT_EQ(ready.addresses, model::EndpointAddresses{"10.0.0.1"});  // canonical
  EXPECT_EQ(ready.conditions, (model::EndpointConditions{true, std::nullopt, std::nullopt}));
  EXPECT_EQ(ready.hostname, "pod-1");
  EXPECT_EQ(ready.node_name, "node-1");
  ASSERT_TRUE(ready.target_ref.has_value());
  EXPECT_EQ(ready.target_ref->uid, "uid-pod-1");
  EXPECT_FALSE(ready.zone.has_value());
  const model::Endpoint& not_ready = ipv4.endpoints[1];
  EXPECT_EQ(not_ready.addresses, model::EndpointAddresses{"10.0.0.7"});
  EXPECT_EQ(not_ready.conditions.ready, false);
  EXPECT_FALSE(not_ready.hostname.has_value());  // empty hostname is not written
  EXPECT_FALSE(not_ready.target_ref.has_value());

  ASSERT_EQ(ipv6.endpoints.size(), 1U);
  EXPECT_EQ(ipv6.endpoints[0].addresses, model::EndpointAddresses{"1234::5678:0:0:9abc:def0"});
  EXPECT_FALSE(ipv6.endpoints[0].node_name.has_value());
}

// The budget is per subset, over both families, ready addresses first; the diagnostic counts
// every skipped address.
TEST(EndpointsSourceTest, TruncatesEachSubsetToTheMaximum) {
  const model::Endpoints endpoints = FooEndpoints(
      {EndpointSubset{{Address("10.0.0.1"), Address("2001:db8::1"), Address("10.0.0.2")},
                      {Address("10.0.0.3"), Address("10.0.0.4")},
                      {CorePort("http", 80)}}});
  MirroringOptions options;
  options.max_endpoints_per_subset = 4;
  MirroringStats stats;
  const DesiredEndpoints desired =
      DesiredFromEndpoints(endpoints, SelectorlessFoo(), options, &stats);
  EXPECT_EQ(stats, (MirroringStats{5, 4, 0}));
  EXPECT_EQ(stats.skipped(), 1);
  ASSERT_EQ(desired.groups.size(), 2U);
  ASSERT_EQ(desired.groups[0].endpoints.size(), 3U);  // 10.0.0.1, 10.0.0.2 ready, 10.0.0.3 not
  EXPECT_EQ(desired.groups[0].endpoints[2].addresses[0], "10.0.0.3");
  EXPECT_EQ(desired.groups[0].endpoints[2].conditions.ready, false);
  EXPECT_EQ(desired.groups[1].endpoints.size(), 1U);
  ASSERT_EQ(desired.diagnostics.size(), 1U);
  EXPECT_EQ(desired.diagnostics[0],
            (Diagnostic{Diagnostic::Severity::kWarning, "TooManyAddressesToMirror",
                        "A max of 4 addresses can be mirrored to EndpointSlices per Endpoints "
                        "subset. 1 addresses were skipped",
                        false}));
}

// Invalid IPs are skipped, counted, reported once, and do not use up the budget.
TEST(EndpointsSourceTest, SkipsInvalidIps) {
  const model::Endpoints endpoints = FooEndpoints({EndpointSubset{
      // Repack sorts by IP text, so the two invalid ones come first and the budget of 2 still
      // takes both valid ones.
      {Address("10.0.0.1"), Address("0bad"), Address("10.0.0.2"), Address("1.1.1.256")},
      {},
      {CorePort("http", 80)}}});
  MirroringOptions options;
  options.max_endpoints_per_subset = 2;
  MirroringStats stats;
  const DesiredEndpoints desired =
      DesiredFromEndpoints(endpoints, SelectorlessFoo(), options, &stats);
  EXPECT_EQ(stats, (MirroringStats{4, 2, 2}));
  ASSERT_EQ(desired.groups.size(), 2U);
  EXPECT_EQ(desired.groups[0].endpoints.size(), 2U);
  ASSERT_EQ(desired.diagnostics.size(), 1U);  // skipped == invalid: no TooManyAddressesToMirror
  EXPECT_EQ(desired.diagnostics[0],
            (Diagnostic{Diagnostic::Severity::kWarning, "InvalidIPAddress",
                        "Skipped 2 invalid IP addresses when mirroring to EndpointSlices", false}));
}

// Two addresses that are one endpoint (same canonical IP, no targetRef): the later one wins.
TEST(EndpointsSourceTest, EndpointsAreUniqueByIdentity) {
  const model::Endpoints endpoints = FooEndpoints(
      {EndpointSubset{{Address("10.0.0.1", "", "node-a"), Address("010.0.0.1", "", "node-b")},
                      {},
                      {CorePort("http", 80)}}});
  const DesiredEndpoints desired =
      DesiredFromEndpoints(endpoints, SelectorlessFoo(), MirroringOptions{});
  ASSERT_EQ(desired.groups[0].endpoints.size(), 1U);
  // Repack sorts "010.0.0.1" before "10.0.0.1", so the latter is inserted last.
  EXPECT_EQ(desired.groups[0].endpoints[0].node_name, "node-a");
}

// The plan options upstream's mirroring reconciler amounts to.
TEST(EndpointsSourceTest, MirroringPlanOptions) {
  MirroringOptions options;
  options.max_endpoints_per_subset = 250;
  const PlanOptions plan = MirroringPlanOptions(options);
  EXPECT_EQ(plan.max_endpoints_per_slice, 250);
  EXPECT_EQ(plan.managed_by, "endpointslicemirroring-controller.k8s.io");
  EXPECT_FALSE(plan.placeholder_enabled);
  EXPECT_FALSE(plan.ownership_enforced);
  EXPECT_TRUE(plan.compare_annotations);
  EXPECT_EQ(plan.labels_ignored_for_change,
            (std::vector<std::string>{"kubernetes.io/service-name",
                                      "endpointslice.kubernetes.io/managed-by"}));
  EXPECT_EQ(plan.topology, nullptr);
}

// ---- spec §16 mirroring scenarios, through PlanSlices ----

// Scenario 48: nothing to mirror creates nothing (no placeholder).
TEST(EndpointsSourceTest, Scenario48_NoAddressesNoSlices) {
  EXPECT_TRUE(Mirror(FooEndpoints()).plan.actions.empty());
  const Planned no_addresses =
      Mirror(FooEndpoints({EndpointSubset{{}, {}, {CorePort("http", 80)}}}));
  EXPECT_TRUE(no_addresses.plan.actions.empty()) << Render(no_addresses.plan);
  EXPECT_EQ(no_addresses.stats.addresses, 0);
}

// Scenario 49: one slice per subset and address type; invalid IPs skipped with an event.
TEST(EndpointsSourceTest, Scenario49_SlicesPerSubsetAndFamily) {
  const Planned two = Mirror(FooEndpoints({Subset1(), Subset2()}));
  EXPECT_EQ(two.plan.Count(Operation::kCreate), 2U);
  EXPECT_EQ(two.plan.actions.size(), 2U);
  EXPECT_EQ(EndpointCount(two.plan), 5U);
  EXPECT_EQ(two.plan.stats.added(), 5);
  for (const SliceAction& action : two.plan.actions) {
    const model::EndpointSlice& slice = action.slice;
    EXPECT_EQ(slice.metadata.generate_name, "foo-");
    EXPECT_EQ(slice.metadata.namespace_, "test");
    EXPECT_EQ(slice.metadata.labels, MirrorLabels());
    EXPECT_TRUE(slice.metadata.annotations.empty());
    EXPECT_EQ(slice.metadata.owner_references,
              (std::vector<model::OwnerReference>{
                  model::OwnerReference{"v1", "Endpoints", "foo", "uid-ep-foo", true, true}}));
  }

  const Planned dual = Mirror(FooEndpoints(
      {Subset1({Address("10.0.0.1", "pod-1"), Address("2001:db8:2222:3333:4444:5555:6666:7777")}),
       Subset2({Address("10.0.1.1"), Address("10.0.1.2"), Address("2001:db8:3333::1")})}));
  EXPECT_EQ(dual.plan.Count(Operation::kCreate), 4U);
  EXPECT_EQ(EndpointCount(dual.plan), 5U);

  const Planned invalid = Mirror(
      FooEndpoints({Subset1({Address("10.0.0.1"), Address("invalid-ip")}),
                    Subset2({Address("10.0.1.1"), Address("10.0.1.2"), Address("not-an-ip")})}));
  EXPECT_EQ(invalid.plan.Count(Operation::kCreate), 2U);
  EXPECT_EQ(EndpointCount(invalid.plan), 3U);
  EXPECT_EQ(invalid.stats.skipped(), 2);
  EXPECT_EQ(Reasons(invalid.plan), std::vector<std::string>{"InvalidIPAddress"});

  const Planned all_invalid =
      Mirror(FooEndpoints({Subset1({Address("a"), Address("b")}),
                           Subset2({Address("c"), Address("d"), Address("e")})}));
  EXPECT_TRUE(all_invalid.plan.actions.empty());
  EXPECT_EQ(all_invalid.stats.skipped(), 5);
  EXPECT_EQ(Reasons(all_invalid.plan), std::vector<std::string>{"InvalidIPAddress"});
}

// Scenario 50: an outdated slice for subset 1 is updated in place, subset 2 is created; an
// identical slice is left alone.
TEST(EndpointsSourceTest, Scenario50_ExistingSlicesUpdatedOrKept) {
  const model::Endpoints endpoints = FooEndpoints({Subset1(), Subset2()});
  model::Endpoint two_addresses = MirroredEndpoint("10.0.0.1", "pod-1", std::nullopt);
  two_addresses.addresses.push_back("10.0.0.3");
  const std::vector<model::EndpointSlice> outdated = {
      MirroredSlice("foo-1", SlicePorts(Subset1()),
                    {MirroredEndpoint("10.0.0.2", "pod-2", std::nullopt), two_addresses})};
  const Planned planned = Mirror(endpoints, outdated);
  ASSERT_EQ(planned.plan.actions.size(), 2U) << Render(planned.plan);
  EXPECT_EQ(planned.plan.Count(Operation::kCreate), 1U);
  EXPECT_EQ(planned.plan.Count(Operation::kUpdate), 1U);
  EXPECT_EQ(planned.plan.stats.added(), 4);
  EXPECT_EQ(planned.plan.stats.removed(), 1);
  EXPECT_EQ(CountUpdatedEndpoints(planned.plan, outdated), 1);  // 10.0.0.2 gained its node
  for (const SliceAction& action : planned.plan.actions) {
    if (action.operation == Operation::kUpdate) {
      EXPECT_EQ(action.slice.metadata.name, "foo-1");
      EXPECT_EQ(action.slice.metadata.resource_version, "3");
      // The kept endpoint stays first; the added one follows (slice order is not significant).
      EXPECT_EQ(action.slice.endpoints,
                (std::vector<model::Endpoint>{MirroredEndpoint("10.0.0.2", "pod-2", "node-2"),
                                              MirroredEndpoint("10.0.0.1", "pod-1", "node-1")}));
    }
  }

  const std::vector<model::EndpointSlice> identical = {
      MirroredSlice("foo-1", SlicePorts(Subset1()),
                    {MirroredEndpoint("10.0.0.2", "pod-2", "node-2"),
                     MirroredEndpoint("10.0.0.1", "pod-1", "node-1")})};
  const Planned kept = Mirror(endpoints, identical);
  ASSERT_EQ(kept.plan.actions.size(), 1U) << Render(kept.plan);
  EXPECT_EQ(kept.plan.actions[0].operation, Operation::kCreate);
  EXPECT_EQ(kept.plan.unchanged, std::vector<std::string>{"foo-1"});
}

// Scenario 51: maxEndpointsPerSubset 2 truncates the 3-address subset.
TEST(EndpointsSourceTest, Scenario51_MaxEndpointsPerSubset) {
  MirroringOptions options;
  options.max_endpoints_per_subset = 2;
  const Planned planned = Mirror(FooEndpoints({Subset1(), Subset2()}), {}, options);
  EXPECT_EQ(planned.plan.Count(Operation::kCreate), 2U);
  EXPECT_EQ(EndpointCount(planned.plan), 4U);
  EXPECT_EQ(planned.stats.skipped(), 1);
  EXPECT_EQ(Reasons(planned.plan), std::vector<std::string>{"TooManyAddressesToMirror"});
}

// Scenario 52: an Endpoints being deleted gets no new slices (updates still happen).
TEST(EndpointsSourceTest, Scenario52_PendingDeletionCreatesNothing) {
  model::Endpoints endpoints = FooEndpoints({Subset1(), Subset2()});
  endpoints.metadata.deletion_timestamp = model::Time::FromUnixSeconds(1'700'000'000);
  EXPECT_TRUE(Mirror(endpoints).plan.actions.empty());

  const std::vector<model::EndpointSlice> outdated = {
      MirroredSlice("foo-1", SlicePorts(Subset1()), {MirroredEndpoint("10.0.0.2", "", "x")})};
  const Planned planned = Mirror(endpoints, outdated);
  ASSERT_EQ(planned.plan.actions.size(), 1U) << Render(planned.plan);
  EXPECT_EQ(planned.plan.actions[0].operation, Operation::kUpdate);
}

// Scenario 53: not mirrored any more (skip-mirror, leader election, a selector, KEP-4770, no
// Service) -> every mirrored slice is deleted and nothing is created.
TEST(EndpointsSourceTest, Scenario53_NotMirroredDeletesMirroredSlices) {
  const std::vector<model::EndpointSlice> existing = {
      MirroredSlice("foo-1", SlicePorts(Subset1()),
                    {MirroredEndpoint("10.0.0.1", "pod-1", "node-1")}),
      MirroredSlice("foo-2", {}, {MirroredEndpoint("2001:db8::1", "", std::nullopt)}, "IPv6")};
  struct Case {
    std::string_view name;
    model::Endpoints endpoints;
    model::Service service;
  };
  model::Endpoints skip = FooEndpoints({Subset1()});
  skip.metadata.labels[std::string(model::kLabelSkipMirror)] = "true";
  model::Endpoints leader = FooEndpoints({Subset1()});
  leader.metadata.annotations[std::string(model::kAnnotationLeader)] = "{}";
  model::Service selected = SelectorlessFoo();
  selected.spec.selector = model::StringMap{{"app", "foo"}};
  model::Service delegated = SelectorlessFoo();
  delegated.metadata.labels[std::string(model::kLabelEndpointControllerName)] = "multus";
  const std::vector<Case> cases = {
      {"skip-mirror", skip, SelectorlessFoo()},
      {"leader election", leader, SelectorlessFoo()},
      {"selector", FooEndpoints({Subset1()}), selected},
      {"KEP-4770 label", FooEndpoints({Subset1()}), delegated},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Planned planned = Mirror(c.endpoints, existing, {}, c.service);
    ASSERT_EQ(planned.plan.actions.size(), 2U) << Render(planned.plan);
    EXPECT_EQ(planned.plan.Count(Operation::kDelete), 2U);
  }
  // No Service (or no Endpoints): the controller deletes with PlanDeleteMirrored.
  const Plan deleted = PlanDeleteMirrored(existing);
  ASSERT_EQ(deleted.actions.size(), 2U);
  EXPECT_EQ(deleted.Count(Operation::kDelete), 2U);
  EXPECT_EQ(deleted.actions[0].slice.metadata.name, "foo-1");
}

// Label and annotation changes on the Endpoints rewrite the slice; a user label on the slice is
// removed; a second sync after applying writes nothing.
TEST(EndpointsSourceTest, MetadataChangesRewriteTheSlice) {
  model::Endpoints endpoints = FooEndpoints({Subset1()});
  std::vector<model::EndpointSlice> cluster;
  testing::ApplyPlan(Mirror(endpoints).plan, cluster);
  ASSERT_EQ(cluster.size(), 1U);
  EXPECT_TRUE(Mirror(endpoints, cluster).plan.actions.empty());

  endpoints.metadata.labels["tier"] = "db";
  Planned planned = Mirror(endpoints, cluster);
  ASSERT_EQ(planned.plan.Count(Operation::kUpdate), 1U) << Render(planned.plan);
  EXPECT_EQ(planned.plan.actions[0].slice.metadata.labels, MirrorLabels({{"tier", "db"}}));
  testing::ApplyPlan(planned.plan, cluster);
  EXPECT_TRUE(Mirror(endpoints, cluster).plan.actions.empty());

  endpoints.metadata.annotations["note"] = "x";
  // The trigger time is neither mirrored nor a reason to write.
  endpoints.metadata.annotations[std::string(model::kAnnotationLastChangeTriggerTime)] = "t";
  planned = Mirror(endpoints, cluster);
  ASSERT_EQ(planned.plan.Count(Operation::kUpdate), 1U) << Render(planned.plan);
  EXPECT_EQ(planned.plan.actions[0].slice.metadata.annotations, (model::StringMap{{"note", "x"}}));
  testing::ApplyPlan(planned.plan, cluster);
  EXPECT_TRUE(Mirror(endpoints, cluster).plan.actions.empty());

  cluster[0].metadata.labels["added-by-user"] = "1";
  planned = Mirror(endpoints, cluster);
  ASSERT_EQ(planned.plan.Count(Operation::kUpdate), 1U);
  EXPECT_FALSE(planned.plan.actions[0].slice.metadata.labels.contains("added-by-user"));
}

// Mirroring checks no ownership: a slice owned by an older Endpoints UID is kept as it is.
TEST(EndpointsSourceTest, NoOwnershipCheck) {
  model::EndpointSlice slice = MirroredSlice("foo-1", SlicePorts(Subset1()),
                                             {MirroredEndpoint("10.0.0.1", "pod-1", "node-1"),
                                              MirroredEndpoint("10.0.0.2", "pod-2", "node-2")});
  slice.metadata.owner_references[0].uid = "uid-of-an-older-endpoints";
  const Planned planned = Mirror(FooEndpoints({Subset1()}), {slice});
  EXPECT_TRUE(planned.plan.actions.empty()) << Render(planned.plan);
}

// Decision: mirrored slices are packed by PlanSlices, which keeps every slice of a port set that
// still holds desired endpoints (fewer writes). Upstream's mirroring keeps only the first slice of
// a port set and rebuilds it with all endpoints, deleting the others; both end with every address
// published once. Duplicates across slices are still removed.
TEST(EndpointsSourceTest, SeveralSlicesOfOnePortSetAreKeptNotMerged) {
  const std::vector<model::EndpointSlice> split = {
      MirroredSlice("foo-a", SlicePorts(Subset1()),
                    {MirroredEndpoint("10.0.0.1", "pod-1", "node-1")}),
      MirroredSlice("foo-b", SlicePorts(Subset1()),
                    {MirroredEndpoint("10.0.0.2", "pod-2", "node-2")})};
  EXPECT_TRUE(Mirror(FooEndpoints({Subset1()}), split).plan.actions.empty());

  std::vector<model::EndpointSlice> duplicated = split;
  duplicated[1].endpoints.push_back(MirroredEndpoint("10.0.0.1", "pod-1", "node-1"));
  const Planned planned = Mirror(FooEndpoints({Subset1()}), duplicated);
  ASSERT_EQ(planned.plan.actions.size(), 1U) << Render(planned.plan);
  EXPECT_EQ(planned.plan.actions[0].operation, Operation::kUpdate);
  EXPECT_EQ(planned.plan.actions[0].slice.metadata.name, "foo-b");
  EXPECT_EQ(planned.plan.actions[0].slice.endpoints.size(), 1U);
}

// A port set that went away: its slice is recycled into the new port set's slice (one update).
TEST(EndpointsSourceTest, PortChangeRecyclesTheSlice) {
  std::vector<model::EndpointSlice> cluster;
  testing::ApplyPlan(Mirror(FooEndpoints({Subset1()})).plan, cluster);
  ASSERT_EQ(cluster.size(), 1U);
  EndpointSubset changed = Subset1();
  changed.ports[0].port = 8080;
  const Planned planned = Mirror(FooEndpoints({changed}), cluster);
  ASSERT_EQ(planned.plan.actions.size(), 1U) << Render(planned.plan);
  EXPECT_EQ(planned.plan.actions[0].operation, Operation::kUpdate);
  EXPECT_EQ(planned.plan.actions[0].slice.metadata.name, cluster[0].metadata.name);
  EXPECT_EQ(PortMapKey(planned.plan.actions[0].slice.ports), PortMapKey(SlicePorts(changed)));
}

}  // namespace
}  // namespace slicewright::reconcile

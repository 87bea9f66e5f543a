#include "slicewright/reconcile/service_endpoints.h"

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "slicewright/model/core.h"
#include "slicewright/model/discovery.h"
#include "slicewright/model/well_known.h"
#include "slicewright/reconcile/fingerprint.h"
#include "slicewright/reconcile/planner.h"
#include "slicewright/reconcile/pod_source.h"

namespace slicewright::reconcile {
namespace {

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

model::Pod MakePod(const std::string& name, const std::vector<std::string>& ips, bool ready) {
  model::Pod pod;
  pod.metadata.namespace_ = "test";
  pod.metadata.name = name;
  pod.metadata.uid = "uid-" + name;
  pod.metadata.labels = {{"foo", "bar"}};
  pod.spec.node_name = "node-1";
  pod.status.phase = "Running";
  if (!ips.empty()) {
    pod.status.pod_ip = ips[0];
  }
  pod.status.pod_ips = ips;
  pod.status.conditions = {model::PodCondition{"Ready", ready ? "True" : "False", {}, "", ""}};
  return pod;
}

model::Node MakeNode(std::string name, const std::string& zone) {
  model::Node node;
  node.metadata.name = std::move(name);
  if (!zone.empty()) {
    node.metadata.labels[std::string(model::kLabelTopologyZone)] = zone;
  }
  return node;
}

struct Nodes {
  std::map<std::string, model::Node, std::less<>> by_name;
  const model::Node* operator()(std::string_view name) const {
    auto it = by_name.find(name);
    return it == by_name.end() ? nullptr : &it->second;
  }
};

// DesiredFromService over `pods` in name order: what the builder must equal.
DesiredEndpoints Reference(const model::Service& service,
                           const std::map<std::string, model::Pod>& pods, const Nodes& nodes,
                           const ServiceSourceOptions& options = {}) {
  std::vector<const model::Pod*> pointers;
  for (const auto& entry : pods) {
    pointers.push_back(&entry.second);
  }
  return DesiredFromService(service, pointers, nodes, options);
}

void ExpectSameDesired(const DesiredEndpoints& got, const DesiredEndpoints& want) {
  EXPECT_EQ(got.owner, want.owner);
  EXPECT_EQ(got.address_types, want.address_types);
  EXPECT_EQ(got.labels, want.labels);
  EXPECT_EQ(got.annotations, want.annotations);
  EXPECT_EQ(got.trigger_time, want.trigger_time);
  EXPECT_EQ(got.traffic_distribution, want.traffic_distribution);
  EXPECT_EQ(got.topology_hints_requested, want.topology_hints_requested);
  EXPECT_EQ(got.diagnostics, want.diagnostics);
  ASSERT_EQ(got.groups.size(), want.groups.size());
  for (std::size_t g = 0; g < want.groups.size(); ++g) {
    SCOPED_TRACE("group " + std::to_string(g));
    const EndpointGroup& group = got.groups[g];
    EXPECT_EQ(group.address_type, want.groups[g].address_type);
    EXPECT_EQ(group.ports, want.groups[g].ports);
    EXPECT_EQ(group.endpoints, want.groups[g].endpoints);
    EXPECT_EQ(group.fingerprints, FingerprintEndpoints(group.endpoints));
  }
}

// A readiness flip replaces the endpoint in place, and the builder equals the full derivation.
TEST(ServiceEndpointsBuilderTest, ReadinessFlipUpdatesInPlace) {
  const model::Service service = FooService();
  Nodes nodes;
  nodes.by_name.emplace("node-1", MakeNode("node-1", "zone-a"));
  std::map<std::string, model::Pod> pods;
  for (int i = 0; i < 5; ++i) {
    const std::string name = "pod" + std::to_string(i);
    pods.emplace(name, MakePod(name, {"10.0.0." + std::to_string(9 - i)}, true));
  }
  ServiceEndpointsBuilder builder(service);
  std::vector<const model::Pod*> pointers;
  for (const auto& entry : pods) {
    pointers.push_back(&entry.second);
  }
  builder.SetPods(pointers, nodes);
  ExpectSameDesired(builder.desired(), Reference(service, pods, nodes));
  EXPECT_EQ(builder.pod_count(), 5U);

  model::Pod& pod = pods.at("pod2");
  pod.status.conditions[0].status = "False";
  builder.SetPod(pod, nodes("node-1"));
  ExpectSameDesired(builder.desired(), Reference(service, pods, nodes));
  ASSERT_EQ(builder.desired().groups.size(), 1U);
  EXPECT_EQ(builder.desired().groups[0].endpoints[2].conditions.ready, false);
}

// Adding, re-addressing and removing pods keeps the identity order and the port-set groups, and a
// port set disappears with its last pod.
TEST(ServiceEndpointsBuilderTest, AddMoveRemove) {
  model::Service service = FooService();
  service.spec.ports[0].target_port = model::IntOrString::FromString("http");
  Nodes nodes;
  nodes.by_name.emplace("node-1", MakeNode("node-1", ""));
  std::map<std::string, model::Pod> pods;
  ServiceEndpointsBuilder builder(service);
  const auto set = [&](model::Pod pod) {
    builder.SetPod(pod, nodes(pod.spec.node_name));
    pods.insert_or_assign(pod.metadata.name, std::move(pod));
    ExpectSameDesired(builder.desired(), Reference(service, pods, nodes));
  };
  set(MakePod("b", {"10.0.0.2"}, true));
  set(MakePod("a", {"10.0.0.3"}, true));
  set(MakePod("c", {"10.0.0.1"}, false));
  model::Pod named = MakePod("d", {"10.0.0.0"}, true);
  named.spec.containers = {model::Container{"app", "img", {{"http", 8080, "TCP", 0, ""}}, {}}};
  set(named);
  ASSERT_EQ(builder.desired().groups.size(), 2U);
  set(MakePod("a", {"10.0.0.9"}, true));  // new address: moves to the end
  EXPECT_TRUE(builder.RemovePod("d"));
  pods.erase("d");
  ExpectSameDesired(builder.desired(), Reference(service, pods, nodes));
  EXPECT_EQ(builder.desired().groups.size(), 1U);
  EXPECT_FALSE(builder.RemovePod("d"));
  EXPECT_EQ(builder.pod_count(), 3U);
}

// A pod on a missing Node and invalid pod IPs give the same diagnostics as DesiredFromService,
// and they go away with the pod.
TEST(ServiceEndpointsBuilderTest, Diagnostics) {
  const model::Service service = FooService();
  Nodes nodes;
  nodes.by_name.emplace("node-1", MakeNode("node-1", ""));
  std::map<std::string, model::Pod> pods;
  ServiceEndpointsBuilder builder(service);
  model::Pod lost = MakePod("lost", {"10.0.0.1"}, true);
  lost.spec.node_name = "node-9";
  builder.SetPod(lost, nullptr);
  pods.emplace("lost", lost);
  const model::Pod bad = MakePod("bad", {"10.0.0.2", "nonsense", "10.0.0.x"}, true);
  builder.SetPod(bad, nodes("node-1"));
  pods.emplace("bad", bad);
  ExpectSameDesired(builder.desired(), Reference(service, pods, nodes));
  EXPECT_EQ(builder.desired().diagnostics.size(), 2U);
  builder.RemovePod("lost");
  builder.RemovePod("bad");
  EXPECT_TRUE(builder.desired().diagnostics.empty());
  EXPECT_TRUE(builder.desired().groups.empty());
}

// Random sequences of SetPod and RemovePod on dual-stack, named-port and publishNotReady
// Services: after every step the builder equals DesiredFromService over the same pods.
TEST(ServiceEndpointsBuilderTest, MatchesDesiredFromServiceOnRandomSequences) {
  for (std::uint32_t seed = 1; seed <= 40; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    const auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
    model::Service service = FooService();
    service.spec.ip_families =
        pick(2) == 0 ? std::vector<std::string>{"IPv4", "IPv6"} : std::vector<std::string>{"IPv4"};
    service.spec.publish_not_ready_addresses = pick(4) == 0;
    if (pick(2) == 0) {
      service.spec.ports[0].target_port = model::IntOrString::FromString("http");
    }
    Nodes nodes;
    nodes.by_name.emplace("node-1", MakeNode("node-1", "zone-a"));
    nodes.by_name.emplace("node-2", MakeNode("node-2", ""));
    ServiceSourceOptions options;
    options.trigger_time = model::Time::FromUnixSeconds(1700000000);
    ServiceEndpointsBuilder builder(service, options);
    std::map<std::string, model::Pod> pods;
    if (pick(2) == 0) {
      // Start from a bulk load.
      std::vector<model::Pod> initial;
      for (int i = 0; i < 30; ++i) {
        initial.push_back(MakePod(
            "pod" + std::to_string(pick(40)),
            {"10.0." + std::to_string(pick(3)) + "." + std::to_string(pick(50))}, pick(2) == 0));
      }
      std::vector<const model::Pod*> pointers;
      for (const model::Pod& pod : initial) {
        pointers.push_back(&pod);
        pods.insert_or_assign(pod.metadata.name, pod);
      }
      builder.SetPods(pointers, nodes);
      ExpectSameDesired(builder.desired(), Reference(service, pods, nodes, options));
    }
    for (int step = 0; step < 120; ++step) {
      const std::string name = "pod" + std::to_string(pick(40));
      if (pick(5) == 0) {
        EXPECT_EQ(builder.RemovePod(name), pods.erase(name) == 1);
      } else {
        std::vector<std::string> ips;
        for (int k = pick(3); k > 0; --k) {
          switch (pick(5)) {
            case 0:
              ips.push_back("fd00::" + std::to_string(pick(20)));
              break;
            case 1:
              ips.push_back("bogus" + std::to_string(pick(2)));
              break;
            default:
              ips.push_back("10.0." + std::to_string(pick(3)) + "." + std::to_string(pick(50)));
          }
        }
        model::Pod pod = MakePod(name, ips, pick(2) == 0);
        pod.spec.node_name = std::vector<std::string>{"node-1", "node-2", "node-3", ""}[pick(4)];
        if (pick(4) == 0) {
          pod.spec.containers = {
              model::Container{"app", "img", {{"http", 8080 + pick(2), "TCP", 0, ""}}, {}}};
        }
        if (pick(5) == 0) {
          pod.spec.hostname = "h";
          pod.spec.subdomain = "foo";
        }
        if (pick(10) == 0) {
          pod.status.phase = "Failed";
        }
        if (pick(8) == 0) {
          pod.metadata.deletion_timestamp = model::Time::FromUnixSeconds(5);
        }
        builder.SetPod(pod, pod.spec.node_name.empty() ? nullptr : nodes(pod.spec.node_name));
        pods.insert_or_assign(name, std::move(pod));
      }
      SCOPED_TRACE("step " + std::to_string(step));
      ExpectSameDesired(builder.desired(), Reference(service, pods, nodes, options));
      if (::testing::Test::HasFailure()) {
        return;
      }
    }
  }
}

// The plan from the builder's desired state with fingerprints on both sides equals the plan
// without any fingerprints, over a sequence of pod changes applied like an API server would.
TEST(ServiceEndpointsBuilderTest, FingerprintedPlansEqualPlainPlans) {
  std::mt19937 rng(7);
  const auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  const model::Service service = FooService();
  Nodes nodes;
  nodes.by_name.emplace("node-1", MakeNode("node-1", "zone-a"));
  std::map<std::string, model::Pod> pods;
  for (int i = 0; i < 250; ++i) {
    const std::string name = "pod" + std::to_string(i);
    pods.emplace(
        name,
        MakePod(name, {"10.1." + std::to_string(i / 200) + "." + std::to_string(i % 200)}, true));
  }
  ServiceEndpointsBuilder builder(service);
  std::vector<const model::Pod*> pointers;
  for (const auto& entry : pods) {
    pointers.push_back(&entry.second);
  }
  builder.SetPods(pointers, nodes);
  std::vector<model::EndpointSlice> stored;
  std::vector<SliceFingerprints> fingerprints;
  // The verified-runs cache, kept across plans and aligned with `stored` as the controller keeps
  // it; every ninth step it is misaligned on purpose (rotated), which must cost speed only.
  std::vector<VerifiedRun> verified;
  std::size_t verified_slices = 0;
  int version = 0;
  for (int step = 0; step < 60; ++step) {
    SCOPED_TRACE("step " + std::to_string(step));
    PlanOptions plain;
    plain.max_endpoints_per_slice = 40;
    PlanOptions fast = plain;
    fast.existing_fingerprints = &fingerprints;
    PlanOptions cached = fast;
    cached.verified_runs = &verified;
    if (step % 9 == 8 && verified.size() > 1) {
      std::rotate(verified.begin(), verified.begin() + 1, verified.end());
    }
    const Plan want = PlanSlices(builder.desired(), stored, plain);
    for (const PlanOptions* options : {&fast, &cached}) {
      const Plan got = PlanSlices(builder.desired(), stored, *options);
      ASSERT_EQ(got.actions.size(), want.actions.size());
      for (std::size_t a = 0; a < want.actions.size(); ++a) {
        EXPECT_EQ(got.actions[a].operation, want.actions[a].operation);
        EXPECT_EQ(got.actions[a].slice, want.actions[a].slice);
      }
      EXPECT_EQ(got.unchanged, want.unchanged);
      EXPECT_EQ(got.stats.groups, want.stats.groups);
      EXPECT_EQ(got.stats.per_address_type, want.stats.per_address_type);
    }
    ASSERT_EQ(verified.size(), stored.size());
    verified_slices += static_cast<std::size_t>(std::count_if(
        verified.begin(), verified.end(), [](const VerifiedRun& run) { return !run.ids.empty(); }));
    // Apply the plan: what the informer cache would then hold, fingerprinted once per version.
    for (const SliceAction& action : want.actions) {
      model::EndpointSlice slice = action.slice;
      slice.metadata.resource_version = std::to_string(++version);
      if (action.operation == Operation::kCreate) {
        slice.metadata.name = "foo-" + std::to_string(version);
        slice.metadata.uid = "uid-" + slice.metadata.name;
        stored.push_back(std::move(slice));
        verified.emplace_back();
        continue;
      }
      auto it = std::find_if(stored.begin(), stored.end(), [&](const model::EndpointSlice& s) {
        return s.metadata.name == action.slice.metadata.name;
      });
      ASSERT_NE(it, stored.end());
      if (action.operation == Operation::kDelete) {
        verified.erase(verified.begin() + (it - stored.begin()));
        stored.erase(it);
      } else {
        *it = std::move(slice);
      }
    }
    fingerprints.clear();
    for (const model::EndpointSlice& slice : stored) {
      fingerprints.push_back(FingerprintSlice(slice));
    }
    // One to three pod changes: readiness, a new address, a removal or a new pod.
    for (int k = 1 + pick(3); k > 0; --k) {
      const std::string name = "pod" + std::to_string(pick(300));
      auto it = pods.find(name);
      switch (pick(4)) {
        case 0:
          if (it != pods.end()) {
            builder.RemovePod(name);
            pods.erase(it);
          }
          break;
        case 1: {
          model::Pod pod = MakePod(name, {"10.2.0." + std::to_string(pick(200))}, true);
          builder.SetPod(pod, nodes("node-1"));
          pods.insert_or_assign(name, std::move(pod));
          break;
        }
        default:
          if (it != pods.end()) {
            auto& status = it->second.status.conditions[0].status;
            status = status == "True" ? "False" : "True";
            builder.SetPod(it->second, nodes("node-1"));
          }
      }
    }
  }
  // The cache was used: most slices are unchanged at most steps.
  EXPECT_GT(verified_slices, 60U);
}

}  // namespace
}  // namespace slicewright::reconcile

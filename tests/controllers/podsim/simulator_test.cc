#include "controllers/podsim/simulator.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <stdlib.h>

#include "slicewright/cache/informer_factory.h"
#include "slicewright/client/rest_client.h"
#include "slicewright/client/transport.h"
#include "slicewright/client/typed_client.h"
#include "slicewright/codec/json.h"
#include "slicewright/codec/multus.h"
#include "slicewright/codec/network_status.h"
#include "slicewright/model/network_status.h"
#include "slicewright/model/well_known.h"
#include "slicewright/net/ip.h"

#include "apiserver/rest/serve.h"
#include "controllers/endpointslice/controller.h"
#include "controllers/podsim/networks.h"
#include "fakes/loopback.h"
#include "fakes/objects.h"

// The pod simulator against the real embedded API server: node registration, scheduling,
// addresses (unique, released on deletion, kept across restarts), readiness and its delay, Multus
// network-status, and graceful deletion. Time that matters is a FakeClock moved by the test.
namespace slicewright::controllers::podsim {
namespace {

using test_support::Eventually;
using test_support::TempDir;

using namespace std::chrono_literals;

bool ConditionIs(const model::Pod& pod, std::string_view type, std::string_view status) {
  const model::PodCondition* condition = model::FindPodCondition(pod.status.conditions, type);
  return condition != nullptr && condition->status == status;
}

bool RunningAndReady(const model::Pod& pod) {
  return pod.status.phase == "Running" && model::IsPodReady(pod) && !pod.status.pod_ips.empty();
}

bool InRange(const IpRange& range, const std::string& address) {
  const std::optional<net::IpAddress> parsed = net::ParseIpSloppy(address);
  return parsed && range.OffsetOf(*parsed).has_value();
}

IpRange Range(std::string_view cidr) { return IpRange::Parse(cidr).value(); }

class PodSimulatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    apiserver::ServeOptions options;
    options.listen = "127.0.0.1:0";
    options.data_dir = dir.path();
    options.io_threads = 2;
    auto started = apiserver::RunningApiServer::Start(options);
    ASSERT_TRUE(started.ok()) << started.status().ToString();
    server = std::move(started).value();

    client::RestConfig config;
    config.server.scheme = "http";
    config.server.host = "127.0.0.1";
    config.server.port = server->port();
    auto transport = client::Transport::Create(config, {});
    ASSERT_TRUE(transport.ok()) << transport.status().ToString();
    client::RestClientOptions client_options;
    client_options.qps = 1000;
    client_options.burst = 1000;
    client_options.max_retries = 1;
    client_options.initial_backoff = 10ms;
    auto created = client::RestClient::Create(
        std::shared_ptr<client::Transport>(std::move(transport).value()), client_options);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    rest = std::move(created).value();
    pod_client = std::make_unique<client::TypedClient<model::Pod>>(*rest, client::PodCodec());
  }

  void TearDown() override {
    for (auto& simulator : simulators) simulator->Stop();
    simulators.clear();
    if (server != nullptr) server->Stop();
  }

  // Pods start as soon as they are bound unless a test asks for a delay.
  static PodSimulatorOptions FastOptions() {
    PodSimulatorOptions options;
    options.ready_delay = Clock::Duration::zero();
    options.sync_timeout = 20s;
    return options;
  }

  PodSimulator& StartSimulator(PodSimulatorOptions options) {
    auto simulator = PodSimulator::Create(std::move(options), *rest, clock);
    EXPECT_TRUE(simulator.ok()) << simulator.status().ToString();
    const Status started = (*simulator)->Start();
    EXPECT_TRUE(started.ok()) << started.ToString();
    simulators.push_back(std::move(simulator).value());
    return *simulators.back();
  }

  void CreatePod(const std::string& name, model::StringMap annotations = {},
                 const std::string& namespace_ = "default") {
    model::Pod pod;
    pod.metadata.name = name;
    pod.metadata.namespace_ = namespace_;
    pod.metadata.labels = {{"app", "web"}};
    pod.metadata.annotations = std::move(annotations);
    model::Container container;
    container.name = "app";
    container.image = "nginx";
    pod.spec.containers.push_back(container);
    const Result<model::Pod> created = pod_client->Create(pod);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
  }

  Result<model::Pod> GetPod(const std::string& name) { return pod_client->Get("default", name); }

  // Waits until the pod satisfies `condition`; the pod as last read.
  template <typename Fn>
  model::Pod WaitForPod(const std::string& name, Fn&& condition,
                        std::chrono::milliseconds timeout = 20s) {
    model::Pod last;
    const bool met = Eventually(
        [&] {
          Result<model::Pod> pod = GetPod(name);
          if (!pod.ok()) return false;
          last = std::move(pod).value();
          return condition(last);
        },
        timeout);
    EXPECT_TRUE(met) << "pod " << name << " never reached the condition; last phase \""
                     << last.status.phase << "\", node \"" << last.spec.node_name << "\"";
    return last;
  }

  void SetAnnotation(const std::string& name, std::string_view key, std::string_view value) {
    const std::string body = R"({"metadata":{"annotations":{")" + std::string(key) + R"(":")" +
                             std::string(value) + R"("}}})";
    const Result<model::Pod> patched =
        pod_client->Patch("default", name, client::PatchType::kMergePatch, body);
    ASSERT_TRUE(patched.ok()) << patched.status().ToString();
  }

  std::vector<model::NetworkStatus> NetworkStatusOf(const model::Pod& pod) {
    auto it = pod.metadata.annotations.find(model::kAnnotationNetworkStatus);
    if (it == pod.metadata.annotations.end()) return {};
    Result<std::vector<model::NetworkStatus>> entries = codec::DecodeNetworkStatus(it->second);
    EXPECT_TRUE(entries.ok()) << entries.status().ToString();
    return entries.ok() ? *entries : std::vector<model::NetworkStatus>{};
  }

  TempDir dir;
  std::unique_ptr<apiserver::RunningApiServer> server;
  std::unique_ptr<client::RestClient> rest;
  std::unique_ptr<client::TypedClient<model::Pod>> pod_client;
  FakeClock clock;
  std::vector<std::unique_ptr<PodSimulator>> simulators;
};

// Start() registers three Ready nodes with hostname and zone labels, capacity and an InternalIP,
// and leaves nodes that already exist as they are, also across a restart.
TEST_F(PodSimulatorTest, RegistersNodesWithZonesAndLeavesExistingOnes) {
  // sim-node-1 exists already, with a zone of its own.
  const std::string existing =
      R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"sim-node-1",)"
      R"("labels":{"topology.kubernetes.io/zone":"custom"}}})";
  ASSERT_TRUE(rest->Create(client::NodesResource(), "", existing).ok());

  StartSimulator(FastOptions());
  client::TypedClient<model::Node> nodes(*rest, client::NodeCodec());
  const Result<codec::ListPage<model::Node>> listed = nodes.List("", {});
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  std::map<std::string, model::Node> by_name;
  for (const model::Node& node : listed->items) by_name[node.metadata.name] = node;
  ASSERT_EQ(by_name.size(), 3U);
  EXPECT_EQ(by_name["sim-node-0"].metadata.labels["topology.kubernetes.io/zone"], "zone-a");
  EXPECT_EQ(by_name["sim-node-1"].metadata.labels["topology.kubernetes.io/zone"], "custom");
  EXPECT_EQ(by_name["sim-node-2"].metadata.labels["topology.kubernetes.io/zone"], "zone-c");
  const model::Node& node = by_name["sim-node-2"];
  EXPECT_EQ(node.metadata.labels.at("kubernetes.io/hostname"), "sim-node-2");
  EXPECT_EQ(node.status.allocatable.at("cpu"), "8");
  EXPECT_EQ(node.status.allocatable.at("memory"), "32Gi");
  EXPECT_EQ(node.status.allocatable.at("pods"), "110");
  ASSERT_NE(model::FindPodCondition(node.status.conditions, "Ready"), nullptr);
  EXPECT_EQ(model::FindPodCondition(node.status.conditions, "Ready")->status, "True");
  const Result<std::string> raw = rest->Get(client::NodesResource(), "", "sim-node-2");
  ASSERT_TRUE(raw.ok());
  EXPECT_NE(raw->find(R"({"address":"192.168.0.3","type":"InternalIP"})"), std::string::npos)
      << *raw;

  // A second simulator (a restart) writes nothing to nodes that exist.
  simulators.back()->Stop();
  StartSimulator(FastOptions());
  const Result<codec::ListPage<model::Node>> again = nodes.List("", {});
  ASSERT_TRUE(again.ok());
  for (const model::Node& after : again->items) {
    EXPECT_EQ(after.metadata.resource_version,
              by_name[after.metadata.name].metadata.resource_version)
        << after.metadata.name;
  }
}

// A new pod is bound to a simulated node and becomes Running and Ready with an IPv4 and an IPv6
// address from the pod CIDRs, its node's hostIP, a start time and the four conditions.
TEST_F(PodSimulatorTest, BindsAndStartsPodWithDualStackAddresses) {
  StartSimulator(FastOptions());
  CreatePod("web-0");
  const model::Pod pod = WaitForPod("web-0", RunningAndReady);
  EXPECT_EQ(pod.spec.node_name, "sim-node-0");  // all empty: the first by name
  ASSERT_EQ(pod.status.pod_ips.size(), 2U);
  EXPECT_EQ(pod.status.pod_ip, pod.status.pod_ips[0]);
  EXPECT_TRUE(InRange(Range("10.244.0.0/16"), pod.status.pod_ips[0])) << pod.status.pod_ips[0];
  EXPECT_TRUE(InRange(Range("fd00:10:244::/64"), pod.status.pod_ips[1])) << pod.status.pod_ips[1];
  for (const char* type : {"PodScheduled", "Initialized", "ContainersReady", "Ready"}) {
    EXPECT_TRUE(ConditionIs(pod, type, "True")) << type;
    EXPECT_TRUE(model::FindPodCondition(pod.status.conditions, type)->last_transition_time) << type;
  }
  const Result<std::string> raw = rest->Get(client::PodsResource(), "default", "web-0");
  ASSERT_TRUE(raw.ok());
  EXPECT_NE(raw->find(R"("hostIP":"192.168.0.1")"), std::string::npos) << *raw;
  EXPECT_NE(raw->find(R"("startTime":)"), std::string::npos) << *raw;
}

// With a ready delay the pod is bound at once but starts only once the delay has passed on the
// simulator's clock.
TEST_F(PodSimulatorTest, StartsPodAfterReadyDelay) {
  PodSimulatorOptions options = FastOptions();
  options.ready_delay = 1s;
  options.dual_stack = false;
  StartSimulator(options);
  CreatePod("slow");
  model::Pod pod =
      WaitForPod("slow", [](const model::Pod& p) { return !p.spec.node_name.empty(); });
  EXPECT_EQ(pod.status.phase, "Pending");  // nothing moves the fake clock yet
  EXPECT_TRUE(pod.status.pod_ips.empty());
  clock.Advance(999ms);
  EXPECT_EQ(GetPod("slow")->status.phase, "Pending");
  clock.Advance(1ms);
  pod = WaitForPod("slow", RunningAndReady);
  EXPECT_EQ(pod.status.pod_ips.size(), 1U);  // single-stack
}

// 50 pods created from four threads at once, synced by four workers: every pod gets addresses no
// other pod has, and the nodes end up evenly loaded.
TEST_F(PodSimulatorTest, ConcurrentPodsGetUniqueAddressesAndSpread) {
  PodSimulatorOptions options = FastOptions();
  options.workers = 4;
  StartSimulator(options);
  constexpr int kPods = 50;
  std::vector<std::thread> creators;
  creators.reserve(4);
  for (int t = 0; t < 4; ++t) {
    creators.emplace_back([this, t] {
      for (int i = t; i < kPods; i += 4) CreatePod("pod-" + std::to_string(i));
    });
  }
  for (std::thread& creator : creators) creator.join();
  std::set<std::string> v4;
  std::set<std::string> v6;
  std::map<std::string, int> per_node;
  for (int i = 0; i < kPods; ++i) {
    const model::Pod pod = WaitForPod("pod-" + std::to_string(i), RunningAndReady);
    ASSERT_EQ(pod.status.pod_ips.size(), 2U);
    EXPECT_TRUE(v4.insert(pod.status.pod_ips[0]).second) << "duplicate " << pod.status.pod_ips[0];
    EXPECT_TRUE(v6.insert(pod.status.pod_ips[1]).second) << "duplicate " << pod.status.pod_ips[1];
    ++per_node[pod.spec.node_name];
  }
  ASSERT_EQ(per_node.size(), 3U);
  for (const auto& [node, count] : per_node) {
    EXPECT_GE(count, 16) << node;
    EXPECT_LE(count, 17) << node;
  }
}

// In a pod CIDR with room for six pods the seventh waits (with a Warning Event) until a pod is
// deleted, then gets exactly the address that was freed: nothing is handed out twice.
TEST_F(PodSimulatorTest, ReusesAddressesOnlyAfterDeletion) {
  PodSimulatorOptions options = FastOptions();
  options.pod_cidr_v4 = "10.250.0.0/29";  // .1 to .6
  options.dual_stack = false;
  StartSimulator(options);
  std::map<std::string, std::string> address_of;
  for (int i = 0; i < 6; ++i) {
    const std::string name = "pod-" + std::to_string(i);
    CreatePod(name);
    address_of[name] = WaitForPod(name, RunningAndReady).status.pod_ip;
  }
  std::set<std::string> distinct;
  for (const auto& [name, address] : address_of) distinct.insert(address);
  EXPECT_EQ(distinct.size(), 6U);

  CreatePod("late");
  model::Pod late =
      WaitForPod("late", [](const model::Pod& p) { return !p.spec.node_name.empty(); });
  client::TypedClient<model::Event> events(*rest, client::EventCodec());
  EXPECT_TRUE(Eventually([&] {
    const auto listed = events.List("default", {});
    return listed.ok() &&
           std::any_of(listed->items.begin(), listed->items.end(), [](const auto& e) {
             return e.involved_object.name == "late" && e.reason == "FailedAllocateAddress";
           });
  }));
  late = GetPod("late").value();
  EXPECT_TRUE(late.status.pod_ips.empty());
  EXPECT_NE(late.status.phase, "Running");

  client::DeleteOptions now;
  now.grace_period_seconds = 0;
  ASSERT_TRUE(pod_client->Delete("default", "pod-3", now).ok());
  late = WaitForPod("late", RunningAndReady);
  EXPECT_EQ(late.status.pod_ip, address_of["pod-3"]);
}

// sim.slicewright.io/ready: "false" keeps a Running pod not ready; flipping it makes it ready,
// and back.
TEST_F(PodSimulatorTest, ReadyAnnotationHoldsPodNotReady) {
  StartSimulator(FastOptions());
  CreatePod("held", {{std::string(kAnnotationSimReady), "false"}});
  model::Pod pod = WaitForPod("held", [](const model::Pod& p) {
    return p.status.phase == "Running" && ConditionIs(p, "Ready", "False");
  });
  EXPECT_FALSE(pod.status.pod_ips.empty());
  EXPECT_TRUE(ConditionIs(pod, "ContainersReady", "False"));
  EXPECT_EQ(model::FindPodCondition(pod.status.conditions, "Ready")->reason, "ContainersNotReady");
  const std::vector<std::string> addresses = pod.status.pod_ips;

  SetAnnotation("held", kAnnotationSimReady, "true");
  pod = WaitForPod("held", RunningAndReady);
  EXPECT_EQ(pod.status.pod_ips, addresses);
  SetAnnotation("held", kAnnotationSimReady, "false");
  pod = WaitForPod("held", [](const model::Pod& p) { return ConditionIs(p, "Ready", "False"); });
  EXPECT_EQ(pod.status.phase, "Running");
  EXPECT_EQ(pod.status.pod_ips, addresses);
}

// The networks annotation (text form, namespaced and with an interface) gives the pod a
// network-status: the default network first with the pod's addresses, then one entry per network
// with addresses from that network's own range, unique within it.
TEST_F(PodSimulatorTest, WritesMultusNetworkStatus) {
  StartSimulator(FastOptions());
  CreatePod("multi", {{std::string(model::kAnnotationNetworks), "blue, other/red@eth5"}});
  CreatePod("multi-json",
            {{std::string(model::kAnnotationNetworks),
              R"([{"name":"blue","interface":"data0"},{"name":"red","namespace":"other"}])"}});
  const auto has_status = [](const model::Pod& p) {
    return RunningAndReady(p) && p.metadata.annotations.contains(model::kAnnotationNetworkStatus);
  };
  const model::Pod text_pod = WaitForPod("multi", has_status);
  const model::Pod json_pod = WaitForPod("multi-json", has_status);

  const std::vector<model::NetworkStatus> text = NetworkStatusOf(text_pod);
  ASSERT_EQ(text.size(), 3U);
  EXPECT_EQ(text[0].name, "sim-default");
  EXPECT_EQ(text[0].interface, "eth0");
  EXPECT_TRUE(text[0].is_default);
  EXPECT_EQ(text[0].ips, text_pod.status.pod_ips);
  EXPECT_EQ(text[0].mac, MacFor(text_pod.status.pod_ips));
  EXPECT_EQ(text[1].name, "default/blue");
  EXPECT_EQ(text[1].interface, "net1");
  EXPECT_FALSE(text[1].is_default);
  EXPECT_EQ(text[2].name, "other/red");
  EXPECT_EQ(text[2].interface, "eth5");

  const std::vector<model::NetworkStatus> json = NetworkStatusOf(json_pod);
  ASSERT_EQ(json.size(), 3U);
  EXPECT_EQ(json[1].name, "default/blue");
  EXPECT_EQ(json[1].interface, "data0");
  EXPECT_EQ(json[2].name, "other/red");
  EXPECT_EQ(json[2].interface, "net2");

  for (const auto* entries : {&text, &json}) {
    for (std::size_t i = 1; i < entries->size(); ++i) {
      const model::NetworkStatus& entry = (*entries)[i];
      ASSERT_EQ(entry.ips.size(), 2U) << entry.name;
      EXPECT_TRUE(InRange(SecondaryRangeV4(entry.name), entry.ips[0])) << entry.ips[0];
      EXPECT_TRUE(InRange(SecondaryRangeV6(entry.name), entry.ips[1])) << entry.ips[1];
      EXPECT_FALSE(InRange(Range("10.244.0.0/16"), entry.ips[0])) << entry.ips[0];
      EXPECT_EQ(entry.mac, MacFor(entry.ips));
    }
  }
  EXPECT_NE(SecondaryRangeV4("default/blue").ToString(), SecondaryRangeV4("other/red").ToString());
  EXPECT_NE(text[1].ips, json[1].ips);  // unique within default/blue
  EXPECT_NE(text[2].ips, json[2].ips);
}

// A malformed networks annotation gives a Warning Event and no network-status, and the pod still
// starts on the default network.
TEST_F(PodSimulatorTest, MalformedNetworksAnnotationWarnsAndStillRuns) {
  StartSimulator(FastOptions());
  CreatePod("broken", {{std::string(model::kAnnotationNetworks), "a/b/c"}});
  const model::Pod pod = WaitForPod("broken", RunningAndReady);
  client::TypedClient<model::Event> events(*rest, client::EventCodec());
  model::Event warning;
  EXPECT_TRUE(Eventually([&] {
    const auto listed = events.List("default", {});
    if (!listed.ok()) return false;
    for (const model::Event& event : listed->items) {
      if (event.involved_object.name == "broken" && event.reason == "NetworkAttachmentFailed") {
        warning = event;
        return true;
      }
    }
    return false;
  }));
  EXPECT_EQ(warning.type, "Warning");
  EXPECT_EQ(warning.involved_object.kind, "Pod");
  EXPECT_NE(warning.message.find(R"(item 1 ("a/b/c"): more than one '/')"), std::string::npos)
      << warning.message;
  EXPECT_FALSE(GetPod("broken")->metadata.annotations.contains(model::kAnnotationNetworkStatus));
  EXPECT_FALSE(pod.status.pod_ips.empty());
}

// A pod deleted with a 30 s grace period gets a Killing Event and is removed for good once the
// 2 s cap has passed on the simulator's clock; its address is then free again.
TEST_F(PodSimulatorTest, GracefulDeletionFinishesAfterCap) {
  PodSimulatorOptions options = FastOptions();
  options.pod_cidr_v4 = "10.250.0.0/30";  // two addresses: .1 and .2
  options.dual_stack = false;
  StartSimulator(options);
  CreatePod("leaving");
  EXPECT_EQ(WaitForPod("leaving", RunningAndReady).status.pod_ip, "10.250.0.1");
  CreatePod("staying");
  EXPECT_EQ(WaitForPod("staying", RunningAndReady).status.pod_ip, "10.250.0.2");

  client::DeleteOptions graceful;
  graceful.grace_period_seconds = 30;
  ASSERT_TRUE(pod_client->Delete("default", "leaving", graceful).ok());
  client::TypedClient<model::Event> events(*rest, client::EventCodec());
  EXPECT_TRUE(Eventually([&] {
    const auto listed = events.List("default", {});
    return listed.ok() &&
           std::any_of(listed->items.begin(), listed->items.end(), [](const auto& e) {
             return e.involved_object.name == "leaving" && e.reason == "Killing" &&
                    e.message == "Stopping container app";
           });
  }));
  const Result<model::Pod> terminating = GetPod("leaving");
  ASSERT_TRUE(terminating.ok()) << terminating.status().ToString();
  EXPECT_TRUE(terminating->metadata.deletion_timestamp.has_value());
  EXPECT_TRUE(RunningAndReady(*terminating));  // it serves until its containers stop
  clock.Advance(1900ms);
  EXPECT_TRUE(GetPod("leaving").ok());
  clock.Advance(100ms);
  EXPECT_TRUE(Eventually([&] {
    return GetPod("leaving").status().code() == StatusCode::kNotFound;
  })) << "the pod outlived the termination cap";

  CreatePod("next");
  EXPECT_EQ(WaitForPod("next", RunningAndReady).status.pod_ip, "10.250.0.1");
}

// A gracefully deleted pod, as a kubelet reports it: Ready for the first half of the (capped)
// termination delay, then Ready=False with its containers not ready, then deleted. The
// EndpointSlice controller shows its endpoint terminating and serving, then not serving, then
// drops it; the embedded API server keeps the pod through its status update (grace > 0).
TEST_F(PodSimulatorTest, TerminatingPodStopsServingBeforeItIsDeleted) {
  StartSimulator(FastOptions());  // the 2 s cap: not ready after 1 s, deleted after 2 s
  client::TypedClient<model::Service> services(*rest, client::ServiceCodec());
  const model::Service service = test_support::HttpService("web");
  ASSERT_TRUE(services.Create(service).ok());

  cache::ReflectorOptions reflector;
  reflector.initial_backoff = 20ms;
  reflector.max_backoff = 200ms;
  cache::InformerFactory informers(*rest, reflector);
  endpointslice::Deps deps;
  deps.client = rest.get();
  deps.informers = &informers;
  auto controller = endpointslice::Controller::Create({}, deps);
  ASSERT_TRUE(controller.ok()) << controller.status().ToString();
  informers.Start();
  ASSERT_TRUE(informers.WaitForCacheSync(10s));
  (*controller)->Start();

  client::TypedClient<model::EndpointSlice> slices(*rest, client::EndpointSliceCodec());
  model::EndpointConditions last;
  // True when the Service's one endpoint has `want` (nullopt: when it has none).
  const auto endpoint_is = [&](std::optional<model::EndpointConditions> want) {
    client::ListOptions options;
    options.label_selector = std::string(model::kLabelServiceName) + "=web";
    const auto listed = slices.ListAll("default", options);
    if (!listed.ok()) return false;
    std::vector<model::EndpointConditions> found;
    for (const model::EndpointSlice& slice : listed->items) {
      for (const model::Endpoint& endpoint : slice.endpoints) found.push_back(endpoint.conditions);
    }
    if (found.size() == 1) last = found.front();
    return want ? found.size() == 1 && found.front() == *want : found.empty();
  };

  CreatePod("leaving");
  WaitForPod("leaving", RunningAndReady);
  EXPECT_TRUE(Eventually([&] {
    return endpoint_is(model::EndpointConditions{true, true, false});
  })) << "ready "
      << last.ready.value_or(false);

  client::DeleteOptions graceful;
  graceful.grace_period_seconds = 30;
  ASSERT_TRUE(pod_client->Delete("default", "leaving", graceful).ok());
  // The Killing Event: the simulator has seen the deletion and started its termination delay.
  client::TypedClient<model::Event> events(*rest, client::EventCodec());
  ASSERT_TRUE(Eventually([&] {
    const auto listed = events.List("default", {});
    return listed.ok() &&
           std::any_of(listed->items.begin(), listed->items.end(), [](const auto& e) {
             return e.involved_object.name == "leaving" && e.reason == "Killing";
           });
  }));
  EXPECT_TRUE(Eventually([&] {
    return endpoint_is(model::EndpointConditions{false, true, true});
  })) << "serving "
      << last.serving.value_or(false);
  EXPECT_TRUE(RunningAndReady(*GetPod("leaving")));

  clock.Advance(1s);
  const model::Pod stopped = WaitForPod(
      "leaving", [](const model::Pod& pod) { return ConditionIs(pod, "Ready", "False"); });
  EXPECT_TRUE(stopped.metadata.deletion_timestamp.has_value());
  EXPECT_TRUE(ConditionIs(stopped, "ContainersReady", "False"));
  const model::PodCondition* ready = model::FindPodCondition(stopped.status.conditions, "Ready");
  ASSERT_NE(ready, nullptr);
  EXPECT_EQ(ready->reason, "ContainersNotReady");
  EXPECT_EQ(ready->message, "containers with unready status: [app]");
  EXPECT_FALSE(stopped.status.pod_ips.empty());
  EXPECT_TRUE(Eventually([&] {
    return endpoint_is(model::EndpointConditions{false, false, true});
  })) << "serving "
      << last.serving.value_or(false);

  clock.Advance(1s);
  EXPECT_TRUE(Eventually([&] {
    return GetPod("leaving").status().code() == StatusCode::kNotFound;
  })) << "the pod outlived the termination cap";
  EXPECT_TRUE(Eventually([&] { return endpoint_is(std::nullopt); }));
  (*controller)->Stop();
  informers.Stop();
}

// A restarted simulator rebuilds its allocations from the pods that exist (pod addresses and
// secondary network addresses), so new pods never get an address in use.
TEST_F(PodSimulatorTest, RestartDoesNotReuseAddressesInUse) {
  const model::StringMap blue = {{std::string(model::kAnnotationNetworks), "blue"}};
  StartSimulator(FastOptions());
  for (int i = 0; i < 3; ++i) CreatePod("before-" + std::to_string(i), blue);
  std::vector<model::Pod> pods;
  pods.reserve(6);
  const auto started = [](const model::Pod& p) {
    return RunningAndReady(p) && p.metadata.annotations.contains(model::kAnnotationNetworkStatus);
  };
  for (int i = 0; i < 3; ++i) pods.push_back(WaitForPod("before-" + std::to_string(i), started));
  simulators.back()->Stop();

  StartSimulator(FastOptions());
  for (int i = 0; i < 3; ++i) CreatePod("after-" + std::to_string(i), blue);
  for (int i = 0; i < 3; ++i) pods.push_back(WaitForPod("after-" + std::to_string(i), started));
  std::set<std::string> pod_addresses;
  std::set<std::string> blue_addresses;
  for (const model::Pod& pod : pods) {
    for (const std::string& address : pod.status.pod_ips) {
      EXPECT_TRUE(pod_addresses.insert(address).second) << pod.metadata.name << " " << address;
    }
    const std::vector<model::NetworkStatus> entries = NetworkStatusOf(pod);
    ASSERT_EQ(entries.size(), 2U);
    for (const std::string& address : entries[1].ips) {
      EXPECT_TRUE(blue_addresses.insert(address).second) << pod.metadata.name << " " << address;
    }
  }
}

// Options that cannot work are refused before anything is contacted.
TEST_F(PodSimulatorTest, RejectsUnusableOptions) {
  struct Case {
    std::string_view name;
    void (*change)(PodSimulatorOptions&);
    std::string_view message;
  };
  const Case cases[] = {
      {"no nodes", [](PodSimulatorOptions& o) { o.nodes = 0; }, "nodes must be at least 1"},
      {"no zones", [](PodSimulatorOptions& o) { o.zones.clear(); }, "at least one zone"},
      {"bad CIDR", [](PodSimulatorOptions& o) { o.pod_cidr_v4 = "10.0.0.0"; }, "missing /prefix"},
      {"v6 as v4", [](PodSimulatorOptions& o) { o.pod_cidr_v4 = "fd00::/64"; }, "must be IPv4"},
      {"v4 as v6", [](PodSimulatorOptions& o) { o.pod_cidr_v6 = "10.1.0.0/16"; }, "must be IPv6"},
      {"too many nodes", [](PodSimulatorOptions& o) { o.nodes = 300; }, "do not fit"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    PodSimulatorOptions options;
    c.change(options);
    auto simulator = PodSimulator::Create(options, *rest, clock);
    ASSERT_FALSE(simulator.ok());
    EXPECT_EQ(simulator.status().code(), StatusCode::kInvalid);
    EXPECT_NE(simulator.status().message().find(c.message), std::string_view::npos)
        << simulator.status().ToString();
  }
}

}  // namespace
}  // namespace slicewright::controllers::podsim

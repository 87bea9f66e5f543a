#include "controllers/endpointslice/controller.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "controllers/common/apply_plan.h"
#include "controllers/controller_test_util.h"

// The EndpointSlice controller against the real embedded API server: slices follow pods, KEP-4770's
// label hands a Service over and back, slices of other managers are never touched, and a new
// controller takes over existing slices without writing.
namespace slicewright::controllers::endpointslice {
namespace {

using namespace std::chrono_literals;
using testing::Eventually;
using testing::LoopbackClient;
using EndpointSliceControllerTest = testing::ControllerTest;

TEST_F(EndpointSliceControllerTest, SlicesFollowThePods) {
  runtime::Registry registry;
  auto running = StartController({}, &registry);
  CreateService("web");
  CreatePod("web-1", "web", "node-a", "10.0.0.1");
  CreatePod("web-2", "web", "node-b", "10.0.0.2");
  CreatePod("web-3", "web", "node-a", "10.0.0.3", /*ready=*/false);
  CreatePod("other", "db", "node-a", "10.0.0.9");
  ASSERT_TRUE(Eventually([&] {
    const std::vector<model::EndpointSlice> slices = OurSlicesOf("web");
    return ReadyAddresses("web") == std::multiset<std::string>{"10.0.0.1", "10.0.0.2"} &&
           slices.size() == 1 && slices[0].endpoints.size() == 3;
  }));
  std::vector<model::EndpointSlice> slices = OurSlicesOf("web");
  ASSERT_EQ(slices.size(), 1U);
  const model::EndpointSlice& slice = slices[0];
  EXPECT_EQ(slice.address_type, "IPv4");
  EXPECT_EQ(slice.endpoints.size(), 3U);
  ASSERT_EQ(slice.ports.size(), 1U);
  EXPECT_EQ(slice.ports[0].port, 8080);
  ASSERT_EQ(slice.metadata.owner_references.size(), 1U);
  EXPECT_EQ(slice.metadata.owner_references[0].kind, "Service");
  EXPECT_EQ(slice.metadata.owner_references[0].name, "web");
  EXPECT_TRUE(slice.metadata.name.starts_with("web-"));

  // Ready flips, a pod goes away.
  Result<model::Pod> pod = pods_->Get("default", "web-3");
  ASSERT_TRUE(pod.ok());
  SetPodStatus(*pod, "10.0.0.3", true);
  ASSERT_TRUE(pods_
                  ->Delete("default", "web-1",
                           [] {
                             client::DeleteOptions now;
                             now.grace_period_seconds = 0;
                             return now;
                           }())
                  .ok());
  ASSERT_TRUE(Eventually([&] {
    return ReadyAddresses("web") == std::multiset<std::string>{"10.0.0.2", "10.0.0.3"};
  }));
  EXPECT_EQ(OurSlicesOf("web").size(), 1U);

  // Upstream's metric names. The sync records its metrics just after its write, which the test's
  // informer may see first: wait for the gauges to catch up.
  const std::vector<std::string> wants = {
      "endpoint_slice_controller_syncs{result=\"success\"}",
      "endpoint_slice_controller_changes{operation=\"create\"} 1",
      "endpoint_slice_controller_changes{operation=\"update\"}",
      "endpoint_slice_controller_endpoints_desired 2",
      "endpoint_slice_controller_num_endpoint_slices 1",
      "endpoint_slice_controller_desired_endpoint_slices 1",
      "endpoint_slice_controller_endpoints_added_per_sync_bucket",
      "endpoint_slice_controller_endpointslices_changed_per_sync_count{"
      "topology=\"Disabled\",traffic_distribution=\"\"}",
      "workqueue_adds_total{name=\"endpoint_slice\"}"};
  std::string text;
  EXPECT_TRUE(Eventually([&] {
    text = registry.Expose();
    return std::all_of(wants.begin(), wants.end(), [&text](const std::string& want) {
      return text.find(want) != std::string::npos;
    });
  }));
  for (const std::string& want : wants) {
    EXPECT_NE(text.find(want), std::string::npos) << want << "\n" << text;
  }

  // The Service goes: the garbage collector removes its slices through the ownerReference.
  ASSERT_TRUE(services_->Delete("default", "web").ok());
  ASSERT_TRUE(Eventually([&] { return SlicesOf("web").empty(); }));
}

// A Service kept between syncs (incremental_min_pods = 1: every Service) re-derives only the pods
// that changed, and still follows every kind of change: readiness, deletion, a relabelled pod,
// a Node's zone (all pods again), the Service's selector (all pods again).
TEST_F(EndpointSliceControllerTest, ConcurrentKeptServiceFollowsPodNodeAndServiceChanges) {
  Options options;
  options.incremental_min_pods = 1;
  auto running = StartController(options);
  CreateService("web");
  CreatePod("web-1", "web", "node-a", "10.0.0.1");
  CreatePod("web-2", "web", "node-b", "10.0.0.2");
  CreatePod("web-3", "web", "node-a", "10.0.0.3", /*ready=*/false);
  ASSERT_TRUE(Eventually([&] {
    return ReadyAddresses("web") == std::multiset<std::string>{"10.0.0.1", "10.0.0.2"};
  }));

  Result<model::Pod> pod = pods_->Get("default", "web-3");
  ASSERT_TRUE(pod.ok());
  SetPodStatus(*pod, "10.0.0.3", true);
  client::DeleteOptions now;
  now.grace_period_seconds = 0;
  ASSERT_TRUE(pods_->Delete("default", "web-1", now).ok());
  ASSERT_TRUE(Eventually([&] {
    return ReadyAddresses("web") == std::multiset<std::string>{"10.0.0.2", "10.0.0.3"};
  }));

  // Relabelled out of the selector.
  pod = pods_->Get("default", "web-2");
  ASSERT_TRUE(pod.ok());
  pod->metadata.labels["app"] = "other";
  ASSERT_TRUE(pods_->Update(*pod).ok());
  ASSERT_TRUE(
      Eventually([&] { return ReadyAddresses("web") == std::multiset<std::string>{"10.0.0.3"}; }));

  // A Node moves zone. That enqueues no Service (spec §10: only topology-overloaded ones), but
  // the next sync, here for a new pod, derives every pod again, and the Node's pods follow.
  // Handlers run in the order registered, so once this one has seen the change, the
  // controller's has too.
  auto zone_seen = std::make_shared<std::atomic<bool>>(false);
  cache::EventHandler<model::Node> zone_watch;
  zone_watch.on_update = [zone_seen](const auto&, const auto& updated) {
    const auto zone = updated->metadata.labels.find(std::string(model::kLabelTopologyZone));
    if (zone != updated->metadata.labels.end() && zone->second == "zone-c") zone_seen->store(true);
  };
  running->informers->Nodes().AddEventHandler(std::move(zone_watch));
  Result<model::Node> node = nodes_->Get("", "node-a");
  ASSERT_TRUE(node.ok());
  node->metadata.labels[std::string(model::kLabelTopologyZone)] = "zone-c";
  ASSERT_TRUE(nodes_->Update(*node).ok());
  ASSERT_TRUE(Eventually([&] { return zone_seen->load(); }));
  CreatePod("web-5", "web", "node-b", "10.0.0.5");
  ASSERT_TRUE(Eventually([&] {
    const std::vector<model::EndpointSlice> slices = OurSlicesOf("web");
    if (slices.size() != 1 || slices[0].endpoints.size() != 2) return false;
    for (const model::Endpoint& endpoint : slices[0].endpoints) {
      if (endpoint.addresses[0] == "10.0.0.3" && endpoint.zone != "zone-c") return false;
    }
    return true;
  }));

  // The Service selects the relabelled pod instead.
  Result<model::Service> service = services_->Get("default", "web");
  ASSERT_TRUE(service.ok());
  service->spec.selector = model::StringMap{{"app", "other"}};
  ASSERT_TRUE(services_->Update(*service).ok());
  ASSERT_TRUE(
      Eventually([&] { return ReadyAddresses("web") == std::multiset<std::string>{"10.0.0.2"}; }));

  // And a pod created after that is picked up by a kept Service too.
  CreatePod("web-4", "other", "node-b", "10.0.0.4");
  ASSERT_TRUE(Eventually([&] {
    return ReadyAddresses("web") == std::multiset<std::string>{"10.0.0.2", "10.0.0.4"};
  }));
}

// KEP-4770: the label hands the Service to another controller (our slices are deleted, its slices
// untouched); removing it hands the Service back.
TEST_F(EndpointSliceControllerTest, EndpointControllerNameLabelHandsTheServiceOver) {
  auto running = StartController();
  CreateService("web");
  CreatePod("web-1", "web", "node-a", "10.0.0.1");
  ASSERT_TRUE(Eventually([&] { return ReadyAddresses("web").size() == 1; }));

  // The other controller's slice.
  model::EndpointSlice theirs;
  theirs.metadata.name = "web-multus";
  theirs.metadata.namespace_ = "default";
  theirs.metadata.labels[std::string(model::kLabelServiceName)] = "web";
  theirs.metadata.labels[std::string(model::kLabelManagedBy)] = "multinetwork.slicewright.io";
  theirs.address_type = "IPv4";
  model::Endpoint& endpoint = theirs.endpoints.emplace_back();
  endpoint.addresses = {"192.168.7.1"};
  Result<model::EndpointSlice> created = slices_->Create(theirs);
  ASSERT_TRUE(created.ok()) << created.status().ToString();

  Result<model::Service> labelled = services_->Patch(
      "default", "web", client::PatchType::kMergePatch,
      R"({"metadata":{"labels":{"service.kubernetes.io/endpoint-controller-name":"multinetwork.slicewright.io"}}})");
  ASSERT_TRUE(labelled.ok()) << labelled.status().ToString();
  ASSERT_TRUE(Eventually([&] { return OurSlicesOf("web").empty(); }));
  // Pod churn does not bring our slices back while the label is there.
  CreatePod("web-2", "web", "node-b", "10.0.0.2");
  ASSERT_TRUE(PodHandled(*running, "web-2"));  // its syncs have run
  EXPECT_TRUE(OurSlicesOf("web").empty());
  Result<model::EndpointSlice> still_there = slices_->Get("default", "web-multus");
  ASSERT_TRUE(still_there.ok());
  EXPECT_EQ(still_there->metadata.resource_version, created->metadata.resource_version);

  Result<model::Service> unlabelled = services_->Patch(
      "default", "web", client::PatchType::kMergePatch,
      R"({"metadata":{"labels":{"service.kubernetes.io/endpoint-controller-name":null}}})");
  ASSERT_TRUE(unlabelled.ok()) << unlabelled.status().ToString();
  ASSERT_TRUE(Eventually([&] {
    return ReadyAddresses("web") == std::multiset<std::string>{"10.0.0.1", "10.0.0.2"};
  }));
  EXPECT_TRUE(slices_->Get("default", "web-multus").ok());
}

// With the feature gate off the label means nothing.
TEST_F(EndpointSliceControllerTest, GateOffIgnoresTheLabel) {
  Options options;
  options.external_endpoint_controller = false;
  auto running = StartController(options);
  CreateService("web", {{std::string(model::kLabelEndpointControllerName), "someone-else"}});
  CreatePod("web-1", "web", "node-a", "10.0.0.1");
  ASSERT_TRUE(Eventually([&] { return ReadyAddresses("web").size() == 1; }));
}

// A second controller (a new leader, or slicewright replacing kube-controller-manager) finds the
// slices already right and writes nothing.
TEST_F(EndpointSliceControllerTest, TakesOverExistingSlicesWithoutWriting) {
  std::map<std::string, std::string> versions;
  {
    auto first = StartController();
    CreateService("web");
    CreateService("api");
    for (int i = 0; i < 5; ++i) {
      CreatePod("web-" + std::to_string(i), "web", i % 2 == 0 ? "node-a" : "node-b",
                "10.0.1." + std::to_string(i + 1));
      CreatePod("api-" + std::to_string(i), "api", "node-a", "10.0.2." + std::to_string(i + 1));
    }
    ASSERT_TRUE(Eventually(
        [&] { return ReadyAddresses("web").size() == 5 && ReadyAddresses("api").size() == 5; }));
    // Let the first controller settle: it has seen every slice as the server has it (its own
    // slice events are coalesced for a second) and has nothing left to sync.
    ASSERT_TRUE(PodHandled(*first, "web-4") && PodHandled(*first, "api-4"));
    ASSERT_TRUE(Eventually([&] {
      std::map<std::string, std::string> now;
      for (const char* service : {"web", "api"}) {
        for (const model::EndpointSlice& slice : OurSlicesOf(service)) {
          now[slice.metadata.name] = slice.metadata.resource_version;
        }
      }
      for (const auto& [name, version] : now) {
        if (!first->handled->WaitSeen("default/" + name, version)) return false;
      }
      if (!first->WaitIdle()) return false;
      const bool settled = now == versions;
      versions = std::move(now);
      return settled;
    }));
  }
  auto second = StartController();
  // Its handlers have seen the first list (every Service and pod queues its Service) and the
  // syncs that caused have all run.
  ASSERT_TRUE(ServiceHandled(*second, "web") && ServiceHandled(*second, "api"));
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(PodHandled(*second, "web-" + std::to_string(i)));
    ASSERT_TRUE(PodHandled(*second, "api-" + std::to_string(i)));
  }
  std::map<std::string, std::string> after;
  for (const char* service : {"web", "api"}) {
    for (const model::EndpointSlice& slice : OurSlicesOf(service)) {
      after[slice.metadata.name] = slice.metadata.resource_version;
    }
  }
  EXPECT_EQ(after, versions);
  EXPECT_EQ(versions.size(), 2U);
}

TEST_F(EndpointSliceControllerTest, RejectsBadOptions) {
  auto client = LoopbackClient(server_->port());
  cache::InformerFactory informers(*client);
  Deps deps;
  deps.client = client.get();
  deps.informers = &informers;
  Options options;
  options.max_endpoints_per_slice = 1001;
  EXPECT_EQ(Controller::Create(options, deps).status().code(), StatusCode::kInvalid);
  options = {};
  options.concurrent_syncs = 0;
  EXPECT_EQ(Controller::Create(options, deps).status().code(), StatusCode::kInvalid);
  options = {};
  options.incremental_min_pods = -1;
  EXPECT_EQ(Controller::Create(options, deps).status().code(), StatusCode::kInvalid);
  EXPECT_EQ(Controller::Create({}, Deps{}).status().code(), StatusCode::kInvalid);
}

// An update of a slice deleted behind the cache's back is a stale read: the sync is retried (as
// upstream retries every failed sync), not dropped until the Service changes again.
TEST_F(EndpointSliceControllerTest, UpdateOfADeletedSliceIsRetried) {
  model::EndpointSlice gone;
  gone.metadata.namespace_ = "default";
  gone.metadata.name = "web-gone";
  gone.metadata.resource_version = "1";
  gone.address_type = "IPv4";
  reconcile::Plan plan;
  plan.actions.push_back(reconcile::SliceAction{reconcile::Operation::kUpdate, gone});
  reconcile::EndpointSliceTracker tracker;
  ApplyCounts counts;
  const Status status = ApplyPlan(plan, *slices_, tracker, &counts);
  EXPECT_EQ(status.code(), StatusCode::kConflict) << status.ToString();
  EXPECT_TRUE(IsRetryable(status));
  EXPECT_EQ(status.object(), "endpointslices/default/web-gone");
  EXPECT_EQ(counts.updated, 0);
}

}  // namespace
}  // namespace slicewright::controllers::endpointslice

#include <chrono>
#include <cstdlib>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "slicewright/model/network_status.h"

#include "controllers/controller_test_util.h"
#include "controllers/endpointslice/controller.h"

// Spec §16 scenarios 46 (batching with --endpointslice-updates-batch-period) and 47 (which
// Services a pod update concerns), against the real embedded API server: the writes are counted
// with the controller's own endpoint_slice_controller_changes counter, the enqueued Services are
// read from the work queue of a controller whose workers are not started.
namespace slicewright::controllers::endpointslice {
namespace {

using namespace std::chrono_literals;
using testing::Eventually;
using EventHandlingTest = testing::ControllerTest;

// The value of the sample `name{labels}` in the registry's text, 0 when absent.
double Sample(runtime::Registry& registry, const std::string& sample) {
  const std::string text = registry.Expose();
  const std::size_t at = text.find("\n" + sample + " ");
  if (at == std::string::npos) return 0;
  return std::strtod(text.c_str() + at + sample.size() + 2, nullptr);
}

double Updates(runtime::Registry& registry) {
  return Sample(registry, "endpoint_slice_controller_changes{operation=\"update\"}");
}

// Scenario 46: a batch period of 1 s turns three pod adds 100 ms apart into one write; two more
// 100 ms apart into a second, and one a second later into a third. The controller's clock is a
// FakeClock: the batch deadlines pass only when the test advances it, so no write can come early or
// late.
TEST_F(EventHandlingTest, Scenario46BatchPeriodCoalescesPodEvents) {
  FakeClock clock;
  controller_clock_ = &clock;
  runtime::Registry registry;
  Options options;
  options.batch_period = 1000ms;
  auto running = StartController(options, &registry);
  CreateService("web");  // Service events are not batched: its placeholder slice comes at once
  ASSERT_TRUE(Eventually([&] { return OurSlicesOf("web").size() == 1; }));
  ASSERT_TRUE(ServiceHandled(*running, "web"));
  ASSERT_EQ(Sample(registry, "endpoint_slice_controller_changes{operation=\"create\"}"), 1);
  const double before = Updates(registry);
  // The controller may take the watch event of its own write for someone else's and check the
  // Service again a second later (never before the slice is in its tracker: a race kept from
  // upstream). Let that check run now, so it does not fall inside a batch below.
  const auto settle = [&] {
    clock.Advance(1000ms);
    return running->WaitIdle(/*count_delayed=*/false);
  };
  ASSERT_TRUE(settle());

  // Handled: the pod's events have queued the Service (for a second on the fake clock).
  const auto handled = [&](const std::string& pod) {
    Result<model::Pod> current = pods_->Get("default", pod);
    return current.ok() &&
           running->handled->WaitSeen("default/" + pod, current->metadata.resource_version);
  };
  CreatePod("web-1", "web", "node-a", "10.0.0.1");
  ASSERT_TRUE(handled("web-1"));
  clock.Advance(100ms);
  CreatePod("web-2", "web", "node-a", "10.0.0.2");
  ASSERT_TRUE(handled("web-2"));
  clock.Advance(100ms);
  CreatePod("web-3", "web", "node-b", "10.0.0.3");
  ASSERT_TRUE(handled("web-3"));
  clock.Advance(799ms);  // 999 ms after the first add: the batch is still waiting
  EXPECT_EQ(running->controller->queue().Len(), 0U);
  EXPECT_EQ(Updates(registry), before);
  clock.Advance(1ms);
  ASSERT_TRUE(Eventually([&] { return ReadyAddresses("web").size() == 3; }));
  ASSERT_TRUE(running->WaitIdle(/*count_delayed=*/false));
  EXPECT_EQ(Updates(registry), before + 1);
  ASSERT_TRUE(settle());
  EXPECT_EQ(Updates(registry), before + 1);

  CreatePod("web-4", "web", "node-a", "10.0.0.4");
  ASSERT_TRUE(handled("web-4"));
  clock.Advance(100ms);
  CreatePod("web-5", "web", "node-a", "10.0.0.5");
  ASSERT_TRUE(handled("web-5"));
  clock.Advance(900ms);  // the second batch: web-4 and web-5
  ASSERT_TRUE(Eventually([&] { return ReadyAddresses("web").size() == 5; }));
  ASSERT_TRUE(running->WaitIdle(/*count_delayed=*/false));
  EXPECT_EQ(Updates(registry), before + 2);
  ASSERT_TRUE(settle());  // a second later: web-6 starts a batch of its own
  CreatePod("web-6", "web", "node-b", "10.0.0.6");
  ASSERT_TRUE(handled("web-6"));
  clock.Advance(999ms);
  EXPECT_EQ(running->controller->queue().Len(), 0U);
  EXPECT_EQ(Updates(registry), before + 2);
  clock.Advance(1ms);
  ASSERT_TRUE(Eventually([&] { return ReadyAddresses("web").size() == 6; }));
  ASSERT_TRUE(running->WaitIdle(/*count_delayed=*/false));
  EXPECT_EQ(Updates(registry), before + 3);
}

// Scenario 46 with period 0: every pod change is its own sync and write.
TEST_F(EventHandlingTest, Scenario46NoBatchPeriodWritesEachPodEvent) {
  runtime::Registry registry;
  auto running = StartController({}, &registry);
  CreateService("web");
  ASSERT_TRUE(Eventually([&] { return OurSlicesOf("web").size() == 1; }));
  ASSERT_TRUE(ServiceHandled(*running, "web"));
  const double before = Updates(registry);
  for (int i = 1; i <= 3; ++i) {
    CreatePod("web-" + std::to_string(i), "web", "node-a", "10.0.0." + std::to_string(i));
    ASSERT_TRUE(Eventually([&] { return ReadyAddresses("web").size() == std::size_t(i); }));
  }
  ASSERT_TRUE(PodHandled(*running, "web-3"));
  EXPECT_EQ(Updates(registry), before + 3);
}

// Scenario 47: a controller whose workers are not running, so the keys its pod handler enqueues
// stay in its queue.
class PodUpdateProjectionTest : public testing::ControllerTest {
 protected:
  void SetUp() override {
    ControllerTest::SetUp();
    for (const auto& [name, selector] : std::vector<std::pair<std::string, model::StringMap>>{
             {"sa", {{"app", "a"}}}, {"sb", {{"app", "b"}}}, {"sx", {{"tier", "x"}}}}) {
      model::Service service;
      service.metadata.name = name;
      service.metadata.namespace_ = "default";
      service.spec.selector = selector;
      model::ServicePort& port = service.spec.ports.emplace_back();
      port.port = 80;
      Result<model::Service> created = services_->Create(service);
      ASSERT_TRUE(created.ok()) << created.status().ToString();
    }
    model::Pod pod;
    pod.metadata.name = "p";
    pod.metadata.namespace_ = "default";
    pod.metadata.labels = {{"app", "a"}, {"tier", "x"}};
    pod.spec.node_name = "node-a";
    model::Container& container = pod.spec.containers.emplace_back();
    container.name = "app";
    container.image = "nginx";
    Result<model::Pod> created = pods_->Create(pod);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    SetPodStatus(*created, "10.0.0.1", true);

    client_for_controller_ = test_support::LoopbackClient(server_->port());
    informers_ = std::make_unique<cache::InformerFactory>(*client_for_controller_);
    Deps deps;
    deps.client = client_for_controller_.get();
    deps.informers = informers_.get();
    auto controller = Controller::Create(Options{}, deps);
    ASSERT_TRUE(controller.ok()) << controller.status().ToString();
    controller_ = std::move(controller).value();
    handled_.Watch(informers_->Pods());  // after the controller's pod handler
    informers_->Start();
    ASSERT_TRUE(informers_->WaitForCacheSync(10s));
    Settle();
    Drain();  // the initial adds
  }

  void TearDown() override {
    if (controller_ != nullptr) controller_->Stop();
    if (informers_ != nullptr) informers_->Stop();
  }

  // Waits until the controller's pod handler has run for the pod at the server's current version.
  void Settle() {
    Result<model::Pod> pod = pods_->Get("default", "p");
    ASSERT_TRUE(pod.ok());
    ASSERT_TRUE(handled_.WaitSeen("default/p", pod->metadata.resource_version));
  }

  std::set<std::string> Drain() {
    std::set<std::string> keys;
    runtime::WorkQueue& queue = controller_->queue();
    while (queue.Len() > 0) {
      std::optional<std::string> key = queue.Get();
      if (!key.has_value()) break;
      keys.insert(*key);
      queue.Done(*key);
    }
    return keys;
  }

  model::Pod Pod() {
    Result<model::Pod> pod = pods_->Get("default", "p");
    EXPECT_TRUE(pod.ok());
    return pod.ok() ? *pod : model::Pod();
  }

  testing::HandledBarrier handled_;  // sees pod events after the controller's handler
  std::unique_ptr<client::RestClient> client_for_controller_;
  std::unique_ptr<cache::InformerFactory> informers_;
  std::unique_ptr<Controller> controller_;
};

TEST_F(PodUpdateProjectionTest, Scenario47PodUpdatesReachTheServicesTheyConcern) {
  // IPs changed, labels not: the Services of the (unchanged) labels.
  SetPodStatus(Pod(), "10.0.0.2", true);
  Settle();
  EXPECT_EQ(Drain(), (std::set<std::string>{"default/sa", "default/sx"}));

  // Labels changed only: the Services that selected it before or after, but not both.
  model::Pod relabelled = Pod();
  relabelled.metadata.labels["app"] = "b";
  ASSERT_TRUE(pods_->Update(relabelled).ok());
  Settle();
  EXPECT_EQ(Drain(), (std::set<std::string>{"default/sa", "default/sb"}));

  // Labels and what an endpoint shows (the network status the cache keeps) together: every
  // Service of the old and of the new labels.
  model::Pod both = Pod();
  both.metadata.labels["app"] = "a";
  both.metadata.annotations[std::string(model::kAnnotationNetworkStatus)] = "[]";
  ASSERT_TRUE(pods_->Update(both).ok());
  Settle();
  EXPECT_EQ(Drain(), (std::set<std::string>{"default/sa", "default/sb", "default/sx"}));

  // Neither (an annotation the cache does not keep): nothing.
  model::Pod annotated = Pod();
  annotated.metadata.annotations["example.com/note"] = "x";
  ASSERT_TRUE(pods_->Update(annotated).ok());
  Settle();
  EXPECT_EQ(Drain(), std::set<std::string>{});
}

}  // namespace
}  // namespace slicewright::controllers::endpointslice

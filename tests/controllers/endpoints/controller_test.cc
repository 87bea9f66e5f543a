#include "controllers/endpoints/controller.h"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "slicewright/client/typed_client.h"
#include "slicewright/model/well_known.h"
#include "slicewright/reconcile/endpoints_builder.h"

#include "apiserver/rest/serve.h"
#include "controllers/handled_barrier.h"
#include "fakes/loopback.h"

// The Endpoints controller against the real embedded API server: the Endpoints follows the pods,
// an unchanged one is never rewritten, more than 1000 addresses are truncated and annotated, a
// deleted Service's Endpoints goes, and KEP-4770's label hands the Service over and back.
namespace slicewright::controllers::endpoints {
namespace {

using test_support::Eventually;
using test_support::LoopbackClient;
using test_support::TempDir;

using namespace std::chrono_literals;

// One controller with its own informers and client, as a controller-manager process has.
struct RunningController {
  std::unique_ptr<client::RestClient> client;
  std::unique_ptr<cache::InformerFactory> informers;
  std::unique_ptr<Controller> controller;
  // Sees Services, Pods and Endpoints after the controller's handlers.
  std::unique_ptr<testing::HandledBarrier> handled = std::make_unique<testing::HandledBarrier>();

  // Waits until the controller has handled the object `key` at `version` and finished the syncs
  // it caused.
  bool Handled(const std::string& key, const std::string& version) {
    return handled->WaitSeen(key, version) && testing::WaitIdle(controller->queue());
  }

  ~RunningController() {
    if (controller != nullptr) {
      controller->Stop();
    }
    if (informers != nullptr) {
      informers->Stop();
    }
  }
};

client::DeleteOptions Now() {
  client::DeleteOptions now;
  now.grace_period_seconds = 0;
  return now;
}

class EndpointsControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    apiserver::ServeOptions options;
    options.listen = "127.0.0.1:0";
    options.data_dir = data_dir.path();
    options.io_threads = 2;
    auto started = apiserver::RunningApiServer::Start(options);
    ASSERT_TRUE(started.ok()) << started.status().ToString();
    api_server = std::move(started).value();
    api = LoopbackClient(api_server->port());
    service_client =
        std::make_unique<client::TypedClient<model::Service>>(*api, client::ServiceCodec());
    pod_client = std::make_unique<client::TypedClient<model::Pod>>(*api, client::PodCodec());
    endpoints_client =
        std::make_unique<client::TypedClient<model::Endpoints>>(*api, client::EndpointsCodec());
  }

  std::unique_ptr<RunningController> StartController(Options options = {}) {
    auto running = std::make_unique<RunningController>();
    running->client = LoopbackClient(api_server->port());
    cache::ReflectorOptions reflector;
    reflector.initial_backoff = 20ms;
    reflector.max_backoff = 200ms;
    running->informers = std::make_unique<cache::InformerFactory>(*running->client, reflector);
    Deps deps;
    deps.client = running->client.get();
    deps.informers = running->informers.get();
    auto controller = Controller::Create(options, deps);
    EXPECT_TRUE(controller.ok()) << controller.status().ToString();
    running->controller = std::move(controller).value();
    running->handled->Watch(running->informers->Services());
    running->handled->Watch(running->informers->Pods());
    running->handled->Watch(running->informers->Endpoints());
    running->informers->Start();
    EXPECT_TRUE(running->informers->WaitForCacheSync(10s));
    running->controller->Start();
    return running;
  }

  void CreateService(const std::string& name, model::StringMap labels = {}) {
    model::Service service;
    service.metadata.name = name;
    service.metadata.namespace_ = "default";
    service.metadata.labels = std::move(labels);
    service.spec.selector = model::StringMap{{"app", name}};
    model::ServicePort& port = service.spec.ports.emplace_back();
    port.name = "http";
    port.port = 80;
    port.target_port = model::IntOrString::FromString("http");
    Result<model::Service> created = service_client->Create(service);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
  }

  // A pod of `app` on node-a with `ip`, Running and (not) Ready; through `pods` (thread-safe).
  static void CreatePod(client::TypedClient<model::Pod>& pods, const std::string& name,
                        const std::string& app, const std::string& ip, bool ready = true) {
    model::Pod pod;
    pod.metadata.name = name;
    pod.metadata.namespace_ = "default";
    pod.metadata.labels["app"] = app;
    pod.spec.node_name = "node-a";
    model::Container& container = pod.spec.containers.emplace_back();
    container.name = "app";
    container.image = "nginx";
    model::ContainerPort& port = container.ports.emplace_back();
    port.name = "http";
    port.container_port = 8080;
    Result<model::Pod> created = pods.Create(pod);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    SetPodStatus(pods, *created, ip, ready);
  }
  void CreatePod(const std::string& name, const std::string& app, const std::string& ip,
                 bool ready = true) {
    CreatePod(*pod_client, name, app, ip, ready);
  }

  static void SetPodStatus(client::TypedClient<model::Pod>& pods, model::Pod pod,
                           const std::string& ip, bool ready) {
    pod.status.phase = "Running";
    pod.status.pod_ip = ip;
    pod.status.pod_ips = {ip};
    pod.status.conditions.clear();
    model::PodCondition& condition = pod.status.conditions.emplace_back();
    condition.type = "Ready";
    condition.status = ready ? "True" : "False";
    condition.last_transition_time = model::Time::FromUnixSeconds(1'800'000'000);
    Result<model::Pod> updated = pods.UpdateStatus(pod);
    ASSERT_TRUE(updated.ok()) << updated.status().ToString();
  }

  // The Endpoints named `name`, or nullopt.
  std::optional<model::Endpoints> Get(const std::string& name) {
    Result<model::Endpoints> got = endpoints_client->Get("default", name);
    if (!got.ok()) {
      EXPECT_EQ(got.status().code(), StatusCode::kNotFound) << got.status().ToString();
      return std::nullopt;
    }
    return *got;
  }

  // Ready and not-ready IPs of the Endpoints `name`, "-" when it does not exist.
  std::string Addresses(const std::string& name) {
    const std::optional<model::Endpoints> endpoints = Get(name);
    if (!endpoints.has_value()) {
      return "-";
    }
    std::string out;
    for (const model::EndpointSubset& subset : endpoints->subsets) {
      out += "[";
      for (const auto& address : subset.addresses) {
        out += address.ip + " ";
      }
      out += "| ";
      for (const auto& address : subset.not_ready_addresses) {
        out += address.ip + " ";
      }
      for (const auto& port : subset.ports) {
        out += ":" + std::to_string(port.port);
      }
      out += "]";
    }
    return out;
  }

  static std::size_t AddressCount(const model::Endpoints& endpoints) {
    std::size_t n = 0;
    for (const model::EndpointSubset& subset : endpoints.subsets) {
      n += subset.addresses.size() + subset.not_ready_addresses.size();
    }
    return n;
  }

  Result<model::Service> Label(const std::string& service, const std::string& value_json) {
    return service_client->Patch(
        "default", service, client::PatchType::kMergePatch,
        R"({"metadata":{"labels":{"service.kubernetes.io/endpoint-controller-name":)" + value_json +
            "}}}");
  }

  TempDir data_dir;
  std::unique_ptr<apiserver::RunningApiServer> api_server;
  std::unique_ptr<client::RestClient> api;
  std::unique_ptr<client::TypedClient<model::Service>> service_client;
  std::unique_ptr<client::TypedClient<model::Pod>> pod_client;
  std::unique_ptr<client::TypedClient<model::Endpoints>> endpoints_client;
};

// Ready pods are addresses and unready ones notReadyAddresses, on the named target port; the
// Endpoints follows readiness changes and deletions, and goes with its Service.
TEST_F(EndpointsControllerTest, EndpointsFollowThePods) {
  auto running = StartController();
  CreateService("web", {{"tier", "frontend"}});
  CreatePod("web-1", "web", "10.0.0.1");
  CreatePod("web-2", "web", "10.0.0.2");
  CreatePod("web-3", "web", "10.0.0.3", /*ready=*/false);
  CreatePod("other", "db", "10.0.0.9");
  ASSERT_TRUE(Eventually([&] {
    return Addresses("web") == "[10.0.0.1 10.0.0.2 | 10.0.0.3 :8080]";
  })) << Addresses("web");
  const std::optional<model::Endpoints> endpoints = Get("web");
  ASSERT_TRUE(endpoints.has_value());
  // The Service's labels, and (Options::managed_by_label, on by default: Kubernetes 1.33+) the
  // Endpoints controller's own.
  EXPECT_EQ(endpoints->metadata.labels,
            (model::StringMap{{"tier", "frontend"},
                              {std::string(model::kLabelEndpointsManagedBy),
                               std::string(model::kManagedByEndpointsController)}}));
  EXPECT_TRUE(endpoints->metadata.owner_references.empty());
  EXPECT_FALSE(endpoints->metadata.annotations.contains(model::kAnnotationEndpointsOverCapacity));
  // The trigger-time annotation depends on which sync wrote last (a sync whose pods brought no
  // newer Ready transition removes it, as upstream): endpoints_builder_test covers it.
  EXPECT_TRUE(reconcile::CarriesWrittenSubsetsMark(*endpoints));
  ASSERT_EQ(endpoints->subsets.size(), 1U);
  ASSERT_EQ(endpoints->subsets[0].ports.size(), 1U);
  EXPECT_EQ(endpoints->subsets[0].ports[0].name, "http");
  const model::EndpointAddress& first = endpoints->subsets[0].addresses[0];
  EXPECT_EQ(first.node_name, std::optional<std::string>("node-a"));
  ASSERT_TRUE(first.target_ref.has_value());
  EXPECT_EQ(first.target_ref->kind, "Pod");
  EXPECT_EQ(first.target_ref->name, "web-1");

  // Ready flips, a pod goes away.
  Result<model::Pod> pod = pod_client->Get("default", "web-3");
  ASSERT_TRUE(pod.ok());
  SetPodStatus(*pod_client, *pod, "10.0.0.3", true);
  ASSERT_TRUE(pod_client->Delete("default", "web-1", Now()).ok());
  ASSERT_TRUE(Eventually([&] { return Addresses("web") == "[10.0.0.2 10.0.0.3 | :8080]"; }))
      << Addresses("web");

  // The Service goes: the controller deletes its Endpoints (no ownerReference to collect).
  ASSERT_TRUE(service_client->Delete("default", "web").ok());
  ASSERT_TRUE(Eventually([&] { return !Get("web").has_value(); }));
}

// Syncs that find nothing to change write nothing: a Service annotation change, a pod change the
// endpoints do not show, and a second controller taking over.
TEST_F(EndpointsControllerTest, UnchangedEndpointsAreNotRewritten) {
  std::string version;
  {
    auto running = StartController();
    CreateService("web");
    CreatePod("web-1", "web", "10.0.0.1");
    CreatePod("web-2", "web", "10.0.0.2", /*ready=*/false);
    ASSERT_TRUE(Eventually([&] { return Addresses("web") == "[10.0.0.1 | 10.0.0.2 :8080]"; }))
        << Addresses("web");
    ASSERT_TRUE(Eventually([&] { return running->controller->queue().Len() == 0; }));
    version = Get("web")->metadata.resource_version;

    Result<model::Service> service =
        service_client->Patch("default", "web", client::PatchType::kMergePatch,
                              R"({"metadata":{"annotations":{"touched":"yes"}}})");
    ASSERT_TRUE(service.ok());
    Result<model::Pod> pod = pod_client->Patch("default", "web-1", client::PatchType::kMergePatch,
                                               R"({"metadata":{"annotations":{"touched":"yes"}}})");
    ASSERT_TRUE(pod.ok());
    ASSERT_TRUE(running->Handled("default/web", service->metadata.resource_version));
    ASSERT_TRUE(running->Handled("default/web-1", pod->metadata.resource_version));
    EXPECT_EQ(Get("web")->metadata.resource_version, version);
  }
  auto second = StartController();
  // It has seen the first list (the Service, its pods, the Endpoints) and synced what it queued.
  ASSERT_TRUE(second->Handled("default/web", version));
  for (const char* name : {"web", "web-1", "web-2"}) {
    const std::string version_now =
        std::string(name) == "web" ? service_client->Get("default", name)->metadata.resource_version
                                   : pod_client->Get("default", name)->metadata.resource_version;
    ASSERT_TRUE(second->Handled(std::string("default/") + name, version_now)) << name;
  }
  EXPECT_EQ(Get("web")->metadata.resource_version, version);
}

// Scenario 54 through the API: 1001 ready pods give 1000 addresses and over-capacity "truncated";
// one pod fewer removes the annotation.
TEST_F(EndpointsControllerTest, OverCapacityIsTruncatedAndAnnotated) {
  CreateService("big");
  constexpr int kPods = 1001;
  constexpr int kThreads = 4;
  const auto started = std::chrono::steady_clock::now();
  {
    std::vector<std::thread> threads;
    threads.reserve(kThreads);
    std::atomic<int> next{0};
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&] {
        auto pods_client =
            std::make_unique<client::TypedClient<model::Pod>>(*api, client::PodCodec());
        for (int i = next++; i < kPods; i = next++) {
          CreatePod(*pods_client, "big-" + std::to_string(i), "big",
                    "10.1." + std::to_string(i / 250) + "." + std::to_string(i % 250 + 1));
        }
      });
    }
    for (std::thread& thread : threads) {
      thread.join();
    }
  }
  const auto created = std::chrono::steady_clock::now();
  // The controller starts on a full cache, so the first write is the final one.
  auto running = StartController();
  ASSERT_TRUE(Eventually([&] {
    const std::optional<model::Endpoints> endpoints = Get("big");
    return endpoints.has_value() &&
           endpoints->metadata.annotations.contains(model::kAnnotationEndpointsOverCapacity);
  }));
  std::optional<model::Endpoints> endpoints = Get("big");
  ASSERT_TRUE(endpoints.has_value());
  EXPECT_EQ(AddressCount(*endpoints), 1000U);
  EXPECT_EQ(
      endpoints->metadata.annotations.at(std::string(model::kAnnotationEndpointsOverCapacity)),
      "truncated");

  ASSERT_TRUE(pod_client->Delete("default", "big-0", Now()).ok());
  ASSERT_TRUE(Eventually([&] {
    const std::optional<model::Endpoints> now = Get("big");
    return now.has_value() &&
           !now->metadata.annotations.contains(model::kAnnotationEndpointsOverCapacity);
  }));
  EXPECT_EQ(AddressCount(*Get("big")), 1000U);
  std::cerr << "pods created in "
            << std::chrono::duration_cast<std::chrono::milliseconds>(created - started).count()
            << " ms\n";
}

// KEP-4770: the label hands the Service to another controller (the Endpoints we wrote is deleted,
// pod churn does not bring it back); removing it hands the Service back.
TEST_F(EndpointsControllerTest, EndpointControllerNameLabelHandsTheServiceOver) {
  auto running = StartController();
  CreateService("web");
  CreatePod("web-1", "web", "10.0.0.1");
  ASSERT_TRUE(Eventually([&] { return Addresses("web") == "[10.0.0.1 | :8080]"; }));

  ASSERT_TRUE(Label("web", R"("multinetwork.slicewright.io")").ok());
  ASSERT_TRUE(Eventually([&] { return !Get("web").has_value(); }));
  CreatePod("web-2", "web", "10.0.0.2");
  ASSERT_TRUE(running->Handled("default/web-2",
                               pod_client->Get("default", "web-2")->metadata.resource_version));
  EXPECT_FALSE(Get("web").has_value());

  ASSERT_TRUE(Label("web", "null").ok());
  ASSERT_TRUE(Eventually([&] { return Addresses("web") == "[10.0.0.1 10.0.0.2 | :8080]"; }))
      << Addresses("web");
}

// KEP-4770: an Endpoints we did not write is left to the labelled Service's controller, even
// across our start-up sweep; with the gate off the label means nothing.
TEST_F(EndpointsControllerTest, LabelledServiceKeepsTheOtherControllersEndpoints) {
  CreateService("web", {{std::string(model::kLabelEndpointControllerName), "multus"}});
  CreatePod("web-1", "web", "10.0.0.1");
  model::Endpoints theirs;
  theirs.metadata.name = "web";
  theirs.metadata.namespace_ = "default";
  model::EndpointSubset& subset = theirs.subsets.emplace_back();
  subset.addresses.push_back(model::EndpointAddress{"192.168.7.1", "", {}, {}});
  subset.ports.push_back(model::CoreEndpointPort{"http", 8080, "TCP", {}});
  Result<model::Endpoints> created = endpoints_client->Create(theirs);
  ASSERT_TRUE(created.ok()) << created.status().ToString();

  {
    auto running = StartController();
    ASSERT_TRUE(running->Handled("default/web",
                                 service_client->Get("default", "web")->metadata.resource_version));
    ASSERT_TRUE(running->Handled("default/web-1",
                                 pod_client->Get("default", "web-1")->metadata.resource_version));
    ASSERT_TRUE(running->Handled("default/web", created->metadata.resource_version));
    const std::optional<model::Endpoints> still = Get("web");
    ASSERT_TRUE(still.has_value());
    EXPECT_EQ(still->metadata.resource_version, created->metadata.resource_version);
  }

  Options gate_off;
  gate_off.external_endpoint_controller = false;
  auto running = StartController(gate_off);
  ASSERT_TRUE(Eventually([&] { return Addresses("web") == "[10.0.0.1 | :8080]"; }))
      << Addresses("web");
}

// Start-up sweep: an Endpoints whose Service is gone is deleted; a leader-election record is not.
TEST_F(EndpointsControllerTest, LeftoverEndpointsAreDeletedAtStart) {
  model::Endpoints orphan;
  orphan.metadata.name = "gone";
  orphan.metadata.namespace_ = "default";
  ASSERT_TRUE(endpoints_client->Create(orphan).ok());
  model::Endpoints leader;
  leader.metadata.name = "kube-scheduler";
  leader.metadata.namespace_ = "default";
  leader.metadata.annotations[std::string(model::kAnnotationLeader)] = "{}";
  Result<model::Endpoints> leader_created = endpoints_client->Create(leader);
  ASSERT_TRUE(leader_created.ok());
  const std::string leader_version = leader_created->metadata.resource_version;
  auto running = StartController();
  ASSERT_TRUE(Eventually([&] { return !Get("gone").has_value(); }));
  // The sweep's key for the record has been synced too.
  ASSERT_TRUE(running->Handled("default/kube-scheduler", leader_version));
  EXPECT_TRUE(Get("kube-scheduler").has_value());
}

TEST_F(EndpointsControllerTest, RejectsBadOptions) {
  auto client = LoopbackClient(api_server->port());
  cache::InformerFactory informers(*client);
  Deps deps;
  deps.client = client.get();
  deps.informers = &informers;
  Options options;
  options.concurrent_syncs = 0;
  EXPECT_EQ(Controller::Create(options, deps).status().code(), StatusCode::kInvalid);
  options = {};
  options.batch_period = std::chrono::milliseconds(-1);
  EXPECT_EQ(Controller::Create(options, deps).status().code(), StatusCode::kInvalid);
  EXPECT_EQ(Controller::Create({}, Deps{}).status().code(), StatusCode::kInvalid);
}

}  // namespace
}  // namespace slicewright::controllers::endpoints

// Shared fixture of the controller tests: the real embedded API server on a loopback port, typed
// clients for the test's own writes, helpers that create Nodes, Services and Pods (with status),
// and a controller started with its own informers, as a controller-manager process runs it.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <stdlib.h>

#include "slicewright/base/clock.h"
#include "slicewright/client/typed_client.h"
#include "slicewright/model/well_known.h"

#include "apiserver/rest/serve.h"
#include "controllers/endpointslice/controller.h"
#include "controllers/handled_barrier.h"
#include "fakes/loopback.h"
#include "fakes/loopback_api_server.h"

namespace slicewright::controllers::testing {

using test_support::Eventually;
using test_support::LoopbackClient;
using test_support::TempDir;

using endpointslice::Controller;
using endpointslice::Deps;
using endpointslice::Options;

// One controller with its own informers and client, as a controller-manager process has.
struct RunningController {
  std::unique_ptr<client::RestClient> client;
  std::unique_ptr<cache::InformerFactory> informers;
  // Sees Pods, Services and EndpointSlices after the controllers' handlers.
  std::unique_ptr<HandledBarrier> handled = std::make_unique<HandledBarrier>();
  std::vector<std::unique_ptr<Controller>> controllers;
  Controller* controller = nullptr;  // the first

  ~RunningController() {
    for (auto& running : controllers) running->Stop();
    if (informers != nullptr) informers->Stop();
  }

  // Every controller's queue is idle (testing::WaitIdle).
  bool WaitIdle(bool count_delayed = true) {
    for (auto& running : controllers) {
      if (!testing::WaitIdle(running->queue(), count_delayed)) return false;
    }
    return true;
  }
};

class ControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = test_support::StartLoopbackApiServer(dir_.path());
    client_ = LoopbackClient(server_->port());
    services_ =
        std::make_unique<client::TypedClient<model::Service>>(*client_, client::ServiceCodec());
    pods_ = std::make_unique<client::TypedClient<model::Pod>>(*client_, client::PodCodec());
    nodes_ = std::make_unique<client::TypedClient<model::Node>>(*client_, client::NodeCodec());
    slices_ = std::make_unique<client::TypedClient<model::EndpointSlice>>(
        *client_, client::EndpointSliceCodec());
    CreateNode("node-a", "zone-a");
    CreateNode("node-b", "zone-b");
  }

  std::unique_ptr<RunningController> StartController(Options options = {},
                                                     runtime::Registry* metrics = nullptr) {
    return StartControllers({{std::move(options), endpointslice::Plugin()}}, metrics);
  }

  // Several controllers sharing one process's informers (the default one and custom ones).
  std::unique_ptr<RunningController> StartControllers(
      std::vector<std::pair<Options, endpointslice::Plugin>> controllers,
      runtime::Registry* metrics = nullptr, runtime::EventRecorder* events = nullptr) {
    auto running = std::make_unique<RunningController>();
    running->client = LoopbackClient(server_->port());
    cache::ReflectorOptions reflector;
    reflector.initial_backoff = std::chrono::milliseconds(20);
    reflector.max_backoff = std::chrono::milliseconds(200);
    running->informers = std::make_unique<cache::InformerFactory>(*running->client, reflector);
    for (auto& [options, plugin] : controllers) {
      Deps deps;
      deps.client = running->client.get();
      deps.informers = running->informers.get();
      deps.metrics = metrics;
      deps.events = events;
      deps.plugin = std::move(plugin);
      deps.clock = controller_clock_;
      auto controller = Controller::Create(options, deps);
      EXPECT_TRUE(controller.ok()) << controller.status().ToString();
      if (!controller.ok()) return running;
      running->controllers.push_back(std::move(controller).value());
    }
    running->handled->Watch(running->informers->Pods());
    running->handled->Watch(running->informers->Services());
    running->handled->Watch(running->informers->EndpointSlices());
    running->informers->Start();
    EXPECT_TRUE(running->informers->WaitForCacheSync(std::chrono::seconds(10)));
    for (auto& controller : running->controllers) controller->Start();
    if (!running->controllers.empty()) running->controller = running->controllers.front().get();
    return running;
  }

  void CreateNode(const std::string& name, const std::string& zone) {
    model::Node node;
    node.metadata.name = name;
    node.metadata.labels[std::string(model::kLabelTopologyZone)] = zone;
    ASSERT_TRUE(nodes_->Create(node).ok());
  }

  void CreateService(const std::string& name, model::StringMap labels = {},
                     model::StringMap annotations = {}, bool headless = false) {
    model::Service service;
    service.metadata.name = name;
    service.metadata.namespace_ = "default";
    service.metadata.labels = std::move(labels);
    service.metadata.annotations = std::move(annotations);
    if (headless) service.spec.cluster_ip = "None";
    service.spec.selector = model::StringMap{{"app", name}};
    model::ServicePort& port = service.spec.ports.emplace_back();
    port.name = "http";
    port.port = 80;
    port.target_port = model::IntOrString::FromString("http");
    ASSERT_TRUE(services_->Create(service).ok());
  }

  // A pod of `app` on `node` with `ip`, Running and (not) Ready.
  void CreatePod(const std::string& name, const std::string& app, const std::string& node,
                 const std::string& ip, bool ready = true, model::StringMap annotations = {}) {
    model::Pod pod;
    pod.metadata.name = name;
    pod.metadata.annotations = std::move(annotations);
    pod.metadata.namespace_ = "default";
    pod.metadata.labels["app"] = app;
    pod.spec.node_name = node;
    model::Container& container = pod.spec.containers.emplace_back();
    container.name = "app";
    container.image = "nginx";
    model::ContainerPort& port = container.ports.emplace_back();
    port.name = "http";
    port.container_port = 8080;
    Result<model::Pod> created = pods_->Create(pod);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    SetPodStatus(*created, ip, ready);
  }

  void SetPodStatus(model::Pod pod, const std::string& ip, bool ready) {
    pod.status.phase = "Running";
    pod.status.pod_ip = ip;
    pod.status.pod_ips = {ip};
    pod.status.conditions.clear();
    model::PodCondition& condition = pod.status.conditions.emplace_back();
    condition.type = "Ready";
    condition.status = ready ? "True" : "False";
    condition.last_transition_time = model::Time::FromUnixSeconds(1'800'000'000);
    Result<model::Pod> updated = pods_->UpdateStatus(pod);
    ASSERT_TRUE(updated.ok()) << updated.status().ToString();
  }

  // Waits until `running`'s controllers have handled the Pod `name` (of "default") at its current
  // version and finished the syncs it caused (those due, on a fake controller_clock_).
  bool PodHandled(RunningController& running, const std::string& name) {
    Result<model::Pod> pod = pods_->Get("default", name);
    EXPECT_TRUE(pod.ok()) << pod.status().ToString();
    return pod.ok() &&
           running.handled->WaitSeen("default/" + name, pod->metadata.resource_version) &&
           running.WaitIdle(controller_clock_ == nullptr);
  }

  // The same for the Service `name`.
  bool ServiceHandled(RunningController& running, const std::string& name) {
    Result<model::Service> service = services_->Get("default", name);
    EXPECT_TRUE(service.ok()) << service.status().ToString();
    return service.ok() &&
           running.handled->WaitSeen("default/" + name, service->metadata.resource_version) &&
           running.WaitIdle(controller_clock_ == nullptr);
  }

  // The slices of `service` on the server, by name.
  std::vector<model::EndpointSlice> SlicesOf(const std::string& service) {
    client::ListOptions options;
    options.label_selector = std::string(model::kLabelServiceName) + "=" + service;
    Result<codec::ListPage<model::EndpointSlice>> page = slices_->ListAll("default", options);
    EXPECT_TRUE(page.ok()) << page.status().ToString();
    return page.ok() ? page->items : std::vector<model::EndpointSlice>{};
  }

  // The slices of `service` written by the controller with this managed-by value.
  std::vector<model::EndpointSlice> OurSlicesOf(
      const std::string& service,
      std::string_view managed_by = model::kManagedByEndpointSliceController) {
    std::vector<model::EndpointSlice> ours;
    for (model::EndpointSlice& slice : SlicesOf(service)) {
      if (slice.metadata.labels[std::string(model::kLabelManagedBy)] == managed_by) {
        ours.push_back(std::move(slice));
      }
    }
    return ours;
  }

  // Ready addresses across the Service's slices of one controller.
  std::multiset<std::string> ReadyAddresses(
      const std::string& service,
      std::string_view managed_by = model::kManagedByEndpointSliceController) {
    std::multiset<std::string> out;
    for (const model::EndpointSlice& slice : OurSlicesOf(service, managed_by)) {
      for (const model::Endpoint& endpoint : slice.endpoints) {
        if (endpoint.conditions.ready.value_or(false)) {
          out.insert(endpoint.addresses.begin(), endpoint.addresses.end());
        }
      }
    }
    return out;
  }

  TempDir dir_;
  Clock* controller_clock_ = nullptr;  // the controllers' Deps::clock; null: the system clock
  std::unique_ptr<apiserver::RunningApiServer> server_;
  std::unique_ptr<client::RestClient> client_;
  std::unique_ptr<client::TypedClient<model::Service>> services_;
  std::unique_ptr<client::TypedClient<model::Pod>> pods_;
  std::unique_ptr<client::TypedClient<model::Node>> nodes_;
  std::unique_ptr<client::TypedClient<model::EndpointSlice>> slices_;
};

}  // namespace slicewright::controllers::testing

#include "controllers/mirroring/controller.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "slicewright/client/typed_client.h"
#include "slicewright/model/well_known.h"

#include "apiserver/rest/serve.h"
#include "controllers/endpointslice/controller.h"
#include "controllers/handled_barrier.h"
#include "fakes/loopback.h"

// The EndpointSlice Mirroring controller against the real embedded API server: user Endpoints of
// selector-less Services become slices and follow them; skip-mirror, selectors, a missing Service
// and KEP-4770's label remove what was mirrored; slices of other managers are never touched.
namespace slicewright::controllers::mirroring {
namespace {

using test_support::Eventually;
using test_support::LoopbackClient;
using test_support::TempDir;

using namespace std::chrono_literals;

const std::string kMirroring(model::kManagedByMirroringController);

// One controller with its own informers and client, as a controller-manager process has.
struct RunningController {
  std::unique_ptr<client::RestClient> client;
  std::unique_ptr<cache::InformerFactory> informers;
  std::unique_ptr<Controller> controller;
  std::unique_ptr<endpointslice::Controller> endpointslice;  // when asked for
  // Sees Services, Endpoints and EndpointSlices after the controllers' handlers.
  std::unique_ptr<testing::HandledBarrier> handled = std::make_unique<testing::HandledBarrier>();

  // Waits until the controllers have handled the object `key` at `version` and finished the
  // syncs it caused.
  bool Handled(const std::string& key, const std::string& version) {
    return handled->WaitSeen(key, version) && testing::WaitIdle(controller->queue()) &&
           (endpointslice == nullptr || testing::WaitIdle(endpointslice->queue()));
  }

  ~RunningController() {
    if (controller != nullptr) controller->Stop();
    if (endpointslice != nullptr) endpointslice->Stop();
    if (informers != nullptr) informers->Stop();
  }
};

model::EndpointAddress Address(std::string ip, std::string hostname = "") {
  model::EndpointAddress address;
  address.ip = std::move(ip);
  address.hostname = std::move(hostname);
  return address;
}

class MirroringControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    apiserver::ServeOptions options;
    options.listen = "127.0.0.1:0";
    options.data_dir = temp_dir.path();
    options.io_threads = 2;
    auto started = apiserver::RunningApiServer::Start(options);
    ASSERT_TRUE(started.ok()) << started.status().ToString();
    api_server = std::move(started).value();
    api_client = LoopbackClient(api_server->port());
    service_client =
        std::make_unique<client::TypedClient<model::Service>>(*api_client, client::ServiceCodec());
    endpoints_client = std::make_unique<client::TypedClient<model::Endpoints>>(
        *api_client, client::EndpointsCodec());
    slice_client = std::make_unique<client::TypedClient<model::EndpointSlice>>(
        *api_client, client::EndpointSliceCodec());
  }

  std::unique_ptr<RunningController> StartController(const Options& options = {},
                                                     bool with_endpointslice = false,
                                                     runtime::Registry* registry = nullptr,
                                                     runtime::EventRecorder* events = nullptr) {
    auto running = std::make_unique<RunningController>();
    running->client = LoopbackClient(api_server->port());
    cache::ReflectorOptions reflector;
    reflector.initial_backoff = 20ms;
    reflector.max_backoff = 200ms;
    running->informers = std::make_unique<cache::InformerFactory>(*running->client, reflector);
    if (with_endpointslice) {
      // Registered first, so its "service" index is on the shared informer before ours.
      endpointslice::Deps deps;
      deps.client = running->client.get();
      deps.informers = running->informers.get();
      auto controller = endpointslice::Controller::Create({}, deps);
      EXPECT_TRUE(controller.ok()) << controller.status().ToString();
      running->endpointslice = std::move(controller).value();
    }
    Deps deps;
    deps.client = running->client.get();
    deps.informers = running->informers.get();
    deps.metrics = registry;
    deps.events = events;
    auto controller = Controller::Create(options, deps);
    EXPECT_TRUE(controller.ok()) << controller.status().ToString();
    running->controller = std::move(controller).value();
    running->handled->Watch(running->informers->Services());
    running->handled->Watch(running->informers->Endpoints());
    running->handled->Watch(running->informers->EndpointSlices());
    running->informers->Start();
    EXPECT_TRUE(running->informers->WaitForCacheSync(10s));
    running->controller->Start();
    if (running->endpointslice != nullptr) running->endpointslice->Start();
    return running;
  }

  void CreateService(const std::string& name, bool with_selector = false,
                     model::StringMap labels = {}) {
    model::Service service;
    service.metadata.name = name;
    service.metadata.namespace_ = "default";
    service.metadata.labels = std::move(labels);
    if (with_selector) service.spec.selector = model::StringMap{{"app", name}};
    model::ServicePort& port = service.spec.ports.emplace_back();
    port.name = "http";
    port.port = 80;
    port.target_port = model::IntOrString::FromInt(8080);
    Result<model::Service> created = service_client->Create(service);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
  }

  // Endpoints `name` with one subset (port http/8080) of `ready` and `not_ready` addresses.
  model::Endpoints MakeEndpoints(const std::string& name, std::vector<model::EndpointAddress> ready,
                                 std::vector<model::EndpointAddress> not_ready = {}) {
    model::Endpoints endpoints;
    endpoints.metadata.name = name;
    endpoints.metadata.namespace_ = "default";
    model::EndpointSubset& subset = endpoints.subsets.emplace_back();
    subset.addresses = std::move(ready);
    subset.not_ready_addresses = std::move(not_ready);
    subset.ports = {model::CoreEndpointPort{"http", 8080, "TCP", std::nullopt}};
    return endpoints;
  }

  model::Endpoints CreateEndpoints(const model::Endpoints& endpoints) {
    Result<model::Endpoints> created = endpoints_client->Create(endpoints);
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    return created.ok() ? *created : model::Endpoints{};
  }

  // The slices labelled with `service`'s name on the server.
  std::vector<model::EndpointSlice> SlicesOf(const std::string& service) {
    client::ListOptions options;
    options.label_selector = std::string(model::kLabelServiceName) + "=" + service;
    Result<codec::ListPage<model::EndpointSlice>> page = slice_client->ListAll("default", options);
    EXPECT_TRUE(page.ok()) << page.status().ToString();
    return page.ok() ? page->items : std::vector<model::EndpointSlice>{};
  }

  std::vector<model::EndpointSlice> MirroredOf(const std::string& service) {
    std::vector<model::EndpointSlice> ours;
    for (model::EndpointSlice& slice : SlicesOf(service)) {
      if (slice.metadata.labels[std::string(model::kLabelManagedBy)] == kMirroring) {
        ours.push_back(std::move(slice));
      }
    }
    return ours;
  }

  // Mirrored addresses of `service` (ready ones marked with nothing, not-ready with '!').
  std::multiset<std::string> MirroredAddresses(const std::string& service) {
    std::multiset<std::string> out;
    for (const model::EndpointSlice& slice : MirroredOf(service)) {
      for (const model::Endpoint& endpoint : slice.endpoints) {
        for (const std::string& address : endpoint.addresses) {
          out.insert(endpoint.conditions.ready.value_or(true) ? address : address + "!");
        }
      }
    }
    return out;
  }

  // A slice of another manager for `service`.
  model::EndpointSlice CreateForeignSlice(const std::string& service, const std::string& manager) {
    model::EndpointSlice theirs;
    theirs.metadata.name = service + "-" + "foreign";
    theirs.metadata.namespace_ = "default";
    theirs.metadata.labels[std::string(model::kLabelServiceName)] = service;
    theirs.metadata.labels[std::string(model::kLabelManagedBy)] = manager;
    theirs.address_type = "IPv4";
    model::Endpoint& endpoint = theirs.endpoints.emplace_back();
    endpoint.addresses = {"192.168.7.1"};
    Result<model::EndpointSlice> created = slice_client->Create(theirs);
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    return created.ok() ? *created : model::EndpointSlice{};
  }

  void PatchLabels(const std::string& resource, const std::string& name,
                   const std::string& labels_json) {
    const std::string patch = R"({"metadata":{"labels":)" + labels_json + "}}";
    if (resource == "services") {
      Result<model::Service> patched =
          service_client->Patch("default", name, client::PatchType::kMergePatch, patch);
      ASSERT_TRUE(patched.ok()) << patched.status().ToString();
    } else {
      Result<model::Endpoints> patched =
          endpoints_client->Patch("default", name, client::PatchType::kMergePatch, patch);
      ASSERT_TRUE(patched.ok()) << patched.status().ToString();
    }
  }

  TempDir temp_dir;
  std::unique_ptr<apiserver::RunningApiServer> api_server;
  std::unique_ptr<client::RestClient> api_client;
  std::unique_ptr<client::TypedClient<model::Service>> service_client;
  std::unique_ptr<client::TypedClient<model::Endpoints>> endpoints_client;
  std::unique_ptr<client::TypedClient<model::EndpointSlice>> slice_client;
};

// A selector-less Service's Endpoints become one slice with the Endpoints' labels, annotations
// (minus the skipped keys), ports and addresses, owned by the Endpoints; updates follow; deleting
// the Endpoints deletes the slice.
TEST_F(MirroringControllerTest, MirrorsAndFollowsUserEndpoints) {
  auto running = StartController();
  CreateService("ext");
  model::Endpoints endpoints =
      MakeEndpoints("ext", {Address("10.1.0.1", "db-0")}, {Address("10.1.0.2")});
  endpoints.metadata.labels = {{"app", "ext"}};
  endpoints.metadata.annotations = {{"team", "net"},
                                    {std::string(model::kAnnotationLastAppliedConfig), "{}"}};
  const model::Endpoints created = CreateEndpoints(endpoints);
  ASSERT_TRUE(Eventually([&] {
    return MirroredAddresses("ext") == std::multiset<std::string>{"10.1.0.1", "10.1.0.2!"};
  }));
  std::vector<model::EndpointSlice> slices = MirroredOf("ext");
  ASSERT_EQ(slices.size(), 1U);
  const model::EndpointSlice slice = slices[0];
  EXPECT_TRUE(slice.metadata.name.starts_with("ext-"));
  EXPECT_EQ(slice.metadata.labels,
            (model::StringMap{{"app", "ext"},
                              {std::string(model::kLabelManagedBy), kMirroring},
                              {std::string(model::kLabelServiceName), "ext"}}));
  EXPECT_EQ(slice.metadata.annotations, (model::StringMap{{"team", "net"}}));
  ASSERT_EQ(slice.metadata.owner_references.size(), 1U);
  EXPECT_EQ(slice.metadata.owner_references[0].kind, "Endpoints");
  EXPECT_EQ(slice.metadata.owner_references[0].name, "ext");
  EXPECT_EQ(slice.metadata.owner_references[0].uid, created.metadata.uid);
  EXPECT_EQ(slice.metadata.owner_references[0].controller, true);
  EXPECT_EQ(slice.address_type, "IPv4");
  ASSERT_EQ(slice.ports.size(), 1U);
  EXPECT_EQ(slice.ports[0], (model::EndpointPort{"http", "TCP", 8080, std::nullopt}));
  ASSERT_EQ(slice.endpoints.size(), 2U);
  EXPECT_EQ(slice.endpoints[0].hostname, "db-0");
  EXPECT_FALSE(slice.endpoints[0].conditions.serving.has_value());

  // An update (one more address, the other one ready) rewrites the same slice.
  Result<model::Endpoints> current = endpoints_client->Get("default", "ext");
  ASSERT_TRUE(current.ok());
  current->subsets[0].addresses = {Address("10.1.0.1", "db-0"), Address("10.1.0.2"),
                                   Address("10.1.0.3")};
  current->subsets[0].not_ready_addresses.clear();
  ASSERT_TRUE(endpoints_client->Update(*current).ok());
  ASSERT_TRUE(Eventually([&] {
    return MirroredAddresses("ext") ==
           std::multiset<std::string>{"10.1.0.1", "10.1.0.2", "10.1.0.3"};
  }));
  slices = MirroredOf("ext");
  ASSERT_EQ(slices.size(), 1U);
  EXPECT_EQ(slices[0].metadata.name, slice.metadata.name);

  // A slice of another manager for the same name is never touched.
  const model::EndpointSlice theirs = CreateForeignSlice("ext", "someone-else.example.com");
  ASSERT_TRUE(endpoints_client->Delete("default", "ext").ok());
  ASSERT_TRUE(Eventually([&] { return MirroredOf("ext").empty(); }));
  Result<model::EndpointSlice> still = slice_client->Get("default", theirs.metadata.name);
  ASSERT_TRUE(still.ok()) << still.status().ToString();
  EXPECT_EQ(still->metadata.resource_version, theirs.metadata.resource_version);
}

// A subset beyond --mirroring-max-endpoints-per-subset is truncated; the Endpoints controller's
// over-capacity annotation is mirrored like any other.
TEST_F(MirroringControllerTest, TruncatesAnOverCapacitySubset) {
  Options options;
  options.max_endpoints_per_subset = 3;
  auto events_client = LoopbackClient(api_server->port());
  runtime::EventRecorderOptions recorder_options;
  recorder_options.component = std::string(kComponent);
  auto recorder =
      runtime::EventRecorder::Create(runtime::NewRestEventSink(*events_client), recorder_options);
  ASSERT_TRUE(recorder.ok()) << recorder.status().ToString();
  auto running = StartController(options, false, nullptr, recorder->get());
  CreateService("big");
  std::vector<model::EndpointAddress> ready;
  for (int i = 1; i <= 5; ++i) ready.push_back(Address("10.2.0." + std::to_string(i)));
  model::Endpoints endpoints = MakeEndpoints("big", std::move(ready));
  endpoints.metadata.annotations[std::string(model::kAnnotationEndpointsOverCapacity)] =
      "truncated";
  CreateEndpoints(endpoints);
  ASSERT_TRUE(Eventually([&] {
    return MirroredAddresses("big") ==
           std::multiset<std::string>{"10.2.0.1", "10.2.0.2", "10.2.0.3"};
  }));
  const std::vector<model::EndpointSlice> slices = MirroredOf("big");
  ASSERT_EQ(slices.size(), 1U);
  EXPECT_EQ(slices[0].metadata.annotations.at(std::string(model::kAnnotationEndpointsOverCapacity)),
            "truncated");

  // Upstream's Warning, on the Endpoints (recorded just after the write, so waited for).
  client::TypedClient<model::Event> event_client(*api_client, client::EventCodec());
  std::optional<model::Event> warning;
  ASSERT_TRUE(Eventually([&] {
    (*recorder)->Flush();
    Result<codec::ListPage<model::Event>> listed = event_client.ListAll("default", {});
    if (!listed.ok()) return false;
    for (const model::Event& event : listed->items) {
      if (event.reason == "TooManyAddressesToMirror") warning = event;
    }
    return warning.has_value();
  }));
  EXPECT_EQ(warning->type, "Warning");
  EXPECT_EQ(warning->involved_object.kind, "Endpoints");
  EXPECT_EQ(warning->involved_object.name, "big");
  EXPECT_EQ(warning->message,
            "A max of 3 addresses can be mirrored to EndpointSlices per Endpoints subset. 2 "
            "addresses were skipped");
  EXPECT_EQ(warning->source_component, kComponent);
  running.reset();  // the controller goes before the recorder it writes to
}

// skip-mirror=true: never mirrored, and adding it later deletes what was mirrored.
TEST_F(MirroringControllerTest, SkipMirrorLabel) {
  auto running = StartController();
  CreateService("skipped");
  model::Endpoints skipped = MakeEndpoints("skipped", {Address("10.3.0.1")});
  skipped.metadata.labels[std::string(model::kLabelSkipMirror)] = "true";
  CreateEndpoints(skipped);
  CreateService("later");
  CreateEndpoints(MakeEndpoints("later", {Address("10.3.0.2")}));
  ASSERT_TRUE(Eventually([&] { return MirroredOf("later").size() == 1; }));
  EXPECT_TRUE(MirroredOf("skipped").empty());

  PatchLabels("endpoints", "later", R"({"endpointslice.kubernetes.io/skip-mirror":"true"})");
  ASSERT_TRUE(Eventually([&] { return MirroredOf("later").empty(); }));
  PatchLabels("endpoints", "later", R"({"endpointslice.kubernetes.io/skip-mirror":null})");
  ASSERT_TRUE(Eventually([&] { return MirroredOf("later").size() == 1; }));
}

// A Service with a selector is served from its pods: its Endpoints are not mirrored, and gaining
// a selector (or losing the Service) deletes what was mirrored.
TEST_F(MirroringControllerTest, ServiceWithSelectorOrNoServiceIsNotMirrored) {
  auto running = StartController();
  CreateService("selected", /*with_selector=*/true);
  CreateEndpoints(MakeEndpoints("selected", {Address("10.4.0.1")}));
  CreateEndpoints(MakeEndpoints("orphan", {Address("10.4.0.3")}));  // no Service at all
  CreateService("flips");
  CreateEndpoints(MakeEndpoints("flips", {Address("10.4.0.2")}));
  ASSERT_TRUE(Eventually([&] { return MirroredOf("flips").size() == 1; }));
  EXPECT_TRUE(MirroredOf("selected").empty());
  EXPECT_TRUE(MirroredOf("orphan").empty());

  Result<model::Service> patched =
      service_client->Patch("default", "flips", client::PatchType::kMergePatch,
                            R"({"spec":{"selector":{"app":"flips"}}})");
  ASSERT_TRUE(patched.ok()) << patched.status().ToString();
  ASSERT_TRUE(Eventually([&] { return MirroredOf("flips").empty(); }));

  // The Service goes (the Endpoints stays, so no garbage collection): the slices go too.
  CreateService("gone");
  CreateEndpoints(MakeEndpoints("gone", {Address("10.4.0.4")}));
  ASSERT_TRUE(Eventually([&] { return MirroredOf("gone").size() == 1; }));
  ASSERT_TRUE(service_client->Delete("default", "gone").ok());
  ASSERT_TRUE(Eventually([&] { return MirroredOf("gone").empty(); }));
  EXPECT_TRUE(endpoints_client->Get("default", "gone").ok());
}

// KEP-4770: the label hands the Service to another controller (mirrored slices deleted, its
// slices untouched); removing it mirrors again.
TEST_F(MirroringControllerTest, EndpointControllerNameLabelHandsTheServiceOver) {
  auto running = StartController();
  CreateService("ext");
  CreateEndpoints(MakeEndpoints("ext", {Address("10.5.0.1")}));
  ASSERT_TRUE(Eventually([&] { return MirroredOf("ext").size() == 1; }));
  const model::EndpointSlice theirs = CreateForeignSlice("ext", "multinetwork.slicewright.io");

  PatchLabels(
      "services", "ext",
      R"({"service.kubernetes.io/endpoint-controller-name":"multinetwork.slicewright.io"})");
  ASSERT_TRUE(Eventually([&] { return MirroredOf("ext").empty(); }));
  // Endpoints churn does not bring the mirrored slices back while the label is there.
  Result<model::Endpoints> current = endpoints_client->Get("default", "ext");
  ASSERT_TRUE(current.ok());
  current->subsets[0].addresses.push_back(Address("10.5.0.2"));
  Result<model::Endpoints> updated = endpoints_client->Update(*current);
  ASSERT_TRUE(updated.ok());
  ASSERT_TRUE(running->Handled("default/ext", updated->metadata.resource_version));
  EXPECT_TRUE(MirroredOf("ext").empty());
  Result<model::EndpointSlice> still = slice_client->Get("default", theirs.metadata.name);
  ASSERT_TRUE(still.ok());
  EXPECT_EQ(still->metadata.resource_version, theirs.metadata.resource_version);

  PatchLabels("services", "ext", R"({"service.kubernetes.io/endpoint-controller-name":null})");
  ASSERT_TRUE(Eventually([&] {
    return MirroredAddresses("ext") == std::multiset<std::string>{"10.5.0.1", "10.5.0.2"};
  }));
  still = slice_client->Get("default", theirs.metadata.name);
  ASSERT_TRUE(still.ok());
  EXPECT_EQ(still->metadata.resource_version, theirs.metadata.resource_version);
}

// With the gate off the label means nothing.
TEST_F(MirroringControllerTest, GateOffIgnoresTheLabel) {
  Options options;
  options.external_endpoint_controller = false;
  auto running = StartController(options);
  CreateService("ext", false, {{std::string(model::kLabelEndpointControllerName), "other"}});
  CreateEndpoints(MakeEndpoints("ext", {Address("10.6.0.1")}));
  ASSERT_TRUE(Eventually([&] { return MirroredOf("ext").size() == 1; }));
}

// Next to the EndpointSlice controller on one InformerFactory (both register the "service"
// index): each manages its own slices only.
TEST_F(MirroringControllerTest, SharesInformersWithTheEndpointSliceController) {
  auto running = StartController({}, /*with_endpointslice=*/true);
  CreateService("ext");
  CreateEndpoints(MakeEndpoints("ext", {Address("10.7.0.1")}));
  CreateService("web", /*with_selector=*/true);
  CreateEndpoints(MakeEndpoints("web", {Address("10.7.0.2")}));
  ASSERT_TRUE(Eventually([&] { return MirroredOf("ext").size() == 1; }));
  // The EndpointSlice controller publishes its placeholder for the pod-less "web".
  ASSERT_TRUE(Eventually([&] { return SlicesOf("web").size() == 1; }));
  EXPECT_TRUE(MirroredOf("web").empty());
  // Both controllers have handled ext's Service and Endpoints and synced what they queued.
  ASSERT_TRUE(running->Handled("default/ext",
                               service_client->Get("default", "ext")->metadata.resource_version));
  ASSERT_TRUE(running->Handled("default/ext",
                               endpoints_client->Get("default", "ext")->metadata.resource_version));
  EXPECT_EQ(SlicesOf("ext").size(), 1U);  // the EndpointSlice controller ignores selector-less ext
}

// Upstream's endpoint_slice_mirroring_controller_* metrics follow the writes.
TEST_F(MirroringControllerTest, ExportsUpstreamMetrics) {
  runtime::Registry registry;
  {
    auto running = StartController({}, false, &registry);
    CreateService("ext");
    CreateEndpoints(MakeEndpoints("ext", {Address("10.8.0.1"), Address("10.8.0.2")}));
    ASSERT_TRUE(Eventually([&] { return MirroredOf("ext").size() == 1; }));
    ASSERT_TRUE(Eventually([&] {
      return registry.Expose().find(
                 "endpoint_slice_mirroring_controller_changes{operation=\"create\"} 1\n") !=
             std::string::npos;
    })) << registry.Expose();
    const std::string text = registry.Expose();
    EXPECT_NE(text.find("endpoint_slice_mirroring_controller_endpoints_desired 2\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("endpoint_slice_mirroring_controller_num_endpoint_slices 1\n"),
              std::string::npos);
    EXPECT_NE(text.find("endpoint_slice_mirroring_controller_desired_endpoint_slices 1\n"),
              std::string::npos);
    EXPECT_NE(text.find("endpoint_slice_mirroring_controller_endpoints_added_per_sync_sum 2\n"),
              std::string::npos);
    EXPECT_NE(text.find("endpoint_slice_mirroring_controller_endpoints_sync_duration_count"),
              std::string::npos);

    ASSERT_TRUE(service_client->Delete("default", "ext").ok());
    ASSERT_TRUE(Eventually([&] { return MirroredOf("ext").empty(); }));
    ASSERT_TRUE(Eventually([&] {
      return registry.Expose().find(
                 "endpoint_slice_mirroring_controller_num_endpoint_slices 0\n") !=
             std::string::npos;
    })) << registry.Expose();
  }
}

TEST_F(MirroringControllerTest, RejectsBadOptions) {
  auto client = LoopbackClient(api_server->port());
  cache::InformerFactory informers(*client);
  Deps deps;
  deps.client = client.get();
  deps.informers = &informers;
  Options options;
  options.max_endpoints_per_subset = 1001;
  Result<std::unique_ptr<Controller>> bad = Controller::Create(options, deps);
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalid);
  EXPECT_EQ(bad.status().message(),
            "--mirroring-max-endpoints-per-subset must be between 1 and 1000, got 1001");
  options = {};
  options.concurrent_syncs = 0;
  EXPECT_EQ(Controller::Create(options, deps).status().code(), StatusCode::kInvalid);
  options = {};
  options.batch_period = std::chrono::milliseconds(-1);
  EXPECT_EQ(Controller::Create(options, deps).status().code(), StatusCode::kInvalid);
  EXPECT_EQ(Controller::Create({}, Deps{}).status().code(), StatusCode::kInvalid);
}

}  // namespace
}  // namespace slicewright::controllers::mirroring

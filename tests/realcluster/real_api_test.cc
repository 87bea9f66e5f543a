// The client, cache and runtime layers against upstream kube-apiserver (the real-cluster tier):
// what our own API server can only agree with, since both share one reading of Kubernetes. The
// server's defaults decode into our model; its refusals arrive as the Status codes, reasons and
// field paths our retry policy and conditions rely on; every kind our controllers write is
// accepted with fieldValidation=Strict (no field the server does not know) and survives a round
// trip; informers sync and follow it with LIST and WatchList; leader election holds a real Lease;
// the event recorder's create and count PATCH land. One control plane for the whole binary, which
// exits 77 (skipped) without KUBEBUILDER_ASSETS.
#include <atomic>
#include <chrono>
#include <iostream>
#include <memory>
#include <set>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "slicewright/base/clock.h"
#include "slicewright/cache/informer_factory.h"
#include "slicewright/client/rest_client.h"
#include "slicewright/client/rest_config.h"
#include "slicewright/client/transport.h"
#include "slicewright/client/typed_client.h"
#include "slicewright/codec/coordination.h"
#include "slicewright/codec/json.h"
#include "slicewright/model/coordination.h"
#include "slicewright/runtime/events.h"
#include "slicewright/runtime/leader_election.h"

#include "realcluster/control_plane.h"

namespace slicewright {
namespace {

using namespace std::chrono_literals;
using test_support::RealControlPlane;

RealControlPlane* g_plane = nullptr;

std::unique_ptr<client::RestClient> ClientFor(const std::string& kubeconfig) {
  client::LoadOptions load;
  load.kubeconfig = kubeconfig;
  Result<client::RestConfig> config = client::LoadRestConfig(load);
  if (!config.ok()) {
    ADD_FAILURE() << config.status().ToString();
    return nullptr;
  }
  Result<std::unique_ptr<client::Transport>> transport =
      client::Transport::Create(*config, client::TransportOptions{});
  if (!transport.ok()) {
    ADD_FAILURE() << transport.status().ToString();
    return nullptr;
  }
  client::RestClientOptions options;
  options.qps = 200;
  options.burst = 400;
  options.field_manager = "slicewright-realcluster-test";
  Result<std::unique_ptr<client::RestClient>> made = client::RestClient::Create(
      std::shared_ptr<client::Transport>(std::move(transport).value()), options);
  if (!made.ok()) {
    ADD_FAILURE() << made.status().ToString();
    return nullptr;
  }
  return std::move(made).value();
}

model::ObjectReference Ref(std::string_view kind, const std::string& ns, std::string_view name,
                           std::string_view uid) {
  model::ObjectReference ref;
  ref.kind = std::string(kind);
  ref.namespace_ = ns;
  ref.name = model::InlineString(name);
  ref.uid = model::InlineString(uid);
  return ref;
}

constexpr std::string_view kPodUid = "0c8f3e52-8b1c-4d39-9f5a-4d2a8e6c1b7a";

// Polls `condition` every 20 ms until it holds or `timeout` passes.
template <typename F>
bool Eventually(F condition, std::chrono::milliseconds timeout = 20s) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(20ms);
  }
  return true;
}

class RealApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    client_ = ClientFor(g_plane->admin_kubeconfig());
    ASSERT_NE(client_, nullptr);
    // A namespace per test, so tests never see each other's objects.
    namespace_ =
        "t-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name());
    for (char& c : namespace_) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (namespace_.size() > 60) namespace_.resize(60);
    ASSERT_TRUE(g_plane->Kubectl("create namespace " + namespace_).ok());
  }

  static model::Service WebService(const std::string& ns, const std::string& name) {
    model::Service service;
    service.metadata.name = name;
    service.metadata.namespace_ = ns;
    service.spec.selector = model::StringMap{{"app", "web"}};
    model::ServicePort port;
    port.name = "http";
    port.port = 80;
    service.spec.ports.push_back(port);
    return service;
  }

  // POST of `body` to `collection` (a path) as a server-side dry run with strict field
  // validation: the answer's status and body.
  client::Response StrictDryRunCreate(const std::string& collection, const std::string& body) {
    client::Request request;
    request.method = "POST";
    request.target = collection + "?dryRun=All&fieldValidation=Strict";
    request.body = body;
    request.content_type = "application/json";
    Result<client::Response> answer = client_->transport().Do(request);
    EXPECT_TRUE(answer.ok()) << answer.status().ToString();
    return answer.ok() ? *answer : client::Response{};
  }

  std::unique_ptr<client::RestClient> client_;
  std::string namespace_;
};

// A Service as the server defaults it decodes into our model as our own server's tests assume:
// one ClusterIP of the cluster's family, SingleStack, TCP, targetPort = port, Cluster policy.
TEST_F(RealApiTest, ServerDefaultsDecode) {
  client::TypedClient<model::Service> services(*client_, client::ServiceCodec());
  Result<model::Service> created = services.Create(WebService(namespace_, "web"));
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_FALSE(created->spec.cluster_ip.empty());
  EXPECT_EQ(created->spec.cluster_ips, std::vector<std::string>{created->spec.cluster_ip});
  EXPECT_EQ(created->spec.ip_families, std::vector<std::string>{"IPv4"});
  EXPECT_EQ(created->spec.ip_family_policy, "SingleStack");
  EXPECT_EQ(created->spec.session_affinity, "None");
  EXPECT_EQ(created->spec.internal_traffic_policy, "Cluster");
  ASSERT_EQ(created->spec.ports.size(), 1U);
  EXPECT_EQ(created->spec.ports[0].protocol, "TCP");
  EXPECT_EQ(created->spec.ports[0].target_port, model::IntOrString::FromInt(80));
  EXPECT_FALSE(created->metadata.uid.empty());
  EXPECT_TRUE(created->metadata.creation_timestamp.has_value());
}

// The refusals our retry policy (IsRetryable) and our conditions read: code, message, field.
TEST_F(RealApiTest, RefusalsAreStatusesWithReasonAndField) {
  client::TypedClient<model::Service> services(*client_, client::ServiceCodec());
  Result<model::Service> missing = services.Get(namespace_, "nope");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(), "services \"nope\" not found");

  Result<model::Service> created = services.Create(WebService(namespace_, "web"));
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ(services.Create(WebService(namespace_, "web")).status().code(),
            StatusCode::kAlreadyExists);

  model::Service stale = *created;
  stale.metadata.labels["a"] = "1";
  ASSERT_TRUE(services.Update(stale).ok());
  stale.metadata.labels["a"] = "2";  // still the first resourceVersion
  EXPECT_EQ(services.Update(stale).status().code(), StatusCode::kConflict);

  model::Service invalid = WebService(namespace_, "bad");
  invalid.spec.ports[0].port = 70000;
  const Status refused = services.Create(invalid).status();
  EXPECT_EQ(refused.code(), StatusCode::kInvalid);
  ASSERT_FALSE(refused.causes().empty()) << refused.ToString();
  EXPECT_EQ(refused.causes()[0].field, "spec.ports[0].port") << refused.ToString();
  EXPECT_NE(refused.message().find("must be between 1 and 65535"), std::string_view::npos)
      << refused.ToString();

  // A ServiceAccount without a role: 403 Forbidden, which is terminal for our controllers.
  Result<std::string> kubeconfig = g_plane->ServiceAccountKubeconfig(namespace_, "nobody");
  ASSERT_TRUE(kubeconfig.ok()) << kubeconfig.status().ToString();
  std::unique_ptr<client::RestClient> nobody = ClientFor(*kubeconfig);
  ASSERT_NE(nobody, nullptr);
  client::TypedClient<model::Service> as_nobody(*nobody, client::ServiceCodec());
  const Status forbidden = as_nobody.Get(namespace_, "web").status();
  EXPECT_EQ(forbidden.code(), StatusCode::kForbidden);
  EXPECT_NE(forbidden.message().find("system:serviceaccount:" + namespace_ + ":nobody"),
            std::string_view::npos)
      << forbidden.ToString();
}

// Every field of every kind the endpoint controllers write is one the server knows: a strict
// dry-run create of each, fully populated, is accepted (a field we misspell or the server does
// not serve is a 400 "strict decoding error"). Then what the server answers decodes, re-encodes
// and is accepted again, unchanged: nothing of ours is lost or invented on the way.
TEST_F(RealApiTest, WhatWeWriteIsStrictlyValid) {
  const std::string ns = namespace_;
  client::TypedClient<model::Service> services(*client_, client::ServiceCodec());
  Result<model::Service> owner = services.Create(WebService(ns, "web"));
  ASSERT_TRUE(owner.ok()) << owner.status().ToString();

  model::OwnerReference owned_by{.api_version = "v1",
                                 .kind = "Service",
                                 .name = "web",
                                 .uid = owner->metadata.uid,
                                 .controller = true,
                                 .block_owner_deletion = true};
  model::EndpointSlice slice;
  slice.metadata.generate_name = "web-";
  slice.metadata.namespace_ = ns;
  slice.metadata.labels = {
      {"kubernetes.io/service-name", "web"},
      {"endpointslice.kubernetes.io/managed-by", "endpointslice-controller.slicewright.io"}};
  slice.metadata.annotations = {
      {"endpoints.kubernetes.io/last-change-trigger-time", "2026-12-07T01:02:03Z"}};
  slice.metadata.owner_references = {owned_by};
  slice.address_type = "IPv4";
  model::Endpoint endpoint;
  endpoint.addresses = {"10.1.2.3"};
  endpoint.conditions = {.ready = true, .serving = true, .terminating = false};
  endpoint.hostname = std::string("web-0");
  endpoint.target_ref = Ref("Pod", ns, "web-0", kPodUid);
  endpoint.node_name = model::InlineString("node-a");
  endpoint.zone = "zone-a";
  model::EndpointHints hints;
  hints.for_zones = {"zone-a"};
  if (g_plane->minor() >= 33) hints.for_nodes = {"node-a"};  // forNodes: beta and on in 1.33
  endpoint.hints = hints;
  slice.endpoints.push_back(endpoint);
  slice.ports.push_back(
      model::EndpointPort{.name = "http", .protocol = "TCP", .port = 8080, .app_protocol = "http"});
  const std::string slices = "/apis/discovery.k8s.io/v1/namespaces/" + ns + "/endpointslices";
  client::Response answer = StrictDryRunCreate(slices, codec::EncodeEndpointSlice(slice));
  ASSERT_EQ(answer.status, 201) << answer.body;
  Result<model::EndpointSlice> decoded = codec::DecodeEndpointSlice(answer.body);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(decoded->endpoints, slice.endpoints);
  EXPECT_EQ(decoded->ports, slice.ports);
  EXPECT_EQ(decoded->metadata.labels, slice.metadata.labels);
  EXPECT_EQ(decoded->metadata.owner_references, slice.metadata.owner_references);
  decoded->metadata.name.clear();  // generated by the dry run; the second create generates again
  decoded->metadata.uid.clear();
  decoded->metadata.creation_timestamp.reset();
  answer = StrictDryRunCreate(slices, codec::EncodeEndpointSlice(*decoded));
  EXPECT_EQ(answer.status, 201) << answer.body;

  model::Endpoints endpoints;
  endpoints.metadata.name = "web";
  endpoints.metadata.namespace_ = ns;
  endpoints.metadata.labels = {{"app", "web"}};
  endpoints.metadata.annotations = {
      {"endpoints.kubernetes.io/last-change-trigger-time", "2026-12-07T01:02:03Z"}};
  model::EndpointSubset subset;
  model::EndpointAddress ready;
  ready.ip = "10.1.2.3";
  ready.hostname = "web-0";
  ready.node_name = "node-a";
  ready.target_ref = Ref("Pod", ns, "web-0", kPodUid);
  subset.addresses.push_back(ready);
  model::EndpointAddress not_ready;
  not_ready.ip = "10.1.2.4";
  subset.not_ready_addresses.push_back(not_ready);
  subset.ports.push_back(model::CoreEndpointPort{
      .name = "http", .port = 8080, .protocol = "TCP", .app_protocol = "h2c"});
  endpoints.subsets.push_back(subset);
  answer = StrictDryRunCreate("/api/v1/namespaces/" + ns + "/endpoints",
                              codec::EncodeEndpoints(endpoints));
  ASSERT_EQ(answer.status, 201) << answer.body;
  Result<model::Endpoints> endpoints_back = codec::DecodeEndpoints(answer.body);
  ASSERT_TRUE(endpoints_back.ok()) << endpoints_back.status().ToString();
  EXPECT_EQ(endpoints_back->subsets, endpoints.subsets);

  model::Lease lease;
  lease.metadata.name = "lease";
  lease.metadata.namespace_ = ns;
  lease.spec.holder_identity = "host_6a1e";
  lease.spec.lease_duration_seconds = 15;
  lease.spec.acquire_time = model::Time{1'796'000'000'123'456'000};
  lease.spec.renew_time = model::Time{1'796'000'001'654'321'000};
  lease.spec.lease_transitions = 3;
  answer = StrictDryRunCreate("/apis/coordination.k8s.io/v1/namespaces/" + ns + "/leases",
                              codec::EncodeLease(lease));
  ASSERT_EQ(answer.status, 201) << answer.body;
  Result<model::Lease> lease_back = codec::DecodeLease(answer.body);
  ASSERT_TRUE(lease_back.ok()) << lease_back.status().ToString();
  EXPECT_EQ(lease_back->spec, lease.spec);  // MicroTime keeps the microseconds

  model::Event event;
  event.metadata.name = "web.18a2b3c4d5e6f708";
  event.metadata.namespace_ = ns;
  event.involved_object = Ref("Service", ns, "web", owner->metadata.uid);
  event.involved_object.api_version = std::string("v1");
  event.reason = "FailedToUpdateEndpointSlices";
  event.message = "Error updating Endpoint Slices for Service " + ns + "/web: conflict";
  event.type = "Warning";
  event.source_component = "endpointslice-controller";
  event.source_host = "host";
  event.first_timestamp = model::Time::FromUnixSeconds(1'796'000'000);
  event.last_timestamp = model::Time::FromUnixSeconds(1'796'000'010);
  event.count = 2;
  event.reporting_component = "endpointslice-controller";
  event.reporting_instance = "host";
  answer = StrictDryRunCreate("/api/v1/namespaces/" + ns + "/events", codec::EncodeEvent(event));
  ASSERT_EQ(answer.status, 201) << answer.body;
  Result<model::Event> event_back = codec::DecodeEvent(answer.body);
  ASSERT_TRUE(event_back.ok()) << event_back.status().ToString();
  EXPECT_EQ(event_back->involved_object, event.involved_object);
  EXPECT_EQ(event_back->count, 2);
  EXPECT_EQ(event_back->last_timestamp, event.last_timestamp);
}

// Informers list, sync and follow adds, updates and deletes; the same with WatchList asked for,
// which a server refuses or does not serve (etcd 3.4 under 1.34, or 1.26) and we fall back from.
TEST_F(RealApiTest, InformersFollowTheServer) {
  for (const bool watch_list : {false, true}) {
    SCOPED_TRACE(watch_list ? "WatchList" : "LIST");
    const std::string prefix = watch_list ? "wl-" : "list-";
    client::TypedClient<model::Service> services(*client_, client::ServiceCodec());
    ASSERT_TRUE(services.Create(WebService(namespace_, prefix + "before")).ok());

    cache::ReflectorOptions defaults;
    defaults.use_watch_list = watch_list;
    cache::InformerFactory factory(*client_, defaults);
    cache::InformerFilter filter;
    filter.namespace_ = namespace_;
    cache::Informer<model::Service>& informer = factory.Services(filter);
    std::mutex mu;
    std::set<std::string> added;
    std::set<std::string> updated;
    std::set<std::string> deleted;
    informer.AddEventHandler(
        cache::EventHandler<model::Service>{.on_add =
                                                [&](const auto& service, bool) {
                                                  std::lock_guard lock(mu);
                                                  added.insert(service->metadata.name);
                                                },
                                            .on_update =
                                                [&](const auto&, const auto& service) {
                                                  std::lock_guard lock(mu);
                                                  updated.insert(service->metadata.name);
                                                },
                                            .on_delete =
                                                [&](const auto& service, bool) {
                                                  std::lock_guard lock(mu);
                                                  deleted.insert(service->metadata.name);
                                                }});
    factory.Start();
    ASSERT_TRUE(factory.WaitForCacheSync(std::chrono::seconds(30)));
    Result<model::Service> after = services.Create(WebService(namespace_, prefix + "after"));
    ASSERT_TRUE(after.ok());
    after->metadata.labels["changed"] = "yes";
    ASSERT_TRUE(services.Update(*after).ok());
    ASSERT_TRUE(services.Delete(namespace_, prefix + "before").ok());
    const auto saw = [&](const std::set<std::string>& set, const std::string& name) {
      return Eventually([&] {
        std::lock_guard lock(mu);
        return set.count(name) == 1;
      });
    };
    EXPECT_TRUE(saw(added, prefix + "before"));
    EXPECT_TRUE(saw(added, prefix + "after"));
    EXPECT_TRUE(saw(updated, prefix + "after"));
    EXPECT_TRUE(saw(deleted, prefix + "before"));
    EXPECT_EQ(informer.Stats().watch_list_supported && watch_list,
              informer.Stats().watch_list_supported)
        << "a LIST informer never reports WatchList";
    std::cout << (watch_list ? "WatchList" : "LIST") << " informer on " << g_plane->version()
              << ": lists=" << informer.Stats().lists
              << " list_failures=" << informer.Stats().list_failures
              << " watch_list_supported=" << informer.Stats().watch_list_supported << "\n";
    factory.Stop();
  }
}

// Two candidates on one real Lease: one leads, the other cannot take it until it is released,
// and the Lease reads as client-go writes it (MicroTime renewals, transitions counted).
TEST_F(RealApiTest, LeaderElectionHoldsARealLease) {
  const auto config = [&](const std::string& identity) {
    runtime::LeaderElectionConfig c;
    c.lease_namespace = namespace_;
    c.lease_name = "election";
    c.identity = identity;
    c.lease_duration = 3s;
    c.renew_deadline = 2s;
    c.retry_period = 500ms;
    c.callbacks.on_started_leading = [](std::stop_token) {};
    c.callbacks.on_stopped_leading = [] {};
    return c;
  };
  Result<std::unique_ptr<runtime::LeaderElector>> first =
      runtime::LeaderElector::Create(config("first"), *client_, SystemClock::Get());
  Result<std::unique_ptr<runtime::LeaderElector>> second =
      runtime::LeaderElector::Create(config("second"), *client_, SystemClock::Get());
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_TRUE((*first)->TryAcquireOrRenew());
  EXPECT_FALSE((*second)->TryAcquireOrRenew());
  EXPECT_TRUE((*first)->TryAcquireOrRenew());  // a renewal
  Result<std::string> stored = client_->Get(client::LeasesResource(), namespace_, "election");
  ASSERT_TRUE(stored.ok());
  Result<model::Lease> lease = codec::DecodeLease(*stored);
  ASSERT_TRUE(lease.ok()) << lease.status().ToString();
  EXPECT_EQ(lease->spec.holder_identity, "first");
  EXPECT_EQ(lease->spec.lease_duration_seconds, 3);
  ASSERT_TRUE(lease->spec.renew_time.has_value());
  EXPECT_GE(*lease->spec.renew_time, *lease->spec.acquire_time);

  EXPECT_TRUE((*first)->Release());
  EXPECT_TRUE((*second)->TryAcquireOrRenew());
  stored = client_->Get(client::LeasesResource(), namespace_, "election");
  ASSERT_TRUE(stored.ok());
  lease = codec::DecodeLease(*stored);
  ASSERT_TRUE(lease.ok());
  EXPECT_EQ(lease->spec.holder_identity, "second");
  EXPECT_EQ(lease->spec.lease_transitions, 1);
}

// The event recorder's create and, for the same event again, its count PATCH land on the server.
TEST_F(RealApiTest, EventsAreRecordedAndCounted) {
  runtime::EventRecorderOptions options;
  options.component = "endpointslice-controller";
  options.host = "test-host";
  Result<std::unique_ptr<runtime::EventRecorder>> recorder =
      runtime::EventRecorder::Create(runtime::NewRestEventSink(*client_), options);
  ASSERT_TRUE(recorder.ok()) << recorder.status().ToString();
  const model::ObjectReference service =
      Ref("Service", namespace_, "web", "5b0c7f3e-1d2a-4e6b-8c9d-0a1b2c3d4e5f");
  (*recorder)->Event(service, runtime::EventType::kWarning, "FailedToUpdateEndpointSlices",
                     "Error updating Endpoint Slices for Service: conflict");
  (*recorder)->Event(service, runtime::EventType::kWarning, "FailedToUpdateEndpointSlices",
                     "Error updating Endpoint Slices for Service: conflict");
  (*recorder)->Flush();
  EXPECT_EQ((*recorder)->stats().dropped_write_failed, 0U);
  client::TypedClient<model::Event> events(*client_, client::EventCodec());
  Result<codec::ListPage<model::Event>> listed = events.List(namespace_, {});
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  ASSERT_EQ(listed->items.size(), 1U);
  const model::Event& event = listed->items[0];
  EXPECT_EQ(event.count, 2);
  EXPECT_EQ(event.reason, "FailedToUpdateEndpointSlices");
  EXPECT_EQ(event.type, "Warning");
  EXPECT_EQ(event.source_component, "endpointslice-controller");
  EXPECT_EQ(event.involved_object.name, "web");
}

}  // namespace
}  // namespace slicewright

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  using slicewright::test_support::RealControlPlane;
  slicewright::Result<std::unique_ptr<RealControlPlane>> plane =
      RealControlPlane::Start(RealControlPlane::Options{});
  if (!plane.ok()) {
    std::cout << plane.status().message() << "\n";
    return plane.status().code() == slicewright::StatusCode::kNotFound ? 77 : 1;
  }
  std::cout << "real-cluster tier: kube-apiserver " << (*plane)->version() << " at "
            << (*plane)->server() << "\n";
  slicewright::g_plane = plane->get();
  const int result = RUN_ALL_TESTS();
  slicewright::g_plane = nullptr;
  return result;
}

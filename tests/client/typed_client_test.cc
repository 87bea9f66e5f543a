#include "slicewright/client/typed_client.h"

#include <memory>
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "apiserver/rest/serve.h"
#include "client/client_test_util.h"

// Typed clients against the real embedded API server: every verb, conflicts and their retry,
// pagination, and decode errors of answers.
namespace slicewright::client {
namespace {

using testing::TempDir;

class TypedClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    apiserver::ServeOptions options;
    options.listen = "127.0.0.1:0";
    options.data_dir = dir_.Path("");
    options.io_threads = 2;
    auto started = apiserver::RunningApiServer::Start(options);
    ASSERT_TRUE(started.ok()) << started.status().ToString();
    server_ = std::move(started).value();
    RestConfig config;
    config.server.scheme = "http";
    config.server.host = "127.0.0.1";
    config.server.port = server_->port();
    auto transport = Transport::Create(config, {});
    ASSERT_TRUE(transport.ok()) << transport.status().ToString();
    RestClientOptions client_options;
    client_options.qps = 1000;
    client_options.burst = 1000;
    auto client = RestClient::Create(std::shared_ptr<Transport>(std::move(transport).value()),
                                     client_options);
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    client_ = std::move(client).value();
  }

  static model::EndpointSlice Slice(std::string name) {
    model::EndpointSlice slice;
    slice.metadata.name = std::move(name);
    slice.metadata.namespace_ = "default";
    slice.metadata.labels["kubernetes.io/service-name"] = "web";
    slice.address_type = "IPv4";
    model::Endpoint& endpoint = slice.endpoints.emplace_back();
    endpoint.addresses = {"10.0.0.1"};
    return slice;
  }

  TempDir dir_;
  std::unique_ptr<apiserver::RunningApiServer> server_;
  std::unique_ptr<RestClient> client_;
};

TEST_F(TypedClientTest, EveryVerb) {
  TypedClient<model::EndpointSlice> slices(*client_, EndpointSliceCodec());
  Result<model::EndpointSlice> created = slices.Create(Slice("web-abc"));
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_FALSE(created->metadata.uid.empty());
  EXPECT_FALSE(created->metadata.resource_version.empty());
  EXPECT_EQ(created->endpoints.at(0).addresses, model::EndpointAddresses{"10.0.0.1"});

  Result<model::EndpointSlice> got = slices.Get("default", "web-abc");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->metadata.uid, created->metadata.uid);

  model::EndpointSlice changed = *got;
  changed.endpoints[0].addresses = {"10.0.0.2"};
  Result<model::EndpointSlice> updated = slices.Update(changed);
  ASSERT_TRUE(updated.ok()) << updated.status().ToString();
  EXPECT_EQ(updated->endpoints.at(0).addresses, model::EndpointAddresses{"10.0.0.2"});

  Result<model::EndpointSlice> patched = slices.Patch("default", "web-abc", PatchType::kMergePatch,
                                                      R"({"metadata":{"labels":{"extra":"yes"}}})");
  ASSERT_TRUE(patched.ok()) << patched.status().ToString();
  EXPECT_EQ(patched->metadata.labels.at("extra"), "yes");

  EXPECT_TRUE(slices.Delete("default", "web-abc").ok());
  EXPECT_EQ(slices.Get("default", "web-abc").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(slices.Delete("default", "web-abc").code(), StatusCode::kNotFound);
}

TEST_F(TypedClientTest, StatusUpdateLeavesTheSpecAlone) {
  TypedClient<model::Pod> pods(*client_, PodCodec());
  model::Pod pod;
  pod.metadata.name = "web-1";
  pod.metadata.namespace_ = "default";
  model::Container& container = pod.spec.containers.emplace_back();
  container.name = "app";
  container.image = "nginx";
  Result<model::Pod> created = pods.Create(pod);
  ASSERT_TRUE(created.ok()) << created.status().ToString();

  model::Pod with_status = *created;
  with_status.status.phase = "Running";
  with_status.status.pod_ip = "10.1.2.3";
  with_status.status.pod_ips = {"10.1.2.3"};
  with_status.spec.node_name = "ignored-by-the-status-subresource";
  Result<model::Pod> updated = pods.UpdateStatus(with_status);
  ASSERT_TRUE(updated.ok()) << updated.status().ToString();
  EXPECT_EQ(updated->status.pod_ip, "10.1.2.3");
  EXPECT_EQ(updated->status.phase, "Running");
  EXPECT_TRUE(updated->spec.node_name.empty());
}

// Optimistic concurrency: a stale write is a kConflict; RetryOnConflict re-reads and wins.
TEST_F(TypedClientTest, ConflictsAndRetryOnConflict) {
  TypedClient<model::EndpointSlice> slices(*client_, EndpointSliceCodec());
  Result<model::EndpointSlice> created = slices.Create(Slice("web-x"));
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  model::EndpointSlice stale = *created;
  model::EndpointSlice fresh = *created;
  fresh.endpoints[0].addresses = {"10.0.0.9"};
  ASSERT_TRUE(slices.Update(fresh).ok());
  stale.endpoints[0].addresses = {"10.0.0.7"};
  EXPECT_EQ(slices.Update(stale).status().code(), StatusCode::kConflict);

  // Real time: the retries wait 10 ms each.
  int attempts = 0;
  const Status status = RetryOnConflict(
      [&]() -> Status {
        ++attempts;
        Result<model::EndpointSlice> current = slices.Get("default", "web-x");
        if (!current.ok()) return current.status();
        model::EndpointSlice next = *current;
        // The first attempt races another writer.
        if (attempts == 1) {
          model::EndpointSlice racer = *current;
          racer.metadata.labels["racer"] = "1";
          if (!slices.Update(racer).ok()) return Status(StatusCode::kInternal, "racer failed");
        }
        next.endpoints[0].addresses = {"10.0.0.8"};
        return slices.Update(next).status();
      },
      5);
  EXPECT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(attempts, 2);
  Result<model::EndpointSlice> final_state = slices.Get("default", "web-x");
  ASSERT_TRUE(final_state.ok());
  EXPECT_EQ(final_state->endpoints[0].addresses, model::EndpointAddresses{"10.0.0.8"});
  EXPECT_EQ(final_state->metadata.labels.at("racer"), "1");

  int calls = 0;
  EXPECT_EQ(RetryOnConflict(
                [&] {
                  ++calls;
                  return Status(StatusCode::kConflict, "always");
                },
                3)
                .code(),
            StatusCode::kConflict);
  EXPECT_EQ(calls, 3);
}

TEST_F(TypedClientTest, ListAllFollowsContinueTokens) {
  TypedClient<model::Service> services(*client_, ServiceCodec());
  for (int i = 0; i < 7; ++i) {
    model::Service service;
    service.metadata.name = "svc-" + std::to_string(i);
    service.metadata.namespace_ = "default";
    model::ServicePort& port = service.spec.ports.emplace_back();
    port.port = 80;
    ASSERT_TRUE(services.Create(service).ok());
  }
  ListOptions options;
  options.limit = 3;
  Result<codec::ListPage<model::Service>> first = services.List("default", options);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->items.size(), 3U);
  EXPECT_FALSE(first->continue_token.empty());
  Result<codec::ListPage<model::Service>> all = services.ListAll("default", options);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_EQ(all->items.size(), 7U);
  EXPECT_FALSE(all->resource_version.empty());
  EXPECT_TRUE(all->item_errors.empty());
}

// Create and update keeping only the answer's metadata: through the kind's metadata decoder
// (EndpointSlice) or, for a kind without one (Service), through the whole object.
TEST_F(TypedClientTest, WritesForMetadata) {
  TypedClient<model::EndpointSlice> slices(*client_, EndpointSliceCodec());
  Result<model::ObjectMeta> created = slices.CreateForMetadata(Slice("web-meta"));
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ(created->name, "web-meta");
  EXPECT_FALSE(created->uid.empty());
  EXPECT_EQ(created->labels.at("kubernetes.io/service-name"), "web");

  model::EndpointSlice changed = Slice("web-meta");
  changed.metadata.resource_version = created->resource_version;
  changed.endpoints[0].addresses = {"10.0.0.9"};
  Result<model::ObjectMeta> updated = slices.UpdateForMetadata(changed);
  ASSERT_TRUE(updated.ok()) << updated.status().ToString();
  EXPECT_EQ(updated->uid, created->uid);
  EXPECT_NE(updated->resource_version, created->resource_version);
  EXPECT_GT(updated->generation, created->generation);
  EXPECT_EQ(slices.UpdateForMetadata(changed).status().code(), StatusCode::kConflict);

  ASSERT_EQ(ServiceCodec().decode_metadata, nullptr);
  TypedClient<model::Service> services(*client_, ServiceCodec());
  model::Service service;
  service.metadata.name = "svc-meta";
  service.metadata.namespace_ = "default";
  service.spec.ports.emplace_back().port = 80;
  Result<model::ObjectMeta> service_meta = services.CreateForMetadata(service);
  ASSERT_TRUE(service_meta.ok()) << service_meta.status().ToString();
  EXPECT_EQ(service_meta->name, "svc-meta");
  EXPECT_FALSE(service_meta->uid.empty());
}

// An answer of the wrong kind (a proxy or server bug) is a decode error, not a crash.
TEST_F(TypedClientTest, AnswerOfAnotherKindIsAnError) {
  TypedClient<model::Service> services(*client_, ServiceCodec());
  model::Service service;
  service.metadata.name = "svc";
  service.metadata.namespace_ = "default";
  service.spec.ports.emplace_back().port = 80;
  ASSERT_TRUE(services.Create(service).ok());
  KindCodec<model::Pod> wrong = PodCodec();
  wrong.resource = ServicesResource();
  TypedClient<model::Pod> confused(*client_, wrong);
  const Status status = confused.Get("default", "svc").status();
  EXPECT_EQ(status.code(), StatusCode::kBadRequest);
  EXPECT_NE(status.ToString().find("expected v1 Pod, got v1 Service"), std::string::npos)
      << status.ToString();
}

}  // namespace
}  // namespace slicewright::client

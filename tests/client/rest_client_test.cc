#include "slicewright/client/rest_client.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "slicewright/base/clock.h"
#include "slicewright/codec/json.h"

#include "apiserver/http/server.h"
#include "apiserver/rest/serve.h"
#include "client/client_test_util.h"

// RestClient against the real embedded API server (CRUD, errors, watch, 410, custom resources),
// and against a scripted HTTP server for retries and the client-side rate limit.
namespace slicewright::client {
namespace {

using testing::TempDir;

RestConfig ConfigFor(std::uint16_t port) {
  RestConfig config;
  config.server.scheme = "http";
  config.server.host = "127.0.0.1";
  config.server.port = port;
  return config;
}

std::unique_ptr<RestClient> MakeClient(std::uint16_t port, RestClientOptions options = {}) {
  auto transport = Transport::Create(ConfigFor(port), {});
  EXPECT_TRUE(transport.ok()) << transport.status().ToString();
  if (!transport.ok()) return nullptr;
  auto client =
      RestClient::Create(std::shared_ptr<Transport>(std::move(transport).value()), options);
  EXPECT_TRUE(client.ok()) << client.status().ToString();
  return client.ok() ? std::move(client).value() : nullptr;
}

nlohmann::json Parse(const Result<std::string>& body) {
  EXPECT_TRUE(body.ok()) << body.status().ToString();
  return body.ok() ? nlohmann::json::parse(*body, nullptr, false) : nlohmann::json();
}

std::string ServiceJson(std::string_view name) {
  return R"({"apiVersion":"v1","kind":"Service","metadata":{"name":")" + std::string(name) +
         R"(","labels":{"app":"web"}},"spec":{"ports":[{"port":80}],"selector":{"app":"web"}}})";
}

TEST(ResourceRefTest, PathsAndQueries) {
  EXPECT_EQ(PodsResource().Path("default", "web-1"), "/api/v1/namespaces/default/pods/web-1");
  EXPECT_EQ(PodsResource().Path(""), "/api/v1/pods");
  EXPECT_EQ(ServicesResource().Path("ns", "s", "status"),
            "/api/v1/namespaces/ns/services/s/status");
  EXPECT_EQ(NodesResource().Path("ignored", "n1"), "/api/v1/nodes/n1");
  EXPECT_EQ(EndpointSlicesResource().Path("ns"),
            "/apis/discovery.k8s.io/v1/namespaces/ns/endpointslices");
  // A hostile name cannot change the path.
  EXPECT_EQ(PodsResource().Path("ns", "../x?y"), "/api/v1/namespaces/ns/pods/..%2Fx%3Fy");

  ListOptions options;
  options.label_selector = "app in (a,b),!canary";
  options.limit = 500;
  options.continue_token = "abc=";
  EXPECT_EQ(options.Query(false),
            "?labelSelector=app%20in%20%28a%2Cb%29%2C%21canary&limit=500&continue=abc%3D");
  options = {};
  options.resource_version = "42";
  options.allow_watch_bookmarks = true;
  options.send_initial_events = true;
  options.timeout_seconds = 300;
  EXPECT_EQ(options.Query(true),
            "?watch=true&resourceVersion=42&allowWatchBookmarks=true&sendInitialEvents=true"
            "&timeoutSeconds=300");
  EXPECT_EQ(ListOptions{}.Query(false), "");
}

// kube-controller-manager's --kube-api-qps 20 and --kube-api-burst 30: the load a default
// deployment puts on the API server.
TEST(RestClientOptionsTest, DefaultsAreKubeControllerManagers) {
  const RestClientOptions options;
  EXPECT_EQ(options.qps, 20);
  EXPECT_EQ(options.burst, 30);
  EXPECT_EQ(options.max_watch_line_bytes, std::size_t{16} << 20);
}

class RestClientApiServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    apiserver::ServeOptions options;
    options.listen = "127.0.0.1:0";
    options.data_dir = dir.Path("");
    options.history_events = 20;
    auto started = apiserver::RunningApiServer::Start(options);
    ASSERT_TRUE(started.ok()) << started.status().ToString();
    server = std::move(started).value();
    client = MakeClient(server->port());
    ASSERT_NE(client, nullptr);
  }

  TempDir dir;
  std::unique_ptr<apiserver::RunningApiServer> server;
  std::unique_ptr<RestClient> client;
};

TEST_F(RestClientApiServerTest, CrudAndTheServersErrors) {
  const ResourceRef services = ServicesResource();
  nlohmann::json created = Parse(client->Create(services, "default", ServiceJson("web")));
  EXPECT_EQ(created["metadata"]["name"], "web");

  Result<std::string> duplicate = client->Create(services, "default", ServiceJson("web"));
  EXPECT_EQ(duplicate.status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(duplicate.status().message(), "services \"web\" already exists");

  nlohmann::json fetched = Parse(client->Get(services, "default", "web"));
  EXPECT_EQ(fetched["spec"]["clusterIP"], created["spec"]["clusterIP"]);

  nlohmann::json patched = Parse(client->Patch(services, "default", "web", PatchType::kMergePatch,
                                               R"({"metadata":{"labels":{"tier":"front"}}})"));
  EXPECT_EQ(patched["metadata"]["labels"]["tier"], "front");

  // A PUT with the stale resourceVersion is a conflict.
  nlohmann::json stale = created;
  stale["metadata"]["labels"]["x"] = "y";
  Result<std::string> conflict = client->Update(services, "default", "web", stale.dump());
  EXPECT_EQ(conflict.status().code(), StatusCode::kConflict);

  ListOptions selector;
  selector.label_selector = "tier=front";
  nlohmann::json listed = Parse(client->List(services, "default", selector));
  ASSERT_EQ(listed["items"].size(), 1U);
  EXPECT_EQ(listed["items"][0]["metadata"]["name"], "web");
  selector.label_selector = "tier=back";
  EXPECT_TRUE(Parse(client->List(services, "", selector))["items"].empty());

  ListOptions bad;
  bad.label_selector = "a in";
  Result<std::string> bad_selector = client->List(services, "default", bad);
  EXPECT_EQ(bad_selector.status().code(), StatusCode::kBadRequest);

  EXPECT_TRUE(client->Delete(services, "default", "web", {}).ok());
  Result<std::string> gone = client->Get(services, "default", "web");
  EXPECT_EQ(gone.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(gone.status().message(), "services \"web\" not found");
}

// GET /version: what the embedded server reports, read as numbers.
TEST_F(RestClientApiServerTest, ServerVersion) {
  Result<ServerVersion> version = client->GetServerVersion();
  ASSERT_TRUE(version.ok()) << version.status().ToString();
  EXPECT_EQ(version->major, 1);
  EXPECT_EQ(version->minor, 32);
  EXPECT_EQ(version->git_version, "v1.32.0-slicewright");
}

TEST_F(RestClientApiServerTest, WatchStreamsEventsAndReportsExpiredHistory) {
  const ResourceRef services = ServicesResource();
  nlohmann::json first = Parse(client->Create(services, "default", ServiceJson("a")));
  const std::string start = first["metadata"]["resourceVersion"];
  ASSERT_TRUE(client->Create(services, "default", ServiceJson("b")).ok());
  ASSERT_TRUE(client->Create(services, "default", ServiceJson("c")).ok());

  ListOptions options;
  options.resource_version = start;
  options.timeout_seconds = 1;
  std::vector<std::string> names;
  Status watched = client->Watch(
      services, "default", options,
      [&](std::string_view line) {
        Result<codec::WatchEvent<model::Service>> event = codec::DecodeServiceWatchEvent(line);
        EXPECT_TRUE(event.ok()) << event.status().ToString();
        if (event.ok()) names.push_back(event->object.metadata.name);
        return names.size() < 2;  // stop after two events
      },
      nullptr);
  EXPECT_TRUE(watched.ok()) << watched.ToString();
  EXPECT_EQ(names, (std::vector<std::string>{"b", "c"}));

  // Write past the 20-event history: a watch from the start is told to relist (410 Expired).
  for (int i = 0; i < 30; ++i) {
    ASSERT_TRUE(client->Create(services, "default", ServiceJson("s" + std::to_string(i))).ok());
  }
  Status expired_in_stream;
  Status opened = client->Watch(
      services, "default", options,
      [&](std::string_view line) {
        Result<codec::WatchEvent<model::Service>> event = codec::DecodeServiceWatchEvent(line);
        if (event.ok() && event->type == codec::WatchEventType::kError) {
          expired_in_stream = event->error;
        }
        return true;
      },
      nullptr);
  // kube-apiserver answers a compacted resourceVersion either with an ERROR event or a 410.
  const StatusCode code = opened.ok() ? expired_in_stream.code() : opened.code();
  EXPECT_EQ(code, StatusCode::kExpired) << opened.ToString() << " " << expired_in_stream.ToString();
}

// Custom resources need no types: once a CRD is established, a ResourceRef naming its group,
// version and plural is all RestClient needs for create, get, list, patch, watch and delete.
TEST_F(RestClientApiServerTest, UntypedCustomResources) {
  const ResourceRef crds{"apiextensions.k8s.io", "v1", "customresourcedefinitions", false};
  const nlohmann::json crd = {
      {"apiVersion", "apiextensions.k8s.io/v1"},
      {"kind", "CustomResourceDefinition"},
      {"metadata", {{"name", "widgets.example.com"}}},
      {"spec",
       {{"group", "example.com"},
        {"scope", "Namespaced"},
        {"names", {{"plural", "widgets"}, {"singular", "widget"}, {"kind", "Widget"}}},
        {"versions",
         {{{"name", "v1"},
           {"served", true},
           {"storage", true},
           {"schema",
            {{"openAPIV3Schema",
              {{"type", "object"}, {"x-kubernetes-preserve-unknown-fields", true}}}}}}}}}}};
  nlohmann::json created_crd = Parse(client->Create(crds, "", crd.dump()));
  EXPECT_EQ(created_crd["metadata"]["name"], "widgets.example.com");
  EXPECT_EQ(Parse(client->Get(crds, "", "widgets.example.com"))["spec"]["group"], "example.com");

  const ResourceRef widgets{"example.com", "v1", "widgets", true};
  EXPECT_EQ(widgets.Path("default", "a"), "/apis/example.com/v1/namespaces/default/widgets/a");
  auto widget = [](std::string_view name, int size, std::string_view color) {
    return nlohmann::json{{"apiVersion", "example.com/v1"},
                          {"kind", "Widget"},
                          {"metadata", {{"name", name}, {"labels", {{"color", color}}}}},
                          {"spec", {{"size", size}}}}
        .dump();
  };
  nlohmann::json a = Parse(client->Create(widgets, "default", widget("a", 1, "red")));
  EXPECT_EQ(a["kind"], "Widget");
  EXPECT_EQ(a["spec"]["size"], 1);
  const std::string after_a = a["metadata"]["resourceVersion"];
  ASSERT_TRUE(client->Create(widgets, "default", widget("b", 2, "blue")).ok());
  EXPECT_EQ(client->Create(widgets, "default", widget("a", 1, "red")).status().code(),
            StatusCode::kAlreadyExists);

  nlohmann::json fetched = Parse(client->Get(widgets, "default", "b"));
  EXPECT_EQ(fetched["spec"]["size"], 2);
  ListOptions blue;
  blue.label_selector = "color=blue";
  nlohmann::json listed = Parse(client->List(widgets, "", blue));
  ASSERT_EQ(listed["items"].size(), 1U);
  EXPECT_EQ(listed["items"][0]["metadata"]["name"], "b");
  EXPECT_EQ(Parse(client->List(widgets, "default", {}))["items"].size(), 2U);

  nlohmann::json patched = Parse(
      client->Patch(widgets, "default", "a", PatchType::kMergePatch, R"({"spec":{"size":5}})"));
  EXPECT_EQ(patched["spec"]["size"], 5);

  // The watch from after a's creation sees b's creation and a's patch.
  ListOptions from;
  from.resource_version = after_a;
  from.timeout_seconds = 5;
  std::vector<std::string> events;
  Status watched = client->Watch(
      widgets, "default", from,
      [&](std::string_view line) {
        const nlohmann::json event = nlohmann::json::parse(line, nullptr, false);
        EXPECT_FALSE(event.is_discarded()) << line;
        if (event.is_discarded()) return false;
        events.push_back(event["type"].get<std::string>() + " " +
                         event["object"]["metadata"]["name"].get<std::string>() + " " +
                         event["object"]["spec"]["size"].dump());
        return events.size() < 2;
      },
      nullptr);
  EXPECT_TRUE(watched.ok()) << watched.ToString();
  EXPECT_EQ(events, (std::vector<std::string>{"ADDED b 2", "MODIFIED a 5"}));

  ASSERT_TRUE(client->Delete(widgets, "default", "a", {}).ok());
  EXPECT_EQ(client->Get(widgets, "default", "a").status().code(), StatusCode::kNotFound);
  // An unknown group/version/resource is the server's 404, not a client error.
  const ResourceRef gadgets{"example.com", "v1", "gadgets", true};
  EXPECT_EQ(client->List(gadgets, "default", {}).status().code(), StatusCode::kNotFound);
}

// Scripted answers for the retry and rate-limit tests.
struct Script {
  std::atomic<int> calls{0};
  std::vector<int> statuses;  // one per call; 200 after the end
  std::string retry_after;

  apiserver::HttpHandler Handler() {
    return [this](apiserver::HttpRequest&) {
      const int call = calls++;
      apiserver::HttpResponse response;
      response.status = call < static_cast<int>(statuses.size()) ? statuses[call] : 200;
      response.body = response.status == 200
                          ? R"({"kind":"Service"})"
                          : R"({"kind":"Status","code":)" + std::to_string(response.status) + "}";
      if (!retry_after.empty()) response.headers.emplace_back("Retry-After", retry_after);
      return response;
    };
  }
};

std::unique_ptr<apiserver::HttpServer> ServeScript(Script& script) {
  auto server = apiserver::HttpServer::Create({}, script.Handler());
  EXPECT_TRUE(server.ok());
  if (!server.ok()) return nullptr;
  (*server)->Start();
  return std::move(server).value();
}

RestClientOptions FastRetries() {
  RestClientOptions options;
  options.initial_backoff = std::chrono::milliseconds(1);
  options.max_backoff = std::chrono::milliseconds(5);
  options.max_retries = 3;
  return options;
}

TEST(RestClientRetryTest, RetriesReadsOn5xxButNotCreates) {
  Script script;
  script.statuses = {503, 500};
  auto server = ServeScript(script);
  ASSERT_NE(server, nullptr);
  auto client = MakeClient(server->port(), FastRetries());
  ASSERT_NE(client, nullptr);
  EXPECT_TRUE(client->Get(ServicesResource(), "default", "web").ok());
  EXPECT_EQ(script.calls, 3);

  script.calls = 0;
  script.statuses = {503};
  Result<std::string> created = client->Create(ServicesResource(), "default", "{}");
  EXPECT_EQ(created.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(script.calls, 1);  // a POST the server may have acted on is not repeated

  script.calls = 0;
  script.statuses = {500, 500, 500, 500, 500};
  EXPECT_EQ(client->Get(ServicesResource(), "default", "web").status().code(),
            StatusCode::kInternal);
  EXPECT_EQ(script.calls, 4);  // the first attempt and max_retries more
}

// Every attempt is counted by method and code (client-go's rest_client_requests_total), retries
// included; a request no server answered is "<error>".
TEST(RestClientRetryTest, CountsEveryAttemptByMethodAndCode) {
  Script script;
  script.statuses = {503, 403};
  auto server = ServeScript(script);
  ASSERT_NE(server, nullptr);
  auto client = MakeClient(server->port(), FastRetries());
  ASSERT_NE(client, nullptr);
  EXPECT_EQ(client->Get(ServicesResource(), "default", "web").status().code(),
            StatusCode::kForbidden);  // 503 retried, 403 returned
  EXPECT_TRUE(client->Create(ServicesResource(), "default", "{}").ok());
  const auto counts = [&client] {
    std::vector<std::string> out;
    for (const RequestCount& c : client->RequestCounts()) {
      out.push_back(c.method + " " + c.code + " " + std::to_string(c.count));
    }
    return out;
  };
  EXPECT_EQ(counts(), (std::vector<std::string>{"GET 403 1", "GET 503 1", "POST 200 1"}));

  const std::uint16_t port = server->port();
  server.reset();  // nothing listens there now
  auto unanswered = MakeClient(port, FastRetries());
  ASSERT_NE(unanswered, nullptr);
  EXPECT_FALSE(unanswered->Get(ServicesResource(), "default", "web").ok());
  ASSERT_EQ(unanswered->RequestCounts().size(), 1U);
  EXPECT_EQ(unanswered->RequestCounts()[0].code, "<error>");
  EXPECT_EQ(unanswered->RequestCounts()[0].count, 4);  // the first attempt and 3 retries
}

// A distribution's "34+" minor reads as 34; an answer that does not read is an error.
TEST(RestClientVersionTest, ReadsVersionInfo) {
  std::atomic<int> calls{0};
  std::atomic<bool> asked_version{true};
  auto server = apiserver::HttpServer::Create({}, [&](apiserver::HttpRequest& request) {
    if (request.path != "/version") asked_version = false;
    apiserver::HttpResponse response;
    response.status = 200;
    // The first answer as kube-apiserver's, then one that does not read.
    response.body = calls++ == 0 ? R"({"major":"1","minor":"34+","gitVersion":"v1.34.2-eks-1"})"
                                 : R"({"major":1})";
    return response;
  });
  ASSERT_TRUE(server.ok());
  (*server)->Start();
  auto client = MakeClient((*server)->port(), FastRetries());
  ASSERT_NE(client, nullptr);
  Result<ServerVersion> version = client->GetServerVersion();
  ASSERT_TRUE(version.ok()) << version.status().ToString();
  EXPECT_TRUE(asked_version);
  EXPECT_EQ(version->major, 1);
  EXPECT_EQ(version->minor, 34);
  EXPECT_EQ(version->git_version, "v1.34.2-eks-1");

  EXPECT_EQ(client->GetServerVersion().status().code(), StatusCode::kBadRequest);
}

TEST(RestClientRetryTest, RetriesAnyRequestOn429HonouringRetryAfter) {
  Script script;
  script.statuses = {429, 429};
  script.retry_after = "0";
  auto server = ServeScript(script);
  ASSERT_NE(server, nullptr);
  auto client = MakeClient(server->port(), FastRetries());
  ASSERT_NE(client, nullptr);
  EXPECT_TRUE(client->Create(ServicesResource(), "default", "{}").ok());
  EXPECT_EQ(script.calls, 3);
}

// A Retry-After of an hour is waited for 10 minutes only.
TEST(RestClientRetryTest, RetryAfterIsCappedAtTenMinutes) {
  Script script;
  script.statuses = {429};
  script.retry_after = "3600";
  auto server = ServeScript(script);
  ASSERT_NE(server, nullptr);
  FakeClock clock;
  RestClientOptions options;
  options.qps = 1000;
  options.burst = 1000;
  options.clock = &clock;
  auto client = MakeClient(server->port(), options);
  ASSERT_NE(client, nullptr);
  std::atomic<bool> done{false};
  std::thread request([&] {
    EXPECT_TRUE(client->Get(ServicesResource(), "default", "web").ok());
    done = true;
  });
  while (clock.Waiters() == 0) std::this_thread::yield();
  clock.Advance(std::chrono::seconds(599));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(done);
  EXPECT_EQ(script.calls, 1);
  clock.Advance(std::chrono::seconds(1));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!done && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  EXPECT_TRUE(done);
  if (!done) clock.Advance(std::chrono::hours(1));  // let the thread finish before failing
  request.join();
  EXPECT_EQ(script.calls, 2);
}

TEST(RestClientRetryTest, ConcurrentRequestsWaitForTheRateLimit) {
  Script script;
  auto server = ServeScript(script);
  ASSERT_NE(server, nullptr);
  FakeClock clock;
  RestClientOptions options;
  options.qps = 1;
  options.burst = 2;
  options.clock = &clock;
  auto client = MakeClient(server->port(), options);
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(client->Get(ServicesResource(), "default", "a").ok());
  ASSERT_TRUE(client->Get(ServicesResource(), "default", "b").ok());  // the burst
  std::atomic<bool> done{false};
  std::thread third([&] {
    EXPECT_TRUE(client->Get(ServicesResource(), "default", "c").ok());
    done = true;
  });
  while (clock.Waiters() == 0) std::this_thread::yield();
  EXPECT_FALSE(done);
  EXPECT_EQ(script.calls, 2);
  clock.Advance(std::chrono::seconds(1));
  third.join();
  EXPECT_EQ(script.calls, 3);
  EXPECT_EQ(RestClient::Create(nullptr, {}).status().code(), StatusCode::kInvalid);
}

}  // namespace
}  // namespace slicewright::client

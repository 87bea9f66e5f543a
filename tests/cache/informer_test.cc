#include "slicewright/cache/informer.h"

#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <stdlib.h>

#include "slicewright/base/log.h"
#include "slicewright/cache/informer_factory.h"
#include "slicewright/client/rest_client.h"
#include "slicewright/client/transport.h"
#include "slicewright/codec/json.h"

#include "apiserver/rest/serve.h"
#include "fakes/fault_proxy.h"
#include "fakes/loopback.h"

// Informers against the real embedded API server: list+watch convergence under concurrent writes,
// handlers and tombstones, resume after a server restart, relist after 410, WatchList, label
// selectors, and the compact Pod cache.
namespace slicewright::cache {
namespace {

using test_support::Eventually;
using test_support::TempDir;

using namespace std::chrono_literals;

std::string ServiceJson(std::string_view name, std::string_view extra_labels = "") {
  std::string labels = R"("app":"web")";
  if (!extra_labels.empty()) labels += "," + std::string(extra_labels);
  return R"({"apiVersion":"v1","kind":"Service","metadata":{"name":")" + std::string(name) +
         R"(","labels":{)" + labels +
         R"(}},"spec":{"ports":[{"port":80}],"selector":{"app":"web"}}})";
}

std::string PodJson(std::string_view name, std::string_view node, std::string_view ip) {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + std::string(name) +
         R"(","labels":{"app":"web","pod-template-hash":"abc"}},"spec":{"nodeName":")" +
         std::string(node) +
         R"(","containers":[{"name":"app","image":"nginx","ports":[{"name":"http",)"
         R"("containerPort":8080}]}]},"status":{"podIP":")" +
         std::string(ip) + R"("}})";
}

class InformerTest : public ::testing::Test {
 protected:
  void SetUp() override { StartServer(0); }

  void StartServer(std::uint16_t port, std::int64_t history = 100000) {
    apiserver::ServeOptions options;
    options.listen = "127.0.0.1:" + std::to_string(port);
    options.data_dir = dir_.path();
    options.history_events = history;
    options.io_threads = 2;
    options.api.bookmark_interval = bookmark_interval_;
    auto started = apiserver::RunningApiServer::Start(options);
    ASSERT_TRUE(started.ok()) << started.status().ToString();
    server_ = std::move(started).value();
    if (client_ == nullptr) client_ = MakeClient(server_->port());
  }

  void RestartServer(std::int64_t history = 100000) {
    const std::uint16_t port = server_->port();
    server_->Stop();
    server_.reset();
    StartServer(port, history);
  }

  static std::unique_ptr<client::RestClient> MakeClient(
      std::uint16_t port, std::chrono::milliseconds request_timeout = 30s) {
    client::RestConfig config;
    config.server.scheme = "http";
    config.server.host = "127.0.0.1";
    config.server.port = port;
    auto transport = client::Transport::Create(config, {});
    EXPECT_TRUE(transport.ok()) << transport.status().ToString();
    client::RestClientOptions options;
    options.qps = 1000;
    options.burst = 1000;
    options.max_retries = 1;
    options.initial_backoff = 10ms;
    options.request_timeout = request_timeout;
    options.list_timeout = request_timeout;
    auto client = client::RestClient::Create(
        std::shared_ptr<client::Transport>(std::move(transport).value()), options);
    EXPECT_TRUE(client.ok()) << client.status().ToString();
    return std::move(client).value();
  }

  static ReflectorOptions FastOptions() {
    ReflectorOptions options;
    options.page_size = 7;  // many pages for a few dozen objects
    options.initial_backoff = 20ms;
    options.max_backoff = 200ms;
    return options;
  }

  // name -> resourceVersion of every Service on the server.
  std::map<std::string, std::string> ServerServices() {
    std::map<std::string, std::string> out;
    Result<std::string> body = client_->List(client::ServicesResource(), "default", {});
    EXPECT_TRUE(body.ok()) << body.status().ToString();
    if (!body.ok()) return out;
    Result<codec::ListPage<model::Service>> page = codec::DecodeServiceList(*body);
    EXPECT_TRUE(page.ok()) << page.status().ToString();
    if (!page.ok()) return out;
    for (const model::Service& service : page->items) {
      out[service.metadata.name] = service.metadata.resource_version;
    }
    return out;
  }

  template <typename T>
  static std::map<std::string, std::string> Cached(const Informer<T>& informer) {
    std::map<std::string, std::string> out;
    for (const auto& object : informer.store().List()) {
      out[std::string(ObjectAccess<T>::Name(*object))] = ObjectAccess<T>::ResourceVersion(*object);
    }
    return out;
  }

  void CreateService(std::string_view name, std::string_view extra_labels = "") {
    Result<std::string> created =
        client_->Create(client::ServicesResource(), "default", ServiceJson(name, extra_labels));
    ASSERT_TRUE(created.ok()) << created.status().ToString();
  }

  void LabelService(std::string_view name, std::string_view patch_labels) {
    Result<std::string> patched =
        client_->Patch(client::ServicesResource(), "default", name, client::PatchType::kMergePatch,
                       R"({"metadata":{"labels":{)" + std::string(patch_labels) + "}}}");
    ASSERT_TRUE(patched.ok()) << patched.status().ToString();
  }

  void DeleteService(std::string_view name) {
    Result<std::string> deleted = client_->Delete(client::ServicesResource(), "default", name, {});
    ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  }

  TempDir dir_;
  std::chrono::seconds bookmark_interval_{60};  // the server's, for servers started from now on
  std::unique_ptr<apiserver::RunningApiServer> server_;
  std::unique_ptr<client::RestClient> client_;
};

// Counts what handlers saw.
struct Recorder {
  std::mutex mu;
  int initial_adds = 0;
  int adds = 0;
  int updates = 0;
  int deletes = 0;
  int tombstones = 0;

  EventHandler<model::Service> Handler() {
    EventHandler<model::Service> handler;
    handler.on_add = [this](const auto&, bool initial) {
      std::lock_guard lock(mu);
      (initial ? initial_adds : adds)++;
    };
    handler.on_update = [this](const auto& old_object, const auto& new_object) {
      EXPECT_EQ(old_object->metadata.name, new_object->metadata.name);
      EXPECT_NE(old_object->metadata.resource_version, new_object->metadata.resource_version);
      std::lock_guard lock(mu);
      ++updates;
    };
    handler.on_delete = [this](const auto&, bool final_state_unknown) {
      std::lock_guard lock(mu);
      (final_state_unknown ? tombstones : deletes)++;
    };
    return handler;
  }
};

TEST_F(InformerTest, ListsInPagesThenWatches) {
  for (int i = 0; i < 30; ++i) CreateService("svc-" + std::to_string(i));
  Informer<model::Service> informer(*client_, ServiceKind(), FastOptions());
  Recorder recorder;
  informer.AddEventHandler(recorder.Handler());
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync(10s));
  EXPECT_EQ(Cached(informer), ServerServices());
  EXPECT_EQ(recorder.initial_adds, 30);

  CreateService("late");
  LabelService("svc-1", R"("tier":"front")");
  DeleteService("svc-2");
  ASSERT_TRUE(Eventually([&] { return Cached(informer) == ServerServices(); }));
  ASSERT_TRUE(Eventually([&] {
    std::lock_guard lock(recorder.mu);
    return recorder.adds == 1 && recorder.updates == 1 && recorder.deletes == 1;
  }));
  EXPECT_EQ(recorder.tombstones, 0);
  EXPECT_EQ(informer.Stats().lists, 1);
  EXPECT_EQ(informer.store().Get("default", "svc-1")->metadata.labels.at("tier"), "front");

  // A handler added late first sees everything cached, as initial adds.
  Recorder late;
  informer.AddEventHandler(late.Handler());
  EXPECT_EQ(late.initial_adds, 30);
}

TEST_F(InformerTest, ConcurrentWritersConverge) {
  Informer<model::Service> informer(*client_, ServiceKind(), FastOptions());
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync(10s));
  std::vector<std::thread> writers;
  for (int w = 0; w < 3; ++w) {
    writers.emplace_back([this, w] {
      std::unique_ptr<client::RestClient> client = MakeClient(server_->port());
      std::mt19937 random(static_cast<unsigned>(w));
      for (int i = 0; i < 60; ++i) {
        const std::string name = "w" + std::to_string(w) + "-" + std::to_string(random() % 15);
        switch (random() % 3) {
          case 0:
            static_cast<void>(
                client->Create(client::ServicesResource(), "default", ServiceJson(name)));
            break;
          case 1:
            static_cast<void>(client->Patch(
                client::ServicesResource(), "default", name, client::PatchType::kMergePatch,
                R"({"metadata":{"labels":{"n":")" + std::to_string(i) + R"("}}})"));
            break;
          default:
            static_cast<void>(client->Delete(client::ServicesResource(), "default", name, {}));
        }
      }
    });
  }
  for (std::thread& writer : writers) writer.join();
  ASSERT_TRUE(Eventually([&] { return Cached(informer) == ServerServices(); }));
  EXPECT_EQ(informer.Stats().lists, 1);
}

// The server goes away and comes back with its history: the watch resumes from the last
// resourceVersion without a relist, and sees what changed meanwhile.
TEST_F(InformerTest, ResumesAfterTheServerRestarts) {
  for (int i = 0; i < 5; ++i) CreateService("svc-" + std::to_string(i));
  Informer<model::Service> informer(*client_, ServiceKind(), FastOptions());
  Recorder recorder;
  informer.AddEventHandler(recorder.Handler());
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync(10s));

  RestartServer();
  CreateService("after-restart");
  DeleteService("svc-0");
  ASSERT_TRUE(Eventually([&] { return Cached(informer) == ServerServices(); }));
  const ReflectorStats stats = informer.Stats();
  // Resumed, not relisted (RestClient may reopen a watch that delivered nothing by itself).
  EXPECT_EQ(stats.lists, 1);
  EXPECT_EQ(stats.expired, 0);
  EXPECT_EQ(recorder.deletes, 1);
  EXPECT_EQ(recorder.tombstones, 0);
}

// The server comes back without the history the watch needs: 410 Gone, a relist, and a
// tombstone for the delete the informer never saw.
TEST_F(InformerTest, RelistsAfterGone) {
  for (int i = 0; i < 5; ++i) CreateService("svc-" + std::to_string(i));
  ReflectorOptions options = FastOptions();
  // Time for the writes below before the informer reconnects.
  options.initial_backoff = 1500ms;
  options.max_backoff = 1500ms;
  std::unique_ptr<client::RestClient> informer_client = MakeClient(server_->port());
  Informer<model::Service> informer(*informer_client, ServiceKind(), options);
  Recorder recorder;
  informer.AddEventHandler(recorder.Handler());
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync(10s));

  // While the informer backs off, the same data serves another port, where the writes happen and
  // push the informer's resourceVersion out of the bounded history.
  const std::uint16_t port = server_->port();
  server_->Stop();
  server_.reset();
  StartServer(0, /*history=*/5);
  client_ = MakeClient(server_->port());
  DeleteService("svc-0");
  for (int i = 0; i < 20; ++i) LabelService("svc-1", R"("n":")" + std::to_string(i) + R"(")");
  CreateService("while-away");
  server_->Stop();
  server_.reset();
  StartServer(port, /*history=*/5);
  client_ = MakeClient(port);
  ASSERT_TRUE(Eventually([&] { return Cached(informer) == ServerServices(); }));
  const ReflectorStats stats = informer.Stats();
  EXPECT_GE(stats.expired, 1);
  EXPECT_EQ(stats.lists, 2);
  std::lock_guard lock(recorder.mu);
  EXPECT_EQ(recorder.tombstones, 1);
  EXPECT_EQ(recorder.adds, 1);
  EXPECT_EQ(recorder.updates, 1);
}

TEST_F(InformerTest, WatchListSyncsFromInitialEvents) {
  for (int i = 0; i < 12; ++i) CreateService("svc-" + std::to_string(i));
  ReflectorOptions options = FastOptions();
  options.use_watch_list = true;
  Informer<model::Service> informer(*client_, ServiceKind(), options);
  Recorder recorder;
  informer.AddEventHandler(recorder.Handler());
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync(10s));
  EXPECT_EQ(Cached(informer), ServerServices());
  EXPECT_EQ(recorder.initial_adds, 12);
  EXPECT_TRUE(informer.Stats().watch_list_supported);
  CreateService("late");
  ASSERT_TRUE(Eventually([&] { return Cached(informer) == ServerServices(); }));
}

// KEP-4770's two views: Services without the label and Services with it. Adding the label moves
// a Service from one informer to the other (the watch reports it DELETED from the first).
TEST_F(InformerTest, LabelSelectorsSplitServices) {
  CreateService("plain");
  CreateService("custom", R"("service.kubernetes.io/endpoint-controller-name":"x")");
  ReflectorOptions without = FastOptions();
  without.label_selector = "!service.kubernetes.io/endpoint-controller-name";
  ReflectorOptions with = FastOptions();
  with.label_selector = "service.kubernetes.io/endpoint-controller-name";
  Informer<model::Service> unlabelled(*client_, ServiceKind(), without);
  Informer<model::Service> labelled(*client_, ServiceKind(), with);
  Recorder recorder;
  unlabelled.AddEventHandler(recorder.Handler());
  unlabelled.Start();
  labelled.Start();
  ASSERT_TRUE(unlabelled.WaitForSync(10s));
  ASSERT_TRUE(labelled.WaitForSync(10s));
  EXPECT_EQ(Cached(unlabelled).size(), 1U);
  EXPECT_NE(unlabelled.store().Get("default", "plain"), nullptr);
  EXPECT_NE(labelled.store().Get("default", "custom"), nullptr);

  LabelService("plain", R"("service.kubernetes.io/endpoint-controller-name":"y")");
  ASSERT_TRUE(Eventually([&] { return labelled.store().size() == 2; }));
  ASSERT_TRUE(Eventually([&] { return unlabelled.store().size() == 0; }));
  std::lock_guard lock(recorder.mu);
  EXPECT_EQ(recorder.deletes, 1);
}

// An informer that sees no event of its own keeps moving its resourceVersion with the server's
// bookmarks. Unrelated writes then push its list's resourceVersion out of the server's history,
// and when its watch is cut it resumes from the bookmark's resourceVersion: no 410, no relist.
// Ignoring bookmarks would leave it at the list's resourceVersion and cost a relist.
TEST_F(InformerTest, BookmarksKeepAQuietWatchResumableAfterCompaction) {
  bookmark_interval_ = 1s;
  RestartServer(/*history=*/10);
  CreateService("watched", R"("tier":"watched")");
  ReflectorOptions options = FastOptions();
  options.label_selector = "tier=watched";
  Informer<model::Service> informer(*client_, ServiceKind(), options);
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync(10s));
  const std::string listed_at = informer.Stats().last_resource_version;
  ASSERT_FALSE(listed_at.empty());
  // Synced is not watching: until its watch is open, the noise below could push listed_at out of
  // the history first (a 410 and a relist under load). A change it sees proves the watch is open.
  LabelService("watched", R"("probe":"1")");
  ASSERT_TRUE(Eventually([&] {
    const auto cached = informer.store().Get("default", "watched");
    return cached != nullptr && cached->metadata.labels.contains("probe");
  }));

  std::string last_write;
  for (int i = 0; i < 30; ++i) {
    Result<std::string> created = client_->Create(client::ServicesResource(), "default",
                                                  ServiceJson("noise-" + std::to_string(i)));
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    Result<model::Service> decoded = codec::DecodeService(*created);
    ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
    last_write = decoded->metadata.resource_version;
  }
  // Only a bookmark can carry the noise's resourceVersion to an informer that filters it out.
  ASSERT_TRUE(Eventually([&] {
    const std::string seen = informer.Stats().last_resource_version;
    return !seen.empty() && std::stoll(seen) >= std::stoll(last_write);
  })) << "the informer is still at resourceVersion "
      << informer.Stats().last_resource_version << "; the writes reached " << last_write;

  RestartServer(/*history=*/10);  // cuts the watch
  // The list's resourceVersion is gone from the history: resuming from it would be a 410.
  client::ListOptions from_list;
  from_list.resource_version = listed_at;
  from_list.timeout_seconds = 1;
  Status expired_event;
  Status opened = client_->Watch(
      client::ServicesResource(), "", from_list,
      [&](std::string_view line) {
        Result<codec::WatchEvent<model::Service>> event = codec::DecodeServiceWatchEvent(line);
        if (event.ok() && event->type == codec::WatchEventType::kError)
          expired_event = event->error;
        return true;
      },
      nullptr);
  EXPECT_EQ(opened.ok() ? expired_event.code() : opened.code(), StatusCode::kExpired);

  CreateService("watched-2", R"("tier":"watched")");
  ASSERT_TRUE(Eventually([&] { return informer.store().Get("default", "watched-2") != nullptr; }));
  const ReflectorStats stats = informer.Stats();
  EXPECT_EQ(stats.expired, 0);
  EXPECT_EQ(stats.lists, 1);
  EXPECT_EQ(informer.store().size(), 2U);
}

// A watch of a resource nobody writes (namespaces in a busy cluster) gets bookmarks at the store's
// revision, as kube-apiserver's carry its watch cache's, not at its own resource's last write: so
// once other resources' writes push that write out of the history, a cut watch still resumes
// (found by fleet_sim: idle informers relisted after 250,000 writes of other kinds).
TEST_F(InformerTest, BookmarksOfAQuietResourceCarryTheStoresRevision) {
  bookmark_interval_ = 1s;
  RestartServer(/*history=*/10);
  CreateService("quiet");
  Informer<model::Service> informer(*client_, ServiceKind(), FastOptions());
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync(10s));
  // Synced is not watching: a change it sees proves the watch is open.
  LabelService("quiet", R"("probe":"1")");
  ASSERT_TRUE(Eventually([&] {
    const auto cached = informer.store().Get("default", "quiet");
    return cached != nullptr && cached->metadata.labels.contains("probe");
  }));
  std::string last_write;
  for (int i = 0; i < 30; ++i) {
    Result<std::string> created = client_->Create(
        client::PodsResource(), "default",
        PodJson("pod-" + std::to_string(i), "node-1", "10.0.0." + std::to_string(i + 1)));
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    Result<model::Pod> decoded = codec::DecodePod(*created);
    ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
    last_write = decoded->metadata.resource_version;
  }
  ASSERT_TRUE(Eventually([&] {
    const std::string seen = informer.Stats().last_resource_version;
    return !seen.empty() && std::stoll(seen) >= std::stoll(last_write);
  })) << "the Service informer is still at resourceVersion "
      << informer.Stats().last_resource_version << "; the pod writes reached " << last_write;

  RestartServer(/*history=*/10);  // cuts the watch
  CreateService("after");
  ASSERT_TRUE(Eventually([&] { return informer.store().Get("default", "after") != nullptr; }));
  const ReflectorStats stats = informer.Stats();
  EXPECT_EQ(stats.expired, 0);
  EXPECT_EQ(stats.lists, 1);
}

// A field selector on metadata.name caches that one object, through its watch events too; other
// objects' changes never reach the cache or the handlers.
TEST_F(InformerTest, FieldSelectorCachesOnlyTheNamedObject) {
  CreateService("x");
  CreateService("y");
  CreateService("xx");
  ReflectorOptions options = FastOptions();
  options.field_selector = "metadata.name=x";
  Informer<model::Service> informer(*client_, ServiceKind(), options);
  std::mutex mu;
  std::vector<std::string> seen;  // "add x", "update x", "delete x"
  EventHandler<model::Service> handler;
  handler.on_add = [&](const auto& object, bool) {
    std::lock_guard lock(mu);
    seen.push_back("add " + object->metadata.name);
  };
  handler.on_update = [&](const auto&, const auto& object) {
    std::lock_guard lock(mu);
    seen.push_back("update " + object->metadata.name);
  };
  handler.on_delete = [&](const auto& object, bool) {
    std::lock_guard lock(mu);
    seen.push_back("delete " + object->metadata.name);
  };
  informer.AddEventHandler(handler);
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync(10s));
  EXPECT_EQ(Cached(informer), (std::map<std::string, std::string>{{"x", ServerServices()["x"]}}));

  // Changes to the others come first: once x's own change has arrived, theirs would have too.
  LabelService("y", R"("n":"1")");
  CreateService("z");
  DeleteService("xx");
  LabelService("x", R"("n":"1")");
  ASSERT_TRUE(Eventually([&] {
    const auto cached = informer.store().Get("default", "x");
    return cached != nullptr && cached->metadata.labels.count("n") == 1;
  }));
  DeleteService("x");
  ASSERT_TRUE(Eventually([&] { return informer.store().size() == 0; }));
  CreateService("x");
  ASSERT_TRUE(Eventually([&] { return informer.store().size() == 1; }));
  LabelService("y", R"("n":"2")");
  CreateService("x2");
  LabelService("x", R"("n":"2")");
  ASSERT_TRUE(Eventually([&] {
    const auto cached = informer.store().Get("default", "x");
    return cached != nullptr && cached->metadata.labels.count("n") == 1;
  }));
  EXPECT_EQ(Cached(informer), (std::map<std::string, std::string>{{"x", ServerServices()["x"]}}));
  std::lock_guard lock(mu);
  EXPECT_EQ(seen, (std::vector<std::string>{"add x", "update x", "delete x", "add x", "update x"}));
}

TEST_F(InformerTest, CompactPodCache) {
  for (int i = 0; i < 20; ++i) {
    Result<std::string> created = client_->Create(
        client::PodsResource(), "default",
        PodJson("web-" + std::to_string(i), "node-" + std::to_string(i % 3), "10.0.0.1"));
    ASSERT_TRUE(created.ok()) << created.status().ToString();
  }
  auto interners = std::make_shared<model::PodInterners>();
  Informer<model::CompactPod> informer(*client_, CompactPodKind(interners), FastOptions());
  informer.AddIndex("node", [](const model::CompactPod& pod) -> std::vector<std::string> {
    return {pod.node_name()};
  });
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync(10s));
  EXPECT_EQ(informer.store().size(), 20U);
  EXPECT_EQ(informer.store().ByIndex("node", "node-1").size(), 7U);
  EXPECT_EQ(interners->label_sets.size(), 1U);
  EXPECT_EQ(interners->node_names.size(), 3U);
  const auto pod = informer.store().Get("default", "web-3");
  ASSERT_NE(pod, nullptr);
  EXPECT_EQ(pod->ToPod().spec.containers.at(0).ports.at(0).container_port, 8080);

  client::DeleteOptions now;
  now.grace_period_seconds = 0;
  Result<std::string> deleted = client_->Delete(client::PodsResource(), "default", "web-3", now);
  ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  ASSERT_TRUE(Eventually([&] { return informer.store().size() == 19; }));
}

TEST_F(InformerTest, StopEndsAnOpenWatchPromptly) {
  Informer<model::Service> informer(*client_, ServiceKind(), FastOptions());
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync(10s));
  const auto started = std::chrono::steady_clock::now();
  informer.Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - started, 2s);
  EXPECT_FALSE(informer.WaitForSync(0s) && false);
}

TEST_F(InformerTest, NeverSyncsWithoutAServerAndStopsCleanly) {
  server_->Stop();
  Informer<model::Service> informer(*client_, ServiceKind(), FastOptions());
  informer.Start();
  EXPECT_FALSE(informer.WaitForSync(300ms));
  EXPECT_GE(informer.Stats().list_failures, 1);
  informer.Stop();
  EXPECT_FALSE(informer.HasSynced());
}

// One informer per kind and filter, shared; one started late starts at once.
TEST_F(InformerTest, FactorySharesInformers) {
  CreateService("plain");
  CreateService("custom", R"("service.kubernetes.io/endpoint-controller-name":"x")");
  InformerFactory factory(*client_, FastOptions());
  Informer<model::Service>& all = factory.Services();
  EXPECT_EQ(&all, &factory.Services());
  InformerFilter labelled;
  labelled.label_selector = "service.kubernetes.io/endpoint-controller-name";
  Informer<model::Service>& custom = factory.Services(labelled);
  EXPECT_NE(&all, &custom);
  Informer<CompactEndpointSlice>& slices = factory.EndpointSlices();
  slices.AddIndex("service", LabelValueIndex<CompactEndpointSlice>("kubernetes.io/service-name"));
  factory.Start();
  ASSERT_TRUE(factory.WaitForCacheSync(10s));
  EXPECT_EQ(all.store().size(), 2U);
  EXPECT_EQ(custom.store().size(), 1U);

  Informer<model::CompactPod>& pods = factory.Pods();  // created after Start()
  ASSERT_TRUE(pods.WaitForSync(10s));
  EXPECT_TRUE(factory.WaitForCacheSync(10s));

  model::EndpointSlice slice;
  slice.metadata.name = "plain-abc";
  slice.metadata.namespace_ = "default";
  slice.metadata.labels["kubernetes.io/service-name"] = "plain";
  slice.address_type = "IPv4";
  ASSERT_TRUE(
      client_
          ->Create(client::EndpointSlicesResource(), "default", codec::EncodeEndpointSlice(slice))
          .ok());
  ASSERT_TRUE(
      Eventually([&] { return slices.store().ByIndex("service", "default/plain").size() == 1; }));
  // The cached compact slice reads back as the server's slice.
  const auto cached = slices.store().Get("default", "plain-abc");
  ASSERT_NE(cached, nullptr);
  EXPECT_EQ(cached->ToSlice().metadata.labels.at("kubernetes.io/service-name"), "plain");
  EXPECT_EQ(cached->ToSlice().address_type, "IPv4");
  factory.Stop();
}

// The informer behind a fault-injecting proxy: whatever goes wrong on the wire, its cache ends
// equal to the server's state. Writes go to the server directly.
class InformerFaultTest : public InformerTest {
 protected:
  void SetUp() override {
    InformerTest::SetUp();
    auto proxy = fakes::FaultProxy::Start("127.0.0.1", server_->port());
    ASSERT_TRUE(proxy.ok()) << proxy.status().ToString();
    proxy_ = std::move(proxy).value();
    proxied_ = MakeClient(proxy_->port(), 1s);
    for (int i = 0; i < 10; ++i) CreateService("svc-" + std::to_string(i));
  }
  void TearDown() override {
    if (proxy_ != nullptr) proxy_->Stop();
  }

  std::unique_ptr<Informer<model::Service>> StartInformer(
      ReflectorOptions options = FastOptions()) {
    options.page_size = 4;
    options.min_watch_timeout = 1s;  // a stalled watch is cut after at most 3 s
    auto informer = std::make_unique<Informer<model::Service>>(*proxied_, ServiceKind(), options);
    informer->Start();
    return informer;
  }

  // Some writes while faults are active, then the cache must match the server.
  void WriteAndConverge(Informer<model::Service>& informer, const std::string& prefix) {
    CreateService(prefix + "-new");
    LabelService("svc-3", R"("round":")" + prefix + R"(")");
    DeleteService("svc-" + std::to_string(prefix.size() % 10));
    CreateService("svc-" + std::to_string(prefix.size() % 10));
    EXPECT_TRUE(Eventually([&] { return Cached(informer) == ServerServices(); }, 20s)) << prefix;
  }

  std::unique_ptr<fakes::FaultProxy> proxy_;
  std::unique_ptr<client::RestClient> proxied_;
};

TEST_F(InformerFaultTest, ListAnswers500And429ThenSyncs) {
  const auto errors =
      proxy_->Add(fakes::Match::Get("/services").Times(3), fakes::Fault::Respond(500));
  const auto throttled = proxy_->Add(fakes::Match::Get("/services").Times(1),
                                     fakes::Fault::Respond(429).RetryAfter("1"));
  auto informer = StartInformer();
  ASSERT_TRUE(informer->WaitForSync(20s));
  EXPECT_EQ(proxy_->Hits(errors), 3);
  EXPECT_EQ(proxy_->Hits(throttled), 1);
  EXPECT_EQ(Cached(*informer), ServerServices());
  WriteAndConverge(*informer, "a");
}

TEST_F(InformerFaultTest, TruncatedAndMalformedListPages) {
  const auto truncated =
      proxy_->Add(fakes::Match::Get("/services").Times(1), fakes::Fault::TruncateBody(100));
  const auto garbage =
      proxy_->Add(fakes::Match::Get("/services").Times(1),
                  fakes::Fault::ReplaceBody("{\"kind\":\"ServiceList\",\"items\":[{]"));
  const auto not_json = proxy_->Add(fakes::Match::Get("/services").Times(1),
                                    fakes::Fault::ReplaceBody("\x01\xff<html>"));
  auto informer = StartInformer();
  ASSERT_TRUE(informer->WaitForSync(20s));
  EXPECT_EQ(proxy_->Hits(truncated), 1);
  EXPECT_EQ(proxy_->Hits(garbage), 1);
  EXPECT_EQ(proxy_->Hits(not_json), 1);
  EXPECT_GE(informer->Stats().list_failures, 2);
  EXPECT_EQ(Cached(*informer), ServerServices());
  WriteAndConverge(*informer, "bb");
}

TEST_F(InformerFaultTest, StalledAndSlowListRequests) {
  const auto stalled = proxy_->Add(fakes::Match::Get("/services").Times(1), fakes::Fault::Stall());
  const auto slow =
      proxy_->Add(fakes::Match::Get("/services").Times(3), fakes::Fault::Delay(300ms));
  auto informer = StartInformer();
  ASSERT_TRUE(informer->WaitForSync(20s));
  EXPECT_EQ(proxy_->Hits(stalled), 1);
  EXPECT_EQ(proxy_->Hits(slow), 3);
  EXPECT_EQ(Cached(*informer), ServerServices());
  WriteAndConverge(*informer, "ccc");
}

TEST_F(InformerFaultTest, WatchCutDroppedAndRefused) {
  auto informer = StartInformer();
  ASSERT_TRUE(informer->WaitForSync(20s));
  const auto cut =
      proxy_->Add(fakes::Match::Watch("/services").Times(3), fakes::Fault::CutStreamAfter(1));
  const auto dropped = proxy_->Add(fakes::Match::Watch("/services").Times(2), fakes::Fault::Drop());
  const auto refused =
      proxy_->Add(fakes::Match::Watch("/services").Times(2), fakes::Fault::Respond(503));
  // The watch opened before these rules passes through; once its server timeout (1-2 s) ends it,
  // the next watches are cut after one event, dropped, and refused, in that order.
  for (int round = 0; round < 4; ++round) WriteAndConverge(*informer, "d" + std::to_string(round));
  ASSERT_TRUE(proxy_->WaitForHits(refused, 2, 20s));
  EXPECT_EQ(proxy_->Hits(cut), 3);
  EXPECT_EQ(proxy_->Hits(dropped), 2);
  WriteAndConverge(*informer, "after");
  EXPECT_EQ(informer->Stats().expired, 0);
}

TEST_F(InformerFaultTest, GarbageLineInAWatchStream) {
  const auto injected = proxy_->Add(fakes::Match::Watch("/services").Times(1),
                                    fakes::Fault::InjectLine(1, "{\"type\":\"ADDED\",\"object\":"));
  auto informer = StartInformer();
  ASSERT_TRUE(informer->WaitForSync(20s));
  WriteAndConverge(*informer, "e");
  EXPECT_EQ(proxy_->Hits(injected), 1);
  WriteAndConverge(*informer, "ee");
  // The stream was resumed from the last good resourceVersion, so nothing had to be skipped.
  EXPECT_EQ(informer->Stats().skipped_lines, 0);
  EXPECT_GE(informer->DecodeErrors(), 1);
}

TEST_F(InformerFaultTest, StalledWatchIsCutAndResumed) {
  const auto stalled =
      proxy_->Add(fakes::Match::Watch("/services").Times(1), fakes::Fault::StallStreamAfter(0));
  auto informer = StartInformer();
  ASSERT_TRUE(informer->WaitForSync(20s));
  ASSERT_TRUE(proxy_->WaitForHits(stalled, 1, 10s));
  // Events written now are held by the stalled stream until its deadline cuts it.
  WriteAndConverge(*informer, "fff");
  EXPECT_GE(informer->Stats().watch_failures, 1);
}

// kube-apiserver with the WatchList feature gate off answers sendInitialEvents=true with 422
// Invalid; older servers answer 400. Either way the informer syncs by LIST and WATCH instead,
// asks for a WatchList only once, and reports WatchList unsupported.
TEST_F(InformerFaultTest, WatchListRefusedFallsBackToListAndWatch) {
  const std::string invalid =
      R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":)"
      R"("ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: Forbidden: )"
      R"(sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled",)"
      R"("reason":"Invalid","code":422})";
  const std::string bad_request =
      R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":)"
      R"("unknown query parameter sendInitialEvents","reason":"BadRequest","code":400})";
  const struct {
    int status;
    std::string body;
  } refusals[] = {{422, invalid}, {400, bad_request}};
  int round = 0;
  for (const auto& refusal : refusals) {
    SCOPED_TRACE(refusal.status);
    proxy_->ClearRules();
    const auto refused = proxy_->Add(fakes::Match::Watch("sendInitialEvents=true").Forever(),
                                     fakes::Fault::Respond(refusal.status, refusal.body));
    ReflectorOptions options = FastOptions();
    options.use_watch_list = true;
    auto informer = StartInformer(options);
    ASSERT_TRUE(informer->WaitForSync(20s));
    EXPECT_EQ(Cached(*informer), ServerServices());
    const ReflectorStats stats = informer->Stats();
    EXPECT_FALSE(stats.watch_list_supported);
    EXPECT_EQ(stats.lists, 1);
    EXPECT_EQ(stats.list_failures, 0);
    EXPECT_EQ(proxy_->Hits(refused), 1);
    // The watch after the LIST carries the changes.
    WriteAndConverge(*informer, "refused" + std::to_string(round++));
    EXPECT_EQ(proxy_->Hits(refused), 1);
    EXPECT_EQ(informer->Stats().lists, 1);
  }
}

// After falling back to LIST, a relist once watch_list_retry_interval has passed tries WatchList
// again, and keeps it when the server now accepts it (here: a 422 once, then a 410 that forces the
// relist; the interval is 0, client-go's every-relist behaviour).
TEST_F(InformerFaultTest, WatchListTriedAgainAtARelistAfterTheRetryInterval) {
  const auto refused = proxy_->Add(
      fakes::Match::Watch("sendInitialEvents=true").Times(1),
      fakes::Fault::Respond(
          422, R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
               R"("message":"sendInitialEvents is forbidden","reason":"Invalid","code":422})"));
  const auto gone = proxy_->Add(
      fakes::Match::Watch("/services").Times(1),
      fakes::Fault::Respond(
          410,
          R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
          R"json("message":"too old resource version: 1 (2)","reason":"Expired","code":410})json"));
  ReflectorOptions options = FastOptions();
  options.use_watch_list = true;
  options.watch_list_retry_interval = 0ms;
  auto informer = StartInformer(options);
  ASSERT_TRUE(informer->WaitForSync(20s));
  // The LIST, then the WatchList's initial sync after the 410.
  ASSERT_TRUE(Eventually([&] { return informer->Stats().lists == 2; }, 20s));
  EXPECT_TRUE(informer->Stats().watch_list_supported);
  EXPECT_EQ(proxy_->Hits(refused), 1);
  EXPECT_EQ(proxy_->Hits(gone), 1);
  EXPECT_EQ(informer->Stats().expired, 1);
  WriteAndConverge(*informer, "again");
  EXPECT_EQ(informer->Stats().lists, 2);
  EXPECT_TRUE(informer->Stats().watch_list_supported);
}

// A server that accepts WatchList requests but cuts every stream before the initial-events-end
// bookmark: after three such streams the informer lists instead of retrying forever, and says so
// once in the log.
TEST_F(InformerFaultTest, WatchListEndingEarlyFallsBackAfterThreeTries) {
  std::mutex log_mu;
  std::vector<std::string> logged;
  log::SetSinkForTesting([&](log::Severity, std::string_view message) {
    std::lock_guard lock(log_mu);
    logged.emplace_back(message);
  });
  const auto cut = proxy_->Add(fakes::Match::Watch("sendInitialEvents=true").Forever(),
                               fakes::Fault::CutStreamAfter(2));
  ReflectorOptions options = FastOptions();
  options.use_watch_list = true;
  auto informer = StartInformer(options);
  const bool synced = informer->WaitForSync(20s);
  log::SetSinkForTesting({});
  ASSERT_TRUE(synced);
  EXPECT_EQ(Cached(*informer), ServerServices());
  const ReflectorStats stats = informer->Stats();
  EXPECT_FALSE(stats.watch_list_supported);
  EXPECT_EQ(stats.lists, 1);  // the LIST, not a WatchList
  EXPECT_EQ(proxy_->Hits(cut), 3);
  WriteAndConverge(*informer, "early");
  EXPECT_EQ(proxy_->Hits(cut), 3);
  std::lock_guard lock(log_mu);
  int fallbacks = 0;
  for (const std::string& line : logged) {
    if (line.find("WatchList streams in a row ended before their initial events") !=
        std::string::npos) {
      ++fallbacks;
    }
  }
  EXPECT_EQ(fallbacks, 1);
}

// A server whose storage lacks WatchList may answer it with a plain 500 rather than a 422: that,
// too, ends in LIST+WATCH after three tries instead of retrying forever.
TEST_F(InformerFaultTest, WatchListAnswered500FallsBackAfterThreeTries) {
  const auto failed = proxy_->Add(
      fakes::Match::Watch("sendInitialEvents=true").Forever(),
      fakes::Fault::Respond(
          500, R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
               R"("message":"sendInitialEvents is forbidden for watch unless the WatchList )"
               R"(feature gate is enabled","reason":"InternalError","code":500})"));
  ReflectorOptions options = FastOptions();
  options.use_watch_list = true;
  auto informer = StartInformer(options);
  ASSERT_TRUE(informer->WaitForSync(20s));
  EXPECT_EQ(Cached(*informer), ServerServices());
  EXPECT_FALSE(informer->Stats().watch_list_supported);
  EXPECT_EQ(informer->Stats().lists, 1);
  const int hits = proxy_->Hits(failed);
  EXPECT_GE(hits, 3);  // three WatchLists, each perhaps retried by RestClient
  WriteAndConverge(*informer, "five-hundred");
  EXPECT_EQ(proxy_->Hits(failed), hits);
}

// A WatchList cut early fewer times than the limit is retried and still syncs from its initial
// events.
TEST_F(InformerFaultTest, WatchListEndingEarlyTwiceStillSyncsByWatchList) {
  const auto cut = proxy_->Add(fakes::Match::Watch("sendInitialEvents=true").Times(2),
                               fakes::Fault::CutStreamAfter(2));
  ReflectorOptions options = FastOptions();
  options.use_watch_list = true;
  auto informer = StartInformer(options);
  ASSERT_TRUE(informer->WaitForSync(20s));
  EXPECT_EQ(proxy_->Hits(cut), 2);
  EXPECT_EQ(Cached(*informer), ServerServices());
  EXPECT_TRUE(informer->Stats().watch_list_supported);
  WriteAndConverge(*informer, "twice");
}

}  // namespace
}  // namespace slicewright::cache

// A controller that names another cluster gets its client and informers from the manager; one it
// cannot connect fails Create. (Apart from table_test.cc, whose JSON parsing the tsan build, which
// compiles the Concurrent* tests at -O1, need not compile.)
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "slicewright/client/typed_client.h"
#include "slicewright/model/well_known.h"

#include "controllers/manager/manager.h"
#include "controllers/manager/table.h"
#include "fakes/loopback.h"
#include "fakes/loopback_api_server.h"

namespace slicewright::controllers {
namespace {

// A controller naming another cluster ("other") reads it through informers the manager starts and
// syncs with the local ones, from the client its caller passed.
class SeesOtherCluster final {
 public:
  SeesOtherCluster(cache::Informer<model::Service>& local, cache::Informer<model::Service>& other)
      : local_(local), other_(other) {}
  void Start() { started = true; }
  void Stop() {}
  bool Sees(const std::string& local_name, const std::string& other_name) const {
    return started && local_.store().Get("default", local_name) != nullptr &&
           other_.store().Get("default", other_name) != nullptr &&
           local_.store().Get("default", other_name) == nullptr;
  }
  std::atomic<bool> started{false};

 private:
  cache::Informer<model::Service>& local_;
  cache::Informer<model::Service>& other_;
};

TEST(ManagerRemoteClusterTest, ConcurrentControllerReadsAnotherCluster) {
  test_support::TempDir local_dir;
  test_support::TempDir other_dir;
  auto local_server = test_support::StartLoopbackApiServer(local_dir.path());
  auto other_server = test_support::StartLoopbackApiServer(other_dir.path());
  auto local_client = test_support::LoopbackClient(local_server->port());
  auto other_client = test_support::LoopbackClient(other_server->port());

  const auto create_service = [](client::RestClient& rest, const std::string& name) {
    model::Service service;
    service.metadata.name = name;
    service.metadata.namespace_ = "default";
    service.spec.ports.emplace_back().port = 80;
    return client::TypedClient<model::Service>(rest, client::ServiceCodec()).Create(service).ok();
  };
  ASSERT_TRUE(create_service(*local_client, "here"));
  ASSERT_TRUE(create_service(*other_client, "there"));

  SeesOtherCluster* seen = nullptr;
  ControllerDescriptor descriptor;
  descriptor.name = "two-clusters";
  descriptor.component = "two-clusters-controller";
  descriptor.remotes = [](const ManagerOptions&) {
    return std::vector<RemoteClusterConfig>{{.name = "other"}};
  };
  descriptor.create = [&seen](const ControllerContext& context) -> Result<RunningController> {
    auto controller = std::make_unique<SeesOtherCluster>(
        context.local.informers->Services(), context.remotes.at("other").informers->Services());
    seen = controller.get();
    return Hold(std::move(controller));
  };
  const ControllerTable table = {descriptor};

  ManagerOptions options;
  options.port = -1;
  options.leader_elect = false;
  options.controllers = {"two-clusters"};
  auto manager = Manager::Create(options, *local_client, {{"other", other_client.get()}}, table);
  ASSERT_TRUE(manager.ok()) << manager.status().ToString();
  std::stop_source stop;
  std::thread runner([&] { (void)(*manager)->Run(stop.get_token()); });
  const bool sees = test_support::Eventually(
      [&] { return (*manager)->Ready() && seen != nullptr && seen->Sees("here", "there"); });
  stop.request_stop();
  runner.join();
  EXPECT_TRUE(sees);
}

// A remote cluster that does not answer (the broker down when the member starts) holds back only
// the controller that reads it: the member's own EndpointSlice controller starts at once and
// writes its slices; the remote one starts when that cluster answers.
TEST(ManagerRemoteClusterTest, ConcurrentSilentClusterHoldsBackOnlyItsController) {
  test_support::TempDir local_dir;
  test_support::TempDir other_dir;
  auto local_server = test_support::StartLoopbackApiServer(local_dir.path());
  auto other_server = test_support::StartLoopbackApiServer(other_dir.path());
  const std::uint16_t other_port = other_server->port();
  auto local_client = test_support::LoopbackClient(local_server->port());
  auto other_client = test_support::LoopbackClient(other_port);

  const auto create_service = [](client::RestClient& rest, const std::string& name) {
    model::Service service;
    service.metadata.name = name;
    service.metadata.namespace_ = "default";
    service.spec.selector = model::StringMap{{"app", name}};
    service.spec.ports.emplace_back().port = 80;
    return client::TypedClient<model::Service>(rest, client::ServiceCodec()).Create(service).ok();
  };
  ASSERT_TRUE(create_service(*local_client, "here"));
  ASSERT_TRUE(create_service(*other_client, "there"));
  other_server.reset();  // the other cluster is down from now on

  std::atomic<SeesOtherCluster*> seen{nullptr};
  ControllerDescriptor remote;
  remote.name = "two-clusters";
  remote.component = "two-clusters-controller";
  remote.remotes = [](const ManagerOptions&) {
    return std::vector<RemoteClusterConfig>{{.name = "other"}};
  };
  remote.create = [&seen](const ControllerContext& context) -> Result<RunningController> {
    auto controller = std::make_unique<SeesOtherCluster>(
        context.local.informers->Services(), context.remotes.at("other").informers->Services());
    seen = controller.get();
    return Hold(std::move(controller));
  };
  Result<const ControllerDescriptor*> endpointslice =
      FindController(BuiltinControllers(), "endpointslice");
  ASSERT_TRUE(endpointslice.ok());
  const ControllerTable table = {**endpointslice, remote};

  ManagerOptions options;
  options.port = -1;
  options.leader_elect = false;
  options.controllers = {"endpointslice", "two-clusters"};
  auto manager = Manager::Create(options, *local_client, {{"other", other_client.get()}}, table);
  ASSERT_TRUE(manager.ok()) << manager.status().ToString();
  std::stop_source stop;
  std::thread runner([&] { (void)(*manager)->Run(stop.get_token()); });

  // The local controller runs: "here" gets its placeholder slice, the other cluster still down.
  client::TypedClient<model::EndpointSlice> slices(*local_client, client::EndpointSliceCodec());
  const bool local_ran = test_support::Eventually([&] {
    client::ListOptions list;
    list.label_selector = std::string(model::kLabelServiceName) + "=here";
    auto listed = slices.ListAll("default", list);
    return listed.ok() && listed->items.size() == 1;
  });
  // The remote controller is built (its informers started, failing) but not started.
  const bool built = test_support::Eventually([&] { return seen.load() != nullptr; });
  // Lets its reflectors fail at least once, so the start below is a retry's doing.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const bool held_back = built && !seen.load()->started;
  const bool not_ready = !(*manager)->Ready();

  // The other cluster answers again (same port, same data): the remote controller starts.
  apiserver::ServeOptions serve;
  serve.listen = "127.0.0.1:" + std::to_string(other_port);
  serve.data_dir = other_dir.path();
  serve.io_threads = 2;
  auto restarted = apiserver::RunningApiServer::Start(std::move(serve));
  ASSERT_TRUE(restarted.ok()) << restarted.status().ToString();
  // The reflectors' backoff (0.8 s doubling, jittered) decides when they retry.
  const bool remote_ran = test_support::Eventually(
      [&] { return (*manager)->Ready() && seen != nullptr && seen.load()->Sees("here", "there"); },
      std::chrono::seconds(60));
  stop.request_stop();
  runner.join();
  EXPECT_TRUE(local_ran);
  EXPECT_TRUE(held_back);
  EXPECT_TRUE(not_ready);
  EXPECT_TRUE(remote_ran);
}

// A cluster the caller did not pass is connected from the descriptor's kubeconfig; a bad one
// fails Create with the controller and the cluster named.
TEST(ManagerRemoteClusterTest, BadKubeconfigFailsCreate) {
  ControllerDescriptor descriptor;
  descriptor.name = "two-clusters";
  descriptor.component = "two-clusters-controller";
  descriptor.remotes = [](const ManagerOptions&) {
    return std::vector<RemoteClusterConfig>{
        {.name = "broker", .kubeconfig = "/nonexistent/broker.kubeconfig"}};
  };
  descriptor.create = [](const ControllerContext&) -> Result<RunningController> {
    return Status(StatusCode::kInternal, "not reached");
  };
  const ControllerTable table = {descriptor};
  auto client = test_support::LoopbackClient(1);  // never contacted
  ManagerOptions options;
  options.port = -1;
  const Status status = Manager::Create(options, *client, {}, table).status();
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.ToString().find("two-clusters: cluster \"broker\""), std::string::npos)
      << status.ToString();
  EXPECT_NE(status.ToString().find("/nonexistent/broker.kubeconfig"), std::string::npos)
      << status.ToString();
}

}  // namespace
}  // namespace slicewright::controllers

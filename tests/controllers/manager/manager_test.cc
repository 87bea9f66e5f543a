#include "controllers/manager/manager.h"

#include <chrono>
#include <memory>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "slicewright/base/check.h"
#include "slicewright/client/typed_client.h"
#include "slicewright/model/well_known.h"

#include "fakes/loopback.h"
#include "fakes/loopback_api_server.h"

namespace slicewright::controllers {
namespace {

TEST(SelectControllersTest, UpstreamRules) {
  // "*" is every controller enabled by default: not the MCS agent, which needs a broker.
  EXPECT_EQ(SelectControllers({"*"}).value(),
            (std::vector<std::string>{"endpoints", "endpointslice", "endpointslice-mirroring",
                                      "multinetwork"}));
  EXPECT_EQ(SelectControllers({"*", "mcs"}).value(),
            (std::vector<std::string>{"endpoints", "endpointslice", "endpointslice-mirroring",
                                      "mcs", "multinetwork"}));
  EXPECT_EQ(SelectControllers({"endpointslice"}).value(),
            std::vector<std::string>{"endpointslice"});
  EXPECT_EQ(SelectControllers({"*,-endpointslice"}).value(),
            (std::vector<std::string>{"endpoints", "endpointslice-mirroring", "multinetwork"}));
  EXPECT_TRUE(SelectControllers({"endpointslice,multinetwork", "-multinetwork,-endpointslice"})
                  .value()
                  .empty());
  EXPECT_TRUE(SelectControllers({}).value().empty());
  const Status unknown = SelectControllers({"*", "garbagecollector"}).status();
  EXPECT_EQ(unknown.code(), StatusCode::kInvalid);
  EXPECT_NE(unknown.ToString().find("unknown controller \"garbagecollector\""), std::string::npos)
      << unknown.ToString();
}

// Two managers running different controllers never share a Lease by default: the MCS agent
// alone (deploy/mcs/member, started as deploy/mcs/README.md documents it) campaigns for its own,
// not for the endpoint controllers' one, where it would stand by for good (issue #30).
TEST(DefaultLeaseNameTest, FollowsTheControllersRun) {
  EXPECT_EQ(DefaultLeaseName({"mcs"}), "slicewright-mcs-agent");
  const Result<std::vector<std::string>> all = SelectControllers({"*"});
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_EQ(DefaultLeaseName(*all), "slicewright-controller-manager");
  EXPECT_EQ(DefaultLeaseName({"endpointslice"}), "slicewright-controller-manager");
  // With an endpoint controller, the endpoint controllers' Lease: two managers never run them at
  // once.
  const Result<std::vector<std::string>> both = SelectControllers({"*", "mcs"});
  ASSERT_TRUE(both.ok()) << both.status().ToString();
  EXPECT_EQ(DefaultLeaseName(*both), "slicewright-controller-manager");
  EXPECT_EQ(ManagerOptions().leader_elect_name, "");
  EXPECT_TRUE(ManagerOptions().leader_elect);
}

TEST(ParseFeatureGatesTest, KnownGatesOnly) {
  EXPECT_TRUE(ParseFeatureGates("").value().at("ExternalEndpointController"));
  EXPECT_FALSE(ParseFeatureGates("ExternalEndpointController=false")
                   .value()
                   .at("ExternalEndpointController"));
  EXPECT_TRUE(ParseFeatureGates(" ExternalEndpointController = true ,")
                  .value()
                  .at("ExternalEndpointController"));
  EXPECT_EQ(ParseFeatureGates("Nope=true").status().ToString(),
            "--feature-gates: unrecognized feature gate: Nope");
  EXPECT_EQ(ParseFeatureGates("ExternalEndpointController=yes").status().code(),
            StatusCode::kInvalid);
  EXPECT_EQ(ParseFeatureGates("ExternalEndpointController").status().code(), StatusCode::kInvalid);
}

// The manager's registry exports slicewright_internal_bugs_total, read from the process's SW_BUG
// count on every scrape (a debug build aborts on SW_BUG, so only the series itself is checked).
TEST(ManagerTest, ExportsTheInternalBugCount) {
  auto client = test_support::LoopbackClient(1);  // never contacted: Create starts nothing
  ManagerOptions options;
  options.port = -1;
  auto manager = Manager::Create(options, *client);
  ASSERT_TRUE(manager.ok()) << manager.status().ToString();
  const std::string want =
      "slicewright_internal_bugs_total " + std::to_string(InternalBugCount()) + "\n";
  EXPECT_NE((*manager)->metrics().Expose().find(want), std::string::npos)
      << (*manager)->metrics().Expose();
}

// kube-controller-manager labels its Endpoints from Kubernetes 1.33 on, and reads the
// topology-mode annotation from 1.27 on; the manager gives the controllers the API server's
// version.
TEST(ManagerTest, EndpointsManagedByLabelFromKubernetes133) {
  EXPECT_FALSE(endpoints::WritesManagedByLabel(1, 26));
  EXPECT_FALSE(endpoints::WritesManagedByLabel(1, 32));
  EXPECT_TRUE(endpoints::WritesManagedByLabel(1, 33));
  EXPECT_TRUE(endpoints::WritesManagedByLabel(1, 34));
  EXPECT_TRUE(endpoints::WritesManagedByLabel(2, 0));
  // service.kubernetes.io/topology-mode is read from 1.27 on.
  EXPECT_FALSE(endpointslice::TopologyModeAnnotationKnown(1, 26));
  EXPECT_TRUE(endpointslice::TopologyModeAnnotationKnown(1, 27));
}

// Manager::Run against the real embedded API server, with leader election on and off: it becomes
// ready, its controllers act (a new Service gets its placeholder slice and its Endpoints), and a
// stop request ends Run with OK after the controllers drained. Under the tsan preset this runs
// the manager's threads (elector, informers, every controller's workers) against each other.
class ManagerRunTest : public ::testing::TestWithParam<bool> {};

TEST_P(ManagerRunTest, ConcurrentRunServesAndStops) {
  test_support::TempDir dir;
  auto server = test_support::StartLoopbackApiServer(dir.path());
  auto client = test_support::LoopbackClient(server->port());
  ManagerOptions options;
  options.port = 0;
  options.bind_address = "127.0.0.1";
  options.leader_elect = GetParam();
  options.leader_elect_namespace = "default";
  options.identity = "manager-test";
  options.retry_period = std::chrono::milliseconds(200);
  options.endpointslice.concurrent_syncs = 3;
  auto manager = Manager::Create(options, *client);
  ASSERT_TRUE(manager.ok()) << manager.status().ToString();

  std::stop_source stop;
  Status result(StatusCode::kInternal, "Run did not return");
  std::thread runner([&] { result = (*manager)->Run(stop.get_token()); });
  const bool ready = test_support::Eventually([&] { return (*manager)->Ready(); });

  model::Service service;
  service.metadata.name = "web";
  service.metadata.namespace_ = "default";
  service.spec.selector = model::StringMap{{"app", "web"}};
  model::ServicePort& port = service.spec.ports.emplace_back();
  port.name = "http";
  port.port = 80;
  client::TypedClient<model::Service> services(*client, client::ServiceCodec());
  client::TypedClient<model::EndpointSlice> slices(*client, client::EndpointSliceCodec());
  client::TypedClient<model::Endpoints> endpoints(*client, client::EndpointsCodec());
  const bool created = services.Create(service).ok();
  const bool acted = test_support::Eventually([&] {
    client::ListOptions list;
    list.label_selector = std::string(model::kLabelServiceName) + "=web";
    auto listed = slices.ListAll("default", list);
    return listed.ok() && listed->items.size() == 1 && endpoints.Get("default", "web").ok();
  });

  // The embedded server says Kubernetes 1.32: the Endpoints is written as kube-controller-manager
  // 1.32 writes it, without 1.33's managed-by label.
  Result<model::Endpoints> written = endpoints.Get("default", "web");
  const std::string metrics = (*manager)->metrics().Expose();

  stop.request_stop();
  runner.join();
  EXPECT_TRUE(ready);
  EXPECT_TRUE(created);
  EXPECT_TRUE(acted);
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  EXPECT_FALSE(written->metadata.labels.contains(model::kLabelEndpointsManagedBy));
  // Every request is counted as client-go's rest_client_requests_total counts it.
  const std::string host = "host=\"127.0.0.1:" + std::to_string(server->port()) + "\"";
  EXPECT_NE(metrics.find("rest_client_requests_total{code=\"200\"," + host + ",method=\"GET\"}"),
            std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("rest_client_requests_total{code=\"201\"," + host + ",method=\"POST\"}"),
            std::string::npos)
      << metrics;
  EXPECT_TRUE(result.ok()) << result.ToString();
  EXPECT_FALSE((*manager)->Ready());
}

INSTANTIATE_TEST_SUITE_P(LeaderElection, ManagerRunTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& param) {
                           return param.param ? "On" : "Off";
                         });

}  // namespace
}  // namespace slicewright::controllers

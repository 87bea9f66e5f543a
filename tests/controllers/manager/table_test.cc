// The controller table: every descriptor complete and unique, deploy/rbac.yaml equal to what the
// default controllers declare (deploy/mcs/member/rbac.yaml to what the MCS agent declares), and a
// controller that names another cluster getting its client and informers from the manager.
#include "controllers/manager/table.h"

#include <atomic>
#include <fstream>
#include <set>
#include <sstream>
#include <stop_token>
#include <string>
#include <thread>
#include <tuple>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "slicewright/client/typed_client.h"
#include "slicewright/codec/yaml.h"

#include "controllers/manager/manager.h"
#include "fakes/loopback.h"
#include "fakes/loopback_api_server.h"

namespace slicewright::controllers {
namespace {

TEST(ControllerTableTest, EveryDescriptorIsCompleteAndUnique) {
  std::set<std::string> names;
  std::set<std::string> components;
  ManagerOptions options;
  for (const ControllerDescriptor& descriptor : BuiltinControllers()) {
    SCOPED_TRACE(descriptor.name);
    EXPECT_TRUE(names.insert(descriptor.name).second) << "duplicate name";
    EXPECT_TRUE(components.insert(descriptor.component).second) << "duplicate component";
    EXPECT_FALSE(descriptor.component.empty());
    EXPECT_TRUE(static_cast<bool>(descriptor.create));
    EXPECT_FALSE(descriptor.rbac.empty());
    EXPECT_EQ(FindController(BuiltinControllers(), descriptor.name).value(), &descriptor);
  }
  std::set<std::string> flag_names;
  for (const FlagSpec& flag : ControllerFlags(BuiltinControllers(), options)) {
    EXPECT_TRUE(flag_names.insert(flag.names).second) << "flag declared twice: " << flag.names;
    EXPECT_FALSE(flag.help.empty()) << flag.names;
  }
  const Status unknown = FindController(BuiltinControllers(), "garbagecollector").status();
  EXPECT_EQ(unknown.code(), StatusCode::kInvalid);
  EXPECT_NE(unknown.ToString().find("unknown controller \"garbagecollector\" (known: endpoints"),
            std::string::npos)
      << unknown.ToString();
}

// A flag bound by a descriptor writes the field the controller's options read.
TEST(ControllerTableTest, FlagsBindTheControllersOptions) {
  ManagerOptions options;
  for (const FlagSpec& flag : ControllerFlags(BuiltinControllers(), options)) {
    if (flag.names == "--max-endpoints-per-slice") *std::get<int*>(flag.target) = 7;
    if (flag.names == "--endpoint-updates-batch-period") {
      *std::get<std::chrono::milliseconds*>(flag.target) = std::chrono::milliseconds(250);
    }
  }
  EXPECT_EQ(options.endpointslice.max_endpoints_per_slice, 7);
  EXPECT_EQ(options.endpoints.batch_period, std::chrono::milliseconds(250));
}

// (api group, resource, verb) triples.
using Grant = std::tuple<std::string, std::string, std::string>;

std::set<Grant> Expand(const std::vector<RbacRule>& rules) {
  std::set<Grant> grants;
  for (const RbacRule& rule : rules) {
    for (const std::string& group : rule.api_groups) {
      for (const std::string& resource : rule.resources) {
        for (const std::string& verb : rule.verbs) grants.emplace(group, resource, verb);
      }
    }
  }
  return grants;
}

// The ClusterRole grants of a deploy/ manifest, or a failure naming the file.
::testing::AssertionResult ReadClusterRoleGrants(const std::string& relative,
                                                 std::set<Grant>& deployed) {
  std::ifstream file(std::string(SW_SOURCE_DIR) + "/" + relative);
  if (!file.good()) return ::testing::AssertionFailure() << relative << " not found";
  std::stringstream text;
  text << file.rdbuf();
  auto documents = codec::YamlToJson(text.str(), relative);
  if (!documents.ok()) return ::testing::AssertionFailure() << documents.status().ToString();
  for (const std::string& document : *documents) {
    const nlohmann::json object = nlohmann::json::parse(document);
    if (object.value("kind", "") != "ClusterRole") continue;
    for (const nlohmann::json& rule : object.at("rules")) {
      RbacRule parsed;
      parsed.api_groups = rule.at("apiGroups").get<std::vector<std::string>>();
      parsed.resources = rule.at("resources").get<std::vector<std::string>>();
      parsed.verbs = rule.at("verbs").get<std::vector<std::string>>();
      for (const Grant& grant : Expand({parsed})) deployed.insert(grant);
    }
  }
  return ::testing::AssertionSuccess();
}

// The manifest's ClusterRole grants exactly what the named controllers declare plus the
// manager's Events: a controller that needs more, or a grant nobody needs, fails here.
void ExpectClusterRoleIsTheRulesOf(const std::string& manifest,
                                   const std::vector<std::string>& controllers) {
  std::set<Grant> deployed;
  ASSERT_TRUE(ReadClusterRoleGrants(manifest, deployed));
  std::vector<RbacRule> wanted = ManagerRbacRules();
  for (const std::string& name : controllers) {
    const ControllerDescriptor* descriptor = FindController(BuiltinControllers(), name).value();
    wanted.insert(wanted.end(), descriptor->rbac.begin(), descriptor->rbac.end());
  }
  const std::set<Grant> declared = Expand(wanted);
  for (const Grant& grant : declared) {
    EXPECT_TRUE(deployed.contains(grant)) << manifest << " lacks " << std::get<0>(grant) << "/"
                                          << std::get<1>(grant) << " " << std::get<2>(grant);
  }
  for (const Grant& grant : deployed) {
    EXPECT_TRUE(declared.contains(grant))
        << manifest << " grants " << std::get<0>(grant) << "/" << std::get<1>(grant) << " "
        << std::get<2>(grant) << " that no controller of it declares";
  }
}

// deploy/rbac.yaml is for the controllers of "*".
TEST(ControllerTableTest, DeployedClusterRoleIsTheTablesRules) {
  ExpectClusterRoleIsTheRulesOf("deploy/rbac.yaml", SelectControllers({"*"}).value());
}

// deploy/mcs/member/rbac.yaml is for the MCS agent alone: least privilege in a member cluster.
TEST(ControllerTableTest, DeployedMcsMemberClusterRoleIsTheMcsRules) {
  ExpectClusterRoleIsTheRulesOf("deploy/mcs/member/rbac.yaml", {"mcs"});
}

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

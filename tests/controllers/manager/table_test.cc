// The controller table: every descriptor complete and unique, deploy/rbac.yaml equal to what the
// default controllers declare (deploy/mcs/member/rbac.yaml to what the MCS agent declares), and a
// controller that names another cluster getting its client and informers from the manager.
#include "controllers/manager/table.h"

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <tuple>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "slicewright/codec/yaml.h"

#include "controllers/manager/manager.h"

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
    if (flag.names == "--mcs-cluster-ip-families") *std::get<std::string*>(flag.target) = "IPv6";
  }
  EXPECT_EQ(options.endpointslice.max_endpoints_per_slice, 7);
  EXPECT_EQ(options.endpoints.batch_period, std::chrono::milliseconds(250));
  EXPECT_EQ(options.mcs.cluster_ip_families, "IPv6");
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

}  // namespace
}  // namespace slicewright::controllers

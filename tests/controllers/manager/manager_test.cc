#include "controllers/manager/manager.h"

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "slicewright/base/check.h"
#include "slicewright/client/rest_client.h"
#include "slicewright/client/transport.h"

namespace slicewright::controllers {
namespace {

TEST(SelectControllersTest, UpstreamRules) {
  EXPECT_EQ(SelectControllers({"*"}).value(), KnownControllers());
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
  client::RestConfig config;
  config.server.scheme = "http";
  config.server.host = "127.0.0.1";
  config.server.port = 1;  // never contacted: Create starts nothing
  auto transport = client::Transport::Create(config, {});
  ASSERT_TRUE(transport.ok()) << transport.status().ToString();
  auto client = client::RestClient::Create(
      std::shared_ptr<client::Transport>(std::move(transport).value()), {});
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  ManagerOptions options;
  options.port = -1;
  auto manager = Manager::Create(options, **client);
  ASSERT_TRUE(manager.ok()) << manager.status().ToString();
  const std::string want =
      "slicewright_internal_bugs_total " + std::to_string(InternalBugCount()) + "\n";
  EXPECT_NE((*manager)->metrics().Expose().find(want), std::string::npos)
      << (*manager)->metrics().Expose();
}

}  // namespace
}  // namespace slicewright::controllers

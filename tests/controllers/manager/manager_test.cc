#include "controllers/manager/manager.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace slicewright::controllers

#include <gtest/gtest.h>

#include "controllers/mcs/agent.h"

// The agent's flags' own checks (ValidateOptions): the broker client's rate limit.
namespace slicewright::controllers::mcs {
namespace {

// The defaults pass; a broker QPS or burst that would stop every broker write is refused,
// naming the flag.
TEST(McsOptionsTest, BrokerRateLimitMustLetWritesThrough) {
  Options options;
  EXPECT_TRUE(ValidateOptions(options).ok());
  EXPECT_EQ(options.broker_api_qps, 100);
  EXPECT_EQ(options.broker_api_burst, 200);

  options.broker_api_qps = 0;
  Status refused = ValidateOptions(options);
  EXPECT_EQ(refused.code(), StatusCode::kInvalid);
  EXPECT_EQ(refused.message(), "--broker-api-qps must be positive");

  options.broker_api_qps = 5;
  options.broker_api_burst = 0;
  refused = ValidateOptions(options);
  EXPECT_EQ(refused.code(), StatusCode::kInvalid);
  EXPECT_NE(refused.message().find("--broker-api-burst"), std::string::npos) << refused.message();
}

}  // namespace
}  // namespace slicewright::controllers::mcs

#include "cli/controller_manager_command.h"

#include <chrono>
#include <sstream>

#include <gtest/gtest.h>

namespace slicewright::cli {
namespace {

using std::chrono::milliseconds;

TEST(ParseGoDurationTest, GoSyntax) {
  EXPECT_EQ(ParseGoDuration("15s").value(), milliseconds(15'000));
  EXPECT_EQ(ParseGoDuration("500ms").value(), milliseconds(500));
  EXPECT_EQ(ParseGoDuration("1m30s").value(), milliseconds(90'000));
  EXPECT_EQ(ParseGoDuration("1.5h").value(), milliseconds(5'400'000));
  EXPECT_EQ(ParseGoDuration("0").value(), milliseconds(0));
  EXPECT_EQ(ParseGoDuration("0s").value(), milliseconds(0));
  EXPECT_EQ(ParseGoDuration("2000us").value(), milliseconds(2));
  for (const char* bad : {"", "15", "s", "1x", "1..5s", ".s", "-1s", "1e3s", "99999999999999h"}) {
    EXPECT_EQ(ParseGoDuration(bad).status().code(), StatusCode::kInvalid) << bad;
  }
}

// Bad flags fail before anything connects, with the flag named.
TEST(ControllerManagerCommandTest, BadFlagsExitOne) {
  const auto run = [](ControllerManagerCommandOptions options) {
    std::ostringstream out;
    std::ostringstream err;
    const int code = RunControllerManagerCommand(std::move(options), out, err);
    return std::make_pair(code, err.str());
  };
  ControllerManagerCommandOptions options;
  options.lease_duration = "forever";
  auto [code, err] = run(options);
  EXPECT_EQ(code, 1);
  EXPECT_NE(err.find("invalid duration \"forever\""), std::string::npos) << err;

  options = {};
  options.logging_format = "xml";
  std::tie(code, err) = run(options);
  EXPECT_EQ(code, 1);
  EXPECT_NE(err.find("--logging-format"), std::string::npos) << err;

  options = {};
  options.kubeconfig = "/nonexistent/kubeconfig";
  std::tie(code, err) = run(options);
  EXPECT_EQ(code, 1);
  EXPECT_NE(err.find("/nonexistent/kubeconfig"), std::string::npos) << err;
}

}  // namespace
}  // namespace slicewright::cli

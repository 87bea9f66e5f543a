#include "cli/controller_manager_command.h"

#include <sstream>
#include <utility>

#include <gtest/gtest.h>

namespace slicewright::cli {
namespace {

// Bad flags fail before anything connects, with the flag named. (A bad duration is refused by the
// parser itself: see the e2e test of controller-manager.)
TEST(ControllerManagerCommandTest, BadFlagsExitOne) {
  const auto run = [](ControllerManagerCommandOptions options) {
    std::ostringstream out;
    std::ostringstream err;
    const int code = RunControllerManagerCommand(std::move(options), out, err);
    return std::make_pair(code, err.str());
  };
  ControllerManagerCommandOptions options;
  options.logging_format = "xml";
  auto [code, err] = run(options);
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

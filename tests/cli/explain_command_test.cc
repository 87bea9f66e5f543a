#include "cli/explain_command.h"

#include <sstream>
#include <string>
#include <tuple>
#include <utility>

#include <gtest/gtest.h>

// Bad arguments fail before anything connects, naming what is wrong; an unreachable server or a
// missing kubeconfig is an error, never a crash or an empty explanation.
namespace slicewright::cli {
namespace {

std::pair<int, std::string> RunExplain(const ExplainCommandOptions& options) {
  std::ostringstream out;
  std::ostringstream err;
  const int code = RunExplainCommand(options, out, err);
  EXPECT_TRUE(out.str().empty()) << out.str();
  return {code, err.str()};
}

ExplainCommandOptions Valid() {
  ExplainCommandOptions options;
  options.kind = "service";
  options.target = "default/web";
  options.kubeconfig = "/nonexistent/kubeconfig";
  return options;
}

TEST(ExplainCommandTest, BadArgumentsExitOne) {
  const std::pair<void (*)(ExplainCommandOptions&), std::string> cases[] = {
      {[](ExplainCommandOptions& o) { o.kind = "pod"; }, "unknown kind \"pod\""},
      {[](ExplainCommandOptions& o) { o.output = "yaml"; }, "want text or json, got yaml"},
      {[](ExplainCommandOptions& o) { o.target = "a/b/c"; }, "want NAME or NAMESPACE/NAME"},
      {[](ExplainCommandOptions& o) { o.target = "/web"; }, "want NAME or NAMESPACE/NAME"},
      {[](ExplainCommandOptions& o) { o.namespace_ = "shop"; }, "contradicts -n shop"},
      {[](ExplainCommandOptions& o) { o.max_endpoints_per_slice = 0; }, "want 1-1000"},
      {[](ExplainCommandOptions& o) { o.feature_gates = "Bogus=true"; }, "--feature-gates"},
      {[](ExplainCommandOptions& o) { o.endpointslice_sync = "some"; },
       "--mcs-endpointslice-sync: want all, headless or annotated, got some"},
      {[](ExplainCommandOptions& o) {
         o.kind = "svcim";
         o.target = "a/b/c";
       },
       "want NAME or NAMESPACE/NAME"},
  };
  for (const auto& [mutate, message] : cases) {
    ExplainCommandOptions options = Valid();
    mutate(options);
    auto [code, err] = RunExplain(options);
    EXPECT_EQ(code, 1) << message;
    EXPECT_NE(err.find(message), std::string::npos) << err;
  }
}

TEST(ExplainCommandTest, MissingKubeconfigIsAnError) {
  auto [code, err] = RunExplain(Valid());
  EXPECT_EQ(code, 1);
  EXPECT_NE(err.find("/nonexistent/kubeconfig"), std::string::npos) << err;
  ExplainCommandOptions service_import = Valid();
  service_import.kind = "serviceimport";
  std::tie(code, err) = RunExplain(service_import);
  EXPECT_EQ(code, 1);
  EXPECT_NE(err.find("/nonexistent/kubeconfig"), std::string::npos) << err;
}

}  // namespace
}  // namespace slicewright::cli

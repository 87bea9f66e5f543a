#include "cli/plan_command.h"

#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace slicewright::cli {
namespace {

struct CommandResult {
  int code;
  std::string out;
  std::string err;
};

CommandResult RunWith(PlanCommandOptions options, const std::string& stdin_text = "") {
  std::istringstream in(stdin_text);
  std::ostringstream out;
  std::ostringstream err;
  const int code = RunPlanCommand(options, in, out, err);
  return {code, out.str(), err.str()};
}

PlanCommandOptions Stdin(std::string output = "json") {
  PlanCommandOptions options;
  options.files = {"-"};
  options.output = std::move(output);
  return options;
}

std::string ExamplePath() { return std::string(SW_SOURCE_DIR) + "/examples/cluster.json"; }

constexpr const char* kOnePodOnMissingNode = R"({
  "apiVersion": "v1", "kind": "List", "items": [
    {"apiVersion": "v1", "kind": "Service",
     "metadata": {"name": "web", "namespace": "shop", "uid": "svc-uid"},
     "spec": {"selector": {"app": "web"}, "clusterIP": "10.0.0.1", "ipFamilies": ["IPv4"],
              "ports": [{"name": "http", "port": 80, "protocol": "TCP", "targetPort": 8080}]}},
    {"apiVersion": "v1", "kind": "Pod",
     "metadata": {"name": "web-1", "namespace": "shop", "uid": "pod-uid", "labels": {"app": "web"}},
     "spec": {"nodeName": "gone", "containers": [{"name": "app"}]},
     "status": {"phase": "Running", "podIP": "10.1.0.5", "podIPs": [{"ip": "10.1.0.5"}],
                "conditions": [{"type": "Ready", "status": "True"}]}}
  ]})";

// The shipped examples plan cleanly into one Plan object, sorted by Service, selector-less
// Services left out.
TEST(PlanCommandTest, ExamplesPrintOnePlanObject) {
  PlanCommandOptions options;
  options.files = {ExamplePath()};
  options.output = "json";
  const CommandResult run = RunWith(options);
  ASSERT_EQ(run.code, 0) << run.err;
  const nlohmann::json plan = nlohmann::json::parse(run.out);
  EXPECT_EQ(plan["apiVersion"], "slicewright.io/v1alpha1");
  EXPECT_EQ(plan["kind"], "Plan");
  std::vector<std::string> services;
  for (const auto& item : plan["items"]) {
    services.push_back(item["service"]);
    for (const auto& action : item["actions"]) {
      EXPECT_TRUE(action["operation"] == "create" || action["operation"] == "update" ||
                  action["operation"] == "delete");
      EXPECT_EQ(action["endpointSlice"]["kind"], "EndpointSlice");
      EXPECT_EQ(action["endpointSlice"]["apiVersion"], "discovery.k8s.io/v1");
    }
  }
  EXPECT_TRUE(std::is_sorted(services.begin(), services.end()));
  EXPECT_EQ(std::count(services.begin(), services.end(), "shop/external"), 0);
  EXPECT_EQ(std::count(services.begin(), services.end(), "shop/web"), 1);
  // Same input, same bytes.
  EXPECT_EQ(RunWith(options).out, run.out);
}

// The table output summarises each Service; YAML is the same document in YAML.
TEST(PlanCommandTest, TableAndYamlOutputs) {
  PlanCommandOptions options;
  options.files = {ExamplePath()};
  const CommandResult table = RunWith(options);
  ASSERT_EQ(table.code, 0) << table.err;
  EXPECT_NE(table.out.find("shop/web: "), std::string::npos) << table.out;
  options.output = "yaml";
  const CommandResult yaml = RunWith(options);
  ASSERT_EQ(yaml.code, 0) << yaml.err;
  EXPECT_EQ(yaml.out.rfind("apiVersion: slicewright.io/v1alpha1\n", 0), 0U) << yaml.out;
  EXPECT_NE(yaml.out.find("kind: Plan"), std::string::npos);
}

// A pod on a missing node is a warning, not a failure: the plan still prints.
TEST(PlanCommandTest, ToleratedProblemsAreWarnings) {
  const CommandResult run = RunWith(Stdin(), kOnePodOnMissingNode);
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_NE(run.err.find("warning: shop/web: NodeNotFound: skipping Pod web-1 for Service "
                         "shop/web: Node gone Not Found"),
            std::string::npos)
      << run.err;
  const nlohmann::json plan = nlohmann::json::parse(run.out);
  ASSERT_EQ(plan["items"].size(), 1U);
  // The pod was skipped, so the Service gets its placeholder.
  ASSERT_EQ(plan["items"][0]["actions"].size(), 1U);
  EXPECT_FALSE(plan["items"][0]["actions"][0]["endpointSlice"].contains("endpoints") &&
               !plan["items"][0]["actions"][0]["endpointSlice"]["endpoints"].empty());
}

// Malformed input exits 1 with the error on stderr and prints no partial plan.
TEST(PlanCommandTest, MalformedInputFails) {
  const CommandResult truncated =
      RunWith(Stdin(), R"({"apiVersion": "v1", "kind": "List", "items": [)");
  EXPECT_EQ(truncated.code, 1);
  EXPECT_TRUE(truncated.out.empty());
  EXPECT_EQ(truncated.err.rfind("error: <stdin>", 0), 0U) << truncated.err;

  const CommandResult wrong_type =
      RunWith(Stdin(), R"({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-1",
                   "namespace": "shop"}, "status": {"podIPs": [{"ip": 7}]}})");
  EXPECT_EQ(wrong_type.code, 1);
  EXPECT_TRUE(wrong_type.out.empty());
  EXPECT_NE(wrong_type.err.find("pods/shop/web-1: .status.podIPs[0].ip: expected string"),
            std::string::npos)
      << wrong_type.err;
}

// Slices that come back from the API server with null endpoints and ports are accepted.
TEST(PlanCommandTest, NullListsAccepted) {
  const std::string input = R"({"apiVersion": "v1", "kind": "List", "items": [
    {"apiVersion": "v1", "kind": "Service",
     "metadata": {"name": "db", "namespace": "shop", "uid": "svc-uid"},
     "spec": {"selector": {"app": "db"}, "clusterIP": "None", "ipFamilies": ["IPv4"]}},
    {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
     "metadata": {"name": "db-abcde", "namespace": "shop", "resourceVersion": "5",
                  "labels": {"kubernetes.io/service-name": "db",
                             "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
                             "service.kubernetes.io/headless": ""},
                  "ownerReferences": [{"apiVersion": "v1", "kind": "Service", "name": "db",
                                       "uid": "svc-uid", "controller": true,
                                       "blockOwnerDeletion": true}]},
     "addressType": "IPv4", "endpoints": null, "ports": null}]})";
  const CommandResult run = RunWith(Stdin(), input);
  ASSERT_EQ(run.code, 0) << run.err;
  const nlohmann::json plan = nlohmann::json::parse(run.out);
  ASSERT_EQ(plan["items"].size(), 1U);
  EXPECT_TRUE(plan["items"][0]["actions"].empty()) << run.out;  // the placeholder is kept
}

// Bad options and unreadable files exit 1 with a message naming the problem.
TEST(PlanCommandTest, BadOptionsFail) {
  PlanCommandOptions options = Stdin();
  options.max_endpoints_per_slice = 0;
  CommandResult run = RunWith(options, "{}");
  EXPECT_EQ(run.code, 1);
  EXPECT_NE(run.err.find("--max-endpoints-per-slice must be between 1 and 1000"),
            std::string::npos);
  run = RunWith(Stdin("xml"), "{}");
  EXPECT_EQ(run.code, 1);
  EXPECT_NE(run.err.find("-o must be json, yaml or table"), std::string::npos);
  options = Stdin();
  options.files = {"/nonexistent/cluster.json"};
  run = RunWith(options);
  EXPECT_EQ(run.code, 1);
  EXPECT_NE(run.err.find("cannot open /nonexistent/cluster.json"), std::string::npos);
}

// --repeat reports the reconcile timing on stderr in the documented form, with the writes of one
// run as creates/updates/deletes (the example: two creates for shop/api, one update and one delete
// for shop/web).
TEST(PlanCommandTest, RepeatReportsTiming) {
  PlanCommandOptions options;
  options.files = {ExamplePath()};
  options.repeat = 3;
  const CommandResult run = RunWith(options);
  ASSERT_EQ(run.code, 0);
  EXPECT_NE(run.err.find("reconcile: median_ns="), std::string::npos) << run.err;
  EXPECT_NE(run.err.find(" runs=3 writes=2/1/1\n"), std::string::npos) << run.err;
}

// --max-endpoints-per-slice and --controller-name reach the reconciler.
TEST(PlanCommandTest, ControllerNameSelectsSlices) {
  PlanCommandOptions options = Stdin();
  options.controller_name = "my-controller";
  const CommandResult run = RunWith(options, kOnePodOnMissingNode);
  ASSERT_EQ(run.code, 0) << run.err;
  const nlohmann::json plan = nlohmann::json::parse(run.out);
  EXPECT_EQ(plan["items"][0]["actions"][0]["endpointSlice"]["metadata"]["labels"]
                ["endpointslice.kubernetes.io/managed-by"],
            "my-controller");
}

}  // namespace
}  // namespace slicewright::cli

#include "slicewright/codec/multus.h"

#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "slicewright/codec/network_status.h"

// Multus annotations: both forms of the networks annotation, their errors, and network-status
// round trips.
namespace slicewright::codec {
namespace {

// Every accepted spelling of the networks annotation.
TEST(NetworkSelectionsTest, ParsesTextAndJsonForms) {
  struct Case {
    std::string_view name;
    std::string_view annotation;
    std::vector<NetworkSelection> want;
  };
  const Case cases[] = {
      {"blank", "  ", {}},
      {"one name", "blue", {{"blue", "", ""}}},
      {"namespaced", "other/blue", {{"blue", "other", ""}}},
      {"interface", "blue@data0", {{"blue", "", "data0"}}},
      {"all, trimmed",
       " blue , other/red@eth5,green ",
       {{"blue", "", ""}, {"red", "other", "eth5"}, {"green", "", ""}}},
      {"json",
       R"([{"name":"blue","interface":"data0","ips":["1.2.3.4"]},{"name":"red","namespace":"other"}])",
       {{"blue", "", "data0"}, {"red", "other", ""}}},
      {"json empty", "[]", {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Result<std::vector<NetworkSelection>> got = ParseNetworkSelections(c.annotation);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(*got, c.want);
  }
}

// Each malformed annotation is kBadRequest naming the item and the problem.
TEST(NetworkSelectionsTest, RejectsMalformedAnnotations) {
  struct Case {
    std::string_view annotation;
    std::string_view error;
  };
  const Case cases[] = {
      {"a/b/c", R"(item 1 ("a/b/c"): more than one '/')"},
      {"blue,a@b@c", R"(item 2 ("a@b@c"): more than one '@')"},
      {"blue,,red", R"(item 2 (""): empty network name)"},
      {"blue@", R"(item 1 ("blue@"): empty interface name after '@')"},
      {"/blue", R"(item 1 ("/blue"): empty namespace before '/')"},
      {"Blue", R"(item 1 ("Blue"): network name "Blue": a lowercase RFC 1123 label must)"},
      {"[{\"name\":", "malformed JSON: "},
      {R"({"name":"blue"})", "network name \"{\"name\":\"blue\"}\""},
      {R"([{"name":1}])", "[0].name: expected string"},
      {R"(["blue"])", "[0]: expected object"},
      {R"([{"name":"red"},{"interface":"x"}])", "[1]: empty network name"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.annotation);
    const Result<std::vector<NetworkSelection>> got = ParseNetworkSelections(c.annotation);
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status().code(), StatusCode::kBadRequest);
    EXPECT_NE(got.status().ToString().find(c.error), std::string::npos) << got.status().ToString();
  }
}

// network-status is written as Multus writes it and reads back equal through the decoder the
// multi-network controller uses (its bad-input cases are in network_status_test.cc).
TEST(NetworkStatusTest, EncodesAndDecodes) {
  const std::vector<model::NetworkStatus> entries = {
      {"sim-default", "eth0", {"10.244.0.5", "fd00:10:244::5"}, "0a:58:0a:f4:00:05", true},
      {"default/blue", "net1", {"10.150.0.1"}, "0a:58:0a:96:00:01", false},
  };
  const std::string text = EncodeNetworkStatusAnnotation(entries);
  EXPECT_EQ(text,
            R"([{"name":"sim-default","interface":"eth0","ips":["10.244.0.5","fd00:10:244::5"],)"
            R"("mac":"0a:58:0a:f4:00:05","default":true,"dns":{}},)"
            R"({"name":"default/blue","interface":"net1","ips":["10.150.0.1"],)"
            R"("mac":"0a:58:0a:96:00:01","dns":{}}])");
  const Result<std::vector<model::NetworkStatus>> decoded = DecodeNetworkStatus(text);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(*decoded, entries);
  EXPECT_EQ(EncodeNetworkStatusAnnotation({}), "[]");
}

}  // namespace
}  // namespace slicewright::codec

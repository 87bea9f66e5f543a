#include "slicewright/codec/network_status.h"

#include <string>

#include <gtest/gtest.h>

namespace slicewright::codec {
namespace {

// As Multus writes it (with the dns object and fields we ignore).
TEST(NetworkStatusTest, DecodesMultusAnnotation) {
  const Result<std::vector<model::NetworkStatus>> decoded = DecodeNetworkStatus(R"([
    {"name": "kindnet", "interface": "eth0", "ips": ["10.244.1.5", "fd00::5"],
     "mac": "0a:58:0a:f4:01:05", "default": true, "dns": {}},
    {"name": "default/macvlan-conf", "interface": "net1", "ips": ["192.168.1.205"],
     "mac": "86:1d:96:ff:55:0d", "dns": {}, "gateway": ["192.168.1.1"]}])");
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  ASSERT_EQ(decoded->size(), 2U);
  EXPECT_TRUE((*decoded)[0].is_default);
  EXPECT_EQ((*decoded)[0].ips, (std::vector<std::string>{"10.244.1.5", "fd00::5"}));
  EXPECT_EQ((*decoded)[1].name, "default/macvlan-conf");
  EXPECT_EQ((*decoded)[1].interface, "net1");
  EXPECT_FALSE((*decoded)[1].is_default);
  EXPECT_TRUE(DecodeNetworkStatus("null")->empty());
  EXPECT_TRUE(DecodeNetworkStatus("[]")->empty());
}

TEST(NetworkStatusTest, BadInputNamesTheEntry) {
  const std::pair<std::string_view, std::string_view> cases[] = {
      {R"({"name":"x"})", "expected a JSON list of networks"},
      {R"([{"name":"a"},{"ips":[1]}])", "[1].ips[0]: expected string"},
      {R"([{"default":"yes"}])", "[0].default: expected boolean"},
      {R"([7])", "[0]: expected object"},
  };
  for (const auto& [text, want] : cases) {
    const Status status = DecodeNetworkStatus(text).status();
    EXPECT_EQ(status.code(), StatusCode::kBadRequest) << text;
    EXPECT_EQ(status.ToString(), want) << text;
  }
  const Status truncated = DecodeNetworkStatus(R"([{"name":"a",)").status();
  EXPECT_TRUE(truncated.ToString().starts_with("malformed JSON")) << truncated.ToString();
}

}  // namespace
}  // namespace slicewright::codec

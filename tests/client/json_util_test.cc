#include "client/json_util.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace slicewright::client::internal {
namespace {

// Malformed JSON is an error naming the byte, never the text (it may hold a token).
TEST(ParseJsonTest, MalformedNamesOffsetOnly) {
  const Result<nlohmann::json> parsed = ParseJson(R"({"token": "SECRET)");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), StatusCode::kBadRequest);
  EXPECT_TRUE(parsed.status().message().starts_with("malformed JSON at byte "));
  EXPECT_EQ(parsed.status().ToString().find("SECRET"), std::string::npos);
}

// Typed reads: absent and null leave the output alone; the wrong type names the field.
TEST(ReadFieldTest, TypesAndNulls) {
  const nlohmann::json object = *ParseJson(R"({"s":"x","b":true,"n":null,"l":["a",1],"o":{}})");
  std::string s = "unchanged";
  EXPECT_TRUE(ReadString(object, "n", s).ok());
  EXPECT_TRUE(ReadString(object, "absent", s).ok());
  EXPECT_EQ(s, "unchanged");
  EXPECT_TRUE(ReadString(object, "s", s).ok());
  EXPECT_EQ(s, "x");
  bool b = false;
  EXPECT_TRUE(ReadBool(object, "b", b).ok());
  EXPECT_TRUE(b);
  EXPECT_EQ(ReadBool(object, "s", b).ToString(), ".s: expected boolean");
  std::vector<std::string> list;
  EXPECT_EQ(ReadStringList(object, "l", list).ToString(), ".l[1]: expected string");
  const nlohmann::json* sub = nullptr;
  EXPECT_TRUE(ReadObject(object, "o", sub).ok());
  EXPECT_NE(sub, nullptr);
  EXPECT_EQ(ReadList(object, "o", sub).ToString(), ".o: expected list");
  EXPECT_EQ(sub, nullptr);
}

// Dumping never throws on invalid UTF-8.
TEST(DumpJsonTest, ReplacesInvalidUtf8) {
  const nlohmann::json value = std::string("a\xff");
  EXPECT_EQ(DumpJson(value), "\"a\xEF\xBF\xBD\"");
}

}  // namespace
}  // namespace slicewright::client::internal

#include "slicewright/model/rare.h"

#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "slicewright/model/discovery.h"

namespace slicewright::model {
namespace {

static_assert(sizeof(RareString) == sizeof(void*));
static_assert(sizeof(OptionalBox<EndpointHints>) == sizeof(void*));
static_assert(std::is_nothrow_move_constructible_v<RareString> &&
              std::is_nothrow_move_constructible_v<OptionalBox<EndpointHints>>);

TEST(RareStringTest, KeepsAnyTextAndEmptyIsOneState) {
  const std::string long_text(300, 'r');
  for (const std::string_view text : {std::string_view(), std::string_view(""),
                                      std::string_view("7"), std::string_view(long_text)}) {
    const RareString value(text);
    EXPECT_EQ(value.view(), text);
    EXPECT_EQ(value.size(), text.size());
    EXPECT_EQ(value.empty(), text.empty());
    EXPECT_EQ(value.str(), std::string(text));
  }
  EXPECT_NE(RareString().view().data(), nullptr);
  // "" and a never-set value are the same value.
  EXPECT_EQ(RareString(""), RareString());
  RareString value = "v1";
  value = "";
  EXPECT_TRUE(value.empty());
  EXPECT_EQ(value, RareString());
}

TEST(RareStringTest, CopiesDeeplyAndMovesTheText) {
  RareString original = "12345";
  RareString copy = original;
  copy = "other";
  EXPECT_EQ(original, "12345");
  EXPECT_EQ(copy, "other");
  RareString moved = std::move(copy);
  EXPECT_EQ(moved, "other");
  copy = moved;  // a moved-from value can be assigned again
  EXPECT_EQ(copy, "other");
  const RareString& alias = original;
  original = alias;  // self-assignment keeps the text
  EXPECT_EQ(original, "12345");
}

TEST(RareStringTest, AssignsFromAViewOfItsOwnText) {
  RareString value = "abcdef";
  value = value.view().substr(2);
  EXPECT_EQ(value, "cdef");
  value = value.view();
  EXPECT_EQ(value, "cdef");
}

TEST(RareStringTest, ComparesWithEveryKindOfText) {
  const RareString value = "b";
  EXPECT_TRUE(value == std::string("b"));
  EXPECT_TRUE(value == std::string_view("b"));
  EXPECT_TRUE(value == "b");
  EXPECT_TRUE(value < RareString("c"));
  EXPECT_TRUE(RareString() < value);
  std::ostringstream out;
  out << value;
  EXPECT_EQ(out.str(), "b");
  EXPECT_EQ(std::string("a") + value, "ab");
}

TEST(OptionalBoxTest, BehavesLikeAnOptional) {
  OptionalBox<EndpointHints> box;
  EXPECT_FALSE(box.has_value());
  EXPECT_FALSE(box);
  EXPECT_TRUE(box == std::nullopt);
  box.emplace().for_zones = {"zone-a"};
  ASSERT_TRUE(box.has_value());
  EXPECT_EQ(box->for_zones, std::vector<std::string>{"zone-a"});
  box = std::nullopt;
  EXPECT_FALSE(box);
  box = EndpointHints{{"zone-b"}, {"node-1"}};
  EXPECT_EQ((*box).for_nodes, std::vector<std::string>{"node-1"});
  box.reset();
  EXPECT_FALSE(box);
}

TEST(OptionalBoxTest, CopiesDeeplyAndComparesByValue) {
  OptionalBox<EndpointHints> a = EndpointHints{{"zone-a"}, {}};
  OptionalBox<EndpointHints> b = a;
  EXPECT_EQ(a, b);
  b->for_zones[0] = "zone-b";
  EXPECT_EQ(a->for_zones[0], "zone-a");
  EXPECT_NE(a, b);
  b = a;
  EXPECT_EQ(a, b);
  OptionalBox<EndpointHints> empty;
  EXPECT_NE(a, empty);
  EXPECT_EQ(empty, OptionalBox<EndpointHints>());
  // Empty hints are a value, unlike no hints.
  OptionalBox<EndpointHints> empty_value = EndpointHints{};
  EXPECT_NE(empty_value, empty);
  b = empty;
  EXPECT_FALSE(b);
  OptionalBox<EndpointHints> moved = std::move(a);
  EXPECT_EQ(moved->for_zones[0], "zone-a");
}

// An endpoint's hostname: a box compares with a bare value as std::optional does, and "" is a
// value, unlike no hostname.
TEST(OptionalBoxTest, ComparesWithAValueAsAnOptionalDoes) {
  OptionalBox<std::string> hostname;
  EXPECT_FALSE(hostname == "web-0");
  EXPECT_FALSE(hostname == std::string());
  hostname = std::string("web-0");
  EXPECT_TRUE(hostname == "web-0");
  EXPECT_TRUE(hostname == std::string("web-0"));
  EXPECT_FALSE(hostname == "web-1");
  EXPECT_TRUE(std::string("web-0") == hostname);
  hostname = std::string();
  EXPECT_TRUE(hostname == "");
  EXPECT_FALSE(hostname == std::nullopt);
  Endpoint a;
  a.hostname = std::string("web-0");
  Endpoint b = a;
  EXPECT_EQ(a, b);
  b.hostname.reset();
  EXPECT_NE(a, b);
  b.hostname = std::string();
  EXPECT_NE(a, b);
}

TEST(OptionalBoxTest, EndpointsWithAndWithoutHintsDiffer) {
  Endpoint with;
  with.hints.emplace().for_zones = {"zone-a"};
  Endpoint without = with;
  EXPECT_EQ(with, without);
  without.hints.reset();
  EXPECT_NE(with, without);
}

}  // namespace
}  // namespace slicewright::model

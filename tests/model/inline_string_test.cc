#include "slicewright/model/inline_string.h"

#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "fakes/allocation_counter.h"

namespace slicewright::model {
namespace {

constexpr std::string_view kUuid = "5b0c7a8e-3d2f-4e61-b7a9-1c2d3e4f5a6b";

TEST(InlineStringTest, KeepsAnyTextAndReadsAsAView) {
  const std::string long_text(200, 'x');
  for (const std::string_view text :
       {std::string_view(), std::string_view("a"), kUuid, std::string_view(long_text)}) {
    const InlineString value(text);
    EXPECT_EQ(value.view(), text);
    EXPECT_EQ(value.size(), text.size());
    EXPECT_EQ(value.empty(), text.empty());
    EXPECT_EQ(value.str(), std::string(text));
    EXPECT_EQ(std::string_view(value), text);
  }
  InlineString value = "abc";
  value = std::string(long_text);
  EXPECT_EQ(value, long_text);
  value = kUuid;
  EXPECT_EQ(value, kUuid);
  value.clear();
  EXPECT_TRUE(value.empty());
}

TEST(InlineStringTest, CopiesAndMovesInlineAndHeapValues) {
  const std::string long_text(100, 'y');
  for (const std::string_view text : {kUuid, std::string_view(long_text)}) {
    InlineString original(text);
    InlineString copy = original;
    EXPECT_EQ(copy, original);
    InlineString moved = std::move(original);
    EXPECT_EQ(moved.view(), text);
    InlineString assigned;
    assigned = copy;
    EXPECT_EQ(assigned.view(), text);
    assigned = std::move(moved);
    EXPECT_EQ(assigned.view(), text);
    // A vector of them grows by moving (noexcept), keeping every value.
    std::vector<InlineString> values;
    for (int i = 0; i < 50; ++i) values.emplace_back(text);
    for (const InlineString& v : values) EXPECT_EQ(v.view(), text);
  }
}

static_assert(sizeof(InlineString) == 48);
static_assert(std::is_nothrow_move_constructible_v<InlineString> &&
              std::is_nothrow_move_assignable_v<InlineString>);

// Assigning text that lies in the value itself (a part of it, or all) keeps the right text.
TEST(InlineStringTest, AssignsFromItsOwnText) {
  const std::string long_text = std::string(60, 'a') + std::string(60, 'b');
  for (const std::string& text : {std::string(kUuid), long_text}) {
    InlineString value(text);
    value = value.view();
    EXPECT_EQ(value, text);
    value = value.view().substr(text.size() / 2);
    EXPECT_EQ(value, text.substr(text.size() / 2));
    InlineString& same = value;
    value = same;
    EXPECT_EQ(value, text.substr(text.size() / 2));
  }
}

TEST(InlineStringTest, ComparesWithEveryKindOfText) {
  const InlineString value(kUuid);
  const std::string same(kUuid);
  EXPECT_TRUE(value == same);
  EXPECT_TRUE(same == value);
  EXPECT_TRUE(value == kUuid);
  EXPECT_TRUE(value == "5b0c7a8e-3d2f-4e61-b7a9-1c2d3e4f5a6b");
  EXPECT_TRUE(value != "other");
  EXPECT_TRUE(value == InlineString(same));
  EXPECT_LT(InlineString("a"), InlineString("b"));
  EXPECT_LT(InlineString("a"), std::string("ab"));
  EXPECT_GT(InlineString("b"), std::string_view("ab"));
  std::ostringstream out;
  out << value;
  EXPECT_EQ(out.str(), same);
  EXPECT_EQ(std::string("uid ") + value, "uid " + same);
}

// The point of the type: a UID is copied without a heap allocation, where std::string makes one.
TEST(InlineStringTest, CopyingAUuidAllocatesNothing) {
  const InlineString uid(kUuid);
  const InlineString longest(std::string(InlineString::kInlineCapacity, 'z'));
  const std::int64_t before = fakes::AllocationCount();
  InlineString longest_copy = longest;
  InlineString copy = uid;
  InlineString assigned;
  assigned = std::string_view(kUuid);
  EXPECT_EQ(fakes::AllocationCount(), before);
  EXPECT_EQ(copy, assigned);
  EXPECT_EQ(longest_copy, longest);
  const std::string as_string(kUuid);
  const std::int64_t string_before = fakes::AllocationCount();
  const std::string string_copy = as_string;  // NOLINT(performance-unnecessary-copy-initialization)
  EXPECT_GT(fakes::AllocationCount(), string_before) << string_copy;
}

}  // namespace
}  // namespace slicewright::model

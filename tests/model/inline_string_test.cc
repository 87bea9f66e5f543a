#include "slicewright/model/inline_string.h"

#include <cstddef>
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

// Every width in use: InlineString (UIDs, endpoint names) and the compact pod's name.
template <typename T>
class InlineStringTypedTest : public testing::Test {};
using InlineStringTypes = testing::Types<InlineString, BasicInlineString<36>>;
TYPED_TEST_SUITE(InlineStringTypedTest, InlineStringTypes);

TYPED_TEST(InlineStringTypedTest, KeepsAnyTextAndReadsAsAView) {
  using Text = TypeParam;
  const std::string long_text(200, 'x');
  for (const std::string_view text :
       {std::string_view(), std::string_view("a"), kUuid, std::string_view(long_text)}) {
    const Text value(text);
    EXPECT_EQ(value.view(), text);
    EXPECT_EQ(value.size(), text.size());
    EXPECT_EQ(value.empty(), text.empty());
    EXPECT_EQ(value.str(), std::string(text));
    EXPECT_EQ(std::string_view(value), text);
  }
  Text value = "abc";
  value = std::string(long_text);
  EXPECT_EQ(value, long_text);
  value = kUuid;
  EXPECT_EQ(value, kUuid);
  value.clear();
  EXPECT_TRUE(value.empty());
}

TYPED_TEST(InlineStringTypedTest, CopiesAndMovesInlineAndHeapValues) {
  using Text = TypeParam;
  const std::string long_text(100, 'y');
  for (const std::string_view text : {kUuid, std::string_view(long_text)}) {
    Text original(text);
    Text copy = original;
    EXPECT_EQ(copy, original);
    Text moved = std::move(original);
    EXPECT_EQ(moved.view(), text);
    Text assigned;
    assigned = copy;
    EXPECT_EQ(assigned.view(), text);
    assigned = std::move(moved);
    EXPECT_EQ(assigned.view(), text);
    // A vector of them grows by moving (noexcept), keeping every value.
    std::vector<Text> values;
    for (int i = 0; i < 50; ++i) values.emplace_back(text);
    for (const Text& v : values) EXPECT_EQ(v.view(), text);
  }
}

// Around the inline capacity, every way of setting one value from another (inline to heap, heap
// to inline, same side) keeps the text; the sanitizer build checks that nothing leaks or is freed
// twice.
TYPED_TEST(InlineStringTypedTest, KeepsTextOfEveryLengthAroundTheCapacity) {
  using Text = TypeParam;
  constexpr std::size_t kCapacity = Text::kInlineCapacity;
  std::vector<std::string> texts;
  for (std::size_t length = kCapacity - 2; length <= kCapacity + 2; ++length) {
    std::string text(length, 'a');
    for (std::size_t i = 0; i < length; ++i) text[i] = static_cast<char>('a' + i % 26);
    texts.push_back(std::move(text));
  }
  texts.emplace_back();
  for (const std::string& from : texts) {
    for (const std::string& to : texts) {
      Text value(from);
      value = std::string_view(to);
      EXPECT_EQ(value.view(), to);
      Text copied(from);
      copied = Text(to);
      EXPECT_EQ(copied.view(), to);
      Text source(to);
      Text moved(from);
      moved = std::move(source);
      EXPECT_EQ(moved.view(), to);
      Text constructed(std::move(moved));
      EXPECT_EQ(constructed.view(), to);
    }
  }
}

static_assert(sizeof(BasicInlineString<36>) == 40);
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

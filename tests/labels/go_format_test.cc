#include "labels/go_format.h"

#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

namespace slicewright::labels::internal {
namespace {

struct QuoteCase {
  std::string_view name;
  std::string_view input;
  std::string_view want;
};

// GoQuote renders strings as Go's %q does, escapes and invalid UTF-8 included.
TEST(GoFormatTest, QuotesLikeStrconvQuote) {
  const QuoteCase cases[] = {
      {"plain", "abc", R"("abc")"},
      {"empty", "", R"("")"},
      {"quote and backslash", R"(a"b\c)", R"("a\"b\\c")"},
      {"named escapes", "\a\b\f\n\r\t\v", R"("\a\b\f\n\r\t\v")"},
      {"other controls", std::string_view("\x01\x1f\x7f\0", 4), R"("\x01\x1f\x7f\x00")"},
      {"printable utf8 kept", "ключ/値", "\"ключ/値\""},
      {"emoji kept", "\xf0\x9f\x98\x80", "\"\xf0\x9f\x98\x80\""},
      {"invalid byte",
       "a\xff"
       "b",
       R"("a\xffb")"},
      {"truncated sequence", "\xc3", R"("\xc3")"},
      {"overlong nul", "\xc0\x80", R"("\xc0\x80")"},
      {"encoded surrogate", "\xed\xa0\x80", R"("\xed\xa0\x80")"},
      {"c1 control", "\xc2\x85", R"("\u0085")"},
      {"no-break space", "\xc2\xa0", R"("\u00a0")"},
      {"zero width space", "\xe2\x80\x8b", R"("\u200b")"},
      {"byte order mark", "\xef\xbb\xbf", R"("\ufeff")"},
      {"private use", "\xee\x80\x80", R"("\ue000")"},
      {"supplementary private use", "\xf3\xb0\x80\x80", R"("\U000f0000")"},
  };
  for (const QuoteCase& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(GoQuote(c.input), c.want);
  }
}

// GoStringSlice renders %#v of a []string; an empty list is the nil slice upstream holds.
TEST(GoFormatTest, FormatsStringSlices) {
  EXPECT_EQ(GoStringSlice({}), "[]string(nil)");
  const std::vector<std::string> one = {"a"};
  EXPECT_EQ(GoStringSlice(one), R"([]string{"a"})");
  const std::vector<std::string> two = {"a", "b\"c"};
  EXPECT_EQ(GoStringSlice(two), R"([]string{"a", "b\"c"})");
}

}  // namespace
}  // namespace slicewright::labels::internal

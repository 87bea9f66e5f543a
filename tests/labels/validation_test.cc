#include "slicewright/labels/validation.h"

#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

namespace slicewright::labels {
namespace {

using Errors = std::vector<std::string>;

// Upstream's messages, spelt out once so every expectation below reads like the Go source.
const std::string kNameRegexError =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const std::string kValueRegexError =
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  "
    "or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
const std::string kLabelRegexError =
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const std::string kSubdomainRegexError =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

struct Case {
  std::string_view name;
  std::string input;
  Errors want;
};

// Label keys: an optional subdomain prefix, a name part, and upstream's messages for each fault.
TEST(ValidationTest, IsQualifiedName) {
  const Case cases[] = {
      {"simple", "simple", {}},
      {"dashes", "now-with-dashes", {}},
      {"starts with digit", "1-starts-with-num", {}},
      {"digits", "1234", {}},
      {"prefixed", "simple/simple", {}},
      {"dotted prefix", "now-with.dashes-and.dots/simple", {}},
      {"numeric prefix", "1.2.3.4/5678", {}},
      {"upper case and underscore", "example.com/Uppercase_Is_OK_123", {}},
      {"63 characters", std::string(63, 'a'), {}},
      {"253 character prefix", std::string(253, 'a') + "/a", {}},
      {"empty", "", {"name part must be non-empty", "name part " + kNameRegexError}},
      {"special characters", "nospecialchars%^=@", {"name part " + kNameRegexError}},
      {"leading dash", "-x", {"name part " + kNameRegexError}},
      {"trailing dot", "x.", {"name part " + kNameRegexError}},
      {"non-ascii", "Māori", {"name part " + kNameRegexError}},
      {"64 characters", std::string(64, 'a'), {"name part must be no more than 63 characters"}},
      {"64 characters ending badly",
       std::string(63, 'a') + "-",
       {"name part must be no more than 63 characters", "name part " + kNameRegexError}},
      {"empty prefix", "/simple", {"prefix part must be non-empty"}},
      {"empty name",
       "example.com/",
       {"name part must be non-empty", "name part " + kNameRegexError}},
      {"upper case prefix", "Example.com/x", {"prefix part " + kSubdomainRegexError}},
      {"254 character prefix",
       std::string(254, 'a') + "/a",
       {"prefix part must be no more than 253 characters"}},
      {"prefix and name both bad",
       "a_b/-c",
       {"prefix part " + kSubdomainRegexError, "name part " + kNameRegexError}},
      {"two slashes",
       "a/b/c",
       {"a qualified name " + kNameRegexError +
        " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(IsQualifiedName(c.input), c.want);
    EXPECT_EQ(IsQualifiedNameValid(c.input), c.want.empty());
  }
}

// Label values: empty or name-shaped, at most 63 characters.
TEST(ValidationTest, IsValidLabelValue) {
  const Case cases[] = {
      {"empty", "", {}},
      {"simple", "simple", {}},
      {"dashes", "now-with-dashes", {}},
      {"ends with digit", "end-with-num-1", {}},
      {"mixed", "Uppercase_Is_OK_123.a-b", {}},
      {"63 characters", std::string(63, 'a'), {}},
      {"special characters", "nospecialchars%^=@", {kValueRegexError}},
      {"leading dash", "-x", {kValueRegexError}},
      {"trailing dash", "x-", {kValueRegexError}},
      {"leading underscore", "_x", {kValueRegexError}},
      {"slash", "a/b", {kValueRegexError}},
      {"64 characters", std::string(64, 'a'), {"must be no more than 63 characters"}},
      {"64 characters ending badly",
       std::string(63, 'a') + "-",
       {"must be no more than 63 characters", kValueRegexError}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(IsValidLabelValue(c.input), c.want);
    EXPECT_EQ(IsLabelValueValid(c.input), c.want.empty());
  }
}

// DNS labels: lower-case alphanumerics and inner dashes; dots get their own message.
TEST(ValidationTest, IsDNS1123Label) {
  const Case cases[] = {
      {"one letter", "a", {}},
      {"one digit", "0", {}},
      {"inner dashes", "a--1--2--b", {}},
      {"starts with digit", "1-a", {}},
      {"63 characters", std::string(63, 'a'), {}},
      {"empty", "", {kLabelRegexError}},
      {"upper case", "A", {kLabelRegexError}},
      {"leading dash", "-a", {kLabelRegexError}},
      {"trailing dash", "a-", {kLabelRegexError}},
      {"underscore", "a_b", {kLabelRegexError}},
      {"dots", "abc.def", {"must not contain dots"}},
      {"empty label between dots", "a..b", {kLabelRegexError}},
      {"64 characters", std::string(64, 'a'), {"must be no more than 63 characters"}},
      {"64 characters with a dot",
       std::string(62, 'a') + ".a",
       {"must be no more than 63 characters", "must not contain dots"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(IsDNS1123Label(c.input), c.want);
    EXPECT_EQ(IsDNS1123LabelValid(c.input), c.want.empty());
  }
}

// DNS subdomains: labels joined by single dots (no per-label limit), at most 253 characters.
TEST(ValidationTest, IsDNS1123Subdomain) {
  const Case cases[] = {
      {"one label", "a", {}},
      {"two labels", "a.b", {}},
      {"dashes and digits", "a-1.b-2.0", {}},
      {"a label longer than 63", std::string(100, 'a') + ".b", {}},
      {"253 characters", std::string(253, 'a'), {}},
      {"empty", "", {kSubdomainRegexError}},
      {"double dot", "a..b", {kSubdomainRegexError}},
      {"leading dot", ".a", {kSubdomainRegexError}},
      {"trailing dot", "a.", {kSubdomainRegexError}},
      {"upper case", "A.b", {kSubdomainRegexError}},
      {"underscore", "a_b", {kSubdomainRegexError}},
      {"254 characters", std::string(254, 'a'), {"must be no more than 253 characters"}},
      {"254 characters ending badly",
       std::string(253, 'a') + "-",
       {"must be no more than 253 characters", kSubdomainRegexError}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(IsDNS1123Subdomain(c.input), c.want);
    EXPECT_EQ(IsDNS1123SubdomainValid(c.input), c.want.empty());
  }
}

struct PrefixCase {
  std::string_view name;
  std::string input;
  bool valid;
};

// generateName checks mask a trailing dash with upstream's quirk: the last two characters become
// "a", so the character before the dash is never examined.
TEST(ValidationTest, GenerateNamePrefixes) {
  const PrefixCase cases[] = {
      {"service prefix", "web-", true},
      {"double dash", "web--", true},
      {"no dash", "web", true},
      {"two characters", "a-", true},
      {"lone dash is not masked", "-", false},
      {"upper case", "Web-", false},
      {"leading dash", "-web-", false},
      {"dot before dash is dropped", "web.-", true},
      {"bad character before dash is dropped", "web_-", true},
      {"bad character earlier", "w_eb-", false},
      {"dot then label", "a.b-", true},
      {"empty label", "a..b-", false},
      {"253 masked characters", std::string(253, 'a') + "-", true},
      {"254 masked characters", std::string(254, 'a') + "-", false},
  };
  for (const PrefixCase& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(NameIsDNSSubdomain(c.input, /*prefix=*/true).empty(), c.valid);
    EXPECT_EQ(IsDNS1123SubdomainPrefixValid(c.input), c.valid);
  }
  // Without `prefix` the name is checked as it is.
  EXPECT_EQ(NameIsDNSSubdomain("web-", false), Errors{kSubdomainRegexError});
  EXPECT_EQ(NameIsDNSSubdomain("Wea", true), Errors{kSubdomainRegexError});
}

// The allocation-free checks agree with the message-producing ones on random strings.
TEST(ValidationTest, BooleanChecksAgreeWithMessages) {
  constexpr unsigned kSeed = 42;
  SCOPED_TRACE(testing::Message() << "seed " << kSeed);
  std::mt19937 rng(kSeed);
  const std::string_view alphabet = "aZ09-_./.-a";
  for (int iteration = 0; iteration < 20000; ++iteration) {
    std::string text;
    // Mostly short strings, sometimes long enough to cross the length limits.
    const std::size_t length = rng() % 8 == 0 ? 60 + rng() % 200 : rng() % 12;
    for (std::size_t k = 0; k < length; ++k) {
      text += alphabet[rng() % alphabet.size()];
    }
    SCOPED_TRACE(text);
    ASSERT_EQ(IsQualifiedNameValid(text), IsQualifiedName(text).empty());
    ASSERT_EQ(IsLabelValueValid(text), IsValidLabelValue(text).empty());
    ASSERT_EQ(IsDNS1123LabelValid(text), IsDNS1123Label(text).empty());
    ASSERT_EQ(IsDNS1123SubdomainValid(text), IsDNS1123Subdomain(text).empty());
    ASSERT_EQ(IsDNS1123SubdomainPrefixValid(text), NameIsDNSSubdomain(text, true).empty());
  }
}

// The message builders reproduce upstream's wording, doubled space and all.
TEST(ValidationTest, MessageBuilders) {
  EXPECT_EQ(MaxLenError(15), "must be no more than 15 characters");
  EXPECT_EQ(EmptyError(), "must be non-empty");
  EXPECT_EQ(RegexError("bad", "[a-z]+", {}), "bad (regex used for validation is '[a-z]+')");
  EXPECT_EQ(RegexError("bad", "[a-z]+", {"abc"}),
            "bad (e.g. 'abc', regex used for validation is '[a-z]+')");
  EXPECT_EQ(RegexError("bad", "x", {"a", "b"}),
            "bad (e.g. 'a',  or 'b', regex used for validation is 'x')");
}

}  // namespace
}  // namespace slicewright::labels

#include "slicewright/labels/selector.h"

#include <cstdlib>
#include <new>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "fakes/allocation_counter.h"

namespace slicewright::labels {
namespace {

using model::StringMap;

const std::string kNameRegexError =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const std::string kValueRegexError =
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  "
    "or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
const std::string kOperators = "in, notin, =, ==, !=, gt, lt";

Selector MustParse(std::string_view text) {
  Result<Selector> selector = Selector::Parse(text);
  EXPECT_TRUE(selector.ok()) << text << ": " << selector.status().ToString();
  return selector.ok() ? *selector : Selector::Nothing();
}

Requirement MustRequire(std::string key, Operator op, std::vector<std::string> values) {
  Result<Requirement> requirement = Requirement::Create(std::move(key), op, std::move(values));
  EXPECT_TRUE(requirement.ok()) << requirement.status().ToString();
  return std::move(requirement).value();
}

struct ParseCase {
  std::string_view name;
  std::string_view input;
  std::string_view want;  // String() of the result
};

// Upstream's accepted inputs (TestSelectorParse, TestSetSelectorParser, TestLexer's identifiers),
// each printed back in canonical form: sorted by key, values sorted and de-duplicated.
TEST(SelectorTest, ParsesValidSelectors) {
  const ParseCase cases[] = {
      {"three equalities", "x=a,y=b,z=c", "x=a,y=b,z=c"},
      {"empty", "", ""},
      {"only whitespace", " \t\r\n", ""},
      {"not equals", "x!=a,y=b", "x!=a,y=b"},
      {"empty value", "x=", "x="},
      {"empty value then space", "x= ", "x="},
      {"two empty values", "x=,z= ", "x=,z="},
      {"spaced empty values", "x= ,z= ", "x=,z="},
      {"does not exist", "!x", "!x"},
      {"greater than", "x>1", "x>1"},
      {"greater and less", "x>1,z<5", "x>1,z<5"},
      {"double equals kept", "x==a", "x==a"},
      {"sorted by key", "x=a,a=x", "a=x,x=a"},
      {"carriage return before key", "\rx", "x"},
      {"prefixed key exists", "this-is-a-dns.domain.com/key-with-dash",
       "this-is-a-dns.domain.com/key-with-dash"},
      {"prefixed key in", "this-is-another-dns.domain.com/key-with-dash in (so,what)",
       "this-is-another-dns.domain.com/key-with-dash in (so,what)"},
      {"dotted values", "0.1.2.domain/99 notin (10.10.100.1, tick.tack.clock)",
       "0.1.2.domain/99 notin (10.10.100.1,tick.tack.clock)"},
      {"whitespace around in", "foo  in\t (abc)", "foo in (abc)"},
      {"newline after notin", "x notin\n (abc)", "x notin (abc)"},
      {"tabs after notin", "x  notin\t\t\t(abc,def)", "x notin (abc,def)"},
      {"values sorted", "x in (def,abc)", "x in (abc,def)"},
      {"values de-duplicated", "x in (a,b,a)", "x in (a,b)"},
      {"trailing comma in values", "x in (abc,)", "x in (,abc)"},
      {"empty parentheses", "x in ()", "x in ()"},
      {"space in parentheses", "x notin ( )", "x notin ()"},
      {"leading comma in values", "x notin (, a)", "x notin (,a)"},
      {"double comma in values", "x notin (abc,,def)", "x notin (,abc,def)"},
      {"mixed", "x notin (abc,,def),bar,z in (),w", "bar,w,x notin (,abc,def),z in ()"},
      {"exists then in", "x,y in (a)", "x,y in (a)"},
      {"two exists", "x,y", "x,y"},
      {"three kinds", "x=a,y!=b,z in (h,i,j)", "x=a,y!=b,z in (h,i,j)"},
      {"trailing space", "a ", "a"},
      {"keywords as values", "a in (x,y,notin, z,in)", "a in (in,notin,x,y,z)"},
      {"keywords as key and value", "notin=in", "notin=in"},
      {"in as key", "in", "in"},
      {"does not exist sorts by its key", "b,!a", "!a,b"},
      {"same key twice keeps order", "z!=a,z", "z!=a,z"},
      {"integer with leading zeros", "x>007", "x>007"},
      {"nul ends an identifier", std::string_view("a\0,b", 4), "a,b"},
      {"leading nul ends the input", std::string_view("\0a=b", 4), ""},
  };
  for (const ParseCase& c : cases) {
    SCOPED_TRACE(c.name);
    Result<Selector> selector = Selector::Parse(c.input);
    ASSERT_TRUE(selector.ok()) << selector.status().ToString();
    EXPECT_EQ(selector->String(), c.want);
  }
}

// Parsing fills requirements with the operator, key and sorted values upstream would hold.
TEST(SelectorTest, ParsedRequirementsHoldOperatorsAndValues) {
  Selector selector = MustParse("e in (y,x),c!=d,a=b,!h,g,f notin (z),i==j,k>1,l<2");
  std::vector<std::string> got;
  for (const Requirement& r : selector.requirements()) {
    std::string line = r.key() + " " + std::string(OperatorName(r.op()));
    for (const std::string& value : r.values()) {
      line += " [" + value + "]";
    }
    got.push_back(line);
  }
  const std::vector<std::string> want = {
      "a = [b]", "c != [d]", "e in [x] [y]", "f notin [z]", "g exists",
      "h !",     "i == [j]", "k gt [1]",     "l lt [2]",
  };
  EXPECT_EQ(got, want);
  EXPECT_FALSE(selector.Empty());
}

struct BadCase {
  std::string_view name;
  std::string input;  // owning: some cases are built from temporaries
  std::string want;
};

// Upstream's rejected inputs fail with kBadRequest and upstream's message, word for word.
TEST(SelectorTest, RejectsInvalidSelectors) {
  const BadCase cases[] = {
      {"pipes make a bad value", "x=a||y=b",
       "unable to parse requirement: values[0][x]: Invalid value: \"a||y\": " + kValueRegexError},
      {"double equals twice", "x==a==b", "found '==', expected: ',' or 'end of string'"},
      {"does not exist with value", "!x=a", "found '=', expected: ',' or 'end of string'"},
      {"non-integer bound", "x<a",
       "unable to parse requirement: values[0]: Invalid value: \"a\": for 'Gt', 'Lt' operators, "
       "the value must be an integer"},
      {"empty bound", "x>",
       "unable to parse requirement: values[0]: Invalid value: \"\": for 'Gt', 'Lt' operators, "
       "the value must be an integer"},
      {"double comma", "x,,y", "found ',', expected: identifier after ','"},
      {"leading comma", ",x,y", "found ',', expected: !, identifier, or 'end of string'"},
      {"trailing comma", "a in (xyz),", "found '', expected: identifier after ','"},
      {"misspelt operator", "x nott in (y)",
       "unable to parse requirement: found 'nott', expected: " + kOperators},
      {"missing comma between requirements", "a in (xyz)b notin ()",
       "found 'b', expected: ',' or 'end of string'"},
      {"missing comma between values", "a in (xyz abc)",
       "unable to parse requirement: found 'abc', expected: ',' or ')'"},
      {"unclosed values", "a notin(",
       "unable to parse requirement: found '', expected: ',', ')' or identifier"},
      {"operator in values", "a in (x,=)",
       "unable to parse requirement: found '=', expected: ',', or identifier"},
      {"missing parenthesis", "a in x", "unable to parse requirement: found 'x' expected: '('"},
      {"missing values at end", "a in", "unable to parse requirement: found '' expected: '('"},
      {"parenthesis after key", "a (",
       "unable to parse requirement: found '(', expected: " + kOperators},
      {"lone parenthesis", "(", "found '(', expected: !, identifier, or 'end of string'"},
      {"lone bang", "!", "unable to parse requirement: found '', expected: identifier"},
      {"bang bang", "!!x", "unable to parse requirement: found '!', expected: identifier"},
      {"in with no key", "in (a)",
       "unable to parse requirement: found '(', expected: " + kOperators},
      {"operator twice", "x=(a)", "unable to parse requirement: found '(', expected: identifier"},
      {"greater or equal", "x>=1", "unable to parse requirement: found '=', expected: identifier"},
      {"bad key", "-x=a",
       "unable to parse requirement: <nil>: Invalid value: \"-x\": name part " + kNameRegexError},
      {"bad key is quoted like Go",
       "a\x01"
       "b",
       "unable to parse requirement: <nil>: Invalid value: \"a\\x01b\": name part " +
           kNameRegexError},
      {"key errors joined", "a/",
       "unable to parse requirement: <nil>: Invalid value: \"a/\": name part must be non-empty; "
       "name part " +
           kNameRegexError},
      {"key with two slashes", "a/b/c",
       "unable to parse requirement: <nil>: Invalid value: \"a/b/c\": a qualified name " +
           kNameRegexError +
           " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"},
      {"long key", std::string(64, 'k'),
       "unable to parse requirement: <nil>: Invalid value: \"" + std::string(64, 'k') +
           "\": name part must be no more than 63 characters"},
      {"long value", "k=" + std::string(64, 'v'),
       "unable to parse requirement: values[0][k]: Invalid value: \"" + std::string(64, 'v') +
           "\": must be no more than 63 characters"},
      {"two bad values aggregate", "x in (-a,-b)",
       "unable to parse requirement: [values[0][x]: Invalid value: \"-a\": " + kValueRegexError +
           ", values[1][x]: Invalid value: \"-b\": " + kValueRegexError + "]"},
      {"bound neither integer nor label value", "x>-",
       "unable to parse requirement: [values[0]: Invalid value: \"-\": for 'Gt', 'Lt' "
       "operators, the value must be an integer, values[0][x]: Invalid value: \"-\": " +
           kValueRegexError + "]"},
      {"negative bound is not a label value", "x>-1",
       "unable to parse requirement: values[0][x]: Invalid value: \"-1\": " + kValueRegexError},
      {"bound out of int64 range", "x<99999999999999999999",
       "unable to parse requirement: values[0]: Invalid value: \"99999999999999999999\": for "
       "'Gt', 'Lt' operators, the value must be an integer"},
  };
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.name);
    Result<Selector> selector = Selector::Parse(c.input);
    ASSERT_FALSE(selector.ok()) << selector->String();
    EXPECT_EQ(selector.status().code(), StatusCode::kBadRequest);
    EXPECT_EQ(selector.status().message(), c.want);
  }
}

struct MatchCase {
  std::string_view selector;
  StringMap labels;
  bool want;
};

// Match semantics from upstream's TestSelectorMatches and TestRequirementSelectorMatching, plus
// the absent-key rules: != and notin match a missing key, in and = do not.
TEST(SelectorTest, MatchesLabelSets) {
  const StringMap foo_baz = {{"foo", "bar"}, {"baz", "blah"}};
  const MatchCase cases[] = {
      {"", {{"x", "y"}}, true},
      {"", {}, true},
      {"x=y", {{"x", "y"}}, true},
      {"x=y,z=w", {{"x", "y"}, {"z", "w"}}, true},
      {"x!=y,z!=w", {{"x", "z"}, {"z", "a"}}, true},
      {"notin=in", {{"notin", "in"}}, true},
      {"x", {{"x", "z"}}, true},
      {"x", {{"x", ""}}, true},
      {"!x", {{"y", "z"}}, true},
      {"x>1", {{"x", "2"}}, true},
      {"x<1", {{"x", "0"}}, true},
      {"x=z", {}, false},
      {"x=y", {{"x", "z"}}, false},
      {"x=y,z=w", {{"x", "w"}, {"z", "w"}}, false},
      {"x!=y,z!=w", {{"x", "z"}, {"z", "w"}}, false},
      {"x", {{"y", "z"}}, false},
      {"!x", {{"x", "z"}}, false},
      {"x>1", {{"x", "0"}}, false},
      {"x<1", {{"x", "2"}}, false},
      {"foo=bar", foo_baz, true},
      {"baz=blah", foo_baz, true},
      {"foo=bar,baz=blah", foo_baz, true},
      {"foo=blah", foo_baz, false},
      {"baz=bar", foo_baz, false},
      {"foo=bar,foobar=bar,baz=blah", foo_baz, false},
      {"x in (foo),y notin (alpha)", {{"x", "foo"}, {"y", "baz"}}, true},
      {"x in (foo),y in (alpha)", {{"x", "foo"}, {"y", "baz"}}, false},
      {"x notin (),y", {{"y", ""}}, true},
      {"!x,y", {{"y", ""}}, true},
      {"x notin (),!y", {{"y", ""}}, false},
      {"x in ()", {{"y", "baz"}}, false},
      {"x in ()", {{"x", ""}}, true},
      {"x notin ()", {{"x", ""}}, false},
      {"x!=a", {}, true},
      {"x notin (a,b)", {}, true},
      {"x notin (a,b)", {{"x", "c"}}, true},
      {"x notin (a,b)", {{"x", "b"}}, false},
      {"x in (a,b)", {}, false},
      {"z>1", {{"z", "2"}}, true},
      {"z>1", {{"z", "v2"}}, false},
      {"z>1", {}, false},
      {"z<1", {{"z", "-5"}}, true},
      {"z<10", {{"z", "+3"}}, true},
      {"z>1", {{"z", "99999999999999999999"}}, false},
      {"z<1", {{"z", ""}}, false},
      {"z>9223372036854775806", {{"z", "9223372036854775807"}}, true},
      {"z<1", {{"z", "-9223372036854775808"}}, true},
      {"z<1", {{"z", "-9223372036854775809"}}, false},
      {"z>007", {{"z", "8"}}, true},
  };
  for (const MatchCase& c : cases) {
    SCOPED_TRACE(c.selector);
    EXPECT_EQ(MustParse(c.selector).Matches(c.labels), c.want);
  }
}

// Matching allocates nothing: it runs for every pod against every Service selector.
TEST(SelectorTest, MatchingDoesNotAllocate) {
  const Selector selector =
      MustParse("app in (web,api),tier!=db,!canary,env notin (dev),zone,rank>2,rank<100");
  const StringMap service = {{"app", "web"}, {"zone", "a"}};
  const StringMap labels = {{"app", "web"}, {"env", "prod"}, {"rank", "7"}, {"zone", "a"}};
  const std::int64_t before = slicewright::fakes::AllocationCount();
  const bool matched = selector.Matches(labels);
  const bool fast = SelectorMatchesMap(service, labels);
  const bool nothing = Selector::Nothing().Matches(labels);
  const std::int64_t allocations = slicewright::fakes::AllocationCount() - before;
  EXPECT_EQ(allocations, 0);
  EXPECT_TRUE(matched);
  EXPECT_TRUE(fast);
  EXPECT_FALSE(nothing);
  // The counter is live: a real allocation moves it.
  const std::int64_t live = slicewright::fakes::AllocationCount();
  const std::string heap(64, 'x');
  EXPECT_GT(slicewright::fakes::AllocationCount(), live) << heap;
}

// Everything matches all and is empty; Nothing matches none, is not empty, and absorbs Add.
TEST(SelectorTest, EverythingAndNothing) {
  const StringMap labels = {{"x", "y"}};
  EXPECT_TRUE(Selector::Everything().Matches(labels));
  EXPECT_TRUE(Selector::Everything().Matches({}));
  EXPECT_TRUE(Selector::Everything().Empty());
  EXPECT_FALSE(Selector::Everything().MatchesNothing());
  EXPECT_EQ(Selector::Everything().String(), "");
  EXPECT_EQ(Selector(), Selector::Everything());

  EXPECT_FALSE(Selector::Nothing().Matches(labels));
  EXPECT_FALSE(Selector::Nothing().Matches({}));
  EXPECT_FALSE(Selector::Nothing().Empty());
  EXPECT_TRUE(Selector::Nothing().MatchesNothing());
  EXPECT_EQ(Selector::Nothing().String(), "");
  EXPECT_NE(Selector::Nothing(), Selector::Everything());
  EXPECT_EQ(Selector::Nothing().Add(MustRequire("x", Operator::kExists, {})), Selector::Nothing());
}

// Service selectors: FromMap is key=value per entry and matches like SelectorMatchesMap.
TEST(SelectorTest, FromMapAndFastPath) {
  const StringMap selector = {{"app", "web"}, {"tier", "front"}};
  Selector from_map = Selector::FromMap(selector);
  EXPECT_EQ(from_map.String(), "app=web,tier=front");
  EXPECT_TRUE(Selector::FromMap({}).Empty());
  EXPECT_TRUE(SelectorMatchesMap({}, {{"a", "b"}}));
  EXPECT_TRUE(SelectorMatchesMap({}, {}));

  struct Case {
    std::string_view name;
    StringMap labels;
    bool want;
  };
  const Case cases[] = {
      {"exact", {{"app", "web"}, {"tier", "front"}}, true},
      {"extra labels", {{"app", "web"}, {"extra", "x"}, {"tier", "front"}, {"z", "1"}}, true},
      {"one missing", {{"app", "web"}}, false},
      {"wrong value", {{"app", "web"}, {"tier", "back"}}, false},
      {"empty labels", {}, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(SelectorMatchesMap(selector, c.labels), c.want);
    EXPECT_EQ(from_map.Matches(c.labels), c.want);
  }
  // FromMap does not validate, as SelectorFromSet does not: the API server already did.
  EXPECT_EQ(Selector::FromMap({{"bad key", "=v"}}).String(), "bad key==v");
}

// Random selectors and label sets: the generic matcher and the fast path always agree.
TEST(SelectorTest, FastPathAgreesWithSelectorOnRandomSets) {
  constexpr unsigned kSeed = 99;
  SCOPED_TRACE(testing::Message() << "seed " << kSeed);
  std::mt19937 rng(kSeed);
  const auto random_map = [&rng] {
    StringMap map;
    const int size = static_cast<int>(rng() % 4);
    for (int k = 0; k < size; ++k) {
      map[std::string(1, static_cast<char>('a' + rng() % 4))] =
          std::string(1, static_cast<char>('x' + rng() % 3));
    }
    return map;
  };
  for (int iteration = 0; iteration < 5000; ++iteration) {
    const StringMap selector = random_map();
    const StringMap labels = random_map();
    ASSERT_EQ(Selector::FromMap(selector).Matches(labels), SelectorMatchesMap(selector, labels));
  }
}

struct LabelSelectorCase {
  std::string_view name;
  model::LabelSelector input;
  std::string_view want;  // String() on success
};

// metav1.LabelSelector conversion: matchLabels become =, expressions map their operators.
TEST(SelectorTest, ConvertsLabelSelectors) {
  const LabelSelectorCase cases[] = {
      {"empty selects everything", {}, ""},
      {"match labels", {{{"app", "web"}, {"env", "prod"}}, {}}, "app=web,env=prod"},
      {"expressions",
       {{},
        {{"tier", "In", {"front", "back"}},
         {"env", "NotIn", {"dev"}},
         {"canary", "DoesNotExist", {}},
         {"app", "Exists", {}}}},
       "app,!canary,env notin (dev),tier in (back,front)"},
      {"both", {{{"app", "web"}}, {{"tier", "In", {"front"}}}}, "app=web,tier in (front)"},
      {"duplicate values kept", {{}, {{"a", "In", {"x", "x"}}}}, "a in (x,x)"},
      {"empty value allowed", {{}, {{"a", "In", {""}}}}, "a in ()"},
  };
  for (const LabelSelectorCase& c : cases) {
    SCOPED_TRACE(c.name);
    Result<Selector> selector = Selector::FromLabelSelector(c.input);
    ASSERT_TRUE(selector.ok()) << selector.status().ToString();
    EXPECT_EQ(selector->String(), c.want);
  }
  EXPECT_TRUE(Selector::FromLabelSelector({})->Empty());
  Result<Selector> selector = Selector::FromLabelSelector({{}, {{"tier", "NotIn", {"back"}}}});
  ASSERT_TRUE(selector.ok());
  EXPECT_TRUE(selector->Matches({}));
  EXPECT_TRUE(selector->Matches({{"tier", "front"}}));
  EXPECT_FALSE(selector->Matches({{"tier", "back"}}));
}

struct LabelSelectorErrorCase {
  std::string_view name;
  model::LabelSelector input;
  std::string want;
};

// Bad LabelSelectors fail with kInvalid and upstream's message.
TEST(SelectorTest, RejectsInvalidLabelSelectors) {
  const LabelSelectorErrorCase cases[] = {
      {"unknown operator",
       {{}, {{"a", "Gt", {"1"}}}},
       "\"Gt\" is not a valid label selector operator"},
      {"operator is case sensitive",
       {{}, {{"a", "in", {"x"}}}},
       "\"in\" is not a valid label selector operator"},
      {"in without values",
       {{}, {{"a", "In", {}}}},
       "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be "
       "empty"},
      {"notin without values",
       {{}, {{"a", "NotIn", {}}}},
       "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be "
       "empty"},
      {"exists with values",
       {{}, {{"a", "Exists", {"x"}}}},
       "values: Invalid value: []string{\"x\"}: values set must be empty for exists and does not "
       "exist"},
      {"does not exist with values",
       {{}, {{"a", "DoesNotExist", {"x", "y"}}}},
       "values: Invalid value: []string{\"x\", \"y\"}: values set must be empty for exists and "
       "does not exist"},
      {"bad match label key",
       {{{"bad key", "v"}}, {}},
       "key: Invalid value: \"bad key\": name part " + kNameRegexError},
      {"bad match label value",
       {{{"app", "-web"}}, {}},
       "values[0][app]: Invalid value: \"-web\": " + kValueRegexError},
      {"first bad match label in key order",
       {{{"b", "-2"}, {"a", "-1"}}, {}},
       "values[0][a]: Invalid value: \"-1\": " + kValueRegexError},
      {"bad key and no values aggregate",
       {{}, {{"-k", "In", {}}}},
       "[key: Invalid value: \"-k\": name part " + kNameRegexError +
           ", values: Invalid value: []string(nil): for 'in', 'notin' operators, values set "
           "can't be empty]"},
      {"second value bad",
       {{}, {{"k", "In", {"ok", "no!"}}}},
       "values[1][k]: Invalid value: \"no!\": " + kValueRegexError},
  };
  for (const LabelSelectorErrorCase& c : cases) {
    SCOPED_TRACE(c.name);
    Result<Selector> selector = Selector::FromLabelSelector(c.input);
    ASSERT_FALSE(selector.ok()) << selector->String();
    EXPECT_EQ(selector.status().code(), StatusCode::kInvalid);
    EXPECT_EQ(selector.status().message(), c.want);
  }
}

struct RequirementCase {
  std::string key;
  Operator op;
  std::vector<std::string> values;
  bool ok;
};

// NewRequirement's rules (upstream's TestRequirementConstructor and more).
TEST(SelectorTest, RequirementConstructorRules) {
  const RequirementCase cases[] = {
      {"x", Operator::kIn, {}, false},
      {"x", Operator::kNotIn, {}, false},
      {"x", Operator::kIn, {"foo"}, true},
      {"x", Operator::kNotIn, {"foo"}, true},
      {"x", Operator::kExists, {}, true},
      {"x", Operator::kDoesNotExist, {}, true},
      {"1foo", Operator::kIn, {"bar"}, true},
      {"1234", Operator::kIn, {"bar"}, true},
      {"y", Operator::kGreaterThan, {"1"}, true},
      {"z", Operator::kLessThan, {"6"}, true},
      {"foo", Operator::kGreaterThan, {"bar"}, false},
      {"barz", Operator::kLessThan, {"blah"}, false},
      {"x", Operator::kGreaterThan, {"1", "2"}, false},
      {"x", Operator::kEquals, {}, false},
      {"x", Operator::kEquals, {"a", "b"}, false},
      {"x", Operator::kDoubleEquals, {""}, true},
      {"x", Operator::kNotEquals, {"a"}, true},
      {std::string(254, 'a'), Operator::kExists, {}, false},
  };
  for (const RequirementCase& c : cases) {
    SCOPED_TRACE(c.key + " " + std::string(OperatorName(c.op)));
    Result<Requirement> requirement = Requirement::Create(c.key, c.op, c.values);
    EXPECT_EQ(requirement.ok(), c.ok) << requirement.status().ToString();
    if (!requirement.ok()) {
      EXPECT_EQ(requirement.status().code(), StatusCode::kInvalid);
    }
  }
  EXPECT_EQ(Requirement::Create("x", Operator::kEquals, {"a", "b"}).status().message(),
            "values: Invalid value: []string{\"a\", \"b\"}: exact-match compatibility requires "
            "one single value");
  EXPECT_EQ(Requirement::Create("x", Operator::kLessThan, {"1", "2"}).status().message(),
            "values: Invalid value: []string{\"1\", \"2\"}: for 'Gt', 'Lt' operators, exactly one "
            "value is required");
}

struct StringCase {
  std::vector<Requirement> requirements;
  std::string_view want;
};

// String() output for hand-built selectors (upstream's TestToString): values sorted, duplicate
// keys kept in the order given.
TEST(SelectorTest, PrintsCanonicalForm) {
  const StringCase cases[] = {
      {{MustRequire("x", Operator::kIn, {"abc", "def"}),
        MustRequire("y", Operator::kNotIn, {"jkl"}), MustRequire("z", Operator::kExists, {})},
       "x in (abc,def),y notin (jkl),z"},
      {{MustRequire("x", Operator::kNotIn, {"def", "abc"}),
        MustRequire("y", Operator::kNotEquals, {"jkl"}),
        MustRequire("z", Operator::kDoesNotExist, {})},
       "x notin (abc,def),y!=jkl,!z"},
      {{MustRequire("x", Operator::kNotIn, {"abc"}),
        MustRequire("y", Operator::kIn, {"jkl", "mno"}), MustRequire("z", Operator::kNotIn, {""})},
       "x notin (abc),y in (jkl,mno),z notin ()"},
      {{MustRequire("x", Operator::kEquals, {"abc"}),
        MustRequire("y", Operator::kDoubleEquals, {"jkl"}),
        MustRequire("z", Operator::kNotEquals, {"a"}), MustRequire("z", Operator::kExists, {})},
       "x=abc,y==jkl,z!=a,z"},
      {{MustRequire("x", Operator::kGreaterThan, {"2"}),
        MustRequire("y", Operator::kLessThan, {"8"}), MustRequire("z", Operator::kExists, {})},
       "x>2,y<8,z"},
      {{MustRequire("z", Operator::kExists, {}), MustRequire("a", Operator::kExists, {})}, "a,z"},
  };
  for (const StringCase& c : cases) {
    SCOPED_TRACE(c.want);
    EXPECT_EQ(Selector::FromRequirements(c.requirements).String(), c.want);
  }
  // Add sorts too, and leaves the original alone.
  Selector base = MustParse("b=1");
  Selector added = base.Add(MustRequire("a", Operator::kExists, {}));
  EXPECT_EQ(added.String(), "a,b=1");
  EXPECT_EQ(base.String(), "b=1");
  // Sorting for output does not reorder the stored values.
  Requirement unsorted = MustRequire("x", Operator::kIn, {"b", "a"});
  EXPECT_EQ(unsorted.String(), "x in (a,b)");
  EXPECT_EQ(unsorted.values(), (std::vector<std::string>{"b", "a"}));
}

// Parse order does not matter (upstream's TestDeterministicParse).
TEST(SelectorTest, ParseIsDeterministic) {
  EXPECT_EQ(MustParse("x=a,a=x"), MustParse("a=x,x=a"));
  EXPECT_EQ(MustParse("x=a,a=x").String(), MustParse("a=x,x=a").String());
}

// RequiresExactMatch reports the single value of =, == or a one-value in on the first matching
// key.
TEST(SelectorTest, RequiresExactMatch) {
  EXPECT_EQ(MustParse("a=b,c=d").RequiresExactMatch("a"), "b");
  EXPECT_EQ(MustParse("a==b").RequiresExactMatch("a"), "b");
  EXPECT_EQ(MustParse("a in (b)").RequiresExactMatch("a"), "b");
  EXPECT_EQ(MustParse("a in (b,c)").RequiresExactMatch("a"), std::nullopt);
  EXPECT_EQ(MustParse("a!=b").RequiresExactMatch("a"), std::nullopt);
  EXPECT_EQ(MustParse("a").RequiresExactMatch("a"), std::nullopt);
  EXPECT_EQ(MustParse("a=b").RequiresExactMatch("z"), std::nullopt);
  EXPECT_EQ(Selector::Nothing().RequiresExactMatch("a"), std::nullopt);
}

// Operators print as selection.Operator spells them.
TEST(SelectorTest, OperatorNames) {
  EXPECT_EQ(OperatorName(Operator::kIn), "in");
  EXPECT_EQ(OperatorName(Operator::kNotIn), "notin");
  EXPECT_EQ(OperatorName(Operator::kEquals), "=");
  EXPECT_EQ(OperatorName(Operator::kDoubleEquals), "==");
  EXPECT_EQ(OperatorName(Operator::kNotEquals), "!=");
  EXPECT_EQ(OperatorName(Operator::kExists), "exists");
  EXPECT_EQ(OperatorName(Operator::kDoesNotExist), "!");
  EXPECT_EQ(OperatorName(Operator::kGreaterThan), "gt");
  EXPECT_EQ(OperatorName(Operator::kLessThan), "lt");
}

// Random text never crashes the parser; whatever parses prints a form that re-parses to the same
// selector, and every failure is a kBadRequest with a message.
TEST(SelectorTest, RandomInputsRoundTrip) {
  constexpr unsigned kSeed = 1234;
  SCOPED_TRACE(testing::Message() << "seed " << kSeed);
  std::mt19937 rng(kSeed);
  const std::vector<std::string_view> pieces = {
      "a", "b", "x1", "k.io/", "in", "notin", " in ", " notin ", "=", "==", "!=", "!", "(", ")",
      ",", ">", "<",  " ",     "\t", "1",     "-",    "_",       "/", "~",  "0",  "9", "A"};
  int parsed = 0;
  for (int iteration = 0; iteration < 50000; ++iteration) {
    std::string text;
    const int length = static_cast<int>(rng() % 12);
    for (int k = 0; k < length; ++k) {
      if (rng() % 32 == 0) {
        text += static_cast<char>(rng() % 256);  // any byte, NUL included
      } else {
        text += pieces[rng() % pieces.size()];
      }
    }
    Result<Selector> selector = Selector::Parse(text);
    if (!selector.ok()) {
      ASSERT_EQ(selector.status().code(), StatusCode::kBadRequest) << text;
      ASSERT_FALSE(selector.status().message().empty()) << text;
      continue;
    }
    ++parsed;
    const std::string printed = selector->String();
    Result<Selector> again = Selector::Parse(printed);
    ASSERT_TRUE(again.ok()) << "input '" << text << "' printed '" << printed
                            << "': " << again.status().ToString();
    EXPECT_EQ(again->String(), printed) << text;
  }
  EXPECT_GT(parsed, 1000);
}

}  // namespace
}  // namespace slicewright::labels

#include "slicewright/model/quantity.h"

#include <cstdint>
#include <optional>
#include <string_view>

#include <gtest/gtest.h>

namespace slicewright::model {
namespace {

struct Case {
  std::string_view text;
  std::optional<std::int64_t> milli;
};

// Valid quantities convert to MilliValue(), rounding any fraction of a thousandth away from zero.
TEST(QuantityTest, ParsesMilliValue) {
  const Case cases[] = {
      {"0", 0},
      {"4", 4000},
      {"+4", 4000},
      {"3500m", 3500},
      {"100m", 100},
      {"0.5", 500},
      {".5", 500},
      {"1.", 1000},
      {"1.5", 1500},
      {"007", 7000},
      {"1k", 1'000'000},
      {"1M", 1'000'000'000},
      {"2Ki", 2'048'000},
      {"1.5Ki", 1'536'000},
      {"0.1Ki", 102'400},
      {"1Mi", 1'048'576'000},
      {"1e3", 1'000'000},
      {"1E3", 1'000'000},
      {"1e+3", 1'000'000},
      {"5e-1", 500},
      {"1e-3", 1},
      {"1n", 1},  // rounded up to one thousandth
      {"1u", 1},
      {"0.0001", 1},
      {"1.0001m", 2},
      {"0.0001Ki", 103},  // 102.4m
      {"-1n", -1},        // away from zero
      {"-2", -2000},
      {"1e-1000000000", 1},
      {"0e999999999", 0},
      {"1P", 1'000'000'000'000'000'000},
      {"9223372036854775807m", 9'223'372'036'854'775'807},
      {"9223372036854775.807", 9'223'372'036'854'775'807},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    EXPECT_EQ(ParseQuantityMilli(c.text), c.milli);
  }
}

// Bad text and values whose milli value overflows int64 are rejected.
TEST(QuantityTest, RejectsBadInput) {
  const std::string_view cases[] = {
      "",
      " 1",
      "1 ",
      "abc",
      "1K",
      "1ki",
      "1e",
      "1e+",
      "ee3",
      "1m3",
      "1.2.3",
      "1Kib",
      "1,5",
      "0x10",
      "1E",
      "10E",
      "1e30",
      "9223372036854775808m",
      "9223372036854775.8071",
      "1Ei",
  };
  for (std::string_view text : cases) {
    SCOPED_TRACE(text);
    EXPECT_EQ(ParseQuantityMilli(text), std::nullopt);
  }
}

}  // namespace
}  // namespace slicewright::model

#include "slicewright/model/time.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>

#include <gtest/gtest.h>

namespace slicewright::model {
namespace {

constexpr std::int64_t kNanos = 1'000'000'000;

// Accepted RFC 3339 forms parse to the instant Go's time.Parse(time.RFC3339, ...) gives.
TEST(TimeTest, ParsesValidTimes) {
  struct Case {
    std::string_view text;
    std::int64_t unix_nanos;
  };
  const Case cases[] = {
      {"1970-01-01T00:00:00Z", 0},
      {"2024-01-02T03:04:05Z", 1704164645 * kNanos},
      {"2024-01-02T03:04:05.5Z", 1704164645 * kNanos + 500'000'000},
      {"2024-01-02T03:04:05.000000001Z", 1704164645 * kNanos + 1},
      {"2024-01-02T03:04:05.123456Z", 1704164645 * kNanos + 123'456'000},
      // Go truncates fractions longer than nine digits instead of rejecting them.
      {"2024-01-02T03:04:05.1234567899Z", 1704164645 * kNanos + 123'456'789},
      {"2024-01-02T05:04:05+02:00", 1704164645 * kNanos},
      {"2024-01-01T22:34:05-04:30", 1704164645 * kNanos},
      {"2024-01-02T03:04:05.25-00:00", 1704164645 * kNanos + 250'000'000},
      {"2024-02-29T00:00:00Z", 1709164800 * kNanos},
      {"2000-02-29T00:00:00Z", 951782400 * kNanos},
      {"1969-12-31T23:59:59Z", -kNanos},
      {"1969-12-31T23:59:59.5Z", -kNanos / 2},
      {"1900-01-01T00:00:00Z", -2208988800 * kNanos},
      {"2262-04-11T23:47:16.854775807Z", std::numeric_limits<std::int64_t>::max()},
      {"1677-09-21T00:12:43.145224192Z", std::numeric_limits<std::int64_t>::min()},
      {"2024-01-02T23:59:59+23:59", (1704239999 - 86340) * kNanos},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    const std::optional<Time> parsed = ParseRfc3339(c.text);
    ASSERT_TRUE(parsed.has_value());
    EXPECT_EQ(parsed->unix_nanos, c.unix_nanos);
  }
}

// Text that is not RFC 3339, names an impossible date or time, or leaves int64 nanoseconds is
// rejected rather than wrapped or normalized.
TEST(TimeTest, RejectsInvalidTimes) {
  const std::string_view cases[] = {
      "",
      "2024-01-02",
      "2024-01-02T03:04:05",   // no zone
      "2024-01-02t03:04:05Z",  // Go rejects lower case
      "2024-01-02T03:04:05z",
      "2024-01-02 03:04:05Z",
      "2024-01-02T03:04:05.Z",   // fraction without digits
      "2024-01-02T03:04:05,5Z",  // comma separator
      "2024-1-02T03:04:05Z",
      "2024-01-02T3:04:05Z",
      "2024-13-01T00:00:00Z",
      "2024-00-01T00:00:00Z",
      "2024-02-30T00:00:00Z",
      "2023-02-29T00:00:00Z",
      "1900-02-29T00:00:00Z",
      "2024-04-31T00:00:00Z",
      "2024-01-00T00:00:00Z",
      "2024-01-02T25:00:00Z",
      "2024-01-02T24:00:00Z",
      "2024-01-02T23:60:00Z",
      "2024-01-02T23:59:60Z",  // no leap seconds, as in Go
      "2024-01-02T03:04:05+24:00",
      "2024-01-02T03:04:05+02:60",
      "2024-01-02T03:04:05+0200",
      "2024-01-02T03:04:05+02",
      "2024-01-02T03:04:05Z ",
      " 2024-01-02T03:04:05Z",
      "2024-01-02T03:04:05ZZ",
      "+024-01-02T03:04:05Z",
      "2024-01-02T03:04:05.1a2Z",
      "0001-01-01T00:00:00Z",  // Go's zero time, outside int64 nanoseconds
      "1677-09-21T00:12:43.145224191Z",
      "2262-04-11T23:47:16.854775808Z",
      "9999-12-31T23:59:59Z",
  };
  for (std::string_view text : cases) {
    SCOPED_TRACE(text);
    EXPECT_FALSE(ParseRfc3339(text).has_value());
  }
}

// FormatRfc3339 prints whole seconds in UTC, flooring times before 1970 as Go does.
TEST(TimeTest, FormatsSeconds) {
  EXPECT_EQ(FormatRfc3339(Time{0}), "1970-01-01T00:00:00Z");
  EXPECT_EQ(FormatRfc3339(Time{1704164645 * kNanos + 999'999'999}), "2024-01-02T03:04:05Z");
  EXPECT_EQ(FormatRfc3339(Time{-1}), "1969-12-31T23:59:59Z");
  EXPECT_EQ(FormatRfc3339(Time{-2208988800 * kNanos}), "1900-01-01T00:00:00Z");
  EXPECT_EQ(FormatRfc3339(Time{std::numeric_limits<std::int64_t>::max()}), "2262-04-11T23:47:16Z");
  EXPECT_EQ(FormatRfc3339(Time{std::numeric_limits<std::int64_t>::min()}), "1677-09-21T00:12:43Z");
}

// FormatRfc3339Nano trims trailing zeros and drops a zero fraction, like Go's RFC3339Nano.
TEST(TimeTest, FormatsNanosTrimmed) {
  EXPECT_EQ(FormatRfc3339Nano(Time{1546300801 * kNanos}), "2019-01-01T00:00:01Z");
  EXPECT_EQ(FormatRfc3339Nano(Time{1546300801 * kNanos + 500'000'000}), "2019-01-01T00:00:01.5Z");
  EXPECT_EQ(FormatRfc3339Nano(Time{1546300801 * kNanos + 120'000}), "2019-01-01T00:00:01.00012Z");
  EXPECT_EQ(FormatRfc3339Nano(Time{1546300801 * kNanos + 1}), "2019-01-01T00:00:01.000000001Z");
  EXPECT_EQ(FormatRfc3339Nano(Time{-1}), "1969-12-31T23:59:59.999999999Z");
  EXPECT_EQ(FormatRfc3339Nano(Time{std::numeric_limits<std::int64_t>::min()}),
            "1677-09-21T00:12:43.145224192Z");
}

// FormatRfc3339Micro always prints six digits, truncating (not rounding) like metav1.MicroTime.
TEST(TimeTest, FormatsMicros) {
  EXPECT_EQ(FormatRfc3339Micro(Time{1704164645 * kNanos}), "2024-01-02T03:04:05.000000Z");
  EXPECT_EQ(FormatRfc3339Micro(Time{1704164645 * kNanos + 123'456'999}),
            "2024-01-02T03:04:05.123456Z");
  EXPECT_EQ(FormatRfc3339Micro(Time{-1}), "1969-12-31T23:59:59.999999Z");
}

// Formatting and parsing are inverses across the whole int64 range, including every month end.
TEST(TimeTest, RoundTripsThroughText) {
  const std::int64_t samples[] = {0,
                                  1,
                                  -1,
                                  951782400 * kNanos,
                                  1709164800 * kNanos - 1,
                                  4102444800 * kNanos + 7,
                                  -5364662400 * kNanos + 123,
                                  std::numeric_limits<std::int64_t>::max(),
                                  std::numeric_limits<std::int64_t>::min()};
  for (std::int64_t nanos : samples) {
    SCOPED_TRACE(nanos);
    EXPECT_EQ(ParseRfc3339(FormatRfc3339Nano(Time{nanos})), Time{nanos});
  }
  // One instant per day for 400 years exercises every leap-year rule.
  for (std::int64_t day = -36524 * 2; day < 36524 * 2; day += 1) {
    const Time time{day * 86'400 * kNanos + 3'723'000'000'000};
    ASSERT_EQ(ParseRfc3339(FormatRfc3339(time)), time) << FormatRfc3339(time);
  }
}

}  // namespace
}  // namespace slicewright::model

#include "slicewright/base/duration.h"

#include <chrono>

#include <gtest/gtest.h>

namespace slicewright {
namespace {

using std::chrono::milliseconds;

TEST(ParseGoDurationTest, GoSyntax) {
  EXPECT_EQ(ParseGoDuration("15s").value(), milliseconds(15'000));
  EXPECT_EQ(ParseGoDuration("500ms").value(), milliseconds(500));
  EXPECT_EQ(ParseGoDuration("1m30s").value(), milliseconds(90'000));
  EXPECT_EQ(ParseGoDuration("1.5h").value(), milliseconds(5'400'000));
  EXPECT_EQ(ParseGoDuration("0").value(), milliseconds(0));
  EXPECT_EQ(ParseGoDuration("0s").value(), milliseconds(0));
  EXPECT_EQ(ParseGoDuration("2000us").value(), milliseconds(2));
  for (const char* bad : {"", "15", "s", "1x", "1..5s", ".s", "-1s", "1e3s", "99999999999999h"}) {
    EXPECT_EQ(ParseGoDuration(bad).status().code(), StatusCode::kInvalid) << bad;
  }
}

// What --help shows as a duration flag's default, as Go's Duration.String() prints it.
TEST(FormatGoDurationTest, AsGoPrintsIt) {
  EXPECT_EQ(FormatGoDuration(milliseconds(0)), "0s");
  EXPECT_EQ(FormatGoDuration(milliseconds(500)), "500ms");
  EXPECT_EQ(FormatGoDuration(milliseconds(15'000)), "15s");
  EXPECT_EQ(FormatGoDuration(milliseconds(1'500)), "1.5s");
  EXPECT_EQ(FormatGoDuration(milliseconds(90'000)), "1m30s");
  EXPECT_EQ(FormatGoDuration(milliseconds(3'600'000)), "1h0m0s");
  EXPECT_EQ(FormatGoDuration(milliseconds(60'250)), "1m0.25s");
  for (const auto ms : {0, 1, 999, 1000, 1001, 59'999, 3'600'001}) {
    EXPECT_EQ(ParseGoDuration(FormatGoDuration(milliseconds(ms))).value(), milliseconds(ms));
  }
}

}  // namespace
}  // namespace slicewright

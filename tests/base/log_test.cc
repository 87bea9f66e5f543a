#include "slicewright/base/log.h"

#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace slicewright::log {
namespace {

class LogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SetSinkForTesting([this](Severity severity, std::string_view message) {
      lines_.emplace_back(severity, std::string(message));
    });
  }
  void TearDown() override {
    SetSinkForTesting({});
    SetVerbosity(0);
  }
  std::vector<std::pair<Severity, std::string>> lines_;
};

TEST_F(LogTest, FormatsWithFmt) {
  SW_LOG(kWarning, "reflector {}: {} retries", "pods", 3);
  ASSERT_EQ(lines_.size(), 1U);
  EXPECT_EQ(lines_[0].first, Severity::kWarning);
  EXPECT_EQ(lines_[0].second, "reflector pods: 3 retries");
}

TEST_F(LogTest, VerbosityGatesVlog) {
  SW_VLOG(2, "hidden {}", 1);
  EXPECT_TRUE(lines_.empty());
  SetVerbosity(2);
  SW_VLOG(2, "shown {}", 2);
  SW_VLOG(3, "still hidden");
  ASSERT_EQ(lines_.size(), 1U);
  EXPECT_EQ(lines_[0].second, "shown 2");
  EXPECT_EQ(lines_[0].first, Severity::kInfo);
}

// Without a test sink, lines go to stderr in either format; control characters in a JSON line are
// escaped so a hostile object name cannot forge log lines.
TEST(LogOutputTest, WritesTextAndJsonToStderr) {
  ::testing::internal::CaptureStderr();
  SW_LOG(kError, "plain {}", "text");
  SetJsonFormat(true);
  SW_LOG(kInfo, "name \"a\nb\"\x01");
  SetJsonFormat(false);
  const std::string out = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(out.find("log_test.cc:"), std::string::npos) << out;
  EXPECT_NE(out.find("] plain text\n"), std::string::npos) << out;
  EXPECT_NE(out.find(R"("level":"info")"), std::string::npos) << out;
  EXPECT_NE(out.find(R"("msg":"name \"a\nb\"\u0001")"), std::string::npos) << out;
}

}  // namespace
}  // namespace slicewright::log

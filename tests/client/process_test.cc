#include "client/process.h"

#include <chrono>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "client/client_test_util.h"

namespace slicewright::client::internal {
namespace {

using client::testing::TempDir;
using std::chrono::milliseconds;

const std::vector<std::string> kPathEnv = {"PATH=/usr/bin:/bin"};

// Exit status, stdout and stderr are captured separately; argv is passed without a shell.
TEST(RunProcessTest, CapturesOutputAndExitCode) {
  const Result<ProcessResult> ran =
      RunProcess({"sh", "-c", "printf '%s' \"$1\"; echo oops >&2; exit 7", "sh", "a b;$HOME"},
                 kPathEnv, milliseconds(10'000));
  ASSERT_TRUE(ran.ok()) << ran.status().ToString();
  EXPECT_EQ(ran->exit_code, 7);
  EXPECT_EQ(ran->signal, 0);
  EXPECT_FALSE(ran->timed_out);
  EXPECT_EQ(ran->out, "a b;$HOME");
  EXPECT_EQ(ran->err, "oops\n");
}

// The child sees exactly the environment given, and stdin is empty (/dev/null).
TEST(RunProcessTest, UsesGivenEnvironmentAndEmptyStdin) {
  const Result<ProcessResult> ran = RunProcess(
      {"sh", "-c", "env | sort; cat"}, {"PATH=/usr/bin:/bin", "ONLY=this"}, milliseconds(10'000));
  ASSERT_TRUE(ran.ok()) << ran.status().ToString();
  EXPECT_EQ(ran->exit_code, 0);
  EXPECT_NE(ran->out.find("ONLY=this\n"), std::string::npos) << ran->out;
  EXPECT_EQ(ran->out.find("HOME="), std::string::npos) << ran->out;
}

// A process past its deadline is killed with its process group, well before it would finish.
TEST(RunProcessTest, KillsOnTimeout) {
  TempDir dir;
  const std::string script = dir.WriteScript("slow", "sleep 30 &\nsleep 30\n");
  const auto start = std::chrono::steady_clock::now();
  const Result<ProcessResult> ran = RunProcess({script}, kPathEnv, milliseconds(200));
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(ran.ok()) << ran.status().ToString();
  EXPECT_TRUE(ran->timed_out);
  EXPECT_LT(took, std::chrono::seconds(10));
}

// A missing command is kNotFound with Go's wording; a non-executable file is kForbidden.
TEST(RunProcessTest, StartFailures) {
  const Result<ProcessResult> missing =
      RunProcess({"sw-no-such-plugin"}, kPathEnv, milliseconds(1000));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(),
            "exec: \"sw-no-such-plugin\": executable file not found in $PATH");

  TempDir dir;
  const std::string plain = dir.Write("plain", "#!/bin/sh\n", 0644);
  const Result<ProcessResult> denied = RunProcess({plain}, kPathEnv, milliseconds(1000));
  ASSERT_FALSE(denied.ok());
  EXPECT_EQ(denied.status().code(), StatusCode::kForbidden);
}

// Output past the cap is dropped, not buffered without bound.
TEST(RunProcessTest, CapsOutput) {
  const Result<ProcessResult> ran =
      RunProcess({"sh", "-c", "head -c 3000000 /dev/zero"}, kPathEnv, milliseconds(20'000));
  ASSERT_TRUE(ran.ok()) << ran.status().ToString();
  EXPECT_EQ(ran->exit_code, 0);
  EXPECT_EQ(ran->out.size(), kMaxProcessOutput);
}

}  // namespace
}  // namespace slicewright::client::internal

#include "slicewright/client/token_source.h"

#include <chrono>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "client/client_test_util.h"

namespace slicewright::client {
namespace {

using testing::FakeClock;
using testing::TempDir;

// The file is re-read only once the cached token is older than 60 s (rotation is picked up).
TEST(FileTokenSourceTest, RereadsAfterSixtySeconds) {
  TempDir dir;
  const std::string path = dir.Write("token", "  first-token\n");
  FakeClock clock;
  FileTokenSource source(path, clock.now());
  Result<std::string> token = source.Token();
  ASSERT_TRUE(token.ok()) << token.status().ToString();
  EXPECT_EQ(*token, "first-token");

  dir.Write("token", "second-token");
  clock.Advance(std::chrono::seconds(59));
  EXPECT_EQ(*source.Token(), "first-token");
  clock.Advance(std::chrono::seconds(2));  // 61 s after the first read
  EXPECT_EQ(*source.Token(), "second-token");
  EXPECT_EQ(source.Describe(), "token file " + path);
}

// A failed re-read keeps serving the last good token (the file may be mid-rotation).
TEST(FileTokenSourceTest, KeepsLastTokenWhenRereadFails) {
  TempDir dir;
  const std::string path = dir.Write("token", "good");
  FakeClock clock;
  FileTokenSource source(path, clock.now());
  ASSERT_EQ(*source.Token(), "good");
  std::filesystem::remove(path);
  clock.Advance(std::chrono::seconds(61));
  const Result<std::string> token = source.Token();
  ASSERT_TRUE(token.ok());
  EXPECT_EQ(*token, "good");
  dir.Write("token", "");  // an empty file on re-read: the last token too
  clock.Advance(std::chrono::seconds(61));
  EXPECT_EQ(*source.Token(), "good");
}

// With no token read yet, a missing or empty file is an error naming the file, not a token.
TEST(FileTokenSourceTest, FirstReadErrors) {
  TempDir dir;
  FakeClock clock;
  FileTokenSource missing(dir.Path("nope"), clock.now());
  const Result<std::string> a = missing.Token();
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(a.status().message(), "open " + dir.Path("nope") + ": No such file or directory");

  FileTokenSource empty(dir.Write("empty", " \n"), clock.now());
  const Result<std::string> b = empty.Token();
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), StatusCode::kUnauthorized);
  EXPECT_EQ(b.status().message(), "token file " + dir.Path("empty") + " is empty");
}

// A static token is returned as is and described without it.
TEST(StaticTokenSourceTest, ReturnsTokenDescribesWithout) {
  StaticTokenSource source("s3cr3t");
  EXPECT_EQ(*source.Token(), "s3cr3t");
  EXPECT_EQ(source.Describe().find("s3cr3t"), std::string::npos);
}

}  // namespace
}  // namespace slicewright::client

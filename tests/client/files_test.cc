#include "client/files.h"

#include <string>

#include <gtest/gtest.h>

#include "client/client_test_util.h"

namespace slicewright::client::internal {
namespace {

using client::testing::TempDir;

// Relative paths join the (absolute) base directory; absolute and empty paths are kept.
TEST(ResolvePathTest, JoinsRelativeOnly) {
  EXPECT_EQ(ResolvePath("ca.crt", "/home/u/.kube"), "/home/u/.kube/ca.crt");
  EXPECT_EQ(ResolvePath("../pki/ca.crt", "/home/u/.kube"), "/home/u/pki/ca.crt");
  EXPECT_EQ(ResolvePath("/etc/ca.crt", "/home/u/.kube"), "/etc/ca.crt");
  EXPECT_EQ(ResolvePath("", "/home/u/.kube"), "");
  EXPECT_TRUE(ResolvePath("ca.crt", "rel").starts_with("/"));
  EXPECT_TRUE(ResolvePath("ca.crt", "rel").ends_with("/rel/ca.crt"));
}

TEST(DirectoryOfTest, SplitsAtLastSlash) {
  EXPECT_EQ(DirectoryOf("/a/b/config"), "/a/b");
  EXPECT_EQ(DirectoryOf("/config"), "/");
  EXPECT_EQ(DirectoryOf("config"), ".");
}

// Reading: contents, kNotFound for a missing file, kForbidden for an unreadable one.
TEST(ReadSmallFileTest, ReadsAndClassifiesErrors) {
  TempDir dir;
  const std::string path = dir.Write("f", std::string("a\0b", 3));
  const Result<std::string> text = ReadSmallFile(path);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, std::string("a\0b", 3));
  EXPECT_TRUE(FileExists(path));
  EXPECT_FALSE(FileExists(dir.Path("missing")));

  const Result<std::string> missing = ReadSmallFile(dir.Path("missing"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);

  if (::geteuid() != 0) {  // root reads anything
    const std::string locked = dir.Write("locked", "x", 0000);
    const Result<std::string> denied = ReadSmallFile(locked);
    ASSERT_FALSE(denied.ok());
    EXPECT_EQ(denied.status().code(), StatusCode::kForbidden);
    EXPECT_EQ(denied.status().message(), "open " + locked + ": Permission denied");
  }
}

}  // namespace
}  // namespace slicewright::client::internal

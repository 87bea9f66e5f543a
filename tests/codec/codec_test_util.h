// Helpers shared by the codec tests: reading testdata/codec files and asserting on a failed
// Result. Header-only, no state.
#pragma once

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "slicewright/base/result.h"
#include "slicewright/base/status.h"

namespace slicewright::codec::testing {

// The text of testdata/codec/<name>; fails the test if the file cannot be read.
inline std::string ReadTestdata(std::string_view name) {
  const std::string path = std::string(SW_SOURCE_DIR) + "/testdata/codec/" + std::string(name);
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The seed of a randomized test: $SW_TEST_SEED if set (to replay a failure), else a fresh one.
// Printed up front, so even a hang or crash names it.
inline unsigned TestSeed() {
  const char* forced = std::getenv("SW_TEST_SEED");  // NOLINT(concurrency-mt-unsafe)
  const unsigned seed = forced != nullptr ? static_cast<unsigned>(std::strtoul(forced, nullptr, 10))
                                          : std::random_device{}();
  std::cerr << "random seed " << seed << " (replay with SW_TEST_SEED=" << seed << ")\n";
  return seed;
}

// The status of a Result expected to have failed ("OK" when it unexpectedly succeeded).
template <typename T>
Status ErrorOf(const Result<T>& result) {
  return result.ok() ? Status() : result.status();
}

}  // namespace slicewright::codec::testing

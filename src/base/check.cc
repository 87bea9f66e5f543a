#include "slicewright/base/check.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>

namespace slicewright {
namespace {
std::atomic<std::uint64_t> g_bug_count{0};
}  // namespace

std::uint64_t InternalBugCount() { return g_bug_count.load(std::memory_order_relaxed); }

namespace internal {

void CheckFailed(const char* file, int line, const char* condition) {
  std::fprintf(stderr, "%s:%d: check failed: %s\n", file, line, condition);
  std::abort();
}

void ReportBug(const char* file, int line, const char* message) {
  g_bug_count.fetch_add(1, std::memory_order_relaxed);
  std::fprintf(stderr, "%s:%d: internal bug: %s\n", file, line, message);
#ifndef NDEBUG
  std::abort();
#endif
}

}  // namespace internal
}  // namespace slicewright

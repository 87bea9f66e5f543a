#include "slicewright/base/allocator.h"

#include <cstdlib>
#include <string_view>

#include <malloc.h>

namespace slicewright {
namespace {

constexpr int kMmapThresholdBytes = 32 << 20;  // glibc's maximum for the dynamic threshold
constexpr int kTrimThresholdBytes = 128 << 20;

}  // namespace

bool ConfigureAllocatorForReconcileLoops() {
  // Called once from main before any thread starts, so getenv and mallopt race with nothing.
  const char* tunables = std::getenv("GLIBC_TUNABLES");  // NOLINT(concurrency-mt-unsafe)
  if (tunables != nullptr &&
      std::string_view(tunables).find("glibc.malloc.") != std::string_view::npos) {
    return false;
  }
  // mallopt returns 0 on failure (an out-of-range value); the defaults then stay, which is safe.
  const bool mmap_set =
      mallopt(M_MMAP_THRESHOLD, kMmapThresholdBytes) != 0;  // NOLINT(concurrency-mt-unsafe)
  const bool trim_set =
      mallopt(M_TRIM_THRESHOLD, kTrimThresholdBytes) != 0;  // NOLINT(concurrency-mt-unsafe)
  return mmap_set && trim_set;
}

}  // namespace slicewright

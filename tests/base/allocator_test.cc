#include "slicewright/base/allocator.h"

#include <cstddef>
#include <cstring>
#include <memory>

#include <gtest/gtest.h>
#include <malloc.h>
#include <stdlib.h>

namespace slicewright {
namespace {

// A block between glibc's default mmap threshold (128 KiB, raised dynamically up to 32 MiB) and
// ours: without the setting such a block is a fresh mapping the first time it is allocated.
constexpr std::size_t kSyncSizedBlock = 8 << 20;

// The sanitizers replace malloc: glibc's thresholds and statistics do not apply to their heaps.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SW_SKIP_UNDER_SANITIZER() GTEST_SKIP() << "the sanitizer's allocator replaces glibc malloc"
#else
#define SW_SKIP_UNDER_SANITIZER() (void)0
#endif

TEST(AllocatorTest, SyncSizedBlocksComeFromTheHeapAndStayForReuse) {
  SW_SKIP_UNDER_SANITIZER();
  unsetenv("GLIBC_TUNABLES");
  ASSERT_TRUE(ConfigureAllocatorForReconcileLoops());
  const std::size_t mapped_before = mallinfo2().hblks;
  auto block = std::make_unique<char[]>(kSyncSizedBlock);
  std::memset(block.get(), 1, kSyncSizedBlock);  // touched, so a trim would have work to undo
  EXPECT_EQ(mallinfo2().hblks, mapped_before)
      << "an 8 MiB block was mmapped, not taken from the heap";
  block.reset();
  // Kept at the top of the heap (below the 128 MiB trim threshold), not handed back.
  EXPECT_GE(mallinfo2().keepcost, kSyncSizedBlock);
}

TEST(AllocatorTest, AnOperatorsMallocTunablesWin) {
  SW_SKIP_UNDER_SANITIZER();
  ASSERT_EQ(setenv("GLIBC_TUNABLES", "glibc.malloc.trim_threshold=0", 1), 0);
  EXPECT_FALSE(ConfigureAllocatorForReconcileLoops());
  ASSERT_EQ(setenv("GLIBC_TUNABLES", "glibc.rtld.optional_static_tls=0", 1), 0);
  EXPECT_TRUE(ConfigureAllocatorForReconcileLoops()) << "tunables of other subsystems do not count";
  unsetenv("GLIBC_TUNABLES");
}

}  // namespace
}  // namespace slicewright

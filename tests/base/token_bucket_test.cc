#include "slicewright/base/token_bucket.h"

#include <atomic>
#include <chrono>
#include <limits>
#include <thread>

#include <gtest/gtest.h>

#include "slicewright/base/clock.h"

namespace slicewright {
namespace {

using std::chrono::milliseconds;

TEST(TokenBucketTest, BurstThenOneTokenPerInterval) {
  FakeClock clock;
  auto bucket = TokenBucket::Create(clock, /*qps=*/10, /*burst=*/3);
  ASSERT_TRUE(bucket.ok());
  for (int i = 0; i < 3; ++i) EXPECT_EQ((*bucket)->Reserve(), Clock::Duration::zero());
  // Reservations queue up behind the refill: 100 ms, then 200 ms.
  EXPECT_EQ((*bucket)->Reserve(), milliseconds(100));
  EXPECT_EQ((*bucket)->Reserve(), milliseconds(200));
  clock.Advance(milliseconds(1000));  // 10 tokens refilled, 2 owed, capped at the burst
  for (int i = 0; i < 3; ++i) EXPECT_EQ((*bucket)->Reserve(), Clock::Duration::zero());
  EXPECT_GT((*bucket)->Reserve(), Clock::Duration::zero());
}

TEST(TokenBucketTest, RejectsBadParameters) {
  FakeClock clock;
  EXPECT_EQ(TokenBucket::Create(clock, 0, 1).status().code(), StatusCode::kInvalid);
  EXPECT_EQ(TokenBucket::Create(clock, 1, 0).status().code(), StatusCode::kInvalid);
  EXPECT_EQ(TokenBucket::Create(clock, std::numeric_limits<double>::infinity(), 1).status().code(),
            StatusCode::kInvalid);
}

// Wait() blocks on the clock until its reserved token exists.
TEST(TokenBucketTest, ConcurrentWaitBlocksUntilTheClockReachesTheToken) {
  FakeClock clock;
  auto bucket = TokenBucket::Create(clock, /*qps=*/2, /*burst=*/1);
  ASSERT_TRUE(bucket.ok());
  (*bucket)->Wait();  // the burst token: no wait
  std::atomic<bool> done{false};
  std::thread waiter([&] {
    (*bucket)->Wait();
    done = true;
  });
  while (clock.Waiters() == 0) std::this_thread::yield();
  clock.Advance(milliseconds(400));
  EXPECT_FALSE(done);
  clock.Advance(milliseconds(100));  // 500 ms: the token exists
  waiter.join();
  EXPECT_TRUE(done);
}

}  // namespace
}  // namespace slicewright

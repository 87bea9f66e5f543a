#include "slicewright/runtime/rate_limiter.h"

#include <chrono>
#include <memory>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace slicewright::runtime {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// Each failure doubles the key's delay from the base up to the cap; keys count separately, and
// Forget starts a key over.
TEST(ItemExponentialRateLimiterTest, DoublesUpToCapAndForgets) {
  ItemExponentialRateLimiter limiter(seconds(1), seconds(1000));
  const std::vector<Clock::Duration> want = {
      seconds(1),  seconds(2),   seconds(4),   seconds(8),   seconds(16),   seconds(32),
      seconds(64), seconds(128), seconds(256), seconds(512), seconds(1000), seconds(1000)};
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(limiter.When("a"), want[i]);
  }
  EXPECT_EQ(limiter.NumRequeues("a"), 12);
  EXPECT_EQ(limiter.When("b"), seconds(1));
  EXPECT_EQ(limiter.NumRequeues("b"), 1);

  limiter.Forget("a");
  EXPECT_EQ(limiter.NumRequeues("a"), 0);
  EXPECT_EQ(limiter.When("a"), seconds(1));
  EXPECT_EQ(limiter.NumRequeues("b"), 1);
}

// A key that keeps failing never overflows: the delay stays at the cap.
TEST(ItemExponentialRateLimiterTest, HugeExponentStaysAtCap) {
  ItemExponentialRateLimiter limiter(milliseconds(5), seconds(1000));
  Clock::Duration last{};
  for (int i = 0; i < 200; ++i) {
    last = limiter.When("k");
    ASSERT_GT(last, Clock::Duration::zero());
  }
  EXPECT_EQ(last, seconds(1000));
}

// The bucket lets a burst through at once, then spaces reservations 1/qps apart, and refills
// with time up to the burst.
TEST(BucketRateLimiterTest, BurstThenQps) {
  FakeClock clock;
  auto limiter = BucketRateLimiter::Create(clock, 10, 100);
  ASSERT_TRUE(limiter.ok()) << limiter.status().ToString();
  for (int i = 0; i < 100; ++i) {
    ASSERT_EQ((*limiter)->When("k" + std::to_string(i)), Clock::Duration::zero()) << i;
  }
  EXPECT_EQ((*limiter)->When("x"), milliseconds(100));
  EXPECT_EQ((*limiter)->When("y"), milliseconds(200));
  EXPECT_EQ((*limiter)->When("z"), milliseconds(300));
  // 0.3 s later the three reservations are paid; 1 s more refills 10 tokens, not more.
  clock.Advance(milliseconds(300) + seconds(1));
  for (int i = 0; i < 10; ++i) {
    ASSERT_EQ((*limiter)->When("r"), Clock::Duration::zero()) << i;
  }
  EXPECT_EQ((*limiter)->When("r"), milliseconds(100));
  // A long idle period refills to the burst and no further.
  clock.Advance(seconds(3600));
  for (int i = 0; i < 100; ++i) {
    ASSERT_EQ((*limiter)->When("s"), Clock::Duration::zero()) << i;
  }
  EXPECT_GT((*limiter)->When("s"), Clock::Duration::zero());
  EXPECT_EQ((*limiter)->NumRequeues("s"), 0);
}

// Bad bucket parameters (they may come from flags) are kInvalid, not a crash.
TEST(BucketRateLimiterTest, RejectsBadParameters) {
  FakeClock clock;
  Status zero_qps = BucketRateLimiter::Create(clock, 0, 1).status();
  EXPECT_EQ(zero_qps.code(), StatusCode::kInvalid);
  EXPECT_EQ(zero_qps.ToString(), "token bucket: qps must be a positive number");
  Status zero_burst = BucketRateLimiter::Create(clock, 1, 0).status();
  EXPECT_EQ(zero_burst.code(), StatusCode::kInvalid);
  EXPECT_EQ(zero_burst.ToString(), "token bucket: burst must be at least 1");
  DefaultRateLimiterOptions options;
  options.base_delay = -seconds(1);
  EXPECT_EQ(DefaultControllerRateLimiter(clock, options).status().code(), StatusCode::kInvalid);
}

// The default combines per-key backoff (1 s .. 1000 s) with the 10 qps / 100 burst bucket: the
// longer wait wins, and Forget resets the backoff only.
TEST(DefaultControllerRateLimiterTest, MaxOfBackoffAndBucket) {
  FakeClock clock;
  auto limiter = DefaultControllerRateLimiter(clock);
  ASSERT_TRUE(limiter.ok());
  RateLimiter& rl = **limiter;
  EXPECT_EQ(rl.When("a"), seconds(1));
  EXPECT_EQ(rl.When("a"), seconds(2));
  EXPECT_EQ(rl.NumRequeues("a"), 2);
  rl.Forget("a");
  EXPECT_EQ(rl.NumRequeues("a"), 0);
  EXPECT_EQ(rl.When("a"), seconds(1));
  // Drain the bucket (3 tokens went above): 97 more keys, then the bucket dominates the backoff.
  for (int i = 0; i < 97; ++i) {
    ASSERT_EQ(rl.When("k" + std::to_string(i)), seconds(1)) << i;
  }
  for (int i = 0; i < 20; ++i) {
    rl.When("fill" + std::to_string(i));  // reservations up to 2 s ahead
  }
  EXPECT_EQ(rl.When("late"), milliseconds(2100));
}

}  // namespace
}  // namespace slicewright::runtime

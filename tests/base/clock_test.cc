#include "slicewright/base/clock.h"

#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "slicewright/base/mutex.h"

namespace slicewright {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// A fake clock moves only when advanced, and never backwards.
TEST(FakeClockTest, MovesOnlyWhenAdvanced) {
  FakeClock clock;
  const Clock::TimePoint start = clock.Now();
  EXPECT_EQ(clock.Now(), start);
  clock.Advance(seconds(3));
  EXPECT_EQ(clock.Now() - start, seconds(3));
  clock.Advance(-seconds(1));
  EXPECT_EQ(clock.Now() - start, seconds(3));
}

// A deadline already reached returns at once, without waiting for a notify.
TEST(FakeClockTest, WaitUntilPastDeadlineReturnsAtOnce) {
  FakeClock clock;
  Mutex mu;
  CondVar cv;
  MutexLock lock(mu);
  clock.WaitUntil(cv, mu, clock.Now());
  EXPECT_EQ(clock.Waiters(), 0);
}

// A thread waiting for a fake deadline wakes when the clock is advanced past it, and not before.
TEST(FakeClockTest, ConcurrentAdvanceWakesWaiter) {
  FakeClock clock;
  Mutex mu;
  CondVar cv;
  const Clock::TimePoint deadline = clock.Now() + seconds(10);
  bool woke = false;
  std::thread waiter([&] {
    MutexLock lock(mu);
    while (clock.Now() < deadline) {
      clock.WaitUntil(cv, mu, deadline);
    }
    woke = true;
  });
  while (clock.Waiters() == 0) {
    std::this_thread::yield();
  }
  clock.Advance(seconds(5));  // not yet: the waiter is not woken (it is not due)
  {
    MutexLock guard(mu);
    EXPECT_FALSE(woke);
  }
  clock.Advance(seconds(5));
  waiter.join();
  EXPECT_TRUE(woke);
  EXPECT_EQ(clock.Waiters(), 0);
}

// The system clock is steady, and its WaitUntil honours a real deadline.
TEST(SystemClockTest, WaitUntilHonoursDeadline) {
  Clock& clock = SystemClock::Get();
  Mutex mu;
  CondVar cv;
  MutexLock lock(mu);
  const Clock::TimePoint start = clock.Now();
  const Clock::TimePoint deadline = start + milliseconds(20);
  while (clock.Now() < deadline) {
    clock.WaitUntil(cv, mu, deadline);
  }
  EXPECT_GE(clock.Now() - start, milliseconds(20));
}

}  // namespace
}  // namespace slicewright

#include "slicewright/base/mutex.h"

#include <atomic>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

namespace slicewright {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using std::chrono::steady_clock;

// A try from another thread: whether `mu` was free (it is released again at once).
bool FreeElsewhere(Mutex& mu) {
  bool free = false;
  std::thread([&] {
    if (mu.try_lock()) {
      free = true;
      mu.unlock();
    }
  }).join();
  return free;
}

// A waiter wakes when another thread changes the condition under the mutex and notifies, and it
// holds the mutex again when Wait() returns.
TEST(CondVarTest, ConcurrentWaitWakesOnNotify) {
  Mutex mu;
  CondVar cv;
  bool ready = false;
  bool seen = false;
  bool held_after_wait = false;
  std::thread waiter([&] {
    MutexLock lock(mu);
    const auto give_up = steady_clock::now() + seconds(30);
    while (!ready && steady_clock::now() < give_up) cv.WaitUntil(mu, give_up);
    seen = ready;
    held_after_wait = !FreeElsewhere(mu);
  });
  {
    MutexLock lock(mu);
    ready = true;
    cv.NotifyAll();
  }
  waiter.join();
  MutexLock lock(mu);
  EXPECT_TRUE(seen);
  EXPECT_TRUE(held_after_wait);
}

// Without a notify, WaitUntil() returns once the deadline has passed, with the mutex held.
TEST(CondVarTest, WaitUntilReturnsAtDeadline) {
  Mutex mu;
  CondVar cv;
  MutexLock lock(mu);
  const auto start = steady_clock::now();
  const auto deadline = start + milliseconds(20);
  while (steady_clock::now() < deadline) cv.WaitUntil(mu, deadline);
  EXPECT_GE(steady_clock::now() - start, milliseconds(20));
  EXPECT_FALSE(FreeElsewhere(mu));
}

// Unlock() lets other threads in before the scope ends; Lock() takes the mutex back, and the
// destructor releases it only when held.
TEST(MutexLockTest, UnlockAndLockAgainInsideTheScope) {
  Mutex mu;
  {
    MutexLock lock(mu);
    EXPECT_FALSE(FreeElsewhere(mu));
    lock.Unlock();
    EXPECT_TRUE(FreeElsewhere(mu));
    lock.Lock();
    EXPECT_FALSE(FreeElsewhere(mu));
    lock.Unlock();
  }
  EXPECT_TRUE(FreeElsewhere(mu));
}

// Readers share a SharedMutex: a second reader gets in while the first holds it.
TEST(SharedMutexTest, ConcurrentReadersShare) {
  SharedMutex mu;
  std::atomic<bool> second_in{false};
  std::thread second;
  {
    ReaderMutexLock first(mu);
    second = std::thread([&] {
      ReaderMutexLock lock(mu);
      second_in.store(true);
    });
    const auto give_up = steady_clock::now() + seconds(30);
    while (!second_in.load() && steady_clock::now() < give_up) std::this_thread::yield();
    EXPECT_TRUE(second_in.load());
  }
  second.join();
  WriterMutexLock writer(mu);  // and a writer gets in once both are gone
}

}  // namespace
}  // namespace slicewright

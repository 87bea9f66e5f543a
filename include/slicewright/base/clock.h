// Clock is the seam for time (style §6.5): code that waits or measures reads a Clock&, production
// passes SystemClock, tests pass a FakeClock they advance by hand, so no test sleeps. Both are
// thread-safe; a Clock must outlive everything that holds a reference to it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <vector>

namespace slicewright {

class Clock {
 public:
  using Duration = std::chrono::steady_clock::duration;
  using TimePoint = std::chrono::steady_clock::time_point;

  Clock() = default;
  Clock(const Clock&) = delete;
  Clock& operator=(const Clock&) = delete;
  virtual ~Clock() = default;

  // Monotonic time (steady, never goes back).
  virtual TimePoint Now() const = 0;

  // Blocks on `cv` until it is notified or Now() reaches `deadline`, like
  // cv.wait_until(lock, deadline). `lock` must hold its mutex on entry and holds it again on
  // return. Wake-ups may be spurious, so callers re-check their condition in a loop.
  virtual void WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                         TimePoint deadline) = 0;

  // Blocks until Now() reaches `deadline` (a rate limit's wait, a retry's backoff).
  void SleepUntil(TimePoint deadline);
};

// The real steady clock.
class SystemClock final : public Clock {
 public:
  // The process-wide instance (it has no state).
  static SystemClock& Get();

  TimePoint Now() const override;
  void WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                 TimePoint deadline) override;
};

// A clock that moves only when Advance() is called. Advance() wakes every WaitUntil() whose
// deadline has come, so a thread waiting for a deadline reacts to fake time as to real time.
class FakeClock final : public Clock {
 public:
  // Starts at an arbitrary non-zero time, so code that treats the epoch as "unset" is not fooled.
  FakeClock();
  explicit FakeClock(TimePoint start);

  TimePoint Now() const override;
  void WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                 TimePoint deadline) override;

  // Moves time forward by `delta` (a negative delta is ignored: the clock is steady) and wakes the
  // waiters whose deadline has passed.
  void Advance(Duration delta);

  // How many threads are blocked in WaitUntil() now. Lets a test wait until a background thread
  // has gone to sleep on its next deadline.
  int Waiters() const;

 private:
  // One blocked WaitUntil() call. `active` (under `state_mu`) turns false before the waiter
  // returns, so Advance() never touches a condition variable or mutex that may be gone.
  struct Waiter {
    std::mutex state_mu;
    bool active = true;
    std::mutex* mu = nullptr;
    std::condition_variable* cv = nullptr;
    TimePoint deadline;
  };

  mutable std::mutex mu_;
  TimePoint now_;
  std::vector<std::shared_ptr<Waiter>> waiters_;
};

}  // namespace slicewright

// Clock is the seam for time (style §6.5): code that waits or measures reads a Clock&, production
// passes SystemClock, tests pass a FakeClock they advance by hand, so no test sleeps. Both are
// thread-safe; a Clock must outlive everything that holds a reference to it.
#pragma once

#include <chrono>
#include <memory>
#include <vector>

#include "slicewright/base/mutex.h"

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
  // cv.WaitUntil(mu, deadline): `mu` is held on entry and again on return. Wake-ups may be
  // spurious, so callers re-check their condition in a loop.
  virtual void WaitUntil(CondVar& cv, Mutex& mu, TimePoint deadline) SW_REQUIRES(mu) = 0;

  // Blocks until Now() reaches `deadline` (a rate limit's wait, a retry's backoff).
  void SleepUntil(TimePoint deadline);
};

// The real steady clock.
class SystemClock final : public Clock {
 public:
  // The process-wide instance (it has no state).
  static SystemClock& Get();

  TimePoint Now() const override;
  void WaitUntil(CondVar& cv, Mutex& mu, TimePoint deadline) SW_REQUIRES(mu) override;
};

// A clock that moves only when Advance() is called. Advance() wakes every WaitUntil() whose
// deadline has come, so a thread waiting for a deadline reacts to fake time as to real time.
class FakeClock final : public Clock {
 public:
  // Starts at an arbitrary non-zero time, so code that treats the epoch as "unset" is not fooled.
  FakeClock();
  explicit FakeClock(TimePoint start);

  TimePoint Now() const override;
  void WaitUntil(CondVar& cv, Mutex& mu, TimePoint deadline) SW_REQUIRES(mu) override;

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
    Mutex state_mu;
    bool active SW_GUARDED_BY(state_mu) = true;
    Mutex* mu = nullptr;  // set before the waiter is shared, then read-only
    CondVar* cv = nullptr;
    TimePoint deadline;
  };

  mutable Mutex mu_;
  TimePoint now_ SW_GUARDED_BY(mu_);
  std::vector<std::shared_ptr<Waiter>> waiters_ SW_GUARDED_BY(mu_);
};

}  // namespace slicewright

#include "slicewright/base/clock.h"

#include <algorithm>

namespace slicewright {

void Clock::SleepUntil(TimePoint deadline) {
  Mutex mu;
  CondVar never_notified;
  MutexLock lock(mu);
  while (Now() < deadline) WaitUntil(never_notified, mu, deadline);
}

SystemClock& SystemClock::Get() {
  static SystemClock clock;
  return clock;
}

Clock::TimePoint SystemClock::Now() const { return std::chrono::steady_clock::now(); }

void SystemClock::WaitUntil(CondVar& cv, Mutex& mu, TimePoint deadline) {
  cv.WaitUntil(mu, deadline);
}

FakeClock::FakeClock() : FakeClock(TimePoint(std::chrono::hours(1))) {}

FakeClock::FakeClock(TimePoint start) : now_(start) {}

Clock::TimePoint FakeClock::Now() const {
  MutexLock guard(mu_);
  return now_;
}

void FakeClock::WaitUntil(CondVar& cv, Mutex& mu, TimePoint deadline) {
  auto waiter = std::make_shared<Waiter>();
  waiter->mu = &mu;
  waiter->cv = &cv;
  waiter->deadline = deadline;
  {
    // Registered while the caller still holds its lock: an Advance() from here on must take that
    // lock before notifying, which it can only do once we are inside cv.wait(), so no wake-up is
    // lost between this check and the wait.
    MutexLock guard(mu_);
    if (now_ >= deadline) {
      return;
    }
    waiters_.push_back(waiter);
  }
  cv.Wait(mu);
  // Deregister without the caller's lock: Advance() holds state_mu while it takes that lock.
  mu.unlock();
  {
    MutexLock state(waiter->state_mu);
    waiter->active = false;
  }
  {
    MutexLock guard(mu_);
    std::erase(waiters_, waiter);
  }
  mu.lock();
}

void FakeClock::Advance(Duration delta) {
  std::vector<std::shared_ptr<Waiter>> due;
  {
    MutexLock guard(mu_);
    if (delta > Duration::zero()) {
      now_ += delta;
    }
    for (const auto& waiter : waiters_) {
      if (waiter->deadline <= now_) {
        due.push_back(waiter);
      }
    }
  }
  for (const auto& waiter : due) {
    MutexLock state(waiter->state_mu);
    if (!waiter->active) {
      continue;
    }
    // Taking the waiter's mutex orders this notify after its cv.wait() began.
    { MutexLock caller(*waiter->mu); }
    waiter->cv->NotifyAll();
  }
}

int FakeClock::Waiters() const {
  MutexLock guard(mu_);
  return static_cast<int>(waiters_.size());
}

}  // namespace slicewright

#include "slicewright/base/clock.h"

#include <algorithm>

namespace slicewright {

void Clock::SleepUntil(TimePoint deadline) {
  std::mutex mu;
  std::condition_variable never_notified;
  std::unique_lock<std::mutex> lock(mu);
  while (Now() < deadline) WaitUntil(never_notified, lock, deadline);
}

SystemClock& SystemClock::Get() {
  static SystemClock clock;
  return clock;
}

Clock::TimePoint SystemClock::Now() const { return std::chrono::steady_clock::now(); }

void SystemClock::WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                            TimePoint deadline) {
  cv.wait_until(lock, deadline);
}

FakeClock::FakeClock() : FakeClock(TimePoint(std::chrono::hours(1))) {}

FakeClock::FakeClock(TimePoint start) : now_(start) {}

Clock::TimePoint FakeClock::Now() const {
  std::lock_guard<std::mutex> guard(mu_);
  return now_;
}

void FakeClock::WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                          TimePoint deadline) {
  auto waiter = std::make_shared<Waiter>();
  waiter->mu = lock.mutex();
  waiter->cv = &cv;
  waiter->deadline = deadline;
  {
    // Registered while the caller still holds its lock: an Advance() from here on must take that
    // lock before notifying, which it can only do once we are inside cv.wait(), so no wake-up is
    // lost between this check and the wait.
    std::lock_guard<std::mutex> guard(mu_);
    if (now_ >= deadline) {
      return;
    }
    waiters_.push_back(waiter);
  }
  cv.wait(lock);
  // Deregister without the caller's lock: Advance() holds state_mu while it takes that lock.
  lock.unlock();
  {
    std::lock_guard<std::mutex> state(waiter->state_mu);
    waiter->active = false;
  }
  {
    std::lock_guard<std::mutex> guard(mu_);
    std::erase(waiters_, waiter);
  }
  lock.lock();
}

void FakeClock::Advance(Duration delta) {
  std::vector<std::shared_ptr<Waiter>> due;
  {
    std::lock_guard<std::mutex> guard(mu_);
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
    std::lock_guard<std::mutex> state(waiter->state_mu);
    if (!waiter->active) {
      continue;
    }
    // Taking the waiter's mutex orders this notify after its cv.wait() began.
    { std::lock_guard<std::mutex> caller(*waiter->mu); }
    waiter->cv->notify_all();
  }
}

int FakeClock::Waiters() const {
  std::lock_guard<std::mutex> guard(mu_);
  return static_cast<int>(waiters_.size());
}

}  // namespace slicewright

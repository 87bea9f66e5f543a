// A FakeClock that knows who sleeps on it, so a test can move time only once every background
// thread has finished reacting to the last move: fake times recorded by those threads are then
// exact to one step, not merely lower bounds. Thread-safe.
#pragma once

#include <chrono>
#include <functional>
#include <set>
#include <thread>

#include "slicewright/base/clock.h"
#include "slicewright/base/mutex.h"

namespace slicewright::runtime::testing {

class SteppedClock final : public Clock {
 public:
  TimePoint Now() const override { return fake_.Now(); }

  void WaitUntil(CondVar& cv, Mutex& mu, TimePoint deadline) SW_REQUIRES(mu) override {
    std::multiset<TimePoint>::iterator entry;
    {
      MutexLock guard(mu_);
      entry = deadlines_.insert(deadline);
    }
    fake_.WaitUntil(cv, mu, deadline);
    MutexLock guard(mu_);
    deadlines_.erase(entry);
  }

  void Advance(Duration delta) { fake_.Advance(delta); }

  // True when exactly `sleepers` threads wait on this clock and none of them is due (a due one
  // has been woken and is still running).
  bool Settled(int sleepers) const {
    const TimePoint now = fake_.Now();
    MutexLock guard(mu_);
    return static_cast<int>(deadlines_.size()) == sleepers &&
           (deadlines_.empty() || *deadlines_.begin() > now);
  }

  // Waits (30 s of real time at most) until `sleepers` threads have settled; false on timeout.
  bool WaitSettled(int sleepers) const {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!Settled(sleepers)) {
      if (std::chrono::steady_clock::now() >= give_up) return false;
      std::this_thread::yield();
    }
    return true;
  }

  // Advances by `step` each time `sleepers` threads have settled, until `done` holds (true) or
  // 30 s of real time pass (false). Threads that record Now() must do so before they sleep again
  // (not on a thread of their own), or the record may be late by a few steps.
  bool AdvanceUntil(const std::function<bool()>& done, int sleepers, Duration step) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < give_up) {
      if (done()) return true;
      if (Settled(sleepers)) {
        Advance(step);
      } else {
        std::this_thread::yield();
      }
    }
    return done();
  }

 private:
  FakeClock fake_;
  mutable Mutex mu_;
  std::multiset<TimePoint> deadlines_ SW_GUARDED_BY(mu_);
};

}  // namespace slicewright::runtime::testing

#include "slicewright/base/token_bucket.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace slicewright {

Result<std::unique_ptr<TokenBucket>> TokenBucket::Create(Clock& clock, double qps, int burst) {
  if (!(qps > 0) || !std::isfinite(qps)) {
    return InvalidError("token bucket: qps must be a positive number");
  }
  if (burst < 1) {
    return InvalidError("token bucket: burst must be at least 1");
  }
  // Not make_unique: the constructor is private so that Create() is the only way in.
  return std::unique_ptr<TokenBucket>(new TokenBucket(clock, qps, burst));
}

TokenBucket::TokenBucket(Clock& clock, double qps, int burst)
    : clock_(clock), qps_(qps), burst_(burst), tokens_(burst), last_(clock.Now()) {}

Clock::Duration TokenBucket::Reserve() {
  MutexLock guard(mu_);
  const Clock::TimePoint now = clock_.Now();
  if (now > last_) {
    const double elapsed = std::chrono::duration<double>(now - last_).count();
    tokens_ = std::min(burst_, tokens_ + elapsed * qps_);
    last_ = now;
  }
  tokens_ -= 1;
  if (tokens_ >= 0) {
    return Clock::Duration::zero();
  }
  // The reserved token arrives when the deficit has refilled.
  return std::chrono::duration_cast<Clock::Duration>(
      std::chrono::duration<double>(-tokens_ / qps_));
}

void TokenBucket::Wait() {
  const Clock::Duration wait = Reserve();
  if (wait <= Clock::Duration::zero()) return;
  clock_.SleepUntil(clock_.Now() + wait);
}

}  // namespace slicewright

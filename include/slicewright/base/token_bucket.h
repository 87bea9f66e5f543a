// TokenBucket is the token bucket of golang.org/x/time/rate as client-go uses it twice: for the
// work queue's overall retry limit and for the API client's request rate (--kube-api-qps and
// --kube-api-burst). It holds up to `burst` tokens and refills `qps` per second. Thread-safe; the
// Clock must outlive it.
#pragma once

#include <memory>

#include "slicewright/base/clock.h"
#include "slicewright/base/mutex.h"
#include "slicewright/base/result.h"

namespace slicewright {

class TokenBucket final {
 public:
  // kInvalid unless qps > 0 (and finite) and burst >= 1: both may come from flags. Starts full.
  static Result<std::unique_ptr<TokenBucket>> Create(Clock& clock, double qps, int burst);
  TokenBucket(const TokenBucket&) = delete;
  TokenBucket& operator=(const TokenBucket&) = delete;

  // Takes a token and returns how long until it really exists: zero while tokens are left;
  // otherwise the token is reserved ahead of the refill, so callers queue up fairly.
  Clock::Duration Reserve();
  // Reserve(), then waits on the clock until the token exists.
  void Wait();

 private:
  TokenBucket(Clock& clock, double qps, int burst);

  Clock& clock_;
  const double qps_;
  const double burst_;
  Mutex mu_;
  double tokens_ SW_GUARDED_BY(mu_);  // negative: reservations made ahead of the refill
  Clock::TimePoint last_ SW_GUARDED_BY(mu_);
};

}  // namespace slicewright

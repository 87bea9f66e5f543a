// Rate limiters decide how long a failed key waits before its retry (client-go's
// util/workqueue/default_rate_limiters.go, rebuilt): a per-key exponential backoff, an overall
// token bucket, and the maximum of several. All are thread-safe; a limiter that reads time holds a
// Clock& that must outlive it.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "slicewright/base/clock.h"
#include "slicewright/base/mutex.h"
#include "slicewright/base/result.h"
#include "slicewright/base/token_bucket.h"

namespace slicewright::runtime {

// The seam between WorkQueue::AddRateLimited and a retry policy.
class RateLimiter {
 public:
  RateLimiter() = default;
  RateLimiter(const RateLimiter&) = delete;
  RateLimiter& operator=(const RateLimiter&) = delete;
  virtual ~RateLimiter() = default;

  // How long `key` should wait before it is processed again; counts one more failure of it.
  virtual Clock::Duration When(const std::string& key) = 0;
  // Forgets `key`'s failures (it succeeded); later When() calls start from the beginning.
  virtual void Forget(const std::string& key) = 0;
  // How many When() calls `key` has had since it was last forgotten.
  virtual int NumRequeues(const std::string& key) const = 0;
};

// base * 2^failures, capped at max (ItemExponentialFailureRateLimiter).
class ItemExponentialRateLimiter final : public RateLimiter {
 public:
  ItemExponentialRateLimiter(Clock::Duration base, Clock::Duration max);

  Clock::Duration When(const std::string& key) override;
  void Forget(const std::string& key) override;
  int NumRequeues(const std::string& key) const override;

 private:
  const Clock::Duration base_;
  const Clock::Duration max_;
  mutable Mutex mu_;
  std::unordered_map<std::string, int> failures_ SW_GUARDED_BY(mu_);
};

// One token bucket for all keys (BucketRateLimiter over golang.org/x/time/rate): it holds up to
// `burst` tokens and refills `qps` per second. Each When() reserves a token; when none is left the
// reservation is in the future and When() returns the wait until it. Keys are not tracked:
// Forget() does nothing and NumRequeues() is 0.
class BucketRateLimiter final : public RateLimiter {
 public:
  // kInvalid unless qps > 0 (and finite) and burst >= 1: both may come from flags. Starts full.
  static Result<std::unique_ptr<BucketRateLimiter>> Create(Clock& clock, double qps, int burst);

  Clock::Duration When(const std::string& key) override;
  void Forget(const std::string& key) override;
  int NumRequeues(const std::string& key) const override;

 private:
  explicit BucketRateLimiter(std::unique_ptr<TokenBucket> bucket);

  const std::unique_ptr<TokenBucket> bucket_;
};

// The longest wait of all its limiters (MaxOfRateLimiter); NumRequeues is their maximum and
// Forget forgets in all of them.
class MaxOfRateLimiter final : public RateLimiter {
 public:
  explicit MaxOfRateLimiter(std::vector<std::unique_ptr<RateLimiter>> limiters);

  Clock::Duration When(const std::string& key) override;
  void Forget(const std::string& key) override;
  int NumRequeues(const std::string& key) const override;

 private:
  std::vector<std::unique_ptr<RateLimiter>> limiters_;
};

// The controller default asked for by issue #4 and style §6.5: per-key exponential backoff from
// 1 s to 1000 s, combined with one bucket of 10 qps and burst 100 for all keys. client-go's own
// DefaultControllerRateLimiter has the same shape but starts the backoff at 5 ms.
struct DefaultRateLimiterOptions {
  Clock::Duration base_delay = std::chrono::seconds(1);
  Clock::Duration max_delay = std::chrono::seconds(1000);
  double qps = 10;
  int burst = 100;
};

// MaxOf(ItemExponential(base_delay, max_delay), Bucket(qps, burst)). kInvalid for a bucket that
// BucketRateLimiter::Create rejects, or a negative delay.
Result<std::unique_ptr<RateLimiter>> DefaultControllerRateLimiter(
    Clock& clock, const DefaultRateLimiterOptions& options = {});

}  // namespace slicewright::runtime

#include "slicewright/runtime/rate_limiter.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace slicewright::runtime {

ItemExponentialRateLimiter::ItemExponentialRateLimiter(Clock::Duration base, Clock::Duration max)
    : base_(base), max_(max) {}

Clock::Duration ItemExponentialRateLimiter::When(const std::string& key) {
  int exponent = 0;
  {
    MutexLock guard(mu_);
    exponent = failures_[key]++;
  }
  // In floating point first: base * 2^exponent overflows the integer duration long before the
  // exponent stops growing for a key that keeps failing.
  const double backoff = static_cast<double>(base_.count()) * std::ldexp(1.0, exponent);
  if (!(backoff < static_cast<double>(max_.count()))) {
    return max_;
  }
  return Clock::Duration(static_cast<Clock::Duration::rep>(backoff));
}

void ItemExponentialRateLimiter::Forget(const std::string& key) {
  MutexLock guard(mu_);
  failures_.erase(key);
}

int ItemExponentialRateLimiter::NumRequeues(const std::string& key) const {
  MutexLock guard(mu_);
  auto it = failures_.find(key);
  return it == failures_.end() ? 0 : it->second;
}

Result<std::unique_ptr<BucketRateLimiter>> BucketRateLimiter::Create(Clock& clock, double qps,
                                                                     int burst) {
  SW_ASSIGN_OR_RETURN(std::unique_ptr<TokenBucket> bucket, TokenBucket::Create(clock, qps, burst));
  // Not make_unique: the constructor is private so that Create() is the only way in.
  return std::unique_ptr<BucketRateLimiter>(new BucketRateLimiter(std::move(bucket)));
}

BucketRateLimiter::BucketRateLimiter(std::unique_ptr<TokenBucket> bucket)
    : bucket_(std::move(bucket)) {}

Clock::Duration BucketRateLimiter::When(const std::string& /*key*/) { return bucket_->Reserve(); }

void BucketRateLimiter::Forget(const std::string& /*key*/) {}

int BucketRateLimiter::NumRequeues(const std::string& /*key*/) const { return 0; }

MaxOfRateLimiter::MaxOfRateLimiter(std::vector<std::unique_ptr<RateLimiter>> limiters)
    : limiters_(std::move(limiters)) {}

Clock::Duration MaxOfRateLimiter::When(const std::string& key) {
  Clock::Duration longest = Clock::Duration::zero();
  // Every limiter sees every failure, as upstream: each keeps its own count.
  for (const auto& limiter : limiters_) {
    longest = std::max(longest, limiter->When(key));
  }
  return longest;
}

void MaxOfRateLimiter::Forget(const std::string& key) {
  for (const auto& limiter : limiters_) {
    limiter->Forget(key);
  }
}

int MaxOfRateLimiter::NumRequeues(const std::string& key) const {
  int most = 0;
  for (const auto& limiter : limiters_) {
    most = std::max(most, limiter->NumRequeues(key));
  }
  return most;
}

Result<std::unique_ptr<RateLimiter>> DefaultControllerRateLimiter(
    Clock& clock, const DefaultRateLimiterOptions& options) {
  if (options.base_delay < Clock::Duration::zero() || options.max_delay < Clock::Duration::zero()) {
    return InvalidError("backoff delays must not be negative");
  }
  SW_ASSIGN_OR_RETURN(auto bucket, BucketRateLimiter::Create(clock, options.qps, options.burst));
  std::vector<std::unique_ptr<RateLimiter>> limiters;
  limiters.push_back(
      std::make_unique<ItemExponentialRateLimiter>(options.base_delay, options.max_delay));
  limiters.push_back(std::move(bucket));
  return std::unique_ptr<RateLimiter>(std::make_unique<MaxOfRateLimiter>(std::move(limiters)));
}

}  // namespace slicewright::runtime

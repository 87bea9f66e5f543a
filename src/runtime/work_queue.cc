#include "slicewright/runtime/work_queue.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "slicewright/base/thread_name.h"

namespace slicewright::runtime {
namespace {

double Seconds(Clock::Duration duration) { return std::chrono::duration<double>(duration).count(); }

}  // namespace

std::vector<double> WorkQueueDurationBuckets() {
  // Computed by repeated multiplication exactly as client-go's ExponentialBuckets(10e-9, 10, 10),
  // not written as decimal literals: two products drift in the last bit, so upstream's le labels
  // read "9.999999999999999e-06" and "9.999999999999999e-05", and queries that select a bucket by
  // its le string must find the same text here. The parameters are valid, so it cannot fail.
  return ExponentialBuckets(10e-9, 10, 10).value();
}

Result<std::unique_ptr<WorkQueue>> WorkQueue::Create(WorkQueueOptions options) {
  Clock& clock = options.clock != nullptr ? *options.clock : SystemClock::Get();
  std::unique_ptr<RateLimiter> rate_limiter = std::move(options.rate_limiter);
  if (rate_limiter == nullptr) {
    SW_ASSIGN_OR_RETURN(rate_limiter, DefaultControllerRateLimiter(clock));
  }
  Metrics metrics;
  if (options.metrics != nullptr) {
    if (options.name.empty()) {
      return InvalidError("a work queue that reports metrics needs a name");
    }
    Registry& registry = *options.metrics;
    const std::vector<std::string> labels = {"name"};
    const std::initializer_list<std::string_view> values = {options.name};
    // Help texts as client-go's (component-base/metrics/prometheus/workqueue), so dashboards and
    // alerts written for kube-controller-manager read ours unchanged.
    SW_ASSIGN_OR_RETURN(auto* depth, registry.AddGaugeFamily("workqueue_depth",
                                                             "Current depth of workqueue", labels));
    SW_ASSIGN_OR_RETURN(metrics.depth, depth->WithLabelValues(values));
    SW_ASSIGN_OR_RETURN(
        auto* adds, registry.AddCounterFamily("workqueue_adds_total",
                                              "Total number of adds handled by workqueue", labels));
    SW_ASSIGN_OR_RETURN(metrics.adds, adds->WithLabelValues(values));
    SW_ASSIGN_OR_RETURN(
        auto* queue_duration,
        registry.AddHistogramFamily(
            "workqueue_queue_duration_seconds",
            "How long in seconds an item stays in workqueue before being requested.", labels,
            WorkQueueDurationBuckets()));
    SW_ASSIGN_OR_RETURN(metrics.queue_duration, queue_duration->WithLabelValues(values));
    SW_ASSIGN_OR_RETURN(
        auto* work_duration,
        registry.AddHistogramFamily("workqueue_work_duration_seconds",
                                    "How long in seconds processing an item from workqueue takes.",
                                    labels, WorkQueueDurationBuckets()));
    SW_ASSIGN_OR_RETURN(metrics.work_duration, work_duration->WithLabelValues(values));
    SW_ASSIGN_OR_RETURN(auto* retries, registry.AddCounterFamily(
                                           "workqueue_retries_total",
                                           "Total number of retries handled by workqueue", labels));
    SW_ASSIGN_OR_RETURN(metrics.retries, retries->WithLabelValues(values));
    SW_ASSIGN_OR_RETURN(
        auto* unfinished,
        registry.AddGaugeFamily(
            "workqueue_unfinished_work_seconds",
            "How many seconds of work has done that is in progress and hasn't been observed by "
            "work_duration. Large values indicate stuck threads. One can deduce the number of "
            "stuck threads by observing the rate at which this increases.",
            labels));
    SW_ASSIGN_OR_RETURN(metrics.unfinished_work, unfinished->WithLabelValues(values));
    SW_ASSIGN_OR_RETURN(
        auto* longest,
        registry.AddGaugeFamily(
            "workqueue_longest_running_processor_seconds",
            "How many seconds has the longest running processor for workqueue been running.",
            labels));
    SW_ASSIGN_OR_RETURN(metrics.longest_running, longest->WithLabelValues(values));
  }
  // Not make_unique: the constructor is private so that Create() is the only way in.
  std::unique_ptr<WorkQueue> queue(new WorkQueue(clock, std::move(rate_limiter), metrics));
  if (options.metrics != nullptr) {
    // client-go refreshes these two gauges every 500 ms from a goroutine; computing them at
    // scrape time is exact, costs nothing between scrapes, and is deterministic under a FakeClock.
    queue->collect_hook_ =
        options.metrics->OnCollect([q = queue.get()] { q->UpdateUnfinishedWork(); });
  }
  return queue;
}

WorkQueue::WorkQueue(Clock& clock, std::unique_ptr<RateLimiter> rate_limiter, Metrics metrics)
    : clock_(clock), rate_limiter_(std::move(rate_limiter)), metrics_(metrics) {
  delay_thread_ = std::thread([this, name = ThreadName("wq-delay")] {
    name.Apply();
    DelayLoop();
  });
}

WorkQueue::~WorkQueue() {
  // First, so no scrape runs UpdateUnfinishedWork() on a queue being torn down.
  collect_hook_ = Registry::CollectHook();
  ShutDown();
  delay_thread_.join();
}

void WorkQueue::Add(const std::string& key) {
  MutexLock guard(mu_);
  AddLocked(key, clock_.Now());
}

void WorkQueue::AddLocked(const std::string& key, Clock::TimePoint now) {
  if (shutting_down_ || dirty_.contains(key)) {
    return;
  }
  // Depth counts dirty keys, including one waiting for its worker's Done(), as client-go does.
  if (metrics_.adds != nullptr) {
    metrics_.adds->Inc();
    metrics_.depth->Inc();
  }
  added_at_.emplace(key, now);
  dirty_.insert(key);
  if (processing_.contains(key)) {
    return;  // Done() queues it: never two workers on one key
  }
  queue_.push_back(key);
  ready_cv_.NotifyOne();
}

void WorkQueue::AddAfter(const std::string& key, Clock::Duration delay) {
  MutexLock guard(mu_);
  if (shutting_down_) {
    return;
  }
  if (metrics_.retries != nullptr) {
    metrics_.retries->Inc();
  }
  const Clock::TimePoint now = clock_.Now();
  if (delay <= Clock::Duration::zero()) {
    AddLocked(key, now);
    return;
  }
  const Clock::TimePoint ready = now + delay;
  if (auto it = waiting_index_.find(key); it != waiting_index_.end()) {
    if (std::get<0>(*it->second) <= ready) {
      return;
    }
    waiting_.erase(it->second);
    waiting_index_.erase(it);
  }
  auto [pos, inserted] = waiting_.emplace(ready, next_seq_++, key);
  waiting_index_.emplace(key, pos);
  if (pos == waiting_.begin()) {
    delay_cv_.NotifyOne();  // a new earliest deadline
  }
}

void WorkQueue::AddRateLimited(const std::string& key) {
  // Asked outside mu_: the limiter has its own lock, and the queue never calls out while locked.
  AddAfter(key, rate_limiter_->When(key));
}

void WorkQueue::Forget(const std::string& key) { rate_limiter_->Forget(key); }

int WorkQueue::NumRequeues(const std::string& key) const { return rate_limiter_->NumRequeues(key); }

void WorkQueue::MoveDueLocked() {
  if (waiting_.empty()) {
    return;
  }
  const Clock::TimePoint now = clock_.Now();
  while (!waiting_.empty() && std::get<0>(*waiting_.begin()) <= now) {
    auto node = waiting_.extract(waiting_.begin());
    std::string& key = std::get<2>(node.value());
    waiting_index_.erase(key);
    AddLocked(key, now);
  }
}

void WorkQueue::DelayLoop() {
  MutexLock lock(mu_);
  while (!shutting_down_) {
    MoveDueLocked();
    if (waiting_.empty()) {
      delay_cv_.Wait(mu_);
    } else {
      clock_.WaitUntil(delay_cv_, mu_, std::get<0>(*waiting_.begin()));
    }
  }
}

std::optional<std::string> WorkQueue::Get() {
  MutexLock lock(mu_);
  while (true) {
    MoveDueLocked();
    if (!queue_.empty()) {
      break;
    }
    if (shutting_down_) {
      return std::nullopt;
    }
    ready_cv_.Wait(mu_);
  }
  std::string key = std::move(queue_.front());
  queue_.pop_front();
  const Clock::TimePoint now = clock_.Now();
  if (metrics_.depth != nullptr) {
    metrics_.depth->Dec();
  }
  if (auto it = added_at_.find(key); it != added_at_.end()) {
    if (metrics_.queue_duration != nullptr) {
      metrics_.queue_duration->Observe(Seconds(now - it->second));
    }
    added_at_.erase(it);
  }
  processing_.emplace(key, now);
  dirty_.erase(key);
  return key;
}

void WorkQueue::Done(const std::string& key) {
  MutexLock guard(mu_);
  auto it = processing_.find(key);
  if (it == processing_.end()) {
    return;  // not handed out (or Done twice): nothing to finish
  }
  if (metrics_.work_duration != nullptr) {
    metrics_.work_duration->Observe(Seconds(clock_.Now() - it->second));
  }
  processing_.erase(it);
  if (dirty_.contains(key)) {
    queue_.push_back(key);
    ready_cv_.NotifyOne();
  }
  if (processing_.empty()) {
    drain_cv_.NotifyAll();
  }
}

size_t WorkQueue::Len() {
  MutexLock guard(mu_);
  MoveDueLocked();
  return queue_.size();
}

bool WorkQueue::Idle(bool count_delayed) {
  MutexLock guard(mu_);
  MoveDueLocked();
  return queue_.empty() && processing_.empty() && (!count_delayed || waiting_.empty());
}

void WorkQueue::ShutDown() {
  MutexLock guard(mu_);
  shutting_down_ = true;
  drain_ = false;
  ready_cv_.NotifyAll();
  delay_cv_.NotifyAll();
  drain_cv_.NotifyAll();
}

void WorkQueue::ShutDownWithDrain() {
  MutexLock lock(mu_);
  shutting_down_ = true;
  drain_ = true;
  ready_cv_.NotifyAll();
  delay_cv_.NotifyAll();
  while (!processing_.empty() && drain_) drain_cv_.Wait(mu_);
}

bool WorkQueue::ShuttingDown() const {
  MutexLock guard(mu_);
  return shutting_down_;
}

void WorkQueue::UpdateUnfinishedWork() {
  MutexLock guard(mu_);
  const Clock::TimePoint now = clock_.Now();
  Clock::Duration total = Clock::Duration::zero();
  Clock::Duration longest = Clock::Duration::zero();
  for (const auto& [key, start] : processing_) {
    total += now - start;
    longest = std::max(longest, now - start);
  }
  metrics_.unfinished_work->Set(Seconds(total));
  metrics_.longest_running->Set(Seconds(longest));
}

}  // namespace slicewright::runtime

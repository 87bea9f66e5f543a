// WorkQueue hands string keys (usually "namespace/name") to controller workers, behaving like
// client-go's rate-limited work queue (util/workqueue: queue.go, delaying_queue.go,
// rate_limiting_queue.go), rebuilt:
//   - de-duplicating: a key added while it waits is queued once;
//   - a key is never handed to two workers at once: one added while a worker holds it is queued
//     again when that worker calls Done();
//   - AddAfter() delays a key (a background thread waits on the Clock for the earliest deadline);
//   - AddRateLimited() delays it by its RateLimiter; Forget() resets that, NumRequeues() reads it;
//   - ShutDown() wakes every Get(); ShutDownWithDrain() also waits for keys being processed.
// Thread-safe. The Clock, and the Registry when given, must outlive the queue, and every worker
// must have returned from Get() before the queue is destroyed (shut down, then join the workers).
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "slicewright/base/clock.h"
#include "slicewright/base/mutex.h"
#include "slicewright/base/result.h"
#include "slicewright/runtime/metrics.h"
#include "slicewright/runtime/rate_limiter.h"

namespace slicewright::runtime {

struct WorkQueueOptions {
  // The queue's name: the `name` label of its metrics. Required when `metrics` is set; two queues
  // reporting to one registry need different names, or they share their series.
  std::string name;
  // Time for delays, rate limits and metrics; nullptr means SystemClock::Get().
  Clock* clock = nullptr;
  // Where the workqueue_* metrics go (client-go's names, labelled by `name`); nullptr: no metrics.
  Registry* metrics = nullptr;
  // The AddRateLimited() policy; nullptr means DefaultControllerRateLimiter(*clock).
  std::unique_ptr<RateLimiter> rate_limiter;
};

// The bucket bounds of workqueue_queue_duration_seconds and workqueue_work_duration_seconds, as
// client-go's: 1e-8 s up to 10 s by factors of 10, with the same floating-point values (so the
// same le label text).
std::vector<double> WorkQueueDurationBuckets();

class WorkQueue final {
 public:
  // kInvalid when `metrics` is set without a name; kAlreadyExists when the registry holds a
  // different metric under one of the workqueue_* names. Starts the delaying thread.
  static Result<std::unique_ptr<WorkQueue>> Create(WorkQueueOptions options);

  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;
  // Shuts down (without drain) and joins the delaying thread.
  ~WorkQueue();

  // Queues `key` unless it is already queued; if a worker holds it, it is queued on Done().
  // Ignored after shutdown.
  void Add(const std::string& key);
  // Adds `key` once `delay` has passed on the clock (now when delay <= 0). A key already waiting
  // keeps the earlier of its two deadlines. Counts a retry. Ignored after shutdown; keys still
  // waiting at shutdown are dropped.
  void AddAfter(const std::string& key, Clock::Duration delay);
  // AddAfter(key, rate_limiter.When(key)).
  void AddRateLimited(const std::string& key);
  // Resets the rate limiter's memory of `key` (call it when the key was processed successfully).
  void Forget(const std::string& key);
  // How many times `key` was rate-limited since it was last forgotten.
  int NumRequeues(const std::string& key) const;

  // Blocks until a key is available and hands it out; the caller must call Done(key) when it has
  // finished with it. Keys queued before shutdown are still handed out; returns std::nullopt once
  // the queue is shut down and empty.
  std::optional<std::string> Get();
  // Marks `key` finished; if it was added meanwhile, queues it again.
  void Done(const std::string& key);

  // How many keys are ready to be handed out (not counting delayed keys or keys being processed).
  // Not const: it first moves delayed keys whose deadline has passed into the queue.
  size_t Len();
  // True when no key is ready or being processed and, with `count_delayed`, none is waiting for
  // its delay: every key added so far (and due) has been through a Get() and Done(). Lets a test
  // see that a controller has finished reacting.
  bool Idle(bool count_delayed = true);

  // New keys are ignored from now on; blocked Get() calls return what is queued, then nullopt.
  void ShutDown();
  // ShutDown(), then waits until no key is being processed (every Get() has had its Done()).
  // Workers must keep calling Done() or this never returns. A later ShutDown() stops the wait.
  void ShutDownWithDrain();
  bool ShuttingDown() const;

 private:
  // The series of this queue; all null when the queue has no registry.
  struct Metrics {
    Gauge* depth = nullptr;
    Counter* adds = nullptr;
    Histogram* queue_duration = nullptr;
    Histogram* work_duration = nullptr;
    Counter* retries = nullptr;
    Gauge* unfinished_work = nullptr;
    Gauge* longest_running = nullptr;
  };

  WorkQueue(Clock& clock, std::unique_ptr<RateLimiter> rate_limiter, Metrics metrics);

  void AddLocked(const std::string& key, Clock::TimePoint now) SW_REQUIRES(mu_);
  // Adds every delayed key whose deadline has passed. Besides the delaying thread, readers (Get,
  // Len) call it too, so right after a FakeClock advance they see the due keys without racing
  // the thread.
  void MoveDueLocked() SW_REQUIRES(mu_);
  void DelayLoop();
  void UpdateUnfinishedWork();

  Clock& clock_;
  const std::unique_ptr<RateLimiter> rate_limiter_;
  const Metrics metrics_;

  mutable Mutex mu_;
  CondVar ready_cv_;  // Get() waits for a key or shutdown
  CondVar drain_cv_;  // ShutDownWithDrain() waits for processing_ to empty
  CondVar delay_cv_;  // the delaying thread waits for a deadline or an earlier key

  std::deque<std::string> queue_ SW_GUARDED_BY(mu_);          // ready keys, in order
  std::unordered_set<std::string> dirty_ SW_GUARDED_BY(mu_);  // keys to be processed
  // Held by a worker, since; dirty since (for metrics).
  std::unordered_map<std::string, Clock::TimePoint> processing_ SW_GUARDED_BY(mu_);
  std::unordered_map<std::string, Clock::TimePoint> added_at_ SW_GUARDED_BY(mu_);
  // Delayed keys by (deadline, arrival order), and each key's entry.
  using Waiting = std::tuple<Clock::TimePoint, std::uint64_t, std::string>;
  std::set<Waiting> waiting_ SW_GUARDED_BY(mu_);
  std::unordered_map<std::string, std::set<Waiting>::iterator> waiting_index_ SW_GUARDED_BY(mu_);
  std::uint64_t next_seq_ SW_GUARDED_BY(mu_) = 0;
  bool shutting_down_ SW_GUARDED_BY(mu_) = false;
  bool drain_ SW_GUARDED_BY(mu_) = false;

  std::thread delay_thread_;
  Registry::CollectHook collect_hook_;
};

}  // namespace slicewright::runtime

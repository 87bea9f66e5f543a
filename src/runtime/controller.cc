#include "slicewright/runtime/controller.h"

#include <algorithm>
#include <initializer_list>
#include <string_view>
#include <utility>

#include "slicewright/base/duration.h"
#include "slicewright/base/log.h"
#include "slicewright/base/thread_name.h"

namespace slicewright::runtime {
namespace {

// One series of `family` for this controller; null (and a log line) when the registry refuses.
Counter* SeriesOf(Result<CounterFamily*> family, std::initializer_list<std::string_view> labels) {
  if (!family.ok()) {
    SW_LOG(kError, "controller metrics: {}", family.status().ToString());
    return nullptr;
  }
  Result<Counter*> counter = (*family)->WithLabelValues(labels);
  return counter.ok() ? *counter : nullptr;
}

}  // namespace

Controller::Controller(ControllerOptions options, WorkQueue& queue, SyncFn sync,
                       OutcomeFn on_outcome)
    : options_(std::move(options)),
      queue_(queue),
      sync_(std::move(sync)),
      on_outcome_(std::move(on_outcome)) {
  if (options_.metrics == nullptr) return;
  // controller-runtime's names and help texts (pkg/internal/controller/metrics), so dashboards
  // built for Go controllers read ours.
  Registry& registry = *options_.metrics;
  const std::string_view name = options_.name;
  auto reconciles = registry.AddCounterFamily("controller_runtime_reconcile_total",
                                              "Total number of reconciliations per controller",
                                              {"controller", "result"});
  counters_.success = SeriesOf(reconciles, {name, "success"});
  counters_.error = SeriesOf(reconciles, {name, "error"});
  counters_.errors =
      SeriesOf(registry.AddCounterFamily("controller_runtime_reconcile_errors_total",
                                         "Total number of reconciliation errors per controller",
                                         {"controller"}),
               {name});
  counters_.terminal =
      SeriesOf(registry.AddCounterFamily(
                   "controller_runtime_terminal_reconcile_errors_total",
                   "Total number of terminal reconciliation errors per controller", {"controller"}),
               {name});
}

void Controller::Count(SyncOutcome outcome) {
  const auto inc = [](Counter* counter) {
    if (counter != nullptr) counter->Inc();
  };
  if (outcome == SyncOutcome::kSuccess) {
    inc(counters_.success);
    return;
  }
  inc(counters_.error);
  inc(counters_.errors);
  if (outcome == SyncOutcome::kTerminal) inc(counters_.terminal);
}

Controller::~Controller() { Stop(); }

void Controller::Start() {
  MutexLock lock(mu_);
  if (!workers_.empty()) return;
  const int workers = options_.workers > 0 ? options_.workers : 1;
  const std::string& prefix = options_.thread_name.empty() ? options_.name : options_.thread_name;
  for (int i = 0; i < workers; ++i) {
    workers_.emplace_back([this, name = ThreadName(fmt::format("{}-w{}", prefix, i))] {
      name.Apply();
      Work();
    });
  }
}

void Controller::Stop() {
  std::vector<std::thread> workers;
  {
    MutexLock lock(mu_);
    workers.swap(workers_);
  }
  queue_.ShutDownWithDrain();
  for (std::thread& worker : workers) worker.join();
}

Clock::Duration Controller::NextSlowRetry(const std::string& key) {
  MutexLock lock(slow_mu_);
  const int done = slow_retries_[key]++;
  Clock::Duration delay = options_.slow_retry->base;
  for (int i = 0; i < done && delay < options_.slow_retry->max; ++i) delay *= 2;
  return std::min(delay, options_.slow_retry->max);
}

void Controller::ForgetSlowRetry(const std::string& key) {
  MutexLock lock(slow_mu_);
  slow_retries_.erase(key);
}

void Controller::Work() {
  while (std::optional<std::string> key = queue_.Get()) {
    const Status status = sync_(*key);
    syncs_.fetch_add(1, std::memory_order_relaxed);
    SyncOutcome outcome = SyncOutcome::kSuccess;
    if (status.ok()) {
      queue_.Forget(*key);
      if (options_.slow_retry.has_value()) ForgetSlowRetry(*key);
    } else if (!IsRetryable(status)) {
      outcome = SyncOutcome::kTerminal;
      queue_.Forget(*key);
      if (options_.slow_retry.has_value()) {
        const Clock::Duration delay = NextSlowRetry(*key);
        SW_LOG(kError, "{}: syncing {} failed, retrying in {}: {}", options_.name, *key,
               FormatGoDuration(std::chrono::duration_cast<std::chrono::milliseconds>(delay)),
               status.ToString());
        queue_.AddAfter(*key, delay);
      } else {
        SW_LOG(kError, "{}: syncing {} failed, not retrying: {}", options_.name, *key,
               status.ToString());
      }
    } else if (queue_.NumRequeues(*key) < options_.max_retries) {
      outcome = SyncOutcome::kRetried;
      SW_VLOG(2, "{}: syncing {} failed, retrying: {}", options_.name, *key, status.ToString());
      queue_.AddRateLimited(*key);
    } else {
      outcome = SyncOutcome::kDropped;
      queue_.Forget(*key);
      if (options_.slow_retry.has_value()) {
        const Clock::Duration delay = NextSlowRetry(*key);
        SW_LOG(kWarning, "{}: syncing {} failed {} times, retrying in {}: {}", options_.name, *key,
               options_.max_retries + 1,
               FormatGoDuration(std::chrono::duration_cast<std::chrono::milliseconds>(delay)),
               status.ToString());
        queue_.AddAfter(*key, delay);
      } else {
        SW_LOG(kWarning, "{}: dropping {} out of the queue after {} retries: {}", options_.name,
               *key, options_.max_retries, status.ToString());
      }
    }
    Count(outcome);
    if (on_outcome_) on_outcome_(*key, outcome, status);
    queue_.Done(*key);
  }
}

}  // namespace slicewright::runtime

#include "slicewright/runtime/controller.h"

#include <utility>

#include "slicewright/base/log.h"

namespace slicewright::runtime {

Controller::Controller(ControllerOptions options, WorkQueue& queue, SyncFn sync,
                       OutcomeFn on_outcome)
    : options_(std::move(options)),
      queue_(queue),
      sync_(std::move(sync)),
      on_outcome_(std::move(on_outcome)) {}

Controller::~Controller() { Stop(); }

void Controller::Start() {
  std::lock_guard lock(mu_);
  if (!workers_.empty()) return;
  const int workers = options_.workers > 0 ? options_.workers : 1;
  for (int i = 0; i < workers; ++i) workers_.emplace_back([this] { Work(); });
}

void Controller::Stop() {
  std::vector<std::thread> workers;
  {
    std::lock_guard lock(mu_);
    workers.swap(workers_);
  }
  queue_.ShutDownWithDrain();
  for (std::thread& worker : workers) worker.join();
}

void Controller::Work() {
  while (std::optional<std::string> key = queue_.Get()) {
    const Status status = sync_(*key);
    syncs_.fetch_add(1, std::memory_order_relaxed);
    SyncOutcome outcome = SyncOutcome::kSuccess;
    if (status.ok()) {
      queue_.Forget(*key);
    } else if (!IsRetryable(status)) {
      outcome = SyncOutcome::kTerminal;
      queue_.Forget(*key);
      SW_LOG(kError, "{}: syncing {} failed, not retrying: {}", options_.name, *key,
             status.ToString());
    } else if (queue_.NumRequeues(*key) < options_.max_retries) {
      outcome = SyncOutcome::kRetried;
      SW_VLOG(2, "{}: syncing {} failed, retrying: {}", options_.name, *key, status.ToString());
      queue_.AddRateLimited(*key);
    } else {
      outcome = SyncOutcome::kDropped;
      queue_.Forget(*key);
      SW_LOG(kWarning, "{}: dropping {} out of the queue after {} retries: {}", options_.name, *key,
             options_.max_retries, status.ToString());
    }
    if (on_outcome_) on_outcome_(*key, outcome, status);
    queue_.Done(*key);
  }
}

}  // namespace slicewright::runtime

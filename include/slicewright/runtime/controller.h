// Controller runs a sync function over a WorkQueue with a pool of workers, as client-go controllers
// do: the queue never hands one key to two workers at once; a sync that fails with a retryable
// Status is requeued with the queue's rate limiter until it has been retried max_retries times,
// then dropped with a log line (a later event for the key enqueues it again); a terminal failure
// (IsRetryable false: Invalid, Forbidden, BadRequest...) is not retried and is counted in
// controller-runtime's controller_runtime_terminal_reconcile_errors_total. With
// ControllerOptions::slow_retry, neither is given up for good: the key comes back after a slow
// backoff (a write the server refused is retried, so a fixed cluster heals). Stop() drains the
// syncs in flight. Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "slicewright/base/clock.h"
#include "slicewright/base/mutex.h"
#include "slicewright/base/status.h"
#include "slicewright/runtime/metrics.h"
#include "slicewright/runtime/work_queue.h"

namespace slicewright::runtime {

// The backoff of keys client-go would give up (a terminal failure, or max_retries retryable ones):
// `base` the first time, doubled each time after, at most `max`; a success resets it.
struct SlowRetry {
  Clock::Duration base = std::chrono::seconds(30);
  Clock::Duration max = std::chrono::minutes(10);
};

struct ControllerOptions {
  std::string name;  // for logs: "endpointslice"
  int workers = 5;   // --concurrent-service-endpoint-syncs
  int max_retries = 15;
  // When set, every sync is counted under controller-runtime's metric names, labelled
  // controller=<name>: controller_runtime_reconcile_total{result}, ..._reconcile_errors_total and
  // ..._terminal_reconcile_errors_total. Must outlive the controller.
  Registry* metrics = nullptr;
  // The workers' thread names are "<thread_name>-w<i>" ("eps-w0"; docs/design.md lists them):
  // keep it to 8 bytes so that a marker ("c2-") and the index fit in 15. Empty: `name`.
  // (Braced, so that {name, workers, max_retries} initializers need not list it.)
  std::string thread_name{};
  // Unset: a terminal failure is not retried, and a key is dropped after max_retries (client-go's
  // behaviour); a later event for the key queues it again. Set: both come back after SlowRetry's
  // backoff, for controllers whose keys no later event may wake (the MCS agent's: a refused
  // write of an import must heal once the cause is fixed, without a change to the import).
  std::optional<SlowRetry> slow_retry{};
};

// What happened to one sync, for the controller's own metrics (e.g. endpoint_slice_controller
// syncs{result}).
enum class SyncOutcome { kSuccess, kRetried, kDropped, kTerminal };

class Controller final {
 public:
  using SyncFn = std::function<Status(const std::string& key)>;
  using OutcomeFn =
      std::function<void(const std::string& key, SyncOutcome outcome, const Status& status)>;

  // `queue` must outlive the controller. `on_outcome` may be empty.
  Controller(ControllerOptions options, WorkQueue& queue, SyncFn sync, OutcomeFn on_outcome = {});
  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;
  ~Controller();

  // Starts the workers. Once only.
  void Start();
  // Shuts the queue down, lets the syncs in flight finish, and joins the workers. Idempotent.
  void Stop();

  std::int64_t Syncs() const { return syncs_.load(std::memory_order_relaxed); }

 private:
  void Work();
  void Count(SyncOutcome outcome);
  // The next slow retry's delay for `key` (slow_retry set), and counts it.
  Clock::Duration NextSlowRetry(const std::string& key);
  void ForgetSlowRetry(const std::string& key);

  // The series of ControllerOptions::metrics for this controller; null without a registry.
  struct SyncCounters {
    Counter* success = nullptr;
    Counter* error = nullptr;
    Counter* errors = nullptr;
    Counter* terminal = nullptr;
  };

  const ControllerOptions options_;
  WorkQueue& queue_;
  const SyncFn sync_;
  const OutcomeFn on_outcome_;
  std::atomic<std::int64_t> syncs_{0};
  SyncCounters counters_;  // set in the constructor
  Mutex mu_;
  std::vector<std::thread> workers_ SW_GUARDED_BY(mu_);
  // slow_retry: how many slow retries each key had since its last success.
  Mutex slow_mu_;
  std::map<std::string, int> slow_retries_ SW_GUARDED_BY(slow_mu_);
};

}  // namespace slicewright::runtime

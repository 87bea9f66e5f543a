// SyncLoop: the work queue and the workers each controller here runs its Sync(key) on, as a
// client-go controller's queue and worker goroutines: handlers Enqueue() keys, Start() runs the
// workers, Stop() drains them. Thread-safe.
#pragma once

#include <memory>
#include <string>

#include "slicewright/base/clock.h"
#include "slicewright/base/result.h"
#include "slicewright/runtime/controller.h"
#include "slicewright/runtime/work_queue.h"

namespace slicewright::controllers {

class SyncLoop final {
 public:
  static Result<std::unique_ptr<SyncLoop>> Create(runtime::WorkQueueOptions queue_options);
  ~SyncLoop();
  SyncLoop(const SyncLoop&) = delete;
  SyncLoop& operator=(const SyncLoop&) = delete;

  // Queues `key` now (a delay of zero or less) or once `delay` has passed; an empty key (an object
  // that names no Service) is dropped. Only a real delay counts in workqueue_retries_total, as
  // client-go's AddAfter counts it.
  void Enqueue(const std::string& key, Clock::Duration delay);

  // Starts `options.workers` workers running `sync`. Later calls do nothing.
  void Start(runtime::ControllerOptions options, runtime::Controller::SyncFn sync);
  // Stops taking keys, lets the syncs in flight finish, joins the workers. Idempotent; without a
  // Start() it shuts the queue down.
  void Stop();

  runtime::WorkQueue& queue() { return *queue_; }

 private:
  explicit SyncLoop(std::unique_ptr<runtime::WorkQueue> queue) : queue_(std::move(queue)) {}

  std::unique_ptr<runtime::WorkQueue> queue_;
  std::unique_ptr<runtime::Controller> workers_;  // set once by Start()
};

// kInvalid naming `flag` unless min <= value <= max, worded as kube-controller-manager's flag
// validation: "--concurrent-service-endpoint-syncs must be between 1 and 50, got 0".
Status CheckFlagRange(std::string_view flag, int value, int min, int max);

}  // namespace slicewright::controllers

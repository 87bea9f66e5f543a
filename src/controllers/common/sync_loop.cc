#include "controllers/common/sync_loop.h"

#include <utility>

namespace slicewright::controllers {

Result<std::unique_ptr<SyncLoop>> SyncLoop::Create(runtime::WorkQueueOptions queue_options) {
  SW_ASSIGN_OR_RETURN(std::unique_ptr<runtime::WorkQueue> queue,
                      runtime::WorkQueue::Create(std::move(queue_options)));
  return std::unique_ptr<SyncLoop>(new SyncLoop(std::move(queue)));
}

SyncLoop::~SyncLoop() { Stop(); }

void SyncLoop::Enqueue(const std::string& key, Clock::Duration delay) {
  if (key.empty()) return;
  if (delay <= Clock::Duration::zero()) {
    queue_->Add(key);
  } else {
    queue_->AddAfter(key, delay);
  }
}

void SyncLoop::Start(runtime::ControllerOptions options, runtime::Controller::SyncFn sync) {
  if (workers_ != nullptr) return;
  workers_ = std::make_unique<runtime::Controller>(std::move(options), *queue_, std::move(sync));
  workers_->Start();
}

void SyncLoop::Stop() {
  if (workers_ != nullptr) {
    workers_->Stop();
  } else {
    queue_->ShutDown();
  }
}

Status CheckFlagRange(std::string_view flag, int value, int min, int max) {
  if (value >= min && value <= max) return Status();
  return Status(StatusCode::kInvalid, std::string(flag) + " must be between " +
                                          std::to_string(min) + " and " + std::to_string(max) +
                                          ", got " + std::to_string(value));
}

}  // namespace slicewright::controllers

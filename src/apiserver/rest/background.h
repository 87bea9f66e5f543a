// Background is a single thread running timed tasks in due order: the API server's garbage
// collection, namespace finalization and pod grace-period expiry. Thread-safe; tasks run one at a
// time and may schedule more.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <queue>
#include <thread>
#include <vector>

#include "slicewright/base/mutex.h"

namespace slicewright::apiserver {

class Background final {
 public:
  Background();
  ~Background();  // Stop()s
  Background(const Background&) = delete;
  Background& operator=(const Background&) = delete;

  // Runs `task` on the background thread once `delay` has passed. Ignored after Stop().
  void Schedule(std::function<void()> task,
                std::chrono::steady_clock::duration delay = std::chrono::steady_clock::duration{});
  // Finishes the running task, drops the rest and joins the thread. Idempotent.
  void Stop();
  // Blocks until no task is due now or running (for tests).
  void WaitIdleForTest();

 private:
  struct Task {
    std::chrono::steady_clock::time_point due;
    std::uint64_t sequence = 0;
    std::function<void()> run;
    bool operator>(const Task& other) const {
      return due != other.due ? due > other.due : sequence > other.sequence;
    }
  };
  void Run();
  // No task is running or due now (or the thread is stopping).
  bool IdleLocked() const SW_REQUIRES(mu_);

  Mutex mu_;
  CondVar wake_;
  CondVar idle_;
  std::priority_queue<Task, std::vector<Task>, std::greater<>> tasks_ SW_GUARDED_BY(mu_);
  std::uint64_t next_sequence_ SW_GUARDED_BY(mu_) = 0;
  bool running_task_ SW_GUARDED_BY(mu_) = false;
  bool stopping_ SW_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace slicewright::apiserver

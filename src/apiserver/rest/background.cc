#include "apiserver/rest/background.h"

#include <utility>

#include "slicewright/base/thread_name.h"

namespace slicewright::apiserver {

Background::Background()
    : thread_([this, name = ThreadName("api-bg")] {
        name.Apply();
        Run();
      }) {}

Background::~Background() { Stop(); }

void Background::Schedule(std::function<void()> task, std::chrono::steady_clock::duration delay) {
  {
    MutexLock lock(mu_);
    if (stopping_) {
      return;
    }
    tasks_.push(Task{std::chrono::steady_clock::now() + delay, next_sequence_++, std::move(task)});
  }
  wake_.NotifyOne();
}

void Background::Stop() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  wake_.NotifyAll();
  if (thread_.joinable()) {
    thread_.join();
  }
}

bool Background::IdleLocked() const {
  return stopping_ || (!running_task_ &&
                       (tasks_.empty() || tasks_.top().due > std::chrono::steady_clock::now()));
}

void Background::WaitIdleForTest() {
  MutexLock lock(mu_);
  while (!IdleLocked()) idle_.Wait(mu_);
}

void Background::Run() {
  MutexLock lock(mu_);
  while (!stopping_) {
    if (tasks_.empty()) {
      idle_.NotifyAll();
      wake_.Wait(mu_);
      continue;
    }
    const auto due = tasks_.top().due;
    if (due > std::chrono::steady_clock::now()) {
      idle_.NotifyAll();
      wake_.WaitUntil(mu_, due);
      continue;
    }
    Task task = tasks_.top();
    tasks_.pop();
    running_task_ = true;
    lock.Unlock();
    task.run();
    lock.Lock();
    running_task_ = false;
  }
  idle_.NotifyAll();
}

}  // namespace slicewright::apiserver

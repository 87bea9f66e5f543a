#include "apiserver/rest/background.h"

#include <utility>

namespace slicewright::apiserver {

Background::Background() : thread_([this] { Run(); }) {}

Background::~Background() { Stop(); }

void Background::Schedule(std::function<void()> task, std::chrono::steady_clock::duration delay) {
  {
    std::lock_guard lock(mu_);
    if (stopping_) {
      return;
    }
    tasks_.push(Task{std::chrono::steady_clock::now() + delay, next_sequence_++, std::move(task)});
  }
  wake_.notify_one();
}

void Background::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) {
    thread_.join();
  }
}

void Background::WaitIdleForTest() {
  std::unique_lock lock(mu_);
  idle_.wait(lock, [this] {
    return stopping_ || (!running_task_ &&
                         (tasks_.empty() || tasks_.top().due > std::chrono::steady_clock::now()));
  });
}

void Background::Run() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    if (tasks_.empty()) {
      idle_.notify_all();
      wake_.wait(lock);
      continue;
    }
    const auto due = tasks_.top().due;
    if (due > std::chrono::steady_clock::now()) {
      idle_.notify_all();
      wake_.wait_until(lock, due);
      continue;
    }
    Task task = tasks_.top();
    tasks_.pop();
    running_task_ = true;
    lock.unlock();
    task.run();
    lock.lock();
    running_task_ = false;
  }
  idle_.notify_all();
}

}  // namespace slicewright::apiserver

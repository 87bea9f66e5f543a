// Mutex, SharedMutex, their RAII locks and CondVar: std::mutex, std::shared_mutex, lock guards and
// std::condition_variable as clang's thread-safety analysis sees them (capabilities and scoped
// capabilities), so members marked SW_GUARDED_BY(mu_) are checked by the clang preset.
// Thread-safe; none of these is copied or moved.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <shared_mutex>

#include "slicewright/base/thread_annotations.h"

namespace slicewright {

class SW_CAPABILITY("mutex") Mutex final {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void lock() SW_ACQUIRE() { mu_.lock(); }
  void unlock() SW_RELEASE() { mu_.unlock(); }
  bool try_lock() SW_TRY_ACQUIRE(true) { return mu_.try_lock(); }

 private:
  friend class CondVar;  // waits on mu_ itself
  std::mutex mu_;
};

// Holds `mu` from construction to destruction, as std::lock_guard. Unlock() and Lock() drop and
// retake it inside the scope (to call out without the lock, as std::unique_lock); the destructor
// releases it only when held.
class SW_SCOPED_CAPABILITY MutexLock final {
 public:
  explicit MutexLock(Mutex& mu) SW_ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
  ~MutexLock() SW_RELEASE() {
    if (held_) mu_.unlock();
  }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  void Unlock() SW_RELEASE() {
    mu_.unlock();
    held_ = false;
  }
  void Lock() SW_ACQUIRE() {
    mu_.lock();
    held_ = true;
  }

 private:
  Mutex& mu_;
  bool held_ = true;
};

// A condition variable whose waits take a held Mutex, as absl::CondVar: the analysis sees that the
// mutex is held before and after the wait. Wake-ups may be spurious, so wait in a loop on the
// condition (a predicate lambda would hide the guarded reads from the analysis).
class CondVar final {
 public:
  CondVar() = default;
  CondVar(const CondVar&) = delete;
  CondVar& operator=(const CondVar&) = delete;

  // Releases `mu`, blocks until notified, then takes `mu` again.
  void Wait(Mutex& mu) SW_REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu.mu_, std::adopt_lock);
    cv_.wait(lock);
    lock.release();  // the caller still owns the mutex
  }
  // As Wait(), but also returns once the steady clock reaches `deadline`.
  void WaitUntil(Mutex& mu, std::chrono::steady_clock::time_point deadline) SW_REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu.mu_, std::adopt_lock);
    cv_.wait_until(lock, deadline);
    lock.release();
  }

  void NotifyOne() { cv_.notify_one(); }
  void NotifyAll() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

// A reader-writer mutex: many holders in shared mode (ReaderMutexLock) or one in exclusive mode
// (WriterMutexLock). SW_GUARDED_BY state may be read under either and written under the latter.
class SW_CAPABILITY("mutex") SharedMutex final {
 public:
  SharedMutex() = default;
  SharedMutex(const SharedMutex&) = delete;
  SharedMutex& operator=(const SharedMutex&) = delete;

  void lock() SW_ACQUIRE() { mu_.lock(); }
  void unlock() SW_RELEASE() { mu_.unlock(); }
  void lock_shared() SW_ACQUIRE_SHARED() { mu_.lock_shared(); }
  void unlock_shared() SW_RELEASE_SHARED() { mu_.unlock_shared(); }

 private:
  std::shared_mutex mu_;
};

// Holds `mu` exclusively for its lifetime, as std::unique_lock<std::shared_mutex>.
class SW_SCOPED_CAPABILITY WriterMutexLock final {
 public:
  explicit WriterMutexLock(SharedMutex& mu) SW_ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
  ~WriterMutexLock() SW_RELEASE() { mu_.unlock(); }
  WriterMutexLock(const WriterMutexLock&) = delete;
  WriterMutexLock& operator=(const WriterMutexLock&) = delete;

 private:
  SharedMutex& mu_;
};

// Holds `mu` shared for its lifetime, as std::shared_lock.
class SW_SCOPED_CAPABILITY ReaderMutexLock final {
 public:
  explicit ReaderMutexLock(SharedMutex& mu) SW_ACQUIRE_SHARED(mu) : mu_(mu) { mu_.lock_shared(); }
  ~ReaderMutexLock() SW_RELEASE() { mu_.unlock_shared(); }
  ReaderMutexLock(const ReaderMutexLock&) = delete;
  ReaderMutexLock& operator=(const ReaderMutexLock&) = delete;

 private:
  SharedMutex& mu_;
};

}  // namespace slicewright

// Mutex and MutexLock: std::mutex and std::lock_guard as clang's thread-safety analysis sees
// them (a capability and a scoped capability), so members marked SW_GUARDED_BY(mu_) are checked
// by the clang preset. Thread-safe; a Mutex is neither copied nor moved.
#pragma once

#include <mutex>

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
  std::mutex mu_;
};

// Holds `mu` from construction to destruction, as std::lock_guard.
class SW_SCOPED_CAPABILITY MutexLock final {
 public:
  explicit MutexLock(Mutex& mu) SW_ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
  ~MutexLock() SW_RELEASE() { mu_.unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex& mu_;
};

}  // namespace slicewright

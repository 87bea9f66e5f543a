// The controller tests' way to know a controller has reacted to an event, instead of sleeping:
// a handler that sees every object version after the controllers' own handlers, and a wait for a
// work queue with nothing left to do.
#pragma once

#include <mutex>
#include <set>
#include <string>
#include <utility>

#include "slicewright/cache/informer.h"
#include "slicewright/cache/store.h"
#include "slicewright/runtime/work_queue.h"

#include "fakes/loopback.h"

namespace slicewright::controllers::testing {

// The "handled" barrier: a handler registered on an informer after the controllers' own runs
// after theirs for every event (an informer delivers in order on one strand), so once it has seen
// an object version the controllers' handlers have too, and have queued what that version
// concerns. Thread-safe; must outlive the informers it watches (stop them first).
class HandledBarrier final {
 public:
  template <typename T>
  void Watch(cache::Informer<T>& informer) {
    cache::EventHandler<T> handler;
    // this->: clang 14 does not see a dependent member call as a use of `this`.
    handler.on_add = [this](const auto& object, bool) { this->Saw(*object); };
    handler.on_update = [this](const auto&, const auto& object) { this->Saw(*object); };
    handler.on_delete = [this](const auto& object, bool) { this->Saw(*object); };
    informer.AddEventHandler(std::move(handler));
  }

  // Waits (with Eventually's deadline) until the object `key` ("namespace/name") has been
  // delivered at `resource_version`.
  bool WaitSeen(const std::string& key, const std::string& resource_version) {
    return test_support::Eventually([&] {
      std::lock_guard lock(mu_);
      return seen_.count(key + "@" + resource_version) > 0;
    });
  }

 private:
  template <typename T>
  void Saw(const T& object) {
    std::lock_guard lock(mu_);
    seen_.insert(cache::KeyOf(object) + "@" + cache::ObjectAccess<T>::ResourceVersion(object));
  }

  std::mutex mu_;
  std::set<std::string> seen_;  // key@resourceVersion of every version delivered; guarded by mu_
};

// Waits until `queue` has nothing ready, delayed or in progress. After a HandledBarrier has seen
// an event, this means the syncs that event caused have finished: a check that the controller
// wrote nothing is then a real check, not a guess that it has had time. On a FakeClock pass
// `count_delayed` false: delayed keys wait for the test to advance the clock.
inline bool WaitIdle(runtime::WorkQueue& queue, bool count_delayed = true) {
  return test_support::Eventually([&] { return queue.Idle(count_delayed); });
}

}  // namespace slicewright::controllers::testing

// Thread names for `top -H`, perf, gdb and /proc/PID/task/*/comm: every long-lived thread is named
// where it starts (the prefixes are listed in docs/design.md, "Threading model"). A process that
// runs several clusters (`slicewright dev --clusters N`) sets a per-cluster marker ("c2-") on the
// thread that starts a cluster's components; ThreadName carries it to every thread started from
// there, and on from those, so each cluster's threads share it without passing it around.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace slicewright {

// Linux keeps 15 bytes of a thread's name (16 with the terminating NUL).
inline constexpr std::size_t kMaxThreadNameBytes = 15;

// Names the calling thread `name`, cut to kMaxThreadNameBytes. Does nothing when the system
// refuses (a name is for people; no caller depends on it).
void SetCurrentThreadName(std::string_view name);

// The calling thread's name as the system holds it; "" when it cannot be read.
std::string CurrentThreadName();

// The marker the calling thread puts before the names of the threads it starts; "" unless set.
std::string_view ThreadNameMarker();

// Sets the calling thread's marker until the end of the scope (then restores the previous one).
class ScopedThreadNameMarker final {
 public:
  explicit ScopedThreadNameMarker(std::string_view marker);
  ~ScopedThreadNameMarker();
  ScopedThreadNameMarker(const ScopedThreadNameMarker&) = delete;
  ScopedThreadNameMarker& operator=(const ScopedThreadNameMarker&) = delete;

 private:
  std::string previous_;
};

// A new thread's name, made on the thread that starts it (its marker, then `name`) and applied on
// the new one:
//   thread_ = std::thread([this, name = ThreadName("events")] { name.Apply(); SinkLoop(); });
class ThreadName final {
 public:
  explicit ThreadName(std::string_view name);

  // On the new thread: names it and hands it the starter's marker.
  void Apply() const;
  // The marker and the name, uncut.
  const std::string& full() const { return full_; }

 private:
  std::string marker_;
  std::string full_;
};

}  // namespace slicewright

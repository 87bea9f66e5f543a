#include "slicewright/base/thread_name.h"

#include <algorithm>
#include <array>
#include <utility>

#include <pthread.h>

namespace slicewright {

namespace {

std::string& Marker() {
  thread_local std::string marker;
  return marker;
}

}  // namespace

void SetCurrentThreadName(std::string_view name) {
  std::array<char, kMaxThreadNameBytes + 1> buffer{};
  const std::size_t length = std::min(name.size(), kMaxThreadNameBytes);
  name.copy(buffer.data(), length);
  // A name with a NUL in it ends there, as the kernel would read it.
  (void)pthread_setname_np(pthread_self(), buffer.data());
}

std::string CurrentThreadName() {
  std::array<char, kMaxThreadNameBytes + 1> buffer{};
  if (pthread_getname_np(pthread_self(), buffer.data(), buffer.size()) != 0) return "";
  return std::string(buffer.data());
}

std::string_view ThreadNameMarker() { return Marker(); }

ScopedThreadNameMarker::ScopedThreadNameMarker(std::string_view marker) : previous_(Marker()) {
  Marker() = std::string(marker);
}

ScopedThreadNameMarker::~ScopedThreadNameMarker() { Marker() = std::move(previous_); }

ThreadName::ThreadName(std::string_view name) : marker_(Marker()), full_(marker_) { full_ += name; }

void ThreadName::Apply() const {
  Marker() = marker_;
  SetCurrentThreadName(full_);
}

}  // namespace slicewright

// Logging for the I/O layers, controllers and commands (never the pure core): klog's severities
// and -v verbosity, written by spdlog to stderr as klog-style text or JSON lines. Thread-safe.
// SW_LOG(kWarning, "reflector {}: watch failed: {}", name, status.ToString()) formats with fmt.
#pragma once

#include <functional>
#include <string_view>

#include <fmt/format.h>

namespace slicewright::log {

enum class Severity { kInfo, kWarning, kError };

// klog's -v: SW_VLOG(n, ...) writes when n <= the verbosity. Default 0.
void SetVerbosity(int level);
int Verbosity();
// JSON lines ({"ts":..., "level":"info", "caller":"file.cc:12", "msg":...}) instead of text.
void SetJsonFormat(bool json);

// Writes one line. `file` is reduced to its base name.
void Emit(Severity severity, const char* file, int line, std::string_view message);

// Tests capture lines instead of writing them; an empty function restores stderr.
using Sink = std::function<void(Severity severity, std::string_view message)>;
void SetSinkForTesting(Sink sink);

}  // namespace slicewright::log

#define SW_LOG(severity, ...)                                                          \
  ::slicewright::log::Emit(::slicewright::log::Severity::severity, __FILE__, __LINE__, \
                           ::fmt::format(__VA_ARGS__))

#define SW_VLOG(level, ...)                                                     \
  do {                                                                          \
    if (::slicewright::log::Verbosity() >= (level)) SW_LOG(kInfo, __VA_ARGS__); \
  } while (false)

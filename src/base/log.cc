#include "slicewright/base/log.h"

#include <atomic>
#include <string>

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "slicewright/base/mutex.h"

namespace slicewright::log {
namespace {

std::atomic<int> verbosity{0};
std::atomic<bool> json_format{false};

// The sink a test installed, if any.
struct TestSinkSlot {
  Mutex mu;
  Sink sink SW_GUARDED_BY(mu);
};
TestSinkSlot& TestSink() {
  static TestSinkSlot slot;
  return slot;
}

spdlog::logger& Logger() {
  // One logger for the process; its sink serialises lines from every thread.
  static const std::shared_ptr<spdlog::logger> logger = [] {
    auto created = std::make_shared<spdlog::logger>(
        "slicewright", std::make_shared<spdlog::sinks::stderr_sink_mt>());
    created->set_pattern("%L%m%d %H:%M:%S.%f %t %v");
    created->set_level(spdlog::level::info);
    return created;
  }();
  return *logger;
}

std::string_view BaseName(const char* file) {
  std::string_view path(file);
  const std::size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// JSON string escaping for the message and caller fields.
void AppendJsonString(std::string& out, std::string_view text) {
  out += '"';
  for (const char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += fmt::format("\\u{:04x}", static_cast<unsigned>(static_cast<unsigned char>(c)));
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

}  // namespace

void SetVerbosity(int level) { verbosity.store(level, std::memory_order_relaxed); }
int Verbosity() { return verbosity.load(std::memory_order_relaxed); }

void SetJsonFormat(bool json) {
  json_format.store(json, std::memory_order_relaxed);
  Logger().set_pattern(json ? "%v" : "%L%m%d %H:%M:%S.%f %t %v");
}

void Emit(Severity severity, const char* file, int line, std::string_view message) {
  {
    TestSinkSlot& slot = TestSink();
    MutexLock lock(slot.mu);
    if (slot.sink) {
      slot.sink(severity, message);
      return;
    }
  }
  const spdlog::level::level_enum level = severity == Severity::kError     ? spdlog::level::err
                                          : severity == Severity::kWarning ? spdlog::level::warn
                                                                           : spdlog::level::info;
  const std::string_view base = BaseName(file);
  if (json_format.load(std::memory_order_relaxed)) {
    std::string out = "{\"level\":";
    out += severity == Severity::kError     ? "\"error\""
           : severity == Severity::kWarning ? "\"warning\""
                                            : "\"info\"";
    out += ",\"caller\":";
    AppendJsonString(out, fmt::format("{}:{}", base, line));
    out += ",\"msg\":";
    AppendJsonString(out, message);
    out += '}';
    Logger().log(level, "{}", out);
    return;
  }
  Logger().log(level, "{}:{}] {}", base, line, message);
}

void SetSinkForTesting(Sink sink) {
  TestSinkSlot& slot = TestSink();
  MutexLock lock(slot.mu);
  slot.sink = std::move(sink);
}

}  // namespace slicewright::log

// What the load drivers (apiserver_load, scale_sim) read about the processes they start: a file's
// text, CPU seconds and memory from /proc. Linux only; a missing process reads as zero.
#pragma once

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include <sys/types.h>
#include <unistd.h>

namespace slicewright::bench {

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// utime + stime of process `pid`, in seconds.
inline double ProcessCpuSeconds(pid_t pid) {
  const std::string text = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  // The command (field 2) may hold spaces and parentheses: the fields resume after the last ')'.
  const std::size_t close = text.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(text.substr(close + 2));
  std::string field;
  double ticks = 0;
  for (int index = 3; index <= 15 && fields >> field; ++index) {
    if (index >= 14) ticks += std::atof(field.c_str());  // utime, stime
  }
  return ticks / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

// A "kB" line of /proc/PID/status ("VmHWM", "VmRSS"), in kB.
inline long long ProcessStatusKb(pid_t pid, std::string_view field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.size() > field.size() && line.starts_with(field) && line[field.size()] == ':') {
      return std::atoll(line.c_str() + field.size() + 1);
    }
  }
  return 0;
}

}  // namespace slicewright::bench

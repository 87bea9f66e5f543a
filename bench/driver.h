// What the load drivers (scale_sim, mcs_sim) share: a child process that dies with the driver and
// whose stdout they wait on, a parallel loop of client calls, percentiles. Linux only.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "slicewright/base/result.h"

#include "proc.h"

namespace slicewright::bench {

using SteadyClock = std::chrono::steady_clock;

inline double SecondsSince(SteadyClock::time_point start) {
  return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

// A child process (a `slicewright` command) that dies with this driver.
class Child final {
 public:
  static Result<std::unique_ptr<Child>> Start(std::vector<std::string> args,
                                              const std::string& log_path) {
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    int out[2];
    if (::pipe2(out, O_CLOEXEC) != 0) return Status(StatusCode::kInternal, "pipe2 failed");
    const int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (log < 0) return Status(StatusCode::kInternal, "cannot open " + log_path);
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) return Status(StatusCode::kInternal, "fork failed");
    if (pid == 0) {
      // Only async-signal-safe calls until exec.
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(127);
      ::dup2(out[1], STDOUT_FILENO);
      ::dup2(log, STDERR_FILENO);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    ::close(out[1]);
    ::close(log);
    auto child = std::unique_ptr<Child>(new Child());
    child->pid_ = pid;
    child->out_fd_ = out[0];
    child->log_path_ = log_path;
    // glibc 2.36's <sys/pidfd.h> lacks extern "C", hence the raw system call.
    child->pidfd_ = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
    return child;
  }

  ~Child() { Stop(); }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  // The rest of the first stdout line containing `prefix`.
  Result<std::string> WaitForLine(std::string_view prefix, std::chrono::seconds timeout) {
    const auto deadline = SteadyClock::now() + timeout;
    while (true) {
      const std::size_t at = output_.find(prefix);
      const std::size_t end = at == std::string::npos ? at : output_.find('\n', at);
      if (end != std::string::npos) {
        return output_.substr(at + prefix.size(), end - at - prefix.size());
      }
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now());
      pollfd readable = {out_fd_, POLLIN, 0};
      if (left.count() <= 0 || ::poll(&readable, 1, static_cast<int>(left.count())) != 1) {
        return Status(StatusCode::kTimeout,
                      "no \"" + std::string(prefix) + "\" line\n" + LogTail());
      }
      char buffer[4096];
      const ssize_t n = ::read(out_fd_, buffer, sizeof buffer);
      if (n <= 0) return Status(StatusCode::kUnavailable, "exited early\n" + LogTail());
      output_.append(buffer, static_cast<std::size_t>(n));
    }
  }

  pid_t pid() const { return pid_; }
  double CpuSeconds() const { return bench::ProcessCpuSeconds(pid_); }
  // VmHWM (peak) or VmRSS in MB.
  double MemoryMb(std::string_view field) const {
    return static_cast<double>(bench::ProcessStatusKb(pid_, field)) / 1024.0;
  }

  // SIGTERM, up to 20 s, then SIGKILL. Idempotent.
  void Stop() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      pollfd exited = {pidfd_, POLLIN, 0};
      if (pidfd_ < 0 || ::poll(&exited, 1, 20000) != 1) ::kill(pid_, SIGKILL);
      int status = 0;
      ::waitpid(pid_, &status, 0);
      pid_ = -1;
    }
    for (int* fd : {&pidfd_, &out_fd_}) {
      if (*fd >= 0) ::close(*fd);
      *fd = -1;
    }
  }

  std::string LogTail() const {
    std::string text = bench::ReadFile(log_path_);
    if (text.size() > 3000) text = "..." + text.substr(text.size() - 3000);
    return "log " + log_path_ + ":\n" + text;
  }

 private:
  Child() = default;
  pid_t pid_ = -1;
  int pidfd_ = -1;
  int out_fd_ = -1;
  std::string log_path_;
  std::string output_;
};

// Runs `work(i)` for i in [0, count) on `clients` threads; the first error stops it.
inline Status ParallelFor(int clients, std::int64_t count,
                          const std::function<Status(std::int64_t)>& work) {
  std::atomic<std::int64_t> next{0};
  std::mutex mu;
  Status first;
  std::vector<std::thread> threads;
  for (int t = 0; t < clients; ++t) {
    threads.emplace_back([&] {
      while (true) {
        const std::int64_t i = next.fetch_add(1);
        if (i >= count) return;
        Status status = work(i);
        if (!status.ok()) {
          std::lock_guard lock(mu);
          if (first.ok()) first = status;
          next.store(count);
          return;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  return first;
}

inline double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t index =
      std::min(values.size() - 1, static_cast<std::size_t>(p * static_cast<double>(values.size())));
  return values[index];
}

}  // namespace slicewright::bench

#include "client/process.h"

#include <array>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <string>
#include <system_error>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "slicewright/base/status.h"

namespace slicewright::client::internal {
namespace {

using Clock = std::chrono::steady_clock;

std::string ErrnoText(int error) {
  return std::error_code(error, std::generic_category()).message();
}

// Owns the posix_spawn attribute objects and both pipes' parent ends.
class SpawnResources final {
 public:
  SpawnResources() = default;
  SpawnResources(const SpawnResources&) = delete;
  SpawnResources& operator=(const SpawnResources&) = delete;
  ~SpawnResources() {
    if (actions_ready) posix_spawn_file_actions_destroy(&actions);
    if (attr_ready) posix_spawnattr_destroy(&attr);
    for (int fd : fds) {
      if (fd >= 0) ::close(fd);
    }
  }
  static void Close(int& fd) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }

  posix_spawn_file_actions_t actions{};
  posix_spawnattr_t attr{};
  bool actions_ready = false;
  bool attr_ready = false;
  // out_read, out_write, err_read, err_write
  std::array<int, 4> fds{-1, -1, -1, -1};
};

int RemainingMillis(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  if (left.count() <= 0) return 0;
  return static_cast<int>(std::min<std::chrono::milliseconds::rep>(left.count(), 1000));
}

// Reads what is available on `fd` into `out` (capped); false at end of file or on error.
bool Drain(int fd, std::string& out) {
  std::array<char, 4096> buffer{};
  const ssize_t n = ::read(fd, buffer.data(), buffer.size());
  if (n < 0) return errno == EINTR || errno == EAGAIN;
  if (n == 0) return false;
  const auto size = static_cast<std::size_t>(n);
  if (out.size() < kMaxProcessOutput) {
    out.append(buffer.data(), std::min(size, kMaxProcessOutput - out.size()));
  }
  return true;
}

void KillGroup(pid_t pid) {
  ::kill(-pid, SIGKILL);
  ::kill(pid, SIGKILL);
}

}  // namespace

Result<ProcessResult> RunProcess(const std::vector<std::string>& argv,
                                 const std::vector<std::string>& env,
                                 std::chrono::milliseconds timeout) {
  if (argv.empty() || argv.front().empty()) return InvalidError("exec: no command");
  SpawnResources res;
  std::array<int, 2> out_pipe{};
  std::array<int, 2> err_pipe{};
  if (::pipe2(out_pipe.data(), O_CLOEXEC) != 0) return InternalError("pipe: " + ErrnoText(errno));
  res.fds[0] = out_pipe[0];
  res.fds[1] = out_pipe[1];
  if (::pipe2(err_pipe.data(), O_CLOEXEC) != 0) return InternalError("pipe: " + ErrnoText(errno));
  res.fds[2] = err_pipe[0];
  res.fds[3] = err_pipe[1];

  if (posix_spawn_file_actions_init(&res.actions) != 0) return InternalError("posix_spawn setup");
  res.actions_ready = true;
  if (posix_spawnattr_init(&res.attr) != 0) return InternalError("posix_spawn setup");
  res.attr_ready = true;
  // dup2 clears FD_CLOEXEC on the child's 1 and 2; every other pipe end closes on exec.
  int rc = posix_spawn_file_actions_addopen(&res.actions, 0, "/dev/null", O_RDONLY, 0);
  if (rc == 0) rc = posix_spawn_file_actions_adddup2(&res.actions, out_pipe[1], 1);
  if (rc == 0) rc = posix_spawn_file_actions_adddup2(&res.actions, err_pipe[1], 2);
  // Its own process group, so a timeout kills whatever the plugin started too; default signal
  // dispositions and an empty mask, whatever the calling thread had.
  sigset_t empty_mask;
  sigemptyset(&empty_mask);
  sigset_t default_signals;
  sigemptyset(&default_signals);
  sigaddset(&default_signals, SIGPIPE);
  sigaddset(&default_signals, SIGCHLD);
  if (rc == 0) rc = posix_spawnattr_setpgroup(&res.attr, 0);
  if (rc == 0) rc = posix_spawnattr_setsigmask(&res.attr, &empty_mask);
  if (rc == 0) rc = posix_spawnattr_setsigdefault(&res.attr, &default_signals);
  if (rc == 0) {
    rc = posix_spawnattr_setflags(
        &res.attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  }
  if (rc != 0) return InternalError("posix_spawn setup: " + ErrnoText(rc));

  std::vector<char*> c_argv;
  c_argv.reserve(argv.size() + 1);
  for (const std::string& arg : argv) c_argv.push_back(const_cast<char*>(arg.c_str()));
  c_argv.push_back(nullptr);
  std::vector<char*> c_env;
  c_env.reserve(env.size() + 1);
  for (const std::string& entry : env) c_env.push_back(const_cast<char*>(entry.c_str()));
  c_env.push_back(nullptr);

  pid_t pid = 0;
  rc = posix_spawnp(&pid, argv.front().c_str(), &res.actions, &res.attr, c_argv.data(),
                    c_env.data());
  if (rc != 0) {
    const std::string what = "exec: \"" + argv.front() + "\": ";
    if (rc == ENOENT) {
      return NotFoundError(what + (argv.front().find('/') == std::string::npos
                                       ? "executable file not found in $PATH"
                                       : "no such file or directory"));
    }
    if (rc == EACCES) return Status(StatusCode::kForbidden, what + "permission denied");
    return InternalError(what + ErrnoText(rc));
  }
  SpawnResources::Close(res.fds[1]);
  SpawnResources::Close(res.fds[3]);

  ProcessResult result;
  const Clock::time_point deadline = Clock::now() + timeout;
  bool out_open = true;
  bool err_open = true;
  while (out_open || err_open) {
    const int wait_ms = RemainingMillis(deadline);
    if (wait_ms == 0) {
      result.timed_out = true;
      break;
    }
    std::array<pollfd, 2> fds{pollfd{out_open ? res.fds[0] : -1, POLLIN, 0},
                              pollfd{err_open ? res.fds[2] : -1, POLLIN, 0}};
    const int ready = ::poll(fds.data(), fds.size(), wait_ms);
    if (ready < 0) {
      if (errno == EINTR) continue;
      KillGroup(pid);
      ::waitpid(pid, nullptr, 0);
      return InternalError("poll: " + ErrnoText(errno));
    }
    if (out_open && (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      out_open = Drain(res.fds[0], result.out);
    }
    if (err_open && (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      err_open = Drain(res.fds[2], result.err);
    }
  }

  // Both streams closed: the process has exited or is about to. It may also have closed them
  // and kept running, so the deadline still applies while waiting for it.
  int wait_status = 0;
  while (!result.timed_out) {
    const pid_t done = ::waitpid(pid, &wait_status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) return InternalError("waitpid: " + ErrnoText(errno));
    const int wait_ms = RemainingMillis(deadline);
    if (wait_ms == 0) {
      result.timed_out = true;
      break;
    }
    ::poll(nullptr, 0, std::min(wait_ms, 10));
  }
  if (result.timed_out) {
    KillGroup(pid);
    while (::waitpid(pid, &wait_status, 0) < 0 && errno == EINTR) {
    }
    return result;
  }
  // The plugin's children may live on in its group; they are its business once it has exited.
  if (WIFEXITED(wait_status)) result.exit_code = WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) result.signal = WTERMSIG(wait_status);
  return result;
}

}  // namespace slicewright::client::internal

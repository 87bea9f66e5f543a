// Running a credential plugin: posix_spawnp without a shell, stdin from /dev/null, stdout and
// stderr captured, killed (with its process group) when a deadline passes. Reentrant; each call
// owns its child process.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "slicewright/base/result.h"

namespace slicewright::client::internal {

struct ProcessResult {
  int exit_code = -1;      // when the process exited; -1 otherwise
  int signal = 0;          // when a signal ended it
  bool timed_out = false;  // the deadline passed and the process group was killed
  std::string out;         // stdout, up to kMaxProcessOutput bytes
  std::string err;         // stderr, up to kMaxProcessOutput bytes
};

inline constexpr std::size_t kMaxProcessOutput = std::size_t{1} << 20;

// Runs argv[0] (searched on PATH when it has no '/') with `env` ("NAME=value" entries) as its
// whole environment, in a new process group. Output past kMaxProcessOutput is dropped. An error
// Status only when the process cannot be started: kNotFound when the command does not exist
// ("exec: \"cmd\": executable file not found in $PATH"), kForbidden when it is not executable,
// kInternal otherwise. A timeout is not an error here: see `timed_out`.
Result<ProcessResult> RunProcess(const std::vector<std::string>& argv,
                                 const std::vector<std::string>& env,
                                 std::chrono::milliseconds timeout);

}  // namespace slicewright::client::internal

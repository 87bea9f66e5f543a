// Helpers shared by the tests that run against the embedded API server on loopback: a scratch
// directory removed afterwards, polling with a deadline, and a RestClient for a local port
// without the production rate limit.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include <stdlib.h>

#include "slicewright/client/rest_client.h"
#include "slicewright/client/transport.h"

namespace slicewright::test_support {

// A fresh directory under the temporary directory, removed with everything in it.
class TempDir final {
 public:
  explicit TempDir(std::string_view prefix = "sw_test") {
    std::string pattern =
        (std::filesystem::temp_directory_path() / (std::string(prefix) + "_XXXXXX")).string();
    if (::mkdtemp(pattern.data()) == nullptr) std::abort();
    path_ = pattern;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Polls `condition` every 10 ms until it holds or `timeout` passes; returns its last value. For
// waiting on other threads and processes, never as a timing assertion.
template <typename Fn>
bool Eventually(Fn&& condition,
                std::chrono::milliseconds timeout = std::chrono::milliseconds(15'000)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return condition();
}

// A RestClient for http://127.0.0.1:`port` with a rate limit no test reaches.
inline std::unique_ptr<client::RestClient> LoopbackClient(std::uint16_t port) {
  client::RestConfig config;
  config.server.scheme = "http";
  config.server.host = "127.0.0.1";
  config.server.port = port;
  auto transport = client::Transport::Create(config, {});
  if (!transport.ok()) std::abort();
  client::RestClientOptions options;
  options.qps = 1000;
  options.burst = 1000;
  auto rest = client::RestClient::Create(
      std::shared_ptr<client::Transport>(std::move(transport).value()), options);
  if (!rest.ok()) std::abort();
  return std::move(rest).value();
}

}  // namespace slicewright::test_support

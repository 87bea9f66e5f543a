// Test helpers for the client layer: a temporary directory removed on destruction, a fake
// environment and a hand-moved clock. Not thread-safe (tests drive them from one thread).
#pragma once

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "slicewright/client/kubeconfig.h"
#include "slicewright/client/token_source.h"

namespace slicewright::client::testing {

class TempDir final {
 public:
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "sw_client_test_XXXXXX").string();
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
  std::string Path(std::string_view name) const { return path_ + "/" + std::string(name); }

  // Writes `name` (creating parent folders) and returns its absolute path.
  std::string Write(std::string_view name, std::string_view content, mode_t mode = 0644) const {
    const std::string file = Path(name);
    std::filesystem::create_directories(std::filesystem::path(file).parent_path());
    {
      std::ofstream out(file, std::ios::binary | std::ios::trunc);
      out << content;
    }
    ::chmod(file.c_str(), mode);
    return file;
  }

  // Writes an executable /bin/sh script.
  std::string WriteScript(std::string_view name, std::string_view body) const {
    return Write(name, "#!/bin/sh\n" + std::string(body), 0755);
  }

 private:
  std::string path_;
};

// An environment backed by a map.
inline EnvLookup FakeEnv(std::map<std::string, std::string> vars) {
  auto shared = std::make_shared<const std::map<std::string, std::string>>(std::move(vars));
  return [shared](std::string_view name) -> std::optional<std::string> {
    const auto it = shared->find(std::string(name));
    if (it == shared->end()) return std::nullopt;
    return it->second;
  };
}

// A clock that moves only when told; copies of now() share it.
class FakeClock final {
 public:
  FakeClock()
      : now_(std::make_shared<std::chrono::system_clock::time_point>(
            std::chrono::system_clock::time_point(std::chrono::seconds(1'800'000'000)))) {}
  NowFunction now() const {
    return [shared = now_] { return *shared; };
  }
  void Advance(std::chrono::seconds by) { *now_ += by; }
  std::chrono::system_clock::time_point Get() const { return *now_; }

 private:
  std::shared_ptr<std::chrono::system_clock::time_point> now_;
};

}  // namespace slicewright::client::testing

// Bearer tokens for requests: a fixed token, or a token file re-read at least once a minute
// (client-go's cachingFileTokenSource), so a rotated service-account token is picked up.
// Thread-safe: Token() may be called from any thread.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "slicewright/base/mutex.h"
#include "slicewright/base/result.h"

namespace slicewright::client {

// Wall-clock time, injected so tests move it by hand.
using NowFunction = std::function<std::chrono::system_clock::time_point()>;
NowFunction SystemNow();

class TokenSource {
 public:
  TokenSource() = default;
  TokenSource(const TokenSource&) = delete;
  TokenSource& operator=(const TokenSource&) = delete;
  virtual ~TokenSource() = default;

  // The token to send as "Authorization: Bearer <token>". Errors never contain the token.
  virtual Result<std::string> Token() = 0;
  // Where the token comes from, without the token: "static token", "token file /path".
  virtual std::string Describe() const = 0;
};

class StaticTokenSource final : public TokenSource {
 public:
  explicit StaticTokenSource(std::string token) : token_(std::move(token)) {}
  Result<std::string> Token() override { return token_; }
  std::string Describe() const override { return "static token"; }

 private:
  const std::string token_;
};

// Reads `path` on first use and again once the cached token is older than `max_age`. The token is
// the file's text with surrounding whitespace trimmed; an empty file is an error. When a re-read
// fails the previous token is kept (the file may be mid-rotation), as client-go does; the first
// read's error is returned as is (kNotFound, kForbidden, or kUnauthorized for an empty file).
class FileTokenSource final : public TokenSource {
 public:
  static constexpr std::chrono::seconds kDefaultMaxAge{60};

  FileTokenSource(std::string path, NowFunction now, std::chrono::seconds max_age = kDefaultMaxAge);

  Result<std::string> Token() override;
  std::string Describe() const override { return "token file " + path_; }
  const std::string& path() const { return path_; }

 private:
  const std::string path_;
  const NowFunction now_;
  const std::chrono::seconds max_age_;
  Mutex mu_;
  std::optional<std::string> token_ SW_GUARDED_BY(mu_);
  std::chrono::system_clock::time_point read_at_ SW_GUARDED_BY(mu_);
};

// Reads a token file once, trimmed; kUnauthorized when it is empty. Used to validate at load time.
Result<std::string> ReadTokenFile(const std::string& path);

}  // namespace slicewright::client

#include "slicewright/client/token_source.h"

#include <chrono>
#include <string>
#include <string_view>
#include <utility>

#include "slicewright/base/status.h"

#include "client/files.h"

namespace slicewright::client {
namespace {

std::string_view TrimSpace(std::string_view text) {
  constexpr std::string_view kSpace = " \t\r\n\v\f";
  const std::size_t first = text.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  const std::size_t last = text.find_last_not_of(kSpace);
  return text.substr(first, last - first + 1);
}

}  // namespace

NowFunction SystemNow() {
  return [] { return std::chrono::system_clock::now(); };
}

Result<std::string> ReadTokenFile(const std::string& path) {
  SW_ASSIGN_OR_RETURN(std::string text, internal::ReadSmallFile(path));
  const std::string_view token = TrimSpace(text);
  if (token.empty()) {
    return Status(StatusCode::kUnauthorized, "token file " + path + " is empty");
  }
  return std::string(token);
}

FileTokenSource::FileTokenSource(std::string path, NowFunction now, std::chrono::seconds max_age)
    : path_(std::move(path)), now_(now ? std::move(now) : SystemNow()), max_age_(max_age) {}

Result<std::string> FileTokenSource::Token() {
  // The read happens under the lock: it is a small local file, and one reader at a time keeps a
  // burst of requests after expiry from reading it once each.
  const MutexLock lock(mu_);
  const auto now = now_();
  if (token_.has_value() && now - read_at_ < max_age_) return *token_;
  Result<std::string> fresh = ReadTokenFile(path_);
  if (!fresh.ok()) {
    if (token_.has_value()) return *token_;  // keep serving the last good token
    return fresh.status();
  }
  token_ = std::move(fresh).value();
  read_at_ = now;
  return *token_;
}

}  // namespace slicewright::client

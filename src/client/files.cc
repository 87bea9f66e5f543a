#include "client/files.h"

#include <array>
#include <cerrno>
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "slicewright/base/status.h"

namespace slicewright::client::internal {
namespace {

constexpr std::size_t kMaxFileSize = std::size_t{16} << 20;

std::string ErrnoText(int error) {
  return std::error_code(error, std::generic_category()).message();
}

// Closes the descriptor on every path out of ReadSmallFile.
class FdCloser final {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;
  ~FdCloser() { ::close(fd_); }

 private:
  int fd_;
};

}  // namespace

Result<std::string> ReadSmallFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    std::string message = "open " + path + ": " + ErrnoText(error);
    if (error == ENOENT || error == ENOTDIR) return NotFoundError(std::move(message));
    if (error == EACCES || error == EPERM)
      return Status(StatusCode::kForbidden, std::move(message));
    return InternalError(std::move(message));
  }
  const FdCloser closer(fd);
  std::string out;
  std::array<char, 8192> buffer{};
  while (true) {
    const ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return InternalError("read " + path + ": " + ErrnoText(errno));
    }
    if (n == 0) break;
    out.append(buffer.data(), static_cast<std::size_t>(n));
    if (out.size() > kMaxFileSize) {
      return BadRequestError("read " + path + ": larger than 16 MiB");
    }
  }
  return out;
}

bool FileExists(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0;
}

std::string ResolvePath(std::string_view path, std::string_view base_dir) {
  if (path.empty() || path.front() == '/') return std::string(path);
  std::error_code error;
  std::filesystem::path base = std::filesystem::absolute(std::filesystem::path(base_dir), error);
  if (error) base = std::filesystem::path(base_dir);
  return (base / std::filesystem::path(path)).lexically_normal().string();
}

std::string DirectoryOf(std::string_view file) {
  const std::size_t slash = file.rfind('/');
  if (slash == std::string_view::npos) return ".";
  if (slash == 0) return "/";
  return std::string(file.substr(0, slash));
}

}  // namespace slicewright::client::internal

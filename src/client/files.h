// Reading the small files a client configuration names (kubeconfigs, certificates, keys, tokens)
// and resolving paths relative to a kubeconfig. Reentrant; touches only the file system.
#pragma once

#include <string>
#include <string_view>

#include "slicewright/base/result.h"

namespace slicewright::client::internal {

// The whole file. kNotFound when it does not exist, kForbidden when it cannot be opened for
// reading, kInternal on a read error; files above 16 MiB are kBadRequest (no credential is that
// large). Messages read "open /path: No such file or directory".
Result<std::string> ReadSmallFile(const std::string& path);

// True when `path` names an existing file system entry.
bool FileExists(const std::string& path);

// `path` if it is empty or absolute, else `base_dir`/`path`. `base_dir` is made absolute against
// the current directory first, as client-go's ResolvePaths does with filepath.Abs.
std::string ResolvePath(std::string_view path, std::string_view base_dir);

// The directory part of `file` ("." when it has none).
std::string DirectoryOf(std::string_view file);

}  // namespace slicewright::client::internal

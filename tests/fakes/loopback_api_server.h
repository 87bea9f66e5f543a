// The embedded API server for tests above the apiserver layer: plain HTTP on a free loopback
// port, its data in a directory the caller owns (fakes/loopback.h's TempDir), two I/O threads.
#pragma once

#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

#include "apiserver/rest/serve.h"

namespace slicewright::test_support {

// Aborts with the reason when the server cannot start: every test using it needs one.
inline std::unique_ptr<apiserver::RunningApiServer> StartLoopbackApiServer(
    const std::string& data_dir) {
  apiserver::ServeOptions options;
  options.listen = "127.0.0.1:0";
  options.data_dir = data_dir;
  options.io_threads = 2;
  auto started = apiserver::RunningApiServer::Start(std::move(options));
  if (!started.ok()) {
    std::cerr << "embedded API server: " << started.status().ToString() << "\n";
    std::abort();
  }
  return std::move(started).value();
}

}  // namespace slicewright::test_support

// The embedded API server for tests above the apiserver layer: plain HTTP on a free loopback
// port, its data in a directory the caller owns (fakes/loopback.h's TempDir), two I/O threads;
// with the MCS CRDs when asked (the MCS agent's tests).
#pragma once

#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

#include "slicewright/base/status.h"
#include "slicewright/client/rest_client.h"

#include "apiserver/api/embedded_crds.h"
#include "apiserver/rest/serve.h"

namespace slicewright::test_support {

// Aborts with the reason when the server cannot start: every test using it needs one.
inline std::unique_ptr<apiserver::RunningApiServer> StartLoopbackApiServer(
    const std::string& data_dir, bool mcs_crds = false) {
  apiserver::ServeOptions options;
  options.listen = "127.0.0.1:0";
  options.data_dir = data_dir;
  options.io_threads = 2;
  if (mcs_crds) options.crds = apiserver::McsCrdManifests();
  auto started = apiserver::RunningApiServer::Start(std::move(options));
  if (!started.ok()) {
    std::cerr << "embedded API server: " << started.status().ToString() << "\n";
    std::abort();
  }
  return std::move(started).value();
}

// Creates the Namespace `name`.
inline Status CreateNamespace(client::RestClient& client, const std::string& name) {
  return client
      .Create(client::NamespacesResource(), "",
              R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":")" + name + R"("}})")
      .status();
}

}  // namespace slicewright::test_support

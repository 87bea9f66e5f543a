// Runs the embedded development API server: SQLite storage under a data directory, the REST layer,
// the HTTP(S) listener and a kubeconfig that kubectl uses as is. What `slicewright apiserver` and
// `slicewright dev` start. Thread-safe; Stop() is idempotent.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "slicewright/base/result.h"

#include "apiserver/api/embedded_crds.h"
#include "apiserver/http/server.h"
#include "apiserver/rest/api_server.h"

namespace slicewright::apiserver {

struct ServeOptions {
  // "127.0.0.1:6443", "[::1]:0"; port 0 picks a free one.
  std::string listen = "127.0.0.1:6443";
  // Holds state.db (the commands also keep their certificates in DATA_DIR/tls).
  std::string data_dir;
  // When set, every request needs "Authorization: Bearer <token>". Required for a non-loopback
  // listen address.
  std::string token;
  // When set, serves HTTPS with a CA and serving certificate kept in this directory; empty serves
  // plain HTTP (the commands fill it in: see cli::ApplyTransportFlags).
  std::string tls_cert_dir;
  // When set, a kubeconfig for this server is written there (mode 0600).
  std::string kubeconfig_path;
  // Threads serving connections; 0: one per core (std::thread::hardware_concurrency), at least 2.
  // More threads than cores only add lock handoffs and context switches: on 2 cores, 4 threads
  // did 4,539-4,891 writes/s with 100 watchers where 2 did 4,892-5,173 (docs/performance.md).
  int io_threads = 0;
  std::int64_t history_events = 100000;
  // CustomResourceDefinition manifests installed before the server listens (ApiServer::EnsureCrds):
  // `slicewright dev` passes the MCS CRDs compiled in (apiserver/api/embedded_crds.h),
  // `slicewright apiserver` those of --mcs-crds and --crd-dir.
  std::vector<CrdManifest> crds;
  ApiServerOptions api;
};

// Splits "host:port" / "[v6]:port". kInvalid for anything else or a port outside 0..65535.
Result<std::pair<std::string, std::uint16_t>> ParseListenAddress(std::string_view listen);
// True for 127.0.0.0/8 and ::1.
bool IsLoopbackAddress(std::string_view host);

// One context of a kubeconfig: a cluster, user and context of this name.
struct KubeconfigContext {
  std::string name = "slicewright";
  std::string server_url;
  std::string ca_pem;  // empty for plain HTTP
  std::string token;   // empty for no token
  // Empty for no client certificate.
  std::string client_cert_pem;
  std::string client_key_pem;
  std::string namespace_ = "default";
};

// Writes a kubeconfig (JSON, which kubectl reads as YAML) with one cluster, user and context per
// entry, `current` the current context, atomically (temporary file, then rename) with mode 0600.
Status WriteKubeconfig(const std::string& path, const std::vector<KubeconfigContext>& contexts,
                       std::string_view current);
// The one-context kubeconfig of `slicewright apiserver`: everything named "slicewright".
Status WriteKubeconfig(const std::string& path, std::string_view server_url,
                       std::string_view ca_pem, std::string_view token,
                       std::string_view client_cert_pem = {}, std::string_view client_key_pem = {});

class RunningApiServer final {
 public:
  // Opens the storage, builds the API and starts listening. Errors name the flag or path.
  static Result<std::unique_ptr<RunningApiServer>> Start(ServeOptions options);
  ~RunningApiServer();
  RunningApiServer(const RunningApiServer&) = delete;
  RunningApiServer& operator=(const RunningApiServer&) = delete;

  std::uint16_t port() const;
  // "http://127.0.0.1:PORT" or "https://...".
  const std::string& url() const { return url_; }
  // The CA that signed the serving certificate (PEM), as the kubeconfig carries it; empty for
  // plain HTTP.
  const std::string& ca_certificate_pem() const { return ca_pem_; }
  // This server as one context of a kubeconfig (its URL, CA, token and client certificate).
  KubeconfigContext kubeconfig_context(std::string name) const;
  ApiServer& api() { return *api_; }
  // Stops listening, ends watches, stops background work and closes the database.
  void Stop();

 private:
  RunningApiServer() = default;
  std::unique_ptr<ApiServer> api_;
  std::unique_ptr<HttpServer> http_;
  std::string url_;
  std::string ca_pem_;
  std::string token_;
  std::string client_cert_pem_;
  std::string client_key_pem_;
};

}  // namespace slicewright::apiserver

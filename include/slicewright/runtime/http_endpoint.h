// HttpEndpoint is the controller's small HTTP/1.1 server: GET /metrics (a Registry's text
// exposition) and the Kubernetes probes /healthz, /livez and /readyz, built from named checks.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>

#include "slicewright/base/result.h"
#include "slicewright/base/status.h"
#include "slicewright/runtime/metrics.h"

namespace slicewright::runtime {

// The probe paths a check can belong to.
enum class Probe { kHealthz, kLivez, kReadyz };

// A health check: OK, or an error whose message is the reason shown after "failed: ". It runs on
// the endpoint's I/O thread for every probe request, so it must be quick and must not block
// (read an atomic or a timestamp; never call the API server).
using HealthCheck = std::function<Status()>;

struct HttpEndpointOptions {
  // kube-controller-manager's old insecure serving defaults (--address 0.0.0.0, --port 10252): the
  // endpoint carries no TLS. Set 127.0.0.1 when nothing off the node scrapes it. Port 0 picks a
  // free port (see HttpEndpoint::port()).
  std::string bind_address = "0.0.0.0";
  std::uint16_t port = 10252;
  // I/O threads (1 or 2 is plenty: a scrape is one Expose() and a write).
  int io_threads = 1;
  // Served at /metrics; null answers /metrics with 404. Must outlive the endpoint.
  const Registry* metrics = nullptr;
  // When non-empty, /metrics needs "Authorization: Bearer <token>" (401 otherwise). The probes
  // stay open, as kube-controller-manager's --authorization-always-allow-paths does by default,
  // since kubelet probes carry no credentials.
  std::string bearer_token;

  // Limits, so a slow or hostile client cannot hold the endpoint. A request's header section
  // over max_header_bytes gets 431, a body over max_body_bytes 413 (probes and scrapes have none).
  std::size_t max_header_bytes = std::size_t{8} * 1024;
  std::size_t max_body_bytes = std::size_t{4} * 1024;
  // From a request's first byte until it has been read whole; past it the connection is closed
  // (a client that sends half a request and stalls).
  std::chrono::milliseconds read_timeout{std::chrono::seconds(10)};
  // A keep-alive connection waiting for its next request is closed after this.
  std::chrono::milliseconds idle_timeout{std::chrono::seconds(90)};
  // Writing one response (a client that does not read).
  std::chrono::milliseconds write_timeout{std::chrono::seconds(10)};
  // Connections beyond this are closed as soon as they are accepted.
  int max_connections = 64;
  // How long Stop() lets responses being written finish before closing their connections.
  std::chrono::milliseconds stop_grace{std::chrono::seconds(2)};
};

// Serves GET and HEAD of:
//   /metrics             the Registry (Content-Type "text/plain; version=0.0.4; charset=utf-8")
//   /healthz /livez /readyz
//                        as Kubernetes' healthz package: "ok" (200) when every check of that probe
//                        passes; otherwise 500 with one "[+]name ok" or "[-]name failed: reason"
//                        line per check and "<probe> check failed". "?verbose" lists the checks
//                        on success too ("<probe> check passed"); "?exclude=name" (repeatable)
//                        skips a check ("[+]name excluded: ok"), naming unknown ones in a warn line
//   /<probe>/<name>      one check: "ok" (200) or "internal server error: reason" (500)
// Every probe has a "ping" check that always passes. Unknown paths get 404, other methods 405,
// malformed requests 400. Keep-alive as HTTP/1.1. Thread-safe.
class HttpEndpoint final {
 public:
  // Binds and listens (so port() is known and clients may connect) but serves nothing until
  // Start(). kInvalid for a bad address or option, kUnavailable when the bind fails (the message
  // names the address and the system error).
  static Result<std::unique_ptr<HttpEndpoint>> Create(HttpEndpointOptions options);
  ~HttpEndpoint();  // Stop()s
  HttpEndpoint(const HttpEndpoint&) = delete;
  HttpEndpoint& operator=(const HttpEndpoint&) = delete;

  // Registers a check for the probes in `probes` (default: all three); each probe lists its
  // checks in registration order. Names are [A-Za-z0-9._/-]+ (they become /<probe>/<name> paths);
  // kInvalid otherwise or for an empty `check`, kAlreadyExists when one of `probes` has a check of
  // that name ("ping" is taken), and then nothing is registered. May be called while serving.
  Status AddCheck(std::string name, HealthCheck check,
                  std::initializer_list<Probe> probes = {Probe::kHealthz, Probe::kLivez,
                                                         Probe::kReadyz});

  // The bound port (the chosen one when the options asked for port 0).
  std::uint16_t port() const;
  // Starts the I/O threads and returns.
  void Start();
  // Stops accepting, closes idle and half-read connections at once, lets responses being written
  // finish within stop_grace, then closes the rest and joins the threads. Idempotent; after it,
  // Start() does nothing.
  void Stop();

 private:
  struct Impl;
  explicit HttpEndpoint(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace slicewright::runtime

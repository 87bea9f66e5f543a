// Transport sends HTTP/1.1 requests to one API server, as client-go's transport does: TLS from the
// RestConfig (CA, client certificate, server name, insecure-skip-tls-verify), authentication
// (bearer token, basic auth, or an exec plugin's token and/or client certificate, re-fetched on
// expiry or after a 401), a keep-alive connection pool, a User-Agent and per-request deadlines.
// Thread-safe: any number of threads may send at once; each exchange runs on its caller's thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "slicewright/base/result.h"
#include "slicewright/client/rest_config.h"

namespace slicewright::client {

struct Request {
  std::string method = "GET";
  // Path and query, already encoded, relative to the server URL's path:
  // "/api/v1/namespaces/default/pods?limit=500".
  std::string target;
  std::string body;
  std::string content_type;  // sent with a body
  std::string accept = "application/json";
  // The whole exchange (connect, send, read) must end within this; zero: no deadline (watch
  // streams, which end by the server's timeout or Cancel()).
  std::chrono::milliseconds timeout{std::chrono::seconds(30)};
};

struct Response {
  int status = 0;
  std::string content_type;
  std::string body;
  // Retry-After in seconds, when the server sent one (429, 503).
  std::optional<std::chrono::seconds> retry_after;
};

struct TransportOptions {
  std::string user_agent = "slicewright";
  // Idle keep-alive connections kept for reuse; more are closed after their response.
  std::size_t max_idle_connections = 16;
  // A response body larger than this fails with kRequestEntityTooLarge (a full LIST of 150,000
  // Pods is about 200 MB).
  std::size_t max_body_bytes = std::size_t{1} << 30;
};

// Lets another thread end a stream: Cancel() makes Stream() return kCancelled promptly.
class StreamCanceller {
 public:
  StreamCanceller();
  ~StreamCanceller();
  StreamCanceller(const StreamCanceller&) = delete;
  StreamCanceller& operator=(const StreamCanceller&) = delete;
  void Cancel();
  bool cancelled() const;

 private:
  friend class Transport;
  struct State;
  std::shared_ptr<State> state_;
};

// Receives a streamed body as it arrives, in pieces of any size. Returning false ends the stream.
using BodyConsumer = std::function<bool(std::string_view data)>;

class Transport final {
 public:
  // Prepares the TLS context (kInvalid naming the field for an unusable CA, certificate or key)
  // and the pool. Connects lazily.
  static Result<std::unique_ptr<Transport>> Create(RestConfig config, TransportOptions options);
  ~Transport();
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  // Sends one request and reads the whole response. Any HTTP status is a Response (the caller
  // reads a Status body); errors are for the exchange itself, named "GET https://host:6443/api:
  // <what>": kUnavailable (resolve, connect, TLS handshake, connection reset), kTimeout (past the
  // deadline), kUnauthorized (no credential could be obtained, or the exec plugin's certificate
  // or key does not load; the message names the plugin's command), kRequestEntityTooLarge. A 401
  // with an exec plugin credential makes the plugin run again and the request is retried once.
  // A pooled connection the server closed meanwhile is replaced transparently.
  //
  // The exec plugin is used only when the configuration has no bearer token, basic auth or
  // client certificate of its own (client-go's rule). Its client certificate stays in memory;
  // new connections present the current one, and when it changes (expiry, a 401, its NotAfter
  // passed) the connections made with the previous one are closed, as client-go does: pooled
  // ones are not reused, and an exchange in progress on one (a watch) fails with kUnavailable
  // "... the exec plugin's client certificate changed" so its caller reconnects.
  Result<Response> Do(const Request& request);

  // Sends the request; for a 2xx status calls `consume` with the body as it arrives until the
  // body ends, `consume` returns false, or `canceller` (may be null) is cancelled, then returns
  // the Response (its body empty). A non-2xx response is read whole into the Response's body and
  // `consume` is not called. kCancelled after Cancel(); other errors as Do.
  Result<Response> Stream(const Request& request, const BodyConsumer& consume,
                          StreamCanceller* canceller);

  const RestConfig& config() const;
  // Connections opened so far (for tests of the pool).
  std::size_t connections_opened() const;

 private:
  struct Impl;
  explicit Transport(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace slicewright::client

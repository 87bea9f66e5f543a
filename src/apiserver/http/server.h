// HttpServer serves HTTP/1.1 (plain or TLS) on Boost.Asio/Beast for the embedded API server: it
// parses requests, enforces the bearer token and the body limit, calls one Handler per request and
// streams chunked responses (watch). A fixed pool of I/O threads serves every connection, so
// thousands of open watches need no thread each. Thread-safe; Stop() is idempotent.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "slicewright/base/result.h"

namespace slicewright::apiserver {

struct HttpRequest {
  std::string method;  // "GET", "POST", "PUT", "PATCH", "DELETE", ...
  std::string path;    // percent-decoded path, no query: "/api/v1/namespaces/default/pods"
  // Decoded query parameters in request order ("+" is a space, as Go's url.ParseQuery).
  std::vector<std::pair<std::string, std::string>> query;
  // Header names lower-cased; repeated headers keep every occurrence.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  std::string remote_address;  // "127.0.0.1:54321"

  // The first value of a query parameter, or "" when absent.
  std::string_view Query(std::string_view name) const;
  bool HasQuery(std::string_view name) const;
  // The first value of a header (name matched case-insensitively), or "" when absent.
  std::string_view Header(std::string_view name) const;
};

// Pushes chunks of a streaming response to one client. Thread-safe and non-blocking.
class StreamSink {
 public:
  virtual ~StreamSink() = default;
  // Queues one chunk (e.g. one watch event line). Returns false, dropping the chunk, once the
  // client has gone or its unsent backlog passed the server's per-stream limit (a slow reader:
  // the server then closes that stream, as kube-apiserver ends a watch that cannot keep up).
  virtual bool Write(std::shared_ptr<const std::string> chunk) = 0;
  // Sends everything queued, ends the chunked body, and keeps the connection for the next request.
  virtual void Finish() = 0;
};

// The producer side of a streaming response, implemented by the API layer.
class ResponseStream {
 public:
  virtual ~ResponseStream() = default;
  // Called once the response headers are on their way; the stream writes through `sink` from
  // any thread until it calls Finish() or is stopped.
  virtual void Start(std::shared_ptr<StreamSink> sink) = 0;
  // Called once when the client disconnects or the server stops; after it returns the stream
  // must stop writing (writes would be ignored anyway). Never called concurrently with Start.
  virtual void Stop() = 0;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers
  std::string body;
  // When set, the response is streamed with chunked transfer encoding and `body` is ignored.
  std::shared_ptr<ResponseStream> stream;
};

// Called on an I/O thread for every request that passed authentication and the size limits.
// It may block briefly (a SQLite write), never on another request.
using HttpHandler = std::function<HttpResponse(HttpRequest& request)>;

// PEM-encoded TLS material for the server.
struct TlsMaterial {
  std::string certificate_chain_pem;  // serving certificate (then intermediates)
  std::string private_key_pem;
};

struct HttpServerOptions {
  std::string address = "127.0.0.1";  // a literal IPv4 or IPv6 address
  std::uint16_t port = 0;             // 0 picks a free port (see HttpServer::port())
  int io_threads = 2;
  std::optional<TlsMaterial> tls;  // HTTPS when set
  // When non-empty, every request must carry "Authorization: Bearer <token>"; others get a 401
  // Status. Compared in constant time.
  std::string bearer_token;
  // Larger request bodies get 413 with a Status "Request entity too large: limit is 3145728".
  std::size_t max_body_bytes = std::size_t{3} * 1024 * 1024;
  // Requests whose header section is larger get 431.
  std::size_t max_header_bytes = std::size_t{1024} * 1024;
  // A streaming response whose unsent backlog exceeds this is closed.
  std::size_t max_stream_backlog_bytes = std::size_t{64} * 1024 * 1024;
  // A stream writes at most once per interval: chunks queued sooner after a write wait and go out
  // together. A quiet stream's first chunk leaves at once; a busy one trades up to this much
  // latency for one syscall per batch instead of one per event. Zero writes every chunk at once.
  std::chrono::microseconds stream_flush_interval{5000};
  // A connection idle this long between requests is closed.
  int idle_timeout_seconds = 120;
};

class HttpServer final {
 public:
  // Binds and listens (so port() is known and clients may connect) but serves nothing until
  // Start(). Fails with kInvalid for a bad address or TLS material, kUnavailable when the bind
  // fails (the message names the address and the system error).
  static Result<std::unique_ptr<HttpServer>> Create(HttpServerOptions options, HttpHandler handler);
  ~HttpServer();  // Stop()s
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  std::uint16_t port() const;
  // Starts the I/O threads and returns.
  void Start();
  // Stops accepting, stops every open stream (ResponseStream::Stop), closes connections after
  // their in-flight response, and joins the threads.
  void Stop();

 private:
  struct Impl;
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace slicewright::apiserver

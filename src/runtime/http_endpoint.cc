// HttpEndpoint on Boost.Asio/Beast: the runtime's one adapter to Boost, so every Boost error stays
// here as an error code and every exception a handler might throw is caught by the I/O loop.
//
// Threading: one io_context run by `io_threads` threads. The acceptor and each connection
// (Session) have their own strand, so their state needs no lock. Shared state (the checks, the
// session list) sits behind mutexes and is never held while a check runs.
//
// Lifetime: a Session is owned by the handlers of its pending operation; the server keeps
// weak_ptrs to reach them at Stop(). Every operation has a deadline, so no session outlives its
// timeouts, and Stop() closes the remaining ones before joining the threads. The io_context runs
// out of work only once every session is gone, so no handler outlives the server.
//
// Under ThreadSanitizer, g++ 12 flags the fences in Asio's handler invocation (-Wtsan) and a null
// dereference it cannot rule out inside Asio's scheduler: both come from Boost code inlined here.
#if defined(__SANITIZE_THREAD__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wtsan"
#pragma GCC diagnostic ignored "-Wnull-dereference"
#endif

#include "slicewright/runtime/http_endpoint.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include "slicewright/base/mutex.h"
#include "slicewright/base/thread_name.h"

namespace slicewright::runtime {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using ErrorCode = boost::system::error_code;

constexpr std::string_view kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";
constexpr std::string_view kTextContentType = "text/plain; charset=utf-8";
constexpr std::size_t kReadChunkBytes = 4096;
// After an error response the connection keeps reading (and dropping) what the client still
// sends for this long, so the client reads our answer instead of a connection reset.
constexpr auto kLingerTime = std::chrono::seconds(1);
constexpr auto kAcceptRetryDelay = std::chrono::milliseconds(100);

std::string_view View(beast::string_view s) { return {s.data(), s.size()}; }

bool ValidCheckName(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '/' || c == '-';
  });
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A query component percent-decoded, '+' as a space (Go's url.ParseQuery); a bad escape is kept
// as it is, since the only values we read are check names, which then match nothing.
std::string QueryUnescape(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '+') {
      out += ' ';
    } else if (in[i] == '%' && i + 2 < in.size() && HexValue(in[i + 1]) >= 0 &&
               HexValue(in[i + 2]) >= 0) {
      out += static_cast<char>(HexValue(in[i + 1]) * 16 + HexValue(in[i + 2]));
      i += 2;
    } else {
      out += in[i];
    }
  }
  return out;
}

struct Query {
  bool verbose = false;
  std::vector<std::string> exclude;
};

Query ParseQuery(std::string_view query) {
  Query parsed;
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    const std::size_t eq = pair.find('=');
    const std::string key = QueryUnescape(pair.substr(0, eq));
    const std::string value =
        eq == std::string_view::npos ? std::string() : QueryUnescape(pair.substr(eq + 1));
    if (key == "verbose") parsed.verbose = true;
    if (key == "exclude" && !value.empty()) parsed.exclude.push_back(value);
  }
  return parsed;
}

// Compares without an early exit, so the time taken does not tell how much of a guess matched.
bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const std::size_t n = std::max(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    const auto x = static_cast<unsigned char>(i < a.size() ? a[i] : 0);
    const auto y = static_cast<unsigned char>(i < b.size() ? b[i] : 0);
    diff = static_cast<unsigned char>(diff | (x ^ y));
  }
  return diff == 0;
}

// What a request is answered with, before it becomes a Beast message.
struct Reply {
  unsigned status = 200;
  std::string_view content_type = kTextContentType;
  std::string body;
  std::vector<std::pair<std::string_view, std::string>> headers;
  bool close = false;  // the request was unusable: answer, then close the connection
};

Reply TextReply(unsigned status, std::string body) {
  Reply reply;
  reply.status = status;
  reply.body = std::move(body);
  reply.headers.emplace_back("X-Content-Type-Options", "nosniff");
  return reply;
}

struct NamedCheck {
  std::string name;
  HealthCheck check;
};

constexpr std::array<std::string_view, 3> kProbeNames = {"healthz", "livez", "readyz"};

std::size_t ProbeIndex(Probe probe) {
  switch (probe) {
    case Probe::kHealthz:
      return 0;
    case Probe::kLivez:
      return 1;
    case Probe::kReadyz:
      return 2;
  }
  return 0;
}

class Session;

// Everything the sessions share: options, checks, the session list. Outlives every session.
class Server {
 public:
  explicit Server(HttpEndpointOptions options)
      : options_(std::move(options)),
        acceptor_(asio::make_strand(ioc_)),
        accept_retry_(acceptor_.get_executor()) {
    for (auto& checks : checks_) {
      checks.push_back(
          std::make_shared<const NamedCheck>(NamedCheck{"ping", [] { return Status::Ok(); }}));
    }
  }

  const HttpEndpointOptions& options() const { return options_; }
  tcp::acceptor& acceptor() { return acceptor_; }
  bool stopping() const {
    MutexLock lock(sessions_mu_);
    return stopping_;
  }

  Status AddCheck(std::string name, HealthCheck check, std::initializer_list<Probe> probes) {
    if (!ValidCheckName(name)) {
      return InvalidError("health check name \"" + name + "\": want [A-Za-z0-9._/-]+");
    }
    if (!check) return InvalidError("health check \"" + name + "\": no function");
    auto shared = std::make_shared<const NamedCheck>(NamedCheck{std::move(name), std::move(check)});
    MutexLock lock(checks_mu_);
    for (const Probe probe : probes) {
      for (const auto& existing : checks_[ProbeIndex(probe)]) {
        if (existing->name == shared->name) {
          return AlreadyExistsError("health check \"" + shared->name +
                                    "\" is already registered for /" +
                                    std::string(kProbeNames[ProbeIndex(probe)]));
        }
      }
    }
    for (const Probe probe : probes) {
      auto& list = checks_[ProbeIndex(probe)];
      if (std::find(list.begin(), list.end(), shared) == list.end()) list.push_back(shared);
    }
    return Status::Ok();
  }

  Reply Handle(const http::request<http::string_body>& request) const;

  void Start();
  void Stop();

  // Called by a Session's destructor.
  void SessionEnded() {
    MutexLock lock(sessions_mu_);
    --live_;
    sessions_cv_.NotifyAll();
  }

 private:
  void Accept();
  void OnAccept(const ErrorCode& ec, tcp::socket socket);
  Reply RunProbe(std::size_t probe, const Query& query) const;
  Reply OneCheck(std::size_t probe, std::string_view name) const;

  HttpEndpointOptions options_;

  mutable Mutex checks_mu_;
  std::array<std::vector<std::shared_ptr<const NamedCheck>>, 3> checks_ SW_GUARDED_BY(checks_mu_);

  mutable Mutex sessions_mu_;
  CondVar sessions_cv_;
  bool stopping_ SW_GUARDED_BY(sessions_mu_) = false;
  int live_ SW_GUARDED_BY(sessions_mu_) = 0;
  std::vector<std::weak_ptr<Session>> sessions_ SW_GUARDED_BY(sessions_mu_);

  Mutex lifecycle_mu_;  // serialises Start() and Stop()
  bool started_ SW_GUARDED_BY(lifecycle_mu_) = false;
  bool stopped_ SW_GUARDED_BY(lifecycle_mu_) = false;
  std::vector<std::thread> threads_ SW_GUARDED_BY(lifecycle_mu_);

  // After the state handlers use, so the io_context (and, before it, the acceptor and timer) is
  // destroyed while that state still exists; the threads are joined by then.
  asio::io_context ioc_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_;
  tcp::acceptor acceptor_;
  asio::steady_timer accept_retry_;
};

// One client connection: read a request, answer, repeat while keep-alive. Runs on its strand.
class Session final : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, Server& server)
      : stream_(std::move(socket)),
        server_(server),
        buffer_(server.options().max_header_bytes + server.options().max_body_bytes +
                kReadChunkBytes) {}
  ~Session() { server_.SessionEnded(); }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  void Start() {
    asio::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->WaitForRequest(); });
  }

  // From Stop(): a session that is not writing a response closes now; one that is closes after.
  void StopGracefully() {
    asio::post(stream_.get_executor(), [self = shared_from_this()] {
      self->stop_requested_ = true;
      if (self->phase_ != Phase::kWriting) self->Close();
    });
  }

  void ForceClose() {
    asio::post(stream_.get_executor(), [self = shared_from_this()] { self->Close(); });
  }

 private:
  enum class Phase { kIdle, kReading, kWriting, kLingering };

  // Waits (up to idle_timeout) for the first byte of the next request, then reads it whole (up to
  // read_timeout): a keep-alive connection may idle long, a request may not trickle in.
  void WaitForRequest() {
    if (closed_) return;
    if (stop_requested_ || server_.stopping()) {
      Close();
      return;
    }
    phase_ = Phase::kIdle;
    if (buffer_.size() > 0) {
      ReadRequest();
      return;
    }
    stream_.expires_after(server_.options().idle_timeout);
    stream_.async_read_some(buffer_.prepare(kReadChunkBytes),
                            [self = shared_from_this()](const ErrorCode& ec, std::size_t bytes) {
                              self->OnFirstBytes(ec, bytes);
                            });
  }

  void OnFirstBytes(const ErrorCode& ec, std::size_t bytes) {
    if (closed_) return;
    if (ec) {
      Close();
      return;
    }
    buffer_.commit(bytes);
    ReadRequest();
  }

  void ReadRequest() {
    phase_ = Phase::kReading;
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(std::min<std::size_t>(
        server_.options().max_header_bytes, std::numeric_limits<std::uint32_t>::max())));
    parser_->body_limit(server_.options().max_body_bytes);
    stream_.expires_after(server_.options().read_timeout);
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](const ErrorCode& ec, std::size_t /*bytes*/) {
                       self->OnRequest(ec);
                     });
  }

  void OnRequest(const ErrorCode& ec) {
    if (closed_) return;
    if (ec) {
      OnReadError(ec);
      return;
    }
    const http::request<http::string_body>& request = parser_->get();
    const bool head = request.method() == http::verb::head;
    keep_alive_ = request.keep_alive() && !stop_requested_ && !server_.stopping();
    version_ = request.version() == 10 ? 10 : 11;
    Reply reply = server_.Handle(request);
    parser_.reset();
    if (reply.close) {
      RespondAndClose(std::move(reply));
      return;
    }
    Write(std::move(reply), head);
  }

  void OnReadError(const ErrorCode& ec) {
    if (ec == http::error::header_limit || ec == http::error::buffer_overflow) {
      RespondAndClose(TextReply(431, "Request Header Fields Too Large: limit is " +
                                         std::to_string(server_.options().max_header_bytes) +
                                         " bytes\n"));
    } else if (ec == http::error::body_limit) {
      RespondAndClose(TextReply(413, "Request Entity Too Large: limit is " +
                                         std::to_string(server_.options().max_body_bytes) +
                                         " bytes\n"));
    } else if (ec.category() == http::make_error_code(http::error::bad_method).category() &&
               ec != http::error::end_of_stream && ec != http::error::partial_message) {
      RespondAndClose(TextReply(400, "400 Bad Request: " + ec.message() + "\n"));
    } else {
      // The client left, or sent half a request and stalled past read_timeout: nothing to say.
      Close();
    }
  }

  void RespondAndClose(Reply reply) {
    parser_.reset();
    keep_alive_ = false;
    linger_after_write_ = true;
    Write(std::move(reply), /*head=*/false);
  }

  void Write(Reply reply, bool head) {
    auto response = std::make_unique<http::response<http::string_body>>();
    response->version(version_);
    response->result(reply.status);
    response->set(http::field::content_type,
                  beast::string_view(reply.content_type.data(), reply.content_type.size()));
    for (const auto& [name, value] : reply.headers) {
      response->set(beast::string_view(name.data(), name.size()), value);
    }
    // HEAD answers with the GET's headers, Content-Length included, and no body.
    response->content_length(reply.body.size());
    if (!head) response->body() = std::move(reply.body);
    response->keep_alive(keep_alive_);
    response_ = std::move(response);
    phase_ = Phase::kWriting;
    stream_.expires_after(server_.options().write_timeout);
    http::async_write(stream_, *response_,
                      [self = shared_from_this()](const ErrorCode& ec, std::size_t /*bytes*/) {
                        self->OnWritten(ec);
                      });
  }

  void OnWritten(const ErrorCode& ec) {
    response_.reset();
    if (closed_) return;
    if (ec) {
      Close();
      return;
    }
    if (linger_after_write_ && !stop_requested_) {
      Linger();
      return;
    }
    if (!keep_alive_ || stop_requested_) {
      Close();
      return;
    }
    WaitForRequest();
  }

  void Linger() {
    phase_ = Phase::kLingering;
    ErrorCode ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.expires_after(kLingerTime);
    Drain();
  }

  void Drain() {
    stream_.async_read_some(asio::buffer(discard_),
                            [self = shared_from_this()](const ErrorCode& ec, std::size_t) {
                              if (self->closed_) return;
                              if (ec) {
                                self->Close();
                              } else {
                                self->Drain();
                              }
                            });
  }

  void Close() {
    if (closed_) return;
    closed_ = true;
    ErrorCode ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.close();
  }

  beast::tcp_stream stream_;
  Server& server_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::unique_ptr<http::response<http::string_body>> response_;  // kept until written
  std::array<char, 1024> discard_{};
  Phase phase_ = Phase::kIdle;
  unsigned version_ = 11;
  bool keep_alive_ = false;
  bool linger_after_write_ = false;
  bool stop_requested_ = false;
  bool closed_ = false;
};

Reply Server::Handle(const http::request<http::string_body>& request) const {
  const std::string_view target = View(request.target());
  if (target.empty() || target.front() != '/') {
    Reply reply = TextReply(400, "400 Bad Request: the target must be a path\n");
    reply.close = true;
    return reply;
  }
  const std::size_t question = target.find('?');
  const std::string_view path = target.substr(0, question);
  const std::string_view query =
      question == std::string_view::npos ? std::string_view() : target.substr(question + 1);

  // Which resource, before the method: an unknown path is 404 whatever the method (Go's mux).
  enum class Kind { kNone, kMetrics, kProbe, kCheck };
  Kind kind = Kind::kNone;
  std::size_t probe = 0;
  std::string_view check_name;
  if (path == "/metrics" && options_.metrics != nullptr) kind = Kind::kMetrics;
  for (std::size_t i = 0; i < kProbeNames.size() && kind == Kind::kNone; ++i) {
    const std::string prefix = "/" + std::string(kProbeNames[i]);
    if (path == prefix) {
      kind = Kind::kProbe;
      probe = i;
    } else if (path.size() > prefix.size() + 1 && path.substr(0, prefix.size()) == prefix &&
               path[prefix.size()] == '/') {
      kind = Kind::kCheck;
      probe = i;
      check_name = path.substr(prefix.size() + 1);
    }
  }
  if (kind == Kind::kNone) return TextReply(404, "404 page not found\n");
  if (request.method() != http::verb::get && request.method() != http::verb::head) {
    Reply reply = TextReply(405, "405 method not allowed\n");
    reply.headers.emplace_back("Allow", "GET, HEAD");
    return reply;
  }

  switch (kind) {
    case Kind::kMetrics: {
      if (!options_.bearer_token.empty()) {
        const std::string_view authorization = View(request[http::field::authorization]);
        constexpr std::string_view kBearer = "Bearer ";
        const bool bearer = authorization.size() > kBearer.size() &&
                            authorization.substr(0, kBearer.size()) == kBearer;
        if (!bearer ||
            !ConstantTimeEquals(authorization.substr(kBearer.size()), options_.bearer_token)) {
          Reply reply = TextReply(401, "Unauthorized\n");
          reply.headers.emplace_back("WWW-Authenticate", "Bearer");
          return reply;
        }
      }
      Reply reply;
      reply.content_type = kMetricsContentType;
      reply.body = options_.metrics->Expose();
      return reply;
    }
    case Kind::kProbe:
      return RunProbe(probe, ParseQuery(query));
    case Kind::kCheck:
      return OneCheck(probe, check_name);
    case Kind::kNone:
      break;
  }
  return TextReply(404, "404 page not found\n");
}

Reply Server::RunProbe(std::size_t probe, const Query& query) const {
  std::vector<std::shared_ptr<const NamedCheck>> checks;
  {
    MutexLock lock(checks_mu_);
    checks = checks_[probe];
  }
  std::vector<std::string> unmatched = query.exclude;
  std::string listing;
  bool failed = false;
  for (const auto& check : checks) {
    const auto excluded = std::find(unmatched.begin(), unmatched.end(), check->name);
    if (excluded != unmatched.end()) {
      unmatched.erase(excluded);
      listing += "[+]" + check->name + " excluded: ok\n";
      continue;
    }
    const Status status = check->check();
    if (status.ok()) {
      listing += "[+]" + check->name + " ok\n";
    } else {
      failed = true;
      listing += "[-]" + check->name + " failed: " + std::string(status.message()) + "\n";
    }
  }
  // Kubernetes warns about these rather than failing: a probe's check set changes across versions.
  if (!unmatched.empty()) {
    listing += "warn: some health checks cannot be excluded: no matches for ";
    for (std::size_t i = 0; i < unmatched.size(); ++i) {
      listing += (i == 0 ? "\"" : ",\"") + unmatched[i] + "\"";
    }
    listing += "\n";
  }
  const std::string name(kProbeNames[probe]);
  // The listing is always shown on failure: it is what an operator needs from a failed probe.
  if (failed) return TextReply(500, listing + name + " check failed\n");
  if (!query.verbose) return TextReply(200, "ok");
  return TextReply(200, listing + name + " check passed\n");
}

Reply Server::OneCheck(std::size_t probe, std::string_view name) const {
  std::shared_ptr<const NamedCheck> found;
  {
    MutexLock lock(checks_mu_);
    for (const auto& check : checks_[probe]) {
      if (check->name == name) found = check;
    }
  }
  if (found == nullptr) return TextReply(404, "404 page not found\n");
  const Status status = found->check();
  if (status.ok()) return TextReply(200, "ok");
  return TextReply(500, "internal server error: " + std::string(status.message()) + "\n");
}

void Server::Start() {
  MutexLock lock(lifecycle_mu_);
  if (started_ || stopped_) return;
  started_ = true;
  work_.emplace(ioc_.get_executor());
  asio::post(acceptor_.get_executor(), [this] { Accept(); });
  const int count = std::max(1, options_.io_threads);
  for (int i = 0; i < count; ++i) {
    threads_.emplace_back([this, name = ThreadName("metrics")] {
      name.Apply();
      for (;;) {
        try {
          ioc_.run();
          return;
        } catch (const std::exception&) {
          // A handler threw (an allocation failure): the rest keep being served.
        }
      }
    });
  }
}

void Server::Accept() {
  acceptor_.async_accept(asio::make_strand(ioc_), [this](const ErrorCode& ec, tcp::socket socket) {
    OnAccept(ec, std::move(socket));
  });
}

void Server::OnAccept(const ErrorCode& ec, tcp::socket socket) {
  if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
  if (ec) {
    // Out of file descriptors, say: try again shortly rather than spin or give up.
    accept_retry_.expires_after(kAcceptRetryDelay);
    accept_retry_.async_wait([this](const ErrorCode& wait_error) {
      if (!wait_error && acceptor_.is_open()) Accept();
    });
    return;
  }
  std::shared_ptr<Session> session;
  {
    MutexLock lock(sessions_mu_);
    ErrorCode ignored;
    if (stopping_ || live_ >= options_.max_connections) {
      socket.close(ignored);
    } else {
      // Registered under the lock Stop() sets stopping_ under, so Stop() sees every session.
      socket.set_option(tcp::no_delay(true), ignored);
      session = std::make_shared<Session>(std::move(socket), *this);
      ++live_;
      std::erase_if(sessions_, [](const std::weak_ptr<Session>& s) { return s.expired(); });
      sessions_.push_back(session);
    }
  }
  if (session != nullptr) session->Start();
  Accept();
}

void Server::Stop() {
  MutexLock lifecycle(lifecycle_mu_);
  if (stopped_) return;
  stopped_ = true;
  std::vector<std::shared_ptr<Session>> open;
  {
    MutexLock lock(sessions_mu_);
    stopping_ = true;
    for (const auto& weak : sessions_) {
      if (auto session = weak.lock()) open.push_back(std::move(session));
    }
  }
  if (!started_) {
    ErrorCode ignored;
    acceptor_.close(ignored);
    return;
  }
  asio::post(acceptor_.get_executor(), [this] {
    ErrorCode ignored;
    acceptor_.close(ignored);
    accept_retry_.cancel();
  });
  for (const auto& session : open) session->StopGracefully();
  open.clear();  // the sessions must be able to end
  work_.reset();
  {
    MutexLock lock(sessions_mu_);
    const auto give_up = std::chrono::steady_clock::now() + options_.stop_grace;
    while (live_ != 0 && std::chrono::steady_clock::now() < give_up) {
      sessions_cv_.WaitUntil(sessions_mu_, give_up);
    }
    if (live_ != 0) {
      for (const auto& weak : sessions_) {
        if (auto session = weak.lock()) open.push_back(std::move(session));
      }
    }
  }
  for (const auto& session : open) session->ForceClose();
  open.clear();
  for (std::thread& thread : threads_) thread.join();
  threads_.clear();
}

}  // namespace

struct HttpEndpoint::Impl {
  explicit Impl(HttpEndpointOptions options) : server(std::move(options)) {}
  Server server;
  std::uint16_t port = 0;  // read once bound: the acceptor itself belongs to the I/O threads
};

Result<std::unique_ptr<HttpEndpoint>> HttpEndpoint::Create(HttpEndpointOptions options) {
  if (options.io_threads < 1 || options.io_threads > 64) {
    return InvalidError("http endpoint: io_threads must be in 1..64, got " +
                        std::to_string(options.io_threads));
  }
  if (options.max_connections < 1) {
    return InvalidError("http endpoint: max_connections must be at least 1");
  }
  ErrorCode ec;
  const asio::ip::address address = asio::ip::make_address(options.bind_address, ec);
  if (ec) {
    return InvalidError("http endpoint: bind address \"" + options.bind_address +
                        "\" is not an IP address");
  }
  const tcp::endpoint endpoint(address, options.port);
  const std::string where =
      (address.is_v6() ? "[" + options.bind_address + "]" : options.bind_address) + ":" +
      std::to_string(options.port);
  try {
    auto impl = std::make_unique<Impl>(std::move(options));
    tcp::acceptor& acceptor = impl->server.acceptor();
    acceptor.open(endpoint.protocol(), ec);
    if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor.bind(endpoint, ec);
    if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) return UnavailableError("http endpoint: listen on " + where + ": " + ec.message());
    impl->port = acceptor.local_endpoint(ec).port();
    if (ec) return UnavailableError("http endpoint: listen on " + where + ": " + ec.message());
    return std::unique_ptr<HttpEndpoint>(new HttpEndpoint(std::move(impl)));
  } catch (const std::exception& error) {
    // Asio reports through error codes here; a throw is a resource failure (threads, memory).
    return InternalError("http endpoint: " + std::string(error.what()));
  }
}

HttpEndpoint::HttpEndpoint(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpEndpoint::~HttpEndpoint() { Stop(); }

Status HttpEndpoint::AddCheck(std::string name, HealthCheck check,
                              std::initializer_list<Probe> probes) {
  return impl_->server.AddCheck(std::move(name), std::move(check), probes);
}

std::uint16_t HttpEndpoint::port() const { return impl_->port; }

void HttpEndpoint::Start() { impl_->server.Start(); }

void HttpEndpoint::Stop() { impl_->server.Stop(); }

}  // namespace slicewright::runtime

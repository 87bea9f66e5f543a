// HttpServer on Boost.Asio/Beast: the only translation unit that includes Beast. It is also the
// adapter that keeps Boost and handler exceptions inside: every error leaves as a Status or as a
// Kubernetes Status response.
//
// Threading: one io_context run by `io_threads` threads. Each connection (Session) lives on its own
// strand, so its state needs no lock; the only state shared with other threads is a streaming
// response's StreamState (guarded by its mutex), written by StreamSink from any thread.
//
// Lifetime: a Session is owned by the handlers of its pending operations (shared_ptr to itself);
// the server keeps weak_ptrs to find them at Stop(). A StreamSink holds only the StreamState and a
// weak_ptr to its Session, so it stays safe to call after the connection and the server are gone:
// every StreamState is closed before the io_context is destroyed, and a closed state posts nothing.
// Under ThreadSanitizer, g++ 12 flags the fences in Asio's handler invocation (-Wtsan) and, at -O1,
// a null dereference inside Asio's scheduler it cannot rule out (-Wnull-dereference): both come
// from Boost code inlined here, so they are silenced for this file in that build only.
#if defined(__SANITIZE_THREAD__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wtsan"
#pragma GCC diagnostic ignored "-Wnull-dereference"
#endif

#include "apiserver/http/server.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include <boost/asio/buffer.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/stream_traits.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <openssl/crypto.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "slicewright/base/mutex.h"
#include "slicewright/base/result.h"
#include "slicewright/base/status.h"
#include "slicewright/base/thread_name.h"

#include "apiserver/http/tls.h"

namespace slicewright::apiserver {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using ErrorCode = boost::system::error_code;
using TlsStream = beast::ssl_stream<tcp::socket>;

constexpr std::string_view kCrlf = "\r\n";
constexpr std::string_view kLastChunk = "0\r\n\r\n";
// The most one stream write hands to one sendmsg.
constexpr std::size_t kMaxStreamWriteBytes = std::size_t{1} << 20;
// A batch of at most this many chunks (3 iovecs each, under IOV_MAX) is sent without a copy.
constexpr std::size_t kMaxGatherChunks = 300;
// SendBatchNow: the whole batch went.
constexpr std::size_t kSentAll = std::numeric_limits<std::size_t>::max();
constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
// While a response streams, the connection reads this much at a time to notice the client leave.
constexpr std::size_t kWatchReadBytes = 512;
// Read buffers grown past this by a large request are released before the next one.
constexpr std::size_t kKeptBufferBytes = std::size_t{16} * 1024;
// How long a connection closed after an error response keeps draining what the client still sends
// (so the client reads our response instead of a reset).
constexpr auto kLingerTime = std::chrono::seconds(2);
// How long Stop() waits for connections to close before abandoning them.
constexpr auto kStopGrace = std::chrono::seconds(5);
constexpr auto kAcceptRetryDelay = std::chrono::milliseconds(100);

// ---------------------------------------------------------------------------------------------
// Text helpers

std::string_view View(beast::string_view s) { return {s.data(), s.size()}; }

char AsciiLower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return AsciiLower(x) == AsciiLower(y);
         });
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = AsciiLower(c);
  return out;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Percent-decodes `in` into `out`; '+' becomes a space when `plus_is_space` (query strings, as
// Go's url.ParseQuery). False on a malformed escape.
bool PercentDecode(std::string_view in, bool plus_is_space, std::string* out) {
  out->clear();
  out->reserve(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    char c = in[i];
    if (c == '%') {
      if (i + 2 >= in.size()) return false;
      int high = HexValue(in[i + 1]);
      int low = HexValue(in[i + 2]);
      if (high < 0 || low < 0) return false;
      out->push_back(static_cast<char>(high * 16 + low));
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out->push_back(' ');
    } else {
      out->push_back(c);
    }
  }
  return true;
}

// Splits an origin-form (or absolute-form) request target into the decoded path and query.
Status ParseTarget(std::string_view target, HttpRequest* request) {
  if (target.empty()) return BadRequestError("empty request target");
  if (target.front() != '/') {
    std::size_t scheme = target.find("://");
    if (target == "*") {
      request->path = "*";
      return Status::Ok();
    }
    if (scheme == std::string_view::npos) {
      return BadRequestError("invalid request target \"" + std::string(target) + "\"");
    }
    std::size_t slash = target.find('/', scheme + 3);
    target = slash == std::string_view::npos ? std::string_view("/") : target.substr(slash);
  }
  target = target.substr(0, target.find('#'));
  std::size_t question = target.find('?');
  std::string_view raw_path = target.substr(0, question);
  if (!PercentDecode(raw_path, false, &request->path)) {
    return BadRequestError("invalid URL escape in path \"" + std::string(raw_path) + "\"");
  }
  if (question == std::string_view::npos) return Status::Ok();
  std::string_view rest = target.substr(question + 1);
  while (!rest.empty()) {
    std::size_t amp = rest.find('&');
    std::string_view piece = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    if (piece.empty()) continue;
    std::size_t equals = piece.find('=');
    std::string key;
    std::string value;
    if (!PercentDecode(piece.substr(0, equals), true, &key) ||
        (equals != std::string_view::npos &&
         !PercentDecode(piece.substr(equals + 1), true, &value))) {
      return BadRequestError("invalid URL escape in query \"" + std::string(piece) + "\"");
    }
    request->query.emplace_back(std::move(key), std::move(value));
  }
  return Status::Ok();
}

void AppendJsonString(std::string* out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->push_back('"');
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '"':
        *out += "\\\"";
        break;
      case '\\':
        *out += "\\\\";
        break;
      case '\n':
        *out += "\\n";
        break;
      case '\r':
        *out += "\\r";
        break;
      case '\t':
        *out += "\\t";
        break;
      default:
        if (u < 0x20) {
          *out += "\\u00";
          out->push_back(kHex[u >> 4]);
          out->push_back(kHex[u & 0xf]);
        } else {
          out->push_back(c);
        }
    }
  }
  out->push_back('"');
}

// A metav1.Status failure response.
HttpResponse StatusResponse(int code, std::string_view reason, std::string_view message) {
  HttpResponse response;
  response.status = code;
  response.content_type = "application/json";
  std::string& body = response.body;
  body = R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":)";
  AppendJsonString(&body, message);
  body += R"(,"reason":)";
  AppendJsonString(&body, reason);
  body += R"(,"code":)";
  body += std::to_string(code);
  body += '}';
  return response;
}

// Compares in time that depends only on the expected token's length.
bool ConstantTimeEquals(std::string_view expected, std::string_view given) {
  const bool same_size = expected.size() == given.size();
  const char* other = same_size ? given.data() : expected.data();
  bool same_bytes = CRYPTO_memcmp(expected.data(), other, expected.size()) == 0;
  return same_size && same_bytes;
}

// "Authorization: Bearer <token>", parsed as kube-apiserver's bearer authenticator does.
bool Authorized(const HttpRequest& request, std::string_view token) {
  std::string_view value = request.Header("authorization");
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
  std::size_t space = value.find(' ');
  if (space == std::string_view::npos || !EqualsIgnoreCase(value.substr(0, space), "bearer")) {
    return false;
  }
  std::string_view given = value.substr(space + 1);
  given = given.substr(0, given.find(' '));
  return !given.empty() && ConstantTimeEquals(token, given);
}

bool ValidHeaderName(std::string_view name) {
  static constexpr std::string_view kTokenPunctuation = "!#$%&'*+-.^_`|~";
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           kTokenPunctuation.find(c) != std::string_view::npos;
  });
}

bool ValidHeaderValue(std::string_view value) {
  return value.find_first_of(std::string_view("\r\n\0", 3)) == std::string_view::npos;
}

// Framing headers the server owns; a handler's copies are dropped.
bool ReservedHeader(std::string_view name) {
  for (std::string_view reserved :
       {"content-length", "transfer-encoding", "connection", "keep-alive", "upgrade"}) {
    if (EqualsIgnoreCase(name, reserved)) return true;
  }
  return false;
}

template <class Message>
void SetResponseHeaders(Message& message, const HttpResponse& response) {
  if (!response.content_type.empty() && ValidHeaderValue(response.content_type)) {
    message.set(http::field::content_type, response.content_type);
  }
  bool cache_control = false;
  for (const auto& [name, value] : response.headers) {
    if (!ValidHeaderName(name) || !ValidHeaderValue(value) || ReservedHeader(name)) continue;
    if (EqualsIgnoreCase(name, "content-type") && !response.content_type.empty()) continue;
    cache_control = cache_control || EqualsIgnoreCase(name, "cache-control");
    message.insert(beast::string_view(name), beast::string_view(value));
  }
  if (!cache_control) message.set(http::field::cache_control, "no-cache, private");
}

std::string FormatEndpoint(const tcp::endpoint& endpoint) {
  const asio::ip::address address = endpoint.address();
  std::string host = address.to_string();
  if (address.is_v6()) host = "[" + host + "]";
  return host + ":" + std::to_string(endpoint.port());
}

std::size_t HexDigits(std::size_t n) {
  std::size_t digits = 1;
  while (n >= 16) {
    n /= 16;
    ++digits;
  }
  return digits;
}

void AppendHex(std::string* out, std::size_t n) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::size_t digits = HexDigits(n);
  std::size_t start = out->size();
  out->resize(start + digits);
  for (std::size_t i = digits; i > 0; --i) {
    (*out)[start + i - 1] = kHex[n % 16];
    n /= 16;
  }
}

// Thousands of open watches each hold a descriptor: lift the soft limit to the hard one.
void RaiseFileLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= limit.rlim_max) return;
  limit.rlim_cur = limit.rlim_max;
  static_cast<void>(setrlimit(RLIMIT_NOFILE, &limit));  // best effort
}

// ---------------------------------------------------------------------------------------------
// Streaming state shared between a Session (on its strand) and its StreamSink (any thread).

struct StreamState {
  Mutex mu;
  // Chunks not yet handed to a write.
  std::vector<std::shared_ptr<const std::string>> queue SW_GUARDED_BY(mu);
  std::size_t backlog_bytes SW_GUARDED_BY(mu) = 0;  // queued plus in-flight chunk bytes
  // Writes are refused: finished, stopped, overflowed or gone.
  bool closed SW_GUARDED_BY(mu) = false;
  bool finish SW_GUARDED_BY(mu) = false;  // Finish() was called
  // The session will look at `queue` again without being told: a flush is posted, a write is in
  // flight or the coalescing timer is armed. Sinks post a flush only while this is false.
  bool flush_posted SW_GUARDED_BY(mu) = false;
};

class ServerCore;

// One connection. Everything but the constructor and destructor runs on the connection's strand
// (or after the I/O threads were joined).
class SessionBase : public std::enable_shared_from_this<SessionBase> {
 public:
  explicit SessionBase(ServerCore* core) : core_(core) {}
  virtual ~SessionBase();
  SessionBase(const SessionBase&) = delete;
  SessionBase& operator=(const SessionBase&) = delete;

  // The connection's strand. Set once before the session is shared; safe from any thread.
  const asio::any_io_executor& executor() const { return executor_; }
  // Starts the TLS handshake or the first read.
  virtual void Begin() = 0;
  // Server Stop(): ends streams and idle connections now, others after their response.
  virtual void Shutdown() = 0;
  // Closes immediately; stops an open stream.
  virtual void Close() = 0;
  virtual void OnStreamFlush(const std::shared_ptr<StreamState>& state) = 0;
  virtual void OnStreamOverflow(const std::shared_ptr<StreamState>& state) = 0;

  void set_id(std::uint64_t id) { id_ = id; }

 protected:
  ServerCore* core() const { return core_; }
  void set_executor(asio::any_io_executor executor) { executor_ = std::move(executor); }

 private:
  ServerCore* const core_;
  asio::any_io_executor executor_;
  std::uint64_t id_ = 0;  // 0 until registered with the server
};

class Sink final : public StreamSink {
 public:
  Sink(std::shared_ptr<StreamState> state, std::weak_ptr<SessionBase> session, std::size_t limit)
      : state_(std::move(state)), session_(std::move(session)), limit_(limit) {}

  bool Write(std::shared_ptr<const std::string> chunk) override {
    MutexLock lock(state_->mu);
    if (state_->closed) return false;
    if (!chunk || chunk->empty()) return true;  // an empty chunk would end the chunked body
    if (chunk->size() > limit_ || state_->backlog_bytes > limit_ - chunk->size()) {
      state_->closed = true;  // a slow reader: the session closes the connection
      state_->queue.clear();
      PostLocked(&SessionBase::OnStreamOverflow);
      return false;
    }
    state_->backlog_bytes += chunk->size();
    state_->queue.push_back(std::move(chunk));
    if (!state_->flush_posted) state_->flush_posted = PostLocked(&SessionBase::OnStreamFlush);
    return true;
  }

  void Finish() override {
    MutexLock lock(state_->mu);
    if (state_->closed) return;
    state_->closed = true;
    state_->finish = true;
    if (!state_->flush_posted) state_->flush_posted = PostLocked(&SessionBase::OnStreamFlush);
  }

 private:
  using Callback = void (SessionBase::*)(const std::shared_ptr<StreamState>&);

  // Posts `callback` to the session's strand; false when the session is gone. Runs with
  // state_->mu held and the state open, which guarantees the io_context is still alive.
  bool PostLocked(Callback callback) SW_REQUIRES(state_->mu) {
    std::shared_ptr<SessionBase> session = session_.lock();
    if (!session) return false;
    const asio::any_io_executor executor = session->executor();
    asio::post(executor, [session = std::move(session), state = state_, callback] {
      ((*session).*callback)(state);
    });
    return true;
  }

  const std::shared_ptr<StreamState> state_;
  const std::weak_ptr<SessionBase> session_;
  const std::size_t limit_;
};

// ---------------------------------------------------------------------------------------------
// The server: acceptor, threads, the registry of sessions.

class ServerCore {
 public:
  ServerCore(HttpServerOptions options, HttpHandler handler)
      : options_(std::move(options)),
        handler_(std::move(handler)),
        ioc_(std::max(1, options_.io_threads)),
        acceptor_(asio::make_strand(ioc_)),
        accept_retry_(acceptor_.get_executor()) {}
  ~ServerCore() = default;
  ServerCore(const ServerCore&) = delete;
  ServerCore& operator=(const ServerCore&) = delete;

  Status Initialize(const asio::ip::address& address);
  void Start();
  void Stop();

  std::uint16_t port() const { return port_; }
  const HttpServerOptions& options() const { return options_; }
  bool stopping() const { return stopping_.load(std::memory_order_acquire); }
  std::chrono::steady_clock::duration idle_timeout() const {
    return std::chrono::seconds(std::max(0, options_.idle_timeout_seconds));
  }

  // Authenticates and calls the handler; a throwing handler gives a 500 Status.
  HttpResponse Dispatch(HttpRequest& request);
  void Unregister(std::uint64_t id);

 private:
  void RunLoop();
  void DoAccept();
  void OnAccept(const ErrorCode& ec, tcp::socket socket);
  void StartSession(tcp::socket socket);
  bool Register(const std::shared_ptr<SessionBase>& session);
  std::vector<std::shared_ptr<SessionBase>> LiveSessions();

  const HttpServerOptions options_;
  const HttpHandler handler_;
  std::atomic<bool> stopping_{false};

  Mutex mu_;  // guards the registry; declared before ioc_, which destroys the last sessions
  CondVar sessions_empty_;
  std::unordered_map<std::uint64_t, std::weak_ptr<SessionBase>> sessions_ SW_GUARDED_BY(mu_);
  std::uint64_t next_session_id_ SW_GUARDED_BY(mu_) = 1;

  Mutex lifecycle_mu_ SW_ACQUIRED_BEFORE(mu_);  // serializes Start() and Stop()
  bool started_ SW_GUARDED_BY(lifecycle_mu_) = false;
  bool stopped_ SW_GUARDED_BY(lifecycle_mu_) = false;

  std::unique_ptr<asio::ssl::context> ssl_;  // outlives every TLS stream (declared before ioc_)
  asio::io_context ioc_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_;
  tcp::acceptor acceptor_;  // on its own strand, with accept_retry_
  asio::steady_timer accept_retry_;
  std::vector<std::thread> threads_ SW_GUARDED_BY(lifecycle_mu_);
  std::uint16_t port_ = 0;
};

SessionBase::~SessionBase() {
  if (id_ != 0) core_->Unregister(id_);
}

// ---------------------------------------------------------------------------------------------
// A connection over a plain socket or a TLS stream.

template <class Stream>
class Session final : public SessionBase {
 public:
  static constexpr bool kTls = std::is_same_v<Stream, TlsStream>;

  template <class... Args>
  explicit Session(ServerCore* core, Args&&... args)
      : SessionBase(core),
        io_(std::forward<Args>(args)...),
        timer_(io_.get_executor()),
        flush_timer_(io_.get_executor()) {
    set_executor(io_.get_executor());
  }

  ~Session() override {
    if (state_) {
      MutexLock lock(state_->mu);
      state_->closed = true;
    }
  }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  void Begin() override {
    if (closed_) return;  // the server stopped first
    ErrorCode ec;
    tcp::endpoint remote = Socket().remote_endpoint(ec);
    if (!ec) remote_ = FormatEndpoint(remote);
    if constexpr (kTls) {
      phase_ = Phase::kHandshake;
      ArmTimer(core()->idle_timeout());
      io_.async_handshake(asio::ssl::stream_base::server,
                          [self = Self()](const ErrorCode& e) { self->OnHandshake(e); });
    } else {
      ReadRequest();
    }
  }

  void Shutdown() override {
    if (closed_) return;
    if (phase_ == Phase::kWriting) {
      keep_alive_ = false;  // OnResponseWritten closes
      return;
    }
    Close();
  }

  void Close() override {
    if (closed_) return;
    std::shared_ptr<Session> keep = std::move(streaming_self_);  // released when Close returns
    closed_ = true;
    phase_ = Phase::kClosed;
    StopStreamOnce();
    DisarmTimer();
    flush_timer_.cancel();
    ErrorCode ignored;
    Socket().shutdown(tcp::socket::shutdown_both, ignored);
    Socket().close(ignored);
  }

  void OnStreamFlush(const std::shared_ptr<StreamState>& state) override {
    if (state != state_) return;  // a stream that already ended
    WriteStreamBatch();
  }

  void OnStreamOverflow(const std::shared_ptr<StreamState>& state) override {
    if (state == state_) Close();
  }

 private:
  enum class Phase { kHandshake, kReading, kHandling, kWriting, kStreaming, kLingering, kClosed };

  std::shared_ptr<Session> Self() { return std::static_pointer_cast<Session>(shared_from_this()); }
  tcp::socket& Socket() { return beast::get_lowest_layer(io_); }

  // Closes the connection when `timeout` passes before the next ArmTimer/DisarmTimer.
  void ArmTimer(std::chrono::steady_clock::duration timeout) {
    if (timeout <= std::chrono::steady_clock::duration::zero()) {
      DisarmTimer();
      return;
    }
    const std::uint64_t generation = ++timer_generation_;
    timer_.expires_after(timeout);
    timer_.async_wait([self = Self(), generation](const ErrorCode& ec) {
      if (!ec && generation == self->timer_generation_) self->Close();
    });
  }

  void DisarmTimer() {
    ++timer_generation_;
    timer_.cancel();
  }

  // Flushes the stream at next_stream_write_ (see WriteStreamBatch).
  void ArmFlushTimer() {
    flush_timer_armed_ = true;
    flush_timer_.expires_at(next_stream_write_);
    flush_timer_.async_wait([self = Self()](const ErrorCode& /*ec*/) {
      self->flush_timer_armed_ = false;
      self->WriteStreamBatch();  // a no-op once the session closed or the stream ended
    });
  }

  void OnHandshake(const ErrorCode& ec) {
    if (closed_) return;
    if (ec) {
      Close();
      return;
    }
    ReadRequest();
  }

  void ReadRequest() {
    if (closed_) return;
    if (core()->stopping()) {
      Close();
      return;
    }
    phase_ = Phase::kReading;
    parser_.emplace();
    parser_->body_limit(core()->options().max_body_bytes);
    parser_->header_limit(static_cast<std::uint32_t>(std::min<std::size_t>(
        core()->options().max_header_bytes, std::numeric_limits<std::uint32_t>::max())));
    ArmTimer(core()->idle_timeout());
    http::async_read_header(
        io_, buffer_, *parser_,
        [self = Self()](const ErrorCode& ec, std::size_t /*bytes*/) { self->OnHeader(ec); });
  }

  void OnHeader(const ErrorCode& ec) {
    if (closed_) return;
    if (ec) {
      OnReadError(ec);
      return;
    }
    const auto& request = parser_->get();
    if (!parser_->is_done() && request.version() >= 11 &&
        EqualsIgnoreCase(View(request[http::field::expect]), "100-continue")) {
      asio::async_write(io_, asio::buffer(kContinue.data(), kContinue.size()),
                        [self = Self()](const ErrorCode& e, std::size_t /*bytes*/) {
                          if (self->closed_) return;
                          if (e) {
                            self->Close();
                            return;
                          }
                          self->ReadBody();
                        });
      return;
    }
    ReadBody();
  }

  void ReadBody() {
    http::async_read(
        io_, buffer_, *parser_,
        [self = Self()](const ErrorCode& ec, std::size_t /*bytes*/) { self->OnRequest(ec); });
  }

  void OnReadError(const ErrorCode& ec) {
    if (ec == http::error::body_limit) {
      RespondAndClose(StatusResponse(413, "RequestEntityTooLarge",
                                     "Request entity too large: limit is " +
                                         std::to_string(core()->options().max_body_bytes)));
    } else if (ec == http::error::header_limit) {
      RespondAndClose(StatusResponse(431, "RequestHeaderFieldsTooLarge",
                                     "Request header fields too large: limit is " +
                                         std::to_string(core()->options().max_header_bytes)));
    } else if (ec != http::error::end_of_stream && ec != http::error::partial_message &&
               ec.category() == http::make_error_code(http::error::bad_method).category()) {
      RespondAndClose(StatusResponse(400, "BadRequest", "malformed HTTP request: " + ec.message()));
    } else {
      Close();  // the client left, the read timed out, or TLS failed
    }
  }

  void RespondAndClose(HttpResponse response) {
    parser_.reset();
    keep_alive_ = false;
    version_ = 11;
    WriteResponse(std::move(response), /*head=*/false);
  }

  void OnRequest(const ErrorCode& ec) {
    if (closed_) return;
    if (ec) {
      OnReadError(ec);
      return;
    }
    DisarmTimer();
    phase_ = Phase::kHandling;
    auto& message = parser_->get();
    version_ = message.version();
    keep_alive_ = message.keep_alive() && !core()->stopping();
    HttpRequest request;
    bool head = message.method() == http::verb::head;
    Status parsed = BuildRequest(message, head, &request);
    parser_.reset();
    if (buffer_.size() == 0 && buffer_.capacity() > kKeptBufferBytes) buffer_.shrink_to_fit();

    HttpResponse response = parsed.ok() ? core()->Dispatch(request)
                                        : StatusResponse(400, "BadRequest", parsed.message());
    if (response.stream && !head) {
      StartStream(std::move(response));
    } else {
      WriteResponse(std::move(response), head);
    }
  }

  Status BuildRequest(http::request<http::string_body>& message, bool head, HttpRequest* request) {
    // HEAD is answered as GET without the body.
    request->method = head ? std::string("GET") : std::string(View(message.method_string()));
    SW_RETURN_IF_ERROR(ParseTarget(View(message.target()), request));
    for (const auto& field : message) {
      request->headers.emplace_back(Lower(View(field.name_string())),
                                    std::string(View(field.value())));
    }
    request->body = std::move(message.body());
    request->remote_address = remote_;
    return Status::Ok();
  }

  void WriteResponse(HttpResponse response, bool head) {
    const int status = response.status >= 200 && response.status <= 599 ? response.status : 500;
    auto message = std::make_unique<http::response<http::string_body>>();
    message->version(version_ == 10 ? 10 : 11);
    message->result(static_cast<unsigned>(status));
    SetResponseHeaders(*message, response);
    if (status == 204 || status == 304) {
      response.body.clear();
    } else {
      message->content_length(response.body.size());
    }
    if (!head) message->body() = std::move(response.body);
    message->keep_alive(keep_alive_);
    response_ = std::move(message);
    phase_ = Phase::kWriting;
    ArmTimer(core()->idle_timeout());
    http::async_write(io_, *response_, [self = Self()](const ErrorCode& ec, std::size_t /*bytes*/) {
      self->OnResponseWritten(ec);
    });
  }

  void OnResponseWritten(const ErrorCode& ec) {
    if (closed_) return;
    response_.reset();
    if (ec || core()->stopping()) {
      Close();
    } else if (!keep_alive_) {
      Linger();
    } else {
      ReadRequest();
    }
  }

  // Half-closes and discards what the client still sends for a moment, so it reads our final
  // response (say a 413 sent before its body) rather than a connection reset.
  void Linger() {
    phase_ = Phase::kLingering;
    ErrorCode ignored;
    Socket().shutdown(tcp::socket::shutdown_send, ignored);
    ArmTimer(kLingerTime);
    Drain();
  }

  void Drain() {
    Socket().async_read_some(buffer_.prepare(4096),
                             [self = Self()](const ErrorCode& ec, std::size_t /*bytes*/) {
                               if (self->closed_) return;
                               if (ec) {
                                 self->Close();
                                 return;
                               }
                               self->Drain();
                             });
  }

  // --- Streaming ---------------------------------------------------------------------------

  void StartStream(HttpResponse response) {
    const int status = response.status >= 200 && response.status <= 599 ? response.status : 500;
    http::response<http::empty_body> header;
    header.version(11);
    header.result(static_cast<unsigned>(status));
    SetResponseHeaders(header, response);
    header.chunked(true);
    header.keep_alive(keep_alive_);
    std::ostringstream text;
    text << header.base();

    producer_ = std::move(response.stream);
    streaming_self_ = Self();
    state_ = std::make_shared<StreamState>();
    stream_header_ = std::make_shared<const std::string>(text.str());
    phase_ = Phase::kStreaming;
    DisarmTimer();  // a watch may stay quiet for as long as it likes
    WriteStreamBatch();
    // Watch for the client leaving, unless it already pipelined its next request (see OnWatchRead).
    if (!watch_read_pending_ && buffer_.size() == 0) WatchRead();

    auto sink = std::make_shared<Sink>(state_, weak_from_this(),
                                       core()->options().max_stream_backlog_bytes);
    std::shared_ptr<ResponseStream> producer = producer_;
    try {
      producer->Start(std::move(sink));
    } catch (...) {
      Close();
    }
  }

  // Writes the pending header, queued chunks and (after Finish) the last chunk in one gather write.
  // Chunks that arrive within stream_flush_interval of the previous write wait for the rest of the
  // interval, so a busy stream sends many events per syscall instead of one each.
  void WriteStreamBatch() {
    if (writing_ || flush_timer_armed_ || closed_ || phase_ != Phase::kStreaming) return;
    bool ends = false;
    const auto now = std::chrono::steady_clock::now();
    {
      MutexLock lock(state_->mu);
      ends = state_->finish;
      if (state_->queue.empty() && !stream_header_ && !ends) {
        state_->flush_posted = false;  // idle: the next chunk posts a flush
        return;
      }
      if (!ends && !stream_header_ && now < next_stream_write_) {
        state_->flush_posted = true;  // the timer flushes
        ArmFlushTimer();
        return;
      }
      batch_.swap(state_->queue);
      state_->flush_posted = true;  // OnStreamWritten looks again
    }
    next_stream_write_ = now + core()->options().stream_flush_interval;

    // Asio's composed write hands the kernel at most 16 buffers per sendmsg and goes back through
    // the reactor for the rest, so the gather list (size line, event, CRLF per event) of a batch
    // of 15+ events cost 4-5 syscalls and scheduler rounds per stream (measured: 23 sendmsg per
    // write with 100 watchers). A plain connection therefore sends the whole list with one
    // sendmsg of its own (no copy of the shared event lines); whatever the kernel does not take
    // at once, and every TLS batch, is copied into one buffer and written by Asio.
    batch_bytes_ = 0;
    for (const auto& chunk : batch_) batch_bytes_ += chunk->size();
    if (stream_header_) header_in_batch_ = true;
    batch_ends_stream_ = ends;
    writing_ = true;
    std::size_t skip = 0;  // bytes of the batch already sent
    if constexpr (!kTls) {
      if (batch_.size() <= kMaxGatherChunks) {
        skip = SendBatchNow();
        if (skip == kSentAll) {
          batch_.clear();
          // Completes like an Asio write would: later, on the strand, never inside this call.
          asio::post(executor(), [self = Self()] { self->OnStreamWritten(ErrorCode()); });
          return;
        }
      }
    }
    stream_out_.clear();
    AppendBatch(&stream_out_, ends);
    batch_.clear();  // copied: the shared event lines can go now
    // Up to kMaxStreamWriteBytes per sendmsg (transfer_all would cap each at 64 KB).
    asio::async_write(
        io_, asio::buffer(stream_out_.data() + skip, stream_out_.size() - skip),
        [](const ErrorCode& ec, std::size_t /*bytes*/) -> std::size_t {
          return ec ? 0 : kMaxStreamWriteBytes;
        },
        [self = Self()](const ErrorCode& ec, std::size_t /*bytes*/) { self->OnStreamWritten(ec); });
  }

  // Appends the pending header, batch_ as chunks and (when `ends`) the last chunk to `out`.
  void AppendBatch(std::string* out, bool ends) const {
    if (stream_header_) *out += *stream_header_;
    for (const auto& chunk : batch_) {
      AppendHex(out, chunk->size());
      *out += kCrlf;
      *out += *chunk;
      *out += kCrlf;
    }
    if (ends) *out += kLastChunk;
  }

  // One non-blocking sendmsg of the pending header, batch_ and (batch_ends_stream_) the last
  // chunk. Returns kSentAll, or how many bytes went (0 for EAGAIN or an error: the Asio write of
  // the rest then waits for the socket or reports the error).
  std::size_t SendBatchNow() {
    framing_.clear();
    for (const auto& chunk : batch_) {
      AppendHex(&framing_, chunk->size());
      framing_ += kCrlf;
    }
    iov_.clear();
    std::size_t total = 0;
    auto add = [&](const void* data, std::size_t size) {
      // sendmsg does not write through the iovecs; the cast only meets its signature.
      iov_.push_back(
          iovec{const_cast<void*>(data), size});  // NOLINT(cppcoreguidelines-pro-type-const-cast)
      total += size;
    };
    if (stream_header_) add(stream_header_->data(), stream_header_->size());
    std::size_t offset = 0;
    for (const auto& chunk : batch_) {
      const std::size_t line = HexDigits(chunk->size()) + kCrlf.size();
      add(framing_.data() + offset, line);
      add(chunk->data(), chunk->size());
      add(kCrlf.data(), kCrlf.size());
      offset += line;
    }
    if (batch_ends_stream_) add(kLastChunk.data(), kLastChunk.size());
    msghdr message{};
    message.msg_iov = iov_.data();
    message.msg_iovlen = iov_.size();
    const ssize_t sent = ::sendmsg(io_.native_handle(), &message, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent < 0) return 0;
    const auto bytes = static_cast<std::size_t>(sent);
    return bytes == total ? kSentAll : bytes;
  }

  void OnStreamWritten(const ErrorCode& ec) {
    writing_ = false;
    if (header_in_batch_) {
      stream_header_.reset();
      header_in_batch_ = false;
    }
    // A burst can leave a large buffer behind; a quiet stream should not keep it.
    if (stream_out_.capacity() > kMaxStreamWriteBytes) std::string().swap(stream_out_);
    {
      MutexLock lock(state_->mu);
      state_->backlog_bytes -= std::min(state_->backlog_bytes, batch_bytes_);
    }
    batch_bytes_ = 0;
    if (closed_) return;
    if (ec) {
      Close();
      return;
    }
    if (batch_ends_stream_) {
      EndStream();
      return;
    }
    WriteStreamBatch();  // chunks queued while this write was in flight
  }

  // The last chunk is out: the connection serves the next request (or closes).
  void EndStream() {
    std::shared_ptr<Session> keep = std::move(streaming_self_);
    producer_.reset();
    state_.reset();
    batch_ends_stream_ = false;
    std::vector<std::shared_ptr<const std::string>>().swap(batch_);
    std::string().swap(stream_out_);
    std::string().swap(framing_);
    std::vector<iovec>().swap(iov_);
    if (!keep_alive_ || core()->stopping()) {
      Close();
      return;
    }
    if (watch_read_pending_) {
      phase_ = Phase::kReading;  // OnWatchRead continues once the client sends its next request
      ArmTimer(core()->idle_timeout());
      return;
    }
    ReadRequest();
  }

  // Keeps a read pending while streaming: EOF or an error means the client is gone.
  void WatchRead() {
    watch_read_pending_ = true;
    io_.async_read_some(
        buffer_.prepare(kWatchReadBytes),
        [self = Self()](const ErrorCode& ec, std::size_t bytes) { self->OnWatchRead(ec, bytes); });
  }

  void OnWatchRead(const ErrorCode& ec, std::size_t bytes) {
    watch_read_pending_ = false;
    if (closed_) return;
    if (ec) {
      Close();
      return;
    }
    buffer_.commit(bytes);
    // The client sent its next request early (pipelining). Leave it in buffer_ for the parser and
    // stop watching: a pending read could not be taken back when the stream ends, and a gone
    // client still shows as a failed write.
    if (phase_ == Phase::kStreaming) return;
    ReadRequest();  // the stream ended meanwhile
  }

  // Tells the producer the stream is over unless it finished it itself. At most once.
  void StopStreamOnce() {
    if (!producer_) return;
    bool finished = false;
    {
      MutexLock lock(state_->mu);
      finished = state_->finish;
      state_->closed = true;
      state_->queue.clear();
    }
    std::shared_ptr<ResponseStream> producer = std::move(producer_);
    producer_.reset();
    if (finished) return;
    try {
      producer->Stop();
    } catch (...) {
      // The producer's failure to stop changes nothing here: the connection is closing.
    }
  }

  Stream io_;
  asio::steady_timer timer_;
  std::uint64_t timer_generation_ = 0;
  asio::steady_timer flush_timer_;  // coalesces stream writes
  bool flush_timer_armed_ = false;
  std::chrono::steady_clock::time_point next_stream_write_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::unique_ptr<http::response<http::string_body>> response_;  // while being written
  std::string remote_;
  Phase phase_ = Phase::kReading;
  unsigned version_ = 11;
  bool closed_ = false;
  bool keep_alive_ = true;
  bool watch_read_pending_ = false;

  // The open streaming response, if any.
  std::shared_ptr<ResponseStream> producer_;  // null once stopped or finished
  // Keeps the session alive while it streams even with no operation pending (a quiet stream to a
  // client that pipelined its next request); dropped by EndStream and Close.
  std::shared_ptr<Session> streaming_self_;
  std::shared_ptr<StreamState> state_;
  std::shared_ptr<const std::string> stream_header_;  // until written
  bool writing_ = false;
  bool header_in_batch_ = false;
  bool batch_ends_stream_ = false;
  std::size_t batch_bytes_ = 0;
  std::vector<std::shared_ptr<const std::string>> batch_;  // chunks taken from the queue
  std::string stream_out_;  // a batch (or its unsent rest) being written by Asio
  std::string framing_;     // SendBatchNow's chunk-size lines
  std::vector<iovec> iov_;  // SendBatchNow's gather list
};

// ---------------------------------------------------------------------------------------------
// ServerCore

Status ServerCore::Initialize(const asio::ip::address& address) {
  if (options_.tls) {
    try {
      ssl_ = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_server);
    } catch (const std::exception& e) {
      return InternalError(std::string("creating the TLS context: ") + e.what());
    }
    SW_RETURN_IF_ERROR(internal::ConfigureServerContext(ssl_->native_handle(), *options_.tls));
  }
  const tcp::endpoint endpoint(address, options_.port);
  const std::string where = FormatEndpoint(endpoint);
  ErrorCode ec;
  if (acceptor_.open(endpoint.protocol(), ec); ec) {
    return UnavailableError("listening on " + where + ": " + ec.message());
  }
  if (acceptor_.set_option(tcp::acceptor::reuse_address(true), ec); ec) {
    return UnavailableError("listening on " + where + ": " + ec.message());
  }
  if (acceptor_.bind(endpoint, ec); ec) {
    return UnavailableError("binding " + where + ": " + ec.message());
  }
  if (acceptor_.listen(asio::socket_base::max_listen_connections, ec); ec) {
    return UnavailableError("listening on " + where + ": " + ec.message());
  }
  tcp::endpoint local = acceptor_.local_endpoint(ec);
  if (ec) return UnavailableError("listening on " + where + ": " + ec.message());
  port_ = local.port();
  return Status::Ok();
}

void ServerCore::Start() {
  MutexLock lifecycle(lifecycle_mu_);
  if (started_ || stopped_) return;
  started_ = true;
  work_.emplace(ioc_.get_executor());
  asio::post(acceptor_.get_executor(), [this] { DoAccept(); });
  for (int i = 0; i < std::max(1, options_.io_threads); ++i) {
    try {
      threads_.emplace_back([this, name = ThreadName("api-" + std::to_string(i))] {
        name.Apply();
        RunLoop();
      });
    } catch (const std::exception&) {
      if (!threads_.empty()) break;  // serve with the threads we have
      RunLoop();                     // cannot happen in practice; never leave the server dead
    }
  }
}

void ServerCore::RunLoop() {
  for (;;) {
    try {
      ioc_.run();
      return;
    } catch (...) {
      // A handler threw (only allocation failure can): that operation is lost, the server lives.
    }
  }
}

std::vector<std::shared_ptr<SessionBase>> ServerCore::LiveSessions() {
  std::vector<std::shared_ptr<SessionBase>> live;
  MutexLock lock(mu_);
  live.reserve(sessions_.size());
  for (const auto& [id, weak] : sessions_) {
    if (auto session = weak.lock()) live.push_back(std::move(session));
  }
  return live;
}

void ServerCore::Stop() {
  MutexLock lifecycle(lifecycle_mu_);
  if (stopped_) return;
  stopped_ = true;
  {
    MutexLock lock(mu_);
    stopping_.store(true, std::memory_order_release);  // under mu_: Register() sees it
  }
  if (started_) {
    asio::post(acceptor_.get_executor(), [this] {
      ErrorCode ignored;
      acceptor_.close(ignored);
      accept_retry_.cancel();
    });
    for (const auto& session : LiveSessions()) {
      asio::post(session->executor(), [session] { session->Shutdown(); });
    }
    work_.reset();
    {
      MutexLock lock(mu_);
      const auto give_up = std::chrono::steady_clock::now() + kStopGrace;
      while (!sessions_.empty() && std::chrono::steady_clock::now() < give_up) {
        sessions_empty_.WaitUntil(mu_, give_up);
      }
    }
    ioc_.stop();
    for (std::thread& thread : threads_) thread.join();
    threads_.clear();
  }
  ErrorCode ignored;
  acceptor_.close(ignored);
  // Connections that did not finish in time: the I/O threads are gone, so close them from here.
  // This also closes their StreamStates, so no sink posts to the io_context after this point.
  for (const auto& session : LiveSessions()) session->Close();
}

void ServerCore::DoAccept() {
  acceptor_.async_accept(asio::make_strand(ioc_), [this](const ErrorCode& ec, tcp::socket socket) {
    OnAccept(ec, std::move(socket));
  });
}

void ServerCore::OnAccept(const ErrorCode& ec, tcp::socket socket) {
  if (stopping() || !acceptor_.is_open()) return;
  if (ec) {
    if (ec == asio::error::no_descriptors || ec == asio::error::no_buffer_space ||
        ec == asio::error::no_memory) {
      // Out of descriptors: retry shortly instead of spinning.
      accept_retry_.expires_after(kAcceptRetryDelay);
      accept_retry_.async_wait([this](const ErrorCode& e) {
        if (!e) DoAccept();
      });
      return;
    }
    DoAccept();
    return;
  }
  ErrorCode ignored;
  socket.set_option(tcp::no_delay(true), ignored);  // watch events must not wait for Nagle
  try {
    StartSession(std::move(socket));
  } catch (const std::exception&) {
    // Allocation failure: the socket is closed with the half-built session.
  }
  DoAccept();
}

void ServerCore::StartSession(tcp::socket socket) {
  std::shared_ptr<SessionBase> session;
  if (ssl_) {
    session = std::make_shared<Session<TlsStream>>(this, std::move(socket), *ssl_);
  } else {
    session = std::make_shared<Session<tcp::socket>>(this, std::move(socket));
  }
  if (!Register(session)) return;  // stopping: the destructor closes the socket
  asio::post(session->executor(), [session] { session->Begin(); });
}

bool ServerCore::Register(const std::shared_ptr<SessionBase>& session) {
  MutexLock lock(mu_);
  if (stopping()) return false;
  const std::uint64_t id = next_session_id_++;
  session->set_id(id);
  sessions_.emplace(id, session);
  return true;
}

void ServerCore::Unregister(std::uint64_t id) {
  MutexLock lock(mu_);
  sessions_.erase(id);
  if (sessions_.empty()) sessions_empty_.NotifyAll();
}

HttpResponse ServerCore::Dispatch(HttpRequest& request) {
  if (!options_.bearer_token.empty() && !Authorized(request, options_.bearer_token)) {
    return StatusResponse(401, "Unauthorized", "Unauthorized");
  }
  try {
    return handler_(request);
  } catch (const std::exception& e) {
    return StatusResponse(500, "InternalError",
                          std::string("Internal error occurred: ") + e.what());
  } catch (...) {
    return StatusResponse(500, "InternalError", "Internal error occurred: unknown exception");
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Public API

std::string_view HttpRequest::Query(std::string_view name) const {
  for (const auto& [key, value] : query) {
    if (key == name) return value;
  }
  return {};
}

bool HttpRequest::HasQuery(std::string_view name) const {
  return std::any_of(query.begin(), query.end(),
                     [&](const auto& entry) { return entry.first == name; });
}

std::string_view HttpRequest::Header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (EqualsIgnoreCase(key, name)) return value;
  }
  return {};
}

struct HttpServer::Impl : ServerCore {
  using ServerCore::ServerCore;
};

Result<std::unique_ptr<HttpServer>> HttpServer::Create(HttpServerOptions options,
                                                       HttpHandler handler) {
  if (!handler) return InvalidError("HttpServer: the handler is empty");
  if (options.io_threads < 1) {
    return InvalidError("HttpServer: io_threads must be at least 1, got " +
                        std::to_string(options.io_threads));
  }
  ErrorCode ec;
  const asio::ip::address address = asio::ip::make_address(options.address, ec);
  if (ec) {
    return InvalidError("HttpServer: invalid listen address \"" + options.address +
                        "\": want a literal IPv4 or IPv6 address");
  }
  RaiseFileLimit();
  auto impl = std::make_unique<Impl>(std::move(options), std::move(handler));
  SW_RETURN_IF_ERROR(impl->Initialize(address));
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpServer::~HttpServer() {
  if (impl_) impl_->Stop();
}

std::uint16_t HttpServer::port() const { return impl_->port(); }

void HttpServer::Start() { impl_->Start(); }

void HttpServer::Stop() { impl_->Stop(); }

}  // namespace slicewright::apiserver

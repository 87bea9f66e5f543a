// FaultProxy on blocking Boost.Asio sockets and Beast's parsers: one thread accepts, one thread
// per client connection proxies it. Blocking I/O keeps each fault a few straight lines; Stop()
// unblocks every thread by shutting its sockets down (a plain shutdown(2) on the descriptor, under
// the mutex that also guards closing and replacing them).
#include "fakes/fault_proxy.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <list>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/status.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <sys/socket.h>

namespace slicewright::fakes {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using ErrorCode = boost::system::error_code;

constexpr std::size_t kMaxRequestBody = std::size_t{8} << 20;
constexpr std::size_t kReadChunk = std::size_t{64} * 1024;

std::string_view View(beast::string_view s) { return {s.data(), s.size()}; }

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

bool IsWatch(std::string_view target) {
  const std::size_t question = target.find('?');
  if (question == std::string_view::npos) return false;
  std::string_view query = target.substr(question + 1);
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    if (pair == "watch=true" || pair == "watch=1") return true;
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
  }
  return false;
}

bool Matches(const Match& match, std::string_view method, std::string_view target) {
  if (!match.method.empty() && !EqualsIgnoreCase(match.method, method)) return false;
  if (!match.path_contains.empty() && target.find(match.path_contains) == std::string_view::npos) {
    return false;
  }
  switch (match.watch) {
    case Match::WatchFilter::kAny:
      return true;
    case Match::WatchFilter::kOnly:
      return IsWatch(target);
    case Match::WatchFilter::kNever:
      return !IsWatch(target);
  }
  return true;
}

std::string_view Reason(int status) {
  switch (status) {
    case 400:
      return "BadRequest";
    case 404:
      return "NotFound";
    case 409:
      return "Conflict";
    case 410:
      return "Expired";
    case 429:
      return "TooManyRequests";
    case 500:
      return "InternalError";
    case 503:
      return "ServiceUnavailable";
    case 504:
      return "Timeout";
    default:
      return "";
  }
}

std::string StatusLine(int status) {
  const beast::string_view phrase = http::obsolete_reason(static_cast<http::status>(status));
  return "HTTP/1.1 " + std::to_string(status) + " " + std::string(phrase.data(), phrase.size()) +
         "\r\n";
}

// The upstream's status line and headers, minus framing, which the proxy writes itself.
std::string ResponseHead(const http::response_header<>& head, bool keep_framing) {
  std::string out = StatusLine(static_cast<int>(head.result_int()));
  for (const auto& field : head) {
    const std::string_view name = View(field.name_string());
    if (EqualsIgnoreCase(name, "connection") || EqualsIgnoreCase(name, "keep-alive")) continue;
    if (!keep_framing &&
        (EqualsIgnoreCase(name, "content-length") || EqualsIgnoreCase(name, "transfer-encoding"))) {
      continue;
    }
    out += std::string(name) + ": " + std::string(View(field.value())) + "\r\n";
  }
  return out;
}

std::string Chunk(std::string_view data) {
  char size[32];
  const int n = std::snprintf(size, sizeof(size), "%zx\r\n", data.size());
  std::string out(size, static_cast<std::size_t>(n));
  out.append(data);
  out += "\r\n";
  return out;
}

struct Rule {
  RuleId id = 0;
  Match match;
  Fault fault;
  int used = 0;
};

struct Connection {
  explicit Connection(tcp::socket socket) : client(std::move(socket)) {}
  tcp::socket client;
  std::optional<tcp::socket> upstream;  // replaced and closed only under Impl::mu
  std::thread thread;
  std::atomic<bool> done{false};
};

}  // namespace

Match Match::Method(std::string method, std::string path_contains) {
  Match match;
  match.method = std::move(method);
  match.path_contains = std::move(path_contains);
  return match;
}

Match Match::Get(std::string path_contains) {
  Match match = Method("GET", std::move(path_contains));
  match.watch = WatchFilter::kNever;
  return match;
}

Match Match::Watch(std::string path_contains) {
  Match match = Method("GET", std::move(path_contains));
  match.watch = WatchFilter::kOnly;
  return match;
}

Fault Fault::Respond(int status, std::string body) {
  Fault fault;
  fault.kind = Kind::kRespond;
  fault.status = status;
  if (body.empty()) {
    body = R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
           R"("message":"fault proxy: injected HTTP )" +
           std::to_string(status) + R"(","reason":")" + std::string(Reason(status)) +
           R"(","code":)" + std::to_string(status) + "}";
  }
  fault.body = std::move(body);
  return fault;
}

Fault Fault::Raw(std::string bytes) {
  Fault fault;
  fault.kind = Kind::kRaw;
  fault.body = std::move(bytes);
  return fault;
}

Fault Fault::Delay(std::chrono::milliseconds delay) {
  Fault fault;
  fault.kind = Kind::kDelay;
  fault.delay = delay;
  return fault;
}

Fault Fault::TruncateBody(std::size_t bytes) {
  Fault fault;
  fault.kind = Kind::kTruncateBody;
  fault.bytes = bytes;
  return fault;
}

Fault Fault::ReplaceBody(std::string body) {
  Fault fault;
  fault.kind = Kind::kReplaceBody;
  fault.body = std::move(body);
  return fault;
}

Fault Fault::CutStreamAfter(int events) {
  Fault fault;
  fault.kind = Kind::kCutStream;
  fault.events = events;
  return fault;
}

Fault Fault::StallStreamAfter(int events) {
  Fault fault;
  fault.kind = Kind::kStallStream;
  fault.events = events;
  return fault;
}

Fault Fault::InjectLine(int after_events, std::string line) {
  Fault fault;
  fault.kind = Kind::kInjectLine;
  fault.events = after_events;
  fault.body = std::move(line);
  return fault;
}

struct FaultProxy::Impl {
  tcp::endpoint upstream;
  // Only the sockets' execution context: every operation is a blocking call, nothing runs it.
  asio::io_context ioc;
  tcp::acceptor acceptor{ioc};
  std::uint16_t port = 0;
  std::thread accept_thread;

  mutable std::mutex mu;
  mutable std::condition_variable cv;  // hits and request counts changed; Stop()
  bool stopping = false;
  RuleId next_id = 1;
  std::vector<Rule> rules;
  std::map<RuleId, int> hits;
  std::vector<SeenRequest> seen;
  int connections = 0;
  std::list<std::unique_ptr<Connection>> open;

  void AcceptLoop();
  void Serve(Connection& connection);
  std::optional<Fault> Pick(std::string_view method, std::string_view target);
  bool Forward(Connection& connection, http::request<http::string_body>& request,
               const std::optional<Fault>& fault, beast::flat_buffer& upstream_buffer);
  bool StreamChunked(Connection& connection, http::response_parser<http::buffer_body>& parser,
                     beast::flat_buffer& upstream_buffer, const std::optional<Fault>& fault);
  bool ConnectUpstream(Connection& connection);
  void CloseUpstream(Connection& connection);
  // Blocks until the client closes its end (or Stop()), discarding what it sends.
  void WaitForClientToLeave(Connection& connection);
  // Sleeps `delay` unless Stop() comes first; false when stopping.
  bool Sleep(std::chrono::milliseconds delay);
  bool stopping_now() const {
    std::lock_guard lock(mu);
    return stopping;
  }
};

std::optional<Fault> FaultProxy::Impl::Pick(std::string_view method, std::string_view target) {
  std::lock_guard lock(mu);
  std::optional<Fault> fault;
  RuleId applied = 0;
  for (Rule& rule : rules) {
    if (rule.used >= rule.match.times || !Matches(rule.match, method, target)) continue;
    ++rule.used;
    ++hits[rule.id];
    applied = rule.id;
    fault = rule.fault;
    break;
  }
  seen.push_back(SeenRequest{std::string(method), std::string(target), applied});
  cv.notify_all();
  return fault;
}

void FaultProxy::Impl::AcceptLoop() {
  for (;;) {
    tcp::socket socket(ioc);
    ErrorCode ec;
    acceptor.accept(socket, ec);
    std::lock_guard lock(mu);
    if (stopping) return;
    if (ec) continue;  // a transient failure (a client that reset before the accept)
    // Finished connections are reaped here, so a long test does not pile up threads.
    for (auto it = open.begin(); it != open.end();) {
      if ((*it)->done) {
        (*it)->thread.join();
        it = open.erase(it);
      } else {
        ++it;
      }
    }
    socket.set_option(tcp::no_delay(true), ec);
    ++connections;
    auto connection = std::make_unique<Connection>(std::move(socket));
    Connection* raw = connection.get();
    open.push_back(std::move(connection));
    raw->thread = std::thread([this, raw] {
      Serve(*raw);
      {
        std::lock_guard closing(mu);
        ErrorCode ignored;
        raw->client.shutdown(tcp::socket::shutdown_both, ignored);
        raw->client.close(ignored);
        if (raw->upstream) raw->upstream->close(ignored);
        raw->upstream.reset();
      }
      raw->done = true;
    });
  }
}

bool FaultProxy::Impl::ConnectUpstream(Connection& connection) {
  {
    std::lock_guard lock(mu);
    if (connection.upstream) return true;
  }
  tcp::socket socket(ioc);
  ErrorCode ec;
  socket.connect(upstream, ec);
  if (ec) return false;
  socket.set_option(tcp::no_delay(true), ec);
  std::lock_guard lock(mu);
  if (stopping) return false;
  connection.upstream.emplace(std::move(socket));
  return true;
}

void FaultProxy::Impl::CloseUpstream(Connection& connection) {
  std::lock_guard lock(mu);
  if (!connection.upstream) return;
  ErrorCode ignored;
  connection.upstream->close(ignored);
  connection.upstream.reset();
}

void FaultProxy::Impl::WaitForClientToLeave(Connection& connection) {
  std::array<char, 4096> discard{};
  ErrorCode ec;
  while (!ec) connection.client.read_some(asio::buffer(discard), ec);
}

bool FaultProxy::Impl::Sleep(std::chrono::milliseconds delay) {
  std::unique_lock lock(mu);
  return !cv.wait_for(lock, delay, [this] { return stopping; });
}

void FaultProxy::Impl::Serve(Connection& connection) {
  beast::flat_buffer client_buffer;
  beast::flat_buffer upstream_buffer;
  for (;;) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(kMaxRequestBody);
    ErrorCode ec;
    http::read(connection.client, client_buffer, parser, ec);
    if (ec) return;
    http::request<http::string_body> request = parser.release();
    const std::string method(View(request.method_string()));
    const std::string target(View(request.target()));
    const std::optional<Fault> fault = Pick(method, target);
    const bool keep_alive = request.keep_alive();
    if (fault) {
      switch (fault->kind) {
        case Fault::Kind::kRespond: {
          std::string response = StatusLine(fault->status);
          response += "Content-Type: application/json\r\n";
          if (!fault->retry_after.empty())
            response += "Retry-After: " + fault->retry_after + "\r\n";
          response += "Content-Length: " + std::to_string(fault->body.size()) + "\r\n";
          if (!keep_alive) response += "Connection: close\r\n";
          response += "\r\n";
          if (method != "HEAD") response += fault->body;
          asio::write(connection.client, asio::buffer(response), ec);
          if (ec || !keep_alive) return;
          continue;
        }
        case Fault::Kind::kDrop:
          return;
        case Fault::Kind::kStall:
          WaitForClientToLeave(connection);
          return;
        case Fault::Kind::kRaw:
          asio::write(connection.client, asio::buffer(fault->body), ec);
          return;
        default:
          break;
      }
    }
    if (!Forward(connection, request, fault, upstream_buffer) || !keep_alive) return;
  }
}

bool FaultProxy::Impl::Forward(Connection& connection, http::request<http::string_body>& request,
                               const std::optional<Fault>& fault,
                               beast::flat_buffer& upstream_buffer) {
  const bool head_request = request.method() == http::verb::head;
  std::optional<http::response_parser<http::buffer_body>> parser;
  // A kept-alive upstream connection the server closed meanwhile fails before any response byte:
  // reconnect once and send again.
  for (int attempt = 0;; ++attempt) {
    if (!ConnectUpstream(connection)) {
      const std::string bad_gateway =
          StatusLine(502) + "Content-Length: 0\r\nConnection: close\r\n\r\n";
      ErrorCode ignored;
      asio::write(connection.client, asio::buffer(bad_gateway), ignored);
      return false;
    }
    upstream_buffer.consume(upstream_buffer.size());
    ErrorCode ec;
    http::write(*connection.upstream, request, ec);
    parser.emplace();
    parser->body_limit(std::numeric_limits<std::uint64_t>::max());
    if (head_request) parser->skip(true);
    if (!ec) http::read_header(*connection.upstream, upstream_buffer, *parser, ec);
    if (!ec) break;
    CloseUpstream(connection);
    if (attempt > 0 || parser->got_some() || stopping_now()) return false;
  }
  const bool upstream_keep_alive = parser->keep_alive();
  if (fault && fault->kind == Fault::Kind::kDelay && !Sleep(fault->delay)) return false;

  bool keep = true;
  if (parser->chunked() && !head_request) {
    keep = StreamChunked(connection, *parser, upstream_buffer, fault);
  } else {
    std::string body;
    std::array<char, kReadChunk> chunk{};
    while (!parser->is_done()) {
      parser->get().body().data = chunk.data();
      parser->get().body().size = chunk.size();
      ErrorCode ec;
      http::read_some(*connection.upstream, upstream_buffer, *parser, ec);
      if (ec == http::error::need_buffer) ec = {};
      if (ec) {
        CloseUpstream(connection);
        return false;
      }
      body.append(chunk.data(), chunk.size() - parser->get().body().size);
    }
    const http::response_header<>& head = parser->get().base();
    std::string out = ResponseHead(head, /*keep_framing=*/head_request);
    ErrorCode ec;
    if (fault && fault->kind == Fault::Kind::kTruncateBody && !head_request) {
      out += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
      out += body.substr(0, std::min(fault->bytes, body.size()));
      asio::write(connection.client, asio::buffer(out), ec);
      keep = false;
    } else {
      if (fault && fault->kind == Fault::Kind::kReplaceBody && !head_request) body = fault->body;
      if (!head_request) out += "Content-Length: " + std::to_string(body.size()) + "\r\n";
      out += "\r\n";
      if (!head_request) out += body;
      asio::write(connection.client, asio::buffer(out), ec);
      keep = !ec;
    }
  }
  if (!upstream_keep_alive) CloseUpstream(connection);
  return keep;
}

bool FaultProxy::Impl::StreamChunked(Connection& connection,
                                     http::response_parser<http::buffer_body>& parser,
                                     beast::flat_buffer& upstream_buffer,
                                     const std::optional<Fault>& fault) {
  ErrorCode ec;
  const std::string head = ResponseHead(parser.get().base(), /*keep_framing=*/false) +
                           "Transfer-Encoding: chunked\r\n\r\n";
  asio::write(connection.client, asio::buffer(head), ec);
  if (ec) return false;

  using Kind = Fault::Kind;
  const bool line_fault =
      fault && (fault->kind == Kind::kCutStream || fault->kind == Kind::kStallStream ||
                fault->kind == Kind::kInjectLine);
  const bool truncate = fault && fault->kind == Kind::kTruncateBody;
  bool armed = line_fault;  // the line fault has not fired yet
  int lines = 0;
  std::size_t sent = 0;

  // Sends `data` as one chunk; false when the client is gone.
  const auto send = [&](std::string_view data) {
    if (data.empty()) return true;
    asio::write(connection.client, asio::buffer(Chunk(data)), ec);
    sent += data.size();
    return !ec;
  };
  // Fires the line fault; true when the stream goes on (an injected line), false when it ends.
  const auto fire = [&]() -> bool {
    armed = false;
    switch (fault->kind) {
      case Kind::kInjectLine:
        return send(fault->body + "\n");
      case Kind::kStallStream:
        CloseUpstream(connection);
        WaitForClientToLeave(connection);
        return false;
      default:  // kCutStream: close without the terminating chunk
        CloseUpstream(connection);
        return false;
    }
  };
  if (armed && fault->events <= 0 && !fire()) return false;

  std::array<char, kReadChunk> chunk{};
  while (!parser.is_done()) {
    parser.get().body().data = chunk.data();
    parser.get().body().size = chunk.size();
    http::read_some(*connection.upstream, upstream_buffer, parser, ec);
    if (ec == http::error::need_buffer) ec = {};
    if (ec) {
      // The upstream cut the stream: so does the proxy (no terminating chunk).
      CloseUpstream(connection);
      return false;
    }
    std::string_view data(chunk.data(), chunk.size() - parser.get().body().size);
    if (truncate && sent + data.size() >= fault->bytes) {
      send(data.substr(0, fault->bytes - sent));
      CloseUpstream(connection);
      return false;
    }
    while (armed && !data.empty()) {
      const std::size_t newline = data.find('\n');
      if (newline == std::string_view::npos) break;
      if (++lines < fault->events) {
        // Not yet: forward through this line and look further.
        if (!send(data.substr(0, newline + 1))) return false;
        data.remove_prefix(newline + 1);
        continue;
      }
      if (!send(data.substr(0, newline + 1))) return false;
      data.remove_prefix(newline + 1);
      if (!fire()) return false;
    }
    if (!send(data)) return false;
  }
  asio::write(connection.client, asio::buffer(std::string_view("0\r\n\r\n")), ec);
  return !ec;
}

Result<std::unique_ptr<FaultProxy>> FaultProxy::Start(std::string upstream_host,
                                                      std::uint16_t upstream_port) {
  auto impl = std::make_unique<Impl>();
  ErrorCode ec;
  const asio::ip::address address = asio::ip::make_address(upstream_host, ec);
  if (ec) return InvalidError("fault proxy: upstream \"" + upstream_host + "\" is not an IP");
  impl->upstream = tcp::endpoint(address, upstream_port);
  const tcp::endpoint listen(asio::ip::make_address("127.0.0.1"), 0);
  impl->acceptor.open(listen.protocol(), ec);
  if (!ec) impl->acceptor.bind(listen, ec);
  if (!ec) impl->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (!ec) impl->port = impl->acceptor.local_endpoint(ec).port();
  if (ec) return UnavailableError("fault proxy: listen: " + ec.message());
  Impl* raw = impl.get();
  impl->accept_thread = std::thread([raw] { raw->AcceptLoop(); });
  return std::unique_ptr<FaultProxy>(new FaultProxy(std::move(impl)));
}

FaultProxy::FaultProxy(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

FaultProxy::~FaultProxy() { Stop(); }

std::uint16_t FaultProxy::port() const { return impl_->port; }

RuleId FaultProxy::Add(Match match, Fault fault) {
  std::lock_guard lock(impl_->mu);
  const RuleId id = impl_->next_id++;
  impl_->rules.push_back(Rule{id, std::move(match), std::move(fault), 0});
  impl_->hits[id] = 0;
  return id;
}

void FaultProxy::ClearRules() {
  std::lock_guard lock(impl_->mu);
  impl_->rules.clear();
}

int FaultProxy::Hits(RuleId id) const {
  std::lock_guard lock(impl_->mu);
  const auto it = impl_->hits.find(id);
  return it == impl_->hits.end() ? 0 : it->second;
}

bool FaultProxy::WaitForHits(RuleId id, int count, std::chrono::milliseconds timeout) const {
  std::unique_lock lock(impl_->mu);
  return impl_->cv.wait_for(lock, timeout, [&] {
    const auto it = impl_->hits.find(id);
    return it != impl_->hits.end() && it->second >= count;
  });
}

std::vector<SeenRequest> FaultProxy::Seen() const {
  std::lock_guard lock(impl_->mu);
  return impl_->seen;
}

int FaultProxy::RequestCount() const {
  std::lock_guard lock(impl_->mu);
  return static_cast<int>(impl_->seen.size());
}

int FaultProxy::ConnectionCount() const {
  std::lock_guard lock(impl_->mu);
  return impl_->connections;
}

void FaultProxy::Stop() {
  {
    std::lock_guard lock(impl_->mu);
    if (impl_->stopping) return;
    impl_->stopping = true;
    // shutdown(2) wakes the threads blocked on these sockets; closing stays with their owners.
    ::shutdown(impl_->acceptor.native_handle(), SHUT_RDWR);
    for (const auto& connection : impl_->open) {
      if (connection->client.is_open()) {
        ::shutdown(connection->client.native_handle(), SHUT_RDWR);
      }
      if (connection->upstream && connection->upstream->is_open()) {
        ::shutdown(connection->upstream->native_handle(), SHUT_RDWR);
      }
    }
    impl_->cv.notify_all();
  }
  if (impl_->accept_thread.joinable()) impl_->accept_thread.join();
  for (const auto& connection : impl_->open) {
    if (connection->thread.joinable()) connection->thread.join();
  }
  impl_->open.clear();
  ErrorCode ignored;
  impl_->acceptor.close(ignored);
}

}  // namespace slicewright::fakes

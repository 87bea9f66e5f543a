// Threading: one io_context run by `io_threads` threads. The UDP socket has one wait for
// readability in flight at a time: the thread it completes on serves batches (UdpBatch: every
// waiting datagram received, answered and sent, up to kBatchesPerWake batches), then starts the
// next wait; the acceptor and each TCP connection have their own strand, so their state needs no
// lock. Asio is called through its error_code overloads only: nothing here throws, except thread
// creation (a resource failure, caught in Start()).
#include "dns/server.h"

#include <array>
#include <atomic>
#include <charconv>
#include <optional>
#include <set>
#include <system_error>
#include <thread>
#include <utility>

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ip/udp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>

#include "slicewright/base/log.h"
#include "slicewright/base/mutex.h"
#include "slicewright/base/thread_name.h"

#include "dns/udp_batch.h"
#include "dns/wire.h"

namespace slicewright::dns {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using asio::ip::udp;
using ErrorCode = boost::system::error_code;

constexpr std::size_t kMaxMessage = 65535;
constexpr int kPortTries = 20;
// Full batches served before the thread goes back to the event loop, so that under a flood of
// UDP the TCP connections on the same thread still get their turn. Asio's wait re-arms the
// socket's (edge-triggered) epoll registration, so datagrams left queued are reported at once.
constexpr int kBatchesPerWake = 8;

struct HostPort {
  asio::ip::address host;
  std::uint16_t port = 0;
};

Result<HostPort> ParseAddress(const std::string& text) {
  const std::size_t colon = text.rfind(':');
  if (colon == std::string::npos) {
    return Status(StatusCode::kInvalid, "dns: address \"" + text + "\" is not host:port");
  }
  std::string host = text.substr(0, colon);
  const std::string port_text = text.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host.empty()) host = "0.0.0.0";
  unsigned port = 0;
  const auto [end, ec] =
      std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || port > 65535 ||
      port_text.empty()) {
    return Status(StatusCode::kInvalid, "dns: address \"" + text + "\": bad port");
  }
  ErrorCode error;
  HostPort out;
  out.host = asio::ip::make_address(host, error);
  if (error) {
    return Status(StatusCode::kInvalid,
                  "dns: address \"" + text + "\": bad host: " + error.message());
  }
  out.port = static_cast<std::uint16_t>(port);
  return out;
}

}  // namespace

class Server::Impl {
 public:
  Impl(ServerOptions options, Handler handler)
      : options_(std::move(options)),
        handler_(std::move(handler)),
        udp_(ioc_),
        // One byte more than the longest query accepted: a longer datagram arrives cut to it,
        // and the decoder answers FORMERR as it does to any query over kMaxQueryBytes.
        batch_(static_cast<std::size_t>(options_.udp_batch), kMaxQueryBytes + 1),
        acceptor_(asio::make_strand(ioc_)) {}

  Status Bind() {
    SW_ASSIGN_OR_RETURN(HostPort where, ParseAddress(options_.address));
    ErrorCode error;
    for (int attempt = 0; attempt < kPortTries; ++attempt) {
      error = {};
      udp::endpoint udp_endpoint(where.host, where.port);
      udp_.open(udp_endpoint.protocol(), error);
      if (!error) udp_.bind(udp_endpoint, error);
      if (error) {
        udp_.close(error);
        if (where.port != 0) break;
        continue;
      }
      const std::uint16_t port = udp_.local_endpoint(error).port();
      tcp::endpoint tcp_endpoint(where.host, port);
      acceptor_.open(tcp_endpoint.protocol(), error);
      if (!error) acceptor_.set_option(asio::socket_base::reuse_address(true), error);
      if (!error) acceptor_.bind(tcp_endpoint, error);
      if (!error) acceptor_.listen(asio::socket_base::max_listen_connections, error);
      if (!error) {
        port_ = port;
        host_ = where.host;
        return Status();
      }
      ErrorCode ignored;
      acceptor_.close(ignored);
      udp_.close(ignored);
      if (where.port != 0) break;  // a fixed port: the error stands
    }
    return Status(StatusCode::kUnavailable,
                  "dns: cannot listen on " + options_.address + ": " + error.message());
  }

  Status Start() {
    MutexLock lock(mu_);
    if (started_ || stopped_) return Status();
    started_ = true;
    work_.emplace(ioc_.get_executor());
    WaitForQueries();
    Accept();
    try {
      for (int i = 0; i < std::max(1, options_.io_threads); ++i) {
        threads_.emplace_back([this, name = ThreadName(fmt::format("dns-{}", i))] {
          name.Apply();
          ioc_.run();
        });
      }
    } catch (const std::system_error& e) {
      return Status(StatusCode::kUnavailable, std::string("dns: starting a thread: ") + e.what());
    }
    return Status();
  }

  void Stop() {
    std::vector<std::thread> threads;
    {
      MutexLock lock(mu_);
      if (stopped_) return;
      stopped_ = true;
      threads = std::move(threads_);
    }
    // Closing on the sockets' own executors, then ending the loop: pending handlers are
    // destroyed with the io_context, never run.
    asio::post(acceptor_.get_executor(), [this] {
      ErrorCode ignored;
      acceptor_.close(ignored);
    });
    work_.reset();
    ioc_.stop();
    for (std::thread& thread : threads) thread.join();
    ErrorCode ignored;
    udp_.close(ignored);
    acceptor_.close(ignored);
  }

  std::uint16_t port() const { return port_; }
  std::string address() const {
    return host_.is_v6() ? "[" + host_.to_string() + "]:" + std::to_string(port_)
                         : host_.to_string() + ":" + std::to_string(port_);
  }
  ServerStats Stats() const {
    return ServerStats{udp_queries_.load(), tcp_queries_.load(), dropped_.load()};
  }

  void Handle(std::span<const std::uint8_t> message, bool tcp,
              std::vector<std::uint8_t>& response) {
    (tcp ? tcp_queries_ : udp_queries_).fetch_add(1, std::memory_order_relaxed);
    response.clear();
    handler_(message, tcp, response);
    if (response.empty()) dropped_.fetch_add(1, std::memory_order_relaxed);
  }

  const ServerOptions& options() const { return options_; }
  std::atomic<int>& connections() { return connections_; }

 private:
  void WaitForQueries() {
    udp_.async_wait(udp::socket::wait_read, [this](const ErrorCode& error) {
      if (error == asio::error::operation_aborted || !udp_.is_open()) return;
      const UdpBatch::Handler answer = [this](std::span<const std::uint8_t> query,
                                              std::vector<std::uint8_t>& response) {
        Handle(query, false, response);
      };
      for (int i = 0; i < kBatchesPerWake; ++i) {
        if (batch_.ServeOnce(udp_.native_handle(), answer) < batch_.capacity()) break;
      }
      WaitForQueries();
    });
  }

  void Accept();

  const ServerOptions options_;
  const Handler handler_;
  asio::io_context ioc_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_;
  udp::socket udp_;
  UdpBatch batch_;  // used by the one thread whose wait completed
  tcp::acceptor acceptor_;
  std::uint16_t port_ = 0;
  asio::ip::address host_;
  std::atomic<std::uint64_t> udp_queries_{0};
  std::atomic<std::uint64_t> tcp_queries_{0};
  std::atomic<std::uint64_t> dropped_{0};
  std::atomic<int> connections_{0};
  Mutex mu_;
  bool started_ SW_GUARDED_BY(mu_) = false;
  bool stopped_ SW_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_ SW_GUARDED_BY(mu_);
};

namespace {

// One TCP connection: length-prefixed queries answered in order until the client closes, sends
// a zero length, or stays idle past the timeout. Runs on its strand.
class Session final : public std::enable_shared_from_this<Session> {
 public:
  Session(Server::Impl& server, tcp::socket socket)
      : server_(server), socket_(std::move(socket)), timer_(socket_.get_executor()) {}
  ~Session() { server_.connections().fetch_sub(1, std::memory_order_relaxed); }

  void Start() { ReadLength(); }

 private:
  void ArmTimer() {
    timer_.expires_after(server_.options().tcp_idle_timeout);
    timer_.async_wait([self = shared_from_this()](const ErrorCode& error) {
      if (!error) {
        ErrorCode ignored;
        self->socket_.close(ignored);
      }
    });
  }

  void ReadLength() {
    ArmTimer();
    asio::async_read(socket_, asio::buffer(length_),
                     [self = shared_from_this()](const ErrorCode& error, std::size_t) {
                       if (error) return self->Close();
                       const std::size_t size = (self->length_[0] << 8) | self->length_[1];
                       if (size == 0) return self->Close();
                       self->message_.resize(size);
                       self->ReadMessage();
                     });
  }

  void ReadMessage() {
    asio::async_read(socket_, asio::buffer(message_),
                     [self = shared_from_this()](const ErrorCode& error, std::size_t) {
                       if (error) return self->Close();
                       self->server_.Handle(std::span<const std::uint8_t>(self->message_), true,
                                            self->response_);
                       if (self->response_.empty() || self->response_.size() > kMaxMessage) {
                         return self->ReadLength();  // nothing to say to this one
                       }
                       self->Write();
                     });
  }

  // Sends response_ with its length prefix.
  void Write() {
    out_.resize(response_.size() + 2);
    out_[0] = static_cast<std::uint8_t>(response_.size() >> 8);
    out_[1] = static_cast<std::uint8_t>(response_.size() & 0xFFU);
    std::copy(response_.begin(), response_.end(), out_.begin() + 2);
    asio::async_write(socket_, asio::buffer(out_),
                      [self = shared_from_this()](const ErrorCode& error, std::size_t) {
                        if (error) return self->Close();
                        self->ReadLength();
                      });
  }

  void Close() {
    ErrorCode ignored;
    timer_.cancel();
    socket_.close(ignored);
  }

  Server::Impl& server_;
  tcp::socket socket_;
  asio::steady_timer timer_;
  std::array<std::uint8_t, 2> length_{};
  std::vector<std::uint8_t> message_;
  std::vector<std::uint8_t> response_;
  std::vector<std::uint8_t> out_;
};

}  // namespace

void Server::Impl::Accept() {
  acceptor_.async_accept(asio::make_strand(ioc_), [this](const ErrorCode& error,
                                                         tcp::socket socket) {
    if (error == asio::error::operation_aborted || !acceptor_.is_open()) return;
    if (!error) {
      if (connections_.fetch_add(1, std::memory_order_relaxed) >= options_.max_tcp_connections) {
        connections_.fetch_sub(1, std::memory_order_relaxed);
        ErrorCode ignored;
        socket.close(ignored);
      } else {
        std::make_shared<Session>(*this, std::move(socket))->Start();
      }
    }
    Accept();
  });
}

Status CheckAddress(const std::string& address) { return ParseAddress(address).status(); }

Result<std::unique_ptr<Server>> Server::Create(ServerOptions options, Handler handler) {
  if (handler == nullptr) return Status(StatusCode::kInvalid, "dns: a handler is required");
  if (options.io_threads < 1 || options.io_threads > 64) {
    return Status(StatusCode::kInvalid, "dns: io_threads must be in 1..64");
  }
  if (options.udp_batch < 1 || options.udp_batch > 1024) {
    return Status(StatusCode::kInvalid, "dns: udp_batch must be in 1..1024");
  }
  auto impl = std::make_unique<Impl>(std::move(options), std::move(handler));
  SW_RETURN_IF_ERROR(impl->Bind());
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Server::~Server() { Stop(); }
Status Server::Start() { return impl_->Start(); }
void Server::Stop() { impl_->Stop(); }
std::uint16_t Server::port() const { return impl_->port(); }
std::string Server::address() const { return impl_->address(); }
ServerStats Server::Stats() const { return impl_->Stats(); }

}  // namespace slicewright::dns

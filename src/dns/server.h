// DNS over UDP and TCP on one address (RFC 1035 §4.2, RFC 7766), on Boost.Asio: no thread per
// query, every socket driven by a small pool of I/O threads; UDP queries are taken and answered a
// batch at a time (udp_batch.h). What to answer is the handler's
// business (Respond() in responder.h). Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "slicewright/base/result.h"

namespace slicewright::dns {

struct ServerOptions {
  // "host:port": "127.0.0.1:5353", "[::1]:5353", ":53" (every IPv4 address). Port 0 picks a port
  // free for both UDP and TCP (see Server::port()).
  std::string address = "127.0.0.1:5353";
  int io_threads = 1;
  // UDP datagrams taken by one recvmmsg(2) (udp_batch.h); up to 8 batches are served before the
  // thread turns to its other work. dnsperf keeps 100 queries outstanding: 32 takes most of a
  // burst in a few calls while the buffers (32 x 4 kB) stay small.
  int udp_batch = 32;
  // TCP connections beyond this are closed as soon as they are accepted.
  int max_tcp_connections = 128;
  // A TCP connection with no complete query for this long is closed (RFC 7766 §6.2.3).
  std::chrono::milliseconds tcp_idle_timeout{10'000};
};

struct ServerStats {
  std::uint64_t udp_queries = 0;
  std::uint64_t tcp_queries = 0;
  std::uint64_t dropped = 0;  // handler returned nothing
};

// Checks `address` as ServerOptions::address takes it, without binding: kInvalid naming it.
Status CheckAddress(const std::string& address);

class Server final {
 public:
  // Writes the response to one message (without TCP's length prefix) into `response`, `tcp`
  // telling the transport; `response` arrives empty (its capacity reused from earlier messages),
  // and left empty, nothing is sent. Called on the I/O threads, concurrently: it must be
  // thread-safe and quick.
  using Handler = std::function<void(std::span<const std::uint8_t> message, bool tcp,
                                     std::vector<std::uint8_t>& response)>;

  // Binds UDP and TCP (so port() is known) but answers nothing until Start(). kInvalid for a bad
  // address, kUnavailable when a bind fails (naming the address and the error).
  static Result<std::unique_ptr<Server>> Create(ServerOptions options, Handler handler);
  ~Server();  // Stop()s
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Starts the I/O threads. Idempotent; kUnavailable when a thread cannot start.
  Status Start();
  // Closes the sockets and joins the threads; no handler runs after it returns. Idempotent.
  void Stop();

  std::uint16_t port() const;
  // "127.0.0.1:PORT" as bound.
  std::string address() const;
  ServerStats Stats() const;

  class Impl;

 private:
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace slicewright::dns

// Answers UDP queries a batch at a time (Linux): one recvmmsg(2) takes every datagram waiting on
// the socket, up to the batch's capacity, the handler answers each in turn, and one sendmmsg(2)
// sends the answers back to their senders. Two system calls for a batch instead of two for each
// query: that is where a busy resolver's time goes (docs/performance.md, "clusterset.local DNS").
// Not thread-safe: one thread serves a batch at a time (the server keeps one wait in flight).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include <sys/socket.h>

namespace slicewright::dns {

class UdpBatch final {
 public:
  // The answer to one datagram, written into `response` (which arrives empty, its capacity kept
  // from earlier batches); left empty, nothing is sent to that client.
  using Handler =
      std::function<void(std::span<const std::uint8_t> query, std::vector<std::uint8_t>& response)>;

  // Room for `capacity` datagrams (at least 1) of up to `max_query_bytes` each; a longer datagram
  // reaches the handler cut to max_query_bytes, which a decoder that refuses longer queries sees
  // as too long (give it one byte more than the longest query it accepts).
  UdpBatch(std::size_t capacity, std::size_t max_query_bytes);

  // Receives the datagrams waiting on `fd` (a bound UDP socket; never blocks), answers them and
  // sends the answers. Returns how many datagrams it received: 0 when none was waiting or the
  // receive failed. An answer the kernel does not take (a full send buffer, an unreachable peer)
  // is dropped, as a lost datagram would be: its client asks again.
  std::size_t ServeOnce(int fd, const Handler& handler);

  std::size_t capacity() const { return peers_.size(); }

 private:
  std::size_t max_query_bytes_;
  std::vector<std::uint8_t> queries_;  // capacity x max_query_bytes_
  std::vector<sockaddr_storage> peers_;
  std::vector<std::vector<std::uint8_t>> responses_;
  std::vector<iovec> in_;
  std::vector<iovec> out_;
  std::vector<mmsghdr> received_;
  std::vector<mmsghdr> to_send_;
};

}  // namespace slicewright::dns

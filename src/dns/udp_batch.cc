#include "dns/udp_batch.h"

#include <algorithm>
#include <cerrno>

namespace slicewright::dns {

UdpBatch::UdpBatch(std::size_t capacity, std::size_t max_query_bytes)
    : max_query_bytes_(std::max<std::size_t>(1, max_query_bytes)),
      queries_(std::max<std::size_t>(1, capacity) * max_query_bytes_),
      peers_(std::max<std::size_t>(1, capacity)),
      responses_(peers_.size()),
      in_(peers_.size()),
      out_(peers_.size()),
      received_(peers_.size()),
      to_send_(peers_.size()) {
  for (std::size_t i = 0; i < in_.size(); ++i) {
    in_[i] = iovec{queries_.data() + i * max_query_bytes_, max_query_bytes_};
  }
}

std::size_t UdpBatch::ServeOnce(int fd, const Handler& handler) {
  for (std::size_t i = 0; i < received_.size(); ++i) {
    received_[i] = mmsghdr{};
    received_[i].msg_hdr.msg_name = &peers_[i];
    received_[i].msg_hdr.msg_namelen = sizeof(sockaddr_storage);
    received_[i].msg_hdr.msg_iov = &in_[i];
    received_[i].msg_hdr.msg_iovlen = 1;
  }
  int received = 0;
  do {
    received = recvmmsg(fd, received_.data(), static_cast<unsigned>(received_.size()), MSG_DONTWAIT,
                        nullptr);
  } while (received < 0 && errno == EINTR);
  if (received <= 0) return 0;  // nothing waiting (EAGAIN), or an error the next wait reports

  std::size_t answers = 0;
  for (std::size_t i = 0; i < static_cast<std::size_t>(received); ++i) {
    // A datagram longer than the buffer arrives cut to it (MSG_TRUNC): max_query_bytes_ long.
    const std::span<const std::uint8_t> query(queries_.data() + i * max_query_bytes_,
                                              received_[i].msg_len);
    std::vector<std::uint8_t>& response = responses_[i];
    response.clear();
    handler(query, response);
    if (response.empty()) continue;
    out_[answers] = iovec{response.data(), response.size()};
    to_send_[answers] = mmsghdr{};
    to_send_[answers].msg_hdr.msg_name = &peers_[i];
    to_send_[answers].msg_hdr.msg_namelen = received_[i].msg_hdr.msg_namelen;
    to_send_[answers].msg_hdr.msg_iov = &out_[answers];
    to_send_[answers].msg_hdr.msg_iovlen = 1;
    ++answers;
  }

  std::size_t sent = 0;
  while (sent < answers) {
    const int n =
        sendmmsg(fd, to_send_.data() + sent, static_cast<unsigned>(answers - sent), MSG_DONTWAIT);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      break;  // the send buffer is full: the rest are lost datagrams, asked again
    } else {
      ++sent;  // this one cannot be sent (its peer, its size): skip it, send the others
    }
  }
  return static_cast<std::size_t>(received);
}

}  // namespace slicewright::dns

// One DNS query over UDP to a test's loopback resolver, its answer rendered as dns::Render does
// ("NOERROR aa\nanswer: ..."), for the tests of whatever serves clusterset.local.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dns/wire.h"

namespace slicewright::test_support {

// 127.0.0.1:`port` as a socket address.
inline sockaddr_in LoopbackAddress(std::uint16_t port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return address;
}

// The query for `name` and `type` sent to 127.0.0.1:`port`; "no answer" when nothing comes back
// within 2 s.
inline std::string AskUdp(std::uint16_t port, const std::string& name, std::uint16_t type) {
  const std::vector<std::uint8_t> query = dns::EncodeQuery(7, name, type, 1232);
  const int fd = socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in to = LoopbackAddress(port);
  connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof(to));  // NOLINT: the sockets API's type
  send(fd, query.data(), query.size(), 0);
  pollfd p{fd, POLLIN, 0};
  std::string rendered = "no answer";
  if (poll(&p, 1, 2000) == 1) {
    std::vector<std::uint8_t> buffer(65535);
    const ssize_t n = recv(fd, buffer.data(), buffer.size(), 0);
    if (n > 0) {
      buffer.resize(static_cast<std::size_t>(n));
      Result<dns::DecodedResponse> decoded = dns::DecodeResponse(buffer);
      rendered = decoded.ok() ? dns::Render(decoded->answer) : decoded.status().ToString();
    }
  }
  close(fd);
  return rendered;
}

// The port of a "host:port" address.
inline std::uint16_t PortOf(const std::string& address) {
  return static_cast<std::uint16_t>(std::stoi(address.substr(address.rfind(':') + 1)));
}

}  // namespace slicewright::test_support

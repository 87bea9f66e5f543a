// A small blocking HTTP/1.1 client (Beast over TCP or TLS) for the HttpServer tests. Every call
// gives up after kClientTimeout, so a broken server fails a test instead of hanging it. One client
// per thread; Beast stays inside test_client.cc.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "slicewright/base/result.h"
#include "slicewright/base/status.h"

namespace slicewright::apiserver::testing {

inline constexpr std::chrono::seconds kClientTimeout{20};

using Headers = std::vector<std::pair<std::string, std::string>>;

struct ClientTls {
  std::string ca_pem;             // the only trusted root
  std::string verify_ip;          // when set, the certificate must name this IP
  std::string verify_host;        // when set, sent as SNI and the certificate must name it
  std::vector<std::string> alpn;  // offered ALPN protocols, in order
};

struct ClientResponse {
  int status = 0;
  Headers headers;    // names lower-cased
  std::string body;   // so far, for a response read in parts
  bool done = false;  // the whole message (a chunked body's last chunk included) was read

  std::string Header(std::string_view name) const;  // first value or ""
};

class TestClient final {
 public:
  // Connects to 127.0.0.1:port, with a verified TLS handshake when `tls` is set.
  static Result<std::unique_ptr<TestClient>> Connect(std::uint16_t port,
                                                     const ClientTls* tls = nullptr);
  ~TestClient();
  TestClient(const TestClient&) = delete;
  TestClient& operator=(const TestClient&) = delete;

  Status Send(std::string_view bytes);
  // Sends "METHOD target HTTP/1.1" with Host, the given headers and, for a body, Content-Length.
  Status SendRequest(std::string_view method, std::string_view target, const Headers& headers = {},
                     std::string_view body = {});
  // Reads one whole response (`head`: the answer to a HEAD request, which has no body).
  Result<ClientResponse> ReadResponse(bool head = false);
  // Reads a response's header only; ReadBodyAtLeast continues the same response.
  Result<ClientResponse> ReadResponseHeader();
  // Reads until the body received so far holds `size` bytes or the message ends.
  Result<ClientResponse> ReadBodyAtLeast(std::size_t size);
  // Reads until the server closes the connection (OK), discarding data; kTimeout if it stays open.
  Status WaitForClose();
  // The ALPN protocol the server selected, "" for none.
  std::string alpn() const;

 private:
  struct Impl;
  explicit TestClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Connect, SendRequest and ReadResponse in one call.
Result<ClientResponse> Fetch(std::uint16_t port, std::string_view method, std::string_view target,
                             const Headers& headers = {}, std::string_view body = {},
                             const ClientTls* tls = nullptr);

}  // namespace slicewright::apiserver::testing

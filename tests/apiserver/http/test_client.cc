// Under ThreadSanitizer, g++ 12 flags the fences in Asio's handler invocation (-Wtsan) and, at -O1,
// a null dereference inside Asio's scheduler it cannot rule out (-Wnull-dereference): both come
// from Boost code inlined here, so they are silenced for this file in that build only.
#if defined(__SANITIZE_THREAD__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wtsan"
#pragma GCC diagnostic ignored "-Wnull-dereference"
#endif

#include "apiserver/http/test_client.h"

#include <array>
#include <optional>
#include <string>
#include <utility>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

namespace slicewright::apiserver::testing {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using ErrorCode = boost::system::error_code;
using TlsStream = beast::ssl_stream<tcp::socket>;

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

}  // namespace

std::string ClientResponse::Header(std::string_view name) const {
  const std::string lower = Lower(name);
  for (const auto& [key, value] : headers) {
    if (key == lower) return value;
  }
  return "";
}

struct TestClient::Impl {
  asio::io_context ioc;
  asio::ssl::context ssl{asio::ssl::context::tls_client};
  std::optional<tcp::socket> plain;
  std::optional<TlsStream> tls;
  beast::flat_buffer buffer;
  std::optional<http::response_parser<http::string_body>> parser;

  tcp::socket& Socket() { return tls ? beast::get_lowest_layer(*tls) : *plain; }

  template <class Function>
  decltype(auto) WithStream(Function&& function) {
    if (tls) return function(*tls);
    return function(*plain);
  }

  // Runs one asynchronous operation to completion; nullopt when it timed out (the socket is then
  // closed).
  template <class Initiate>
  std::optional<ErrorCode> Run(Initiate&& initiate) {
    bool done = false;
    ErrorCode result;
    ioc.restart();
    initiate([&](const ErrorCode& ec, auto&&... /*ignored*/) {
      done = true;
      result = ec;
    });
    ioc.run_for(kClientTimeout);
    if (done) return result;
    ErrorCode ignored;
    Socket().close(ignored);
    ioc.restart();
    ioc.run();
    return std::nullopt;
  }

  Status Check(const std::optional<ErrorCode>& ec, std::string_view what) {
    if (!ec) return Status(StatusCode::kTimeout, std::string(what) + ": timed out");
    if (*ec) return UnavailableError(std::string(what) + ": " + ec->message());
    return Status::Ok();
  }

  ClientResponse Snapshot() {
    ClientResponse response;
    const auto& message = parser->get();
    response.status = static_cast<int>(message.result_int());
    for (const auto& field : message) {
      response.headers.emplace_back(Lower({field.name_string().data(), field.name_string().size()}),
                                    std::string(field.value()));
    }
    response.body = message.body();
    response.done = parser->is_done();
    return response;
  }

  void NewParser(bool head) {
    parser.emplace();
    parser->body_limit(boost::none);
    if (head) parser->skip(true);
  }
};

TestClient::TestClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TestClient::~TestClient() = default;

Result<std::unique_ptr<TestClient>> TestClient::Connect(std::uint16_t port, const ClientTls* tls) {
  auto impl = std::make_unique<Impl>();
  const tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), port);
  if (tls != nullptr) {
    ErrorCode ec;
    impl->ssl.add_certificate_authority(asio::buffer(tls->ca_pem), ec);
    if (ec) return InvalidError("client CA: " + ec.message());
    impl->ssl.set_verify_mode(asio::ssl::verify_peer);
    impl->tls.emplace(impl->ioc, impl->ssl);
    SSL* ssl = impl->tls->native_handle();
    X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
    if (!tls->verify_ip.empty()) X509_VERIFY_PARAM_set1_ip_asc(param, tls->verify_ip.c_str());
    if (!tls->verify_host.empty()) {
      X509_VERIFY_PARAM_set1_host(param, tls->verify_host.c_str(), tls->verify_host.size());
      SSL_ctrl(ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
               const_cast<char*>(tls->verify_host.c_str()));  // SSL_set_tlsext_host_name
    }
    if (!tls->alpn.empty()) {
      std::string wire;
      for (const std::string& protocol : tls->alpn) {
        wire.push_back(static_cast<char>(protocol.size()));
        wire += protocol;
      }
      SSL_set_alpn_protos(ssl, reinterpret_cast<const unsigned char*>(wire.data()),
                          static_cast<unsigned>(wire.size()));
    }
  } else {
    impl->plain.emplace(impl->ioc);
  }
  Impl& c = *impl;
  SW_RETURN_IF_ERROR(
      c.Check(c.Run([&](auto handler) { c.Socket().async_connect(endpoint, std::move(handler)); }),
              "connect"));
  ErrorCode ignored;
  c.Socket().set_option(tcp::no_delay(true), ignored);
  if (c.tls) {
    SW_RETURN_IF_ERROR(c.Check(c.Run([&](auto handler) {
      c.tls->async_handshake(asio::ssl::stream_base::client, std::move(handler));
    }),
                               "TLS handshake"));
  }
  return std::unique_ptr<TestClient>(new TestClient(std::move(impl)));
}

Status TestClient::Send(std::string_view bytes) {
  Impl& c = *impl_;
  return c.Check(c.Run([&](auto handler) {
    c.WithStream([&](auto& stream) {
      asio::async_write(stream, asio::buffer(bytes.data(), bytes.size()), std::move(handler));
    });
  }),
                 "write");
}

Status TestClient::SendRequest(std::string_view method, std::string_view target,
                               const Headers& headers, std::string_view body) {
  std::string request;
  request.append(method).append(" ").append(target).append(" HTTP/1.1\r\nHost: 127.0.0.1\r\n");
  for (const auto& [name, value] : headers) {
    request.append(name).append(": ").append(value).append("\r\n");
  }
  if (!body.empty()) request += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  request += "\r\n";
  request.append(body);
  return Send(request);
}

Result<ClientResponse> TestClient::ReadResponse(bool head) {
  Impl& c = *impl_;
  c.NewParser(head);
  SW_RETURN_IF_ERROR(c.Check(c.Run([&](auto handler) {
    c.WithStream(
        [&](auto& stream) { http::async_read(stream, c.buffer, *c.parser, std::move(handler)); });
  }),
                             "read response"));
  return c.Snapshot();
}

Result<ClientResponse> TestClient::ReadResponseHeader() {
  Impl& c = *impl_;
  c.NewParser(false);
  SW_RETURN_IF_ERROR(c.Check(c.Run([&](auto handler) {
    c.WithStream([&](auto& stream) {
      http::async_read_header(stream, c.buffer, *c.parser, std::move(handler));
    });
  }),
                             "read response header"));
  return c.Snapshot();
}

Result<ClientResponse> TestClient::ReadBodyAtLeast(std::size_t size) {
  Impl& c = *impl_;
  if (!c.parser) return InvalidError("no response header was read");
  while (!c.parser->is_done() && c.parser->get().body().size() < size) {
    SW_RETURN_IF_ERROR(c.Check(c.Run([&](auto handler) {
      c.WithStream([&](auto& stream) {
        http::async_read_some(stream, c.buffer, *c.parser, std::move(handler));
      });
    }),
                               "read body"));
  }
  return c.Snapshot();
}

Status TestClient::WaitForClose() {
  Impl& c = *impl_;
  std::array<char, 4096> scratch{};
  for (;;) {
    std::optional<ErrorCode> ec = c.Run([&](auto handler) {
      c.WithStream(
          [&](auto& stream) { stream.async_read_some(asio::buffer(scratch), std::move(handler)); });
    });
    if (!ec) return Status(StatusCode::kTimeout, "the server kept the connection open");
    if (*ec) return Status::Ok();  // EOF, reset or a truncated TLS stream: closed
  }
}

std::string TestClient::alpn() const {
  if (!impl_->tls) return "";
  const unsigned char* data = nullptr;
  unsigned int length = 0;
  SSL_get0_alpn_selected(impl_->tls->native_handle(), &data, &length);
  return data == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(data), length);
}

Result<ClientResponse> Fetch(std::uint16_t port, std::string_view method, std::string_view target,
                             const Headers& headers, std::string_view body, const ClientTls* tls) {
  SW_ASSIGN_OR_RETURN(std::unique_ptr<TestClient> client, TestClient::Connect(port, tls));
  SW_RETURN_IF_ERROR(client->SendRequest(method, target, headers, body));
  return client->ReadResponse(method == "HEAD");
}

}  // namespace slicewright::apiserver::testing

// The one adapter between the client and Boost.Asio/Beast/OpenSSL. Each exchange runs the
// connection's own io_context on the calling thread, so the deadlines of beast::tcp_stream apply
// to plain blocking-style calls and no I/O thread is needed.
#include "slicewright/client/transport.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <exception>
#include <limits>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <openssl/ssl.h>

#include "client/base64.h"

namespace slicewright::client {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using ErrorCode = boost::system::error_code;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kReadChunkBytes = std::size_t{64} * 1024;

// "host:port" as a Host header, an IPv6 literal bracketed.
std::string HostHeader(const ServerUrl& server) {
  const bool ipv6 = server.host.find(':') != std::string::npos;
  std::string host = ipv6 ? "[" + server.host + "]" : server.host;
  return host + ":" + std::to_string(server.port);
}

bool IsIpLiteral(const std::string& host) {
  ErrorCode ec;
  asio::ip::make_address(host, ec);
  return !ec;
}

bool Idempotent(std::string_view method) {
  return method == "GET" || method == "HEAD" || method == "PUT" || method == "DELETE" ||
         method == "OPTIONS";
}

std::optional<std::chrono::seconds> ParseRetryAfter(std::string_view value) {
  if (value.empty() || value.size() > 9 ||
      !std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  return std::chrono::seconds(std::stol(std::string(value)));
}

// One keep-alive connection with its own io_context, used by one thread at a time.
struct Connection {
  asio::io_context ioc;
  std::unique_ptr<beast::tcp_stream> plain;
  std::unique_ptr<beast::ssl_stream<beast::tcp_stream>> tls;
  beast::flat_buffer buffer;

  beast::tcp_stream& Tcp() { return tls ? beast::get_lowest_layer(*tls) : *plain; }
};

// Runs `start(handler)` to completion on the connection's io_context and returns its error.
template <typename Start>
ErrorCode Run(Connection& connection, Start&& start) {
  ErrorCode result = asio::error::would_block;
  bool done = false;
  start([&](ErrorCode ec, std::size_t /*bytes*/) {
    result = ec;
    done = true;
  });
  connection.ioc.restart();
  while (!done && connection.ioc.run_one() > 0) {
  }
  return result;
}

void SetDeadline(Connection& connection, std::optional<Clock::time_point> deadline) {
  if (deadline) {
    connection.Tcp().expires_at(*deadline);
  } else {
    connection.Tcp().expires_never();
  }
}

// What Exchange returns when it recorded a Failure; Send turns the Failure into the real error.
Status ExchangeFailed() { return UnavailableError("exchange failed"); }

// An exchange's outcome before it becomes a Result: which step failed and how.
struct Failure {
  std::string step;  // "connect", "write", "read", ...
  ErrorCode ec;
  bool before_response = false;  // nothing of the response had arrived
};

}  // namespace

// ---- StreamCanceller ----------------------------------------------------------------------

struct StreamCanceller::State {
  std::mutex mu;
  bool cancelled = false;
  std::function<void()> on_cancel;  // set while a stream runs
};

StreamCanceller::StreamCanceller() : state_(std::make_shared<State>()) {}
StreamCanceller::~StreamCanceller() = default;

void StreamCanceller::Cancel() {
  std::lock_guard lock(state_->mu);
  state_->cancelled = true;
  if (state_->on_cancel) state_->on_cancel();
}

bool StreamCanceller::cancelled() const {
  std::lock_guard lock(state_->mu);
  return state_->cancelled;
}

// ---- Transport ----------------------------------------------------------------------------

struct Transport::Impl {
  RestConfig config;
  TransportOptions options;
  std::unique_ptr<ssl::context> tls;  // null for http://
  std::string host_header;
  std::string base_url;  // "https://host:port" for messages

  std::mutex mu;
  std::vector<std::unique_ptr<Connection>> idle;  // guarded by mu
  std::size_t opened = 0;                         // guarded by mu

  std::string What(const Request& request) const {
    return request.method + " " + base_url + config.server.path + request.target;
  }

  Status FailureStatus(const Request& request, const Failure& failure) const {
    std::string message = What(request) + ": " + failure.step + ": " + failure.ec.message();
    if (failure.ec == beast::error::timeout) {
      return Status(StatusCode::kTimeout, What(request) + ": timed out (" + failure.step + ")");
    }
    if (failure.ec == asio::error::operation_aborted) {
      return Status(StatusCode::kCancelled, What(request) + ": cancelled");
    }
    if (failure.ec == http::error::body_limit) {
      return Status(StatusCode::kRequestEntityTooLarge,
                    What(request) + ": the response body is larger than " +
                        std::to_string(options.max_body_bytes) + " bytes");
    }
    return UnavailableError(std::move(message));
  }

  std::unique_ptr<Connection> TakeIdle() {
    std::lock_guard lock(mu);
    if (idle.empty()) return nullptr;
    std::unique_ptr<Connection> connection = std::move(idle.back());
    idle.pop_back();
    return connection;
  }

  void GiveBack(std::unique_ptr<Connection> connection) {
    std::lock_guard lock(mu);
    if (idle.size() < options.max_idle_connections) idle.push_back(std::move(connection));
  }

  // Resolves, connects and (for https) handshakes, within the deadline.
  Result<std::unique_ptr<Connection>> Open(const Request& request,
                                           std::optional<Clock::time_point> deadline) {
    auto connection = std::make_unique<Connection>();
    tcp::resolver resolver(connection->ioc);
    tcp::resolver::results_type endpoints;
    ErrorCode resolve_error;
    resolver.async_resolve(config.server.host, std::to_string(config.server.port),
                           [&](ErrorCode ec, tcp::resolver::results_type results) {
                             resolve_error = ec;
                             endpoints = std::move(results);
                           });
    connection->ioc.run();
    if (resolve_error) return FailureStatus(request, Failure{"resolve", resolve_error, true});
    if (tls) {
      connection->tls =
          std::make_unique<beast::ssl_stream<beast::tcp_stream>>(connection->ioc, *tls);
    } else {
      connection->plain = std::make_unique<beast::tcp_stream>(connection->ioc);
    }
    SetDeadline(*connection, deadline);
    ErrorCode ec = Run(*connection, [&](auto handler) {
      connection->Tcp().async_connect(
          endpoints, [handler](ErrorCode error, const tcp::endpoint&) { handler(error, 0); });
    });
    if (ec) return FailureStatus(request, Failure{"connect", ec, true});
    connection->Tcp().socket().set_option(tcp::no_delay(true), ec);
    if (tls) {
      const std::string& name =
          config.tls.server_name.empty() ? config.server.host : config.tls.server_name;
      SSL* handle = connection->tls->native_handle();
      // SNI carries names only, never an IP literal.
      // SSL_set_tlsext_host_name is a macro with a C cast; this is what it expands to.
      if (!IsIpLiteral(name)) {
        SSL_ctrl(handle, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
                 const_cast<char*>(name.c_str()));
      }
      if (!config.tls.insecure_skip_verify) {
        connection->tls->set_verify_callback(ssl::host_name_verification(name));
      }
      ec = Run(*connection, [&](auto handler) {
        connection->tls->async_handshake(ssl::stream_base::client,
                                         [handler](ErrorCode error) { handler(error, 0); });
      });
      if (ec) return FailureStatus(request, Failure{"TLS handshake", ec, true});
    }
    std::lock_guard lock(mu);
    ++opened;
    return connection;
  }

  // The Authorization header value ("" for none) and the exec credential's generation.
  Result<std::pair<std::string, std::uint64_t>> Authorization(const Request& request) {
    if (config.exec) {
      Result<ExecCredential> credential = config.exec->Get();
      if (!credential.ok()) {
        return Status(StatusCode::kUnauthorized,
                      What(request) + ": " + std::string(credential.status().message()));
      }
      if (credential->token.empty()) {
        return Status(StatusCode::kUnauthorized,
                      What(request) +
                          ": the exec plugin returned a client certificate; only exec tokens are "
                          "supported so far");
      }
      return std::make_pair("Bearer " + credential->token, credential->generation);
    }
    if (config.token_source) {
      Result<std::string> token = config.token_source->Token();
      if (!token.ok()) {
        return Status(StatusCode::kUnauthorized,
                      What(request) + ": " + std::string(token.status().message()));
      }
      return std::make_pair("Bearer " + *token, std::uint64_t{0});
    }
    if (config.basic_auth) {
      return std::make_pair("Basic " + internal::EncodeBase64(config.basic_auth->username + ":" +
                                                              config.basic_auth->password),
                            std::uint64_t{0});
    }
    return std::make_pair(std::string(), std::uint64_t{0});
  }

  http::request<http::string_body> BuildRequest(const Request& request,
                                                const std::string& authorization) const {
    http::request<http::string_body> message;
    message.method_string(request.method);
    message.target(config.server.path + request.target);
    message.version(11);
    message.set(http::field::host, host_header);
    message.set(http::field::user_agent, options.user_agent);
    if (!request.accept.empty()) message.set(http::field::accept, request.accept);
    if (!authorization.empty()) message.set(http::field::authorization, authorization);
    if (!request.body.empty() || request.method == "POST" || request.method == "PUT" ||
        request.method == "PATCH") {
      if (!request.content_type.empty()) {
        message.set(http::field::content_type, request.content_type);
      }
      message.body() = request.body;
      message.prepare_payload();
    }
    message.keep_alive(true);
    return message;
  }

  // One exchange on `connection`. `consume` null: the whole body goes into the Response.
  template <typename Stream>
  Result<Response> Exchange(Stream& stream, Connection& connection,
                            const http::request<http::string_body>& message,
                            const BodyConsumer* consume, bool& keep_alive, Failure& failure) {
    keep_alive = false;
    ErrorCode ec =
        Run(connection, [&](auto handler) { http::async_write(stream, message, handler); });
    if (ec) {
      failure = Failure{"write", ec, true};
      return ExchangeFailed();
    }
    http::response_parser<http::buffer_body> parser;
    parser.body_limit(consume != nullptr ? std::numeric_limits<std::uint64_t>::max()
                                         : options.max_body_bytes);
    ec = Run(connection, [&](auto handler) {
      http::async_read_header(stream, connection.buffer, parser, handler);
    });
    if (ec) {
      failure = Failure{"read", ec, !parser.got_some()};
      return ExchangeFailed();
    }
    Response response;
    response.status = static_cast<int>(parser.get().result_int());
    const auto header = [&](http::field field) {
      const beast::string_view value = parser.get()[field];
      return std::string_view(value.data(), value.size());
    };
    response.content_type = std::string(header(http::field::content_type));
    response.retry_after = ParseRetryAfter(header(http::field::retry_after));
    const bool streaming = consume != nullptr && response.status >= 200 && response.status < 300;
    std::array<char, kReadChunkBytes> chunk{};
    while (!parser.is_done()) {
      parser.get().body().data = chunk.data();
      parser.get().body().size = chunk.size();
      ec = Run(connection, [&](auto handler) {
        http::async_read_some(stream, connection.buffer, parser, handler);
      });
      if (ec == http::error::need_buffer) ec = {};
      if (ec) {
        failure = Failure{"read", ec, false};
        return ExchangeFailed();
      }
      const std::size_t used = chunk.size() - parser.get().body().size;
      if (used == 0) continue;
      const std::string_view data(chunk.data(), used);
      if (streaming) {
        if (!(*consume)(data)) return response;  // the connection is dropped: keep_alive false
      } else {
        if (response.body.size() + used > options.max_body_bytes) {
          failure = Failure{"read", http::error::body_limit, false};
          return ExchangeFailed();
        }
        response.body.append(data);
      }
    }
    keep_alive = parser.get().keep_alive();
    return response;
  }

  Result<Response> Send(const Request& request, const BodyConsumer* consume,
                        StreamCanceller* canceller) {
    std::optional<Clock::time_point> deadline;
    if (request.timeout.count() > 0) deadline = Clock::now() + request.timeout;
    bool retried_unauthorized = false;
    bool retried_stale = false;
    while (true) {
      SW_ASSIGN_OR_RETURN(auto authorization, Authorization(request));
      const http::request<http::string_body> message = BuildRequest(request, authorization.first);
      std::unique_ptr<Connection> connection = TakeIdle();
      const bool reused = connection != nullptr;
      if (!reused) {
        SW_ASSIGN_OR_RETURN(connection, Open(request, deadline));
      }
      SetDeadline(*connection, deadline);

      // Cancellation closes the socket from the connection's own io_context.
      std::shared_ptr<StreamCanceller::State> cancel_state =
          canceller != nullptr ? canceller->state_ : nullptr;
      if (cancel_state) {
        std::lock_guard lock(cancel_state->mu);
        if (cancel_state->cancelled)
          return Status(StatusCode::kCancelled, What(request) + ": cancelled");
        Connection* raw = connection.get();
        cancel_state->on_cancel = [raw] {
          asio::post(raw->ioc, [raw] {
            ErrorCode ignored;
            raw->Tcp().socket().shutdown(tcp::socket::shutdown_both, ignored);
            raw->Tcp().cancel();
          });
        };
      }
      bool keep_alive = false;
      Failure failure;
      Result<Response> result =
          connection->tls
              ? Exchange(*connection->tls, *connection, message, consume, keep_alive, failure)
              : Exchange(*connection->plain, *connection, message, consume, keep_alive, failure);
      bool cancelled = false;
      if (cancel_state) {
        std::lock_guard lock(cancel_state->mu);
        cancel_state->on_cancel = nullptr;
        cancelled = cancel_state->cancelled;
      }
      if (cancelled) return Status(StatusCode::kCancelled, What(request) + ": cancelled");
      if (!failure.step.empty()) {
        // A reused connection the server had closed: try once more on a new one when the
        // request cannot have been acted on (nothing written) or may be repeated.
        const bool stale = reused && failure.before_response &&
                           (failure.step == "write" || Idempotent(request.method));
        if (stale && !retried_stale) {
          retried_stale = true;
          continue;
        }
        return FailureStatus(request, failure);
      }
      SW_RETURN_IF_ERROR(result.status());
      // A finished exchange (for a stream: the server ended the body) leaves a reusable
      // connection; one whose consumer stopped early is closed.
      if (keep_alive) GiveBack(std::move(connection));
      if (result->status == 401 && config.exec && !retried_unauthorized) {
        config.exec->OnUnauthorized(authorization.second);
        retried_unauthorized = true;
        continue;
      }
      return result;
    }
  }
};

Result<std::unique_ptr<Transport>> Transport::Create(RestConfig config, TransportOptions options) {
  auto impl = std::make_unique<Impl>();
  impl->host_header = HostHeader(config.server);
  impl->base_url = config.server.scheme + "://" + impl->host_header;
  if (config.server.scheme == "https") {
    auto context = std::make_unique<ssl::context>(ssl::context::tls_client);
    ErrorCode ec;
    context->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                             ssl::context::no_sslv3 | ssl::context::no_tlsv1 |
                             ssl::context::no_tlsv1_1,
                         ec);
    if (config.tls.insecure_skip_verify) {
      context->set_verify_mode(ssl::verify_none, ec);
    } else {
      context->set_verify_mode(ssl::verify_peer, ec);
      if (config.tls.ca_pem.empty()) {
        context->set_default_verify_paths(ec);
      } else {
        context->add_certificate_authority(asio::buffer(config.tls.ca_pem), ec);
        if (ec) {
          return InvalidError("certificate authority (" + config.tls.ca_source +
                              "): not a usable PEM certificate: " + ec.message());
        }
      }
    }
    if (!config.tls.client_certificate_pem.empty()) {
      context->use_certificate_chain(asio::buffer(config.tls.client_certificate_pem), ec);
      if (ec) {
        return InvalidError("client certificate (" + config.tls.client_certificate_source +
                            "): not a usable PEM certificate: " + ec.message());
      }
      context->use_private_key(asio::buffer(config.tls.client_key_pem), ssl::context::pem, ec);
      if (ec) {
        // The key itself never appears in the message.
        return InvalidError("client key (" + config.tls.client_key_source +
                            "): not a usable PEM key for the certificate: " + ec.message());
      }
    }
    // HTTP/1.1 only: watch streams are chunked HTTP/1.1 responses.
    static constexpr std::array<unsigned char, 9> kAlpn = {8,   'h', 't', 't', 'p',
                                                           '/', '1', '.', '1'};
    SSL_CTX_set_alpn_protos(context->native_handle(), kAlpn.data(),
                            static_cast<unsigned>(kAlpn.size()));
    impl->tls = std::move(context);
  }
  impl->config = std::move(config);
  impl->options = std::move(options);
  return std::unique_ptr<Transport>(new Transport(std::move(impl)));
}

Transport::Transport(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Transport::~Transport() = default;

Result<Response> Transport::Do(const Request& request) {
  try {
    return impl_->Send(request, nullptr, nullptr);
  } catch (const std::exception& error) {
    // Beast and Asio report through error codes here; anything thrown is a resource failure.
    return InternalError(impl_->What(request) + ": " + error.what());
  }
}

Result<Response> Transport::Stream(const Request& request, const BodyConsumer& consume,
                                   StreamCanceller* canceller) {
  try {
    return impl_->Send(request, &consume, canceller);
  } catch (const std::exception& error) {
    return InternalError(impl_->What(request) + ": " + error.what());
  }
}

const RestConfig& Transport::config() const { return impl_->config; }

std::size_t Transport::connections_opened() const {
  std::lock_guard lock(impl_->mu);
  return impl_->opened;
}

}  // namespace slicewright::client

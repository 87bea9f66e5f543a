// The one adapter between the client and Boost.Asio/Beast/OpenSSL. Each exchange runs the
// connection's own io_context on the calling thread, so the deadlines of beast::tcp_stream apply
// to plain blocking-style calls and no I/O thread is needed.
// Under ThreadSanitizer, g++ 12 flags the fences in Asio's handler invocation (-Wtsan), Boost code
// inlined here, as in src/apiserver/http/server.cc; the runtime's Concurrent* tests link this file.
#if defined(__SANITIZE_THREAD__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wtsan"
#endif

#include "slicewright/client/transport.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <exception>
#include <limits>
#include <optional>
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
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <poll.h>

#include "slicewright/base/mutex.h"
#include "slicewright/model/time.h"

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
using WallTime = std::chrono::system_clock::time_point;
using Digest = std::array<unsigned char, 32>;  // SHA-256

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
  // The TLS context the connection was made with (declared first: it outlives the stream), and
  // the client-certificate epoch it belongs to; a connection of an older epoch is never reused.
  std::shared_ptr<ssl::context> context;
  std::uint64_t epoch = 0;
  asio::io_context ioc;
  // Set on the connection's own thread when a certificate rotation closed it mid-exchange.
  bool rotated = false;
  std::unique_ptr<beast::tcp_stream> plain;
  std::unique_ptr<beast::ssl_stream<beast::tcp_stream>> tls;
  beast::flat_buffer buffer;

  beast::tcp_stream& Tcp() { return tls ? beast::get_lowest_layer(*tls) : *plain; }
};

// Whether a pooled connection may carry another request. An idle HTTP/1.1 connection has nothing
// to read, so anything readable means the server closed it (EOF, a reset, a TLS close_notify) or
// it is out of step. Checking first matters for requests that are never repeated once written
// (POST, PATCH): the server's idle timeout would otherwise fail them with "end of stream".
bool StillOpen(Connection& connection) {
  if (connection.buffer.size() > 0) return false;
  pollfd descriptor{};
  descriptor.fd = connection.Tcp().socket().native_handle();
  descriptor.events = POLLIN;
  return ::poll(&descriptor, 1, 0) == 0;
}

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

// A client TLS context as client-go's TLS config: TLS 1.2 and later, the CA (else the system roots)
// unless verification is skipped, the client certificate and key when `certificate_pem` is set,
// ALPN http/1.1. kInvalid naming the sources for PEM that OpenSSL refuses; the key itself never
// appears in a message.
Result<std::shared_ptr<ssl::context>> NewTlsContext(const TlsConfig& config,
                                                    const std::string& certificate_pem,
                                                    const std::string& certificate_source,
                                                    const std::string& key_pem,
                                                    const std::string& key_source) {
  std::shared_ptr<ssl::context> context;
  try {
    context = std::make_shared<ssl::context>(ssl::context::tls_client);
  } catch (const std::exception& error) {
    return InternalError(std::string("creating a TLS context: ") + error.what());
  }
  ErrorCode ec;
  context->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                           ssl::context::no_sslv3 | ssl::context::no_tlsv1 |
                           ssl::context::no_tlsv1_1,
                       ec);
  if (config.insecure_skip_verify) {
    context->set_verify_mode(ssl::verify_none, ec);
  } else {
    context->set_verify_mode(ssl::verify_peer, ec);
    if (config.ca_pem.empty()) {
      context->set_default_verify_paths(ec);
    } else {
      context->add_certificate_authority(asio::buffer(config.ca_pem), ec);
      if (ec) {
        return InvalidError("certificate authority (" + config.ca_source +
                            "): not a usable PEM certificate: " + ec.message());
      }
    }
  }
  if (!certificate_pem.empty()) {
    context->use_certificate_chain(asio::buffer(certificate_pem), ec);
    if (ec) {
      return InvalidError("client certificate (" + certificate_source +
                          "): not a usable PEM certificate: " + ec.message());
    }
    // OpenSSL also checks here that the key belongs to the certificate.
    context->use_private_key(asio::buffer(key_pem), ssl::context::pem, ec);
    if (ec) {
      return InvalidError("client key (" + key_source +
                          "): not a usable PEM key for the certificate: " + ec.message());
    }
  }
  // HTTP/1.1 only: watch streams are chunked HTTP/1.1 responses.
  static constexpr std::array<unsigned char, 9> kAlpn = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
  SSL_CTX_set_alpn_protos(context->native_handle(), kAlpn.data(),
                          static_cast<unsigned>(kAlpn.size()));
  return context;
}

// The NotAfter of the context's client certificate; nullopt when it has none or the time does not
// convert (the server then judges it).
std::optional<WallTime> CertificateNotAfter(ssl::context& context) {
  X509* certificate = SSL_CTX_get0_certificate(context.native_handle());
  if (certificate == nullptr) return std::nullopt;
  std::tm parts{};
  if (ASN1_TIME_to_tm(X509_get0_notAfter(certificate), &parts) != 1) return std::nullopt;
  const std::time_t seconds = ::timegm(&parts);
  if (seconds == static_cast<std::time_t>(-1)) return std::nullopt;
  return std::chrono::system_clock::from_time_t(seconds);
}

// SHA-256 over the certificate and the key: identifies an exec credential's TLS identity without
// keeping another copy of the key. nullopt if OpenSSL fails.
std::optional<Digest> CredentialDigest(const std::string& certificate_pem,
                                       const std::string& key_pem) {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> hash(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  Digest digest{};
  unsigned int length = 0;
  // The length of the certificate goes first, so no other split of the same bytes matches.
  const std::string prefix = std::to_string(certificate_pem.size()) + ":";
  if (!hash || EVP_DigestInit_ex(hash.get(), EVP_sha256(), nullptr) != 1 ||
      EVP_DigestUpdate(hash.get(), prefix.data(), prefix.size()) != 1 ||
      EVP_DigestUpdate(hash.get(), certificate_pem.data(), certificate_pem.size()) != 1 ||
      EVP_DigestUpdate(hash.get(), key_pem.data(), key_pem.size()) != 1 ||
      EVP_DigestFinal_ex(hash.get(), digest.data(), &length) != 1 || length != digest.size()) {
    return std::nullopt;
  }
  return digest;
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
  Mutex mu;
  bool cancelled SW_GUARDED_BY(mu) = false;
  std::function<void()> on_cancel SW_GUARDED_BY(mu);  // set while a stream runs
};

StreamCanceller::StreamCanceller() : state_(std::make_shared<State>()) {}
StreamCanceller::~StreamCanceller() = default;

void StreamCanceller::Cancel() {
  MutexLock lock(state_->mu);
  state_->cancelled = true;
  if (state_->on_cancel) state_->on_cancel();
}

bool StreamCanceller::cancelled() const {
  MutexLock lock(state_->mu);
  return state_->cancelled;
}

// ---- Transport ----------------------------------------------------------------------------

// What one request authenticates with.
struct Credentials {
  std::string authorization;          // the Authorization header value, "" for none
  std::uint64_t generation = 0;       // the exec credential's, to invalidate it after a 401
  std::shared_ptr<ssl::context> tls;  // for new connections; null for http://
  std::uint64_t epoch = 0;            // of `tls`
};

struct Transport::Impl {
  RestConfig config;
  TransportOptions options;
  std::shared_ptr<ssl::context> static_tls;  // null for http://; with the kubeconfig's certificate
  // Whether the exec plugin supplies the credentials. client-go's exec Authenticator
  // (UpdateTransportConfig) stands aside when the configuration already has a bearer token (or
  // token file), basic auth or a client certificate: the plugin never runs and those are used.
  bool use_exec = false;
  std::string host_header;
  std::string base_url;  // "https://host:port" for messages

  // The exec plugin's client certificate, when it returned one: a context built once per distinct
  // certificate and key (found by their digest, so a re-run returning the same pair keeps the
  // context and the pooled connections) and the epoch its connections belong to.
  Mutex exec_mu;
  // The credential last examined.
  std::uint64_t exec_generation SW_GUARDED_BY(exec_mu) = 0;
  std::optional<Digest> exec_digest SW_GUARDED_BY(exec_mu);       // none while no certificate
  std::shared_ptr<ssl::context> exec_tls SW_GUARDED_BY(exec_mu);  // null: use static_tls
  std::optional<WallTime> exec_not_after SW_GUARDED_BY(exec_mu);
  std::uint64_t exec_epoch SW_GUARDED_BY(exec_mu) = 0;

  Mutex mu SW_ACQUIRED_AFTER(exec_mu);  // taken after exec_mu, never before
  std::vector<std::unique_ptr<Connection>> idle SW_GUARDED_BY(mu);
  std::size_t opened SW_GUARDED_BY(mu) = 0;
  // Bumped when the client certificate changes: pooled connections of an older epoch presented
  // the old certificate and are closed rather than reused.
  std::uint64_t epoch SW_GUARDED_BY(mu) = 0;
  // Connections in an exchange (of any epoch), so a rotation can close them as well.
  std::vector<Connection*> busy SW_GUARDED_BY(mu);

  // Lists a connection in `busy` until Release() or destruction, which must come before the
  // connection is pooled or destroyed: a rotation posts to every listed connection's io_context.
  class BusyMark final {
   public:
    BusyMark(Impl& impl, Connection* connection) : impl_(impl), connection_(connection) {
      MutexLock lock(impl_.mu);
      impl_.busy.push_back(connection_);
    }
    BusyMark(const BusyMark&) = delete;
    BusyMark& operator=(const BusyMark&) = delete;
    ~BusyMark() { Release(); }
    void Release() {
      if (connection_ == nullptr) return;
      MutexLock lock(impl_.mu);
      impl_.busy.erase(std::find(impl_.busy.begin(), impl_.busy.end(), connection_));
      connection_ = nullptr;
    }

   private:
    Impl& impl_;
    Connection* connection_;
  };

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

  // The most recently used pooled connection that is still open and made with the current client
  // certificate; others are dropped.
  std::unique_ptr<Connection> TakeIdle() {
    while (true) {
      std::unique_ptr<Connection> connection;
      {
        MutexLock lock(mu);
        if (idle.empty()) return nullptr;
        connection = std::move(idle.back());
        idle.pop_back();
        if (connection->epoch != epoch) continue;  // closed outside the lock
      }
      if (StillOpen(*connection)) return connection;
    }
  }

  void GiveBack(std::unique_ptr<Connection> connection) {
    MutexLock lock(mu);
    // A connection made before a certificate rotation is not pooled: it presented the old
    // certificate (its exchange ended just before the rotation could close it).
    if (connection->epoch == epoch && idle.size() < options.max_idle_connections) {
      idle.push_back(std::move(connection));
    }
  }

  // The exec credential's client certificate changed (or went away): starts a new epoch and
  // closes every connection that presented the old one, as client-go's connection rotation does
  // (its connTracker.CloseAll): pooled ones at once, those in an exchange (a watch) from their
  // own io_context, so that exchange fails and its caller reconnects with the new certificate.
  void RotateLocked() SW_REQUIRES(exec_mu) {
    std::vector<std::unique_ptr<Connection>> stale;
    {
      MutexLock lock(mu);
      ++epoch;
      exec_epoch = epoch;
      stale.swap(idle);
      for (Connection* connection : busy) {
        asio::post(connection->ioc, [connection] {
          connection->rotated = true;
          ErrorCode ignored;
          connection->Tcp().socket().shutdown(tcp::socket::shutdown_both, ignored);
        });
      }
    }
    // `stale` closes its sockets here, outside mu.
  }

  // The TLS context and epoch for an exec credential: the static context when it has no
  // certificate, else its own, built the first time it is seen. Errors (wrapped by the caller):
  // kInvalid for a certificate or key OpenSSL refuses, kExpired for a certificate past its
  // NotAfter, kInternal when hashing fails.
  Result<std::pair<std::shared_ptr<ssl::context>, std::uint64_t>> ExecTls(
      const ExecCredential& credential) {
    // http:// has no TLS: a certificate is not used, as in client-go.
    if (!static_tls) return std::make_pair(std::shared_ptr<ssl::context>(), std::uint64_t{0});
    MutexLock lock(exec_mu);
    if (credential.generation != exec_generation) {
      std::optional<Digest> digest;
      if (!credential.client_certificate_pem.empty()) {
        digest = CredentialDigest(credential.client_certificate_pem, credential.client_key_pem);
        if (!digest) return InternalError("hashing the client certificate failed");
      }
      if (digest != exec_digest) {
        std::shared_ptr<ssl::context> context;
        std::optional<WallTime> not_after;
        if (digest) {
          const std::string source = "exec plugin \"" + config.exec->command() + "\"";
          SW_ASSIGN_OR_RETURN(context, NewTlsContext(config.tls, credential.client_certificate_pem,
                                                     source, credential.client_key_pem, source));
          not_after = CertificateNotAfter(*context);
        }
        exec_tls = std::move(context);
        exec_digest = digest;
        exec_not_after = not_after;
        RotateLocked();
      }
      exec_generation = credential.generation;
    }
    // Not in client-go (it renews on expirationTimestamp and 401s only): a certificate the server
    // would refuse as expired is renewed before it is sent. The system clock, as the server's.
    if (exec_not_after && *exec_not_after <= std::chrono::system_clock::now()) {
      const auto seconds =
          std::chrono::duration_cast<std::chrono::seconds>(exec_not_after->time_since_epoch());
      return Status(StatusCode::kExpired,
                    "client certificate (exec plugin \"" + config.exec->command() +
                        "\"): expired at " +
                        model::FormatRfc3339(model::Time::FromUnixSeconds(seconds.count())));
    }
    return std::make_pair(exec_tls ? exec_tls : static_tls, exec_epoch);
  }

  // Resolves, connects and (for https) handshakes with `credentials.tls`, within the deadline.
  Result<std::unique_ptr<Connection>> Open(const Request& request, const Credentials& credentials,
                                           std::optional<Clock::time_point> deadline) {
    auto connection = std::make_unique<Connection>();
    connection->context = credentials.tls;
    connection->epoch = credentials.epoch;
    std::vector<tcp::endpoint> endpoints;
    ErrorCode resolve_error;
    // An IP literal (127.0.0.1, a Service's IP: the usual server) needs no lookup. Asio runs
    // lookups on a thread of the io_context's own that lasts as long as the pooled connection:
    // one idle, unnamed thread per connection otherwise.
    const asio::ip::address literal = asio::ip::make_address(config.server.host, resolve_error);
    if (!resolve_error) {
      endpoints.emplace_back(literal, config.server.port);
    } else {
      resolve_error = {};
      tcp::resolver resolver(connection->ioc);
      resolver.async_resolve(config.server.host, std::to_string(config.server.port),
                             [&](ErrorCode ec, const tcp::resolver::results_type& results) {
                               resolve_error = ec;
                               for (const auto& entry : results) {
                                 endpoints.push_back(entry.endpoint());
                               }
                             });
      connection->ioc.run();
    }
    if (resolve_error) return FailureStatus(request, Failure{"resolve", resolve_error, true});
    if (connection->context) {
      connection->tls = std::make_unique<beast::ssl_stream<beast::tcp_stream>>(
          connection->ioc, *connection->context);
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
    if (connection->tls) {
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
    MutexLock lock(mu);
    ++opened;
    return connection;
  }

  // The exec plugin's credential: its token and its certificate's TLS context. A certificate
  // that does not load or has expired is dropped from the provider, so the plugin runs again; an
  // expired one at once (one more run per request), a malformed one on the next request.
  Result<Credentials> ExecCredentials(const Request& request) {
    for (int attempt = 0;; ++attempt) {
      Result<ExecCredential> credential = config.exec->Get();
      if (!credential.ok()) {
        return Status(StatusCode::kUnauthorized,
                      What(request) + ": " + std::string(credential.status().message()));
      }
      Result<std::pair<std::shared_ptr<ssl::context>, std::uint64_t>> tls = ExecTls(*credential);
      if (!tls.ok()) {
        config.exec->Invalidate(credential->generation);
        if (tls.status().code() == StatusCode::kExpired && attempt == 0) continue;
        return Status(StatusCode::kUnauthorized,
                      What(request) + ": " + std::string(tls.status().message()));
      }
      Credentials out;
      if (!credential->token.empty()) out.authorization = "Bearer " + credential->token;
      out.generation = credential->generation;
      out.tls = std::move(tls->first);
      out.epoch = tls->second;
      return out;
    }
  }

  Result<Credentials> Authenticate(const Request& request) {
    if (use_exec) return ExecCredentials(request);
    Credentials out;
    out.tls = static_tls;  // its epoch is 0: only exec certificates rotate
    if (config.token_source) {
      Result<std::string> token = config.token_source->Token();
      if (!token.ok()) {
        return Status(StatusCode::kUnauthorized,
                      What(request) + ": " + std::string(token.status().message()));
      }
      out.authorization = "Bearer " + *token;
    } else if (config.basic_auth) {
      out.authorization = "Basic " + internal::EncodeBase64(config.basic_auth->username + ":" +
                                                            config.basic_auth->password);
    }
    return out;
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
    // A HEAD answer's Content-Length describes the GET's body, which is not sent.
    if (message.method() == http::verb::head) parser.skip(true);
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
      SW_ASSIGN_OR_RETURN(Credentials credentials, Authenticate(request));
      const http::request<http::string_body> message =
          BuildRequest(request, credentials.authorization);
      std::unique_ptr<Connection> connection = TakeIdle();
      const bool reused = connection != nullptr;
      if (!reused) {
        SW_ASSIGN_OR_RETURN(connection, Open(request, credentials, deadline));
      }
      SetDeadline(*connection, deadline);

      // Cancellation closes the socket from the connection's own io_context.
      std::shared_ptr<StreamCanceller::State> cancel_state =
          canceller != nullptr ? canceller->state_ : nullptr;
      if (cancel_state) {
        MutexLock lock(cancel_state->mu);
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
      BusyMark busy_mark(*this, connection.get());
      Result<Response> result =
          connection->tls
              ? Exchange(*connection->tls, *connection, message, consume, keep_alive, failure)
              : Exchange(*connection->plain, *connection, message, consume, keep_alive, failure);
      busy_mark.Release();
      bool cancelled = false;
      if (cancel_state) {
        MutexLock lock(cancel_state->mu);
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
        if (connection->rotated && failure.ec != beast::error::timeout) {
          return UnavailableError(What(request) + ": " + failure.step +
                                  ": connection closed: the exec plugin's client certificate "
                                  "changed");
        }
        return FailureStatus(request, failure);
      }
      SW_RETURN_IF_ERROR(result.status());
      // A finished exchange (for a stream: the server ended the body) leaves a reusable
      // connection; one whose consumer stopped early is closed.
      if (keep_alive) GiveBack(std::move(connection));
      if (result->status == 401 && use_exec && !retried_unauthorized) {
        config.exec->Invalidate(credentials.generation);
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
    SW_ASSIGN_OR_RETURN(impl->static_tls,
                        NewTlsContext(config.tls, config.tls.client_certificate_pem,
                                      config.tls.client_certificate_source,
                                      config.tls.client_key_pem, config.tls.client_key_source));
  }
  impl->use_exec = config.exec != nullptr && config.token_source == nullptr &&
                   !config.basic_auth.has_value() && config.tls.client_certificate_pem.empty();
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
  MutexLock lock(impl_->mu);
  return impl_->opened;
}

}  // namespace slicewright::client

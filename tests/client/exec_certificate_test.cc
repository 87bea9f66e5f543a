// Exec plugins that return a client certificate, against a loopback HTTPS server that requires a
// client certificate signed by a test CA (mutual TLS) and reports which certificate and which
// connection each request came on: the certificate is presented, rotated on expiry, on a 401 and
// past its NotAfter, connections of an old certificate are closed (pooled ones not reused, a watch
// ended), unusable PEM is a clear error, and static credentials win over the plugin.
#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <nlohmann/json.hpp>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include "slicewright/client/transport.h"
#include "slicewright/model/time.h"

#include "client/client_test_util.h"
#include "fakes/loopback.h"

namespace slicewright::client {
namespace {

using testing::FakeClock;
using testing::TempDir;

// ---- Certificates, generated in memory -------------------------------------------------------

struct OpenSslFree {
  void operator()(X509* p) const { X509_free(p); }
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
  void operator()(EVP_PKEY_CTX* p) const { EVP_PKEY_CTX_free(p); }
  void operator()(BIO* p) const { BIO_free(p); }
  void operator()(X509_EXTENSION* p) const { X509_EXTENSION_free(p); }
  void operator()(SSL_CTX* p) const { SSL_CTX_free(p); }
  void operator()(SSL* p) const { SSL_free(p); }
};
using X509Ptr = std::unique_ptr<X509, OpenSslFree>;
using KeyPtr = std::unique_ptr<EVP_PKEY, OpenSslFree>;

enum class Kind { kCa, kServer, kClient };

struct Issued {
  std::string certificate_pem;
  std::string key_pem;
  X509Ptr certificate;
  KeyPtr key;
};

KeyPtr NewKey() {
  std::unique_ptr<EVP_PKEY_CTX, OpenSslFree> ctx(
      EVP_PKEY_CTX_new_from_name(nullptr, "EC", nullptr));
  EVP_PKEY* raw = nullptr;
  if (!ctx || EVP_PKEY_keygen_init(ctx.get()) != 1 ||
      EVP_PKEY_CTX_set_group_name(ctx.get(), "P-256") != 1 ||
      EVP_PKEY_generate(ctx.get(), &raw) != 1) {
    return nullptr;
  }
  return KeyPtr(raw);
}

std::string Pem(const std::function<int(BIO*)>& write) {
  std::unique_ptr<BIO, OpenSslFree> bio(BIO_new(BIO_s_mem()));
  if (!bio || write(bio.get()) != 1) return "";
  std::string out(BIO_ctrl_pending(bio.get()), '\0');
  const int n = BIO_read(bio.get(), out.data(), static_cast<int>(out.size()));
  out.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  return out;
}

bool AddExtension(X509* certificate, X509V3_CTX* ctx, int nid, const char* value) {
  std::unique_ptr<X509_EXTENSION, OpenSslFree> ext(X509V3_EXT_conf_nid(nullptr, ctx, nid, value));
  return ext && X509_add_ext(certificate, ext.get(), -1) == 1;
}

// A certificate named `common_name` with serial `serial`, valid from `from` to `to` relative to
// now, signed by `issuer` (self-signed when null).
Issued Issue(Kind kind, const char* common_name, int serial, const Issued* issuer,
             std::chrono::seconds from = std::chrono::hours(-1),
             std::chrono::seconds to = std::chrono::hours(24)) {
  Issued out;
  out.key = NewKey();
  out.certificate.reset(X509_new());
  if (!out.key || !out.certificate) {
    ADD_FAILURE() << "OpenSSL could not allocate a key or certificate";
    return out;
  }
  X509* cert = out.certificate.get();
  X509_NAME* subject = X509_get_subject_name(cert);
  const bool built = X509_set_version(cert, 2) == 1 &&
                     ASN1_INTEGER_set(X509_get_serialNumber(cert), serial) == 1 &&
                     X509_gmtime_adj(X509_getm_notBefore(cert), from.count()) != nullptr &&
                     X509_gmtime_adj(X509_getm_notAfter(cert), to.count()) != nullptr &&
                     X509_set_pubkey(cert, out.key.get()) == 1 &&
                     X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_ASC,
                                                reinterpret_cast<const unsigned char*>(common_name),
                                                -1, -1, 0) == 1;
  X509* issuer_cert = issuer != nullptr ? issuer->certificate.get() : cert;
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer_cert, cert, nullptr, nullptr, 0);
  bool extended = X509_set_issuer_name(cert, X509_get_subject_name(issuer_cert)) == 1;
  switch (kind) {
    case Kind::kCa:
      extended = extended && AddExtension(cert, &ctx, NID_basic_constraints, "critical,CA:TRUE") &&
                 AddExtension(cert, &ctx, NID_key_usage, "critical,keyCertSign,cRLSign");
      break;
    case Kind::kServer:
      extended = extended && AddExtension(cert, &ctx, NID_ext_key_usage, "serverAuth") &&
                 AddExtension(cert, &ctx, NID_subject_alt_name, "IP:127.0.0.1");
      break;
    case Kind::kClient:
      extended = extended && AddExtension(cert, &ctx, NID_ext_key_usage, "clientAuth");
      break;
  }
  EVP_PKEY* signing_key = issuer != nullptr ? issuer->key.get() : out.key.get();
  if (!built || !extended || X509_sign(cert, signing_key, EVP_sha256()) <= 0) {
    ADD_FAILURE() << "OpenSSL could not build the certificate " << common_name;
    return out;
  }
  out.certificate_pem = Pem([&](BIO* bio) { return PEM_write_bio_X509(bio, cert); });
  out.key_pem = Pem([&](BIO* bio) {
    return PEM_write_bio_PrivateKey(bio, out.key.get(), nullptr, nullptr, 0, nullptr, nullptr);
  });
  return out;
}

// ---- A mutual-TLS HTTP/1.1 server ------------------------------------------------------------

// What the server saw of one request.
struct Seen {
  int connection = 0;  // 1, 2, ... in accept order
  std::string common_name;
  std::string authorization;
  std::string target;
};

// Answers every GET with 200 {"cn":...} on keep-alive connections, one thread per connection;
// /watch gets a chunked body that sends one line and never ends. Requires a client certificate
// signed by the CA unless told otherwise; answers 401 to certificates named `unauthorized_cn`.
class MtlsServer final {
 public:
  MtlsServer(const Issued& server, const Issued& client_ca, bool require_certificate = true)
      : ctx_(SSL_CTX_new(TLS_server_method())) {
    if (!ctx_ || SSL_CTX_use_certificate(ctx_.get(), server.certificate.get()) != 1 ||
        SSL_CTX_use_PrivateKey(ctx_.get(), server.key.get()) != 1 ||
        X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx_.get()), client_ca.certificate.get()) != 1) {
      ADD_FAILURE() << "server TLS context";
      return;
    }
    SSL_CTX_set_verify(
        ctx_.get(), SSL_VERIFY_PEER | (require_certificate ? SSL_VERIFY_FAIL_IF_NO_PEER_CERT : 0),
        nullptr);
    listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(address);
    if (listener_ < 0 ||
        ::bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
        ::listen(listener_, 16) != 0 ||
        ::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      ADD_FAILURE() << "listening on loopback";
      return;
    }
    port_ = ntohs(address.sin_port);
    acceptor_ = std::thread([this] { Accept(); });
  }

  MtlsServer(const MtlsServer&) = delete;
  MtlsServer& operator=(const MtlsServer&) = delete;

  ~MtlsServer() {
    stopping_ = true;
    if (listener_ >= 0) ::shutdown(listener_, SHUT_RDWR);  // wakes accept()
    if (acceptor_.joinable()) acceptor_.join();
    std::vector<std::thread> threads;
    {
      std::lock_guard lock(mu_);
      for (const int fd : fds_) ::shutdown(fd, SHUT_RDWR);  // wakes SSL_read()
      threads.swap(threads_);
    }
    for (std::thread& thread : threads) thread.join();
    for (const int fd : fds_) ::close(fd);
    if (listener_ >= 0) ::close(listener_);
  }

  std::uint16_t port() const { return port_; }
  void set_unauthorized_cn(std::string cn) {
    std::lock_guard lock(mu_);
    unauthorized_cn_ = std::move(cn);
  }
  std::vector<Seen> seen() {
    std::lock_guard lock(mu_);
    return seen_;
  }
  int refused_handshakes() const { return refused_handshakes_; }

 private:
  void Accept() {
    int accepted = 0;
    while (!stopping_) {
      const int fd = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) return;
      std::lock_guard lock(mu_);
      fds_.push_back(fd);
      threads_.emplace_back([this, fd, id = ++accepted] { Serve(fd, id); });
    }
  }

  void Serve(int fd, int id) {
    // A write to a peer that left fails with EPIPE instead of killing the test binary.
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
    std::unique_ptr<SSL, OpenSslFree> ssl(SSL_new(ctx_.get()));
    if (!ssl || SSL_set_fd(ssl.get(), fd) != 1 || SSL_accept(ssl.get()) != 1) {
      ERR_clear_error();
      ++refused_handshakes_;
      return;
    }
    std::string common_name;
    if (X509Ptr peer{SSL_get1_peer_certificate(ssl.get())}) {
      std::array<char, 256> buffer{};
      if (X509_NAME_get_text_by_NID(X509_get_subject_name(peer.get()), NID_commonName,
                                    buffer.data(), static_cast<int>(buffer.size())) > 0) {
        common_name = buffer.data();
      }
    }
    std::string input;
    std::array<char, 4096> chunk{};
    while (true) {
      const std::size_t end = input.find("\r\n\r\n");
      if (end == std::string::npos) {
        const int n = SSL_read(ssl.get(), chunk.data(), static_cast<int>(chunk.size()));
        if (n <= 0) break;
        input.append(chunk.data(), static_cast<std::size_t>(n));
        continue;
      }
      const std::string head = input.substr(0, end);
      input.erase(0, end + 4);  // only bodiless GETs are sent here
      Seen seen{id, common_name, "", ""};
      std::istringstream lines(head);
      for (std::string line; std::getline(lines, line);) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (seen.target.empty()) {  // the request line: "GET /api HTTP/1.1"
          const std::size_t space = line.find(' ');
          seen.target = line.substr(space + 1, line.rfind(' ') - space - 1);
        }
        std::string lower = line;
        std::transform(lower.begin(), lower.end(), lower.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        if (lower.starts_with("authorization: ")) seen.authorization = line.substr(15);
      }
      bool unauthorized = false;
      {
        std::lock_guard lock(mu_);
        seen_.push_back(seen);
        unauthorized = !unauthorized_cn_.empty() && common_name == unauthorized_cn_;
      }
      const std::string body =
          unauthorized ? R"({"kind":"Status","code":401})" : R"({"cn":")" + common_name + "\"}";
      if (seen.target == "/watch" && !unauthorized) {
        const std::string line = body + "\n";
        std::ostringstream chunked;
        chunked << "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                << "Transfer-Encoding: chunked\r\n\r\n"
                << std::hex << line.size() << "\r\n"
                << line << "\r\n";
        const std::string response = chunked.str();
        if (SSL_write(ssl.get(), response.data(), static_cast<int>(response.size())) <= 0) break;
        continue;  // the next read waits until the client or the server closes
      }
      const std::string response =
          std::string(unauthorized ? "HTTP/1.1 401 Unauthorized" : "HTTP/1.1 200 OK") +
          "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
          "\r\n\r\n" + body;
      if (SSL_write(ssl.get(), response.data(), static_cast<int>(response.size())) <= 0) break;
    }
    ERR_clear_error();
  }

  std::unique_ptr<SSL_CTX, OpenSslFree> ctx_;
  int listener_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> refused_handshakes_{0};
  std::thread acceptor_;
  std::mutex mu_;
  std::vector<int> fds_;              // guarded by mu_
  std::vector<std::thread> threads_;  // guarded by mu_
  std::vector<Seen> seen_;            // guarded by mu_
  std::string unauthorized_cn_;       // guarded by mu_
};

// ---- The plugin and the transport ------------------------------------------------------------

// An ExecCredential printed by the plugin: the PEMs inline, JSON-escaped.
std::string CredentialJson(const std::string& certificate_pem, const std::string& key_pem,
                           std::string_view expiry = "", std::string_view token = "") {
  nlohmann::json status = nlohmann::json::object();
  status["clientCertificateData"] = certificate_pem;
  status["clientKeyData"] = key_pem;
  if (!expiry.empty()) status["expirationTimestamp"] = expiry;
  if (!token.empty()) status["token"] = token;
  nlohmann::json credential = {{"kind", "ExecCredential"},
                               {"apiVersion", "client.authentication.k8s.io/v1"},
                               {"status", status}};
  return credential.dump();
}

std::string Rfc3339(std::chrono::system_clock::time_point when) {
  return model::FormatRfc3339(model::Time::FromUnixSeconds(
      std::chrono::duration_cast<std::chrono::seconds>(when.time_since_epoch()).count()));
}

class ExecCertificateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server = std::make_unique<MtlsServer>(server_cert, ca);
    plugin = dir.WriteScript(
        "plugin",
        "d=$(dirname \"$0\")\n"
        "n=$(cat \"$d/count\" 2>/dev/null || echo 0); n=$((n+1)); echo $n > \"$d/count\"\n"
        "cat \"$d/cred-$n.json\" 2>/dev/null || cat \"$d/cred.json\"\n");
  }

  // Run n of the plugin prints `json`; runs without a file of their own print cred.json.
  void PluginPrints(int run, const std::string& json) const {
    dir.Write("cred-" + std::to_string(run) + ".json", json);
  }
  void PluginAlwaysPrints(const std::string& json) const { dir.Write("cred.json", json); }

  int PluginRuns() const {
    std::ifstream in(dir.Path("count"));
    int n = 0;
    in >> n;
    return n;
  }

  RestConfig Config() const {
    RestConfig config;
    config.server.scheme = "https";
    config.server.host = "127.0.0.1";
    config.server.port = server->port();
    config.tls.ca_pem = ca.certificate_pem;
    config.tls.ca_source = "test CA";
    return config;
  }

  std::shared_ptr<ExecCredentialProvider> Provider() const {
    ExecConfig exec;
    exec.command = plugin;
    exec.api_version = std::string(kExecApiV1);
    exec.interactive_mode = ExecInteractiveMode::kNever;
    ExecProviderOptions options;
    options.base_env = std::vector<std::string>{"PATH=/usr/bin:/bin"};
    options.now = clock.now();
    return std::make_shared<ExecCredentialProvider>(exec, ExecClusterInfo{}, options);
  }

  std::unique_ptr<Transport> ExecTransport() const {
    RestConfig config = Config();
    config.exec = Provider();
    auto transport = Transport::Create(std::move(config), {});
    EXPECT_TRUE(transport.ok()) << transport.status().ToString();
    return transport.ok() ? std::move(transport).value() : nullptr;
  }

  static Request Get() {
    Request request;
    request.target = "/api";
    request.timeout = std::chrono::seconds(10);
    return request;
  }

  // The body the server answers for a certificate named `cn`.
  static std::string Cn(std::string_view cn) { return R"({"cn":")" + std::string(cn) + "\"}"; }

  TempDir dir;
  FakeClock clock;
  Issued ca = Issue(Kind::kCa, "test-ca", 1, nullptr);
  Issued server_cert = Issue(Kind::kServer, "test-server", 2, &ca);
  Issued client_a = Issue(Kind::kClient, "client-a", 10, &ca);
  Issued client_b = Issue(Kind::kClient, "client-b", 11, &ca);
  std::unique_ptr<MtlsServer> server;
  std::string plugin;
};

// The plugin's certificate is presented and accepted; the connection is kept and reused.
TEST_F(ExecCertificateTest, PresentsThePluginsCertificate) {
  PluginAlwaysPrints(CredentialJson(client_a.certificate_pem, client_a.key_pem));
  auto transport = ExecTransport();
  ASSERT_NE(transport, nullptr);
  for (int i = 0; i < 2; ++i) {
    Result<Response> response = transport->Do(Get());
    ASSERT_TRUE(response.ok()) << response.status().ToString();
    EXPECT_EQ(response->status, 200);
    EXPECT_EQ(response->body, Cn("client-a"));
  }
  EXPECT_EQ(transport->connections_opened(), 1U);
  EXPECT_EQ(PluginRuns(), 1);
  const std::vector<Seen> seen = server->seen();
  ASSERT_EQ(seen.size(), 2U);
  EXPECT_EQ(seen[1].connection, 1);
  EXPECT_EQ(seen[1].authorization, "");  // a certificate alone: no bearer token
}

// A token and a certificate together: both are sent.
TEST_F(ExecCertificateTest, SendsATokenAlongsideTheCertificate) {
  PluginAlwaysPrints(CredentialJson(client_a.certificate_pem, client_a.key_pem, "", "tok-1"));
  auto transport = ExecTransport();
  ASSERT_NE(transport, nullptr);
  Result<Response> response = transport->Do(Get());
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->body, Cn("client-a"));
  ASSERT_EQ(server->seen().size(), 1U);
  EXPECT_EQ(server->seen()[0].authorization, "Bearer tok-1");
}

// The server really requires a certificate: without one, and with one from another CA, no
// request gets through.
TEST_F(ExecCertificateTest, ServerRefusesConnectionsWithoutATrustedCertificate) {
  auto plain = Transport::Create(Config(), {});
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  Result<Response> response = (*plain)->Do(Get());
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.status().code(), StatusCode::kUnavailable) << response.status().ToString();

  const Issued other_ca = Issue(Kind::kCa, "other-ca", 20, nullptr);
  const Issued stranger = Issue(Kind::kClient, "stranger", 21, &other_ca);
  PluginAlwaysPrints(CredentialJson(stranger.certificate_pem, stranger.key_pem));
  auto transport = ExecTransport();
  ASSERT_NE(transport, nullptr);
  EXPECT_FALSE(transport->Do(Get()).ok());
  EXPECT_TRUE(server->seen().empty());
  // The client can see the handshake fail before the server's SSL_accept returns and counts it.
  EXPECT_TRUE(test_support::Eventually([&] { return server->refused_handshakes() >= 2; }))
      << server->refused_handshakes() << " refused handshakes";
}

// Certificate A expires (expirationTimestamp); the plugin runs again and returns B: new requests
// present B on a new connection, and the pooled connection that presented A is not reused.
TEST_F(ExecCertificateTest, RotatesToTheNewCertificateOnExpiry) {
  PluginPrints(1, CredentialJson(client_a.certificate_pem, client_a.key_pem,
                                 Rfc3339(clock.Get() + std::chrono::seconds(60))));
  PluginAlwaysPrints(CredentialJson(client_b.certificate_pem, client_b.key_pem));
  auto transport = ExecTransport();
  ASSERT_NE(transport, nullptr);
  ASSERT_EQ(transport->Do(Get())->body, Cn("client-a"));
  ASSERT_EQ(transport->Do(Get())->body, Cn("client-a"));
  EXPECT_EQ(PluginRuns(), 1);

  clock.Advance(std::chrono::seconds(61));
  Result<Response> rotated = transport->Do(Get());
  ASSERT_TRUE(rotated.ok()) << rotated.status().ToString();
  EXPECT_EQ(rotated->body, Cn("client-b"));
  EXPECT_EQ(PluginRuns(), 2);
  EXPECT_EQ(transport->connections_opened(), 2U);
  ASSERT_EQ(transport->Do(Get())->body, Cn("client-b"));  // B's connection is pooled in turn
  EXPECT_EQ(transport->connections_opened(), 2U);

  const std::vector<Seen> seen = server->seen();
  ASSERT_EQ(seen.size(), 4U);
  EXPECT_EQ(seen[1].connection, 1);
  EXPECT_EQ(seen[1].common_name, "client-a");
  EXPECT_EQ(seen[2].connection, 2);
  EXPECT_EQ(seen[2].common_name, "client-b");
  EXPECT_EQ(seen[3].connection, 2);
}

// client-go's connection rotation: a watch open on a connection that presented A is closed when
// the certificate changes, so its caller reconnects with B; the error says why.
TEST_F(ExecCertificateTest, RotationClosesAWatchOpenedWithTheOldCertificate) {
  PluginPrints(1, CredentialJson(client_a.certificate_pem, client_a.key_pem,
                                 Rfc3339(clock.Get() + std::chrono::seconds(60))));
  PluginAlwaysPrints(CredentialJson(client_b.certificate_pem, client_b.key_pem));
  auto transport = ExecTransport();
  ASSERT_NE(transport, nullptr);
  std::atomic<bool> streaming{false};
  Result<Response> watch = InternalError("not run");
  std::thread watcher([&] {
    Request request = Get();
    request.target = "/watch";  // the 10 s deadline only bounds a failing test
    watch = transport->Stream(
        request,
        [&](std::string_view) {
          streaming = true;
          return true;
        },
        nullptr);
  });
  for (int i = 0; i < 1000 && !streaming; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(streaming);
  clock.Advance(std::chrono::seconds(61));
  Result<Response> rotated = transport->Do(Get());
  const auto rotated_at = std::chrono::steady_clock::now();
  watcher.join();
  EXPECT_LT(std::chrono::steady_clock::now() - rotated_at, std::chrono::seconds(5));
  ASSERT_TRUE(rotated.ok()) << rotated.status().ToString();
  EXPECT_EQ(rotated->body, Cn("client-b"));
  ASSERT_FALSE(watch.ok());
  EXPECT_EQ(watch.status().code(), StatusCode::kUnavailable) << watch.status().ToString();
  EXPECT_NE(watch.status().message().find("the exec plugin's client certificate changed"),
            std::string_view::npos)
      << watch.status().ToString();
  const std::vector<Seen> seen = server->seen();
  ASSERT_EQ(seen.size(), 2U);
  EXPECT_EQ(seen[0].target, "/watch");
  EXPECT_EQ(seen[0].common_name, "client-a");
  EXPECT_EQ(seen[1].common_name, "client-b");
}

// A re-run that returns the same certificate and key keeps the TLS context and the pooled
// connection: the cache is keyed by the credential, not by the run.
TEST_F(ExecCertificateTest, SameCertificateAfterARerunKeepsThePool) {
  PluginAlwaysPrints(CredentialJson(client_a.certificate_pem, client_a.key_pem,
                                    Rfc3339(clock.Get() + std::chrono::seconds(60))));
  auto transport = ExecTransport();
  ASSERT_NE(transport, nullptr);
  ASSERT_EQ(transport->Do(Get())->body, Cn("client-a"));
  clock.Advance(std::chrono::seconds(61));
  ASSERT_EQ(transport->Do(Get())->body, Cn("client-a"));
  EXPECT_EQ(PluginRuns(), 2);
  EXPECT_EQ(transport->connections_opened(), 1U);
}

// The server answers 401 to certificate A: the plugin runs again, returns B, and the request is
// retried once on a new connection presenting B.
TEST_F(ExecCertificateTest, RotatesAfterA401) {
  server->set_unauthorized_cn("client-a");
  PluginPrints(1, CredentialJson(client_a.certificate_pem, client_a.key_pem));
  PluginAlwaysPrints(CredentialJson(client_b.certificate_pem, client_b.key_pem));
  auto transport = ExecTransport();
  ASSERT_NE(transport, nullptr);
  Result<Response> response = transport->Do(Get());
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, Cn("client-b"));
  EXPECT_EQ(PluginRuns(), 2);
  const std::vector<Seen> seen = server->seen();
  ASSERT_EQ(seen.size(), 2U);
  EXPECT_EQ(seen[0].common_name, "client-a");
  EXPECT_EQ(seen[1].common_name, "client-b");
  EXPECT_EQ(seen[1].connection, 2);  // A's kept-alive connection was not reused
}

// A certificate past its NotAfter is renewed before it is sent, even without an
// expirationTimestamp; when the plugin has nothing newer the error says so.
TEST_F(ExecCertificateTest, RenewsACertificatePastItsNotAfter) {
  const Issued expired = Issue(Kind::kClient, "client-expired", 30, &ca, std::chrono::hours(-2),
                               std::chrono::hours(-1));
  PluginPrints(1, CredentialJson(expired.certificate_pem, expired.key_pem));
  PluginAlwaysPrints(CredentialJson(client_b.certificate_pem, client_b.key_pem));
  auto transport = ExecTransport();
  ASSERT_NE(transport, nullptr);
  Result<Response> response = transport->Do(Get());
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->body, Cn("client-b"));
  EXPECT_EQ(PluginRuns(), 2);
  EXPECT_EQ(server->refused_handshakes(), 0);

  PluginAlwaysPrints(CredentialJson(expired.certificate_pem, expired.key_pem));
  auto stuck = ExecTransport();
  ASSERT_NE(stuck, nullptr);
  Result<Response> failed = stuck->Do(Get());
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), StatusCode::kUnauthorized);
  EXPECT_NE(failed.status().message().find("client certificate (exec plugin \"" + plugin +
                                           "\"): expired at "),
            std::string_view::npos)
      << failed.status().ToString();
  EXPECT_EQ(PluginRuns(), 4);  // one run, then one more for the request
}

// PEM that OpenSSL refuses, and a key that is not the certificate's: kUnauthorized naming the
// plugin, without the key; the credential is dropped, so the next request runs the plugin again.
TEST_F(ExecCertificateTest, UnusableCertificateOrKeyIsUnauthorizedNamingThePlugin) {
  PluginAlwaysPrints(CredentialJson(
      "-----BEGIN CERTIFICATE-----\nZ2FyYmFnZQ==\n-----END CERTIFICATE-----\n",
      "-----BEGIN PRIVATE KEY-----\nc2VjcmV0LWtleS1ieXRlcw==\n-----END PRIVATE KEY-----\n"));
  auto transport = ExecTransport();
  ASSERT_NE(transport, nullptr);
  Result<Response> garbage = transport->Do(Get());
  ASSERT_FALSE(garbage.ok());
  EXPECT_EQ(garbage.status().code(), StatusCode::kUnauthorized);
  EXPECT_NE(garbage.status().message().find("client certificate (exec plugin \"" + plugin +
                                            "\"): not a usable PEM certificate"),
            std::string_view::npos)
      << garbage.status().ToString();
  EXPECT_EQ(garbage.status().message().find("c2VjcmV0"), std::string_view::npos);
  EXPECT_FALSE(transport->Do(Get()).ok());
  EXPECT_EQ(PluginRuns(), 2);

  PluginAlwaysPrints(CredentialJson(client_a.certificate_pem, client_b.key_pem));
  Result<Response> mismatched = transport->Do(Get());
  ASSERT_FALSE(mismatched.ok());
  EXPECT_EQ(mismatched.status().code(), StatusCode::kUnauthorized);
  EXPECT_NE(mismatched.status().message().find("client key (exec plugin \"" + plugin +
                                               "\"): not a usable PEM key for the certificate"),
            std::string_view::npos)
      << mismatched.status().ToString();
  EXPECT_TRUE(server->seen().empty());

  // A usable certificate from the next run recovers.
  PluginAlwaysPrints(CredentialJson(client_a.certificate_pem, client_a.key_pem));
  Result<Response> recovered = transport->Do(Get());
  ASSERT_TRUE(recovered.ok()) << recovered.status().ToString();
  EXPECT_EQ(recovered->body, Cn("client-a"));
}

// client-go's rule: a kubeconfig client certificate or bearer token wins, and the plugin never
// runs.
TEST_F(ExecCertificateTest, StaticCredentialsWinOverThePlugin) {
  PluginAlwaysPrints(CredentialJson(client_a.certificate_pem, client_a.key_pem, "", "exec-tok"));
  RestConfig with_certificate = Config();
  with_certificate.tls.client_certificate_pem = client_b.certificate_pem;
  with_certificate.tls.client_certificate_source = "inline";
  with_certificate.tls.client_key_pem = client_b.key_pem;
  with_certificate.tls.client_key_source = "inline";
  with_certificate.exec = Provider();
  auto transport = Transport::Create(std::move(with_certificate), {});
  ASSERT_TRUE(transport.ok()) << transport.status().ToString();
  Result<Response> response = (*transport)->Do(Get());
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->body, Cn("client-b"));
  EXPECT_EQ(server->seen().at(0).authorization, "");

  MtlsServer optional(server_cert, ca, /*require_certificate=*/false);
  RestConfig with_token = Config();
  with_token.server.port = optional.port();
  with_token.token_source = std::make_shared<StaticTokenSource>("static-tok");
  with_token.exec = Provider();
  auto token_transport = Transport::Create(std::move(with_token), {});
  ASSERT_TRUE(token_transport.ok()) << token_transport.status().ToString();
  Result<Response> token_response = (*token_transport)->Do(Get());
  ASSERT_TRUE(token_response.ok()) << token_response.status().ToString();
  EXPECT_EQ(token_response->body, Cn(""));
  EXPECT_EQ(optional.seen().at(0).authorization, "Bearer static-tok");
  EXPECT_EQ(PluginRuns(), 0);
}

}  // namespace
}  // namespace slicewright::client

#include "apiserver/http/tls.h"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>

#include "apiserver/http/server.h"
#include "apiserver/http/test_client.h"

namespace slicewright::apiserver {
namespace {

using testing::ClientTls;
using testing::Fetch;
using testing::TestClient;

// A fresh directory under the system temp dir, removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "sw-tls-XXXXXX").string();
    if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

unsigned Mode(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return 0;
  return info.st_mode & 0777;
}

HttpResponse Text(std::string body) {
  HttpResponse response;
  response.content_type = "text/plain";
  response.body = std::move(body);
  return response;
}

// The first call creates the CA and serving files (keys 0600); the second reuses them byte for
// byte, as a restarted server must to keep kubeconfigs valid.
TEST(TlsTest, EnsureCertificatesCreatesThenReuses) {
  TempDir temp;
  ASSERT_FALSE(temp.path().empty());
  const std::string dir = temp.path() + "/nested/pki";
  auto first = EnsureCertificates(dir, {"apiserver.example", "10.1.2.3"});
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  for (const char* name :
       {"ca.crt", "ca.key", "server.crt", "server.key", "client.crt", "client.key"}) {
    EXPECT_TRUE(std::filesystem::exists(dir + "/" + name)) << name;
  }
  EXPECT_EQ(Mode(dir + "/ca.key"), 0600u);
  EXPECT_EQ(Mode(dir + "/server.key"), 0600u);
  EXPECT_EQ(Mode(dir + "/client.key"), 0600u);
  EXPECT_EQ(first->client_certificate_pem, ReadFile(dir + "/client.crt"));
  EXPECT_EQ(first->client_key_pem, ReadFile(dir + "/client.key"));
  EXPECT_EQ(first->ca_certificate_path, dir + "/ca.crt");
  EXPECT_EQ(first->ca_certificate_pem, ReadFile(dir + "/ca.crt"));
  EXPECT_EQ(first->server.certificate_chain_pem, ReadFile(dir + "/server.crt"));
  EXPECT_EQ(first->server.private_key_pem, ReadFile(dir + "/server.key"));
  EXPECT_EQ(first->ca_certificate_pem.rfind("-----BEGIN CERTIFICATE-----", 0), 0u);
  EXPECT_EQ(first->server.private_key_pem.rfind("-----BEGIN PRIVATE KEY-----", 0), 0u);

  auto second = EnsureCertificates(dir, {"10.1.2.3", "apiserver.example"});
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(second->ca_certificate_pem, first->ca_certificate_pem);
  EXPECT_EQ(second->server.certificate_chain_pem, first->server.certificate_chain_pem);
  EXPECT_EQ(second->server.private_key_pem, first->server.private_key_pem);
  EXPECT_EQ(second->client_certificate_pem, first->client_certificate_pem);
  EXPECT_EQ(second->client_key_pem, first->client_key_pem);
  // A subset of the hosts (the defaults are always covered) also reuses.
  auto subset = EnsureCertificates(dir, {"localhost"});
  ASSERT_TRUE(subset.ok());
  EXPECT_EQ(subset->server.certificate_chain_pem, first->server.certificate_chain_pem);
}

// A new host re-issues the serving certificate but keeps the CA; a damaged serving file is
// replaced too.
TEST(TlsTest, ReissuesServingCertificateAndKeepsCa) {
  TempDir temp;
  ASSERT_FALSE(temp.path().empty());
  auto first = EnsureCertificates(temp.path(), {});
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  auto more = EnsureCertificates(temp.path(), {"node-1.internal"});
  ASSERT_TRUE(more.ok()) << more.status().ToString();
  EXPECT_EQ(more->ca_certificate_pem, first->ca_certificate_pem);
  EXPECT_NE(more->server.certificate_chain_pem, first->server.certificate_chain_pem);

  { std::ofstream(temp.path() + "/server.crt") << "not a certificate"; }
  auto repaired = EnsureCertificates(temp.path(), {"node-1.internal"});
  ASSERT_TRUE(repaired.ok()) << repaired.status().ToString();
  EXPECT_EQ(repaired->ca_certificate_pem, first->ca_certificate_pem);
  EXPECT_EQ(repaired->server.certificate_chain_pem.rfind("-----BEGIN CERTIFICATE-----", 0), 0u);

  { std::ofstream(temp.path() + "/ca.key") << "garbage"; }
  auto new_ca = EnsureCertificates(temp.path(), {});
  ASSERT_TRUE(new_ca.ok()) << new_ca.status().ToString();
  EXPECT_NE(new_ca->ca_certificate_pem, first->ca_certificate_pem);
  // A new CA re-issues the client certificate too: the old one would no longer chain.
  EXPECT_NE(new_ca->client_certificate_pem, first->client_certificate_pem);
}

// The kubeconfig user's certificate: signed by the CA, for client authentication only, named as
// kubeadm names its admin.
TEST(TlsTest, ClientCertificateIsSignedByTheCaForClientAuth) {
  TempDir temp;
  auto tls = EnsureCertificates(temp.path(), {});
  ASSERT_TRUE(tls.ok()) << tls.status().ToString();
  const auto parse = [](const std::string& pem) {
    std::unique_ptr<BIO, decltype(&BIO_free)> bio(
        BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), BIO_free);
    return std::unique_ptr<X509, decltype(&X509_free)>(
        PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr), X509_free);
  };
  auto ca = parse(tls->ca_certificate_pem);
  auto client = parse(tls->client_certificate_pem);
  ASSERT_NE(ca, nullptr);
  ASSERT_NE(client, nullptr);
  EXPECT_EQ(X509_check_issued(ca.get(), client.get()), X509_V_OK);
  EXPECT_EQ(X509_verify(client.get(), X509_get0_pubkey(ca.get())), 1);
  char subject[256] = {};
  X509_NAME_oneline(X509_get_subject_name(client.get()), subject, sizeof(subject));
  EXPECT_EQ(std::string(subject), "/CN=slicewright-admin/O=system:masters");
  EXPECT_EQ(X509_get_extended_key_usage(client.get()), static_cast<std::uint32_t>(XKU_SSL_CLIENT));
  EXPECT_EQ(X509_check_ca(client.get()), 0);
}

// A file where the directory should be, and invalid host names, are clear errors.
TEST(TlsTest, BadDirectoryOrHostIsAnError) {
  TempDir temp;
  ASSERT_FALSE(temp.path().empty());
  const std::string blocker = temp.path() + "/blocker";
  { std::ofstream(blocker) << "in the way"; }
  auto under_file = EnsureCertificates(blocker + "/pki", {});
  ASSERT_FALSE(under_file.ok());
  EXPECT_EQ(under_file.status().code(), StatusCode::kInvalid);
  EXPECT_EQ(under_file.status().message().rfind(
                "creating certificate directory " + blocker + "/pki: ", 0),
            0u)
      << under_file.status().message();

  auto is_file = EnsureCertificates(blocker, {});
  ASSERT_FALSE(is_file.ok());
  EXPECT_EQ(is_file.status().code(), StatusCode::kInvalid);
  EXPECT_NE(is_file.status().message().find(blocker), std::string::npos)
      << is_file.status().message();

  auto bad_host = EnsureCertificates(temp.path() + "/pki", {"a,b"});
  ASSERT_FALSE(bad_host.ok());
  EXPECT_EQ(bad_host.status().code(), StatusCode::kInvalid);
  EXPECT_EQ(bad_host.status().message(), "invalid certificate host \"a,b\"");
}

// Create refuses TLS material that does not parse or whose key does not match.
TEST(TlsTest, CreateRejectsBadTlsMaterial) {
  auto handler = [](HttpRequest&) { return Text("ok"); };
  HttpServerOptions garbage;
  garbage.tls = TlsMaterial{"not pem", "not pem"};
  auto bad = HttpServer::Create(garbage, handler);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalid);
  EXPECT_EQ(bad.status().message().rfind("TLS certificate: no PEM certificate", 0), 0u)
      << bad.status().message();

  TempDir one;
  TempDir two;
  auto a = EnsureCertificates(one.path(), {});
  auto b = EnsureCertificates(two.path(), {});
  ASSERT_TRUE(a.ok() && b.ok());
  HttpServerOptions mismatched;
  mismatched.tls = TlsMaterial{a->server.certificate_chain_pem, b->server.private_key_pem};
  auto mismatch = HttpServer::Create(mismatched, handler);
  ASSERT_FALSE(mismatch.ok());
  EXPECT_EQ(mismatch.status().code(), StatusCode::kInvalid);
  EXPECT_NE(mismatch.status().message().find("private key"), std::string::npos)
      << mismatch.status().message();
}

struct TlsServer {
  TempDir dir;
  GeneratedTls tls;
  std::unique_ptr<HttpServer> server;
};

std::unique_ptr<TlsServer> StartTlsServer(HttpHandler handler) {
  auto out = std::make_unique<TlsServer>();
  auto tls = EnsureCertificates(out->dir.path(), {});
  EXPECT_TRUE(tls.ok()) << tls.status().ToString();
  if (!tls.ok()) return nullptr;
  out->tls = *tls;
  HttpServerOptions options;
  options.tls = tls->server;
  auto server = HttpServer::Create(options, std::move(handler));
  EXPECT_TRUE(server.ok()) << server.status().ToString();
  if (!server.ok()) return nullptr;
  out->server = std::move(server).value();
  out->server->Start();
  return out;
}

// A client trusting only the generated CA and checking the IP 127.0.0.1 gets a response over
// HTTPS; offered h2 and http/1.1 (as Go clients do), the server picks http/1.1.
TEST(TlsTest, ServesHttpsVerifiedByCaWithAlpnHttp11) {
  auto tls = StartTlsServer([](HttpRequest& request) { return Text("tls:" + request.path); });
  ASSERT_NE(tls, nullptr);
  ClientTls client_tls{tls->tls.ca_certificate_pem, "127.0.0.1", "", {"h2", "http/1.1"}};
  auto client = TestClient::Connect(tls->server->port(), &client_tls);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  EXPECT_EQ((*client)->alpn(), "http/1.1");
  for (int i = 0; i < 2; ++i) {  // keep-alive over TLS
    ASSERT_TRUE((*client)->SendRequest("GET", "/version").ok());
    auto response = (*client)->ReadResponse();
    ASSERT_TRUE(response.ok()) << response.status().ToString();
    EXPECT_EQ(response->status, 200);
    EXPECT_EQ(response->body, "tls:/version");
  }

  // By DNS name with SNI, and with only h2 offered (no ALPN selected: HTTP/1.1 still works).
  ClientTls by_name{tls->tls.ca_certificate_pem, "", "localhost", {"h2"}};
  auto named = TestClient::Connect(tls->server->port(), &by_name);
  ASSERT_TRUE(named.ok()) << named.status().ToString();
  EXPECT_EQ((*named)->alpn(), "");
  ASSERT_TRUE((*named)->SendRequest("GET", "/x").ok());
  auto response = (*named)->ReadResponse();
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->body, "tls:/x");
}

// Verification fails for a name the certificate does not carry and for another CA.
TEST(TlsTest, ClientRejectsWrongNameOrCa) {
  auto tls = StartTlsServer([](HttpRequest&) { return Text("ok"); });
  ASSERT_NE(tls, nullptr);
  ClientTls wrong_name{tls->tls.ca_certificate_pem, "", "example.com", {}};
  EXPECT_FALSE(TestClient::Connect(tls->server->port(), &wrong_name).ok());
  ClientTls wrong_ip{tls->tls.ca_certificate_pem, "10.9.9.9", "", {}};
  EXPECT_FALSE(TestClient::Connect(tls->server->port(), &wrong_ip).ok());
  TempDir other;
  auto other_ca = EnsureCertificates(other.path(), {});
  ASSERT_TRUE(other_ca.ok());
  ClientTls wrong_ca{other_ca->ca_certificate_pem, "127.0.0.1", "", {}};
  EXPECT_FALSE(TestClient::Connect(tls->server->port(), &wrong_ca).ok());
  // The server survives the failed handshakes.
  ClientTls right{tls->tls.ca_certificate_pem, "127.0.0.1", "", {}};
  auto ok = Fetch(tls->server->port(), "GET", "/", {}, {}, &right);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->status, 200);
}

// Streaming over TLS: a chunk arrives while the server also reads for disconnects, and the
// client leaving stops the stream once.
TEST(TlsTest, StreamsOverTlsAndNoticesDisconnect) {
  class Stream final : public ResponseStream {
   public:
    void Start(std::shared_ptr<StreamSink> sink) override { sink->Write(event); }
    void Stop() override {
      std::lock_guard<std::mutex> lock(mu);
      ++stops;
      cv.notify_all();
    }
    std::shared_ptr<const std::string> event = std::make_shared<const std::string>("event\n");
    std::mutex mu;
    std::condition_variable cv;
    int stops = 0;
  };
  auto stream = std::make_shared<Stream>();
  auto tls = StartTlsServer([&](HttpRequest&) {
    HttpResponse response;
    response.stream = stream;
    return response;
  });
  ASSERT_NE(tls, nullptr);
  ClientTls client_tls{tls->tls.ca_certificate_pem, "127.0.0.1", "", {}};
  auto client = TestClient::Connect(tls->server->port(), &client_tls);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  ASSERT_TRUE((*client)->SendRequest("GET", "/watch").ok());
  auto header = (*client)->ReadResponseHeader();
  ASSERT_TRUE(header.ok()) << header.status().ToString();
  EXPECT_EQ(header->Header("transfer-encoding"), "chunked");
  auto body = (*client)->ReadBodyAtLeast(6);
  ASSERT_TRUE(body.ok()) << body.status().ToString();
  EXPECT_EQ(body->body, "event\n");
  client->reset();
  {
    std::unique_lock<std::mutex> lock(stream->mu);
    EXPECT_TRUE(
        stream->cv.wait_for(lock, std::chrono::seconds(20), [&] { return stream->stops > 0; }));
  }
  tls->server->Stop();
  std::lock_guard<std::mutex> lock(stream->mu);
  EXPECT_EQ(stream->stops, 1);
}

}  // namespace
}  // namespace slicewright::apiserver

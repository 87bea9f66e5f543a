#include "slicewright/client/transport.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "slicewright/base/thread_name.h"

#include "apiserver/http/server.h"
#include "apiserver/http/tls.h"
#include "client/client_test_util.h"

// The transport against the embedded API server's HTTP layer on loopback: plain and TLS,
// keep-alive, auth headers, deadlines, streams and cancellation, stale pooled connections, exec 401
// refresh.
namespace slicewright::client {
namespace {

using apiserver::HttpRequest;
using apiserver::HttpResponse;
using apiserver::HttpServer;
using apiserver::HttpServerOptions;
using testing::TempDir;

std::unique_ptr<HttpServer> Serve(HttpServerOptions options, apiserver::HttpHandler handler) {
  auto server = HttpServer::Create(std::move(options), std::move(handler));
  EXPECT_TRUE(server.ok()) << server.status().ToString();
  if (!server.ok()) return nullptr;
  (*server)->Start();
  return std::move(server).value();
}

RestConfig PlainConfig(std::uint16_t port) {
  RestConfig config;
  config.server.scheme = "http";
  config.server.host = "127.0.0.1";
  config.server.port = port;
  return config;
}

std::unique_ptr<Transport> MakeTransport(RestConfig config, TransportOptions options = {}) {
  auto transport = Transport::Create(std::move(config), std::move(options));
  EXPECT_TRUE(transport.ok()) << transport.status().ToString();
  return transport.ok() ? std::move(transport).value() : nullptr;
}

Request Get(std::string target, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  Request request;
  request.target = std::move(target);
  request.timeout = timeout;
  return request;
}

// Records the requests a handler saw.
struct Seen {
  std::mutex mu;
  std::vector<HttpRequest> requests;
  void Add(const HttpRequest& request) {
    std::lock_guard lock(mu);
    requests.push_back(request);
  }
  HttpRequest Last() {
    std::lock_guard lock(mu);
    return requests.empty() ? HttpRequest{} : requests.back();
  }
};

HttpResponse Json(int status, std::string body) {
  HttpResponse response;
  response.status = status;
  response.body = std::move(body);
  return response;
}

TEST(TransportTest, SendsHeadersAndReusesOneConnection) {
  Seen seen;
  auto server = Serve({}, [&](HttpRequest& request) {
    seen.Add(request);
    return Json(200, R"({"kind":"PodList","path":")" + request.path + "\"}");
  });
  ASSERT_NE(server, nullptr);
  RestConfig config = PlainConfig(server->port());
  config.token_source = std::make_shared<StaticTokenSource>("secret-token");
  TransportOptions options;
  options.user_agent = "slicewright-test/1";
  auto transport = MakeTransport(std::move(config), options);
  ASSERT_NE(transport, nullptr);
  for (int i = 0; i < 3; ++i) {
    Result<Response> response = transport->Do(Get("/api/v1/pods?limit=5"));
    ASSERT_TRUE(response.ok()) << response.status().ToString();
    EXPECT_EQ(response->status, 200);
    EXPECT_EQ(response->body, R"({"kind":"PodList","path":"/api/v1/pods"})");
    EXPECT_EQ(response->content_type, "application/json");
  }
  EXPECT_EQ(transport->connections_opened(), 1U);
  const HttpRequest last = seen.Last();
  EXPECT_EQ(last.Header("authorization"), "Bearer secret-token");
  EXPECT_EQ(last.Header("user-agent"), "slicewright-test/1");
  EXPECT_EQ(last.Header("accept"), "application/json");
  EXPECT_EQ(last.Header("host"), "127.0.0.1:" + std::to_string(server->port()));
  EXPECT_EQ(last.Query("limit"), "5");
}

// Threads of this process called `name` (/proc/self/task/*/comm).
int ThreadsNamed(std::string_view name) {
  int count = 0;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream in(task.path() / "comm");
    std::string comm;
    if (std::getline(in, comm) && comm == name) ++count;
  }
  return count;
}

// A pooled connection to an IP literal keeps no thread: Asio's lookups run on a thread of the
// connection's io_context that would live, unnamed (named after the thread that opened it), as
// long as the connection. A name is still looked up.
TEST(TransportTest, IpLiteralServerStartsNoLookupThread) {
  auto server = Serve({}, [](HttpRequest&) { return Json(200, "{}"); });
  ASSERT_NE(server, nullptr);
  auto literal = MakeTransport(PlainConfig(server->port()));
  RestConfig named_config = PlainConfig(server->port());
  named_config.server.host = "localhost";
  auto named = MakeTransport(std::move(named_config));
  ASSERT_NE(literal, nullptr);
  ASSERT_NE(named, nullptr);
  int after_literal = 0;
  std::thread([&] {
    SetCurrentThreadName("tx-literal");
    Result<Response> response = literal->Do(Get("/healthz"));
    ASSERT_TRUE(response.ok()) << response.status().ToString();
    after_literal = ThreadsNamed("tx-literal");
  }).join();
  EXPECT_EQ(literal->connections_opened(), 1U);
  EXPECT_EQ(after_literal, 1);  // this thread alone
  Result<Response> response = named->Do(Get("/healthz"));
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->status, 200);
}

TEST(TransportTest, PostsBodyWithBasicAuthAndReadsErrorStatus) {
  Seen seen;
  auto server = Serve({}, [&](HttpRequest& request) {
    seen.Add(request);
    HttpResponse response = Json(429, R"({"kind":"Status","code":429})");
    response.headers.emplace_back("Retry-After", "7");
    return response;
  });
  ASSERT_NE(server, nullptr);
  RestConfig config = PlainConfig(server->port());
  config.basic_auth = BasicAuth{"admin", "s3cret"};
  auto transport = MakeTransport(std::move(config));
  ASSERT_NE(transport, nullptr);
  Request request = Get("/api/v1/namespaces/default/services");
  request.method = "POST";
  request.body = R"({"kind":"Service"})";
  request.content_type = "application/json";
  Result<Response> response = transport->Do(request);
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->status, 429);
  EXPECT_EQ(response->retry_after, std::chrono::seconds(7));
  const HttpRequest last = seen.Last();
  EXPECT_EQ(last.method, "POST");
  EXPECT_EQ(last.body, R"({"kind":"Service"})");
  EXPECT_EQ(last.Header("content-type"), "application/json");
  EXPECT_EQ(last.Header("authorization"), "Basic YWRtaW46czNjcmV0");  // admin:s3cret
}

TEST(TransportTest, ConnectionRefusedIsUnavailableNamingTheRequest) {
  std::uint16_t port = 0;
  {
    auto server = Serve({}, [](HttpRequest&) { return Json(200, "{}"); });
    ASSERT_NE(server, nullptr);
    port = server->port();
  }  // closed: nothing listens on the port now
  auto transport = MakeTransport(PlainConfig(port));
  ASSERT_NE(transport, nullptr);
  Result<Response> response = transport->Do(Get("/api"));
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(response.status().message(),
            "GET http://127.0.0.1:" + std::to_string(port) + "/api: connect: Connection refused");
}

TEST(TransportTest, DeadlineEndsASlowExchange) {
  std::atomic<bool> release{false};
  auto server = Serve({}, [&](HttpRequest&) {
    for (int i = 0; i < 200 && !release; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return Json(200, "{}");
  });
  ASSERT_NE(server, nullptr);
  auto transport = MakeTransport(PlainConfig(server->port()));
  ASSERT_NE(transport, nullptr);
  const auto start = std::chrono::steady_clock::now();
  Result<Response> response = transport->Do(Get("/slow", std::chrono::milliseconds(200)));
  const auto took = std::chrono::steady_clock::now() - start;
  release = true;
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.status().code(), StatusCode::kTimeout);
  EXPECT_EQ(response.status().message(),
            "GET http://127.0.0.1:" + std::to_string(server->port()) + "/slow: timed out (read)");
  EXPECT_LT(took, std::chrono::seconds(2));
  // The transport still works: the timed-out connection was dropped, not pooled.
  EXPECT_TRUE(transport->Do(Get("/fast")).ok());
}

// A server that closed an idle keep-alive connection: the next request opens a new one without
// the caller noticing.
TEST(TransportTest, ReplacesAPooledConnectionTheServerClosed) {
  HttpServerOptions options;
  options.idle_timeout_seconds = 1;
  auto server = Serve(options, [](HttpRequest&) { return Json(200, "{}"); });
  ASSERT_NE(server, nullptr);
  auto transport = MakeTransport(PlainConfig(server->port()));
  ASSERT_NE(transport, nullptr);
  ASSERT_TRUE(transport->Do(Get("/a")).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(1600));
  Result<Response> again = transport->Do(Get("/b"));
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->status, 200);
  EXPECT_EQ(transport->connections_opened(), 2U);
}

// A HEAD answer carries the GET's Content-Length but no body: the transport must not wait for
// one (it used to, until the deadline), and the connection stays usable.
TEST(TransportTest, HeadReadsNoBody) {
  auto server = Serve({}, [](HttpRequest&) { return Json(200, R"({"kind":"APIVersions"})"); });
  ASSERT_NE(server, nullptr);
  auto transport = MakeTransport(PlainConfig(server->port()));
  ASSERT_NE(transport, nullptr);
  Request head = Get("/api", std::chrono::seconds(5));
  head.method = "HEAD";
  const auto start = std::chrono::steady_clock::now();
  Result<Response> response = transport->Do(head);
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, "");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  Result<Response> get = transport->Do(Get("/api"));
  ASSERT_TRUE(get.ok()) << get.status().ToString();
  EXPECT_EQ(get->body, R"({"kind":"APIVersions"})");
  EXPECT_EQ(transport->connections_opened(), 1U);
}

// A POST is never repeated after its bytes were sent, so a pooled connection the server has
// closed while idle must be noticed before the POST is written on it.
TEST(TransportTest, PostDoesNotUseAPooledConnectionTheServerClosed) {
  HttpServerOptions options;
  options.idle_timeout_seconds = 1;
  auto server = Serve(options, [](HttpRequest&) { return Json(201, "{}"); });
  ASSERT_NE(server, nullptr);
  auto transport = MakeTransport(PlainConfig(server->port()));
  ASSERT_NE(transport, nullptr);
  ASSERT_TRUE(transport->Do(Get("/a")).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(1600));
  Request post = Get("/api/v1/namespaces/default/services");
  post.method = "POST";
  post.body = "{}";
  post.content_type = "application/json";
  Result<Response> created = transport->Do(post);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ(created->status, 201);
  EXPECT_EQ(transport->connections_opened(), 2U);
}

// A watch-like stream: chunks reach the consumer as they are written; Cancel() from another
// thread ends it promptly with kCancelled.
class PushStream final : public apiserver::ResponseStream {
 public:
  void Start(std::shared_ptr<apiserver::StreamSink> started) override {
    std::lock_guard lock(mu);
    sink = std::move(started);
    cv.notify_all();
  }
  void Stop() override {
    std::lock_guard lock(mu);
    stopped = true;
    cv.notify_all();
  }
  std::shared_ptr<apiserver::StreamSink> WaitSink() {
    std::unique_lock lock(mu);
    cv.wait_for(lock, std::chrono::seconds(10), [&] { return sink != nullptr; });
    return sink;
  }
  std::mutex mu;
  std::condition_variable cv;
  std::shared_ptr<apiserver::StreamSink> sink;
  bool stopped = false;
};

TEST(TransportTest, StreamsChunksUntilCancelled) {
  auto stream = std::make_shared<PushStream>();
  auto server = Serve({}, [&](HttpRequest& request) {
    if (request.path == "/gone") return Json(410, R"({"kind":"Status","reason":"Expired"})");
    HttpResponse response;
    response.content_type = "application/json;stream=watch";
    response.stream = stream;
    return response;
  });
  ASSERT_NE(server, nullptr);
  auto transport = MakeTransport(PlainConfig(server->port()));
  ASSERT_NE(transport, nullptr);

  StreamCanceller canceller;
  std::mutex mu;
  std::condition_variable cv;
  std::string received;
  std::thread writer([&] {
    std::shared_ptr<apiserver::StreamSink> sink = stream->WaitSink();
    ASSERT_NE(sink, nullptr);
    sink->Write(std::make_shared<const std::string>("{\"type\":\"ADDED\"}\n"));
    sink->Write(std::make_shared<const std::string>("{\"type\":\"MODIFIED\"}\n"));
  });
  std::thread cancel([&] {
    std::unique_lock lock(mu);
    cv.wait_for(lock, std::chrono::seconds(10), [&] { return received.size() >= 36; });
    lock.unlock();
    canceller.Cancel();
  });
  Request request = Get("/watch", std::chrono::milliseconds(0));
  const auto start = std::chrono::steady_clock::now();
  Result<Response> result = transport->Stream(
      request,
      [&](std::string_view data) {
        std::lock_guard lock(mu);
        received.append(data);
        cv.notify_all();
        return true;
      },
      &canceller);
  writer.join();
  cancel.join();
  EXPECT_EQ(received, "{\"type\":\"ADDED\"}\n{\"type\":\"MODIFIED\"}\n");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kCancelled);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));

  // A cancelled canceller refuses at once; a non-2xx answer comes back whole, unstreamed.
  EXPECT_EQ(transport
                ->Stream(
                    request, [](std::string_view) { return true; }, &canceller)
                .status()
                .code(),
            StatusCode::kCancelled);
  bool called = false;
  Result<Response> gone = transport->Stream(
      Get("/gone"), [&](std::string_view) { return called = true; }, nullptr);
  ASSERT_TRUE(gone.ok()) << gone.status().ToString();
  EXPECT_EQ(gone->status, 410);
  EXPECT_EQ(gone->body, R"({"kind":"Status","reason":"Expired"})");
  EXPECT_FALSE(called);
}

class TlsTransportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<apiserver::GeneratedTls> generated =
        apiserver::EnsureCertificates(dir.Path("pki"), {"127.0.0.1", "localhost"});
    ASSERT_TRUE(generated.ok()) << generated.status().ToString();
    tls = *generated;
    HttpServerOptions options;
    options.tls = tls.server;
    server = Serve(options, [](HttpRequest&) { return Json(200, R"({"secure":true})"); });
    ASSERT_NE(server, nullptr);
  }

  RestConfig Config() const {
    RestConfig config = PlainConfig(server->port());
    config.server.scheme = "https";
    config.tls.ca_pem = tls.ca_certificate_pem;
    config.tls.ca_source = "test CA";
    return config;
  }

  TempDir dir;
  apiserver::GeneratedTls tls;
  std::unique_ptr<HttpServer> server;
};

TEST_F(TlsTransportTest, VerifiesTheServerWithTheCa) {
  auto transport = MakeTransport(Config());
  ASSERT_NE(transport, nullptr);
  Result<Response> response = transport->Do(Get("/api"));
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->body, R"({"secure":true})");
  // The kept-alive TLS connection is reused: nothing (no stray session ticket) waits on it.
  ASSERT_TRUE(transport->Do(Get("/api")).ok());
  EXPECT_EQ(transport->connections_opened(), 1U);
  // tls-server-name: the certificate also names localhost.
  RestConfig by_name = Config();
  by_name.tls.server_name = "localhost";
  auto named = MakeTransport(std::move(by_name));
  ASSERT_NE(named, nullptr);
  EXPECT_TRUE(named->Do(Get("/api")).ok());
}

TEST_F(TlsTransportTest, RefusesAnUntrustedOrMisnamedServer) {
  TempDir other;
  Result<apiserver::GeneratedTls> other_ca =
      apiserver::EnsureCertificates(other.Path("pki"), {"127.0.0.1"});
  ASSERT_TRUE(other_ca.ok());
  RestConfig untrusted = Config();
  untrusted.tls.ca_pem = other_ca->ca_certificate_pem;
  auto transport = MakeTransport(std::move(untrusted));
  ASSERT_NE(transport, nullptr);
  Result<Response> response = transport->Do(Get("/api"));
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(response.status().message().find(": TLS handshake: "), std::string_view::npos)
      << response.status().ToString();

  RestConfig misnamed = Config();
  misnamed.tls.server_name = "kubernetes.example.com";
  auto wrong_name = MakeTransport(std::move(misnamed));
  ASSERT_NE(wrong_name, nullptr);
  EXPECT_EQ(wrong_name->Do(Get("/api")).status().code(), StatusCode::kUnavailable);

  // insecure-skip-tls-verify: no CA, no check.
  RestConfig insecure = Config();
  insecure.tls.ca_pem.clear();
  insecure.tls.insecure_skip_verify = true;
  auto skipping = MakeTransport(std::move(insecure));
  ASSERT_NE(skipping, nullptr);
  EXPECT_TRUE(skipping->Do(Get("/api")).ok());
}

TEST_F(TlsTransportTest, BadTlsMaterialIsInvalidWithoutQuotingTheKey) {
  RestConfig bad_ca = Config();
  bad_ca.tls.ca_pem = "not a certificate";
  EXPECT_EQ(Transport::Create(std::move(bad_ca), {}).status().code(), StatusCode::kInvalid);
  RestConfig bad_key = Config();
  bad_key.tls.client_certificate_pem = tls.server.certificate_chain_pem;
  bad_key.tls.client_certificate_source = "inline";
  bad_key.tls.client_key_pem = "-----BEGIN PRIVATE KEY-----\nc2VjcmV0LWtleS1ieXRlcw==\n";
  bad_key.tls.client_key_source = "inline";
  Result<std::unique_ptr<Transport>> created = Transport::Create(std::move(bad_key), {});
  ASSERT_EQ(created.status().code(), StatusCode::kInvalid);
  EXPECT_EQ(created.status().message().find("c2VjcmV0"), std::string_view::npos);
  EXPECT_TRUE(created.status().message().starts_with("client key (inline)"))
      << created.status().ToString();
}

// An exec credential the server rejects (401) is dropped and the plugin runs again; the request
// is retried once with the new token.
TEST(TransportTest, ExecCredentialIsRefreshedAfter401) {
  TempDir dir;
  const std::string plugin = dir.WriteScript(
      "plugin",
      "d=$(dirname \"$0\")\n"
      "n=$(cat \"$d/count\" 2>/dev/null || echo 0); n=$((n+1)); echo $n > \"$d/count\"\n"
      "cat <<EOF\n"
      R"({"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1",)"
      R"("status":{"token":"tok-$n"}})"
      "\nEOF\n");
  auto server = Serve({}, [](HttpRequest& request) {
    if (request.Header("authorization") != "Bearer tok-2") {
      return Json(401, R"({"kind":"Status","code":401})");
    }
    return Json(200, "{}");
  });
  ASSERT_NE(server, nullptr);
  ExecConfig exec;
  exec.command = plugin;
  exec.api_version = "client.authentication.k8s.io/v1";
  exec.interactive_mode = ExecInteractiveMode::kNever;
  ExecProviderOptions exec_options;
  exec_options.base_env = std::vector<std::string>{"PATH=/usr/bin:/bin"};
  RestConfig config = PlainConfig(server->port());
  config.exec = std::make_shared<ExecCredentialProvider>(exec, ExecClusterInfo{}, exec_options);
  auto transport = MakeTransport(std::move(config));
  ASSERT_NE(transport, nullptr);
  Result<Response> response = transport->Do(Get("/api"));
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->status, 200);
  // A second 401 is returned, not retried forever: tok-2 is cached and accepted here.
  EXPECT_EQ(transport->Do(Get("/api"))->status, 200);
}

}  // namespace
}  // namespace slicewright::client

#include "apiserver/http/server.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "apiserver/http/test_client.h"

namespace slicewright::apiserver {
namespace {

using testing::ClientResponse;
using testing::Fetch;
using testing::Headers;
using testing::TestClient;

constexpr auto kDeadline = std::chrono::seconds(20);

// Waits until `done()` holds (checked under `mu`, woken by `cv`) or the deadline passes.
template <class Predicate>
bool WaitFor(std::mutex& mu, std::condition_variable& cv, Predicate done,
             std::chrono::steady_clock::duration timeout = kDeadline) {
  std::unique_lock<std::mutex> lock(mu);
  return cv.wait_for(lock, timeout, done);
}

std::unique_ptr<HttpServer> StartServer(HttpServerOptions options, HttpHandler handler) {
  auto server = HttpServer::Create(std::move(options), std::move(handler));
  EXPECT_TRUE(server.ok()) << server.status().ToString();
  if (!server.ok()) return nullptr;
  (*server)->Start();
  return std::move(server).value();
}

HttpResponse Text(std::string body) {
  HttpResponse response;
  response.content_type = "text/plain";
  response.body = std::move(body);
  return response;
}

// A ResponseStream that hands its sink to the test and counts Start and Stop calls.
class RecordingStream final : public ResponseStream {
 public:
  void Start(std::shared_ptr<StreamSink> sink) override {
    std::lock_guard<std::mutex> lock(mu_);
    sink_ = std::move(sink);
    ++starts_;
    cv_.notify_all();
  }
  void Stop() override {
    std::lock_guard<std::mutex> lock(mu_);
    ++stops_;
    cv_.notify_all();
  }

  std::shared_ptr<StreamSink> WaitStarted() {
    if (!WaitFor(mu_, cv_, [&] { return starts_ > 0; })) return nullptr;
    std::lock_guard<std::mutex> lock(mu_);
    return sink_;
  }
  bool WaitStopped() {
    return WaitFor(mu_, cv_, [&] { return stops_ > 0; });
  }
  int stops() {
    std::lock_guard<std::mutex> lock(mu_);
    return stops_;
  }
  int starts() {
    std::lock_guard<std::mutex> lock(mu_);
    return starts_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::shared_ptr<StreamSink> sink_;
  int starts_ = 0;
  int stops_ = 0;
};

// Serves "/watch" as a stream (one RecordingStream per request, kept in `streams`) and anything
// else as a plain "ok".
struct StreamingFixture {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::shared_ptr<RecordingStream>> streams;

  HttpHandler Handler() {
    return [this](HttpRequest& request) {
      if (request.path != "/watch") return Text("ok");
      auto stream = std::make_shared<RecordingStream>();
      {
        std::lock_guard<std::mutex> lock(mu);
        streams.push_back(stream);
        cv.notify_all();
      }
      HttpResponse response;
      response.content_type = "application/json;stream=watch";
      response.stream = stream;
      return response;
    };
  }
  std::shared_ptr<RecordingStream> WaitStream(std::size_t index) {
    if (!WaitFor(mu, cv, [&] { return streams.size() > index; })) return nullptr;
    std::lock_guard<std::mutex> lock(mu);
    return streams[index];
  }

  // A watch as a client opens one: connected, GET /watch sent, the response header read (unless
  // `read_header` is false: a reader that never reads), and the handler's stream `index` started.
  struct Watch {
    std::unique_ptr<TestClient> client;
    ClientResponse header;
    std::shared_ptr<RecordingStream> stream;
    std::shared_ptr<StreamSink> sink;  // null when any step failed (a failure is recorded)
  };
  Watch OpenWatch(std::uint16_t port, std::size_t index, bool read_header = true) {
    Watch watch;
    auto client = TestClient::Connect(port);
    if (!client.ok()) {
      ADD_FAILURE() << "connect: " << client.status().ToString();
      return watch;
    }
    watch.client = std::move(client).value();
    if (Status sent = watch.client->SendRequest("GET", "/watch"); !sent.ok()) {
      ADD_FAILURE() << "send: " << sent.ToString();
      return watch;
    }
    if (read_header) {
      auto header = watch.client->ReadResponseHeader();
      if (!header.ok()) {
        ADD_FAILURE() << "response header: " << header.status().ToString();
        return watch;
      }
      watch.header = std::move(header).value();
    }
    watch.stream = WaitStream(index);
    if (watch.stream == nullptr) {
      ADD_FAILURE() << "stream " << index << " never reached the handler";
      return watch;
    }
    watch.sink = watch.stream->WaitStarted();
    if (watch.sink == nullptr) ADD_FAILURE() << "stream " << index << " never started";
    return watch;
  }
};

std::shared_ptr<const std::string> Chunk(std::string text) {
  return std::make_shared<const std::string>(std::move(text));
}

// A request's method, path, query, headers, body and remote address reach the handler decoded,
// and the handler's status, headers and body reach the client with Content-Length.
TEST(HttpServerTest, RoundTripDecodesPathQueryAndHeaders) {
  std::mutex mu;
  HttpRequest seen;
  auto server = StartServer({}, [&](HttpRequest& request) {
    std::lock_guard<std::mutex> lock(mu);
    seen = request;
    HttpResponse response = Text("created:" + request.body);
    response.status = 201;
    response.headers.emplace_back("X-Test", "yes");
    return response;
  });
  ASSERT_NE(server, nullptr);
  auto response = Fetch(server->port(), "POST",
                        "/api/v1/namespaces/a%20b/pods?labelSelector=app%3Dweb%2Ctier&x=1+2&x=3"
                        "&flag&empty=&sp=%2B",
                        {{"X-Custom", "Value"}, {"x-multi", "1"}, {"X-Multi", "2"}}, "{\"a\":1}");
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->status, 201);
  EXPECT_EQ(response->body, "created:{\"a\":1}");
  EXPECT_EQ(response->Header("content-type"), "text/plain");
  EXPECT_EQ(response->Header("content-length"), "15");
  EXPECT_EQ(response->Header("x-test"), "yes");
  EXPECT_EQ(response->Header("cache-control"), "no-cache, private");

  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(seen.method, "POST");
  EXPECT_EQ(seen.path, "/api/v1/namespaces/a b/pods");
  using Query = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(seen.query, (Query{{"labelSelector", "app=web,tier"},
                               {"x", "1 2"},
                               {"x", "3"},
                               {"flag", ""},
                               {"empty", ""},
                               {"sp", "+"}}));
  EXPECT_EQ(seen.Query("x"), "1 2");
  EXPECT_EQ(seen.Query("missing"), "");
  EXPECT_TRUE(seen.HasQuery("flag"));
  EXPECT_FALSE(seen.HasQuery("missing"));
  EXPECT_EQ(seen.Header("X-CUSTOM"), "Value");
  EXPECT_EQ(seen.Header("host"), "127.0.0.1");
  int multi = 0;
  for (const auto& header : seen.headers) {
    // Not a structured binding: clang 14 cannot capture one in the lambda.
    const std::string& name = header.first;
    EXPECT_EQ(name, [&] {
      std::string lower = name;
      std::transform(lower.begin(), lower.end(), lower.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      return lower;
    }());
    if (name == "x-multi") ++multi;
  }
  EXPECT_EQ(multi, 2);
  EXPECT_EQ(seen.body, "{\"a\":1}");
  EXPECT_EQ(seen.remote_address.rfind("127.0.0.1:", 0), 0u) << seen.remote_address;
}

// Keep-alive: several requests on one connection, all from the same client port.
TEST(HttpServerTest, ServesSeveralRequestsOnOneConnection) {
  std::mutex mu;
  std::vector<std::string> remotes;
  auto server = StartServer({}, [&](HttpRequest& request) {
    std::lock_guard<std::mutex> lock(mu);
    remotes.push_back(request.remote_address);
    return Text(request.path);
  });
  ASSERT_NE(server, nullptr);
  auto client = TestClient::Connect(server->port());
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  for (const std::string path : {"/one", "/two", "/three"}) {
    ASSERT_TRUE((*client)->SendRequest("GET", path).ok());
    auto response = (*client)->ReadResponse();
    ASSERT_TRUE(response.ok()) << response.status().ToString();
    EXPECT_EQ(response->status, 200);
    EXPECT_EQ(response->body, path);
  }
  // Connection: close is honoured after the response.
  ASSERT_TRUE((*client)->SendRequest("GET", "/last", {{"Connection", "close"}}).ok());
  auto last = (*client)->ReadResponse();
  ASSERT_TRUE(last.ok()) << last.status().ToString();
  EXPECT_EQ(last->Header("connection"), "close");
  EXPECT_TRUE((*client)->WaitForClose().ok());

  std::lock_guard<std::mutex> lock(mu);
  ASSERT_EQ(remotes.size(), 4u);
  EXPECT_TRUE(std::all_of(remotes.begin(), remotes.end(),
                          [&](const std::string& r) { return r == remotes[0]; }));
}

// HEAD is answered like GET: same headers and Content-Length, no body.
TEST(HttpServerTest, HeadAnswersLikeGetWithoutBody) {
  std::atomic<int> gets{0};
  auto server = StartServer({}, [&](HttpRequest& request) {
    if (request.method == "GET") ++gets;
    return Text("twelve bytes");
  });
  ASSERT_NE(server, nullptr);
  auto client = TestClient::Connect(server->port());
  ASSERT_TRUE(client.ok());
  ASSERT_TRUE((*client)->SendRequest("HEAD", "/x").ok());
  auto head = (*client)->ReadResponse(/*head=*/true);
  ASSERT_TRUE(head.ok()) << head.status().ToString();
  EXPECT_EQ(head->status, 200);
  EXPECT_EQ(head->Header("content-length"), "12");
  EXPECT_EQ(head->body, "");
  // The connection is still in sync: the next response is read whole.
  ASSERT_TRUE((*client)->SendRequest("GET", "/x").ok());
  auto get = (*client)->ReadResponse();
  ASSERT_TRUE(get.ok());
  EXPECT_EQ(get->body, "twelve bytes");
  EXPECT_EQ(gets.load(), 2);
}

// With a bearer token configured, a missing or wrong token gets the 401 Status and never reaches
// the handler; the right one passes.
TEST(HttpServerTest, RejectsMissingOrWrongBearerToken) {
  std::atomic<int> calls{0};
  HttpServerOptions options;
  options.bearer_token = "s3cret-token";
  auto server = StartServer(options, [&](HttpRequest&) {
    ++calls;
    return Text("ok");
  });
  ASSERT_NE(server, nullptr);
  const std::string unauthorized =
      R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
      R"("message":"Unauthorized","reason":"Unauthorized","code":401})";
  struct Case {
    std::string name;
    Headers headers;
  };
  for (const Case& c : std::vector<Case>{
           {"missing", {}},
           {"wrong", {{"Authorization", "Bearer s3cret-tokeX"}}},
           {"prefix", {{"Authorization", "Bearer s3cret"}}},
           {"longer", {{"Authorization", "Bearer s3cret-token2"}}},
           {"basic", {{"Authorization", "Basic s3cret-token"}}},
           {"empty", {{"Authorization", "Bearer "}}},
       }) {
    SCOPED_TRACE(c.name);
    auto response = Fetch(server->port(), "GET", "/api", c.headers);
    ASSERT_TRUE(response.ok()) << response.status().ToString();
    EXPECT_EQ(response->status, 401);
    EXPECT_EQ(response->body, unauthorized);
    EXPECT_EQ(response->Header("content-type"), "application/json");
  }
  EXPECT_EQ(calls.load(), 0);
  auto ok = Fetch(server->port(), "GET", "/api", {{"Authorization", "Bearer s3cret-token"}});
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->status, 200);
  auto lower = Fetch(server->port(), "GET", "/api", {{"authorization", "bearer s3cret-token"}});
  ASSERT_TRUE(lower.ok());
  EXPECT_EQ(lower->status, 200);
  EXPECT_EQ(calls.load(), 2);
}

// A body over the limit gets 413 with kube-apiserver's message (the configured limit), and the
// server goes on serving new connections.
TEST(HttpServerTest, RejectsBodyOverLimitAndKeepsServing) {
  std::atomic<int> calls{0};
  auto server = StartServer({}, [&](HttpRequest& request) {
    ++calls;
    return Text(std::to_string(request.body.size()));
  });
  ASSERT_NE(server, nullptr);
  const std::string big(std::size_t{3} * 1024 * 1024 + 1, 'x');
  auto response =
      Fetch(server->port(), "PUT", "/api/v1/namespaces/default/configmaps/big", {}, big);
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->status, 413);
  EXPECT_EQ(response->body,
            R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
            R"("message":"Request entity too large: limit is 3145728",)"
            R"("reason":"RequestEntityTooLarge","code":413})");
  EXPECT_EQ(calls.load(), 0);

  // Exactly at the limit is fine.
  auto at_limit =
      Fetch(server->port(), "PUT", "/x", {}, std::string(std::size_t{3} * 1024 * 1024, 'y'));
  ASSERT_TRUE(at_limit.ok()) << at_limit.status().ToString();
  EXPECT_EQ(at_limit->status, 200);
  EXPECT_EQ(at_limit->body, "3145728");

  // A chunked body over a small limit is caught while it streams in.
  HttpServerOptions small;
  small.max_body_bytes = 10;
  auto small_server = StartServer(small, [](HttpRequest&) { return Text("ok"); });
  ASSERT_NE(small_server, nullptr);
  auto client = TestClient::Connect(small_server->port());
  ASSERT_TRUE(client.ok());
  ASSERT_TRUE((*client)
                  ->Send("POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
                         "8\r\n12345678\r\n8\r\n12345678\r\n0\r\n\r\n")
                  .ok());
  auto chunked = (*client)->ReadResponse();
  ASSERT_TRUE(chunked.ok()) << chunked.status().ToString();
  EXPECT_EQ(chunked->status, 413);
  EXPECT_NE(chunked->body.find("\"message\":\"Request entity too large: limit is 10\""),
            std::string::npos)
      << chunked->body;
}

// Unparseable requests get a 400 Status and the connection is closed; the server lives on.
TEST(HttpServerTest, AnswersMalformedRequestWith400) {
  auto server = StartServer({}, [](HttpRequest&) { return Text("ok"); });
  ASSERT_NE(server, nullptr);
  for (const std::string raw :
       {"GARBAGE\r\n\r\n", "GET / HTTP/9.9\r\n\r\n", "GET / HTTP/1.1\r\nBad Header\r\n\r\n",
        "POST / HTTP/1.1\r\nContent-Length: nope\r\n\r\n"}) {
    SCOPED_TRACE(raw);
    auto client = TestClient::Connect(server->port());
    ASSERT_TRUE(client.ok());
    ASSERT_TRUE((*client)->Send(raw).ok());
    auto response = (*client)->ReadResponse();
    ASSERT_TRUE(response.ok()) << response.status().ToString();
    EXPECT_EQ(response->status, 400);
    EXPECT_NE(response->body.find(R"("reason":"BadRequest","code":400})"), std::string::npos)
        << response->body;
    EXPECT_TRUE((*client)->WaitForClose().ok());
  }
  // A bad percent escape is a 400 too, but the connection stays usable.
  auto client = TestClient::Connect(server->port());
  ASSERT_TRUE(client.ok());
  ASSERT_TRUE((*client)->SendRequest("GET", "/api?x=%zz").ok());
  auto bad_escape = (*client)->ReadResponse();
  ASSERT_TRUE(bad_escape.ok());
  EXPECT_EQ(bad_escape->status, 400);
  EXPECT_NE(bad_escape->body.find("invalid URL escape"), std::string::npos) << bad_escape->body;
  ASSERT_TRUE((*client)->SendRequest("GET", "/api").ok());
  auto next = (*client)->ReadResponse();
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(next->status, 200);
}

// "Expect: 100-continue" gets an interim 100 before the client sends its body.
TEST(HttpServerTest, AnswersExpectContinue) {
  auto server = StartServer({}, [](HttpRequest& request) { return Text("got " + request.body); });
  ASSERT_NE(server, nullptr);
  auto client = TestClient::Connect(server->port());
  ASSERT_TRUE(client.ok());
  ASSERT_TRUE((*client)
                  ->Send("PUT /x HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n"
                         "Expect: 100-continue\r\n\r\n")
                  .ok());
  auto interim = (*client)->ReadResponse();
  ASSERT_TRUE(interim.ok()) << interim.status().ToString();
  EXPECT_EQ(interim->status, 100);
  ASSERT_TRUE((*client)->Send("hello").ok());
  auto response = (*client)->ReadResponse();
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, "got hello");
}

// A header section over the limit gets 431.
TEST(HttpServerTest, AnswersHugeHeaderWith431) {
  HttpServerOptions options;
  options.max_header_bytes = 1024;
  auto server = StartServer(options, [](HttpRequest&) { return Text("ok"); });
  ASSERT_NE(server, nullptr);
  auto response = Fetch(server->port(), "GET", "/", {{"X-Big", std::string(4096, 'a')}});
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->status, 431);
  EXPECT_NE(response->body.find("Request header fields too large: limit is 1024"),
            std::string::npos)
      << response->body;
  auto fine = Fetch(server->port(), "GET", "/", {{"X-Small", "a"}});
  ASSERT_TRUE(fine.ok());
  EXPECT_EQ(fine->status, 200);
}

// A throwing handler gives a 500 Status; the connection and the server keep serving.
TEST(HttpServerTest, HandlerExceptionGives500AndServerLives) {
  auto server = StartServer({}, [](HttpRequest& request) -> HttpResponse {
    if (request.path == "/throw") throw std::runtime_error("boom");
    if (request.path == "/throw-int") throw 42;
    return Text("alive");
  });
  ASSERT_NE(server, nullptr);
  auto client = TestClient::Connect(server->port());
  ASSERT_TRUE(client.ok());
  ASSERT_TRUE((*client)->SendRequest("GET", "/throw").ok());
  auto thrown = (*client)->ReadResponse();
  ASSERT_TRUE(thrown.ok());
  EXPECT_EQ(thrown->status, 500);
  EXPECT_EQ(thrown->body,
            R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
            R"("message":"Internal error occurred: boom","reason":"InternalError","code":500})");
  ASSERT_TRUE((*client)->SendRequest("GET", "/throw-int").ok());
  auto thrown_int = (*client)->ReadResponse();
  ASSERT_TRUE(thrown_int.ok());
  EXPECT_EQ(thrown_int->status, 500);
  ASSERT_TRUE((*client)->SendRequest("GET", "/fine").ok());
  auto fine = (*client)->ReadResponse();
  ASSERT_TRUE(fine.ok());
  EXPECT_EQ(fine->body, "alive");
  auto other = Fetch(server->port(), "GET", "/fine");
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other->body, "alive");
}

// An idle connection is closed after idle_timeout_seconds.
TEST(HttpServerTest, ClosesIdleConnection) {
  HttpServerOptions options;
  options.idle_timeout_seconds = 1;
  auto server = StartServer(options, [](HttpRequest&) { return Text("ok"); });
  ASSERT_NE(server, nullptr);
  auto client = TestClient::Connect(server->port());
  ASSERT_TRUE(client.ok());
  auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE((*client)->WaitForClose().ok());
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(900));
}

// Create reports a bad address as kInvalid and a busy port as kUnavailable naming the address.
TEST(HttpServerTest, CreateFailsForBadAddressAndBusyPort) {
  auto handler = [](HttpRequest&) { return Text("ok"); };
  HttpServerOptions bad;
  bad.address = "localhost";
  auto invalid = HttpServer::Create(bad, handler);
  ASSERT_FALSE(invalid.ok());
  EXPECT_EQ(invalid.status().code(), StatusCode::kInvalid);
  EXPECT_EQ(invalid.status().message(),
            "HttpServer: invalid listen address \"localhost\": want a literal IPv4 or IPv6 "
            "address");

  auto first = HttpServer::Create({}, handler);
  ASSERT_TRUE(first.ok());
  HttpServerOptions busy;
  busy.port = (*first)->port();
  auto second = HttpServer::Create(busy, handler);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(second.status().message(),
            "binding 127.0.0.1:" + std::to_string(busy.port) + ": Address already in use");

  HttpServerOptions no_threads;
  no_threads.io_threads = 0;
  EXPECT_EQ(HttpServer::Create(no_threads, handler).status().code(), StatusCode::kInvalid);
}

// Stop is idempotent, works before Start, and the destructor after Stop is clean.
TEST(HttpServerTest, StopIsIdempotent) {
  auto never_started = HttpServer::Create({}, [](HttpRequest&) { return Text("ok"); });
  ASSERT_TRUE(never_started.ok());
  (*never_started)->Stop();
  (*never_started)->Stop();
  auto server = StartServer({}, [](HttpRequest&) { return Text("ok"); });
  ASSERT_NE(server, nullptr);
  ASSERT_TRUE(Fetch(server->port(), "GET", "/").ok());
  server->Stop();
  server->Stop();
  server->Start();  // ignored after Stop
  server.reset();
}

// Chunks written from another thread arrive in order, each promptly; Finish ends the chunked
// body and the connection then serves another request.
TEST(HttpServerStreamTest, ChunksArriveInOrderPromptlyAndFinishKeepsConnection) {
  StreamingFixture fixture;
  auto server = StartServer({}, fixture.Handler());
  ASSERT_NE(server, nullptr);
  StreamingFixture::Watch watch = fixture.OpenWatch(server->port(), 0);
  ASSERT_NE(watch.sink, nullptr);
  std::unique_ptr<TestClient>& client = watch.client;
  const ClientResponse& header = watch.header;
  const std::shared_ptr<RecordingStream>& stream = watch.stream;
  const std::shared_ptr<StreamSink>& sink = watch.sink;
  EXPECT_EQ(header.status, 200);
  EXPECT_EQ(header.Header("transfer-encoding"), "chunked");
  EXPECT_EQ(header.Header("content-type"), "application/json;stream=watch");
  EXPECT_EQ(header.Header("content-length"), "");

  std::string expected;
  std::chrono::steady_clock::duration slowest{};
  for (int i = 0; i < 20; ++i) {
    std::string event = R"({"type":"ADDED","object":{"n":)" + std::to_string(i) + "}}\n";
    expected += event;
    auto sent = std::chrono::steady_clock::now();
    bool written = false;
    std::thread writer([&] { written = sink->Write(Chunk(event)); });
    writer.join();
    ASSERT_TRUE(written);
    auto body = client->ReadBodyAtLeast(expected.size());
    ASSERT_TRUE(body.ok()) << body.status().ToString();
    slowest = std::max(slowest, std::chrono::steady_clock::now() - sent);
    ASSERT_EQ(body->body, expected);
    ASSERT_FALSE(body->done);
  }
  // No Nagle or batching delay: every event arrived well under the 40 ms delayed-ACK interplay.
  EXPECT_LT(slowest, std::chrono::milliseconds(500));

  // A burst from several writers: each writer's chunks stay in order.
  std::vector<std::thread> writers;
  for (int w = 0; w < 4; ++w) {
    writers.emplace_back([&, w] {
      for (int i = 0; i < 50; ++i) {
        EXPECT_TRUE(sink->Write(Chunk(std::to_string(w) + ":" + std::to_string(i) + ";")));
      }
    });
  }
  for (auto& writer : writers) writer.join();
  EXPECT_TRUE(sink->Write(Chunk("")));  // empty chunks are dropped, not a terminator
  sink->Finish();
  EXPECT_FALSE(sink->Write(Chunk("after finish")));
  auto finished = client->ReadBodyAtLeast(std::string::npos);
  ASSERT_TRUE(finished.ok()) << finished.status().ToString();
  EXPECT_TRUE(finished->done);
  std::string burst = finished->body.substr(expected.size());
  for (int w = 0; w < 4; ++w) {
    std::size_t last = 0;
    for (int i = 0; i < 50; ++i) {
      std::size_t at = burst.find(std::to_string(w) + ":" + std::to_string(i) + ";");
      ASSERT_NE(at, std::string::npos);
      if (i > 0) {
        EXPECT_GT(at, last);
      }
      last = at;
    }
  }

  ASSERT_TRUE(client->SendRequest("GET", "/after").ok());
  auto after = client->ReadResponse();
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_EQ(after->body, "ok");
  EXPECT_EQ(stream->stops(), 0);  // Finish is the stream's own ending
  server->Stop();
  EXPECT_EQ(stream->stops(), 0);
}

// stream_flush_interval: a chunk that follows a write sooner than the interval waits for the rest
// of it (and goes out with its neighbours); the first chunk after a quiet interval leaves at once;
// Finish while a flush is pending still ends the stream.
TEST(HttpServerStreamTest, BurstsAreCoalescedAndQuietStreamsAreNot) {
  constexpr auto kInterval = std::chrono::milliseconds(1000);
  StreamingFixture fixture;
  HttpServerOptions options;
  options.stream_flush_interval = kInterval;
  auto server = StartServer(options, fixture.Handler());
  ASSERT_NE(server, nullptr);
  StreamingFixture::Watch watch = fixture.OpenWatch(server->port(), 0);
  ASSERT_NE(watch.sink, nullptr);
  std::unique_ptr<TestClient>& client = watch.client;
  const std::shared_ptr<StreamSink>& sink = watch.sink;
  // Let the header's write age past the interval, so "a" is the first write of a quiet stream.
  std::this_thread::sleep_for(kInterval + std::chrono::milliseconds(100));

  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(sink->Write(Chunk("a;")));
  auto first = client->ReadBodyAtLeast(2);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  const auto first_latency = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(sink->Write(Chunk("b;")));
  ASSERT_TRUE(sink->Write(Chunk("c;")));
  auto burst = client->ReadBodyAtLeast(6);
  ASSERT_TRUE(burst.ok()) << burst.status().ToString();
  EXPECT_EQ(burst->body, "a;b;c;");
  // The server cannot have written "b;" before the interval since "a;" began.
  EXPECT_GE(std::chrono::steady_clock::now() - start, kInterval);
  EXPECT_LT(first_latency, kInterval / 2);

  ASSERT_TRUE(sink->Write(Chunk("d;")));  // within the interval of the burst's write: waits
  sink->Finish();
  auto finished = client->ReadBodyAtLeast(std::string::npos);
  ASSERT_TRUE(finished.ok()) << finished.status().ToString();
  EXPECT_TRUE(finished->done);
  EXPECT_EQ(finished->body, "a;b;c;d;");
  server->Stop();
}

// A request pipelined behind a watch waits in the buffer and is served once the stream finishes;
// a stream requested with "Connection: close" closes the connection after its last chunk.
TEST(HttpServerStreamTest, PipelinedRequestAfterStreamAndConnectionClose) {
  StreamingFixture fixture;
  auto server = StartServer({}, fixture.Handler());
  ASSERT_NE(server, nullptr);
  auto client = TestClient::Connect(server->port());
  ASSERT_TRUE(client.ok());
  ASSERT_TRUE((*client)
                  ->Send("GET /watch HTTP/1.1\r\nHost: a\r\n\r\n"
                         "GET /next HTTP/1.1\r\nHost: a\r\n\r\n")
                  .ok());
  auto stream = fixture.WaitStream(0);
  ASSERT_NE(stream, nullptr);
  auto sink = stream->WaitStarted();
  ASSERT_NE(sink, nullptr);
  ASSERT_TRUE((*client)->ReadResponseHeader().ok());
  ASSERT_TRUE(sink->Write(Chunk("e1\n")));
  auto first = (*client)->ReadBodyAtLeast(3);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->body, "e1\n");
  sink->Finish();
  auto done = (*client)->ReadBodyAtLeast(std::string::npos);
  ASSERT_TRUE(done.ok());
  EXPECT_TRUE(done->done);
  auto next = (*client)->ReadResponse();
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_EQ(next->body, "ok");

  ASSERT_TRUE((*client)->SendRequest("GET", "/watch", {{"Connection", "close"}}).ok());
  auto closing = fixture.WaitStream(1);
  ASSERT_NE(closing, nullptr);
  auto closing_sink = closing->WaitStarted();
  ASSERT_NE(closing_sink, nullptr);
  closing_sink->Finish();
  auto last = (*client)->ReadResponse();
  ASSERT_TRUE(last.ok()) << last.status().ToString();
  EXPECT_TRUE(last->done);
  EXPECT_EQ(last->Header("connection"), "close");
  EXPECT_TRUE((*client)->WaitForClose().ok());
  EXPECT_EQ(stream->stops(), 0);
  EXPECT_EQ(closing->stops(), 0);
}

// A stream that finishes at once (inside Start) still sends a valid, empty chunked body.
TEST(HttpServerStreamTest, FinishInsideStart) {
  class Immediate final : public ResponseStream {
   public:
    void Start(std::shared_ptr<StreamSink> sink) override {
      sink->Write(Chunk("only"));
      sink->Finish();
    }
    void Stop() override { ++stops; }
    std::atomic<int> stops{0};
  };
  auto stream = std::make_shared<Immediate>();
  auto server = StartServer({}, [&](HttpRequest&) {
    HttpResponse response;
    response.stream = stream;
    return response;
  });
  ASSERT_NE(server, nullptr);
  auto response = Fetch(server->port(), "GET", "/watch");
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->body, "only");
  EXPECT_TRUE(response->done);
  server->Stop();
  EXPECT_EQ(stream->stops.load(), 0);
}

// When the client disconnects mid-stream, Stop() is called exactly once and the sink refuses
// further writes.
TEST(HttpServerStreamTest, ClientDisconnectStopsStreamOnce) {
  StreamingFixture fixture;
  auto server = StartServer({}, fixture.Handler());
  ASSERT_NE(server, nullptr);
  StreamingFixture::Watch watch = fixture.OpenWatch(server->port(), 0);
  ASSERT_NE(watch.sink, nullptr);
  std::unique_ptr<TestClient>& client = watch.client;
  const std::shared_ptr<RecordingStream>& stream = watch.stream;
  const std::shared_ptr<StreamSink>& sink = watch.sink;
  ASSERT_TRUE(sink->Write(Chunk("hello\n")));
  ASSERT_TRUE(client->ReadBodyAtLeast(6).ok());
  client.reset();  // disconnect

  ASSERT_TRUE(stream->WaitStopped());
  EXPECT_FALSE(sink->Write(Chunk("nobody listens\n")));
  sink->Finish();  // harmless after the end
  server->Stop();
  server.reset();
  EXPECT_EQ(stream->stops(), 1);
  EXPECT_FALSE(sink->Write(Chunk("server gone\n")));  // safe after the server is destroyed
}

// Server Stop() with open streams: each stream is stopped once, clients see the connection end,
// the threads are joined, and the sinks stay safe to call.
TEST(HttpServerStreamTest, ServerStopStopsEveryStream) {
  StreamingFixture fixture;
  auto server = StartServer({}, fixture.Handler());
  ASSERT_NE(server, nullptr);
  std::vector<std::unique_ptr<TestClient>> clients;
  std::vector<std::shared_ptr<StreamSink>> sinks;
  for (std::size_t i = 0; i < 3; ++i) {
    StreamingFixture::Watch watch = fixture.OpenWatch(server->port(), i);
    ASSERT_NE(watch.sink, nullptr);
    sinks.push_back(std::move(watch.sink));
    clients.push_back(std::move(watch.client));
  }
  // An idle keep-alive connection is closed too.
  auto idle = TestClient::Connect(server->port());
  ASSERT_TRUE(idle.ok());

  server->Stop();
  for (const auto& stream : fixture.streams) EXPECT_EQ(stream->stops(), 1);
  for (const auto& sink : sinks) EXPECT_FALSE(sink->Write(Chunk("late\n")));
  for (auto& client : clients) EXPECT_TRUE(client->WaitForClose().ok());
  EXPECT_TRUE((*idle)->WaitForClose().ok());
  server.reset();
  for (const auto& sink : sinks) {
    EXPECT_FALSE(sink->Write(Chunk("later\n")));
    sink->Finish();
  }
  for (const auto& stream : fixture.streams) EXPECT_EQ(stream->stops(), 1);
}

// A client that does not read: once the unsent backlog passes the limit, Write returns false and
// the stream is stopped and closed.
TEST(HttpServerStreamTest, SlowReaderOverBacklogIsClosed) {
  StreamingFixture fixture;
  HttpServerOptions options;
  options.max_stream_backlog_bytes = std::size_t{256} * 1024;
  auto server = StartServer(options, fixture.Handler());
  ASSERT_NE(server, nullptr);
  StreamingFixture::Watch watch = fixture.OpenWatch(server->port(), 0, /*read_header=*/false);
  ASSERT_NE(watch.sink, nullptr);
  std::unique_ptr<TestClient>& client = watch.client;
  const std::shared_ptr<RecordingStream>& stream = watch.stream;
  const std::shared_ptr<StreamSink>& sink = watch.sink;

  auto chunk = Chunk(std::string(std::size_t{64} * 1024, 'z'));
  auto deadline = std::chrono::steady_clock::now() + kDeadline;
  std::size_t accepted = 0;
  while (sink->Write(chunk)) {
    ++accepted;
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "backlog never overflowed";
  }
  EXPECT_GT(accepted, 3u);  // the kernel buffers absorb some before the backlog builds
  ASSERT_TRUE(stream->WaitStopped());
  EXPECT_FALSE(sink->Write(Chunk("x")));
  EXPECT_TRUE(client->WaitForClose().ok());
  server->Stop();
  EXPECT_EQ(stream->stops(), 1);
}

// A reader that does not read while 16 MB are queued (more than the kernel buffers take): the
// server's own sendmsg of a batch then sends part of it or nothing, and the rest goes out once
// the reader drains. Every byte still arrives once and in order.
TEST(HttpServerStreamTest, PartlySentBatchesArriveWhole) {
  StreamingFixture fixture;
  auto server = StartServer({}, fixture.Handler());
  ASSERT_NE(server, nullptr);
  StreamingFixture::Watch watch = fixture.OpenWatch(server->port(), 0);
  ASSERT_NE(watch.sink, nullptr);
  std::unique_ptr<TestClient>& client = watch.client;
  const std::shared_ptr<RecordingStream>& stream = watch.stream;
  const std::shared_ptr<StreamSink>& sink = watch.sink;

  std::string expected;
  for (int i = 0; i < 256; ++i) {
    std::string chunk = std::to_string(i) + ":";
    chunk.append(std::size_t{64} * 1024, static_cast<char>('a' + i % 26));
    expected += chunk;
    ASSERT_TRUE(sink->Write(Chunk(std::move(chunk))));
  }
  sink->Finish();
  auto body = client->ReadBodyAtLeast(std::string::npos);
  ASSERT_TRUE(body.ok()) << body.status().ToString();
  EXPECT_TRUE(body->done);
  ASSERT_EQ(body->body.size(), expected.size());
  EXPECT_TRUE(body->body == expected);
  server->Stop();
  EXPECT_EQ(stream->stops(), 0);
}

// Lifts RLIMIT_NOFILE for the test process (the server does the same in Create).
rlim_t RaiseOwnFileLimit() {
  rlimit limit{};
  getrlimit(RLIMIT_NOFILE, &limit);
  limit.rlim_cur = limit.rlim_max;
  setrlimit(RLIMIT_NOFILE, &limit);
  getrlimit(RLIMIT_NOFILE, &limit);
  return limit.rlim_cur;
}

// 1,000 concurrent watches on 2 I/O threads: every one receives a broadcast chunk, and Stop()
// stops all of them. Clients are raw non-blocking sockets polled with a deadline.
TEST(HttpServerStreamTest, ThousandConcurrentStreamsReceiveBroadcast) {
  constexpr std::size_t kStreams = 1000;
  if (RaiseOwnFileLimit() < 2 * kStreams + 100) GTEST_SKIP() << "RLIMIT_NOFILE too low";
  StreamingFixture fixture;
  HttpServerOptions options;
  options.io_threads = 2;
  auto server = StartServer(options, fixture.Handler());
  ASSERT_NE(server, nullptr);

  std::vector<int> fds;
  auto close_all = [&] {
    for (int fd : fds) ::close(fd);
  };
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(server->port());
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const std::string request = "GET /watch HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  for (std::size_t i = 0; i < kStreams; ++i) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(fd, 0) << "socket: errno " << errno;
    fds.push_back(fd);
    ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0)
        << "connect #" << i << ": errno " << errno;
    ASSERT_EQ(::send(fd, request.data(), request.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(request.size()));
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  }
  ASSERT_TRUE(WaitFor(fixture.mu, fixture.cv, [&] { return fixture.streams.size() == kStreams; }))
      << fixture.streams.size() << " streams";
  std::vector<std::shared_ptr<StreamSink>> sinks;
  for (const auto& stream : fixture.streams) {
    sinks.push_back(stream->WaitStarted());
    ASSERT_NE(sinks.back(), nullptr);
  }

  // One immutable event shared by every watcher, as the watch fan-out sends it.
  const std::string payload = R"({"type":"MODIFIED","object":{"kind":"EndpointSlice"}})"
                              "\n";
  auto event = Chunk(payload);
  for (const auto& sink : sinks) ASSERT_TRUE(sink->Write(event));

  std::vector<std::string> received(kStreams);
  std::vector<bool> complete(kStreams, false);
  std::size_t remaining = kStreams;
  auto deadline = std::chrono::steady_clock::now() + kDeadline;
  std::vector<pollfd> polls;
  while (remaining > 0 && std::chrono::steady_clock::now() < deadline) {
    polls.clear();
    std::vector<std::size_t> index;
    for (std::size_t i = 0; i < kStreams; ++i) {
      if (complete[i]) continue;
      polls.push_back({fds[i], POLLIN, 0});
      index.push_back(i);
    }
    int ready = ::poll(polls.data(), polls.size(), 1000);
    ASSERT_GE(ready, 0);
    for (std::size_t p = 0; p < polls.size(); ++p) {
      if ((polls[p].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      std::size_t i = index[p];
      char buffer[4096];
      ssize_t n = ::recv(fds[i], buffer, sizeof(buffer), 0);
      ASSERT_GT(n, 0) << "stream " << i << " closed early";
      received[i].append(buffer, static_cast<std::size_t>(n));
      if (received[i].find(payload) != std::string::npos) {
        complete[i] = true;
        --remaining;
      }
    }
  }
  EXPECT_EQ(remaining, 0u);
  for (std::size_t i = 0; i < kStreams; i += 97) {
    EXPECT_EQ(received[i].rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << received[i];
    char size_line[32];
    std::snprintf(size_line, sizeof(size_line), "%zx\r\n", payload.size());
    EXPECT_NE(received[i].find("\r\n\r\n" + std::string(size_line) + payload + "\r\n"),
              std::string::npos)
        << received[i];
  }
  server->Stop();
  for (const auto& stream : fixture.streams) ASSERT_EQ(stream->stops(), 1);
  close_all();
}

}  // namespace
}  // namespace slicewright::apiserver

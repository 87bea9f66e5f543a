#include <atomic>
#include <chrono>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "slicewright/base/clock.h"
#include "slicewright/client/rest_client.h"
#include "slicewright/client/transport.h"
#include "slicewright/codec/json.h"

#include "apiserver/rest/serve.h"
#include "client/client_test_util.h"
#include "fakes/fault_proxy.h"

// RestClient and Transport against the embedded API server behind the fault-injecting proxy:
// throttling, server errors, dropped, stalled, slow, truncated and garbled answers, and watch
// streams cut, stalled or corrupted. The retry policy under test is RestClient's (rest_client.cc):
//   - 429 is retried for every method, waiting Retry-After when sent;
//   - 500/502/503/504 are retried for GET, PUT, DELETE and HEAD, and for any method when the
//     answer carries Retry-After (the server says when to come back, so it did not act);
//   - a failed exchange (kUnavailable: reset, dropped, truncated) is retried for those methods
//     only, since a POST or PATCH may have been applied;
//   - kTimeout is not retried; at most max_retries retries, then the last error is returned.
// Backoffs and Retry-After waits run on a FakeClock that a pump thread advances, so no test
// sleeps through them.
namespace slicewright::client {
namespace {

using fakes::Fault;
using fakes::FaultProxy;
using fakes::Match;
using fakes::RuleId;
using std::chrono::milliseconds;
using testing::TempDir;

// Advances a FakeClock whenever a thread waits on it, one small step per millisecond of real time
// (a woken waiter needs a moment to leave the clock's list), and adds up how far.
class ClockPump final {
 public:
  static constexpr auto kStep = milliseconds(50);

  explicit ClockPump(FakeClock& clock)
      : thread_([this, &clock] {
          while (!stop_) {
            if (clock.Waiters() > 0) {
              clock.Advance(kStep);
              advanced_ms_ += kStep.count();
            }
            std::this_thread::sleep_for(milliseconds(1));
          }
        }) {}
  ~ClockPump() {
    stop_ = true;
    thread_.join();
  }
  ClockPump(const ClockPump&) = delete;
  ClockPump& operator=(const ClockPump&) = delete;

  milliseconds advanced() const { return milliseconds(advanced_ms_.load()); }
  void Reset() { advanced_ms_ = 0; }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<std::int64_t> advanced_ms_{0};
  std::thread thread_;
};

std::string ServiceJson(std::string_view name) {
  return R"({"apiVersion":"v1","kind":"Service","metadata":{"name":")" + std::string(name) +
         R"("},"spec":{"ports":[{"port":80}],"selector":{"app":"web"}}})";
}

int CountSeen(const FaultProxy& proxy, std::string_view method, std::string_view contains) {
  int count = 0;
  for (const fakes::SeenRequest& seen : proxy.Seen()) {
    if (seen.method == method && seen.target.find(contains) != std::string::npos) ++count;
  }
  return count;
}

class FaultInjectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    apiserver::ServeOptions options;
    options.listen = "127.0.0.1:0";
    options.data_dir = dir.Path("");
    options.io_threads = 2;
    auto started = apiserver::RunningApiServer::Start(options);
    ASSERT_TRUE(started.ok()) << started.status().ToString();
    server = std::move(started).value();
    auto started_proxy = FaultProxy::Start("127.0.0.1", server->port());
    ASSERT_TRUE(started_proxy.ok()) << started_proxy.status().ToString();
    proxy = std::move(started_proxy).value();

    RestConfig config;
    config.server.scheme = "http";
    config.server.host = "127.0.0.1";
    config.server.port = proxy->port();
    auto made = Transport::Create(std::move(config), {});
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    transport = std::shared_ptr<Transport>(std::move(made).value());
    client = MakeClient(/*max_retries=*/5);
    ASSERT_NE(client, nullptr);
  }

  void TearDown() override {
    client.reset();
    if (proxy) proxy->Stop();
  }

  std::unique_ptr<RestClient> MakeClient(int max_retries) {
    RestClientOptions options;
    options.clock = &clock;
    options.qps = 1000;  // the rate limit is not under test: never wait for it
    options.burst = 1000;
    options.max_retries = max_retries;
    auto made = RestClient::Create(transport, options);
    EXPECT_TRUE(made.ok()) << made.status().ToString();
    return made.ok() ? std::move(made).value() : nullptr;
  }

  // "GET http://127.0.0.1:PORT<target>", the prefix of the transport's error messages.
  std::string What(std::string_view method, std::string_view target) const {
    return std::string(method) + " http://127.0.0.1:" + std::to_string(proxy->port()) +
           std::string(target);
  }

  Request TransportGet(std::string target, milliseconds timeout) const {
    Request request;
    request.target = std::move(target);
    request.timeout = timeout;
    return request;
  }

  void CreateServices(std::initializer_list<std::string_view> names) {
    for (const std::string_view name : names) {
      ASSERT_TRUE(client->Create(services, "default", ServiceJson(name)).ok()) << name;
    }
  }

  const ResourceRef services = ServicesResource();
  const std::string web_path = "/api/v1/namespaces/default/services/web";
  TempDir dir;
  FakeClock clock;
  ClockPump pump{clock};
  std::unique_ptr<apiserver::RunningApiServer> server;
  std::unique_ptr<FaultProxy> proxy;
  std::shared_ptr<Transport> transport;
  std::unique_ptr<RestClient> client;
};

TEST_F(FaultInjectionTest, TooManyRequestsWaitsRetryAfterThenSucceeds) {
  CreateServices({"web"});
  pump.Reset();
  const RuleId throttled =
      proxy->Add(Match::Get("/services/web").Times(2), Fault::Respond(429).RetryAfter("2"));
  Result<std::string> fetched = client->Get(services, "default", "web");
  ASSERT_TRUE(fetched.ok()) << fetched.status().ToString();
  EXPECT_EQ(nlohmann::json::parse(*fetched)["metadata"]["name"], "web");
  EXPECT_EQ(proxy->Hits(throttled), 2);
  // Two waits of Retry-After: 2 s each, measured in (fake) pump steps. A wait's deadline is taken
  // when the answer arrives, which may be up to a step after the pump last moved the clock.
  EXPECT_GE(pump.advanced(), milliseconds(4000) - 2 * ClockPump::kStep);
  EXPECT_LT(pump.advanced(), milliseconds(4000) + 20 * ClockPump::kStep);
}

TEST_F(FaultInjectionTest, CreateIsRetriedOn429AndOnRetryAfterButNotOn500OrADrop) {
  // 429: the server refused without acting, so even a POST is sent again.
  const RuleId throttled = proxy->Add(Match::Post("/services"), Fault::Respond(429));
  ASSERT_TRUE(client->Create(services, "default", ServiceJson("a")).ok());
  EXPECT_EQ(proxy->Hits(throttled), 1);
  EXPECT_EQ(CountSeen(*proxy, "POST", "/services"), 2);

  // 503 with Retry-After: the same.
  const RuleId unavailable =
      proxy->Add(Match::Post("/services"), Fault::Respond(503).RetryAfter("1"));
  ASSERT_TRUE(client->Create(services, "default", ServiceJson("b")).ok());
  EXPECT_EQ(proxy->Hits(unavailable), 1);

  // A bare 500 may come after the write happened: returned, not repeated.
  const RuleId failed = proxy->Add(Match::Post("/services"), Fault::Respond(500));
  Result<std::string> created = client->Create(services, "default", ServiceJson("c"));
  EXPECT_EQ(created.status().code(), StatusCode::kInternal);
  EXPECT_EQ(created.status().message(), "fault proxy: injected HTTP 500");
  EXPECT_EQ(proxy->Hits(failed), 1);
  EXPECT_EQ(CountSeen(*proxy, "POST", "/services"), 5);

  // A connection dropped after the request was sent: the POST may have been applied.
  const RuleId dropped = proxy->Add(Match::Post("/services"), Fault::Drop());
  created = client->Create(services, "default", ServiceJson("d"));
  EXPECT_EQ(created.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(created.status().message(),
            What("POST", "/api/v1/namespaces/default/services") + ": read: end of stream");
  EXPECT_EQ(proxy->Hits(dropped), 1);
  EXPECT_EQ(CountSeen(*proxy, "POST", "/services"), 6);

  EXPECT_EQ(client->Get(services, "default", "c").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(client->Get(services, "default", "d").status().code(), StatusCode::kNotFound);
}

TEST_F(FaultInjectionTest, ServerErrorsOnReadsAreRetriedWithBackoffUntilTheySucceed) {
  CreateServices({"web"});
  pump.Reset();
  const RuleId failing = proxy->Add(Match::Get(web_path).Times(3), Fault::Respond(500));
  ASSERT_TRUE(client->Get(services, "default", "web").ok());
  EXPECT_EQ(proxy->Hits(failing), 3);
  // Three jittered backoffs from 100 ms: at least 50 + 100 + 200 ms of (fake) waiting.
  EXPECT_GE(pump.advanced(), milliseconds(350) - 3 * ClockPump::kStep);  // a step lost per wait

  // PUT and DELETE are repeatable too.
  const RuleId put = proxy->Add(Match::Method("PUT", web_path), Fault::Respond(503));
  nlohmann::json object = nlohmann::json::parse(client->Get(services, "default", "web").value());
  object["metadata"]["labels"]["x"] = "y";
  EXPECT_TRUE(client->Update(services, "default", "web", object.dump()).ok());
  EXPECT_EQ(proxy->Hits(put), 1);
  const RuleId del = proxy->Add(Match::Method("DELETE", web_path), Fault::Respond(502));
  EXPECT_TRUE(client->Delete(services, "default", "web", {}).ok());
  EXPECT_EQ(proxy->Hits(del), 1);
}

TEST_F(FaultInjectionTest, AfterMaxRetriesTheLastErrorIsReturned) {
  client = MakeClient(/*max_retries=*/3);
  const RuleId failing = proxy->Add(Match::Get(web_path).Forever(), Fault::Respond(503));
  Result<std::string> fetched = client->Get(services, "default", "web");
  EXPECT_EQ(fetched.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(fetched.status().message(), "fault proxy: injected HTTP 503");
  EXPECT_EQ(proxy->Hits(failing), 4);  // the first attempt and three retries

  // A body that is not a Status still gives a clear error naming the HTTP status.
  proxy->ClearRules();
  const RuleId garbled =
      proxy->Add(Match::Get(web_path).Forever(), Fault::Respond(500, "<html>oops</html>"));
  fetched = client->Get(services, "default", "web");
  EXPECT_EQ(fetched.status().code(), StatusCode::kInternal);
  EXPECT_EQ(fetched.status().message(), "the server answered HTTP 500: <html>oops</html>");
  EXPECT_EQ(proxy->Hits(garbled), 4);
}

TEST_F(FaultInjectionTest, DroppedConnectionsOnReadsAreRetried) {
  CreateServices({"web"});
  const RuleId dropped = proxy->Add(Match::Get(web_path).Times(2), Fault::Drop());
  ASSERT_TRUE(client->Get(services, "default", "web").ok());
  EXPECT_EQ(proxy->Hits(dropped), 2);

  client = MakeClient(/*max_retries=*/2);
  proxy->Add(Match::Get(web_path).Forever(), Fault::Drop());
  Result<std::string> fetched = client->Get(services, "default", "web");
  EXPECT_EQ(fetched.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(fetched.status().message(), What("GET", web_path) + ": read: end of stream");
}

TEST_F(FaultInjectionTest, StalledRequestEndsWithTimeoutAtTheDeadline) {
  const RuleId stalled = proxy->Add(Match::Get("/api/v1/namespaces"), Fault::Stall());
  const auto start = std::chrono::steady_clock::now();
  Result<Response> response = transport->Do(TransportGet("/api/v1/namespaces", milliseconds(300)));
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.status().code(), StatusCode::kTimeout);
  EXPECT_EQ(response.status().message(), What("GET", "/api/v1/namespaces") + ": timed out (read)");
  EXPECT_GE(took, milliseconds(300));
  EXPECT_LT(took, milliseconds(2000));
  EXPECT_EQ(proxy->Hits(stalled), 1);
  // The timed-out connection was dropped, not pooled: the next request works.
  EXPECT_EQ(transport->Do(TransportGet("/api/v1/namespaces", milliseconds(5000)))->status, 200);
}

TEST_F(FaultInjectionTest, SlowResponseWithinTheDeadlineSucceeds) {
  CreateServices({"web"});
  const RuleId slow = proxy->Add(Match::Get(web_path).Times(2), Fault::Delay(milliseconds(250)));
  const auto start = std::chrono::steady_clock::now();
  Result<Response> response = transport->Do(TransportGet(web_path, milliseconds(3000)));
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->status, 200);
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(250));
  EXPECT_TRUE(client->Get(services, "default", "web").ok());
  EXPECT_EQ(proxy->Hits(slow), 2);
}

TEST_F(FaultInjectionTest, TruncatedBodiesAreRetriedForReadsAndReportedForWrites) {
  CreateServices({"web"});
  const RuleId cut = proxy->Add(Match::Get(web_path), Fault::TruncateBody(20));
  Result<std::string> fetched = client->Get(services, "default", "web");
  ASSERT_TRUE(fetched.ok()) << fetched.status().ToString();
  EXPECT_EQ(proxy->Hits(cut), 1);

  client = MakeClient(/*max_retries=*/1);
  proxy->Add(Match::Get(web_path).Forever(), Fault::TruncateBody(20));
  fetched = client->Get(services, "default", "web");
  EXPECT_EQ(fetched.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(fetched.status().message(), What("GET", web_path) + ": read: partial message");

  // The server created the object, but its answer was cut: the POST is not repeated.
  const RuleId cut_post = proxy->Add(Match::Post("/services"), Fault::TruncateBody(5));
  Result<std::string> created = client->Create(services, "default", ServiceJson("x"));
  EXPECT_EQ(created.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(proxy->Hits(cut_post), 1);
  EXPECT_EQ(CountSeen(*proxy, "POST", "/services"), 2);  // "web" and this one
}

// A 2xx body that is not the JSON it should be reaches the caller as text (RestClient does not
// decode); the codec then rejects it with a message, not a crash. An error answer with a garbled
// body still maps to the HTTP status's code.
TEST_F(FaultInjectionTest, MalformedBodiesGiveCleanDecodeErrors) {
  CreateServices({"web"});
  const std::vector<std::string> bodies = {
      R"({"kind":"Service","metadata":{"name":"we)",
      "not json at all",
      std::string("\x00\xff\xfe{\"kind\"", 9),
      R"({"kind":"Service","metadata":{"name":42}})",
      "",
  };
  for (const std::string& body : bodies) {
    SCOPED_TRACE(body);
    proxy->Add(Match::Get(web_path), Fault::ReplaceBody(body));
    Result<std::string> fetched = client->Get(services, "default", "web");
    ASSERT_TRUE(fetched.ok()) << fetched.status().ToString();
    EXPECT_EQ(*fetched, body);
    Result<model::Service> decoded = codec::DecodeService(*fetched);
    ASSERT_FALSE(decoded.ok());
    EXPECT_FALSE(decoded.status().message().empty());
  }

  proxy->Add(Match::Get("/services/missing"),
             Fault::ReplaceBody(std::string("\x01garbage\xc3\x28 tail", 15)));
  Result<std::string> missing = client->Get(services, "default", "missing");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message().substr(0, 29), "the server answered HTTP 404:");
}

// Whatever bytes come back, the transport returns a Response or an error; it never crashes or
// hangs. Fixed cases first, then seeded random bytes and mutations of a valid response.
TEST_F(FaultInjectionTest, AnyByteSequenceAsAResponseIsHandled) {
  std::vector<std::string> answers = {
      "",
      "HTTP/1.1",
      "garbage\r\n\r\n",
      "HTTP/1.1 200 OK\r\n",
      "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\n",
      "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\n",
      "HTTP/1.1 999 Whatever\r\nContent-Length: 0\r\n\r\n",
      "HTTP/1.1 100 Continue\r\n\r\n",
      "HTTP/1.1 429 Too Many\r\nRetry-After: 99999999999999\r\nContent-Length: 0\r\n\r\n",
      "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\n{}",
      std::string("HTTP/1.1 200 OK\r\nX: \x00\x01\r\n\r\n", 27),
  };
  const std::string valid =
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
      "5\r\n{\"a\":\r\n2\r\n1}\r\n0\r\n\r\n";
  std::mt19937 random(20240607);
  for (int i = 0; i < 100; ++i) {
    std::string bytes(random() % 200, '\0');
    for (char& c : bytes) c = static_cast<char>(random() & 0xff);
    answers.push_back(std::move(bytes));
    std::string mutated = valid;
    const int flips = 1 + static_cast<int>(random() % 4);
    for (int f = 0; f < flips; ++f) {
      mutated[random() % mutated.size()] = static_cast<char>(random() & 0xff);
    }
    answers.push_back(std::move(mutated));
    answers.push_back(valid.substr(0, random() % valid.size()));
  }
  int errors = 0;
  for (const std::string& answer : answers) {
    proxy->ClearRules();
    proxy->Add(Match::Any(), Fault::Raw(answer));
    Result<Response> response = transport->Do(TransportGet("/api", milliseconds(2000)));
    if (!response.ok()) {
      ++errors;
      EXPECT_NE(response.status().code(), StatusCode::kTimeout) << ::testing::PrintToString(answer);
      EXPECT_FALSE(response.status().message().empty());
    }
  }
  EXPECT_GT(errors, 100);
  // A scrambled answer to a watch is an error too.
  proxy->ClearRules();
  proxy->Add(Match::Any().Forever(), Fault::Raw("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked"
                                                "\r\n\r\n11\r\n{\"type\":\"ADDED\"}\n\r\nxyz"));
  std::vector<std::string> lines;
  client = MakeClient(/*max_retries=*/1);
  Status watched = client->Watch(
      services, "default", {},
      [&](std::string_view line) {
        lines.emplace_back(line);
        return true;
      },
      nullptr);
  EXPECT_EQ(watched.code(), StatusCode::kUnavailable) << watched.ToString();
  EXPECT_EQ(lines, std::vector<std::string>{R"({"type":"ADDED"})"});
}

// Watches through the proxy: the creations after `start` arrive as events b, c, d, e.
class FaultInjectionWatchTest : public FaultInjectionTest {
 protected:
  void SetUp() override {
    FaultInjectionTest::SetUp();
    if (HasFatalFailure()) return;
    Result<std::string> first = client->Create(services, "default", ServiceJson("a"));
    ASSERT_TRUE(first.ok());
    start = nlohmann::json::parse(*first)["metadata"]["resourceVersion"].get<std::string>();
    CreateServices({"b", "c", "d", "e"});
  }

  // Watches from `from`, recording names and the last resourceVersion, until `want` events.
  Status WatchFrom(const std::string& from, std::size_t want,
                   StreamCanceller* canceller = nullptr) {
    ListOptions options;
    options.resource_version = from;
    options.timeout_seconds = 5;
    return client->Watch(
        services, "default", options,
        [&](std::string_view line) {
          lines.emplace_back(line);
          Result<codec::WatchEvent<model::Service>> event = codec::DecodeServiceWatchEvent(line);
          if (event.ok()) {
            names.push_back(event->object.metadata.name);
            last_version = event->object.metadata.resource_version;
          } else {
            rejected.push_back(event.status());
          }
          return names.size() < want;
        },
        canceller);
  }

  std::string start;
  std::vector<std::string> lines;
  std::vector<std::string> names;
  std::vector<Status> rejected;
  std::string last_version;
};

TEST_F(FaultInjectionWatchTest, CutStreamReturnsAnErrorTheCallerResumesFrom) {
  const RuleId cut = proxy->Add(Match::Watch("/services"), Fault::CutStreamAfter(2));
  Status watched = WatchFrom(start, 4);
  EXPECT_EQ(watched.code(), StatusCode::kUnavailable) << watched.ToString();
  EXPECT_EQ(names, (std::vector<std::string>{"b", "c"}));
  EXPECT_EQ(proxy->Hits(cut), 1);
  // Resuming from the last event seen delivers the rest, once each.
  ASSERT_TRUE(WatchFrom(last_version, 4).ok());
  EXPECT_EQ(names, (std::vector<std::string>{"b", "c", "d", "e"}));
}

TEST_F(FaultInjectionWatchTest, StreamCutBeforeAnyEventIsReopened) {
  const RuleId cut = proxy->Add(Match::Watch("/services"), Fault::CutStreamAfter(0));
  const RuleId throttled =
      proxy->Add(Match::Watch("/services"), Fault::Respond(429).RetryAfter("1"));
  Status watched = WatchFrom(start, 4);
  EXPECT_TRUE(watched.ok()) << watched.ToString();
  EXPECT_EQ(names, (std::vector<std::string>{"b", "c", "d", "e"}));
  EXPECT_EQ(proxy->Hits(cut), 1);
  EXPECT_EQ(proxy->Hits(throttled), 1);
  EXPECT_EQ(CountSeen(*proxy, "GET", "watch=true"), 3);
}

TEST_F(FaultInjectionWatchTest, GarbageLineIsDeliveredAndTheDecoderRejectsIt) {
  proxy->Add(Match::Watch("/services"), Fault::InjectLine(1, "this is {not json"));
  proxy->Add(Match::Watch("/services"), Fault::InjectLine(0, R"({"type":"ADDED","object":7})"));
  ASSERT_TRUE(WatchFrom(start, 4).ok());
  EXPECT_EQ(names, (std::vector<std::string>{"b", "c", "d", "e"}));
  ASSERT_EQ(lines.size(), 5U);
  EXPECT_EQ(lines[1], "this is {not json");
  ASSERT_EQ(rejected.size(), 1U);
  EXPECT_FALSE(rejected[0].message().empty());

  // An event whose object has the wrong shape is rejected the same way.
  lines.clear();
  names.clear();
  rejected.clear();
  ASSERT_TRUE(WatchFrom(start, 1).ok());
  ASSERT_EQ(lines.size(), 2U);
  EXPECT_EQ(lines[0], R"({"type":"ADDED","object":7})");
  ASSERT_EQ(rejected.size(), 1U);
  EXPECT_FALSE(rejected[0].message().empty());
}

TEST_F(FaultInjectionWatchTest, StalledStreamEndsWhenCancelled) {
  const RuleId stalled = proxy->Add(Match::Watch("/services"), Fault::StallStreamAfter(1));
  StreamCanceller canceller;
  std::thread cancel([&] {
    // Cancel once the first event is in and the stream has gone quiet.
    ASSERT_TRUE(proxy->WaitForHits(stalled, 1, milliseconds(5000)));
    std::this_thread::sleep_for(milliseconds(200));
    canceller.Cancel();
  });
  const auto begin = std::chrono::steady_clock::now();
  Status watched = WatchFrom(start, 4, &canceller);
  cancel.join();
  EXPECT_EQ(watched.code(), StatusCode::kCancelled) << watched.ToString();
  EXPECT_EQ(names, std::vector<std::string>{"b"});
  EXPECT_LT(std::chrono::steady_clock::now() - begin, milliseconds(3000));
}

TEST_F(FaultInjectionWatchTest, WatchStatusAnswersAreErrors) {
  proxy->Add(Match::Watch("/services"),
             Fault::Respond(410, R"({"kind":"Status","apiVersion":"v1","status":"Failure",)"
                                 R"("message":"too old resource version","reason":"Expired",)"
                                 R"("code":410})"));
  Status watched = WatchFrom(start, 4);
  EXPECT_EQ(watched.code(), StatusCode::kExpired);
  EXPECT_EQ(watched.message(), "too old resource version");
  EXPECT_TRUE(names.empty());
}

// A stream that keeps sending bytes without a newline (a broken server or proxy) must not grow the
// client's line buffer without bound: past max_watch_line_bytes the watch fails, naming the
// resource, and is not reopened. Lines within the limit are still delivered.
TEST_F(FaultInjectionTest, WatchLineWithoutNewlineIsCappedAndFailsTheWatch) {
  const std::string event = R"({"type":"ADDED"})"
                            "\n";
  const std::string endless(256 * 1024, 'x');
  std::ostringstream chunk_size;
  chunk_size << std::hex << event.size() + endless.size();
  const RuleId raw = proxy->Add(Match::Watch("/services").Forever(),
                                Fault::Raw("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                           "Transfer-Encoding: chunked\r\n\r\n" +
                                           chunk_size.str() + "\r\n" + event + endless + "\r\n"));
  RestClientOptions options;
  options.clock = &clock;
  options.qps = 1000;
  options.burst = 1000;
  options.max_watch_line_bytes = 4096;
  auto made = RestClient::Create(transport, options);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  std::vector<std::string> lines;
  Status watched = (*made)->Watch(
      services, "default", {},
      [&](std::string_view line) {
        lines.emplace_back(line);
        return true;
      },
      nullptr);
  EXPECT_EQ(watched.code(), StatusCode::kUnavailable) << watched.ToString();
  EXPECT_EQ(watched.message(),
            "watch of services: an event line exceeded 4096 bytes without a newline");
  EXPECT_EQ(lines, std::vector<std::string>{R"({"type":"ADDED"})"});
  EXPECT_EQ(proxy->Hits(raw), 1);
}

}  // namespace
}  // namespace slicewright::client

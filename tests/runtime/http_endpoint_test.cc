#include "slicewright/runtime/http_endpoint.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

// The endpoint over loopback, driven by a raw-socket client so tests can send exactly the bytes
// they mean: half requests, oversized headers, garbage.
namespace slicewright::runtime {
namespace {

using std::chrono::milliseconds;

struct RawResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;

  std::string Header(const std::string& name) const {
    const auto it = headers.find(name);
    return it == headers.end() ? std::string() : it->second;
  }
};

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return out;
}

// One TCP connection to the endpoint. Reads give up after `timeout` (SO_RCVTIMEO).
class RawClient final {
 public:
  explicit RawClient(std::uint16_t port, milliseconds timeout = milliseconds(5000)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): the sockets API
    connected_ = ::connect(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0;
    SetTimeout(timeout);
  }
  ~RawClient() {
    if (fd_ >= 0) ::close(fd_);
  }
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;

  bool connected() const { return connected_; }

  void SetTimeout(milliseconds timeout) {
    timeval tv{};
    tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
    tv.tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000);
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  }

  bool Send(std::string_view data) {
    while (!data.empty()) {
      const ssize_t sent = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (sent <= 0) return false;
      data.remove_prefix(static_cast<std::size_t>(sent));
    }
    return true;
  }

  // Reads one response framed by Content-Length (none read for a HEAD); nullopt on a timeout, a
  // close or garbage.
  std::optional<RawResponse> Read(bool head = false) {
    std::size_t end = std::string::npos;
    while ((end = buffer_.find("\r\n\r\n")) == std::string::npos) {
      if (!Fill()) return std::nullopt;
    }
    RawResponse response;
    const std::string head_text = buffer_.substr(0, end);
    buffer_.erase(0, end + 4);
    std::size_t line_end = head_text.find("\r\n");
    const std::string status_line = head_text.substr(0, line_end);
    if (status_line.size() < 12 || status_line.compare(0, 5, "HTTP/") != 0) return std::nullopt;
    response.status = std::stoi(status_line.substr(9, 3));
    while (line_end != std::string::npos) {
      const std::size_t start = line_end + 2;
      line_end = head_text.find("\r\n", start);
      const std::string line = head_text.substr(start, line_end - start);
      const std::size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string value = line.substr(colon + 1);
      while (!value.empty() && value.front() == ' ') value.erase(0, 1);
      response.headers[Lower(line.substr(0, colon))] = value;
    }
    const std::size_t length =
        head ? 0 : static_cast<std::size_t>(std::stoul("0" + response.Header("content-length")));
    while (buffer_.size() < length) {
      if (!Fill()) return std::nullopt;
    }
    response.body = buffer_.substr(0, length);
    buffer_.erase(0, length);
    return response;
  }

  // True when the server closes the connection (EOF or reset) before the read timeout; any bytes
  // that arrive first are kept in `leftover()`.
  bool WaitClosed() {
    char chunk[4096];
    for (;;) {
      const ssize_t got = ::recv(fd_, chunk, sizeof(chunk), 0);
      if (got == 0) return true;
      if (got < 0) return errno == ECONNRESET;
      buffer_.append(chunk, static_cast<std::size_t>(got));
    }
  }
  const std::string& leftover() const { return buffer_; }

 private:
  bool Fill() {
    char chunk[4096];
    const ssize_t got = ::recv(fd_, chunk, sizeof(chunk), 0);
    if (got <= 0) return false;
    buffer_.append(chunk, static_cast<std::size_t>(got));
    return true;
  }

  int fd_ = -1;
  bool connected_ = false;
  std::string buffer_;
};

std::string Request(std::string_view method, std::string_view target,
                    std::string_view extra_headers = {}) {
  return std::string(method) + " " + std::string(target) + " HTTP/1.1\r\nHost: test\r\n" +
         std::string(extra_headers) + "\r\n";
}

// One request on a fresh connection.
std::optional<RawResponse> Fetch(std::uint16_t port, std::string_view target,
                                 std::string_view method = "GET",
                                 std::string_view extra_headers = {}) {
  RawClient client(port);
  if (!client.connected() || !client.Send(Request(method, target, extra_headers))) {
    return std::nullopt;
  }
  return client.Read(method == "HEAD");
}

HttpEndpointOptions TestOptions(const Registry* registry = nullptr) {
  HttpEndpointOptions options;
  options.bind_address = "127.0.0.1";
  options.port = 0;
  options.metrics = registry;
  return options;
}

std::unique_ptr<HttpEndpoint> StartEndpoint(HttpEndpointOptions options) {
  Result<std::unique_ptr<HttpEndpoint>> endpoint = HttpEndpoint::Create(std::move(options));
  EXPECT_TRUE(endpoint.ok()) << endpoint.status().ToString();
  if (!endpoint.ok()) return nullptr;
  (*endpoint)->Start();
  return std::move(endpoint).value();
}

TEST(HttpEndpointTest, ServesTheRegistryAtMetrics) {
  Registry registry;
  Counter* syncs = registry.AddCounter("endpoint_slice_controller_syncs", "Syncs.").value();
  syncs->Add(3);
  auto endpoint = StartEndpoint(TestOptions(&registry));
  ASSERT_NE(endpoint, nullptr);
  EXPECT_NE(endpoint->port(), 0);

  std::optional<RawResponse> response = Fetch(endpoint->port(), "/metrics");
  ASSERT_TRUE(response.has_value());
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->Header("content-type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(response->body,
            "# HELP endpoint_slice_controller_syncs Syncs.\n"
            "# TYPE endpoint_slice_controller_syncs counter\n"
            "endpoint_slice_controller_syncs 3\n");

  // Without a registry there is nothing at /metrics.
  auto bare = StartEndpoint(TestOptions());
  ASSERT_NE(bare, nullptr);
  EXPECT_EQ(Fetch(bare->port(), "/metrics")->status, 404);
}

TEST(HttpEndpointTest, ProbesPassWithPingOnly) {
  auto endpoint = StartEndpoint(TestOptions());
  ASSERT_NE(endpoint, nullptr);
  for (const std::string probe : {"healthz", "livez", "readyz"}) {
    SCOPED_TRACE(probe);
    std::optional<RawResponse> plain = Fetch(endpoint->port(), "/" + probe);
    ASSERT_TRUE(plain.has_value());
    EXPECT_EQ(plain->status, 200);
    EXPECT_EQ(plain->body, "ok");
    EXPECT_EQ(plain->Header("content-type"), "text/plain; charset=utf-8");
    EXPECT_EQ(plain->Header("x-content-type-options"), "nosniff");
    std::optional<RawResponse> verbose = Fetch(endpoint->port(), "/" + probe + "?verbose");
    ASSERT_TRUE(verbose.has_value());
    EXPECT_EQ(verbose->status, 200);
    EXPECT_EQ(verbose->body, "[+]ping ok\n" + probe + " check passed\n");
    EXPECT_EQ(Fetch(endpoint->port(), "/" + probe + "/ping")->body, "ok");
  }
}

// A failing check fails the probes it belongs to with the full listing, verbose or not, and
// leaves the others alone; checks are listed in registration order.
TEST(HttpEndpointTest, FailingCheckListsEveryCheckWithItsReason) {
  auto endpoint = StartEndpoint(TestOptions());
  ASSERT_NE(endpoint, nullptr);
  std::atomic<bool> synced{false};
  ASSERT_TRUE(endpoint->AddCheck("leaderElection", [] { return Status::Ok(); }).ok());
  ASSERT_TRUE(endpoint
                  ->AddCheck("informer-sync",
                             [&] {
                               return synced ? Status::Ok()
                                             : UnavailableError("pods not synced yet");
                             },
                             {Probe::kReadyz})
                  .ok());

  const std::string failed =
      "[+]ping ok\n[+]leaderElection ok\n[-]informer-sync failed: pods not synced yet\n"
      "readyz check failed\n";
  for (const std::string target : {"/readyz", "/readyz?verbose"}) {
    std::optional<RawResponse> response = Fetch(endpoint->port(), target);
    ASSERT_TRUE(response.has_value());
    EXPECT_EQ(response->status, 500);
    EXPECT_EQ(response->body, failed);
  }
  EXPECT_EQ(Fetch(endpoint->port(), "/healthz")->status, 200);
  EXPECT_EQ(Fetch(endpoint->port(), "/livez?verbose")->body,
            "[+]ping ok\n[+]leaderElection ok\nlivez check passed\n");

  // One check alone.
  std::optional<RawResponse> one = Fetch(endpoint->port(), "/readyz/informer-sync");
  ASSERT_TRUE(one.has_value());
  EXPECT_EQ(one->status, 500);
  EXPECT_EQ(one->body, "internal server error: pods not synced yet\n");
  EXPECT_EQ(Fetch(endpoint->port(), "/healthz/informer-sync")->status, 404);  // not a healthz check
  EXPECT_EQ(Fetch(endpoint->port(), "/readyz/leaderElection")->body, "ok");

  // Checks run on every request.
  synced = true;
  EXPECT_EQ(Fetch(endpoint->port(), "/readyz")->body, "ok");
  EXPECT_EQ(Fetch(endpoint->port(), "/readyz/informer-sync")->status, 200);
}

TEST(HttpEndpointTest, ExcludeSkipsChecksAndWarnsAboutUnknownOnes) {
  auto endpoint = StartEndpoint(TestOptions());
  ASSERT_NE(endpoint, nullptr);
  ASSERT_TRUE(endpoint->AddCheck("etcd", [] { return InternalError("down"); }).ok());
  ASSERT_TRUE(endpoint->AddCheck("informers", [] { return InternalError("stale"); }).ok());

  EXPECT_EQ(Fetch(endpoint->port(), "/healthz?exclude=etcd&exclude=informers")->body, "ok");
  std::optional<RawResponse> verbose =
      Fetch(endpoint->port(), "/healthz?verbose=1&exclude=etcd&exclude=informers");
  ASSERT_TRUE(verbose.has_value());
  EXPECT_EQ(verbose->status, 200);
  EXPECT_EQ(verbose->body,
            "[+]ping ok\n[+]etcd excluded: ok\n[+]informers excluded: ok\nhealthz check passed\n");

  std::optional<RawResponse> partly = Fetch(endpoint->port(), "/healthz?exclude=etcd&exclude=nope");
  ASSERT_TRUE(partly.has_value());
  EXPECT_EQ(partly->status, 500);
  EXPECT_EQ(partly->body,
            "[+]ping ok\n[+]etcd excluded: ok\n[-]informers failed: stale\n"
            "warn: some health checks cannot be excluded: no matches for \"nope\"\n"
            "healthz check failed\n");
}

TEST(HttpEndpointTest, AddCheckValidatesNamesAndDuplicates) {
  auto endpoint = StartEndpoint(TestOptions());
  ASSERT_NE(endpoint, nullptr);
  const auto ok = [] { return Status::Ok(); };
  EXPECT_EQ(endpoint->AddCheck("", ok).code(), StatusCode::kInvalid);
  EXPECT_EQ(endpoint->AddCheck("a b", ok).code(), StatusCode::kInvalid);
  EXPECT_EQ(endpoint->AddCheck("x", nullptr).code(), StatusCode::kInvalid);
  EXPECT_EQ(endpoint->AddCheck("ping", ok).code(), StatusCode::kAlreadyExists);
  ASSERT_TRUE(endpoint->AddCheck("poststarthook/informers", ok, {Probe::kReadyz}).ok());
  // A clash on one probe registers nothing, on any probe.
  ASSERT_TRUE(endpoint->AddCheck("sync", ok, {Probe::kLivez}).ok());
  Status clash = endpoint->AddCheck("sync", ok, {Probe::kHealthz, Probe::kLivez});
  EXPECT_EQ(clash.code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(clash.message(), "health check \"sync\" is already registered for /livez");
  EXPECT_EQ(Fetch(endpoint->port(), "/healthz/sync")->status, 404);
  EXPECT_EQ(Fetch(endpoint->port(), "/readyz/poststarthook/informers")->body, "ok");
}

TEST(HttpEndpointTest, UnknownPathsAndMethods) {
  Registry registry;
  auto endpoint = StartEndpoint(TestOptions(&registry));
  ASSERT_NE(endpoint, nullptr);
  for (const std::string target :
       {"/", "/metricsx", "/healthz/", "/healthz/nope", "/debug/pprof"}) {
    SCOPED_TRACE(target);
    std::optional<RawResponse> response = Fetch(endpoint->port(), target);
    ASSERT_TRUE(response.has_value());
    EXPECT_EQ(response->status, 404);
    EXPECT_EQ(response->body, "404 page not found\n");
  }
  for (const std::string method : {"POST", "PUT", "DELETE", "OPTIONS"}) {
    SCOPED_TRACE(method);
    std::optional<RawResponse> response =
        Fetch(endpoint->port(), "/metrics", method, "Content-Length: 0\r\n");
    ASSERT_TRUE(response.has_value());
    EXPECT_EQ(response->status, 405);
    EXPECT_EQ(response->Header("allow"), "GET, HEAD");
  }
  EXPECT_EQ(Fetch(endpoint->port(), "/nothing", "POST", "Content-Length: 0\r\n")->status, 404);
}

// HEAD answers with GET's headers and no body, and the connection stays usable: no stray body
// bytes precede the next response.
TEST(HttpEndpointTest, HeadAndKeepAlive) {
  Registry registry;
  registry.AddGauge("up", "Up.").value()->Set(1);
  auto endpoint = StartEndpoint(TestOptions(&registry));
  ASSERT_NE(endpoint, nullptr);
  RawClient client(endpoint->port());
  ASSERT_TRUE(client.connected());
  ASSERT_TRUE(client.Send(Request("HEAD", "/metrics")));
  std::optional<RawResponse> head = client.Read(/*head=*/true);
  ASSERT_TRUE(head.has_value());
  EXPECT_EQ(head->status, 200);
  EXPECT_EQ(head->Header("content-length"), std::to_string(registry.Expose().size()));
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(client.Send(Request("GET", "/metrics")));
    std::optional<RawResponse> get = client.Read();
    ASSERT_TRUE(get.has_value());
    EXPECT_EQ(get->body, registry.Expose());
  }
  // Two pipelined requests are answered in order.
  ASSERT_TRUE(client.Send(Request("GET", "/livez") + Request("GET", "/nope")));
  EXPECT_EQ(client.Read()->status, 200);
  EXPECT_EQ(client.Read()->status, 404);
  // Connection: close is honoured.
  ASSERT_TRUE(client.Send(Request("GET", "/healthz", "Connection: close\r\n")));
  EXPECT_EQ(client.Read()->body, "ok");
  EXPECT_TRUE(client.WaitClosed());
}

TEST(HttpEndpointTest, HttpOneZeroClosesAfterTheResponse) {
  auto endpoint = StartEndpoint(TestOptions());
  ASSERT_NE(endpoint, nullptr);
  RawClient client(endpoint->port());
  ASSERT_TRUE(client.Send("GET /healthz HTTP/1.0\r\n\r\n"));
  std::optional<RawResponse> response = client.Read();
  ASSERT_TRUE(response.has_value());
  EXPECT_EQ(response->body, "ok");
  EXPECT_TRUE(client.WaitClosed());
}

TEST(HttpEndpointTest, BearerTokenGuardsMetricsOnly) {
  Registry registry;
  HttpEndpointOptions options = TestOptions(&registry);
  options.bearer_token = "s3cret";
  auto endpoint = StartEndpoint(options);
  ASSERT_NE(endpoint, nullptr);
  std::optional<RawResponse> missing = Fetch(endpoint->port(), "/metrics");
  ASSERT_TRUE(missing.has_value());
  EXPECT_EQ(missing->status, 401);
  EXPECT_EQ(missing->Header("www-authenticate"), "Bearer");
  EXPECT_EQ(Fetch(endpoint->port(), "/metrics", "GET", "Authorization: Bearer s3cre\r\n")->status,
            401);
  EXPECT_EQ(Fetch(endpoint->port(), "/metrics", "GET", "Authorization: Basic s3cret\r\n")->status,
            401);
  EXPECT_EQ(Fetch(endpoint->port(), "/metrics", "GET", "Authorization: Bearer s3cret\r\n")->status,
            200);
  EXPECT_EQ(Fetch(endpoint->port(), "/healthz")->status, 200);  // kubelet probes carry no token
}

TEST(HttpEndpointTest, OversizedRequestsAreRefused) {
  auto endpoint = StartEndpoint(TestOptions());
  ASSERT_NE(endpoint, nullptr);
  {
    RawClient client(endpoint->port());
    ASSERT_TRUE(
        client.Send(Request("GET", "/healthz", "X-Big: " + std::string(16384, 'a') + "\r\n")));
    std::optional<RawResponse> response = client.Read();
    ASSERT_TRUE(response.has_value());
    EXPECT_EQ(response->status, 431);
    EXPECT_EQ(response->body, "Request Header Fields Too Large: limit is 8192 bytes\n");
    EXPECT_TRUE(client.WaitClosed());
  }
  {
    RawClient client(endpoint->port());
    ASSERT_TRUE(client.Send(Request("GET", "/healthz", "Content-Length: 100000\r\n") +
                            std::string(100000, 'b')));
    std::optional<RawResponse> response = client.Read();
    ASSERT_TRUE(response.has_value());
    EXPECT_EQ(response->status, 413);
    EXPECT_TRUE(client.WaitClosed());
  }
  EXPECT_EQ(Fetch(endpoint->port(), "/healthz")->status, 200);
}

TEST(HttpEndpointTest, MalformedRequestsGet400AndClose) {
  auto endpoint = StartEndpoint(TestOptions());
  ASSERT_NE(endpoint, nullptr);
  const std::vector<std::string> garbage = {
      "GET /healthz HTTP/9.9\r\n\r\n",
      "G(T /healthz HTTP/1.1\r\n\r\n",
      "GET /healthz HTTP/1.1\r\nBad Header\r\n\r\n",
      "GET /healthz HTTP/1.1\r\nContent-Length: x\r\n\r\n",
      "GET healthz HTTP/1.1\r\nHost: a\r\n\r\n",
      std::string("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n", 16),  // a TLS hello
  };
  for (const std::string& bytes : garbage) {
    SCOPED_TRACE(bytes);
    RawClient client(endpoint->port());
    ASSERT_TRUE(client.Send(bytes));
    std::optional<RawResponse> response = client.Read();
    ASSERT_TRUE(response.has_value());
    EXPECT_EQ(response->status, 400);
    EXPECT_TRUE(client.WaitClosed());
  }
  EXPECT_EQ(Fetch(endpoint->port(), "/healthz")->status, 200);
}

// A client that sends half a request and stalls holds nothing: others are served meanwhile, and
// it is closed once read_timeout passes. An idle keep-alive connection is closed after
// idle_timeout.
TEST(HttpEndpointTest, StalledClientsDoNotHoldTheEndpoint) {
  HttpEndpointOptions options = TestOptions();
  options.read_timeout = milliseconds(300);
  options.idle_timeout = milliseconds(600);
  auto endpoint = StartEndpoint(options);
  ASSERT_NE(endpoint, nullptr);

  RawClient stalled(endpoint->port());
  ASSERT_TRUE(stalled.Send("GET /healthz HTTP/1.1\r\nHo"));
  RawClient idle(endpoint->port());
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 5; ++i) EXPECT_EQ(Fetch(endpoint->port(), "/healthz")->body, "ok");

  // A slowloris: one byte at a time, never finishing, is closed by the request deadline.
  RawClient trickle(endpoint->port());
  bool closed_early = false;
  for (int i = 0; i < 20 && !closed_early; ++i) {
    closed_early = !trickle.Send("X");
    std::this_thread::sleep_for(milliseconds(50));
  }
  EXPECT_TRUE(stalled.WaitClosed());
  EXPECT_EQ(stalled.leftover(), "");  // closed without an answer
  EXPECT_TRUE(trickle.WaitClosed());
  EXPECT_TRUE(idle.WaitClosed());
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_GE(took, milliseconds(550));
  EXPECT_LT(took, milliseconds(4000));
}

TEST(HttpEndpointTest, ConnectionsBeyondTheLimitAreClosed) {
  HttpEndpointOptions options = TestOptions();
  options.max_connections = 2;
  auto endpoint = StartEndpoint(options);
  ASSERT_NE(endpoint, nullptr);
  auto first = std::make_unique<RawClient>(endpoint->port());
  RawClient second(endpoint->port());
  // Make sure both are accepted before the third arrives.
  ASSERT_TRUE(first->Send(Request("GET", "/healthz")));
  ASSERT_TRUE(second.Send(Request("GET", "/healthz")));
  ASSERT_TRUE(first->Read().has_value());
  ASSERT_TRUE(second.Read().has_value());
  RawClient third(endpoint->port());
  EXPECT_TRUE(third.WaitClosed());
  first.reset();
  // The slot frees once the server has seen the close.
  bool served = false;
  for (int i = 0; i < 100 && !served; ++i) {
    std::optional<RawResponse> response = Fetch(endpoint->port(), "/healthz");
    served = response.has_value() && response->status == 200;
    if (!served) std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_TRUE(served);
}

TEST(HttpEndpointTest, StopClosesConnectedClientsPromptly) {
  auto endpoint = StartEndpoint(TestOptions());
  ASSERT_NE(endpoint, nullptr);
  RawClient idle(endpoint->port());
  ASSERT_TRUE(idle.Send(Request("GET", "/healthz")));
  ASSERT_TRUE(idle.Read().has_value());  // now idle between requests
  RawClient half(endpoint->port());
  ASSERT_TRUE(half.Send("GET /readyz HTTP/1.1\r\n"));
  RawClient silent(endpoint->port());
  std::this_thread::sleep_for(milliseconds(50));  // let the server accept them

  const auto start = std::chrono::steady_clock::now();
  endpoint->Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(1500));
  EXPECT_TRUE(idle.WaitClosed());
  EXPECT_TRUE(half.WaitClosed());
  EXPECT_TRUE(silent.WaitClosed());
  endpoint->Stop();   // idempotent
  endpoint->Start();  // does nothing once stopped
  RawClient late(endpoint->port());
  EXPECT_FALSE(late.connected() && late.Send(Request("GET", "/healthz")) && late.Read());
}

// A client that asks for a large scrape and never reads cannot keep Stop() waiting past the
// grace period.
TEST(HttpEndpointTest, StopDoesNotWaitForAClientThatNeverReads) {
  // About 10 MB of exposition: more than the loopback socket buffers hold.
  Registry registry;
  CounterFamily* family = registry.AddCounterFamily("big_total", "Many series.", {"key"}).value();
  const std::string padding(250, 'x');
  for (int i = 0; i < 40000; ++i) {
    family->WithLabelValues({padding + std::to_string(i)}).value()->Inc();
  }
  HttpEndpointOptions options = TestOptions(&registry);
  options.stop_grace = milliseconds(300);
  auto endpoint = StartEndpoint(options);
  ASSERT_NE(endpoint, nullptr);
  RawClient reader(endpoint->port());
  ASSERT_TRUE(reader.Send(Request("GET", "/metrics")));
  // Its head has arrived: the exposition is rendered (a loaded machine may take seconds to render
  // it, which Stop() cannot cut short) and being written, the rest stuck in full buffers.
  std::optional<RawResponse> head = reader.Read(/*head=*/true);
  ASSERT_TRUE(head.has_value());
  EXPECT_EQ(head->status, 200);
  const auto start = std::chrono::steady_clock::now();
  endpoint->Stop();
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_GE(took, milliseconds(250));   // it did wait for the response being written...
  EXPECT_LT(took, milliseconds(2000));  // ...but only for the grace period
  EXPECT_TRUE(reader.WaitClosed());
}

TEST(HttpEndpointTest, CreateReportsBadAddressesAndBusyPorts) {
  HttpEndpointOptions options = TestOptions();
  options.bind_address = "localhost:80";
  EXPECT_EQ(HttpEndpoint::Create(options).status().code(), StatusCode::kInvalid);
  options = TestOptions();
  options.io_threads = 0;
  EXPECT_EQ(HttpEndpoint::Create(options).status().code(), StatusCode::kInvalid);

  auto first = StartEndpoint(TestOptions());
  ASSERT_NE(first, nullptr);
  options = TestOptions();
  options.port = first->port();
  Result<std::unique_ptr<HttpEndpoint>> second = HttpEndpoint::Create(options);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(second.status().message(),
            "http endpoint: listen on 127.0.0.1:" + std::to_string(first->port()) +
                ": Address already in use");
  EXPECT_EQ(HttpEndpointOptions{}.port, 10252);
  EXPECT_EQ(HttpEndpointOptions{}.bind_address, "0.0.0.0");
}

// Scrapes and probes from several keep-alive clients at once, while the metrics and a check
// change underneath: every answer is whole and well-formed.
TEST(HttpEndpointTest, ConcurrentScrapesAndProbes) {
  Registry registry;
  Counter* counter = registry.AddCounter("events_total", "Events.").value();
  HttpEndpointOptions options = TestOptions(&registry);
  options.io_threads = 2;
  auto endpoint = StartEndpoint(options);
  ASSERT_NE(endpoint, nullptr);
  std::atomic<bool> healthy{true};
  ASSERT_TRUE(endpoint
                  ->AddCheck("flappy",
                             [&] { return healthy ? Status::Ok() : UnavailableError("flapping"); })
                  .ok());
  std::atomic<bool> done{false};
  std::thread writer([&] {
    while (!done) {
      counter->Inc();
      healthy = !healthy;
      std::this_thread::yield();
    }
  });
  constexpr int kClients = 6;
  constexpr int kRequests = 40;
  std::atomic<int> good{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      RawClient client(endpoint->port());
      for (int i = 0; i < kRequests; ++i) {
        const bool scrape = (i + c) % 2 == 0;
        if (!client.Send(Request("GET", scrape ? "/metrics" : "/healthz"))) return;
        std::optional<RawResponse> response = client.Read();
        if (!response) return;
        const bool whole =
            scrape ? response->status == 200 &&
                         response->body.rfind("# HELP events_total Events.\n", 0) == 0 &&
                         response->body.back() == '\n'
                   : (response->status == 200 && response->body == "ok") ||
                         (response->status == 500 &&
                          response->body.find("[-]flappy failed: flapping\n") != std::string::npos);
        if (whole) ++good;
      }
    });
  }
  for (std::thread& client : clients) client.join();
  done = true;
  writer.join();
  EXPECT_EQ(good, kClients * kRequests);
  // Checks registered while serving show up.
  ASSERT_TRUE(endpoint->AddCheck("late", [] { return Status::Ok(); }).ok());
  EXPECT_EQ(Fetch(endpoint->port(), "/healthz/late")->body, "ok");
}

}  // namespace
}  // namespace slicewright::runtime

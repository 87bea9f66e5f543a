// Tests the UDP and TCP server on loopback with the responder behind it: answers over both
// transports, pipelined TCP queries, garbage on both followed by right answers, a bad address.
#include "dns/server.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dns/responder.h"
#include "dns/wire.h"

namespace slicewright::dns {
namespace {

constexpr std::uint16_t kA = 1;
constexpr int kTimeoutMs = 5000;

sockaddr_in Loopback(std::uint16_t port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return address;
}

sockaddr* Generic(sockaddr_in& address) {
  return reinterpret_cast<sockaddr*>(&address);  // NOLINT: the sockets API's generic type
}

// One UDP exchange on a connected socket (so a closed port fails at once with ECONNREFUSED);
// nullopt when nothing comes back within the timeout.
std::optional<std::vector<std::uint8_t>> Udp(std::uint16_t port,
                                             const std::vector<std::uint8_t>& message) {
  const int fd = socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in to = Loopback(port);
  connect(fd, Generic(to), sizeof(to));
  send(fd, message.data(), message.size(), 0);
  pollfd p{fd, POLLIN, 0};
  std::optional<std::vector<std::uint8_t>> out;
  if (poll(&p, 1, kTimeoutMs) == 1) {
    std::vector<std::uint8_t> buffer(65535);
    const ssize_t n = recv(fd, buffer.data(), buffer.size(), 0);
    if (n >= 0) out = std::vector<std::uint8_t>(buffer.begin(), buffer.begin() + n);
  }
  close(fd);
  return out;
}

bool ReadAll(int fd, std::uint8_t* data, std::size_t size) {
  std::size_t got = 0;
  while (got < size) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, kTimeoutMs) != 1) return false;
    const ssize_t n = recv(fd, data + got, size - got, 0);
    if (n <= 0) return false;
    got += static_cast<std::size_t>(n);
  }
  return true;
}

class TcpClient {
 public:
  explicit TcpClient(std::uint16_t port) : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in to = Loopback(port);
    connected_ = connect(fd_, Generic(to), sizeof(to)) == 0;
  }
  ~TcpClient() { close(fd_); }
  TcpClient(const TcpClient&) = delete;
  TcpClient& operator=(const TcpClient&) = delete;
  bool connected() const { return connected_; }
  void SendRaw(const std::vector<std::uint8_t>& bytes) {
    ASSERT_EQ(send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(bytes.size()));
  }
  void Send(const std::vector<std::uint8_t>& message) {
    std::vector<std::uint8_t> framed = {static_cast<std::uint8_t>(message.size() >> 8),
                                        static_cast<std::uint8_t>(message.size() & 0xFF)};
    framed.insert(framed.end(), message.begin(), message.end());
    SendRaw(framed);
  }
  std::optional<std::vector<std::uint8_t>> Receive() {
    std::uint8_t length[2];
    if (!ReadAll(fd_, length, 2)) return std::nullopt;
    std::vector<std::uint8_t> message((length[0] << 8) | length[1]);
    if (!ReadAll(fd_, message.data(), message.size())) return std::nullopt;
    return message;
  }

 private:
  int fd_;
  bool connected_ = false;
};

// The first A record's address of a response, or what went wrong.
std::string FirstAOf(const std::optional<std::vector<std::uint8_t>>& response) {
  if (!response.has_value()) return "no response";
  Result<DecodedResponse> decoded = DecodeResponse(*response);
  if (!decoded.ok()) return decoded.status().ToString();
  if (decoded->answer.answer.empty()) return "no answer";
  return net::FormatIp(decoded->answer.answer[0].address);
}

class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    model::ServiceImport web;
    web.metadata.namespace_ = "ns";
    web.metadata.name = "web";
    web.spec.type = "ClusterSetIP";
    web.spec.ips = {"10.96.0.10"};
    zone_->Put(std::make_shared<const ServiceView>(
        BuildServiceView(web, {}, [](std::string_view) { return true; }, {})));
    ServerOptions options;
    options.address = "127.0.0.1:0";
    options.tcp_idle_timeout = std::chrono::milliseconds(2000);
    auto zone = zone_;
    Result<std::unique_ptr<Server>> server =
        Server::Create(options, [zone](std::span<const std::uint8_t> message, bool tcp,
                                       std::vector<std::uint8_t>& response) {
          response = Respond(*zone, message, tcp, ResponderOptions{});
        });
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(server).value();
    ASSERT_TRUE(server_->Start().ok());
  }

  static std::string FirstA(const std::optional<std::vector<std::uint8_t>>& response) {
    return FirstAOf(response);
  }

  std::shared_ptr<Zone> zone_ = std::make_shared<Zone>();
  std::unique_ptr<Server> server_;
};

// UDP and TCP on the same port answer the same question.
TEST_F(ServerTest, AnswersOverUdpAndTcp) {
  ASSERT_NE(server_->port(), 0);
  EXPECT_EQ(server_->address(), "127.0.0.1:" + std::to_string(server_->port()));
  const std::vector<std::uint8_t> query = EncodeQuery(1, "web.ns.svc.clusterset.local", kA, 0);
  EXPECT_EQ(FirstA(Udp(server_->port(), query)), "10.96.0.10");
  TcpClient tcp(server_->port());
  ASSERT_TRUE(tcp.connected());
  tcp.Send(query);
  tcp.Send(EncodeQuery(2, "web.ns.svc.clusterset.local", kA, 0));  // pipelined
  EXPECT_EQ(FirstA(tcp.Receive()), "10.96.0.10");
  EXPECT_EQ(FirstA(tcp.Receive()), "10.96.0.10");
  EXPECT_GE(server_->Stats().tcp_queries, 2U);
}

// Garbage over UDP (short, random, a response) and TCP (a FORMERR-worthy message, then a cut
// connection) leaves the server answering right.
TEST_F(ServerTest, GarbageThenRightAnswers) {
  const std::vector<std::uint8_t> query = EncodeQuery(3, "web.ns.svc.clusterset.local", kA, 0);
  // Too short for a header: dropped (counted), no answer.
  const int fd = socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in to = Loopback(server_->port());
  const std::uint8_t two_bytes[] = {0x01, 0x02};
  sendto(fd, two_bytes, sizeof(two_bytes), 0, Generic(to), sizeof(to));
  close(fd);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (server_->Stats().dropped == 0 && std::chrono::steady_clock::now() < deadline) {
    poll(nullptr, 0, 1);
  }
  EXPECT_EQ(server_->Stats().dropped, 1U);
  std::vector<std::uint8_t> noise(300);
  for (std::size_t i = 0; i < noise.size(); ++i) noise[i] = static_cast<std::uint8_t>(i * 37 + 11);
  noise[2] = 0;  // a query header, so it earns a FORMERR rather than silence
  const auto formerr = Udp(server_->port(), noise);
  ASSERT_TRUE(formerr.has_value());
  EXPECT_EQ(static_cast<int>(DecodeResponse(*formerr)->answer.rcode), 1);
  {
    TcpClient tcp(server_->port());
    tcp.Send(noise);
    const auto answer = tcp.Receive();
    ASSERT_TRUE(answer.has_value());
    EXPECT_EQ(static_cast<int>(DecodeResponse(*answer)->answer.rcode), 1);
    tcp.Send(query);  // the connection is still good
    EXPECT_EQ(FirstA(tcp.Receive()), "10.96.0.10");
  }
  {
    TcpClient half(server_->port());
    half.SendRaw({0x01, 0x00, 0xAB});  // promises 256 bytes, sends one, hangs up
  }
  EXPECT_EQ(FirstA(Udp(server_->port(), query)), "10.96.0.10");
  TcpClient again(server_->port());
  again.Send(query);
  EXPECT_EQ(FirstA(again.Receive()), "10.96.0.10");
}

// Queries that arrived between Create() (the socket is bound) and Start() are answered at once,
// every one of them, in more than one batch when the batch is small: the wait for the socket to be
// readable sees what was already queued, and a cut-off batch loop leaves nothing behind.
TEST_F(ServerTest, AnswersQueriesQueuedBeforeStart) {
  auto zone = zone_;
  ServerOptions options;
  options.address = "127.0.0.1:0";
  options.udp_batch = 2;  // 8 batches a wake: 16 datagrams, then the loop waits again
  Result<std::unique_ptr<Server>> server = Server::Create(
      options,
      [zone](std::span<const std::uint8_t> message, bool tcp, std::vector<std::uint8_t>& response) {
        response = Respond(*zone, message, tcp, ResponderOptions{});
      });
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const int fd = socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in to = Loopback((*server)->port());
  ASSERT_EQ(connect(fd, Generic(to), sizeof(to)), 0);
  constexpr int kQueries = 40;
  for (int i = 0; i < kQueries; ++i) {
    const std::vector<std::uint8_t> query =
        EncodeQuery(static_cast<std::uint16_t>(i), "web.ns.svc.clusterset.local", kA, 0);
    ASSERT_EQ(send(fd, query.data(), query.size(), 0), static_cast<ssize_t>(query.size()));
  }
  ASSERT_TRUE((*server)->Start().ok());
  int answered = 0;
  std::vector<std::uint8_t> buffer(65535);
  pollfd p{fd, POLLIN, 0};
  while (answered < kQueries && poll(&p, 1, kTimeoutMs) == 1) {
    const ssize_t n = recv(fd, buffer.data(), buffer.size(), 0);
    ASSERT_GT(n, 0);
    EXPECT_EQ(FirstA(std::vector<std::uint8_t>(buffer.begin(), buffer.begin() + n)), "10.96.0.10");
    ++answered;
  }
  close(fd);
  EXPECT_EQ(answered, kQueries);
  EXPECT_EQ((*server)->Stats().udp_queries, static_cast<std::uint64_t>(kQueries));
}

// A bad address is kInvalid naming it; a port in use is kUnavailable.
TEST_F(ServerTest, BadAddresses) {
  const auto handler = [](std::span<const std::uint8_t>, bool, std::vector<std::uint8_t>&) {};
  Result<std::unique_ptr<Server>> bad = Server::Create({.address = "nonsense"}, handler);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalid);
  EXPECT_NE(bad.status().ToString().find("nonsense"), std::string::npos);
  Result<std::unique_ptr<Server>> taken = Server::Create({.address = server_->address()}, handler);
  ASSERT_FALSE(taken.ok());
  EXPECT_EQ(taken.status().code(), StatusCode::kUnavailable);
}

// Stop() ends serving (the port is closed: the client's connected socket is refused at once); it
// is idempotent.
TEST_F(ServerTest, StopsServing) {
  const std::uint16_t port = server_->port();
  server_->Stop();
  server_->Stop();
  EXPECT_FALSE(Udp(port, EncodeQuery(4, "web.ns.svc.clusterset.local", kA, 0)).has_value());
}

// Two I/O threads answer UDP and TCP clients through the Responder's cache while the zone's view
// of the service is replaced again and again: every answer is one of the views' addresses (the
// tsan build runs this test for data races).
TEST(ServerConcurrencyTest, ConcurrentQueriesWhileTheZoneChanges) {
  auto zone = std::make_shared<Zone>();
  model::ServiceImport web;
  web.metadata.namespace_ = "ns";
  web.metadata.name = "web";
  web.spec.type = "ClusterSetIP";
  const auto live = [](std::string_view) { return true; };
  const auto put = [&](int i) {
    web.spec.ips = {i % 2 == 0 ? "10.96.0.10" : "10.96.0.11"};
    zone->Put(std::make_shared<const ServiceView>(BuildServiceView(web, {}, live, {})));
  };
  put(0);
  auto responder = std::make_shared<Responder>(zone, ResponderOptions{});
  ServerOptions options;
  options.address = "127.0.0.1:0";
  options.io_threads = 2;
  Result<std::unique_ptr<Server>> server =
      Server::Create(options, [responder](std::span<const std::uint8_t> message, bool tcp,
                                          std::vector<std::uint8_t>& response) {
        responder->Respond(message, tcp, response);
      });
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  ASSERT_TRUE((*server)->Start().ok());
  const std::uint16_t port = (*server)->port();
  std::atomic<int> wrong{0};
  std::atomic<int> answered{0};
  const auto check = [&](const std::optional<std::vector<std::uint8_t>>& response) {
    const std::string ip = FirstAOf(response);
    if (ip == "10.96.0.10" || ip == "10.96.0.11") {
      answered.fetch_add(1);
    } else {
      wrong.fetch_add(1);
    }
  };
  std::thread writer([&] {
    for (int i = 1; i <= 300; ++i) put(i);
  });
  std::thread udp_client([&] {
    for (int i = 0; i < 200; ++i) {
      check(Udp(port, EncodeQuery(static_cast<std::uint16_t>(i), "web.ns.svc.clusterset.local", kA,
                                  1232)));
    }
  });
  std::thread tcp_client([&] {
    TcpClient tcp(port);
    for (int i = 0; i < 200; ++i) {
      tcp.Send(EncodeQuery(static_cast<std::uint16_t>(i), "WEB.ns.svc.clusterset.local", kA, 0));
      check(tcp.Receive());
    }
  });
  writer.join();
  udp_client.join();
  tcp_client.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(answered.load(), 400);
  (*server)->Stop();
}

}  // namespace
}  // namespace slicewright::dns

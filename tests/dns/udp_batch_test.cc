// Tests UDP batching on loopback sockets: one ServeOnce() takes every waiting datagram, answers
// each through the responder and sends the answers in order to their senders; malformed, oversized
// and response packets in the middle of a batch get FORMERR or nothing without disturbing the
// others; an answer the kernel refuses is skipped; a batch never takes more than its capacity.
#include "dns/udp_batch.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
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

sockaddr* Generic(sockaddr_in& address) {
  return reinterpret_cast<sockaddr*>(&address);  // NOLINT: the sockets API's generic type
}

// A UDP socket bound to 127.0.0.1 on a free port, closed with the object.
class LoopbackSocket {
 public:
  LoopbackSocket() : fd_(socket(AF_INET, SOCK_DGRAM, 0)) {
    address_.sin_family = AF_INET;
    address_.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd_, Generic(address_), sizeof(address_));
    socklen_t length = sizeof(address_);
    getsockname(fd_, Generic(address_), &length);
  }
  ~LoopbackSocket() { close(fd_); }
  LoopbackSocket(const LoopbackSocket&) = delete;
  LoopbackSocket& operator=(const LoopbackSocket&) = delete;

  int fd() const { return fd_; }
  void SendTo(const LoopbackSocket& to, const std::vector<std::uint8_t>& datagram) const {
    sockaddr_in address = to.address_;
    ASSERT_EQ(sendto(fd_, datagram.data(), datagram.size(), 0, Generic(address), sizeof(address)),
              static_cast<ssize_t>(datagram.size()));
  }
  // The next datagram, or nullopt when none comes within `timeout_ms`.
  std::optional<std::vector<std::uint8_t>> Receive(int timeout_ms = 2000) const {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, timeout_ms) != 1) return std::nullopt;
    std::vector<std::uint8_t> buffer(65535);
    const ssize_t n = recv(fd_, buffer.data(), buffer.size(), 0);
    if (n < 0) return std::nullopt;
    buffer.resize(static_cast<std::size_t>(n));
    return buffer;
  }

 private:
  int fd_;
  sockaddr_in address_{};
};

// A response's id and rcode, and its first A record's address ("-" without one).
std::string Summary(const std::optional<std::vector<std::uint8_t>>& response) {
  if (!response.has_value()) return "no response";
  Result<DecodedResponse> decoded = DecodeResponse(*response);
  if (!decoded.ok()) return decoded.status().ToString();
  std::string out = std::to_string(decoded->id) + " " +
                    std::to_string(static_cast<int>(decoded->answer.rcode)) + " ";
  out += decoded->answer.answer.empty() ? "-" : net::FormatIp(decoded->answer.answer[0].address);
  return out;
}

class UdpBatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    model::ServiceImport web;
    web.metadata.namespace_ = "ns";
    web.metadata.name = "web";
    web.spec.type = "ClusterSetIP";
    web.spec.ips = {"10.96.0.10"};
    zone_->Put(std::make_shared<const ServiceView>(
        BuildServiceView(web, {}, [](std::string_view) { return true; }, {})));
  }

  static std::vector<std::uint8_t> Query(std::uint16_t id) {
    return EncodeQuery(id, "web.ns.svc.clusterset.local", kA, 1232);
  }

  std::shared_ptr<Zone> zone_ = std::make_shared<Zone>();
  Responder responder_{zone_, ResponderOptions{}};
  UdpBatch::Handler answer_ = [this](std::span<const std::uint8_t> query,
                                     std::vector<std::uint8_t>& response) {
    responder_.Respond(query, false, response);
  };
  LoopbackSocket server_;
  LoopbackSocket client_;
};

// Seven datagrams in one batch, hostile ones among the good: each good query is answered, the
// malformed and the oversized get FORMERR (with their ids), the runt and the response get nothing,
// and the answers arrive in the order of the queries.
TEST_F(UdpBatchTest, MalformedPacketsInTheMiddleOfABatch) {
  std::vector<std::uint8_t> two_questions = Query(2);
  two_questions[5] = 2;
  std::vector<std::uint8_t> oversized = Query(4);
  oversized.resize(5000, 0);  // larger than any query we accept: cut to the buffer, FORMERR
  std::vector<std::uint8_t> response = Query(5);
  response[2] |= 0x80;
  for (const std::vector<std::uint8_t>& datagram :
       {Query(1), two_questions, std::vector<std::uint8_t>{1, 2, 3, 4, 5}, oversized, response,
        Query(6), Query(7)}) {
    client_.SendTo(server_, datagram);
  }
  UdpBatch batch(32, kMaxQueryBytes + 1);
  EXPECT_EQ(batch.ServeOnce(server_.fd(), answer_), 7U);  // loopback queues at send: one batch
  EXPECT_EQ(Summary(client_.Receive()), "1 0 10.96.0.10");
  EXPECT_EQ(Summary(client_.Receive()), "2 1 -");  // FORMERR
  EXPECT_EQ(Summary(client_.Receive()), "4 1 -");  // FORMERR
  EXPECT_EQ(Summary(client_.Receive()), "6 0 10.96.0.10");
  EXPECT_EQ(Summary(client_.Receive()), "7 0 10.96.0.10");
  EXPECT_EQ(Summary(client_.Receive(100)), "no response");
  EXPECT_EQ(batch.ServeOnce(server_.fd(), answer_), 0U);  // nothing waiting: no block
}

// Answers go back to each sender: two clients' queries in one batch.
TEST_F(UdpBatchTest, AnswersEachSender) {
  LoopbackSocket other;
  client_.SendTo(server_, Query(10));
  other.SendTo(server_, Query(20));
  client_.SendTo(server_, Query(11));
  UdpBatch batch(8, kMaxQueryBytes + 1);
  EXPECT_EQ(batch.ServeOnce(server_.fd(), answer_), 3U);
  EXPECT_EQ(Summary(client_.Receive()), "10 0 10.96.0.10");
  EXPECT_EQ(Summary(client_.Receive()), "11 0 10.96.0.10");
  EXPECT_EQ(Summary(other.Receive()), "20 0 10.96.0.10");
}

// A batch takes at most its capacity; the rest wait for the next one.
TEST_F(UdpBatchTest, TakesAtMostItsCapacity) {
  for (std::uint16_t id = 1; id <= 5; ++id) client_.SendTo(server_, Query(id));
  UdpBatch batch(2, kMaxQueryBytes + 1);
  EXPECT_EQ(batch.ServeOnce(server_.fd(), answer_), 2U);
  EXPECT_EQ(batch.ServeOnce(server_.fd(), answer_), 2U);
  EXPECT_EQ(batch.ServeOnce(server_.fd(), answer_), 1U);
  EXPECT_EQ(batch.ServeOnce(server_.fd(), answer_), 0U);
  for (std::uint16_t id = 1; id <= 5; ++id) {
    EXPECT_EQ(Summary(client_.Receive()), std::to_string(id) + " 0 10.96.0.10");
  }
}

// An answer the kernel refuses (larger than a UDP datagram can be: EMSGSIZE) is skipped; the
// answers after it in the batch are still sent.
TEST_F(UdpBatchTest, SkipsAnAnswerThatCannotBeSent) {
  const UdpBatch::Handler oversized_for_id_2 = [this](std::span<const std::uint8_t> query,
                                                      std::vector<std::uint8_t>& response) {
    responder_.Respond(query, false, response);
    if (query.size() >= 2 && query[1] == 2) response.resize(70000, 0);
  };
  for (std::uint16_t id = 1; id <= 3; ++id) client_.SendTo(server_, Query(id));
  UdpBatch batch(8, kMaxQueryBytes + 1);
  EXPECT_EQ(batch.ServeOnce(server_.fd(), oversized_for_id_2), 3U);
  EXPECT_EQ(Summary(client_.Receive()), "1 0 10.96.0.10");
  EXPECT_EQ(Summary(client_.Receive()), "3 0 10.96.0.10");
  EXPECT_EQ(Summary(client_.Receive(100)), "no response");
}

}  // namespace
}  // namespace slicewright::dns

// What every replica serves runs without leadership: a standby controller-manager (another
// identity holds the Lease) serves the MCS agent's clusterset.local DNS from its own informers,
// /readyz/mcs-dns flips once they synced, and it writes nothing to the API server.
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "slicewright/client/rest_client.h"

#include "apiserver/api/embedded_crds.h"
#include "apiserver/rest/serve.h"
#include "controllers/manager/manager.h"
#include "dns/udp_query.h"
#include "dns/wire.h"
#include "fakes/loopback.h"

namespace slicewright::controllers {
namespace {

using test_support::Eventually;
using test_support::LoopbackAddress;
using test_support::PortOf;

std::string AskA(std::uint16_t port, const std::string& name) {
  return test_support::AskUdp(port, name, /*type=A*/ 1);
}

// The status code of GET `path` on 127.0.0.1:`port` (0 when nothing answers).
int HttpStatus(std::uint16_t port, const std::string& path) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in to = LoopbackAddress(port);
  int status = 0;
  if (connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof(to)) == 0) {  // NOLINT: as above
    const std::string request = "GET " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    send(fd, request.data(), request.size(), 0);
    std::string response;
    char buffer[512];
    pollfd p{fd, POLLIN, 0};
    while (poll(&p, 1, 2000) == 1) {
      const ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
      if (n <= 0) break;
      response.append(buffer, static_cast<std::size_t>(n));
    }
    if (response.rfind("HTTP/1.1 ", 0) == 0) status = std::stoi(response.substr(9, 3));
  }
  close(fd);
  return status;
}

// The resourceVersions of everything in `resource` (all namespaces), to see that nothing changed.
std::string Versions(client::RestClient& client, const client::ResourceRef& resource) {
  Result<std::string> listed = client.List(resource, "", {});
  if (!listed.ok()) return listed.status().ToString();
  std::string versions;
  const std::string key = R"("resourceVersion":")";
  // Every object's metadata.resourceVersion (the list's own comes first and is left out).
  std::size_t at = listed->find(key);
  at = at == std::string::npos ? at : listed->find(key, at + 1);
  while (at != std::string::npos) {
    const std::size_t start = at + key.size();
    versions += listed->substr(start, listed->find('"', start) - start) + ",";
    at = listed->find(key, start);
  }
  return versions;
}

TEST(ReplicaServiceTest, ConcurrentStandbyServesDnsAndWritesNothing) {
  test_support::TempDir dir;
  apiserver::ServeOptions serve;
  serve.listen = "127.0.0.1:0";
  serve.data_dir = dir.path();
  serve.io_threads = 2;
  serve.crds = apiserver::McsCrdManifests();
  auto server = apiserver::RunningApiServer::Start(std::move(serve));
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  auto client = test_support::LoopbackClient((*server)->port());
  const client::ResourceRef imports{"multicluster.x-k8s.io", "v1beta1", "serviceimports", true};
  ASSERT_TRUE(client
                  ->Create(imports, "default",
                           R"({"apiVersion":"multicluster.x-k8s.io/v1beta1","kind":"ServiceImport",
                  "metadata":{"name":"web","namespace":"default"},
                  "spec":{"type":"ClusterSetIP","ips":["10.96.0.9"],
                          "ports":[{"name":"http","protocol":"TCP","port":80}]}})")
                  .ok());
  // The leader is another replica, for the next hour.
  ASSERT_TRUE(client
                  ->Create(client::LeasesResource(), "kube-system",
                           R"({"apiVersion":"coordination.k8s.io/v1","kind":"Lease",
                  "metadata":{"name":"slicewright-controller-manager","namespace":"kube-system"},
                  "spec":{"holderIdentity":"the-leader","leaseDurationSeconds":3600,
                          "acquireTime":"2026-01-01T00:00:00.000000Z",
                          "renewTime":"2026-01-01T00:00:00.000000Z"}})")
                  .ok());

  ManagerOptions options;
  options.port = 0;
  options.bind_address = "127.0.0.1";
  options.leader_elect = true;
  options.identity = "standby";
  options.retry_period = std::chrono::milliseconds(200);
  options.controllers = {"*", "mcs"};
  options.mcs.cluster_id = "cluster-a";
  options.mcs.dns_address = "127.0.0.1:0";
  // The broker is never contacted: only the leader runs the agent.
  auto broker = test_support::LoopbackClient(1);
  auto manager = Manager::Create(options, *client, {{"broker", broker.get()}});
  ASSERT_TRUE(manager.ok()) << manager.status().ToString();
  const std::vector<ReplicaServing> served = (*manager)->ServedByEveryReplica();
  ASSERT_EQ(served.size(), 1U);
  EXPECT_EQ(served[0].name, "mcs-dns");
  const std::uint16_t dns_port = PortOf(served[0].address);
  const std::uint16_t http_port = (*manager)->port();

  // Created, not running: bound, SERVFAIL, not ready.
  EXPECT_EQ(AskA(dns_port, "web.default.svc.clusterset.local"), "SERVFAIL\n");
  EXPECT_EQ(HttpStatus(http_port, "/readyz/mcs-dns"), 500);
  const std::string before = Versions(*client, imports) + "|" +
                             Versions(*client, client::LeasesResource()) + "|" +
                             Versions(*client, client::EndpointSlicesResource());

  std::stop_source stop;
  Status result(StatusCode::kInternal, "Run did not return");
  std::thread runner([&] { result = (*manager)->Run(stop.get_token()); });
  const bool ready = Eventually([&] { return HttpStatus(http_port, "/readyz/mcs-dns") == 200; });
  const std::string answer = AskA(dns_port, "web.default.svc.clusterset.local");
  const int readyz = HttpStatus(http_port, "/readyz");
  // Some elector rounds (200 ms apart) as a standby, and the answers stay.
  const bool stays = !Eventually(
      [&] {
        return (*manager)->Ready() || AskA(dns_port, "web.default.svc.clusterset.local") != answer;
      },
      std::chrono::seconds(1));
  const std::string after = Versions(*client, imports) + "|" +
                            Versions(*client, client::LeasesResource()) + "|" +
                            Versions(*client, client::EndpointSlicesResource());
  Result<std::string> events = client->List(client::EventsResource(), "", {});
  stop.request_stop();
  runner.join();

  EXPECT_TRUE(ready);
  EXPECT_EQ(answer, "NOERROR aa\nanswer: web.default.svc.clusterset.local A 10.96.0.9\n");
  EXPECT_EQ(readyz, 200);  // a standby is ready: it serves
  EXPECT_TRUE(stays);
  EXPECT_FALSE((*manager)->Ready());  // never led
  // No write at all: no import, Lease or slice changed, no Event.
  // (The import's and the Lease's versions were read: "V1,|V2,|".)
  EXPECT_NE(before.find(",|"), before.rfind(",|")) << before;
  EXPECT_EQ(after, before);
  ASSERT_TRUE(events.ok()) << events.status().ToString();
  EXPECT_EQ(events->find("\"items\":[{"), std::string::npos) << *events;
  EXPECT_TRUE(result.ok()) << result.ToString();
  // Run returned: the DNS is stopped with it.
  EXPECT_EQ(HttpStatus(http_port, "/readyz/mcs-dns"), 500);
}

}  // namespace
}  // namespace slicewright::controllers

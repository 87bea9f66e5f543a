// The clusterset.local DNS every replica serves, against the embedded API server with the MCS
// CRDs and over real UDP: SERVFAIL until Start() (the caches synced), then the zone; a headless
// import's endpoints follow its status.clusters (what the leader judged live), not a liveness of
// its own; Stop() is not ready; the address's errors name the flag.
#include "controllers/mcs/dns_service.h"

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "apiserver/rest/serve.h"
#include "controllers/mcs/kinds.h"
#include "dns/udp_query.h"
#include "dns/wire.h"
#include "fakes/loopback.h"
#include "fakes/loopback_api_server.h"

namespace slicewright::controllers::mcs {
namespace {

using test_support::Eventually;
using test_support::PortOf;

constexpr std::uint16_t kA = 1;
constexpr std::uint16_t kTxt = 16;

std::string Ask(std::uint16_t port, const std::string& name, std::uint16_t type) {
  return test_support::AskUdp(port, name, type);
}

class DnsServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = test_support::StartLoopbackApiServer(dir_.path(), /*mcs_crds=*/true);
    client_ = test_support::LoopbackClient(server_->port());
    ASSERT_TRUE(test_support::CreateNamespace(*client_, "ns").ok());
    informers_ = std::make_unique<cache::InformerFactory>(*client_);
  }
  void TearDown() override {
    if (informers_ != nullptr) informers_->Stop();
  }

  // The headless import "db"'s status.clusters.
  Status SetClusters(const std::string& clusters) {
    Result<std::string> current = client_->Get(ServiceImportsResource(), "ns", "db");
    if (!current.ok()) return current.status();
    const std::string version_key = R"("resourceVersion":")";
    const std::size_t at = current->find(version_key) + version_key.size();
    const std::string version = current->substr(at, current->find('"', at) - at);
    return client_
        ->Update(ServiceImportsResource(), "ns", "db",
                 R"({"apiVersion":"multicluster.x-k8s.io/v1beta1","kind":"ServiceImport",
                   "metadata":{"name":"db","namespace":"ns","resourceVersion":")" +
                     version + R"("},
                   "spec":{"type":"Headless","ports":[{"name":"tcp","protocol":"TCP","port":42}]},
                   "status":{"clusters":[)" +
                     clusters + "]}}",
                 "status")
        .status();
  }

  test_support::TempDir dir_;
  std::unique_ptr<apiserver::RunningApiServer> server_;
  std::unique_ptr<client::RestClient> client_;
  std::unique_ptr<cache::InformerFactory> informers_;
};

TEST_F(DnsServiceTest, ServFailUntilSyncedThenTheZoneFollowingStatusClusters) {
  ASSERT_TRUE(client_
                  ->Create(ServiceImportsResource(), "ns",
                           R"({"apiVersion":"multicluster.x-k8s.io/v1beta1","kind":"ServiceImport",
                  "metadata":{"name":"web","namespace":"ns"},
                  "spec":{"type":"ClusterSetIP","ips":["10.96.0.7"],
                          "ports":[{"name":"http","protocol":"TCP","port":80}]}})")
                  .ok());
  ASSERT_TRUE(client_
                  ->Create(ServiceImportsResource(), "ns",
                           R"({"apiVersion":"multicluster.x-k8s.io/v1beta1","kind":"ServiceImport",
                  "metadata":{"name":"db","namespace":"ns"},
                  "spec":{"type":"Headless","ports":[{"name":"tcp","protocol":"TCP","port":42}]}})")
                  .ok());
  // An MCS slice of db from cluster-a.
  ASSERT_TRUE(client_
                  ->Create(client::EndpointSlicesResource(), "ns",
                           R"({"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice",
    "metadata":{"name":"db-a","namespace":"ns","labels":{
      "multicluster.kubernetes.io/service-name":"db",
      "multicluster.kubernetes.io/source-cluster":"cluster-a",
      "endpointslice.kubernetes.io/managed-by":"mcs.slicewright.io"}},
    "addressType":"IPv4","ports":[{"name":"tcp","protocol":"TCP","port":42}],
    "endpoints":[{"addresses":["10.244.0.1"],"conditions":{"ready":true}}]})")
                  .ok());

  Options options;
  options.dns_address = "127.0.0.1:0";
  auto created = DnsService::Create(options, *informers_);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  ASSERT_NE(*created, nullptr);
  DnsService& service = **created;
  const std::uint16_t port = PortOf(service.address());

  // Bound and answering, but not from an empty zone: SERVFAIL, not a wrong NXDOMAIN.
  EXPECT_EQ(Ask(port, "web.ns.svc.clusterset.local", kA), "SERVFAIL\n");
  EXPECT_EQ(Ask(port, "dns-version.clusterset.local", kTxt), "SERVFAIL\n");
  EXPECT_EQ(service.Ready().code(), StatusCode::kUnavailable);

  informers_->Start();
  ASSERT_TRUE(informers_->WaitForCacheSync(std::chrono::seconds(15)));
  service.Start();
  EXPECT_TRUE(service.Ready().ok());
  EXPECT_EQ(Ask(port, "web.ns.svc.clusterset.local", kA),
            "NOERROR aa\nanswer: web.ns.svc.clusterset.local A 10.96.0.7\n");
  // cluster-a is not in db's status.clusters: its endpoints do not count yet.
  EXPECT_EQ(Ask(port, "db.ns.svc.clusterset.local", kA).substr(0, 8), "NXDOMAIN");

  ASSERT_TRUE(SetClusters(R"({"cluster":"cluster-a"})").ok());
  EXPECT_TRUE(Eventually([&] {
    return Ask(port, "db.ns.svc.clusterset.local", kA) ==
           "NOERROR aa\nanswer: db.ns.svc.clusterset.local A 10.244.0.1\n";
  })) << Ask(port, "db.ns.svc.clusterset.local", kA);
  // The leader judged cluster-a expired: it leaves status.clusters, its endpoints the answer.
  ASSERT_TRUE(SetClusters("").ok());
  EXPECT_TRUE(Eventually([&] {
    return Ask(port, "db.ns.svc.clusterset.local", kA).substr(0, 8) == "NXDOMAIN";
  })) << Ask(port, "db.ns.svc.clusterset.local", kA);

  service.Stop();
  EXPECT_EQ(service.Ready().code(), StatusCode::kUnavailable);
}

TEST_F(DnsServiceTest, NoAddressServesNothingAndBadOnesNameTheFlag) {
  Options options;
  options.dns_address = "";
  auto none = DnsService::Create(options, *informers_);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, nullptr);

  options.dns_address = "no-port-here";
  const Status bad = DnsService::Create(options, *informers_).status();
  EXPECT_EQ(bad.code(), StatusCode::kInvalid);
  EXPECT_NE(bad.ToString().find("--mcs-dns-address"), std::string::npos) << bad.ToString();

  // A port another replica of this host holds.
  options.dns_address = "127.0.0.1:0";
  auto first = DnsService::Create(options, *informers_);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  options.dns_address = (*first)->address();
  const Status taken = DnsService::Create(options, *informers_).status();
  EXPECT_EQ(taken.code(), StatusCode::kUnavailable);
  EXPECT_NE(taken.ToString().find("--mcs-dns-address"), std::string::npos) << taken.ToString();
}

}  // namespace
}  // namespace slicewright::controllers::mcs

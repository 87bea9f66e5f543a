// Tests the zone feed against the embedded API server (with the MCS CRDs): the answers follow a
// ServiceImport and its MCS EndpointSlices through real informers as soon as the caches change
// (an endpoint turning unready, the import deleted), and a liveness change after RebuildAll().
#include "dns/feed.h"

#include <memory>
#include <mutex>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "slicewright/cache/informer_factory.h"
#include "slicewright/codec/mcs.h"
#include "slicewright/model/well_known.h"

#include "apiserver/rest/serve.h"
#include "fakes/loopback.h"
#include "fakes/loopback_api_server.h"

namespace slicewright::dns {
namespace {

using test_support::Eventually;

client::ResourceRef ServiceImports() {
  return {std::string(model::kMcsGroup), "v1beta1", "serviceimports", true};
}

std::string SliceJson(bool second_ready) {
  return std::string(R"({"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice",
    "metadata":{"name":"db-a","namespace":"ns","labels":{
      "multicluster.kubernetes.io/service-name":"db",
      "multicluster.kubernetes.io/source-cluster":"cluster-a",
      "endpointslice.kubernetes.io/managed-by":"mcs.slicewright.io"}},
    "addressType":"IPv4",
    "ports":[{"name":"tcp","protocol":"TCP","port":42}],
    "endpoints":[{"addresses":["10.244.0.1"],"hostname":"db-0","conditions":{"ready":true}},
                 {"addresses":["10.244.0.2"],"conditions":{"ready":)") +
         (second_ready ? "true" : "false") + "}}]}";
}

class FeedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = test_support::StartLoopbackApiServer(dir_.path(), /*mcs_crds=*/true);
    client_ = test_support::LoopbackClient(server_->port());
    ASSERT_TRUE(test_support::CreateNamespace(*client_, "ns").ok());
    informers_ = std::make_unique<cache::InformerFactory>(*client_);
    auto& imports = informers_->For(cache::MakeKind(
        ServiceImports(), codec::DecodeServiceImportList, codec::DecodeServiceImportWatchEvent));
    auto& slices = informers_->EndpointSlices();
    slices.AddIndex("by-import", cache::LabelValueIndex<cache::CompactEndpointSlice>(
                                     std::string(model::kLabelMcsServiceName)));
    FeedDeps deps;
    deps.imports = &imports;
    deps.slices = &slices;
    deps.slices_by_import = "by-import";
    deps.is_live = [this](std::string_view cluster) {
      std::lock_guard lock(mu_);
      return !dead_.contains(std::string(cluster));
    };
    auto feed = ZoneFeed::Create({}, std::move(deps));
    ASSERT_TRUE(feed.ok()) << feed.status().ToString();
    feed_ = std::move(feed).value();
    informers_->Start();
    ASSERT_TRUE(informers_->WaitForCacheSync(std::chrono::seconds(15)));
  }
  void TearDown() override {
    if (informers_ != nullptr) informers_->Stop();
    feed_.reset();
  }

  std::string Ask(std::string_view name, std::uint16_t type) {
    return Render(Resolve(*feed_->zone(), name, type, {}));
  }

  test_support::TempDir dir_;
  std::unique_ptr<apiserver::RunningApiServer> server_;
  std::unique_ptr<client::RestClient> client_;
  std::unique_ptr<cache::InformerFactory> informers_;
  std::unique_ptr<ZoneFeed> feed_;
  std::mutex mu_;
  std::set<std::string> dead_;
};

// A headless import's answers follow its slice and its cluster's liveness; deleting the import
// removes its names.
TEST_F(FeedTest, AnswersFollowTheCaches) {
  ASSERT_TRUE(client_
                  ->Create(ServiceImports(), "ns",
                           R"({"apiVersion":"multicluster.x-k8s.io/v1beta1","kind":"ServiceImport",
                  "metadata":{"name":"db","namespace":"ns"},
                  "spec":{"type":"Headless","ports":[{"name":"tcp","protocol":"TCP","port":42}]}})")
                  .ok());
  ASSERT_TRUE(client_->Create(client::EndpointSlicesResource(), "ns", SliceJson(true)).ok());
  const std::string both =
      "NOERROR aa\nanswer: db.ns.svc.clusterset.local A 10.244.0.1\n"
      "answer: db.ns.svc.clusterset.local A 10.244.0.2\n";
  EXPECT_TRUE(Eventually([&] { return Ask("db.ns.svc.clusterset.local", 1) == both; }))
      << Ask("db.ns.svc.clusterset.local", 1);
  EXPECT_EQ(Ask("db-0.cluster-a.db.ns.svc.clusterset.local", 1),
            "NOERROR aa\nanswer: db-0.cluster-a.db.ns.svc.clusterset.local A 10.244.0.1\n");

  // The second endpoint turns unready: it leaves the answer and its name goes.
  ASSERT_TRUE(
      client_->Update(client::EndpointSlicesResource(), "ns", "db-a", SliceJson(false)).ok());
  EXPECT_TRUE(Eventually([&] {
    return Ask("db.ns.svc.clusterset.local", 1) ==
           "NOERROR aa\nanswer: db.ns.svc.clusterset.local A 10.244.0.1\n";
  })) << Ask("db.ns.svc.clusterset.local", 1);
  EXPECT_EQ(Ask("10-244-0-2.cluster-a.db.ns.svc.clusterset.local", 1).substr(0, 8), "NXDOMAIN");

  // cluster-a expires: after RebuildAll (the agent calls it from liveness), nothing is left.
  {
    std::lock_guard lock(mu_);
    dead_.insert("cluster-a");
  }
  feed_->RebuildAll();
  EXPECT_EQ(Ask("db.ns.svc.clusterset.local", 1).substr(0, 8), "NXDOMAIN");
  {
    std::lock_guard lock(mu_);
    dead_.clear();
  }
  feed_->RebuildAll();
  EXPECT_EQ(Ask("db.ns.svc.clusterset.local", 1).substr(0, 7), "NOERROR");

  ASSERT_TRUE(client_->Delete(ServiceImports(), "ns", "db", {}).ok());
  EXPECT_TRUE(Eventually([&] { return feed_->zone()->Empty(); }));
  EXPECT_EQ(Ask("db.ns.svc.clusterset.local", 1).substr(0, 8), "NXDOMAIN");
}

}  // namespace
}  // namespace slicewright::dns

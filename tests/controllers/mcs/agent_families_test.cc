#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "slicewright/client/typed_client.h"
#include "slicewright/codec/mcs.h"
#include "slicewright/mcs/conditions.h"
#include "slicewright/mcs/identity.h"
#include "slicewright/model/mcs.h"

#include "controllers/mcs/agent.h"
#include "controllers/mcs/agent_test_util.h"
#include "controllers/mcs/kinds.h"
#include "fakes/loopback.h"
#include "fakes/loopback_api_server.h"

// The agent's own cluster's IP families, against the embedded API server as member and broker:
// learned from the API server when --mcs-cluster-ip-families is not given, else the flag's; an
// import of none of them is Ready=False IPFamilyNotSupported with no derived Service and no IPs,
// while its ServiceExport stays Valid, Exported and without conflict (spec §2.5, §4 I6).
namespace slicewright::controllers::mcs {
namespace {

using test_support::CreateNamespace;
using test_support::Eventually;
using test_support::LoopbackClient;
using test_support::StartLoopbackApiServer;
using test_support::TempDir;

constexpr char kNamespace[] = "mcs-families";

using ::slicewright::mcs::FindCondition;

class AgentFamiliesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    member_server_ = StartLoopbackApiServer(member_dir_.path(), /*mcs_crds=*/true);
    broker_server_ = StartLoopbackApiServer(broker_dir_.path(), /*mcs_crds=*/true);
    ASSERT_NE(member_server_, nullptr);
    ASSERT_NE(broker_server_, nullptr);
    member_ = LoopbackClient(member_server_->port());
    broker_ = LoopbackClient(broker_server_->port());
    ASSERT_TRUE(CreateNamespace(*broker_, std::string(model::kDefaultBrokerNamespace)).ok());
    ASSERT_TRUE(CreateNamespace(*member_, kNamespace).ok());
  }

  void TearDown() override {
    if (agent_ != nullptr) agent_->Stop();
    if (member_informers_ != nullptr) member_informers_->Stop();
    if (broker_informers_ != nullptr) broker_informers_->Stop();
  }

  // Creates (and, when `start`, runs) the agent of cluster-a with `families` as the flag.
  Agent* Run(const std::string& families, bool start) {
    member_informers_ = std::make_unique<cache::InformerFactory>(*member_);
    broker_informers_ = std::make_unique<cache::InformerFactory>(*broker_);
    Options options;
    options.cluster_id = "cluster-a";
    options.cluster_ip_families = families;
    options.dns_address = "";  // no DNS server: tests run side by side and 5353 is one port
    Deps deps;
    deps.client = member_.get();
    deps.informers = member_informers_.get();
    deps.broker = broker_.get();
    deps.broker_informers = broker_informers_.get();
    Result<std::unique_ptr<Agent>> created = Agent::Create(std::move(options), deps);
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    if (!created.ok()) return nullptr;
    agent_ = std::move(created).value();
    if (start) {
      member_informers_->Start();
      broker_informers_->Start();
      EXPECT_TRUE(member_informers_->WaitForCacheSync(std::chrono::seconds(10)));
      EXPECT_TRUE(broker_informers_->WaitForCacheSync(std::chrono::seconds(10)));
      agent_->Start();
    }
    return agent_.get();
  }

  // A Service of one family (kube's SingleStack) and its ServiceExport.
  void Export(const std::string& name, const std::string& family) {
    model::Service service;
    service.metadata.namespace_ = kNamespace;
    service.metadata.name = name;
    service.spec.selector = model::StringMap{{"app", name}};
    service.spec.ip_families = {family};
    service.spec.ip_family_policy = "SingleStack";
    service.spec.ports.emplace_back().port = 80;
    ASSERT_TRUE(
        client::TypedClient<model::Service>(*member_, client::ServiceCodec()).Create(service).ok());
    model::ServiceExport service_export;
    service_export.metadata.namespace_ = kNamespace;
    service_export.metadata.name = name;
    ASSERT_TRUE(client::TypedClient<model::ServiceExport>(*member_, ServiceExportCodec())
                    .Create(service_export)
                    .ok());
  }

  std::optional<model::ServiceImport> Import(const std::string& name) {
    return GetServiceImport(*member_, kNamespace, name);
  }

  std::optional<model::ServiceExport> GetExport(const std::string& name) {
    return GetServiceExport(*member_, kNamespace, name);
  }

  bool HasDerivedService(const std::string& name) {
    return client::TypedClient<model::Service>(*member_, client::ServiceCodec())
        .Get(kNamespace, ::slicewright::mcs::DerivedServiceName(kNamespace, name))
        .ok();
  }

  TempDir member_dir_;
  TempDir broker_dir_;
  std::unique_ptr<apiserver::RunningApiServer> member_server_;
  std::unique_ptr<apiserver::RunningApiServer> broker_server_;
  std::unique_ptr<client::RestClient> member_;
  std::unique_ptr<client::RestClient> broker_;
  std::unique_ptr<cache::InformerFactory> member_informers_;
  std::unique_ptr<cache::InformerFactory> broker_informers_;
  std::unique_ptr<Agent> agent_;
};

// No flag: a dry-run probe Service asks the API server, whose service ranges are IPv4 and IPv6
// (IPv4 primary), and stores nothing.
TEST_F(AgentFamiliesTest, LearnsTheFamiliesFromTheApiServer) {
  Agent* agent = Run("", /*start=*/false);
  ASSERT_NE(agent, nullptr);
  EXPECT_EQ(agent->ip_families(), (std::vector<std::string>{"IPv4", "IPv6"}));
  Result<codec::ListPage<model::Service>> services =
      client::TypedClient<model::Service>(*member_, client::ServiceCodec()).ListAll("default", {});
  ASSERT_TRUE(services.ok()) << services.status().ToString();
  EXPECT_TRUE(services->items.empty()) << services->items.front().metadata.name;
}

TEST_F(AgentFamiliesTest, TheFlagWins) {
  Agent* agent = Run("IPv6, IPv4", /*start=*/false);
  ASSERT_NE(agent, nullptr);
  EXPECT_EQ(agent->ip_families(), (std::vector<std::string>{"IPv6", "IPv4"}));
}

TEST_F(AgentFamiliesTest, BadFlagFailsCreateNamingIt) {
  member_informers_ = std::make_unique<cache::InformerFactory>(*member_);
  broker_informers_ = std::make_unique<cache::InformerFactory>(*broker_);
  Options options;
  options.cluster_id = "cluster-a";
  options.cluster_ip_families = "IPv4,ipv6";
  options.dns_address = "";
  Result<std::unique_ptr<Agent>> created =
      Agent::Create(std::move(options), {.client = member_.get(),
                                         .informers = member_informers_.get(),
                                         .broker = broker_.get(),
                                         .broker_informers = broker_informers_.get()});
  ASSERT_FALSE(created.ok());
  EXPECT_EQ(created.status().code(), StatusCode::kInvalid);
  EXPECT_NE(created.status().ToString().find("--mcs-cluster-ip-families"), std::string::npos)
      << created.status().ToString();
}

// An IPv4 cluster (by the flag): its IPv6-only export is imported everywhere, here too, but here
// it is not Ready and gets no ClusterSetIP; its IPv4 export is imported as usual.
TEST_F(AgentFamiliesTest, AnImportOfNoFamilyOfOursIsNotReady) {
  ASSERT_NE(Run("IPv4", /*start=*/true), nullptr);
  Export("v6", "IPv6");
  Export("v4", "IPv4");

  std::optional<model::ServiceImport> v6;
  ASSERT_TRUE(Eventually([&] {
    v6 = Import("v6");
    const model::Condition* ready =
        v6 ? FindCondition(v6->status.conditions, model::kConditionReady) : nullptr;
    return ready != nullptr && ready->status == "False";
  })) << (v6 ? codec::EncodeServiceImport(*v6) : "no ServiceImport v6");
  const model::Condition* ready = FindCondition(v6->status.conditions, model::kConditionReady);
  EXPECT_EQ(ready->reason, model::kReasonIPFamilyNotSupported);
  EXPECT_NE(ready->message.find("IPv6"), std::string::npos) << ready->message;
  EXPECT_EQ(v6->spec.ip_families, (std::vector<std::string>{"IPv6"}));
  EXPECT_TRUE(v6->spec.ips.empty());
  EXPECT_EQ(v6->status.endpoint_slice_objects, model::EndpointSliceObjects::kAbsent);
  EXPECT_FALSE(v6->metadata.annotations.contains(std::string(model::kAnnotationDerivedService)));
  EXPECT_FALSE(HasDerivedService("v6"));

  // The export itself is fine: Valid, Exported, no conflict.
  std::optional<model::ServiceExport> exported;
  ASSERT_TRUE(Eventually([&] {
    exported = GetExport("v6");
    if (!exported) return false;
    const model::Condition* valid = FindCondition(exported->status.conditions, "Valid");
    const model::Condition* export_ready = FindCondition(exported->status.conditions, "Ready");
    const model::Condition* conflict = FindCondition(exported->status.conditions, "Conflict");
    return valid != nullptr && valid->status == "True" && export_ready != nullptr &&
           export_ready->status == "True" && export_ready->reason == model::kReasonExported &&
           conflict != nullptr && conflict->status == "False" &&
           conflict->reason == model::kReasonNoConflicts;
  })) << (exported ? codec::EncodeServiceExport(*exported) : "no ServiceExport v6");

  std::optional<model::ServiceImport> v4;
  ASSERT_TRUE(Eventually([&] {
    v4 = Import("v4");
    const model::Condition* v4_ready =
        v4 ? FindCondition(v4->status.conditions, model::kConditionReady) : nullptr;
    return v4_ready != nullptr && v4_ready->status == "True" && v4->spec.ips.size() == 1;
  })) << (v4 ? codec::EncodeServiceImport(*v4) : "no ServiceImport v4");
  EXPECT_EQ(v4->spec.ip_families, (std::vector<std::string>{"IPv4"}));
  EXPECT_EQ(v4->spec.ips[0].find(':'), std::string::npos) << v4->spec.ips[0];
  EXPECT_TRUE(HasDerivedService("v4"));
}

}  // namespace
}  // namespace slicewright::controllers::mcs

#include "bench/simulated_member.h"

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "slicewright/client/typed_client.h"
#include "slicewright/codec/coordination.h"
#include "slicewright/codec/mcs.h"
#include "slicewright/model/mcs.h"
#include "slicewright/model/well_known.h"

#include "controllers/mcs/agent.h"
#include "controllers/mcs/kinds.h"
#include "fakes/loopback.h"
#include "fakes/loopback_api_server.h"

// fleet_sim's simulated members (bench/simulated_member.h) stand for real agents in the broker:
// what one writes must be what a real agent writes for the same export, object for object (the
// kinds, labels, annotations and fields), or the fleet's figures measure something else. A real
// agent (cluster-1) and a simulated member (cluster-2) export the same Service; the broker's
// objects of the two are compared with the cluster-specific values (ids, names, uids, times,
// addresses) set aside, and the real agent must import the simulated member's endpoints.
namespace slicewright::controllers::mcs {
namespace {

using test_support::CreateNamespace;
using test_support::Eventually;
using test_support::LoopbackClient;
using test_support::StartLoopbackApiServer;
using test_support::TempDir;

constexpr char kNamespace[] = "fleet";
constexpr char kService[] = "web";

std::string LabelOf(const model::ObjectMeta& meta, std::string_view key) {
  const auto it = meta.labels.find(key);
  return it == meta.labels.end() ? std::string() : it->second;
}

// The labels with the source cluster's id written as "<cluster>".
std::map<std::string, std::string> Generic(const model::StringMap& labels,
                                           const std::string& cluster) {
  std::map<std::string, std::string> out;
  for (const auto& [key, value] : labels) out[key] = value == cluster ? "<cluster>" : value;
  return out;
}

class SimulatedMemberTest : public ::testing::Test {
 protected:
  void SetUp() override {
    broker_server_ = StartLoopbackApiServer(broker_dir_.path(), /*mcs_crds=*/true);
    ASSERT_NE(broker_server_, nullptr);
    broker_ = LoopbackClient(broker_server_->port());
    ASSERT_TRUE(CreateNamespace(*broker_, std::string(model::kDefaultBrokerNamespace)).ok());
    member_server_ = StartLoopbackApiServer(member_dir_.path(), /*mcs_crds=*/true);
    ASSERT_NE(member_server_, nullptr);
    member_ = LoopbackClient(member_server_->port());
    ASSERT_TRUE(CreateNamespace(*member_, kNamespace).ok());
  }

  void TearDown() override {
    if (agent_ != nullptr) agent_->Stop();
    if (informers_ != nullptr) informers_->Stop();
    if (broker_informers_ != nullptr) broker_informers_->Stop();
  }

  void StartAgent() {
    informers_ = std::make_unique<cache::InformerFactory>(*member_);
    broker_informers_ = std::make_unique<cache::InformerFactory>(*broker_);
    Options options;
    options.cluster_id = "cluster-1";
    options.cluster_ip_families = "IPv4";
    options.dns_address = "";
    Result<std::unique_ptr<Agent>> created =
        Agent::Create(std::move(options), {.client = member_.get(),
                                           .informers = informers_.get(),
                                           .broker = broker_.get(),
                                           .broker_informers = broker_informers_.get()});
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    agent_ = std::move(created).value();
    informers_->Start();
    broker_informers_->Start();
    ASSERT_TRUE(informers_->WaitForCacheSync(std::chrono::seconds(10)));
    ASSERT_TRUE(broker_informers_->WaitForCacheSync(std::chrono::seconds(10)));
    agent_->Start();
  }

  std::vector<model::ServiceExportRecord> Records() {
    client::TypedClient<model::ServiceExportRecord> records(*broker_, ServiceExportRecordCodec());
    Result<codec::ListPage<model::ServiceExportRecord>> page =
        records.ListAll(model::kDefaultBrokerNamespace, {});
    return page.ok() ? page->items : std::vector<model::ServiceExportRecord>{};
  }

  model::EndpointSlice BrokerSliceOf(const std::string& cluster) {
    client::ListOptions options;
    options.label_selector = std::string(model::kLabelMcsSourceCluster) + "=" + cluster;
    Result<codec::ListPage<model::EndpointSlice>> page =
        client::TypedClient<model::EndpointSlice>(*broker_, client::EndpointSliceCodec())
            .ListAll(model::kDefaultBrokerNamespace, options);
    EXPECT_TRUE(page.ok() && page->items.size() == 1) << cluster;
    return page.ok() && page->items.size() == 1 ? page->items[0] : model::EndpointSlice{};
  }

  model::Lease LeaseOf(const std::string& cluster) {
    Result<std::string> got =
        broker_->Get(client::LeasesResource(), model::kDefaultBrokerNamespace, "mcs-" + cluster);
    EXPECT_TRUE(got.ok()) << cluster;
    if (!got.ok()) return {};
    Result<model::Lease> lease = codec::DecodeLease(*got);
    return lease.ok() ? *lease : model::Lease{};
  }

  TempDir broker_dir_;
  TempDir member_dir_;
  std::unique_ptr<apiserver::RunningApiServer> broker_server_;
  std::unique_ptr<apiserver::RunningApiServer> member_server_;
  std::unique_ptr<client::RestClient> broker_;
  std::unique_ptr<client::RestClient> member_;
  std::unique_ptr<cache::InformerFactory> informers_;
  std::unique_ptr<cache::InformerFactory> broker_informers_;
  std::unique_ptr<Agent> agent_;
};

// The simulated member's record, broker slice and Lease are the real agent's, but for the values
// that name the cluster, the object or the moment; and the real agent imports its endpoints.
TEST_F(SimulatedMemberTest, WritesWhatARealAgentWrites) {
  // cluster-1: a real agent exports the Service, whose own slice the endpoint controller (not run
  // here) would have written.
  const model::Service service = bench::SimulatedService(kNamespace, kService);
  ASSERT_TRUE(
      client::TypedClient<model::Service>(*member_, client::ServiceCodec()).Create(service).ok());
  const model::EndpointSlice own1 =
      bench::SimulatedOwnSlice(kNamespace, kService, {"10.1.0.1", "10.1.0.2"});
  ASSERT_TRUE(client::TypedClient<model::EndpointSlice>(*member_, client::EndpointSliceCodec())
                  .Create(own1)
                  .ok());
  model::ServiceExport service_export;
  service_export.metadata.namespace_ = kNamespace;
  service_export.metadata.name = kService;
  ASSERT_TRUE(client::TypedClient<model::ServiceExport>(*member_, ServiceExportCodec())
                  .Create(service_export)
                  .ok());
  StartAgent();

  // cluster-2: simulated, the same Service with its own endpoints.
  bench::SimulatedMember simulated("cluster-2", *broker_,
                                   std::string(model::kDefaultBrokerNamespace),
                                   std::chrono::seconds(30), "simulated_cluster-2");
  ASSERT_TRUE(simulated.RenewLease().ok());
  Result<bench::SimulatedExport> exported = simulated.Export(
      service, bench::SimulatedOwnSlice(kNamespace, kService, {"10.2.0.1", "10.2.0.2"}),
      model::Time::FromUnixSeconds(1'700'000'000));
  ASSERT_TRUE(exported.ok()) << exported.status().ToString();
  EXPECT_EQ(simulated.writes(), 4);  // the Lease, the record, its slice, the record marked

  // Both records published (the real agent's too).
  std::map<std::string, model::ServiceExportRecord> records;
  ASSERT_TRUE(Eventually([&] {
    records.clear();
    for (model::ServiceExportRecord& record : Records()) {
      if (record.metadata.annotations.contains(kAnnotationSlicesPublished)) {
        records[record.spec.cluster] = std::move(record);
      }
    }
    return records.size() == 2;
  }));
  const model::ServiceExportRecord& real = records["cluster-1"];
  const model::ServiceExportRecord& sim = records["cluster-2"];
  EXPECT_EQ(Generic(real.metadata.labels, "cluster-1"), Generic(sim.metadata.labels, "cluster-2"));
  EXPECT_EQ(real.metadata.annotations, sim.metadata.annotations);
  EXPECT_EQ(real.metadata.name, "web.fleet.cluster-1");
  EXPECT_EQ(sim.metadata.name, "web.fleet.cluster-2");
  model::ServiceExportRecordSpec sim_spec = sim.spec;
  sim_spec.cluster = real.spec.cluster;
  sim_spec.export_creation_timestamp = real.spec.export_creation_timestamp;
  model::ServiceExportRecord sim_generic = sim;
  sim_generic.spec = sim_spec;
  EXPECT_EQ(real.spec, sim_spec) << codec::EncodeServiceExportRecord(real) << "\n"
                                 << codec::EncodeServiceExportRecord(sim_generic);

  // Their broker slices: the same labels, annotations, owner, ports and endpoint fields.
  ASSERT_TRUE(Eventually([&] {
    client::ListOptions options;
    options.label_selector = std::string(model::kLabelMcsSourceCluster) + "=cluster-1";
    Result<codec::ListPage<model::EndpointSlice>> page =
        client::TypedClient<model::EndpointSlice>(*broker_, client::EndpointSliceCodec())
            .ListAll(model::kDefaultBrokerNamespace, options);
    return page.ok() && page->items.size() == 1;
  }));
  model::EndpointSlice real_slice = BrokerSliceOf("cluster-1");
  model::EndpointSlice sim_slice = BrokerSliceOf("cluster-2");
  EXPECT_EQ(Generic(real_slice.metadata.labels, "cluster-1"),
            Generic(sim_slice.metadata.labels, "cluster-2"));
  EXPECT_EQ(real_slice.metadata.annotations, sim_slice.metadata.annotations);
  EXPECT_EQ(real_slice.metadata.generate_name, "web.fleet.cluster-1-");
  EXPECT_EQ(sim_slice.metadata.generate_name, "web.fleet.cluster-2-");
  ASSERT_EQ(real_slice.metadata.owner_references.size(), 1u);
  ASSERT_EQ(sim_slice.metadata.owner_references.size(), 1u);
  EXPECT_EQ(real_slice.metadata.owner_references[0].uid, real.metadata.uid);
  EXPECT_EQ(sim_slice.metadata.owner_references[0].uid, sim.metadata.uid);
  model::OwnerReference sim_owner = sim_slice.metadata.owner_references[0];
  sim_owner.uid = real_slice.metadata.owner_references[0].uid;
  sim_owner.name = real_slice.metadata.owner_references[0].name;
  EXPECT_EQ(real_slice.metadata.owner_references[0], sim_owner);
  EXPECT_EQ(real_slice.address_type, sim_slice.address_type);
  EXPECT_EQ(real_slice.ports, sim_slice.ports);
  ASSERT_EQ(real_slice.endpoints.size(), sim_slice.endpoints.size());
  for (std::size_t i = 0; i < real_slice.endpoints.size(); ++i) {
    model::Endpoint endpoint = sim_slice.endpoints[i];
    endpoint.addresses = real_slice.endpoints[i].addresses;
    EXPECT_EQ(real_slice.endpoints[i], endpoint) << i;
  }

  // Their Leases.
  const model::Lease real_lease = LeaseOf("cluster-1");
  const model::Lease sim_lease = LeaseOf("cluster-2");
  EXPECT_EQ(Generic(real_lease.metadata.labels, "cluster-1"),
            Generic(sim_lease.metadata.labels, "cluster-2"));
  EXPECT_EQ(real_lease.metadata.annotations, sim_lease.metadata.annotations);
  EXPECT_EQ(real_lease.spec.lease_duration_seconds, sim_lease.spec.lease_duration_seconds);
  EXPECT_EQ(real_lease.spec.lease_transitions, sim_lease.spec.lease_transitions);
  EXPECT_EQ(real_lease.spec.holder_identity.has_value(),
            sim_lease.spec.holder_identity.has_value());
  EXPECT_EQ(real_lease.spec.acquire_time.has_value(), sim_lease.spec.acquire_time.has_value());
  EXPECT_EQ(real_lease.spec.renew_time.has_value(), sim_lease.spec.renew_time.has_value());

  // The real agent takes the simulated member for a member: its import lists both clusters, is
  // Present, and holds cluster-2's endpoints.
  EXPECT_TRUE(Eventually([&] {
    Result<model::ServiceImport> got =
        client::TypedClient<model::ServiceImport>(*member_, ServiceImportCodec())
            .Get(kNamespace, kService);
    if (!got.ok() || got->status.clusters != std::vector<std::string>{"cluster-1", "cluster-2"} ||
        got->status.endpoint_slice_objects != model::EndpointSliceObjects::kPresent) {
      return false;
    }
    client::ListOptions options;
    options.label_selector = std::string(model::kLabelMcsSourceCluster) + "=cluster-2";
    Result<codec::ListPage<model::EndpointSlice>> slices =
        client::TypedClient<model::EndpointSlice>(*member_, client::EndpointSliceCodec())
            .ListAll(kNamespace, options);
    return slices.ok() && slices->items.size() == 1 && slices->items[0].endpoints.size() == 2 &&
           slices->items[0].endpoints[0].addresses[0] == "10.2.0.1";
  }));

  // A one-endpoint change of the simulated member is one broker write, as the agent's.
  exported->own.endpoints[1].conditions.ready = false;
  Result<std::size_t> writes = simulated.Publish(*exported);
  ASSERT_TRUE(writes.ok()) << writes.status().ToString();
  EXPECT_EQ(*writes, 1u);
  EXPECT_EQ(LabelOf(exported->slices.at(0).metadata, model::kLabelMcsSourceCluster), "cluster-2");
  EXPECT_FALSE(exported->slices.at(0).endpoints.at(1).conditions.ready.value_or(true));
}

}  // namespace
}  // namespace slicewright::controllers::mcs

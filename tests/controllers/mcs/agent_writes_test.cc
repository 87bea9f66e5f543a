#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "slicewright/client/typed_client.h"
#include "slicewright/codec/coordination.h"
#include "slicewright/codec/mcs.h"
#include "slicewright/mcs/identity.h"
#include "slicewright/model/mcs.h"
#include "slicewright/model/well_known.h"

#include "controllers/mcs/agent.h"
#include "controllers/mcs/kinds.h"
#include "fakes/loopback.h"
#include "fakes/loopback_api_server.h"

// Two members' agents and a broker. How many API writes one new export costs across them
// (docs/performance.md, "Multi-Cluster Services"): counted by verb, cluster and resource from
// watches of every object the export concerns, and pinned, so a change that adds a write fails
// here rather than only slowing the benchmark. And an agent restarted after an outage keeps what
// its previous run imported.
namespace slicewright::controllers::mcs {
namespace {

using test_support::CreateNamespace;
using test_support::Eventually;
using test_support::LoopbackClient;
using test_support::StartLoopbackApiServer;
using test_support::TempDir;

constexpr char kNamespace[] = "mcs-writes";

std::string LabelOf(const model::ObjectMeta& meta, std::string_view key) {
  const auto it = meta.labels.find(key);
  return it == meta.labels.end() ? std::string() : it->second;
}

// Writes seen by watches, as "cluster resource verb" -> count, for the objects `concerns` picks.
class WriteCounter final {
 public:
  template <typename T, typename Pick>
  void Watch(const std::string& cluster, const std::string& resource, cache::Informer<T>& informer,
             Pick concerns) {
    cache::EventHandler<T> handler;
    handler.on_add = [=, this](const auto& object, bool initial) {
      if (!initial && concerns(*object)) Count(cluster, resource, "create");
    };
    handler.on_update = [=, this](const auto& old_object, const auto& object) {
      // A relist re-delivers an object unchanged: only a new resourceVersion is a write.
      if (old_object->metadata.resource_version != object->metadata.resource_version &&
          concerns(*object)) {
        Count(cluster, resource, "update");
      }
    };
    handler.on_delete = [=, this](const auto& object, bool) {
      if (concerns(*object)) Count(cluster, resource, "delete");
    };
    informer.AddEventHandler(std::move(handler));
  }

  std::map<std::string, int> counts() const {
    std::lock_guard lock(mu_);
    return counts_;
  }

 private:
  void Count(const std::string& cluster, const std::string& resource, const std::string& verb) {
    std::lock_guard lock(mu_);
    ++counts_[cluster + " " + resource + " " + verb];
  }

  mutable std::mutex mu_;
  std::map<std::string, int> counts_;
};

std::string Describe(const std::map<std::string, int>& counts) {
  std::string out;
  int total = 0;
  for (const auto& [key, count] : counts) {
    out += fmt::format("  {} {}\n", key, count);
    total += count;
  }
  return out + fmt::format("  total {}\n", total);
}

class AgentWritesTest : public ::testing::Test {
 protected:
  struct Member {
    std::string id;
    TempDir dir;
    std::unique_ptr<apiserver::RunningApiServer> server;
    std::unique_ptr<client::RestClient> client;
    std::unique_ptr<cache::InformerFactory> informers;         // the agent's
    std::unique_ptr<cache::InformerFactory> broker_informers;  // the agent's
    std::unique_ptr<cache::InformerFactory> watched;           // the counter's
    std::unique_ptr<Agent> agent;
  };

  void SetUp() override {
    broker_server_ = StartLoopbackApiServer(broker_dir_.path(), /*mcs_crds=*/true);
    ASSERT_NE(broker_server_, nullptr);
    broker_ = LoopbackClient(broker_server_->port());
    ASSERT_TRUE(CreateNamespace(*broker_, std::string(model::kDefaultBrokerNamespace)).ok());
    for (const char* id : {"cluster-1", "cluster-2"}) {
      auto member = std::make_unique<Member>();
      member->id = id;
      member->server = StartLoopbackApiServer(member->dir.path(), /*mcs_crds=*/true);
      ASSERT_NE(member->server, nullptr);
      member->client = LoopbackClient(member->server->port());
      ASSERT_TRUE(CreateNamespace(*member->client, kNamespace).ok());
      members_.push_back(std::move(member));
    }
  }

  void TearDown() override {
    for (auto& member : members_) {
      if (member->agent != nullptr) member->agent->Stop();
      for (auto* factory :
           {member->informers.get(), member->broker_informers.get(), member->watched.get()}) {
        if (factory != nullptr) factory->Stop();
      }
    }
    if (broker_watched_ != nullptr) broker_watched_->Stop();
  }

  // Counts the writes of every object of the exported Service `name` (the record, the slices, the
  // imports, the derived Services, the ServiceExport's status) in every cluster.
  void CountWritesOf(const std::string& name) {
    const std::string derived = ::slicewright::mcs::DerivedServiceName(kNamespace, name);
    const auto mcs_slice_of = [name](const cache::CompactEndpointSlice& slice) {
      return LabelOf(slice.metadata, model::kLabelManagedBy) == model::kManagedByMcs &&
             LabelOf(slice.metadata, model::kLabelMcsServiceName) == name;
    };
    broker_watched_ = std::make_unique<cache::InformerFactory>(*broker_);
    counter_.Watch("broker", "serviceexportrecords",
                   broker_watched_->For(ServiceExportRecordKind()),
                   [name](const model::ServiceExportRecord& r) { return r.spec.name == name; });
    counter_.Watch("broker", "endpointslices", broker_watched_->EndpointSlices(), mcs_slice_of);
    broker_watched_->Start();
    ASSERT_TRUE(broker_watched_->WaitForCacheSync(std::chrono::seconds(10)));
    for (auto& member : members_) {
      member->watched = std::make_unique<cache::InformerFactory>(*member->client);
      cache::InformerFactory& watched = *member->watched;
      counter_.Watch(member->id, "serviceimports", watched.For(ServiceImportKind()),
                     [name](const model::ServiceImport& i) { return i.metadata.name == name; });
      counter_.Watch(member->id, "serviceexports", watched.For(ServiceExportKind()),
                     [name](const model::ServiceExport& e) { return e.metadata.name == name; });
      counter_.Watch(member->id, "services", watched.Services(),
                     [derived](const model::Service& s) { return s.metadata.name == derived; });
      counter_.Watch(member->id, "endpointslices", watched.EndpointSlices(), mcs_slice_of);
      watched.Start();
      ASSERT_TRUE(watched.WaitForCacheSync(std::chrono::seconds(10)));
    }
  }

  void StartAgents() {
    for (auto& member : members_) StartAgent(*member);
  }

  // The informers stop before the agent goes: their handlers call into it.
  void StopAgent(Member& member) {
    member.agent->Stop();
    member.informers->Stop();
    member.broker_informers->Stop();
    member.agent.reset();
  }

  void StartAgent(Member& member) {
    member.informers = std::make_unique<cache::InformerFactory>(*member.client);
    member.broker_informers = std::make_unique<cache::InformerFactory>(*broker_);
    Options options;
    options.cluster_id = member.id;
    options.cluster_ip_families = "IPv4";
    options.dns_address = "";  // tests run side by side
    Result<std::unique_ptr<Agent>> created =
        Agent::Create(std::move(options), {.client = member.client.get(),
                                           .informers = member.informers.get(),
                                           .broker = broker_.get(),
                                           .broker_informers = member.broker_informers.get()});
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    member.agent = std::move(created).value();
    member.informers->Start();
    member.broker_informers->Start();
    ASSERT_TRUE(member.informers->WaitForCacheSync(std::chrono::seconds(10)));
    ASSERT_TRUE(member.broker_informers->WaitForCacheSync(std::chrono::seconds(10)));
    member.agent->Start();
  }

  // A Service in cluster-1 with one ready endpoint in its own EndpointSlice (as the endpoint
  // controller, which does not run here, would write it).
  void ServiceWithEndpoint(const std::string& name, const std::string& ip) {
    SelectorService(name);
    LocalSlice(name, ip);
  }

  void SelectorService(const std::string& name) {
    client::RestClient& c1 = *members_[0]->client;
    model::Service service;
    service.metadata.namespace_ = kNamespace;
    service.metadata.name = name;
    service.spec.selector = model::StringMap{{"app", name}};
    service.spec.ip_families = {"IPv4"};
    service.spec.ip_family_policy = "SingleStack";
    service.spec.ports.emplace_back().port = 80;
    ASSERT_TRUE(
        client::TypedClient<model::Service>(c1, client::ServiceCodec()).Create(service).ok());
  }

  void LocalSlice(const std::string& name, const std::string& ip) {
    client::RestClient& c1 = *members_[0]->client;
    model::EndpointSlice slice;
    slice.metadata.namespace_ = kNamespace;
    slice.metadata.name = name + "-abcde";
    slice.metadata.labels[std::string(model::kLabelServiceName)] = name;
    slice.metadata.labels[std::string(model::kLabelManagedBy)] = "endpointslice-controller.k8s.io";
    slice.address_type = "IPv4";
    model::Endpoint& endpoint = slice.endpoints.emplace_back();
    endpoint.addresses = {ip};
    endpoint.conditions.ready = true;
    model::EndpointPort& port = slice.ports.emplace_back();
    port.port = 80;
    port.protocol = "TCP";
    const Result<model::EndpointSlice> created =
        client::TypedClient<model::EndpointSlice>(c1, client::EndpointSliceCodec()).Create(slice);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
  }

  void Export(const std::string& name) {
    model::ServiceExport service_export;
    service_export.metadata.namespace_ = kNamespace;
    service_export.metadata.name = name;
    ASSERT_TRUE(
        client::TypedClient<model::ServiceExport>(*members_[0]->client, ServiceExportCodec())
            .Create(service_export)
            .ok());
  }

  // "web" (one endpoint, 10.1.0.1) exported by cluster-1's agent, the only one running: its
  // record, marked published, and its one broker slice, as the broker holds them.
  bool WebExportedByClusterOne(std::optional<model::ServiceExportRecord>* record,
                               std::optional<model::EndpointSlice>* slice) {
    ServiceWithEndpoint("web", "10.1.0.1");
    StartAgent(*members_[0]);
    Export("web");
    return PublishedToBroker("web", record, slice);
  }

  // cluster-1's agent stopped (its Lease stays live for its duration), and `record` and `slice`
  // deleted from the broker, left as new objects to create again (no uid, version or time).
  bool TakenFromTheBroker(model::ServiceExportRecord* record, model::EndpointSlice* slice) {
    StopAgent(*members_[0]);
    const std::string ns(model::kDefaultBrokerNamespace);
    if (!client::TypedClient<model::EndpointSlice>(*broker_, client::EndpointSliceCodec())
             .Delete(ns, slice->metadata.name)
             .ok() ||
        !client::TypedClient<model::ServiceExportRecord>(*broker_, ServiceExportRecordCodec())
             .Delete(ns, record->metadata.name)
             .ok()) {
      return false;
    }
    for (model::ObjectMeta* meta : {&record->metadata, &slice->metadata}) {
      meta->uid.clear();
      meta->resource_version.clear();
      meta->creation_timestamp.reset();
    }
    return true;
  }

  // Waits for the broker to hold the one export record, marked published, and the one broker
  // slice of `name`; copies both out.
  bool PublishedToBroker(const std::string& name, std::optional<model::ServiceExportRecord>* record,
                         std::optional<model::EndpointSlice>* slice) {
    client::TypedClient<model::ServiceExportRecord> records(*broker_, ServiceExportRecordCodec());
    client::TypedClient<model::EndpointSlice> broker_slices(*broker_, client::EndpointSliceCodec());
    const std::string ns(model::kDefaultBrokerNamespace);
    client::ListOptions of_name;
    of_name.label_selector = std::string(model::kLabelMcsServiceName) + "=" + name;
    return Eventually([&] {
      Result<codec::ListPage<model::ServiceExportRecord>> all = records.ListAll(ns, {});
      Result<codec::ListPage<model::EndpointSlice>> sliced = broker_slices.ListAll(ns, of_name);
      if (!all.ok() || all->items.size() != 1 || !sliced.ok() || sliced->items.size() != 1 ||
          !all->items[0].metadata.annotations.contains(
              "mcs.slicewright.io/endpointslices-published")) {
        return false;
      }
      *record = all->items[0];
      *slice = sliced->items[0];
      return true;
    });
  }

  // `member`'s MCS EndpointSlices of `name`: exactly one, whose first endpoint is `ip`.
  ::testing::AssertionResult ImportsOneSlice(Member& member, const std::string& name,
                                             const std::string& ip) {
    client::ListOptions of_name;
    of_name.label_selector = std::string(model::kLabelMcsServiceName) + "=" + name;
    Result<codec::ListPage<model::EndpointSlice>> imported =
        client::TypedClient<model::EndpointSlice>(*member.client, client::EndpointSliceCodec())
            .ListAll(kNamespace, of_name);
    if (!imported.ok()) return ::testing::AssertionFailure() << imported.status().ToString();
    if (imported->items.size() != 1 || imported->items[0].endpoints.empty() ||
        imported->items[0].endpoints[0].addresses.empty() ||
        imported->items[0].endpoints[0].addresses[0] != ip) {
      return ::testing::AssertionFailure()
             << imported->items.size() << " MCS slices of " << name << ", want one holding " << ip;
    }
    return ::testing::AssertionSuccess();
  }

  // Every member imports `name` as the spec asks in the end: one ClusterSetIP, cluster-1 in
  // status.clusters, Present, and an MCS slice holding `ip`; the export is Ready.
  bool Converged(const std::string& name, const std::string& ip) {
    for (auto& member : members_) {
      Result<model::ServiceImport> got =
          client::TypedClient<model::ServiceImport>(*member->client, ServiceImportCodec())
              .Get(kNamespace, name);
      if (!got.ok() || got->spec.ips.size() != 1 ||
          got->status.clusters != std::vector<std::string>{"cluster-1"} ||
          got->status.endpoint_slice_objects != model::EndpointSliceObjects::kPresent) {
        return false;
      }
      client::ListOptions by_import;
      by_import.label_selector = std::string(model::kLabelMcsServiceName) + "=" + name;
      Result<codec::ListPage<model::EndpointSlice>> slices =
          client::TypedClient<model::EndpointSlice>(*member->client, client::EndpointSliceCodec())
              .ListAll(kNamespace, by_import);
      if (!slices.ok() || slices->items.size() != 1 || slices->items[0].endpoints.size() != 1 ||
          slices->items[0].endpoints[0].addresses.size() != 1 ||
          slices->items[0].endpoints[0].addresses[0] != ip) {
        return false;
      }
    }
    Result<model::ServiceExport> exported =
        client::TypedClient<model::ServiceExport>(*members_[0]->client, ServiceExportCodec())
            .Get(kNamespace, name);
    if (!exported.ok()) return false;
    for (const model::Condition& condition : exported->status.conditions) {
      if (condition.type == "Ready") return condition.reason == model::kReasonExported;
    }
    return false;
  }

  TempDir broker_dir_;
  std::unique_ptr<apiserver::RunningApiServer> broker_server_;
  std::unique_ptr<client::RestClient> broker_;
  std::unique_ptr<cache::InformerFactory> broker_watched_;
  std::vector<std::unique_ptr<Member>> members_;
  WriteCounter counter_;
};

TEST_F(AgentWritesTest, ANewExportCostsAFixedNumberOfWrites) {
  ServiceWithEndpoint("web", "10.1.0.1");
  ServiceWithEndpoint("marker", "10.1.0.2");
  CountWritesOf("web");
  StartAgents();
  Export("web");
  ASSERT_TRUE(Eventually([&] { return Converged("web", "10.1.0.1"); }, std::chrono::seconds(20)))
      << Describe(counter_.counts());
  // A second export through the same queues: once it has converged, what the first one still had
  // on its way (a write answered, its event not delivered yet) has arrived.
  Export("marker");
  ASSERT_TRUE(
      Eventually([&] { return Converged("marker", "10.1.0.2"); }, std::chrono::seconds(20)));
  ASSERT_TRUE(Eventually([&] { return Converged("web", "10.1.0.1"); }));

  // cluster-1 exports: its record and broker slice, the record marked as published, the
  // ServiceExport's conditions. Each member imports: the ServiceImport created, its spec.ips
  // once the derived Service has its ClusterIP, its status written once (Present), the derived
  // Service and the MCS slice.
  const std::map<std::string, int> expected = {
      {"broker endpointslices create", 1},       {"broker serviceexportrecords create", 1},
      {"broker serviceexportrecords update", 1}, {"cluster-1 endpointslices create", 1},
      {"cluster-1 serviceexports create", 1},  // the user's
      {"cluster-1 serviceexports update", 1},    {"cluster-1 serviceimports create", 1},
      {"cluster-1 serviceimports update", 2},    {"cluster-1 services create", 1},
      {"cluster-2 endpointslices create", 1},    {"cluster-2 serviceimports create", 1},
      {"cluster-2 serviceimports update", 2},    {"cluster-2 services create", 1},
  };
  std::printf("writes of one export:\n%s", Describe(counter_.counts()).c_str());
  EXPECT_EQ(counter_.counts(), expected) << "writes of one export:\n"
                                         << Describe(counter_.counts());
}

// cluster-2's agent restarts just after a broker outage: cluster-1's Lease aged in it (cluster-1
// renews a moment later). Its previous run had written cluster-1's MCS slice but not yet the
// import's status.clusters (stopped in between). The restarted agent counts the slice's source as
// previously live: it keeps the slice and lists cluster-1 again, rather than deleting the slice
// until cluster-1 renews.
TEST_F(AgentWritesTest, ARestartedAgentKeepsTheSlicesItsPreviousRunWrote) {
  ServiceWithEndpoint("web", "10.1.0.1");
  StartAgents();
  Export("web");
  ASSERT_TRUE(Eventually([&] { return Converged("web", "10.1.0.1"); }, std::chrono::seconds(20)));
  for (auto& member : members_) StopAgent(*member);

  client::RestClient& c2 = *members_[1]->client;
  client::TypedClient<model::ServiceImport> imports(c2, ServiceImportCodec());
  Result<model::ServiceImport> web = imports.Get(kNamespace, "web");
  ASSERT_TRUE(web.ok()) << web.status().ToString();
  web->status.clusters.clear();
  ASSERT_TRUE(imports.UpdateStatus(*web).ok());
  client::ListOptions by_import;
  by_import.label_selector = std::string(model::kLabelMcsServiceName) + "=web";
  client::TypedClient<model::EndpointSlice> slices(c2, client::EndpointSliceCodec());
  Result<codec::ListPage<model::EndpointSlice>> before = slices.ListAll(kNamespace, by_import);
  ASSERT_TRUE(before.ok() && before->items.size() == 1);
  const std::string slice_uid = before->items[0].metadata.uid;
  // cluster-1's Lease renewed 100 s ago (the outage); cluster-2's previous run's Lease gone, so
  // the new run does not wait it out.
  const std::string ns(model::kDefaultBrokerNamespace);
  Result<std::string> got = broker_->Get(client::LeasesResource(), ns, "mcs-cluster-1");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  Result<model::Lease> lease = codec::DecodeLease(*got);
  ASSERT_TRUE(lease.ok());
  const auto now = std::chrono::duration_cast<std::chrono::microseconds>(
      std::chrono::system_clock::now().time_since_epoch());
  lease->spec.renew_time = model::Time{(now.count() - 100'000'000) * 1000};
  ASSERT_TRUE(
      broker_->Update(client::LeasesResource(), ns, "mcs-cluster-1", codec::EncodeLease(*lease))
          .ok());
  ASSERT_TRUE(broker_->Delete(client::LeasesResource(), ns, "mcs-cluster-2", {}).ok());

  StartAgent(*members_[1]);
  ASSERT_TRUE(Eventually([&] {
    Result<model::ServiceImport> now_web = imports.Get(kNamespace, "web");
    return now_web.ok() && now_web->status.clusters == std::vector<std::string>{"cluster-1"};
  })) << "cluster-1 not listed again: judged expired";
  Result<codec::ListPage<model::EndpointSlice>> after = slices.ListAll(kNamespace, by_import);
  ASSERT_TRUE(after.ok());
  ASSERT_EQ(after->items.size(), 1u);
  EXPECT_EQ(after->items[0].metadata.uid, slice_uid) << "the slice was deleted and written again";
}

// The importer's broker caches see a record through one watch and its slices through another: a
// record marked published may arrive before the slices it counts. A new import then writes no
// status until they are all here, rather than Present over MCS slices not written yet.
TEST_F(AgentWritesTest, ANewImportWaitsForThePublishedSlicesBeforePresent) {
  client::TypedClient<model::ServiceExportRecord> records(*broker_, ServiceExportRecordCodec());
  client::TypedClient<model::EndpointSlice> broker_slices(*broker_, client::EndpointSliceCodec());
  std::optional<model::ServiceExportRecord> record;
  std::optional<model::EndpointSlice> slice;
  ASSERT_TRUE(WebExportedByClusterOne(&record, &slice));
  EXPECT_EQ(record->metadata.annotations.at("mcs.slicewright.io/endpointslices-published"), "1");
  // cluster-1 stops (its Lease stays live for its duration); its record and slice are taken away
  // and given back to the broker in the order the race delivers them: the record first.
  ASSERT_TRUE(TakenFromTheBroker(&*record, &*slice));
  StartAgent(*members_[1]);
  Result<model::ServiceExportRecord> recreated = records.Create(*record);
  ASSERT_TRUE(recreated.ok()) << recreated.status().ToString();
  client::TypedClient<model::ServiceImport> imports(*members_[1]->client, ServiceImportCodec());
  ASSERT_TRUE(Eventually([&] { return imports.Get(kNamespace, "web").ok(); }));
  // Well within the wait (kPublishWait, 5 s): no status yet, in particular not Present.
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  Result<model::ServiceImport> waiting = imports.Get(kNamespace, "web");
  ASSERT_TRUE(waiting.ok());
  EXPECT_EQ(waiting->status.endpoint_slice_objects, model::EndpointSliceObjects::kUnset);
  for (model::OwnerReference& owner : slice->metadata.owner_references) {
    owner.uid = recreated->metadata.uid;
  }
  ASSERT_TRUE(broker_slices.Create(*slice).ok());
  ASSERT_TRUE(Eventually([&] {
    Result<model::ServiceImport> got = imports.Get(kNamespace, "web");
    return got.ok() && got->status.endpoint_slice_objects == model::EndpointSliceObjects::kPresent;
  }));
  EXPECT_TRUE(ImportsOneSlice(*members_[1], "web", "10.1.0.1"));
}

// The same race after the import's first status: an import written Absent (its exporter had not
// published within the wait, as when the broker refused its slices for a while) whose exporter
// then publishes stays Absent until the published slices are here, rather than flipping to
// Present over the empty set that its record's watch outran (AgentRefusalsTest flaked on this).
TEST_F(AgentWritesTest, AnAbsentImportWaitsForThePublishedSlicesBeforePresent) {
  client::TypedClient<model::ServiceExportRecord> records(*broker_, ServiceExportRecordCodec());
  client::TypedClient<model::EndpointSlice> broker_slices(*broker_, client::EndpointSliceCodec());
  const std::string published_key = "mcs.slicewright.io/endpointslices-published";
  std::optional<model::ServiceExportRecord> record;
  std::optional<model::EndpointSlice> slice;
  ASSERT_TRUE(WebExportedByClusterOne(&record, &slice));
  // cluster-1 stops (its Lease stays live); its record comes back unpublished, its slice later.
  ASSERT_TRUE(TakenFromTheBroker(&*record, &*slice));
  StartAgent(*members_[1]);
  record->metadata.annotations.erase(published_key);
  Result<model::ServiceExportRecord> recreated = records.Create(*record);
  ASSERT_TRUE(recreated.ok()) << recreated.status().ToString();
  client::TypedClient<model::ServiceImport> imports(*members_[1]->client, ServiceImportCodec());
  const auto slice_objects = [&] {
    Result<model::ServiceImport> got = imports.Get(kNamespace, "web");
    return got.ok() ? got->status.endpoint_slice_objects : model::EndpointSliceObjects::kUnset;
  };
  // Past the wait (kPublishWait, 5 s): Absent.
  ASSERT_TRUE(Eventually([&] { return slice_objects() == model::EndpointSliceObjects::kAbsent; },
                         std::chrono::seconds(60)));
  // Published, its slice not here yet: still Absent.
  recreated->metadata.annotations[published_key] = "1";
  Result<model::ServiceExportRecord> marked = records.Update(*recreated);
  ASSERT_TRUE(marked.ok()) << marked.status().ToString();
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_EQ(slice_objects(), model::EndpointSliceObjects::kAbsent);
  for (model::OwnerReference& owner : slice->metadata.owner_references) {
    owner.uid = recreated->metadata.uid;
  }
  ASSERT_TRUE(broker_slices.Create(*slice).ok());
  ASSERT_TRUE(Eventually([&] { return slice_objects() == model::EndpointSliceObjects::kPresent; }));
  EXPECT_TRUE(ImportsOneSlice(*members_[1], "web", "10.1.0.1"));
}

// The published count is said once: an exporter may have fewer slices now than it published
// (its Service scaled down). An import not yet Present waits for them a moment (kPublishWait,
// 5 s), then says Present over the slices there are, rather than waiting for ever.
TEST_F(AgentWritesTest, AnExporterWithFewerSlicesThanItPublishedIsNotWaitedOnForEver) {
  client::TypedClient<model::ServiceExportRecord> records(*broker_, ServiceExportRecordCodec());
  const std::string published_key = "mcs.slicewright.io/endpointslices-published";
  std::optional<model::ServiceExportRecord> record;
  std::optional<model::EndpointSlice> slice;
  ASSERT_TRUE(WebExportedByClusterOne(&record, &slice));
  // As if cluster-1 had published two slices and now has one. (Present comes with the first
  // retry after the wait, whose backoff makes that 6 to 17 s in the dev build.)
  StopAgent(*members_[0]);
  record->metadata.annotations[published_key] = "2";
  Result<model::ServiceExportRecord> marked = records.Update(*record);
  ASSERT_TRUE(marked.ok()) << marked.status().ToString();
  const auto start = std::chrono::steady_clock::now();
  StartAgent(*members_[1]);
  client::TypedClient<model::ServiceImport> imports(*members_[1]->client, ServiceImportCodec());
  ASSERT_TRUE(Eventually(
      [&] {
        Result<model::ServiceImport> got = imports.Get(kNamespace, "web");
        return got.ok() &&
               got->status.endpoint_slice_objects == model::EndpointSliceObjects::kPresent;
      },
      std::chrono::seconds(60)));
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(4900));
  EXPECT_TRUE(ImportsOneSlice(*members_[1], "web", "10.1.0.1"));
}

// A Service with a selector always has an EndpointSlice once its controller has run (a
// placeholder when no pod matches). Exported before our cache has seen any (a Service, its
// slices and its ServiceExport applied together), it is not published as "no slices": importers
// would say Present over an empty set that only the order of our watches made (a flake in
// AgentRefusalsTest found this). It is published once its slices are here.
TEST_F(AgentWritesTest, AnExportWhoseSlicesAreNotSeenYetIsNotPublishedAsEmpty) {
  SelectorService("web");
  StartAgents();
  Export("web");
  client::TypedClient<model::ServiceExportRecord> records(*broker_, ServiceExportRecordCodec());
  client::TypedClient<model::ServiceImport> imports(*members_[1]->client, ServiceImportCodec());
  const std::string ns(model::kDefaultBrokerNamespace);
  ASSERT_TRUE(Eventually([&] {
    Result<codec::ListPage<model::ServiceExportRecord>> all = records.ListAll(ns, {});
    return all.ok() && all->items.size() == 1;
  }));
  ASSERT_TRUE(Eventually([&] { return imports.Get(kNamespace, "web").ok(); }));
  // Well within the importer's wait (kPublishWait, 5 s).
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  Result<codec::ListPage<model::ServiceExportRecord>> unpublished = records.ListAll(ns, {});
  ASSERT_TRUE(unpublished.ok());
  ASSERT_EQ(unpublished->items.size(), 1U);
  EXPECT_FALSE(unpublished->items[0].metadata.annotations.contains(
      "mcs.slicewright.io/endpointslices-published"));
  Result<model::ServiceImport> waiting = imports.Get(kNamespace, "web");
  ASSERT_TRUE(waiting.ok());
  EXPECT_NE(waiting->status.endpoint_slice_objects, model::EndpointSliceObjects::kPresent);

  LocalSlice("web", "10.1.0.1");
  ASSERT_TRUE(Eventually([&] { return Converged("web", "10.1.0.1"); }));
  Result<codec::ListPage<model::ServiceExportRecord>> published = records.ListAll(ns, {});
  ASSERT_TRUE(published.ok());
  ASSERT_EQ(published->items.size(), 1U);
  EXPECT_EQ(
      published->items[0].metadata.annotations.at("mcs.slicewright.io/endpointslices-published"),
      "1");
}

// The other side of the wait above: a placeholder slice (no pod matches) is the Service's slices
// seen, published at once as none; and a Service with no slice at all (no controller writes any,
// as KEP-4770 allows) is published as none after the wait (kPublishWait, 5 s), not never (its
// importers would retry and never say Present). Both import Present, with no endpoint.
TEST_F(AgentWritesTest, AServiceWithoutEndpointsIsPublishedAsNone) {
  SelectorService("placeholder");
  model::EndpointSlice placeholder;
  placeholder.metadata.namespace_ = kNamespace;
  placeholder.metadata.name = "placeholder-abcde";
  placeholder.metadata.labels[std::string(model::kLabelServiceName)] = "placeholder";
  placeholder.metadata.labels[std::string(model::kLabelManagedBy)] =
      "endpointslice-controller.k8s.io";
  placeholder.address_type = "IPv4";
  ASSERT_TRUE(
      client::TypedClient<model::EndpointSlice>(*members_[0]->client, client::EndpointSliceCodec())
          .Create(placeholder)
          .ok());
  SelectorService("bare");
  StartAgents();
  const auto start = std::chrono::steady_clock::now();
  Export("placeholder");
  Export("bare");
  client::TypedClient<model::ServiceExportRecord> records(*broker_, ServiceExportRecordCodec());
  const auto published = [&](const std::string& service) -> std::string {
    Result<codec::ListPage<model::ServiceExportRecord>> all =
        records.ListAll(std::string(model::kDefaultBrokerNamespace), {});
    if (!all.ok()) return "";
    for (const model::ServiceExportRecord& record : all->items) {
      const auto it =
          record.metadata.annotations.find("mcs.slicewright.io/endpointslices-published");
      if (record.spec.name == service && it != record.metadata.annotations.end()) return it->second;
    }
    return "";
  };
  ASSERT_TRUE(Eventually([&] { return published("placeholder") == "0"; }));
  EXPECT_EQ(published("bare"), "");  // still waiting
  ASSERT_TRUE(Eventually([&] { return published("bare") == "0"; }, std::chrono::seconds(20)));
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(4900));
  client::TypedClient<model::ServiceImport> imports(*members_[1]->client, ServiceImportCodec());
  for (const char* name : {"placeholder", "bare"}) {
    EXPECT_TRUE(Eventually([&] {
      Result<model::ServiceImport> got = imports.Get(kNamespace, name);
      return got.ok() &&
             got->status.endpoint_slice_objects == model::EndpointSliceObjects::kPresent;
    })) << name;
  }
}

}  // namespace
}  // namespace slicewright::controllers::mcs

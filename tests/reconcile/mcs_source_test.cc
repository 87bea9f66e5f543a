// The MCS source: an export's broker slices and an import's slices from one source cluster, as
// PlanSlices plans them; and the tracker keyed by MCS owners.
#include "slicewright/reconcile/mcs_source.h"

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "slicewright/reconcile/tracker.h"

namespace slicewright::reconcile {
namespace {

model::EndpointSlice LocalSlice(std::string name, std::string family, std::string address,
                                std::string port_name, int port) {
  model::EndpointSlice slice;
  slice.metadata.name = std::move(name);
  slice.metadata.namespace_ = "demo";
  slice.address_type = std::move(family);
  model::Endpoint& endpoint = slice.endpoints.emplace_back();
  endpoint.addresses.push_back(std::move(address));
  endpoint.conditions.ready = true;
  endpoint.node_name = model::InlineString("node-a");
  endpoint.zone = "zone-a";
  endpoint.hostname = std::string("web-0");
  model::ObjectReference pod;
  pod.kind = "Pod";
  pod.name = "web-0";
  endpoint.target_ref = pod;
  model::EndpointPort& p = slice.ports.emplace_back();
  p.name = std::move(port_name);
  p.protocol = "TCP";
  p.port = port;
  return slice;
}

model::ServiceExportRecord Record() {
  model::ServiceExportRecord record;
  record.metadata.name = "web.demo.cluster-1";
  record.metadata.namespace_ = "slicewright-mcs";
  record.metadata.uid = "record-uid";
  record.spec.cluster = "cluster-1";
  record.spec.namespace_ = "demo";
  record.spec.name = "web";
  return record;
}

TEST(McsSourceTest, BrokerSlicesCarryTheEndpointsWithoutClusterLocalFields) {
  const std::vector<model::EndpointSlice> local = {
      LocalSlice("web-a", "IPv4", "10.244.0.5", "http", 8080),
      LocalSlice("web-b", "IPv6", "fd00:10:244::5", "http", 8080)};
  const Plan plan = PlanSlices(DesiredBrokerSlices(Record(), local), {}, McsPlanOptions());
  ASSERT_EQ(plan.actions.size(), 2U);
  for (const SliceAction& action : plan.actions) {
    const model::EndpointSlice& slice = action.slice;
    EXPECT_EQ(action.operation, Operation::kCreate);
    EXPECT_EQ(slice.metadata.namespace_, "slicewright-mcs");
    EXPECT_EQ(slice.metadata.labels.at("multicluster.kubernetes.io/service-name"), "web");
    EXPECT_EQ(slice.metadata.labels.at("multicluster.kubernetes.io/source-cluster"), "cluster-1");
    EXPECT_EQ(slice.metadata.labels.at("mcs.slicewright.io/service-namespace"), "demo");
    EXPECT_EQ(slice.metadata.labels.at("endpointslice.kubernetes.io/managed-by"),
              "mcs.slicewright.io");
    EXPECT_FALSE(slice.metadata.labels.contains("kubernetes.io/service-name"));
    ASSERT_EQ(slice.metadata.owner_references.size(), 1U);
    EXPECT_EQ(slice.metadata.owner_references[0].kind, "ServiceExportRecord");
    EXPECT_EQ(slice.metadata.owner_references[0].uid, "record-uid");
    ASSERT_EQ(slice.endpoints.size(), 1U);
    EXPECT_FALSE(slice.endpoints[0].node_name.has_value());
    EXPECT_FALSE(slice.endpoints[0].target_ref.has_value());
    EXPECT_EQ(slice.endpoints[0].hostname, std::string("web-0"));  // per-pod DNS names need it
    EXPECT_EQ(slice.endpoints[0].zone, "zone-a");
  }
}

TEST(McsSourceTest, ImportedSlicesFromOneClusterAndNothingWhenUnchanged) {
  model::ServiceImport service_import;
  service_import.metadata.namespace_ = "demo";
  service_import.metadata.name = "web";
  service_import.metadata.uid = "import-uid";
  const std::vector<model::EndpointSlice> local = {
      LocalSlice("web-a", "IPv4", "10.244.0.5", "http", 8080)};
  std::vector<model::EndpointSlice> broker;
  for (const SliceAction& action :
       PlanSlices(DesiredBrokerSlices(Record(), local), {}, McsPlanOptions()).actions) {
    broker.push_back(action.slice);
  }
  const Plan plan =
      PlanSlices(DesiredImportedSlices(service_import, "cluster-1", "derived-abc", broker), {},
                 McsPlanOptions());
  ASSERT_EQ(plan.actions.size(), 1U);
  model::EndpointSlice written = plan.actions[0].slice;
  EXPECT_EQ(written.metadata.namespace_, "demo");
  EXPECT_EQ(written.metadata.labels.at("kubernetes.io/service-name"), "derived-abc");
  EXPECT_EQ(written.metadata.labels.at("multicluster.kubernetes.io/source-cluster"), "cluster-1");
  EXPECT_EQ(written.metadata.owner_references.at(0).kind, "ServiceImport");
  EXPECT_EQ(written.endpoints.at(0).addresses.at(0), "10.244.0.5");
  // Stored as written: the next plan writes nothing.
  written.metadata.name = "web-xyz";
  written.metadata.generation = 1;
  const std::vector<model::EndpointSlice> existing = {written};
  EXPECT_TRUE(PlanSlices(DesiredImportedSlices(service_import, "cluster-1", "derived-abc", broker),
                         existing, McsPlanOptions())
                  .actions.empty());
  // Headless: no kubernetes.io/service-name (no derived Service).
  const Plan headless = PlanSlices(DesiredImportedSlices(service_import, "cluster-1", "", broker),
                                   {}, McsPlanOptions());
  EXPECT_FALSE(headless.actions.at(0).slice.metadata.labels.contains("kubernetes.io/service-name"));
  // No endpoints from that cluster: no slice at all (no placeholder).
  EXPECT_TRUE(
      PlanSlices(DesiredImportedSlices(service_import, "cluster-1", "", {}), {}, McsPlanOptions())
          .actions.empty());
}

// A dual-stack export imported into an IPv4-only cluster (the import's families: IPv4): its IPv6
// endpoints are not imported there. Without families (never aggregated yet), every slice.
TEST(McsSourceTest, ImportedSlicesOnlyOfTheImportsFamilies) {
  model::ServiceImport service_import;
  service_import.metadata.namespace_ = "demo";
  service_import.metadata.name = "web";
  service_import.metadata.uid = "import-uid";
  const std::vector<model::EndpointSlice> local = {
      LocalSlice("web-a", "IPv4", "10.244.0.5", "http", 8080),
      LocalSlice("web-b", "IPv6", "fd00:10:244::5", "http", 8080)};
  std::vector<model::EndpointSlice> broker;
  for (const SliceAction& action :
       PlanSlices(DesiredBrokerSlices(Record(), local), {}, McsPlanOptions()).actions) {
    broker.push_back(action.slice);
  }
  ASSERT_EQ(broker.size(), 2U);
  const auto types = [&] {
    std::vector<std::string> out;
    for (const SliceAction& action :
         PlanSlices(DesiredImportedSlices(service_import, "cluster-1", "derived-abc", broker), {},
                    McsPlanOptions())
             .actions) {
      out.push_back(action.slice.address_type);
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  service_import.spec.ip_families = {"IPv4"};
  EXPECT_EQ(types(), std::vector<std::string>{"IPv4"});
  service_import.spec.ip_families = {"IPv6", "IPv4"};
  EXPECT_EQ(types(), (std::vector<std::string>{"IPv4", "IPv6"}));
  service_import.spec.ip_families = {};
  EXPECT_EQ(types(), (std::vector<std::string>{"IPv4", "IPv6"}));
}

// The tracker files MCS slices under their MCS owner, so a write not yet in the cache is seen.
TEST(McsSourceTest, TrackerKeyedByMcsOwner) {
  EndpointSliceTracker tracker(ImportedSliceOwnerKey);
  model::EndpointSlice slice;
  slice.metadata.namespace_ = "demo";
  slice.metadata.name = "web-1";
  slice.metadata.uid = "slice-uid";
  slice.metadata.generation = 2;
  slice.metadata.labels = {{"multicluster.kubernetes.io/service-name", "web"},
                           {"multicluster.kubernetes.io/source-cluster", "cluster-1"}};
  tracker.Update(slice);
  model::Service owner;
  owner.metadata.namespace_ = "demo";
  owner.metadata.name = "web/cluster-1";
  owner.metadata.uid = "import-uid";
  EXPECT_TRUE(tracker.StaleSlices(owner, std::vector<model::EndpointSlice>{}));
  EXPECT_FALSE(tracker.StaleSlices(owner, std::vector<model::EndpointSlice>{slice}));
  model::ObjectMeta broker_slice;
  broker_slice.namespace_ = "slicewright-mcs";
  broker_slice.labels = {{"multicluster.kubernetes.io/service-name", "web"},
                         {"mcs.slicewright.io/service-namespace", "demo"},
                         {"multicluster.kubernetes.io/source-cluster", "cluster-1"}};
  EXPECT_EQ(BrokerSliceOwnerKey(broker_slice), "slicewright-mcs/web.demo.cluster-1");
}

}  // namespace
}  // namespace slicewright::reconcile

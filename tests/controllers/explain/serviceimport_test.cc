#include "controllers/explain/serviceimport.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "slicewright/model/mcs.h"
#include "slicewright/model/well_known.h"

// `slicewright explain serviceimport`: whether a consumer can route an import through
// EndpointSlices (Present with slices, Present without, Absent under each sync policy, unset), the
// per-source-cluster counts, conflicts and the notes, on objects built in memory.
namespace slicewright::controllers::explain {
namespace {

model::ServiceImport Import(model::EndpointSliceObjects objects,
                            std::string type = "ClusterSetIP") {
  model::ServiceImport si;
  si.metadata.name = "web";
  si.metadata.namespace_ = "shop";
  si.metadata.annotations = {{std::string(model::kAnnotationDerivedService), "derived-abc123"}};
  si.spec.type = std::move(type);
  if (si.spec.type == model::kServiceImportClusterSetIP) {
    si.spec.ips = {"10.96.7.7"};
    si.spec.ip_families = {"IPv4"};
  }
  model::McsServicePort port;
  port.name = "http";
  port.port = 80;
  si.spec.ports = {port};
  si.status.clusters = {"cluster-1", "cluster-2"};
  si.status.endpoint_slice_objects = objects;
  model::Condition ready;
  ready.type = "Ready";
  ready.status = "True";
  ready.reason = "Ready";
  si.status.conditions = {ready};
  return si;
}

model::EndpointSlice Slice(std::string name, std::string cluster, std::vector<bool> ready) {
  model::EndpointSlice slice;
  slice.metadata.name = std::move(name);
  slice.metadata.namespace_ = "shop";
  slice.metadata.labels = {{std::string(model::kLabelMcsServiceName), "web"},
                           {std::string(model::kLabelManagedBy), std::string(model::kManagedByMcs)},
                           {std::string(model::kLabelServiceName), "derived-abc123"}};
  if (!cluster.empty()) {
    slice.metadata.labels[std::string(model::kLabelMcsSourceCluster)] = std::move(cluster);
  }
  slice.address_type = "IPv4";
  for (std::size_t i = 0; i < ready.size(); ++i) {
    model::Endpoint endpoint;
    endpoint.addresses.push_back("10.244.0." + std::to_string(i + 1));
    endpoint.conditions.ready = ready[i];
    slice.endpoints.push_back(std::move(endpoint));
  }
  return slice;
}

model::ServiceExport Export(std::string sync_annotation = "") {
  model::ServiceExport se;
  se.metadata.name = "web";
  se.metadata.namespace_ = "shop";
  if (!sync_annotation.empty()) {
    se.metadata.annotations = {
        {std::string(model::kAnnotationEndpointSliceSync), std::move(sync_annotation)}};
  }
  return se;
}

bool Contains(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

bool AnyNoteContains(const ServiceImportExplanation& e, const std::string& needle) {
  for (const std::string& note : e.notes) {
    if (Contains(note, needle)) return true;
  }
  return false;
}

TEST(ExplainServiceImportTest, PresentWithSlicesIsRoutablePerSourceCluster) {
  ServiceImportInput input;
  input.service_import = Import(model::EndpointSliceObjects::kPresent);
  input.slices = {Slice("web-c2-a", "cluster-2", {true}), Slice("web-c1-a", "cluster-1", {true}),
                  Slice("web-c1-b", "cluster-1", {true, false})};
  const ServiceImportExplanation e = ExplainServiceImport(input);
  EXPECT_EQ(e.service_import, "shop/web");
  EXPECT_TRUE(e.endpointslices_routable);
  EXPECT_EQ(e.endpoint_slice_objects, "Present");
  EXPECT_TRUE(Contains(e.verdict, "multicluster.kubernetes.io/service-name=web")) << e.verdict;
  EXPECT_EQ(e.advice, "");
  EXPECT_EQ(e.derived_service, "derived-abc123");
  EXPECT_EQ(e.ips, std::vector<std::string>{"10.96.7.7"});
  ASSERT_EQ(e.clusters.size(), 2u);
  EXPECT_EQ(e.clusters[0].cluster, "cluster-1");
  EXPECT_TRUE(e.clusters[0].listed);
  ASSERT_EQ(e.clusters[0].slices.size(), 2u);
  EXPECT_EQ(e.clusters[0].slices[0].name, "web-c1-a");
  EXPECT_EQ(e.clusters[0].endpoints, 3);
  EXPECT_EQ(e.clusters[0].ready, 2);
  EXPECT_EQ(e.clusters[1].cluster, "cluster-2");
  EXPECT_EQ(e.clusters[1].ready, 1);
  EXPECT_EQ(e.endpoints, 4);
  EXPECT_EQ(e.ready_endpoints, 3);
  EXPECT_EQ(e.ready.status, "True");
  // Slices that also name the derived Service: the Envoy Gateway hazard of spec §14.2.
  EXPECT_TRUE(AnyNoteContains(e, "kubernetes.io/service-name=derived-abc123"));
  EXPECT_TRUE(AnyNoteContains(e, "this cluster does not export the Service"));

  const std::string text = RenderServiceImportText(e);
  EXPECT_TRUE(Contains(text, "ServiceImport shop/web\n")) << text;
  EXPECT_TRUE(Contains(text, "Routable via EndpointSlices: yes\n")) << text;
  EXPECT_TRUE(Contains(text, "ClusterSetIP:  10.96.7.7 (IPv4)\n")) << text;
  EXPECT_TRUE(Contains(text, "Derived:       Service derived-abc123\n")) << text;
  EXPECT_TRUE(Contains(text, "  cluster-1 live: 2 slice(s), 3 endpoints (2 ready, 2 serving)\n"))
      << text;
}

TEST(ExplainServiceImportTest, PresentWithNoReadyEndpointStaysRoutable) {
  ServiceImportInput input;
  input.service_import = Import(model::EndpointSliceObjects::kPresent);
  input.slices = {Slice("web-c1-a", "cluster-1", {false})};
  const ServiceImportExplanation e = ExplainServiceImport(input);
  EXPECT_TRUE(e.endpointslices_routable);
  EXPECT_TRUE(Contains(e.advice, "no endpoint is ready")) << e.advice;
  EXPECT_TRUE(Contains(e.advice, "do not fall back to spec.ips")) << e.advice;
}

TEST(ExplainServiceImportTest, PresentWithoutSlicesIsNotRoutable) {
  ServiceImportInput input;
  input.service_import = Import(model::EndpointSliceObjects::kPresent);
  const ServiceImportExplanation e = ExplainServiceImport(input);
  EXPECT_FALSE(e.endpointslices_routable);
  EXPECT_TRUE(Contains(e.verdict, "Present but no EndpointSlice")) << e.verdict;
  EXPECT_TRUE(Contains(e.advice, "check the MCS agent")) << e.advice;
  // Both exporting clusters are still reported, with nothing in them.
  ASSERT_EQ(e.clusters.size(), 2u);
  EXPECT_EQ(e.clusters[1].slices.size(), 0u);
}

TEST(ExplainServiceImportTest, AbsentUnderHeadlessPolicySaysToAnnotate) {
  ServiceImportInput input;
  input.service_import = Import(model::EndpointSliceObjects::kAbsent);
  input.endpointslice_sync = "headless";
  const ServiceImportExplanation e = ExplainServiceImport(input);
  EXPECT_FALSE(e.endpointslices_routable);
  EXPECT_EQ(e.endpoint_slice_objects, "Absent");
  EXPECT_TRUE(Contains(e.verdict, "endpointSliceObjects is Absent")) << e.verdict;
  EXPECT_TRUE(Contains(e.verdict, "headless-only (--mcs-endpointslice-sync=headless)"))
      << e.verdict;
  EXPECT_TRUE(Contains(e.verdict,
                       "annotate the ServiceExport with "
                       "mcs.slicewright.io/endpointslice-sync: \"true\""))
      << e.verdict;
  EXPECT_EQ(e.advice,
            "route to spec.ips (10.96.7.7) or the derived Service derived-abc123 instead");
}

// An import of no family this cluster serves: no ClusterSetIP and no slices, and the reason is the
// family, not the sync policy.
TEST(ExplainServiceImportTest, AbsentForAFamilyThisClusterLacksSaysSo) {
  ServiceImportInput input;
  input.service_import = Import(model::EndpointSliceObjects::kAbsent);
  input.service_import.spec.ips.clear();
  input.service_import.spec.ip_families = {"IPv6"};
  input.service_import.metadata.annotations.clear();
  model::Condition& ready = input.service_import.status.conditions.front();
  ready.status = "False";
  ready.reason = "IPFamilyNotSupported";
  ready.message = "The service's IP families (IPv6) are not supported by cluster \"c\" (IPv4).";
  input.endpointslice_sync = "all";
  const ServiceImportExplanation e = ExplainServiceImport(input);
  EXPECT_FALSE(e.endpointslices_routable);
  EXPECT_TRUE(Contains(e.verdict,
                       "not Ready here (IPFamilyNotSupported): The service's IP "
                       "families (IPv6) are not supported"))
      << e.verdict;
  EXPECT_FALSE(Contains(e.verdict, "annotated")) << e.verdict;
  EXPECT_TRUE(Contains(e.advice, "nothing to route to in this cluster")) << e.advice;
  EXPECT_TRUE(Contains(e.advice, "--mcs-cluster-ip-families")) << e.advice;
  EXPECT_FALSE(AnyNoteContains(e, "not allocated yet"));
}

TEST(ExplainServiceImportTest, AbsentUnderAnnotatedPolicyAndLocalFalse) {
  ServiceImportInput input;
  input.service_import = Import(model::EndpointSliceObjects::kAbsent);
  input.endpointslice_sync = "annotated";
  EXPECT_TRUE(Contains(ExplainServiceImport(input).verdict, "annotated-only"));

  input.endpointslice_sync = "all";
  input.service_export = Export("false");
  const ServiceImportExplanation e = ExplainServiceImport(input);
  EXPECT_TRUE(Contains(e.verdict,
                       "this cluster's ServiceExport is annotated "
                       "mcs.slicewright.io/endpointslice-sync: \"false\""))
      << e.verdict;
  EXPECT_TRUE(e.exported_here);
  EXPECT_FALSE(AnyNoteContains(e, "this cluster does not export the Service"));
}

TEST(ExplainServiceImportTest, AbsentHeadlessHasNoFallbackAndLeftoverSlicesAreFlagged) {
  ServiceImportInput input;
  input.service_import = Import(model::EndpointSliceObjects::kAbsent, "Headless");
  input.slices = {Slice("web-c1-a", "cluster-1", {true})};
  const ServiceImportExplanation e = ExplainServiceImport(input);
  EXPECT_FALSE(e.endpointslices_routable);
  EXPECT_TRUE(Contains(e.advice, "Headless import has no ClusterSetIP")) << e.advice;
  EXPECT_TRUE(AnyNoteContains(e, "do not consume them"));
  EXPECT_FALSE(Contains(RenderServiceImportText(e), "\nClusterSetIP:"));
}

TEST(ExplainServiceImportTest, UnsetIsALegacyImplementation) {
  ServiceImportInput input;
  input.service_import = Import(model::EndpointSliceObjects::kUnset);
  input.slices = {Slice("web-c1-a", "cluster-1", {true})};
  const ServiceImportExplanation e = ExplainServiceImport(input);
  EXPECT_FALSE(e.endpointslices_routable);
  EXPECT_EQ(e.endpoint_slice_objects, "");
  EXPECT_TRUE(Contains(e.verdict, "not set: a legacy implementation")) << e.verdict;
  EXPECT_TRUE(Contains(e.advice,
                       "probe for EndpointSlices labelled "
                       "multicluster.kubernetes.io/service-name=web (1 found here)"))
      << e.advice;
  EXPECT_TRUE(Contains(e.advice, "use spec.ips (10.96.7.7)")) << e.advice;
  EXPECT_TRUE(Contains(RenderServiceImportText(e), "EndpointSliceObjects: <unset>\n"));
}

TEST(ExplainServiceImportTest, ExpiredClustersUnlabelledSlicesAndConflicts) {
  ServiceImportInput input;
  input.service_import = Import(model::EndpointSliceObjects::kPresent);
  input.service_import.status.clusters = {"cluster-1"};
  input.slices = {Slice("web-c1-a", "cluster-1", {true}), Slice("web-c3-a", "cluster-3", {true}),
                  Slice("web-x", "", {true})};
  model::ServiceExport se = Export();
  model::Condition conflict;
  conflict.type = "Conflict";
  conflict.status = "True";
  conflict.reason = "PortConflict,TypeConflict";
  conflict.message = "Conflicting ports.";
  se.status.conditions = {conflict};
  input.service_export = se;
  const ServiceImportExplanation e = ExplainServiceImport(input);
  ASSERT_EQ(e.clusters.size(), 3u);
  EXPECT_EQ(e.clusters[0].cluster, "");
  EXPECT_FALSE(e.clusters[0].listed);
  EXPECT_EQ(e.clusters[2].cluster, "cluster-3");
  EXPECT_FALSE(e.clusters[2].listed);
  EXPECT_TRUE(
      AnyNoteContains(e, "cluster cluster-3 has slices here but is not in status.clusters"));
  EXPECT_TRUE(AnyNoteContains(e, "have no multicluster.kubernetes.io/source-cluster label"));
  EXPECT_EQ(e.conflict.status, "True");
  EXPECT_EQ(e.conflict.reason, "PortConflict,TypeConflict");
  const std::string text = RenderServiceImportText(e);
  EXPECT_TRUE(
      Contains(text, "Conflict:      True (PortConflict,TypeConflict): Conflicting ports.\n"))
      << text;
  EXPECT_TRUE(Contains(text, "  cluster-3 not in status.clusters: 1 slice(s)")) << text;
}

TEST(ExplainServiceImportTest, JsonCarriesTheAnswer) {
  ServiceImportInput input;
  input.service_import = Import(model::EndpointSliceObjects::kAbsent);
  input.service_export = Export();
  input.slices = {Slice("web-c1-a", "cluster-1", {true, false})};
  const ServiceImportExplanation e = ExplainServiceImport(input);
  const nlohmann::json json = nlohmann::json::parse(EncodeServiceImportJson(e));
  EXPECT_EQ(json["serviceImport"], "shop/web");
  EXPECT_EQ(json["type"], "ClusterSetIP");
  EXPECT_EQ(json["endpointSliceObjects"], "Absent");
  EXPECT_EQ(json["endpointSlicesRoutable"], false);
  EXPECT_EQ(json["ips"], nlohmann::json::array({"10.96.7.7"}));
  EXPECT_EQ(json["derivedService"], "derived-abc123");
  EXPECT_EQ(json["ready"]["status"], "True");
  EXPECT_EQ(json["exportedHere"], true);
  EXPECT_EQ(json["conflict"]["status"], "");
  EXPECT_EQ(json["readyEndpoints"], 1);
  ASSERT_EQ(json["clusters"].size(), 2u);
  EXPECT_EQ(json["clusters"][0]["cluster"], "cluster-1");
  EXPECT_EQ(json["clusters"][0]["slices"][0]["endpoints"], 2);
  EXPECT_EQ(json["clusters"][1]["cluster"], "cluster-2");
  EXPECT_EQ(json["clusters"][1]["listed"], true);
  EXPECT_EQ(json["verdict"], e.verdict);
  EXPECT_EQ(json["advice"], e.advice);
  EXPECT_TRUE(json["notes"].is_array());
}

// The clusterset.local names the import answers to and what they return now: a ClusterSetIP
// import's VIP and SRV names; a headless import's ready endpoints of listed (live) clusters only,
// per-endpoint names included; none (and a note) when nothing is ready.
TEST(ExplainServiceImportTest, ShowsDnsNamesAndAnswers) {
  ServiceImportInput vip;
  vip.service_import = Import(model::EndpointSliceObjects::kPresent);
  ServiceImportExplanation e = ExplainServiceImport(vip);
  ASSERT_EQ(e.dns.size(), 2U);
  EXPECT_EQ(e.dns[0].name, "web.shop.svc.clusterset.local");
  EXPECT_EQ(e.dns[0].records, (std::vector<std::string>{
                                  "A 10.96.7.7", "SRV 0 100 80 web.shop.svc.clusterset.local"}));
  EXPECT_EQ(e.dns[1].name, "_http._tcp.web.shop.svc.clusterset.local");
  EXPECT_TRUE(Contains(RenderServiceImportText(e),
                       "  web.shop.svc.clusterset.local: A 10.96.7.7, SRV 0 100 80 "
                       "web.shop.svc.clusterset.local\n"));
  const nlohmann::json json = nlohmann::json::parse(EncodeServiceImportJson(e));
  EXPECT_EQ(json["dns"][0]["records"][0], "A 10.96.7.7");

  ServiceImportInput headless;
  headless.service_import = Import(model::EndpointSliceObjects::kPresent, "Headless");
  headless.slices = {Slice("a", "cluster-1", {true, false}), Slice("b", "cluster-9", {true})};
  e = ExplainServiceImport(headless);
  std::vector<std::string> names;
  for (const auto& name : e.dns) names.push_back(name.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"web.shop.svc.clusterset.local",
                                      "10-244-0-1.cluster-1.web.shop.svc.clusterset.local"}));
  EXPECT_EQ(e.dns[0].records[0], "A 10.244.0.1");

  headless.slices = {Slice("a", "cluster-1", {false})};
  e = ExplainServiceImport(headless);
  EXPECT_TRUE(e.dns.empty());
  EXPECT_TRUE(AnyNoteContains(e, "web.shop.svc.clusterset.local is NXDOMAIN"));
}

}  // namespace
}  // namespace slicewright::controllers::explain

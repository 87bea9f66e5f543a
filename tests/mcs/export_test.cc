#include "slicewright/mcs/export.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "slicewright/model/core.h"
#include "slicewright/model/mcs.h"
#include "slicewright/model/time.h"

// The export side: Valid (spec §3 E1-E6, conformance T4/T12/T14), the record built from a Service
// and its ServiceExport, the record's validation and the Ready condition.
namespace slicewright::mcs {
namespace {

model::ServiceExport Export() {
  model::ServiceExport e;
  e.metadata.name = "hello";
  e.metadata.namespace_ = "ns";
  e.metadata.labels = {{"dummy-svcexport", "dummy"}};
  e.metadata.annotations = {{"dummy-svcexport", "dummy"}};
  e.metadata.creation_timestamp = model::Time::FromUnixSeconds(1'800'000'000);
  return e;
}

model::Service HelloService() {
  model::Service s;
  s.metadata.name = "hello";
  s.metadata.namespace_ = "ns";
  s.metadata.labels = {{"dummy-svc", "dummy"}};
  s.metadata.annotations = {{"dummy-svc", "dummy"}};
  s.spec.cluster_ip = "10.96.0.10";
  s.spec.ports = {{"tcp", "TCP", 42, model::IntOrString::FromInt(42), std::nullopt, 0},
                  {"udp", "UDP", 42, model::IntOrString::FromInt(42), "dns", 0}};
  s.spec.ip_families = {"IPv4", "IPv6"};
  s.spec.session_affinity = "ClientIP";
  s.spec.session_affinity_config = model::SessionAffinityConfig{model::ClientIPConfig{10}};
  s.spec.internal_traffic_policy = "Cluster";
  s.spec.traffic_distribution = "PreferClose";
  return s;
}

// Valid and the import type for every Service type (E5): ExternalName is refused (T14: Valid
// False, and no record, so no import anywhere), NodePort and LoadBalancer export as ClusterSetIP,
// clusterIP None as Headless (T4, T12: Valid True).
TEST(ValidateExportTest, ServiceTypes) {
  struct Case {
    std::string_view name;
    std::string type;
    std::string cluster_ip;
    std::string valid;        // "status reason"
    std::string record_type;  // "" when no record
  };
  const std::vector<Case> cases = {
      {"clusterip", "ClusterIP", "10.96.0.10", "True Valid", "ClusterSetIP"},
      {"default_type", "", "10.96.0.10", "True Valid", "ClusterSetIP"},
      {"nodeport", "NodePort", "10.96.0.10", "True Valid", "ClusterSetIP"},
      {"loadbalancer", "LoadBalancer", "10.96.0.10", "True Valid", "ClusterSetIP"},
      {"headless", "ClusterIP", "None", "True Valid", "Headless"},
      {"externalname", "ExternalName", "", "False InvalidServiceType", ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    model::Service service = HelloService();
    service.spec.type = c.type;
    service.spec.cluster_ip = c.cluster_ip;
    const ExportValidation v = ValidateExport(Export(), &service, "cluster-1", "slicewright-mcs");
    EXPECT_EQ(v.valid.type, "Valid");
    EXPECT_EQ(v.valid.status + " " + v.valid.reason, c.valid);
    EXPECT_EQ(v.record.has_value() ? v.record->spec.type : "", c.record_type);
    EXPECT_FALSE(v.ready_failure.has_value());
  }
}

// E6: no Service -> Valid False NoService, no record.
TEST(ValidateExportTest, MissingService) {
  const ExportValidation v = ValidateExport(Export(), nullptr, "cluster-1", "slicewright-mcs");
  EXPECT_EQ(v.valid.status, "False");
  EXPECT_EQ(v.valid.reason, "NoService");
  EXPECT_EQ(v.valid.message, R"(Service "ns/hello" does not exist in this cluster.)");
  EXPECT_FALSE(v.record.has_value());
}

// The record carries what the aggregation needs, labels and annotations only from the
// ServiceExport's spec (E4, T2), named and labelled as the schema says.
TEST(ValidateExportTest, BuildsTheRecord) {
  model::ServiceExport e = Export();
  e.spec.exported_labels = {{"dummy-label", "true"}};
  e.spec.exported_annotations = {{"dummy-annotation", "true"}};
  e.metadata.annotations.emplace(model::kAnnotationEndpointSliceSync, "false");
  const model::Service service = HelloService();
  const ExportValidation v = ValidateExport(e, &service, "cluster-1", "slicewright-mcs");
  ASSERT_TRUE(v.record.has_value());
  const model::ServiceExportRecord& r = *v.record;
  EXPECT_EQ(r.metadata.name, "hello.ns.cluster-1");
  EXPECT_EQ(r.metadata.namespace_, "slicewright-mcs");
  EXPECT_EQ(r.metadata.labels, (model::StringMap{
                                   {"mcs.slicewright.io/service-namespace", "ns"},
                                   {"multicluster.kubernetes.io/service-name", "hello"},
                                   {"multicluster.kubernetes.io/source-cluster", "cluster-1"},
                               }));
  EXPECT_EQ(r.spec.cluster, "cluster-1");
  EXPECT_EQ(r.spec.namespace_, "ns");
  EXPECT_EQ(r.spec.name, "hello");
  EXPECT_EQ(r.spec.export_creation_timestamp, model::Time::FromUnixSeconds(1'800'000'000));
  ASSERT_EQ(r.spec.ports.size(), 2U);
  EXPECT_EQ(r.spec.ports[0], (model::McsServicePort{"tcp", "TCP", std::nullopt, 42}));
  EXPECT_EQ(r.spec.ports[1], (model::McsServicePort{"udp", "UDP", "dns", 42}));
  EXPECT_EQ(r.spec.ip_families, (std::vector<std::string>{"IPv4", "IPv6"}));
  EXPECT_EQ(r.spec.session_affinity, "ClientIP");
  EXPECT_EQ(r.spec.session_affinity_config->client_ip->timeout_seconds, 10);
  EXPECT_EQ(r.spec.internal_traffic_policy, "Cluster");
  EXPECT_EQ(r.spec.traffic_distribution, "PreferClose");
  EXPECT_EQ(r.spec.exported_labels, (model::StringMap{{"dummy-label", "true"}}));
  EXPECT_EQ(r.spec.exported_annotations, (model::StringMap{{"dummy-annotation", "true"}}));
  EXPECT_EQ(r.spec.endpoint_slice_sync, false);
  EXPECT_TRUE(v.warnings.empty());
  EXPECT_TRUE(ValidateExportRecord(r).ok()) << ValidateExportRecord(r).ToString();
}

// "" session affinity is None (the API server's default); a bad annotation value is a warning.
TEST(ValidateExportTest, DefaultsAndWarnings) {
  model::Service service = HelloService();
  service.spec.session_affinity = "";
  service.spec.session_affinity_config.reset();
  model::ServiceExport e = Export();
  e.metadata.annotations.emplace(model::kAnnotationEndpointSliceSync, "yes");
  e.metadata.creation_timestamp.reset();
  const ExportValidation v = ValidateExport(e, &service, "cluster-1", "slicewright-mcs");
  ASSERT_TRUE(v.record.has_value());
  EXPECT_EQ(v.record->spec.session_affinity, "None");
  EXPECT_FALSE(v.record->spec.endpoint_slice_sync.has_value());
  EXPECT_EQ(v.warnings,
            (std::vector<std::string>{
                "the ServiceExport has no creationTimestamp: it ranks as the oldest",
                R"(annotation mcs.slicewright.io/endpointslice-sync: expected "true" or "false", )"
                R"(got "yes"; ignored)"}));
}

// A record name over 253 characters cannot be published: Ready False Failed, no record.
TEST(ValidateExportTest, RecordNameTooLong) {
  model::ServiceExport e = Export();
  e.metadata.name = std::string(63, 'n');
  e.metadata.namespace_ = std::string(63, 's');
  model::Service service = HelloService();
  const std::string cluster = std::string(63, 'c') + "." + std::string(63, 'd');
  const ExportValidation v = ValidateExport(e, &service, cluster, "slicewright-mcs");
  EXPECT_EQ(v.valid.status, "True");
  EXPECT_FALSE(v.record.has_value());
  ASSERT_TRUE(v.ready_failure.has_value());
  EXPECT_EQ(v.ready_failure->type, "Ready");
  EXPECT_EQ(v.ready_failure->status + " " + v.ready_failure->reason, "False Failed");
  EXPECT_NE(v.ready_failure->message.find("is 255 characters, more than 253"), std::string::npos)
      << v.ready_failure->message;
}

TEST(ValidateExportTest, ParsesTheAnnotation) {
  EXPECT_EQ(ParseEndpointSliceSync("true"), true);
  EXPECT_EQ(ParseEndpointSliceSync("false"), false);
  EXPECT_EQ(ParseEndpointSliceSync("True"), std::nullopt);
  EXPECT_EQ(ParseEndpointSliceSync(""), std::nullopt);
}

// A forged or corrupted record is refused with the field named.
TEST(ValidateExportRecordTest, RefusesBadRecords) {
  model::Service service = HelloService();
  const model::ServiceExportRecord good =
      *ValidateExport(Export(), &service, "cluster-1", "slicewright-mcs").record;
  struct Case {
    std::string_view name;
    void (*edit)(model::ServiceExportRecord&);
    std::string want;
  };
  const std::vector<Case> cases = {
      {"name_mismatch", [](auto& r) { r.metadata.name = "hello.ns.cluster-2"; },
       R"(serviceexportrecords/slicewright-mcs/hello.ns.cluster-2: .metadata.name: must be )"
       R"("hello.ns.cluster-1" (<service>.<namespace>.<cluster>), is "hello.ns.cluster-2")"},
      {"forged_source_label",
       [](auto& r) { r.metadata.labels["multicluster.kubernetes.io/source-cluster"] = "evil"; },
       R"(serviceexportrecords/slicewright-mcs/hello.ns.cluster-1: )"
       R"(.metadata.labels[multicluster.kubernetes.io/source-cluster]: must equal spec.cluster )"
       R"("cluster-1", is "evil")"},
      {"bad_cluster",
       [](auto& r) {
         r.spec.cluster = "Cluster_1";
         r.metadata.name = "hello.ns.Cluster_1";
       },
       R"(serviceexportrecords/slicewright-mcs/hello.ns.Cluster_1: .spec.cluster: cluster id )"
       R"("Cluster_1": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric )"
       R"(characters, '-' or '.', and must start and end with an alphanumeric character (e.g. )"
       R"('example.com', regex used for validation is )"
       R"('[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'))"},
      {"port_zero", [](auto& r) { r.spec.ports[1].port = 0; },
       R"(serviceexportrecords/slicewright-mcs/hello.ns.cluster-1: .spec.ports[1].port: must be )"
       R"(between 1 and 65535, inclusive)"},
      {"port_too_big", [](auto& r) { r.spec.ports[0].port = 70000; },
       R"(serviceexportrecords/slicewright-mcs/hello.ns.cluster-1: .spec.ports[0].port: must be )"
       R"(between 1 and 65535, inclusive)"},
      {"duplicate_port_name", [](auto& r) { r.spec.ports[1].name = "tcp"; },
       R"(serviceexportrecords/slicewright-mcs/hello.ns.cluster-1: .spec.ports[1].name: )"
       R"(duplicate port name "tcp")"},
      {"duplicate_protocol_port", [](auto& r) { r.spec.ports[1].protocol = "TCP"; },
       R"(serviceexportrecords/slicewright-mcs/hello.ns.cluster-1: .spec.ports[1]: duplicate TCP )"
       R"(port 42)"},
      {"unnamed_of_two", [](auto& r) { r.spec.ports[0].name = ""; },
       R"(serviceexportrecords/slicewright-mcs/hello.ns.cluster-1: .spec.ports[0].name: required )"
       R"(when there is more than one port)"},
      {"bad_protocol", [](auto& r) { r.spec.ports[0].protocol = "ICMP"; },
       R"(serviceexportrecords/slicewright-mcs/hello.ns.cluster-1: .spec.ports[0].protocol: must )"
       R"(be TCP, UDP or SCTP, is "ICMP")"},
      {"duplicate_family",
       [](auto& r) {
         r.spec.ip_families = {"IPv6", "IPv6"};
       },
       R"(serviceexportrecords/slicewright-mcs/hello.ns.cluster-1: .spec.ipFamilies[1]: )"
       R"(duplicate IPv6)"},
      {"bad_family", [](auto& r) { r.spec.ip_families = {"IPv5"}; },
       R"(serviceexportrecords/slicewright-mcs/hello.ns.cluster-1: .spec.ipFamilies[0]: must be )"
       R"(IPv4 or IPv6, is "IPv5")"},
      {"bad_type", [](auto& r) { r.spec.type = "NodePort"; },
       R"(serviceexportrecords/slicewright-mcs/hello.ns.cluster-1: .spec.type: must be )"
       R"(ClusterSetIP or Headless, is "NodePort")"},
      {"bad_namespace",
       [](auto& r) {
         r.spec.namespace_ = "a.b";
         r.metadata.name = "hello.a.b.cluster-1";
       },
       R"(serviceexportrecords/slicewright-mcs/hello.a.b.cluster-1: .spec.namespace: Invalid )"
       R"(value: "a.b": must not contain dots)"},
      {"bad_name", [](auto& r) { r.spec.name = "Hello"; },
       R"(serviceexportrecords/slicewright-mcs/hello.ns.cluster-1: .spec.name: Invalid value: )"
       R"("Hello": a lowercase RFC 1123 label must consist of lower case alphanumeric characters )"
       R"(or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or )"
       R"('123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?'))"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    model::ServiceExportRecord r = good;
    c.edit(r);
    const Status status = ValidateExportRecord(r);
    EXPECT_EQ(status.code(), StatusCode::kInvalid);
    EXPECT_EQ(status.ToString(), c.want);
  }
}

TEST(ExportReadyTest, Conditions) {
  const model::Condition ok = ExportReadyCondition(Status());
  EXPECT_EQ(ok.type + " " + ok.status + " " + ok.reason, "Ready True Exported");
  const model::Condition failed = ExportReadyCondition(UnavailableError("broker down"));
  EXPECT_EQ(failed.type + " " + failed.status + " " + failed.reason, "Ready False Failed");
  EXPECT_EQ(failed.message, "Publishing the export in the broker failed: broker down");
  const model::Condition pending = ExportPendingCondition();
  EXPECT_EQ(pending.type + " " + pending.status + " " + pending.reason, "Ready Unknown Pending");
}

}  // namespace
}  // namespace slicewright::mcs

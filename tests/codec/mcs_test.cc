#include "slicewright/codec/mcs.h"

#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "slicewright/codec/json.h"
#include "slicewright/codec/yaml.h"
#include "slicewright/model/mcs.h"
#include "slicewright/model/time.h"

#include "codec_test_util.h"

// JSON of the MCS kinds: decoding as API servers and kubectl write them, the broker record's schema
// checks, round trips, the /status bodies, and the upstream demo manifests.
namespace slicewright::codec {
namespace {

model::Time T(std::string_view text) { return model::ParseRfc3339(text).value_or(model::Time{}); }

model::Condition Cond(std::string type, std::string status, std::string reason, std::string message,
                      std::string_view time) {
  model::Condition c;
  c.type = std::move(type);
  c.status = std::move(status);
  c.reason = std::move(reason);
  c.message = std::move(message);
  c.last_transition_time = T(time);
  return c;
}

model::ServiceExportRecord Record() {
  model::ServiceExportRecord r;
  r.metadata.name = "hello.demo.cluster-1";
  r.metadata.namespace_ = "slicewright-mcs";
  r.metadata.labels = {{"multicluster.kubernetes.io/source-cluster", "cluster-1"}};
  r.spec.cluster = "cluster-1";
  r.spec.namespace_ = "demo";
  r.spec.name = "hello";
  r.spec.export_creation_timestamp = T("2026-12-06T03:00:00Z");
  r.spec.type = "ClusterSetIP";
  r.spec.ports = {{"tcp", "TCP", std::nullopt, 42}, {"udp", "UDP", "dns", 42}};
  r.spec.ip_families = {"IPv4", "IPv6"};
  r.spec.session_affinity = "ClientIP";
  r.spec.session_affinity_config = model::SessionAffinityConfig{model::ClientIPConfig{10}};
  r.spec.internal_traffic_policy = "Cluster";
  r.spec.traffic_distribution = "PreferClose";
  r.spec.exported_labels = {{"dummy-label", "true"}};
  r.spec.exported_annotations = {{"dummy-annotation", "true"}};
  r.spec.endpoint_slice_sync = false;
  return r;
}

constexpr std::string_view kRecordJson =
    R"({"apiVersion":"mcs.slicewright.io/v1alpha1","kind":"ServiceExportRecord",)"
    R"("metadata":{"name":"hello.demo.cluster-1","namespace":"slicewright-mcs","labels":)"
    R"({"multicluster.kubernetes.io/source-cluster":"cluster-1"}},"spec":{"cluster":"cluster-1",)"
    R"("namespace":"demo","name":"hello","exportCreationTimestamp":"2026-12-06T03:00:00Z",)"
    R"("type":"ClusterSetIP","ports":[{"name":"tcp","protocol":"TCP","port":42},)"
    R"({"name":"udp","protocol":"UDP","appProtocol":"dns","port":42}],)"
    R"("ipFamilies":["IPv4","IPv6"],"sessionAffinity":"ClientIP",)"
    R"("sessionAffinityConfig":{"clientIP":{"timeoutSeconds":10}},)"
    R"("internalTrafficPolicy":"Cluster","trafficDistribution":"PreferClose",)"
    R"("exportedLabels":{"dummy-label":"true"},"exportedAnnotations":{"dummy-annotation":"true"},)"
    R"("endpointSliceSync":false}})";

// The record's encoding, byte for byte (the broker's CRD is written from the same schema).
TEST(McsCodecTest, EncodesTheRecordAsTheSchemaSays) {
  EXPECT_EQ(EncodeServiceExportRecord(Record()), kRecordJson);
  const Result<model::ServiceExportRecord> back = DecodeServiceExportRecord(kRecordJson);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, Record());
}

// The minimal record: optional fields omitted, ports empty but present.
TEST(McsCodecTest, MinimalRecordRoundTrips) {
  model::ServiceExportRecord r;
  r.metadata.name = "a.b.c";
  r.spec.cluster = "c";
  r.spec.namespace_ = "b";
  r.spec.name = "a";
  r.spec.export_creation_timestamp = T("2026-01-01T00:00:00Z");
  r.spec.type = "Headless";
  const std::string json = EncodeServiceExportRecord(r);
  EXPECT_EQ(json,
            R"({"apiVersion":"mcs.slicewright.io/v1alpha1","kind":"ServiceExportRecord",)"
            R"("metadata":{"name":"a.b.c"},"spec":{"cluster":"c","namespace":"b","name":"a",)"
            R"("exportCreationTimestamp":"2026-01-01T00:00:00Z","type":"Headless","ports":[]}})");
  const Result<model::ServiceExportRecord> back = DecodeServiceExportRecord(json);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, r);
}

// A malformed record is kBadRequest naming the record and the field, never a crash.
TEST(McsCodecTest, MalformedRecords) {
  const std::string head =
      R"({"apiVersion":"mcs.slicewright.io/v1alpha1","kind":"ServiceExportRecord",)"
      R"("metadata":{"name":"x","namespace":"slicewright-mcs"},)";
  const std::string ok_spec_start =
      R"("spec":{"cluster":"c","namespace":"n","name":"s",)"
      R"("exportCreationTimestamp":"2026-01-01T00:00:00Z","type":"ClusterSetIP",)";
  const std::string name = "serviceexportrecords/slicewright-mcs/x: ";
  struct Case {
    std::string_view what;
    std::string json;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"port_string", head + ok_spec_start + R"("ports":[{"port":1},{"port":"80"}]}})",
       name + ".spec.ports[1].port: expected int32"},
      {"port_fraction", head + ok_spec_start + R"("ports":[{"port":80.5}]}})",
       name + ".spec.ports[0].port: expected int32"},
      {"port_out_of_range", head + ok_spec_start + R"("ports":[{"port":4294967296}]}})",
       name + ".spec.ports[0].port: integer out of range for int32"},
      {"port_missing", head + ok_spec_start + R"("ports":[{"name":"a"}]}})",
       name + ".spec.ports[0].port: required field missing"},
      {"protocol_enum", head + ok_spec_start + R"("ports":[{"port":1,"protocol":"tcp"}]}})",
       name + R"(.spec.ports[0].protocol: expected TCP, UDP or SCTP, got "tcp")"},
      {"ports_not_list", head + ok_spec_start + R"("ports":{}}})",
       name + ".spec.ports: expected array"},
      {"ports_missing", head + ok_spec_start + R"("ipFamilies":["IPv4"]}})",
       name + ".spec.ports: required field missing"},
      {"type_enum",
       head + R"("spec":{"cluster":"c","namespace":"n","name":"s",)"
              R"("exportCreationTimestamp":"2026-01-01T00:00:00Z","type":"NodePort","ports":[]}})",
       name + R"(.spec.type: expected ClusterSetIP or Headless, got "NodePort")"},
      {"cluster_missing",
       head + R"("spec":{"namespace":"n","name":"s",)"
              R"("exportCreationTimestamp":"2026-01-01T00:00:00Z","type":"Headless","ports":[]}})",
       name + ".spec.cluster: required field missing"},
      {"timestamp_missing",
       head + R"("spec":{"cluster":"c","namespace":"n","name":"s","type":"Headless","ports":[]}})",
       name + ".spec.exportCreationTimestamp: required field missing"},
      {"timestamp_bad",
       head + R"("spec":{"cluster":"c","namespace":"n","name":"s","type":"Headless","ports":[],)"
              R"("exportCreationTimestamp":"yesterday"}})",
       name + ".spec.exportCreationTimestamp: expected RFC 3339 time"},
      {"family_enum", head + ok_spec_start + R"("ports":[],"ipFamilies":["IPv4","ipv6"]}})",
       name + R"(.spec.ipFamilies[1]: expected IPv4 or IPv6, got "ipv6")"},
      {"families_too_many",
       head + ok_spec_start + R"("ports":[],"ipFamilies":["IPv4","IPv6","IPv4"]}})",
       name + ".spec.ipFamilies: at most 2 items allowed"},
      {"label_value", head + ok_spec_start + R"("ports":[],"exportedLabels":{"a":1}}})",
       name + ".spec.exportedLabels[a]: expected string"},
      {"sync_not_bool", head + ok_spec_start + R"("ports":[],"endpointSliceSync":"true"}})",
       name + ".spec.endpointSliceSync: expected boolean"},
      {"timeout_string",
       head + ok_spec_start +
           R"("ports":[],"sessionAffinityConfig":{"clientIP":{"timeoutSeconds":"10"}}}})",
       name + ".spec.sessionAffinityConfig.clientIP.timeoutSeconds: expected int32"},
      {"spec_missing", head + R"("status":{}})", name + ".spec: required field missing"},
      {"spec_not_object", head + R"("spec":[]})", name + ".spec: expected object"},
      {"wrong_kind", R"({"apiVersion":"v1","kind":"Service","metadata":{"name":"x"}})",
       "serviceexportrecords/x: expected mcs.slicewright.io/v1alpha1 ServiceExportRecord, got v1 "
       "Service"},
      {"metadata_labels", R"({"metadata":{"name":"x","labels":[]}})",
       "serviceexportrecords/x: .metadata.labels: expected object"},
      {"truncated", head, "malformed JSON: "},
      {"not_an_object", "[1]", "expected a JSON object"},
      {"empty", "", "malformed JSON: "},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const Result<model::ServiceExportRecord> r = DecodeServiceExportRecord(c.json);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kBadRequest);
    if (c.want.ends_with(": ")) {
      EXPECT_TRUE(r.status().ToString().starts_with(c.want)) << r.status().ToString();
    } else {
      EXPECT_EQ(r.status().ToString(), c.want);
    }
  }
}

// ServiceExport as the conformance suite creates it and our agent writes its status.
TEST(McsCodecTest, ServiceExport) {
  const Result<model::ServiceExport> e = DecodeServiceExport(R"({
    "apiVersion": "multicluster.x-k8s.io/v1beta1", "kind": "ServiceExport",
    "metadata": {"name": "hello", "namespace": "mcs-conformance-1", "uid": "u",
                 "creationTimestamp": "2026-12-06T03:00:00Z",
                 "labels": {"dummy-svcexport": "dummy"},
                 "annotations": {"mcs.slicewright.io/endpointslice-sync": "true"}},
    "spec": {"exportedLabels": {"dummy-label": "true"},
             "exportedAnnotations": {"dummy-annotation": "true"}},
    "status": {"conditions": [
      {"type": "Valid", "status": "True", "reason": "Valid", "message": "ok",
       "lastTransitionTime": "2026-12-06T03:00:01Z", "observedGeneration": 1},
      {"type": "Conflict", "status": "True", "reason": "PortConflict,TypeConflict",
       "message": "m", "lastTransitionTime": "2026-12-06T03:00:02Z"}]}})");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->metadata.name, "hello");
  EXPECT_EQ(e->metadata.creation_timestamp, T("2026-12-06T03:00:00Z"));
  EXPECT_EQ(e->spec.exported_labels, (model::StringMap{{"dummy-label", "true"}}));
  EXPECT_EQ(e->spec.exported_annotations, (model::StringMap{{"dummy-annotation", "true"}}));
  ASSERT_EQ(e->status.conditions.size(), 2U);
  EXPECT_EQ(e->status.conditions[0].observed_generation, 1);
  EXPECT_EQ(e->status.conditions[1].reason, "PortConflict,TypeConflict");
  // Round trip, and the full object serves a PUT of /status.
  const std::string json = EncodeServiceExport(*e);
  const Result<model::ServiceExport> back = DecodeServiceExport(json);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, *e);
  // v1alpha1 has the same schema; an empty spec is fine.
  EXPECT_TRUE(DecodeServiceExport(
                  R"({"apiVersion":"multicluster.x-k8s.io/v1alpha1","kind":"ServiceExport",)"
                  R"("metadata":{"name":"a"}})")
                  .ok());
  const Result<model::ServiceExport> wrong = DecodeServiceExport(
      R"({"apiVersion":"multicluster.x-k8s.io/v2","kind":"ServiceExport","metadata":{"name":"a"}})");
  EXPECT_EQ(wrong.status().ToString(),
            "serviceexports/a: expected multicluster.x-k8s.io/v1beta1 ServiceExport, got "
            "multicluster.x-k8s.io/v2 ServiceExport");
  const Result<model::ServiceExport> bad = DecodeServiceExport(
      R"({"metadata":{"name":"a","namespace":"n"},"status":{"conditions":[{"type":1}]}})");
  EXPECT_EQ(bad.status().ToString(),
            "serviceexports/n/a: .status.conditions[0].type: expected string");
}

TEST(McsCodecTest, ServiceExportStatusPatch) {
  model::ServiceExportStatus status;
  status.conditions = {Cond("Valid", "True", "Valid", "ok", "2026-12-06T03:00:01Z"),
                       Cond("Conflict", "False", "NoConflicts", "", "2026-12-06T03:00:02Z")};
  EXPECT_EQ(EncodeServiceExportStatusPatch(status),
            R"({"status":{"conditions":[{"type":"Valid","status":"True",)"
            R"("lastTransitionTime":"2026-12-06T03:00:01Z","reason":"Valid","message":"ok"},)"
            R"({"type":"Conflict","status":"False","lastTransitionTime":"2026-12-06T03:00:02Z",)"
            R"("reason":"NoConflicts","message":""}]}})");
}

model::ServiceImport Import() {
  model::ServiceImport i;
  i.metadata.name = "hello";
  i.metadata.namespace_ = "demo";
  i.metadata.annotations = {{"multicluster.kubernetes.io/derived-service", "derived-x"}};
  i.spec.ports = {{"tcp", "TCP", std::nullopt, 42}, {"", "UDP", "dns", 53}};
  i.spec.ips = {"10.96.0.12", "fd00::12"};
  i.spec.type = "ClusterSetIP";
  i.spec.session_affinity = "ClientIP";
  i.spec.session_affinity_config = model::SessionAffinityConfig{model::ClientIPConfig{}};
  i.spec.ip_families = {"IPv4", "IPv6"};
  i.spec.internal_traffic_policy = "Local";
  i.spec.traffic_distribution = "PreferSameZone";
  i.status.clusters = {"cluster-1", "cluster-2"};
  i.status.conditions = {Cond("Ready", "True", "Ready", "Imported", "2026-12-06T03:00:03Z")};
  i.status.endpoint_slice_objects = model::EndpointSliceObjects::kPresent;
  return i;
}

TEST(McsCodecTest, ServiceImportRoundTrips) {
  const std::string json = EncodeServiceImport(Import());
  EXPECT_EQ(
      json,
      R"({"apiVersion":"multicluster.x-k8s.io/v1beta1","kind":"ServiceImport",)"
      R"("metadata":{"name":"hello","namespace":"demo","annotations":)"
      R"({"multicluster.kubernetes.io/derived-service":"derived-x"}},)"
      R"("spec":{"ports":[{"name":"tcp","protocol":"TCP","port":42},)"
      R"({"protocol":"UDP","appProtocol":"dns","port":53}],"ips":["10.96.0.12","fd00::12"],)"
      R"("type":"ClusterSetIP","sessionAffinity":"ClientIP",)"
      R"("sessionAffinityConfig":{"clientIP":{}},"ipFamilies":["IPv4","IPv6"],)"
      R"("internalTrafficPolicy":"Local","trafficDistribution":"PreferSameZone"},)"
      R"("status":{"clusters":[{"cluster":"cluster-1"},{"cluster":"cluster-2"}],)"
      R"("conditions":[{"type":"Ready","status":"True",)"
      R"("lastTransitionTime":"2026-12-06T03:00:03Z","reason":"Ready","message":"Imported"}],)"
      R"("endpointSliceObjects":"Present"}})");
  const Result<model::ServiceImport> back = DecodeServiceImport(json);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, Import());
  // Absent round-trips too; unset is left out.
  model::ServiceImport absent = Import();
  absent.status.endpoint_slice_objects = model::EndpointSliceObjects::kAbsent;
  EXPECT_EQ(DecodeServiceImport(EncodeServiceImport(absent)).value(), absent);
  model::ServiceImport unset = Import();
  unset.status = {};
  const std::string unset_json = EncodeServiceImport(unset);
  EXPECT_EQ(unset_json.find("status"), std::string::npos);
  EXPECT_EQ(DecodeServiceImport(unset_json).value(), unset);
}

// A legacy implementation's import (no endpointSliceObjects) reads as unset; an unknown value is
// refused rather than guessed.
TEST(McsCodecTest, EndpointSliceObjectsField) {
  const Result<model::ServiceImport> legacy = DecodeServiceImport(
      R"({"metadata":{"name":"a","namespace":"n"},"spec":{"type":"Headless","ports":[]},)"
      R"("status":{"clusters":[{"cluster":"c"}]}})");
  ASSERT_TRUE(legacy.ok()) << legacy.status().ToString();
  EXPECT_EQ(legacy->status.endpoint_slice_objects, model::EndpointSliceObjects::kUnset);
  const Result<model::ServiceImport> bad = DecodeServiceImport(
      R"({"metadata":{"name":"a","namespace":"n"},"status":{"endpointSliceObjects":"Partial"}})");
  EXPECT_EQ(bad.status().code(), StatusCode::kBadRequest);
  EXPECT_EQ(bad.status().ToString(),
            R"(serviceimports/n/a: .status.endpointSliceObjects: expected Present or Absent, )"
            R"(got "Partial")");
  const Result<model::ServiceImport> bad_cluster = DecodeServiceImport(
      R"({"metadata":{"name":"a","namespace":"n"},"status":{"clusters":[{"cluster":7}]}})");
  EXPECT_EQ(bad_cluster.status().ToString(),
            "serviceimports/n/a: .status.clusters[0].cluster: expected string");
}

// The /status merge patch replaces every field whole; unset endpointSliceObjects removes it.
TEST(McsCodecTest, ServiceImportStatusPatch) {
  EXPECT_EQ(
      EncodeServiceImportStatusPatch(Import().status),
      R"({"status":{"clusters":[{"cluster":"cluster-1"},{"cluster":"cluster-2"}],)"
      R"("conditions":[{"type":"Ready","status":"True",)"
      R"("lastTransitionTime":"2026-12-06T03:00:03Z","reason":"Ready","message":"Imported"}],)"
      R"("endpointSliceObjects":"Present"}})");
  EXPECT_EQ(EncodeServiceImportStatusPatch({}),
            R"({"status":{"clusters":[],"conditions":[],"endpointSliceObjects":null}})");
}

TEST(McsCodecTest, ClusterProperty) {
  const Result<model::ClusterProperty> p =
      DecodeClusterProperty(R"({"apiVersion":"about.k8s.io/v1","kind":"ClusterProperty",)"
                            R"("metadata":{"name":"id.k8s.io"},"spec":{"value":"cluster-1"}})");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->metadata.name, "id.k8s.io");
  EXPECT_EQ(p->value, "cluster-1");
  const std::string json = EncodeClusterProperty(*p);
  EXPECT_EQ(json, R"({"apiVersion":"about.k8s.io/v1alpha1","kind":"ClusterProperty",)"
                  R"("metadata":{"name":"id.k8s.io"},"spec":{"value":"cluster-1"}})");
  EXPECT_EQ(DecodeClusterProperty(json).value(), *p);
  const Result<model::ClusterProperty> other_group = DecodeClusterProperty(
      R"({"apiVersion":"about.k8s.io.evil/v1","kind":"ClusterProperty","metadata":{"name":"a"}})");
  EXPECT_EQ(other_group.status().code(), StatusCode::kBadRequest);
  const Result<model::ClusterProperty> bad =
      DecodeClusterProperty(R"({"metadata":{"name":"id.k8s.io"},"spec":{"value":["x"]}})");
  EXPECT_EQ(bad.status().ToString(), "clusterproperties/id.k8s.io: .spec.value: expected string");
}

// Lists: typed or generic, one bad item goes to item_errors without stopping the others.
TEST(McsCodecTest, Lists) {
  const Result<ListPage<model::ServiceExportRecord>> page = DecodeServiceExportRecordList(
      std::string(R"({"apiVersion":"mcs.slicewright.io/v1alpha1","kind":"ServiceExportRecordList",)"
                  R"("metadata":{"resourceVersion":"77","continue":"c","remainingItemCount":3},)"
                  R"("items":[)") +
      std::string(kRecordJson) +
      R"(,{"metadata":{"name":"bad","namespace":"ns"},"spec":{"cluster":1}},null,7]})");
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  EXPECT_EQ(page->resource_version, "77");
  EXPECT_EQ(page->continue_token, "c");
  EXPECT_EQ(page->remaining_item_count, 3);
  ASSERT_EQ(page->items.size(), 1U);
  EXPECT_EQ(page->items[0], Record());
  ASSERT_EQ(page->item_errors.size(), 2U);
  EXPECT_EQ(page->item_errors[0].ToString(),
            "list: serviceexportrecords/ns/bad: .spec.cluster: expected string");
  EXPECT_EQ(page->item_errors[1].ToString(), "list: items[3]: expected object");

  const Result<ListPage<model::ServiceImport>> generic =
      DecodeServiceImportList(R"({"kind":"List","items":[{"metadata":{"name":"a"}}]})");
  ASSERT_TRUE(generic.ok());
  EXPECT_EQ(generic->items.size(), 1U);
  const Result<ListPage<model::ServiceExport>> wrong =
      DecodeServiceExportList(R"({"kind":"ServiceImportList","items":[]})");
  EXPECT_EQ(wrong.status().ToString(),
            "list: .kind: expected ServiceExportList, got ServiceImportList");
  EXPECT_EQ(DecodeClusterPropertyList("{").status().code(), StatusCode::kBadRequest);
  EXPECT_TRUE(DecodeClusterPropertyList(R"({"items":null})").ok());
}

TEST(McsCodecTest, WatchEvents) {
  const Result<WatchEvent<model::ServiceImport>> added = DecodeServiceImportWatchEvent(
      R"({"type":"MODIFIED","object":)" + EncodeServiceImport(Import()) + "}");
  ASSERT_TRUE(added.ok()) << added.status().ToString();
  EXPECT_EQ(added->type, WatchEventType::kModified);
  EXPECT_EQ(added->object, Import());
  const Result<WatchEvent<model::ServiceExportRecord>> gone = DecodeServiceExportRecordWatchEvent(
      R"({"type":"ERROR","object":{"kind":"Status","reason":"Expired","code":410,"message":"old"}})");
  ASSERT_TRUE(gone.ok());
  EXPECT_EQ(gone->type, WatchEventType::kError);
  EXPECT_EQ(gone->error.code(), StatusCode::kExpired);
  const Result<WatchEvent<model::ServiceExport>> unknown =
      DecodeServiceExportWatchEvent(R"({"type":"CHANGED","object":{}})");
  EXPECT_EQ(unknown.status().ToString(),
            R"(watch event: .type: unknown watch event type "CHANGED")");
  const Result<WatchEvent<model::ServiceExportRecord>> bad = DecodeServiceExportRecordWatchEvent(
      R"({"type":"ADDED","object":{"metadata":{"name":"r","namespace":"b"},"spec":{"ports":[]}}})");
  EXPECT_EQ(bad.status().ToString(),
            "watch event: serviceexportrecords/b/r: .spec.cluster: required field missing");
  const Result<WatchEvent<model::ClusterProperty>> bookmark = DecodeClusterPropertyWatchEvent(
      R"({"type":"BOOKMARK","object":{"kind":"ClusterProperty","metadata":{"resourceVersion":"9"}}})");
  ASSERT_TRUE(bookmark.ok()) << bookmark.status().ToString();
  EXPECT_EQ(bookmark->object.metadata.resource_version, "9");
  // The export record's spec is required, but a bookmark carries only metadata.
  const Result<WatchEvent<model::ServiceExportRecord>> record_bookmark =
      DecodeServiceExportRecordWatchEvent(
          R"({"type":"BOOKMARK","object":{"kind":"ServiceExportRecord","metadata":{"resourceVersion":"12"}}})");
  ASSERT_TRUE(record_bookmark.ok()) << record_bookmark.status().ToString();
  EXPECT_EQ(record_bookmark->type, WatchEventType::kBookmark);
  EXPECT_EQ(record_bookmark->object.metadata.resource_version, "12");
  EXPECT_EQ(DecodeClusterPropertyWatchEvent(R"({"type":"ADDED"})").status().ToString(),
            "watch event: .object: expected object");
}

// Service.spec.sessionAffinityConfig, which the export record copies (conformance T5).
TEST(McsCodecTest, ServiceSessionAffinityConfig) {
  const Result<model::Service> s = DecodeService(
      R"({"metadata":{"name":"hello","namespace":"n"},"spec":{"sessionAffinity":"ClientIP",)"
      R"("sessionAffinityConfig":{"clientIP":{"timeoutSeconds":10}}}})");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_TRUE(s->spec.session_affinity_config.has_value());
  EXPECT_EQ(s->spec.session_affinity_config->client_ip->timeout_seconds, 10);
  const std::string json = EncodeService(*s);
  EXPECT_NE(json.find(R"("sessionAffinityConfig":{"clientIP":{"timeoutSeconds":10}})"),
            std::string::npos)
      << json;
  EXPECT_EQ(DecodeService(json).value().spec.session_affinity_config,
            s->spec.session_affinity_config);
  EXPECT_EQ(DecodeService(R"({"metadata":{"name":"a"},"spec":{"sessionAffinityConfig":)"
                          R"({"clientIP":{"timeoutSeconds":"x"}}}})")
                .status()
                .ToString(),
            "services/a: .spec.sessionAffinityConfig.clientIP.timeoutSeconds: expected integer");
}

// Every prefix of a valid record, and seeded random byte edits of it, decode or fail with
// kBadRequest: never a crash (run under the sanitizers in CI).
TEST(McsCodecTest, DamagedInputNeverCrashes) {
  const std::string json(kRecordJson);
  for (std::size_t n = 0; n < json.size(); ++n) {
    const Result<model::ServiceExportRecord> r = DecodeServiceExportRecord(json.substr(0, n));
    EXPECT_EQ(r.status().code(), StatusCode::kBadRequest) << n;
  }
  std::mt19937 rng(testing::TestSeed());
  const std::string_view alphabet = "{}[]\":,0123456789-.eEtrufalsn \\x\x01\xff";
  for (int i = 0; i < 2000; ++i) {
    std::string damaged = json;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      damaged[rng() % damaged.size()] = alphabet[rng() % alphabet.size()];
    }
    const Result<model::ServiceExportRecord> r = DecodeServiceExportRecord(damaged);
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), StatusCode::kBadRequest) << damaged;
    }
    const auto line = DecodeServiceImportWatchEvent(R"({"type":"ADDED","object":)" + damaged + "}");
    if (!line.ok()) {
      EXPECT_EQ(line.status().code(), StatusCode::kBadRequest) << damaged;
    }
  }
}

std::optional<std::string> ReadMcsData(const std::string& file) {
  for (const std::string& dir : {std::string(SW_SOURCE_DIR) + "/testdata/mcs-api-v0.5.0",
                                 std::string("/work/shared/data/mcs-api-v0.5.0")}) {
    std::ifstream in(std::filesystem::path(dir) / file, std::ios::binary);
    if (!in.good()) continue;
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }
  return std::nullopt;
}

// The upstream demo's ServiceImports (mcs-api v0.5.0 demo/yaml) decode, through YAML -> JSON.
TEST(McsCodecTest, UpstreamDemoManifestsDecode) {
  const std::optional<std::string> plain = ReadMcsData("demo_yaml_serviceimport.yaml");
  const std::optional<std::string> vip = ReadMcsData("demo_yaml_serviceimport-with-vip.yaml");
  ASSERT_TRUE(plain.has_value() && vip.has_value()) << "mcs-api v0.5.0 demo manifests not found";
  for (const auto& [text, name, ips] :
       {std::tuple{*plain, "serve", std::vector<std::string>{}},
        std::tuple{*vip, "serve-with-vip", std::vector<std::string>{"1.2.3.4"}}}) {
    SCOPED_TRACE(name);
    const Result<std::vector<std::string>> docs = YamlToJson(text, name);
    ASSERT_TRUE(docs.ok()) << docs.status().ToString();
    ASSERT_EQ(docs->size(), 1U);
    const Result<model::ServiceImport> import = DecodeServiceImport(docs->front());
    ASSERT_TRUE(import.ok()) << import.status().ToString();
    EXPECT_EQ(import->metadata.name, name);
    EXPECT_EQ(import->metadata.namespace_, "demo");
    EXPECT_EQ(import->spec.type, "ClusterSetIP");
    EXPECT_EQ(import->spec.ips, ips);
    ASSERT_EQ(import->spec.ports.size(), 1U);
    EXPECT_EQ(import->spec.ports[0], (model::McsServicePort{"", "TCP", std::nullopt, 80}));
    EXPECT_EQ(import->status.endpoint_slice_objects, model::EndpointSliceObjects::kUnset);
    EXPECT_EQ(DecodeServiceImport(EncodeServiceImport(*import)).value(), *import);
  }
  // The demo's Service, exported by demo.sh, decodes as any Service.
  const std::optional<std::string> svc = ReadMcsData("demo_yaml_svc.yaml");
  ASSERT_TRUE(svc.has_value());
  const Result<ObjectSet> objects = DecodeYamlDocuments(*svc, "demo_yaml_svc.yaml");
  ASSERT_TRUE(objects.ok()) << objects.status().ToString();
  ASSERT_EQ(objects->services.size(), 1U);
  EXPECT_EQ(objects->services[0].spec.ports[0].port, 80);
}

}  // namespace
}  // namespace slicewright::codec

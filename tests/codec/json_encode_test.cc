#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "slicewright/codec/json.h"
#include "slicewright/model/core.h"
#include "slicewright/model/discovery.h"
#include "slicewright/model/time.h"

#include "codec/codec_test_util.h"
#include "codec/internal.h"

namespace slicewright::codec {
namespace {

using testing::ReadTestdata;

model::Time T(std::string_view text) { return model::ParseRfc3339(text).value_or(model::Time{}); }

model::ObjectMeta RichMeta(std::string name, std::string ns) {
  model::ObjectMeta meta;
  meta.name = std::move(name);
  meta.generate_name = "gen-";
  meta.namespace_ = std::move(ns);
  meta.uid = "0d6b3f5e-8c3f-4a44-9d0e-2f1c9e0a7b11";
  meta.resource_version = "12345";
  meta.generation = 4;
  meta.labels = {{"app", "web"}, {"kubernetes.io/service-name", "web"}, {"empty", ""}};
  meta.annotations = {{"note", "line one\nline two \"quoted\" \\ tab\t"}, {"unicode", "zoné ✓"}};
  meta.owner_references = {{"v1", "Service", "web", "u-1", true, true},
                           {"apps/v1", "ReplicaSet", "rs", "u-2", std::nullopt, false}};
  meta.finalizers = {"a.example.com/x", "b"};
  meta.creation_timestamp = T("1969-07-20T20:17:40Z");
  meta.deletion_timestamp = T("2038-01-19T03:14:08Z");
  return meta;
}

model::ObjectReference PodRef(std::string name) {
  return {"Pod", "default", std::move(name), "uid-" + name, "v1", "77", "spec.containers{a}"};
}

model::EndpointSlice RichSlice() {
  model::EndpointSlice slice;
  slice.metadata = RichMeta("web-abc12", "default");
  slice.address_type = "IPv6";
  model::Endpoint ready;
  ready.addresses = {"fd00::1"};
  ready.conditions = {true, true, false};
  ready.hostname = "web-0";
  ready.target_ref = PodRef("web-0");
  ready.node_name = "node-1";
  ready.zone = "zone-a";
  ready.hints = model::EndpointHints{{"zone-a", "zone-b"}, {"node-1"}};
  model::Endpoint unknown;
  unknown.addresses = {"fd00::2", "fd00::3"};
  unknown.hints = model::EndpointHints{};
  slice.endpoints = {ready, unknown, model::Endpoint{}};
  slice.ports = {{"http", "TCP", 80, "kubernetes.io/h2c"},
                 {"", std::nullopt, std::nullopt, std::nullopt},
                 {std::nullopt, "UDP", 53, std::nullopt}};
  return slice;
}

model::Service RichService() {
  model::Service service;
  service.metadata = RichMeta("web", "default");
  service.spec.type = "NodePort";
  service.spec.selector = model::StringMap{{"app", "web"}};
  service.spec.cluster_ip = "10.96.0.5";
  service.spec.cluster_ips = {"10.96.0.5", "fd00:96::5"};
  service.spec.ip_families = {"IPv4", "IPv6"};
  service.spec.ip_family_policy = "RequireDualStack";
  service.spec.ports = {{"http", "TCP", 80, model::IntOrString::FromString("web"), "http", 30080},
                        {"", "UDP", 53, model::IntOrString::FromInt(5353), std::nullopt, 0}};
  service.spec.publish_not_ready_addresses = true;
  service.spec.traffic_distribution = "PreferSameZone";
  service.spec.session_affinity = "ClientIP";
  service.spec.internal_traffic_policy = "Local";
  service.spec.external_traffic_policy = "Cluster";
  return service;
}

model::Pod RichPod() {
  model::Pod pod;
  pod.metadata = RichMeta("web-0", "default");
  pod.spec.node_name = "node-1";
  pod.spec.hostname = "web-0";
  pod.spec.subdomain = "web";
  pod.spec.containers = {{"app",
                          "nginx",
                          {{"http", 80, "TCP", 8080, "127.0.0.1"}, {"", 53, "UDP", 0, ""}},
                          std::nullopt},
                         {"bare", "", {}, std::nullopt}};
  pod.spec.init_containers = {{"sidecar", "envoy", {{"admin", 9901, "TCP", 0, ""}}, "Always"}};
  pod.status.phase = "Running";
  pod.status.pod_ip = "10.0.0.7";
  pod.status.pod_ips = {"10.0.0.7", "fd00::7"};
  pod.status.conditions = {{"Ready", "True", T("2024-05-14T09:30:19Z"), "", ""},
                           {"ContainersReady", "False", std::nullopt, "Why", "because"}};
  return pod;
}

// Expects decode(encode(object)) to succeed and equal the object.
template <typename T>
void ExpectRoundTrip(const T& object, std::string (*encode)(const T&),
                     Result<T> (*decode)(std::string_view)) {
  const std::string json = encode(object);
  const Result<T> back = decode(json);
  ASSERT_TRUE(back.ok()) << back.status().ToString() << "\n" << json;
  EXPECT_EQ(*back, object) << json;
}

// A new EndpointSlice is written as a real API server expects it: type meta first, unset optional
// fields omitted (never "" or 0), conditions as booleans, hints as {"forZones":[{"name":..}]}.
TEST(JsonEncodeTest, EncodesEndpointSliceForTheApiServer) {
  model::EndpointSlice slice;
  slice.metadata.generate_name = "web-";
  slice.metadata.namespace_ = "default";
  slice.metadata.labels = {
      {"endpointslice.kubernetes.io/managed-by", "endpointslice-controller.k8s.io"},
      {"kubernetes.io/service-name", "web"}};
  slice.metadata.owner_references = {{"v1", "Service", "web", "uid-web", true, true}};
  slice.address_type = "IPv4";
  model::Endpoint endpoint;
  endpoint.addresses = {"10.244.1.7"};
  endpoint.conditions = {true, true, false};
  endpoint.target_ref = model::ObjectReference{"Pod", "default", "web-1", "uid-1", "", "", ""};
  endpoint.node_name = "kind-worker";
  endpoint.zone = "zone-b";
  endpoint.hints = model::EndpointHints{{"zone-b"}, {}};
  slice.endpoints = {endpoint};
  slice.ports = {{"http", "TCP", 80, std::nullopt}, {std::nullopt, "UDP", std::nullopt, "dns"}};
  EXPECT_EQ(
      EncodeEndpointSlice(slice),
      R"({"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice","metadata":)"
      R"({"generateName":"web-","namespace":"default","labels":)"
      R"({"endpointslice.kubernetes.io/managed-by":"endpointslice-controller.k8s.io",)"
      R"("kubernetes.io/service-name":"web"},"ownerReferences":[{"apiVersion":"v1",)"
      R"("kind":"Service","name":"web","uid":"uid-web","controller":true,)"
      R"("blockOwnerDeletion":true}]},"addressType":"IPv4","endpoints":[{"addresses":)"
      R"(["10.244.1.7"],"conditions":{"ready":true,"serving":true,"terminating":false},)"
      R"("targetRef":{"kind":"Pod","namespace":"default","name":"web-1","uid":"uid-1"},)"
      R"("nodeName":"kind-worker","zone":"zone-b","hints":{"forZones":[{"name":"zone-b"}]}}],)"
      R"("ports":[{"name":"http","protocol":"TCP","port":80},)"
      R"({"protocol":"UDP","appProtocol":"dns"}]})");
}

// An empty slice still carries the fields Go writes without omitempty (addressType, endpoints,
// ports), as [] rather than null; metadata times are whole-second RFC 3339.
TEST(JsonEncodeTest, EncodesEmptyFieldsLikeGo) {
  model::EndpointSlice slice;
  slice.metadata.name = "s";
  slice.metadata.creation_timestamp = T("2024-01-02T03:04:05.678Z");
  EXPECT_EQ(EncodeEndpointSlice(slice),
            R"({"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice","metadata":)"
            R"({"name":"s","creationTimestamp":"2024-01-02T03:04:05Z"},"addressType":"",)"
            R"("endpoints":[],"ports":[]})");
  EXPECT_EQ(EncodePod(model::Pod{}),
            R"({"apiVersion":"v1","kind":"Pod","metadata":{},"spec":{"containers":[]},)"
            R"("status":{}})");
  EXPECT_EQ(EncodeService(model::Service{}),
            R"({"apiVersion":"v1","kind":"Service","metadata":{},"spec":{}})");
  model::Service selects_all;
  selects_all.spec.selector = model::StringMap{};
  EXPECT_EQ(EncodeService(selects_all),
            R"({"apiVersion":"v1","kind":"Service","metadata":{},"spec":{"selector":{}}})");
  EXPECT_EQ(EncodeEndpoints(model::Endpoints{}),
            R"({"apiVersion":"v1","kind":"Endpoints","metadata":{}})");
  EXPECT_EQ(EncodeNamespace(model::Namespace{}),
            R"({"apiVersion":"v1","kind":"Namespace","metadata":{},"status":{}})");
  EXPECT_EQ(EncodeNode(model::Node{}), R"({"apiVersion":"v1","kind":"Node","metadata":{},)"
                                       R"("status":{}})");
  EXPECT_EQ(EncodeEvent(model::Event{}),
            R"({"apiVersion":"v1","kind":"Event","metadata":{},"involvedObject":{},)"
            R"("source":{}})");
}

// Invalid UTF-8 in a model string cannot make the encoder throw: it becomes U+FFFD.
TEST(JsonEncodeTest, QuotesStringsForHandWrittenDocuments) {
  EXPECT_EQ(QuoteJsonString("web"), R"("web")");
  EXPECT_EQ(QuoteJsonString("say \"hi\"\n\\"), R"("say \"hi\"\n\\")");
  EXPECT_EQ(QuoteJsonString(std::string("\x01", 1)), R"("\u0001")");
  EXPECT_EQ(QuoteJsonString("\xff"), "\"\xEF\xBF\xBD\"");
}

TEST(JsonEncodeTest, ReplacesInvalidUtf8) {
  model::Namespace ns;
  ns.metadata.name = "bad\xFFname";
  EXPECT_EQ(EncodeNamespace(ns),
            "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"bad\xEF\xBF\xBD"
            "name\"},\"status\":{}}");
}

// decode(encode(x)) == x for a rich object of every kind.
TEST(JsonEncodeTest, RoundTripsEveryKind) {
  ExpectRoundTrip(RichSlice(), EncodeEndpointSlice, DecodeEndpointSlice);

  ExpectRoundTrip(RichService(), EncodeService, DecodeService);

  ExpectRoundTrip(RichPod(), EncodePod, DecodePod);

  model::Node node;
  node.metadata = RichMeta("node-1", "");
  node.status.allocatable = {{"cpu", "3500m"}, {"memory", "16Gi"}, {"pods", "110"}};
  node.status.conditions = {{"Ready", "True", T("2024-05-14T09:30:19Z"), "KubeletReady", "ok"}};
  ExpectRoundTrip(node, EncodeNode, DecodeNode);

  model::Endpoints endpoints;
  endpoints.metadata = RichMeta("web", "default");
  model::EndpointSubset subset;
  subset.addresses = {{"10.0.0.1", "web-0", "node-1", PodRef("web-0")},
                      {"10.0.0.2", "", std::nullopt, std::nullopt}};
  subset.not_ready_addresses = {{"10.0.0.3", "", "node-2", PodRef("web-2")}};
  subset.ports = {{"http", 80, "TCP", "http"}, {"", 53, "UDP", std::nullopt}};
  endpoints.subsets = {subset, model::EndpointSubset{}};
  ExpectRoundTrip(endpoints, EncodeEndpoints, DecodeEndpoints);

  model::Namespace ns;
  ns.metadata = RichMeta("shop", "");
  ns.phase = "Terminating";
  ExpectRoundTrip(ns, EncodeNamespace, DecodeNamespace);

  model::Event event;
  event.metadata = RichMeta("web.17cf", "default");
  event.involved_object = PodRef("web-0");
  event.reason = "FailedToUpdateEndpointSlices";
  event.message = "Error updating Endpoint Slices for Service default/web: conflict";
  event.type = "Warning";
  event.source_component = "endpoint-slice-controller";
  event.source_host = "cp-1";
  event.first_timestamp = T("2024-05-14T09:30:19Z");
  event.last_timestamp = T("2024-05-14T09:35:19Z");
  event.count = 7;
  event.reporting_component = "endpoint-slice-controller";
  event.reporting_instance = "cp-1";
  event.action = "Update";
  ExpectRoundTrip(event, EncodeEvent, DecodeEvent);
}

// Every object of the kubectl testdata survives encode and decode unchanged.
TEST(JsonEncodeTest, RoundTripsTestdata) {
  for (std::string_view file :
       {"pods.json", "services.json", "nodes.json", "endpointslices.json", "list.json"}) {
    SCOPED_TRACE(file);
    const Result<ObjectSet> set = DecodeJsonDocument(ReadTestdata(file), file);
    ASSERT_TRUE(set.ok()) << set.status().ToString();
    for (const auto& pod : set->pods) ExpectRoundTrip(pod, EncodePod, DecodePod);
    for (const auto& service : set->services) {
      ExpectRoundTrip(service, EncodeService, DecodeService);
    }
    for (const auto& node : set->nodes) ExpectRoundTrip(node, EncodeNode, DecodeNode);
    for (const auto& slice : set->endpoint_slices) {
      ExpectRoundTrip(slice, EncodeEndpointSlice, DecodeEndpointSlice);
    }
    for (const auto& endpoints : set->endpoints) {
      ExpectRoundTrip(endpoints, EncodeEndpoints, DecodeEndpoints);
    }
    for (const auto& ns : set->namespaces) ExpectRoundTrip(ns, EncodeNamespace, DecodeNamespace);
    for (const auto& event : set->events) ExpectRoundTrip(event, EncodeEvent, DecodeEvent);
  }
}

// The streaming EndpointSlice encoder writes exactly what the ordered_json document dumps, byte
// for byte: on the rich slice, and on random slices whose fields are set or not at random and
// whose text has quotes, backslashes, control characters, UTF-8 and invalid bytes.
TEST(JsonEncodeTest, StreamedEndpointSliceEqualsTheDocument) {
  EXPECT_EQ(EncodeEndpointSlice(RichSlice()), internal::EncodeEndpointSliceDocument(RichSlice()));
  EXPECT_EQ(EncodeEndpointSlice(model::EndpointSlice{}),
            internal::EncodeEndpointSliceDocument(model::EndpointSlice{}));

  std::mt19937 random(11);
  const std::vector<std::string> pieces = {
      "web",  "10.0.0.1", "fd00::1",     "\"",           "\\",   "\n",   std::string("\0", 1),
      "\x1f", "\x7f",     "zon\xc3\xa9", "\xe2\x9c\x93", "\xff", "\xc3", "a/b.c-d_e",
      " ",    ""};
  const auto text = [&] {
    std::string out;
    for (int n = static_cast<int>(random() % 4); n > 0; --n)
      out += pieces[random() % pieces.size()];
    return out;
  };
  const auto maybe = [&] { return random() % 2 == 0; };
  for (int round = 0; round < 300; ++round) {
    model::EndpointSlice slice;
    slice.metadata.name = text();
    slice.metadata.generate_name = text();
    slice.metadata.namespace_ = text();
    slice.metadata.uid = text();
    slice.metadata.resource_version = text();
    slice.metadata.generation = maybe() ? 0 : static_cast<std::int64_t>(random());
    if (maybe()) slice.metadata.creation_timestamp = T("2026-12-04T10:00:00Z");
    if (maybe()) slice.metadata.deletion_timestamp = T("2026-12-04T10:00:30Z");
    for (int n = static_cast<int>(random() % 3); n > 0; --n) {
      slice.metadata.labels[text()] = text();
      slice.metadata.annotations[text()] = text();
    }
    for (int n = static_cast<int>(random() % 2); n > 0; --n) {
      slice.metadata.owner_references.push_back({text(), text(), text(), text(),
                                                 maybe() ? std::optional(maybe()) : std::nullopt,
                                                 maybe() ? std::optional(maybe()) : std::nullopt});
    }
    if (maybe()) slice.metadata.finalizers = {text(), text()};
    slice.address_type = text();
    for (int n = static_cast<int>(random() % 4); n > 0; --n) {
      model::Endpoint& endpoint = slice.endpoints.emplace_back();
      for (int a = static_cast<int>(random() % 3); a > 0; --a) endpoint.addresses.push_back(text());
      if (maybe()) endpoint.conditions.ready = maybe();
      if (maybe()) endpoint.conditions.serving = maybe();
      if (maybe()) endpoint.conditions.terminating = maybe();
      if (maybe()) endpoint.hostname = text();
      if (maybe()) {
        model::ObjectReference& ref = endpoint.target_ref.emplace();
        ref.kind = text();
        ref.namespace_ = text();
        ref.name = text();
        ref.uid = text();
        ref.api_version = text();
        ref.resource_version = text();
        ref.field_path = text();
      }
      if (maybe()) endpoint.node_name = text();
      if (maybe()) endpoint.zone = text();
      if (maybe()) {
        model::EndpointHints hints;
        if (maybe()) hints.for_zones = {text(), text()};
        if (maybe()) hints.for_nodes = {text()};
        endpoint.hints = std::move(hints);
      }
    }
    for (int n = static_cast<int>(random() % 3); n > 0; --n) {
      model::EndpointPort& port = slice.ports.emplace_back();
      if (maybe()) port.name = text();
      if (maybe()) port.protocol = text();
      if (maybe()) port.port = static_cast<std::int32_t>(random() % 70000) - 1000;
      if (maybe()) port.app_protocol = text();
    }
    ASSERT_EQ(EncodeEndpointSlice(slice), internal::EncodeEndpointSliceDocument(slice))
        << "round " << round;
  }
}

}  // namespace
}  // namespace slicewright::codec

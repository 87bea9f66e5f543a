#include "slicewright/codec/json.h"

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "slicewright/model/core.h"
#include "slicewright/model/discovery.h"
#include "slicewright/model/time.h"

#include "codec/codec_test_util.h"

namespace slicewright::codec {
namespace {

using testing::ErrorOf;
using testing::ReadTestdata;

model::Time T(std::string_view text) {
  const std::optional<model::Time> time = model::ParseRfc3339(text);
  EXPECT_TRUE(time.has_value()) << text;
  return time.value_or(model::Time{});
}

ObjectSet MustDecode(std::string_view text, std::string_view name) {
  Result<ObjectSet> result = DecodeJsonDocument(text, name);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  return result.ok() ? std::move(result).value() : ObjectSet{};
}

// A PodList exactly as the API server returns it (items without apiVersion/kind, managedFields,
// affinity and other unmodelled fields) decodes field for field.
TEST(JsonDecodeTest, DecodesPodListFromKindCluster) {
  const ObjectSet set = MustDecode(ReadTestdata("pods.json"), "pods.json");
  ASSERT_EQ(set.pods.size(), 3u);
  EXPECT_TRUE(set.skipped_kinds.empty());

  model::Pod web;
  web.metadata.name = "web-1";
  web.metadata.generate_name = "web-";
  web.metadata.namespace_ = "default";
  web.metadata.uid = "c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f";
  web.metadata.resource_version = "1187";
  web.metadata.labels = {{"app", "web"},
                         {"apps.kubernetes.io/pod-index", "1"},
                         {"controller-revision-hash", "web-6b8c9d7f5"},
                         {"statefulset.kubernetes.io/pod-name", "web-1"}};
  web.metadata.annotations = {{"kubectl.kubernetes.io/restartedAt", "2024-05-14T11:02:03+02:00"}};
  web.metadata.owner_references = {
      {"apps/v1", "StatefulSet", "web", "8e2a4c6b-1f3d-4b5a-9c7e-0d1f2a3b4c5d", true, true}};
  web.metadata.creation_timestamp = T("2024-05-14T09:30:11Z");
  web.spec.node_name = "kind-worker";
  web.spec.hostname = "web-1";
  web.spec.subdomain = "web";
  web.spec.containers = {{"nginx",
                          "nginx:1.25",
                          {{"http", 80, "TCP", 0, ""}, {"https", 8443, "TCP", 30443, "0.0.0.0"}},
                          std::nullopt}};
  web.spec.init_containers = {
      {"init-perms", "busybox:1.36", {}, std::nullopt},
      {"proxy", "envoyproxy/envoy:v1.30.1", {{"proxy", 15001, "TCP", 0, ""}}, "Always"}};
  web.status.phase = "Running";
  web.status.pod_ip = "10.244.1.7";
  web.status.pod_ips = {"10.244.1.7", "fd00:10:244:1::7"};
  web.status.conditions = {{"Initialized", "True", T("2024-05-14T09:30:14Z"), "", ""},
                           {"Ready", "False", T("2024-05-14T09:30:19Z"), "ContainersNotReady",
                            "containers with unready status: [nginx]"}};
  EXPECT_EQ(set.pods[1], web);

  const model::Pod& dns = set.pods[0];
  EXPECT_EQ(dns.metadata.name, "coredns-7db6d8ff4d-5xkzq");
  EXPECT_EQ(dns.metadata.namespace_, "kube-system");
  ASSERT_NE(model::FindControllerRef(dns.metadata), nullptr);
  EXPECT_EQ(model::FindControllerRef(dns.metadata)->kind, "ReplicaSet");
  ASSERT_EQ(dns.spec.containers.size(), 1u);
  ASSERT_EQ(dns.spec.containers[0].ports.size(), 3u);
  EXPECT_EQ(dns.spec.containers[0].ports[0].protocol, "UDP");
  EXPECT_EQ(dns.status.pod_ips, std::vector<std::string>{"10.244.0.3"});
  EXPECT_EQ(dns.status.conditions.size(), 5u);
  EXPECT_TRUE(model::IsPodReady(dns));

  // null fields (nodeName, podIPs) read as absent; deletionTimestamp and finalizers are kept.
  const model::Pod& batch = set.pods[2];
  EXPECT_EQ(batch.spec.node_name, "");
  EXPECT_TRUE(batch.status.pod_ips.empty());
  EXPECT_EQ(batch.status.phase, "Pending");
  EXPECT_EQ(batch.metadata.deletion_timestamp, T("2024-05-14T10:00:30Z"));
  EXPECT_EQ(batch.metadata.finalizers, std::vector<std::string>{"example.com/drain"});
}

// A `kubectl get svc -A -o json` List: selectors absent, null, empty and set; targetPort as int,
// as name, absent and 0 (both defaulted to port, as the API server does); dual-stack fields.
TEST(JsonDecodeTest, DecodesServiceListIncludingKubeDns) {
  const ObjectSet set = MustDecode(ReadTestdata("services.json"), "services.json");
  ASSERT_EQ(set.services.size(), 6u);

  const model::ServiceSpec& kubernetes = set.services[0].spec;
  EXPECT_FALSE(kubernetes.selector.has_value());
  EXPECT_EQ(kubernetes.ports[0].target_port, model::IntOrString::FromInt(6443));

  model::Service dns;
  dns.metadata.name = "kube-dns";
  dns.metadata.namespace_ = "kube-system";
  dns.metadata.uid = "2e4f6a8c-0b1d-4c3e-a5f7-9b8d0c2e4f6a";
  dns.metadata.resource_version = "236";
  dns.metadata.creation_timestamp = T("2024-05-14T09:21:22Z");
  dns.metadata.labels = {{"k8s-app", "kube-dns"},
                         {"kubernetes.io/cluster-service", "true"},
                         {"kubernetes.io/name", "CoreDNS"}};
  dns.metadata.annotations = {{"prometheus.io/port", "9153"}, {"prometheus.io/scrape", "true"}};
  dns.spec.type = "ClusterIP";
  dns.spec.selector = model::StringMap{{"k8s-app", "kube-dns"}};
  dns.spec.cluster_ip = "10.96.0.10";
  dns.spec.cluster_ips = {"10.96.0.10"};
  dns.spec.ip_families = {"IPv4"};
  dns.spec.ip_family_policy = "SingleStack";
  dns.spec.session_affinity = "None";
  dns.spec.internal_traffic_policy = "Cluster";
  dns.spec.ports = {{"dns", "UDP", 53, model::IntOrString::FromInt(53), std::nullopt, 0},
                    {"dns-tcp", "TCP", 53, model::IntOrString::FromInt(53), std::nullopt, 0},
                    {"metrics", "TCP", 9153, model::IntOrString::FromInt(9153), std::nullopt, 0}};
  EXPECT_EQ(set.services[1], dns);

  const model::ServiceSpec& web = set.services[2].spec;
  EXPECT_EQ(web.ports[0].target_port, model::IntOrString::FromString("http"));
  EXPECT_EQ(web.ports[0].app_protocol, "http");
  EXPECT_EQ(web.traffic_distribution, "PreferClose");
  EXPECT_EQ(web.ip_families, (std::vector<std::string>{"IPv4", "IPv6"}));
  EXPECT_EQ(web.cluster_ips, (std::vector<std::string>{"10.96.143.27", "fd00:10:96::5f3a"}));

  const model::ServiceSpec& headless = set.services[3].spec;
  EXPECT_EQ(headless.cluster_ip, "None");
  EXPECT_TRUE(headless.publish_not_ready_addresses);
  EXPECT_EQ(headless.ports[0].target_port, model::IntOrString::FromInt(80));

  const model::ServiceSpec& node_port = set.services[4].spec;
  ASSERT_TRUE(node_port.selector.has_value());
  EXPECT_TRUE(node_port.selector->empty());
  EXPECT_EQ(node_port.type, "NodePort");
  EXPECT_EQ(node_port.external_traffic_policy, "Local");
  EXPECT_EQ(node_port.session_affinity, "ClientIP");
  EXPECT_EQ(node_port.ports[0].name, "");
  EXPECT_EQ(node_port.ports[0].node_port, 31380);
  EXPECT_EQ(node_port.ports[1].protocol, "SCTP");
  EXPECT_EQ(node_port.ports[1].target_port, model::IntOrString::FromInt(9000));

  const model::ServiceSpec& external = set.services[5].spec;
  EXPECT_FALSE(external.selector.has_value());
  EXPECT_EQ(external.type, "ExternalName");
  EXPECT_EQ(external.external_name, "api.example.com");
  EXPECT_TRUE(external.ports.empty());
}

// A NodeList: cluster-scoped metadata, allocatable quantities (a bare number accepted, as
// resource.Quantity does) and conditions with their transition times.
TEST(JsonDecodeTest, DecodesNodeListWithAllocatable) {
  const ObjectSet set = MustDecode(ReadTestdata("nodes.json"), "nodes.json");
  ASSERT_EQ(set.nodes.size(), 2u);
  const model::Node& control_plane = set.nodes[0];
  EXPECT_EQ(control_plane.metadata.name, "kind-control-plane");
  EXPECT_EQ(control_plane.metadata.labels.at("topology.kubernetes.io/zone"), "zone-a");
  EXPECT_EQ(control_plane.status.allocatable,
            (model::StringMap{{"cpu", "8"},
                              {"ephemeral-storage", "102626232Ki"},
                              {"hugepages-1Gi", "0"},
                              {"hugepages-2Mi", "0"},
                              {"memory", "32813076Ki"},
                              {"pods", "110"}}));
  ASSERT_EQ(control_plane.status.conditions.size(), 2u);
  EXPECT_EQ(control_plane.status.conditions[1],
            (model::PodCondition{"Ready", "True", T("2024-05-14T09:21:35Z"), "KubeletReady",
                                 "kubelet is posting ready status"}));
  EXPECT_EQ(set.nodes[1].status.allocatable,
            (model::StringMap{{"cpu", "3500m"}, {"memory", "16Gi"}, {"pods", "110"}}));
}

// An EndpointSliceList with what real API servers send: `"endpoints": null`, `"ports": null`,
// optional conditions, zone and node hints, a port whose name is "" and whose port is null.
TEST(JsonDecodeTest, DecodesEndpointSliceListWithNulls) {
  const ObjectSet set = MustDecode(ReadTestdata("endpointslices.json"), "endpointslices.json");
  ASSERT_EQ(set.endpoint_slices.size(), 3u);

  const model::EndpointSlice& dns = set.endpoint_slices[0];
  EXPECT_EQ(dns.address_type, "IPv4");
  EXPECT_EQ(dns.metadata.generation, 3);
  EXPECT_EQ(dns.metadata.labels.at("kubernetes.io/service-name"), "kube-dns");
  ASSERT_EQ(dns.endpoints.size(), 1u);
  model::Endpoint expected_dns;
  expected_dns.addresses = {"10.244.0.3"};
  expected_dns.conditions = {true, true, false};
  expected_dns.node_name = "kind-control-plane";
  expected_dns.zone = "zone-a";
  expected_dns.target_ref = model::ObjectReference{"Pod",
                                                   "kube-system",
                                                   "coredns-7db6d8ff4d-5xkzq",
                                                   "5b0c7a8e-3d2f-4e61-b7a9-1c2d3e4f5a6b",
                                                   "",
                                                   "",
                                                   ""};
  EXPECT_EQ(dns.endpoints[0], expected_dns);
  EXPECT_EQ(dns.ports, (std::vector<model::EndpointPort>{{"dns-tcp", "TCP", 53, std::nullopt},
                                                         {"dns", "UDP", 53, std::nullopt},
                                                         {"metrics", "TCP", 9153, std::nullopt}}));

  const model::EndpointSlice& web = set.endpoint_slices[1];
  ASSERT_EQ(web.endpoints.size(), 2u);
  EXPECT_EQ(web.endpoints[0].hostname, "web-1");
  EXPECT_EQ(web.endpoints[0].hints, (model::EndpointHints{{"zone-b"}, {}}));
  EXPECT_EQ(web.endpoints[1].conditions,
            (model::EndpointConditions{true, std::nullopt, std::nullopt}));
  EXPECT_EQ(web.endpoints[1].hints, (model::EndpointHints{{"zone-a", "zone-c"}, {"kind-worker2"}}));
  EXPECT_FALSE(web.endpoints[1].target_ref.has_value());
  EXPECT_EQ(web.ports, (std::vector<model::EndpointPort>{{"http", "TCP", 8080, "http"},
                                                         {"", "UDP", std::nullopt, std::nullopt}}));

  const model::EndpointSlice& empty = set.endpoint_slices[2];
  EXPECT_TRUE(empty.endpoints.empty());
  EXPECT_TRUE(empty.ports.empty());
  // A null map value is Go's zero value, "".
  EXPECT_EQ(empty.metadata.labels.at("service.kubernetes.io/headless"), "");
}

// A mixed `List` decodes every modelled kind, counts the others (including events.k8s.io
// Events) in skipped_kinds, and reads `creationTimestamp: null` as unset.
TEST(JsonDecodeTest, DecodesMixedList) {
  const ObjectSet set = MustDecode(ReadTestdata("list.json"), "list.json");
  EXPECT_EQ(set.skipped_kinds,
            (std::vector<std::string>{"apps/v1 Deployment", "events.k8s.io/v1 Event"}));
  ASSERT_EQ(set.namespaces.size(), 1u);
  EXPECT_EQ(set.namespaces[0].metadata.name, "shop");
  EXPECT_EQ(set.namespaces[0].phase, "Active");

  ASSERT_EQ(set.endpoints.size(), 1u);
  model::EndpointSubset subset;
  subset.addresses = {{"10.244.1.6", "web-0", "kind-worker",
                       model::ObjectReference{"Pod", "default", "web-0",
                                              "b3c4d5e6-f7a8-4b9c-8d0e-1f2a3b4c5d6e", "", "", ""}}};
  subset.not_ready_addresses = {
      {"10.244.1.7", "web-1", "kind-worker",
       model::ObjectReference{"Pod", "default", "web-1", "c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f", "",
                              "", ""}}};
  subset.ports = {{"http", 80, "TCP", std::nullopt}, {"grpc", 9090, "TCP", "kubernetes.io/h2c"}};
  EXPECT_EQ(set.endpoints[0].subsets, std::vector<model::EndpointSubset>{subset});

  ASSERT_EQ(set.events.size(), 1u);
  model::Event event;
  event.metadata.name = "web-1.17cf3a2b9d8e7f60";
  event.metadata.namespace_ = "default";
  event.metadata.uid = "d4e5f6a7-b8c9-4d0e-9f1a-2b3c4d5e6f7a";
  event.metadata.resource_version = "1250";
  event.metadata.creation_timestamp = T("2024-05-14T09:30:19Z");
  event.involved_object = {"Pod",
                           "default",
                           "web-1",
                           "c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f",
                           "v1",
                           "1180",
                           "spec.containers{nginx}"};
  event.reason = "Unhealthy";
  event.message = "Readiness probe failed: HTTP probe failed with statuscode: 503";
  event.type = "Warning";
  event.source_component = "kubelet";
  event.source_host = "kind-worker";
  event.first_timestamp = T("2024-05-14T09:30:19Z");
  event.last_timestamp = T("2024-05-14T09:31:02Z");
  event.count = 3;
  event.reporting_component = "kubelet";
  event.reporting_instance = "kind-worker";
  EXPECT_EQ(set.events[0], event);

  ASSERT_EQ(set.pods.size(), 1u);
  EXPECT_EQ(set.pods[0].metadata.name, "solo");
  EXPECT_FALSE(set.pods[0].metadata.creation_timestamp.has_value());
}

// Fields slicewright does not model, of every JSON type and at every level, are skipped; so are
// unknown kinds, and a kind that merely ends in "List" without items is an ordinary object.
TEST(JsonDecodeTest, IgnoresUnknownFieldsAndKinds) {
  const std::string json = R"({"apiVersion":"v1","kind":"Pod","future":{"a":[1,2.5,null,true,
      {"deep":[[[[{}]]]]}]},"metadata":{"name":"p","namespace":"n","x":1,"managedFields":[{}]},
      "spec":{"containers":[{"name":"c","ports":[{"containerPort":80,"weird":"yes"}],
      "extra":[]}],"overhead":{"cpu":"1"}},"status":{"podIPs":[{"ip":"10.0.0.1","x":{}}],
      "hostIPs":[{"ip":"1.2.3.4"}]}})";
  const ObjectSet set = MustDecode(json, "pod.json");
  ASSERT_EQ(set.pods.size(), 1u);
  EXPECT_EQ(set.pods[0].metadata.name, "p");
  EXPECT_EQ(set.pods[0].spec.containers[0].ports[0].container_port, 80);
  EXPECT_EQ(set.pods[0].status.pod_ips, std::vector<std::string>{"10.0.0.1"});

  const ObjectSet other = MustDecode(
      R"({"apiVersion":"example.com/v1","kind":"AccessList","spec":{"x":1}})", "crd.json");
  EXPECT_EQ(other.skipped_kinds, std::vector<std::string>{"example.com/v1 AccessList"});

  const ObjectSet deployments = MustDecode(
      R"({"apiVersion":"apps/v1","kind":"DeploymentList","items":[{"metadata":{"name":"a"}},
      {"metadata":{"name":"b"}}]})",
      "deployments.json");
  EXPECT_EQ(deployments.skipped_kinds,
            (std::vector<std::string>{"apps/v1 Deployment", "apps/v1 Deployment"}));
}

// Items of a typed list take their type from the list; null items and `"items": null` are empty.
TEST(JsonDecodeTest, TypedListItemsInheritTypeMeta) {
  const ObjectSet set = MustDecode(
      R"({"apiVersion":"v1","kind":"ServiceList","items":[{"metadata":{"name":"a"}},null,
      {"apiVersion":"v1","kind":"Service","metadata":{"name":"b"}}]})",
      "services.json");
  ASSERT_EQ(set.services.size(), 2u);
  EXPECT_EQ(set.services[1].metadata.name, "b");

  const ObjectSet empty = MustDecode(R"({"apiVersion":"v1","kind":"PodList","items":null})", "x");
  EXPECT_TRUE(empty.pods.empty());
}

// The single-object decoders read one object of their kind; type meta may be omitted but must
// agree when present.
TEST(JsonDecodeTest, SingleObjectDecoders) {
  const Result<model::Pod> pod = DecodePod(R"({"metadata":{"name":"web-1"}})");
  ASSERT_TRUE(pod.ok()) << pod.status().ToString();
  EXPECT_EQ(pod->metadata.name, "web-1");

  const Result<model::EndpointSlice> slice = DecodeEndpointSlice(
      R"({"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice","addressType":"FQDN"})");
  ASSERT_TRUE(slice.ok());
  EXPECT_EQ(slice->address_type, "FQDN");

  EXPECT_TRUE(DecodeService(R"({"kind":"Service","spec":{"selector":null}})").ok());
  EXPECT_TRUE(DecodeNode(R"({"kind":"Node"})").ok());
  EXPECT_TRUE(DecodeEndpoints(R"({"subsets":null})").ok());
  EXPECT_TRUE(DecodeNamespace(R"({"status":{"phase":"Terminating"}})").ok());
  EXPECT_TRUE(DecodeEvent(R"({"count":1})").ok());

  const Status wrong = ErrorOf(DecodePod(R"({"apiVersion":"v1","kind":"Service"})"));
  EXPECT_EQ(wrong.code(), StatusCode::kBadRequest);
  EXPECT_EQ(wrong.ToString(), "expected v1 Pod, got v1 Service");

  const Status nested = ErrorOf(DecodePod(
      R"({"metadata":{"name":"web-1","namespace":"default"},"status":{"podIPs":[{"ip":7}]}})"));
  EXPECT_EQ(nested.ToString(), "pods/default/web-1: .status.podIPs[0].ip: expected string");

  const Status node = ErrorOf(DecodeNode(R"({"metadata":{"name":"n1","namespace":"x"},
      "status":{"allocatable":{"cpu":[]}}})"));
  EXPECT_EQ(node.ToString(), "nodes/n1: .status.allocatable[cpu]: expected string or number");
}

// The metadata-only decoder reads what a slice writer keeps of an answer, and checks the rest no
// further than that it parses; its errors are the full decoder's.
TEST(JsonDecodeTest, EndpointSliceMetadataOnly) {
  const Result<model::ObjectMeta> meta = DecodeEndpointSliceMetadata(
      R"({"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice",
          "metadata":{"name":"web-x1","namespace":"default","uid":"u-1","generation":3,
                      "labels":{"kubernetes.io/service-name":"web"}},
          "addressType":"IPv4","endpoints":[{"addresses":[7]}]})");
  ASSERT_TRUE(meta.ok()) << meta.status().ToString();
  EXPECT_EQ(meta->name, "web-x1");
  EXPECT_EQ(meta->uid, "u-1");
  EXPECT_EQ(meta->generation, 3);
  EXPECT_EQ(meta->labels.at("kubernetes.io/service-name"), "web");

  EXPECT_EQ(ErrorOf(DecodeEndpointSliceMetadata(R"({"kind":"Pod"})")).ToString(),
            "expected discovery.k8s.io/v1 EndpointSlice, got  Pod");
  EXPECT_EQ(
      ErrorOf(DecodeEndpointSliceMetadata(R"({"metadata":{"name":"s1","namespace":"d","uid":5}})"))
          .ToString(),
      "endpointslices/d/s1: .metadata.uid: expected string");
  EXPECT_EQ(ErrorOf(DecodeEndpointSliceMetadata("[]")).code(), StatusCode::kBadRequest);
  EXPECT_EQ(ErrorOf(DecodeEndpointSliceMetadata(R"({"metadata":)")).code(),
            StatusCode::kBadRequest);
}

// Watch event lines as kube-apiserver streams them: each type, in one parse.
TEST(WatchEventDecodeTest, DecodesEveryEventType) {
  const Result<WatchEvent<model::Pod>> added = DecodePodWatchEvent(
      R"({"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-1",)"
      R"("namespace":"default","resourceVersion":"17"},"spec":{"nodeName":"n1"},)"
      R"("status":{"podIP":"10.0.0.5","podIPs":[{"ip":"10.0.0.5"}]}}})");
  ASSERT_TRUE(added.ok()) << added.status().ToString();
  EXPECT_EQ(added->type, WatchEventType::kAdded);
  EXPECT_EQ(added->object.metadata.name, "web-1");
  EXPECT_EQ(added->object.metadata.resource_version, "17");
  EXPECT_EQ(added->object.spec.node_name, "n1");
  EXPECT_TRUE(added->error.ok());

  const Result<WatchEvent<model::Pod>> modified =
      DecodePodWatchEvent(R"({"type":"MODIFIED","object":{"metadata":{"name":"web-1"}}})");
  ASSERT_TRUE(modified.ok());
  EXPECT_EQ(modified->type, WatchEventType::kModified);
  const Result<WatchEvent<model::Service>> deleted = DecodeServiceWatchEvent(
      R"({"type":"DELETED","object":{"kind":"Service","metadata":{"name":"s"}}})");
  ASSERT_TRUE(deleted.ok());
  EXPECT_EQ(deleted->type, WatchEventType::kDeleted);
  EXPECT_EQ(deleted->object.metadata.name, "s");

  const Result<WatchEvent<model::EndpointSlice>> bookmark = DecodeEndpointSliceWatchEvent(
      R"({"type":"BOOKMARK","object":{"kind":"EndpointSlice","apiVersion":"discovery.k8s.io/v1",)"
      R"("metadata":{"resourceVersion":"12345","creationTimestamp":null,)"
      R"("annotations":{"k8s.io/initial-events-end":"true"}},"endpoints":null}})");
  ASSERT_TRUE(bookmark.ok()) << bookmark.status().ToString();
  EXPECT_EQ(bookmark->type, WatchEventType::kBookmark);
  EXPECT_EQ(bookmark->object.metadata.resource_version, "12345");
  EXPECT_EQ(bookmark->object.metadata.annotations.at("k8s.io/initial-events-end"), "true");

  const Result<WatchEvent<model::Node>> gone = DecodeNodeWatchEvent(
      R"({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},)"
      R"js("status":"Failure","message":"too old resource version: 5 (90)","reason":"Expired",)js"
      R"("code":410}})");
  ASSERT_TRUE(gone.ok()) << gone.status().ToString();
  EXPECT_EQ(gone->type, WatchEventType::kError);
  EXPECT_EQ(gone->error.code(), StatusCode::kExpired);
  EXPECT_EQ(gone->error.message(), "too old resource version: 5 (90)");
  // Older servers say "Gone" (or nothing) with 410; other codes map by reason, then by HTTP code.
  EXPECT_EQ(DecodeNamespaceWatchEvent(R"({"type":"ERROR","object":{"code":410,"reason":"Gone"}})")
                ->error.code(),
            StatusCode::kExpired);
  EXPECT_EQ(DecodeEndpointsWatchEvent(R"({"type":"ERROR","object":{"code":500}})")->error.code(),
            StatusCode::kInternal);
  EXPECT_EQ(
      DecodeEventWatchEvent(R"({"type":"ERROR","object":{"reason":"TooManyRequests","code":7}})")
          ->error.code(),
      StatusCode::kTooManyRequests);
}

TEST(WatchEventDecodeTest, RejectsBadLinesWithFullMessages) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"object":{}})", "watch event: .type: missing"},
      {R"({"type":7,"object":{}})", "watch event: .type: expected string"},
      {R"({"type":"ADDEDX","object":{}})",
       "watch event: .type: unknown watch event type \"ADDEDX\""},
      {R"({"type":"ADDED"})", "watch event: .object: expected object"},
      {R"({"type":"ADDED","object":[]})", "watch event: .object: expected object"},
      {R"([])", "watch event: expected a JSON object at the top level"},
      {R"({"type":"ADDED","object":{"kind":"Service"}})",
       "watch event: expected v1 Pod, got  Service"},
      {R"({"type":"MODIFIED","object":{"metadata":{"name":"p","namespace":"d"},)"
       R"("spec":{"nodeName":3}}})",
       "watch event: pods/d/p: .spec.nodeName: expected string"},
  };
  for (const auto& [line, want] : cases) {
    SCOPED_TRACE(line);
    const Status status = ErrorOf(DecodePodWatchEvent(line));
    EXPECT_EQ(status.code(), StatusCode::kBadRequest);
    EXPECT_EQ(status.ToString(), want);
  }
  const Status truncated = ErrorOf(DecodePodWatchEvent(R"({"type":"ADDED","object":{"metad)"));
  EXPECT_EQ(truncated.code(), StatusCode::kBadRequest);
  EXPECT_TRUE(truncated.ToString().starts_with("watch event: malformed JSON"))
      << truncated.ToString();
}

// Random bytes and every prefix of a real event line fail cleanly.
TEST(WatchEventDecodeTest, TruncatedAndRandomLinesNeverCrash) {
  const std::string line =
      R"({"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a",)"
      R"("labels":{"app":"x"}},"status":{"podIPs":[{"ip":"10.1.2.3"}]}}})";
  ASSERT_TRUE(DecodePodWatchEvent(line).ok());
  for (std::size_t size = 0; size < line.size(); ++size) {
    EXPECT_FALSE(DecodePodWatchEvent(line.substr(0, size)).ok()) << size;
  }
  std::mt19937 random(7);
  for (int i = 0; i < 2000; ++i) {
    std::string mutated = line;
    mutated[random() % mutated.size()] = static_cast<char>(random() % 256);
    static_cast<void>(DecodePodWatchEvent(mutated));
  }
}

// A non-2xx answer's body: a metav1.Status maps by reason, then by HTTP status; anything else
// keeps an excerpt of the body.
TEST(StatusResponseTest, MapsReasonCodeAndOtherBodies) {
  const Status not_found =
      DecodeStatusResponse(R"({"kind":"Status","apiVersion":"v1","status":"Failure",)"
                           R"("message":"pods \"x\" not found","reason":"NotFound","code":404})",
                           404);
  EXPECT_EQ(not_found.code(), StatusCode::kNotFound);
  EXPECT_EQ(not_found.message(), "pods \"x\" not found");
  EXPECT_EQ(DecodeStatusResponse(R"({"kind":"Status","code":409,"message":"m"})", 409).code(),
            StatusCode::kConflict);
  EXPECT_EQ(DecodeStatusResponse(R"({"kind":"Status"})", 410).code(), StatusCode::kExpired);
  const Status html = DecodeStatusResponse("<html>bad gateway</html>", 502);
  EXPECT_EQ(html.code(), StatusCode::kInternal);
  EXPECT_EQ(html.message(), "the server answered HTTP 502: <html>bad gateway</html>");
  EXPECT_EQ(DecodeStatusResponse("", 503).code(), StatusCode::kUnavailable);
  EXPECT_EQ(DecodeStatusResponse("", 503).message(), "the server answered HTTP 503");
  EXPECT_FALSE(DecodeStatusResponse(R"({"kind":"Status","code":200})", 200).ok());
}

// A 422's details.causes (as kube-apiserver sends them) become the Status's causes, so a condition
// or log line can name the field; causes of the wrong shape are read as far as they go.
TEST(StatusResponseTest, ReadsFieldCauses) {
  const Status invalid = DecodeStatusResponse(
      R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
      R"("message":"Service \"bad\" is invalid: spec.ports[0].port: Invalid value: 70000",)"
      R"("reason":"Invalid","details":{"name":"bad","kind":"Service","causes":[)"
      R"({"reason":"FieldValueInvalid","message":"Invalid value: 70000: must be between 1 and)"
      R"( 65535, inclusive","field":"spec.ports[0].port"},{"reason":"FieldValueRequired"},7]},)"
      R"("code":422})",
      422);
  EXPECT_EQ(invalid.code(), StatusCode::kInvalid);
  ASSERT_EQ(invalid.causes().size(), 3U);
  EXPECT_EQ(invalid.causes()[0],
            (StatusCause{"FieldValueInvalid",
                         "Invalid value: 70000: must be between 1 and 65535, inclusive",
                         "spec.ports[0].port"}));
  EXPECT_EQ(invalid.causes()[1], (StatusCause{"FieldValueRequired", "", ""}));
  EXPECT_EQ(invalid.causes()[2], StatusCause{});
  EXPECT_TRUE(DecodeStatusResponse(R"({"kind":"Status","code":422,"details":{"causes":{}}})", 422)
                  .causes()
                  .empty());
}

// Every bad input is kBadRequest with a message naming the document, the object and the path.
TEST(JsonDecodeTest, RejectsBadInputWithFullMessages) {
  struct Case {
    std::string_view name;
    std::string json;
    std::string_view want;
  };
  const std::string pod_head = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-1",)"
                               R"("namespace":"default"},)";
  const Case cases[] = {
      {"nested wrong type", pod_head + R"("status":{"podIPs":[{"ip":"10.0.0.1"},{"ip":5}]}})",
       "pods.json: pods/default/web-1: .status.podIPs[1].ip: expected string"},
      {"the header example", pod_head + R"("status":{"podIPs":[{"ip":false}]}})",
       "pods.json: pods/default/web-1: .status.podIPs[0].ip: expected string"},
      {"string for integer",
       pod_head + R"("spec":{"containers":[{"name":"c","ports":[{"containerPort":"80"}]}]}})",
       "pods.json: pods/default/web-1: .spec.containers[0].ports[0].containerPort: "
       "expected integer"},
      {"fraction for integer",
       pod_head + R"("spec":{"containers":[{"ports":[{"containerPort":80.5}]}]}})",
       "pods.json: pods/default/web-1: .spec.containers[0].ports[0].containerPort: "
       "expected integer"},
      {"int32 overflow",
       pod_head + R"("spec":{"initContainers":[{"ports":[{"hostPort":2147483648}]}]}})",
       "pods.json: pods/default/web-1: .spec.initContainers[0].ports[0].hostPort: "
       "integer out of range"},
      {"int32 underflow",
       pod_head + R"("spec":{"containers":[{"ports":[{"containerPort":-2147483649}]}]}})",
       "pods.json: pods/default/web-1: .spec.containers[0].ports[0].containerPort: "
       "integer out of range"},
      {"uint64 integer",
       R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p",)"
       R"("generation":18446744073709551615}})",
       "pods.json: pods/p: .metadata.generation: integer out of range"},
      {"huge exponent integer",
       R"({"apiVersion":"v1","kind":"Event","metadata":{"name":"e"},"count":1e300})",
       "pods.json: events/e: .count: integer out of range"},
      {"object for boolean",
       R"({"apiVersion":"v1","kind":"Service","metadata":{"name":"s","namespace":"d"},)"
       R"("spec":{"publishNotReadyAddresses":{}}})",
       "pods.json: services/d/s: .spec.publishNotReadyAddresses: expected boolean"},
      {"string for condition",
       R"({"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice","metadata":{"name":"s",)"
       R"("namespace":"d"},"endpoints":[{"addresses":[]},{"conditions":{"ready":"true"}}]})",
       "pods.json: endpointslices/d/s: .endpoints[1].conditions.ready: expected boolean"},
      {"bad hint",
       R"({"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice","metadata":{"name":"s",)"
       R"("namespace":"d"},"endpoints":[{"hints":{"forZones":["zone-a"]}}]})",
       "pods.json: endpointslices/d/s: .endpoints[0].hints.forZones[0]: expected object"},
      {"bad targetPort",
       R"({"apiVersion":"v1","kind":"Service","metadata":{"name":"s","namespace":"d"},)"
       R"("spec":{"ports":[{"port":80,"targetPort":true}]}})",
       "pods.json: services/d/s: .spec.ports[0].targetPort: expected integer or string"},
      {"bad selector",
       R"({"apiVersion":"v1","kind":"Service","metadata":{"name":"s","namespace":"d"},)"
       R"("spec":{"selector":["app"]}})",
       "pods.json: services/d/s: .spec.selector: expected object"},
      {"bad label value",
       R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n","labels":{"a.b/c":1}}})",
       "pods.json: nodes/n: .metadata.labels[a.b/c]: expected string"},
      {"bad time",
       R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"ns",)"
       R"("creationTimestamp":"2024-02-30T00:00:00Z"}})",
       "pods.json: namespaces/ns: .metadata.creationTimestamp: expected RFC 3339 time"},
      {"list for object",
       R"({"apiVersion":"v1","kind":"Endpoints","metadata":{"name":"e","namespace":"d"},)"
       R"("subsets":[{"addresses":[{"targetRef":[]}]}]})",
       "pods.json: endpoints/d/e: .subsets[0].addresses[0].targetRef: expected object"},
      {"object for list",
       R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","finalizers":{}}})",
       "pods.json: pods/p: .metadata.finalizers: expected array"},
      {"unnamed object", R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":5}})",
       "pods.json: pods: .metadata.name: expected string"},
      {"unnamed list item",
       R"({"apiVersion":"v1","kind":"PodList","items":[{},{"metadata":{"labels":[]}}]})",
       "pods.json: items[1]: .metadata.labels: expected object"},
      {"named list item",
       R"({"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Event",)"
       R"("metadata":{"name":"e1","namespace":"d"},"source":{"host":1}}]})",
       "pods.json: events/d/e1: .source.host: expected string"},
      {"list item wrong kind",
       R"({"apiVersion":"v1","kind":"PodList","items":[{"kind":"Pod"},{"kind":"Service"}]})",
       "pods.json: items[1]: .kind: expected Pod in a v1 PodList, got Service"},
      {"list item wrong version",
       R"({"apiVersion":"v1","kind":"PodList","items":[{"apiVersion":"apps/v1"}]})",
       "pods.json: items[0]: .apiVersion: expected v1 in a v1 PodList, got apps/v1"},
      {"list item without kind", R"({"apiVersion":"v1","kind":"List","items":[{"a":1}]})",
       "pods.json: items[0]: missing apiVersion or kind"},
      {"list item not an object", R"({"apiVersion":"v1","kind":"List","items":[[]]})",
       "pods.json: items[0]: expected object"},
      {"items not an array", R"({"apiVersion":"v1","kind":"List","items":{}})",
       "pods.json: .items: expected array"},
      {"kind not a string", R"({"apiVersion":"v1","kind":7})", "pods.json: .kind: expected string"},
      {"no kind", R"({"metadata":{"name":"x"}})", "pods.json: missing apiVersion or kind"},
      {"root not an object", R"([{"apiVersion":"v1","kind":"Pod"}])",
       "pods.json: expected a JSON object at the top level"},
      {"root scalar", "42", "pods.json: expected a JSON object at the top level"},
      {"trailing comma", R"({"kind":"Pod",})",
       "pods.json: malformed JSON at byte 14: The JSON document has an improper structure: "
       "missing or superfluous commas, braces, missing keys, etc."},
      {"truncated", R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"web)",
       "pods.json: malformed JSON at byte 55: A string is opened, but never closed."},
      {"truncated after a value", R"({"apiVersion":"v1","kind":"Pod","metadata":{)",
       "pods.json: malformed JSON at byte 44: The JSON document has an improper structure: "
       "missing or superfluous commas, braces, missing keys, etc."},
      {"bad literal", R"({"kind":"Pod","spec":tru})",
       "pods.json: malformed JSON at byte 24: Problem while parsing an atom starting with the "
       "letter 't'"},
      {"empty", "", "pods.json: malformed JSON: Empty: no JSON found"},
      {"blank", " \n\t ", "pods.json: malformed JSON: Empty: no JSON found"},
      {"number beyond uint64", R"({"kind":"Pod","x":184467440737095516160})",
       "pods.json: malformed JSON: Problem while parsing a number"},
      {"number beyond double", R"({"kind":"Pod","x":1e400})",
       "pods.json: malformed JSON at byte 22: Problem while parsing a number"},
      {"invalid UTF-8", "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"\xC3\x28\"}}",
       "pods.json: malformed JSON at byte 35: The input is not valid UTF-8"},
      {"deep nesting",
       R"({"kind":"Pod","x":)" + std::string(5000, '[') + std::string(5000, ']') + "}",
       "pods.json: malformed JSON: The JSON document was too deep (too many nested objects and "
       "arrays)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Status status = ErrorOf(DecodeJsonDocument(c.json, "pods.json"));
    EXPECT_EQ(status.code(), StatusCode::kBadRequest);
    EXPECT_EQ(status.ToString(), c.want);
  }
}

// The parts of the error are separately available: the document prefixes the object, and the
// field path stands alone.
TEST(JsonDecodeTest, ErrorPartsAreStructured) {
  const Status status = ErrorOf(DecodeJsonDocument(
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-1","namespace":"default"},)"
      R"("status":{"podIPs":[{"ip":1}]}})",
      "pods.json"));
  EXPECT_EQ(status.object(), "pods.json: pods/default/web-1");
  EXPECT_EQ(status.field(), ".status.podIPs[0].ip");
  EXPECT_EQ(status.message(), "expected string");
  // Without a document name the object stands alone.
  EXPECT_EQ(ErrorOf(DecodeJsonDocument(R"({"apiVersion":"v1","kind":7})", "")).ToString(),
            ".kind: expected string");
}

// Random bytes and random mutations of real documents never crash the decoder (the ASan build
// runs this too); every failure is a kBadRequest.
TEST(JsonDecodeTest, RandomInputNeverCrashes) {
  const unsigned seed = testing::TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  const std::string corpus[] = {ReadTestdata("pods.json"), ReadTestdata("endpointslices.json"),
                                ReadTestdata("list.json")};
  const std::string_view alphabet = "{}[]\":,0123456789.eE+-tfnul \\\x80\xff";
  for (int i = 0; i < 3000; ++i) {
    std::string text;
    if (i % 3 == 0) {
      const std::size_t size = rng() % 200;
      for (std::size_t j = 0; j < size; ++j) {
        text += (i % 2 == 0) ? static_cast<char>(rng() % 256) : alphabet[rng() % alphabet.size()];
      }
    } else {
      text = corpus[rng() % 3];
      const int edits = 1 + static_cast<int>(rng() % 8);
      for (int e = 0; e < edits; ++e) {
        const std::size_t at = rng() % text.size();
        switch (rng() % 3) {
          case 0:
            text[at] = alphabet[rng() % alphabet.size()];
            break;
          case 1:
            text.erase(at, rng() % 16);
            break;
          default:
            text.resize(at + 1);
            break;
        }
        if (text.empty()) text = "{";
      }
    }
    const Result<ObjectSet> json = DecodeJsonDocument(text, "fuzz.json");
    if (!json.ok()) {
      EXPECT_EQ(json.status().code(), StatusCode::kBadRequest) << text;
    }
    const Result<ObjectSet> any = DecodeDocuments(text, "fuzz");
    if (!any.ok()) {
      EXPECT_EQ(any.status().code(), StatusCode::kBadRequest) << text;
    }
  }
}

// Append moves every kind, keeping input order.
TEST(ObjectSetTest, AppendMovesEveryKind) {
  ObjectSet a = MustDecode(ReadTestdata("pods.json"), "pods.json");
  ObjectSet b = MustDecode(ReadTestdata("list.json"), "list.json");
  b.Append(MustDecode(ReadTestdata("services.json"), "services.json"));
  a.Append(std::move(b));
  EXPECT_EQ(a.pods.size(), 4u);
  EXPECT_EQ(a.pods[3].metadata.name, "solo");
  EXPECT_EQ(a.services.size(), 6u);
  EXPECT_EQ(a.namespaces.size(), 1u);
  EXPECT_EQ(a.endpoints.size(), 1u);
  EXPECT_EQ(a.events.size(), 1u);
  EXPECT_EQ(a.skipped_kinds.size(), 2u);
}

// DecodeDocuments picks JSON for text starting with '{' or '[' (after blanks and a BOM), YAML
// otherwise.
TEST(JsonDecodeTest, DecodeDocumentsSniffsTheFormat) {
  const Result<ObjectSet> json =
      DecodeDocuments("\xEF\xBB\xBF \n{\"apiVersion\":\"v1\",\"kind\":\"Node\"}", "a");
  ASSERT_TRUE(json.ok()) << json.status().ToString();
  EXPECT_EQ(json->nodes.size(), 1u);
  const Result<ObjectSet> yaml = DecodeDocuments("apiVersion: v1\nkind: Node\n", "b");
  ASSERT_TRUE(yaml.ok()) << yaml.status().ToString();
  EXPECT_EQ(yaml->nodes.size(), 1u);
  EXPECT_EQ(ErrorOf(DecodeDocuments("[1]", "c")).ToString(),
            "c: expected a JSON object at the top level");
}

// LIST answers as a reflector pages through them: items plus the list metadata.
TEST(ListDecodeTest, DecodesItemsAndListMetadata) {
  const Result<ListPage<model::Pod>> page = DecodePodList(
      R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"42",)"
      R"("continue":"tok","remainingItemCount":7},"items":[)"
      R"({"metadata":{"name":"a","namespace":"d","resourceVersion":"40"}},null,)"
      R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"b","namespace":"d"}}]})");
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->items.size(), 2U);
  EXPECT_EQ(page->items[0].metadata.name, "a");
  EXPECT_EQ(page->items[0].metadata.resource_version, "40");
  EXPECT_EQ(page->items[1].metadata.name, "b");
  EXPECT_EQ(page->resource_version, "42");
  EXPECT_EQ(page->continue_token, "tok");
  EXPECT_EQ(page->remaining_item_count, 7);

  const Result<ListPage<model::EndpointSlice>> empty =
      DecodeEndpointSliceList(R"({"kind":"EndpointSliceList","apiVersion":"discovery.k8s.io/v1",)"
                              R"("metadata":{"resourceVersion":"9"},"items":null})");
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_TRUE(empty->items.empty());
  EXPECT_EQ(empty->resource_version, "9");
  EXPECT_TRUE(empty->continue_token.empty());
  EXPECT_FALSE(empty->remaining_item_count.has_value());
}

TEST(ListDecodeTest, ErrorsNameTheListAndItem) {
  const std::pair<std::string_view, std::string_view> cases[] = {
      {R"({"kind":"ServiceList","items":[]})", "list: .kind: expected PodList, got ServiceList"},
      {R"({"kind":"PodList","items":{}})", "list: .items: expected array"},
      {R"({"kind":"PodList","metadata":{"continue":5},"items":[]})",
       "list: .metadata.continue: expected string"},
      {R"([1])", "list: expected a JSON object at the top level"},
  };
  for (const auto& [text, want] : cases) {
    SCOPED_TRACE(text);
    const Status status = ErrorOf(DecodePodList(text));
    EXPECT_EQ(status.code(), StatusCode::kBadRequest);
    EXPECT_EQ(status.ToString(), want);
  }
  const std::string good =
      R"({"kind":"PodList","metadata":{"resourceVersion":"3"},"items":[{"metadata":{"name":"a"}}]})";
  ASSERT_TRUE(DecodePodList(good).ok());
  for (std::size_t size = 0; size < good.size(); ++size) {
    EXPECT_FALSE(DecodePodList(good.substr(0, size)).ok()) << size;
  }
}

// One bad item is reported and left out; the rest of the page still decodes.
TEST(ListDecodeTest, BadItemsAreLeftOutAndReported) {
  const Result<ListPage<model::Pod>> page =
      DecodePodList(R"({"kind":"List","metadata":{"resourceVersion":"5"},"items":[)"
                    R"({"kind":"Service","apiVersion":"v1"},)"
                    R"({"metadata":{"name":"p","namespace":"d"},"spec":{"nodeName":3}},)"
                    R"(7,)"
                    R"({"metadata":{"name":"ok","namespace":"d"}}]})");
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->items.size(), 1U);
  EXPECT_EQ(page->items[0].metadata.name, "ok");
  EXPECT_EQ(page->resource_version, "5");
  ASSERT_EQ(page->item_errors.size(), 3U);
  EXPECT_EQ(page->item_errors[0].ToString(), "list: items[0]: expected v1 Pod, got v1 Service");
  EXPECT_EQ(page->item_errors[1].ToString(), "list: pods/d/p: .spec.nodeName: expected string");
  EXPECT_EQ(page->item_errors[2].ToString(), "list: items[2]: expected object");
}

}  // namespace
}  // namespace slicewright::codec

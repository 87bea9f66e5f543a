#include "slicewright/cache/compact_slice.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "slicewright/codec/json.h"

namespace slicewright::cache {
namespace {

// A slice as kube-controller-manager (and our controller) writes it.
model::EndpointSlice TypicalSlice() {
  Result<model::EndpointSlice> slice = codec::DecodeEndpointSlice(R"({
    "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
    "metadata": {"name": "web-x7k2p", "generateName": "web-", "namespace": "shop",
      "uid": "9a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d", "resourceVersion": "8812", "generation": 3,
      "labels": {"kubernetes.io/service-name": "web",
        "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io"},
      "annotations": {"endpoints.kubernetes.io/last-change-trigger-time": "2026-01-02T03:04:05Z"},
      "ownerReferences": [{"apiVersion": "v1", "kind": "Service", "name": "web",
        "uid": "0d6b3f5e-8c3f-4a44-9d0e-2f1c9e0a7b11", "controller": true,
        "blockOwnerDeletion": true}]},
    "addressType": "IPv4",
    "endpoints": [
      {"addresses": ["10.244.1.7"], "conditions": {"ready": true, "serving": true,
        "terminating": false}, "nodeName": "node-3", "zone": "zone-a",
        "targetRef": {"kind": "Pod", "namespace": "shop", "name": "web-7d9f8c6b5-x2k4q",
          "uid": "5b0c7a8e-3d2f-4e61-b7a9-1c2d3e4f5a6b"},
        "hints": {"forZones": [{"name": "zone-a"}]}},
      {"addresses": ["10.244.2.9"], "conditions": {"ready": false, "serving": true,
        "terminating": true}, "nodeName": "node-4", "zone": "zone-b",
        "targetRef": {"kind": "Pod", "namespace": "shop", "name": "web-7d9f8c6b5-abcde",
          "uid": "6c1d8b9f-4e3a-4f72-a8ba-2d3e4f5a6b7c"}}],
    "ports": [{"name": "http", "protocol": "TCP", "port": 8080}]})");
  EXPECT_TRUE(slice.ok()) << slice.status().ToString();
  return slice.ok() ? *slice : model::EndpointSlice();
}

TEST(CompactEndpointSliceTest, TypicalSliceIsCompactAndReadsBackEqual) {
  SliceInterners interners;
  const model::EndpointSlice slice = TypicalSlice();
  const CompactEndpointSlice compact = CompactEndpointSlice::FromSlice(slice, interners);
  EXPECT_EQ(compact.endpoint_count(), 2U);
  EXPECT_EQ(compact.whole_endpoint_count(), 0U);
  EXPECT_EQ(compact.address_type(), "IPv4");
  EXPECT_EQ(compact.metadata, slice.metadata);
  EXPECT_EQ(compact.ToSlice(), slice);
}

TEST(CompactEndpointSliceTest, EmptySliceReadsBackEqual) {
  SliceInterners interners;
  model::EndpointSlice slice;
  slice.metadata.name = "placeholder";
  slice.metadata.namespace_ = "shop";
  slice.address_type = "IPv6";
  const CompactEndpointSlice compact = CompactEndpointSlice::FromSlice(slice, interners);
  EXPECT_EQ(compact.endpoint_count(), 0U);
  EXPECT_EQ(compact.ToSlice(), slice);
}

// Each variation of one endpoint must read back exactly as cached: either in the compact form or
// kept whole. `compact` says which form the variation is expected to take.
struct Variation {
  std::string name;
  void (*change)(model::Endpoint&);
  bool compact;
};

TEST(CompactEndpointSliceTest, EveryVariationReadsBackExactly) {
  const std::vector<Variation> variations = {
      {"unchanged", [](model::Endpoint&) {}, true},
      {"ipv6", [](model::Endpoint& e) { e.addresses = {"fd00::1:7"}; }, true},
      {"ipv6 not canonical", [](model::Endpoint& e) { e.addresses = {"FD00:0::1:7"}; }, false},
      {"ipv4 with leading zeros", [](model::Endpoint& e) { e.addresses = {"010.1.2.3"}; }, false},
      {"ipv4-mapped ipv6", [](model::Endpoint& e) { e.addresses = {"::ffff:10.1.2.3"}; }, false},
      {"fqdn", [](model::Endpoint& e) { e.addresses = {"db.example.com"}; }, false},
      {"two addresses", [](model::Endpoint& e) { e.addresses.push_back("10.9.9.9"); }, false},
      {"no address", [](model::Endpoint& e) { e.addresses.clear(); }, false},
      {"no targetRef", [](model::Endpoint& e) { e.target_ref.reset(); }, true},
      {"targetRef of another kind", [](model::Endpoint& e) { e.target_ref->kind = "Node"; }, false},
      {"targetRef in another namespace",
       [](model::Endpoint& e) { e.target_ref->namespace_ = "other"; }, false},
      {"targetRef with apiVersion", [](model::Endpoint& e) { e.target_ref->api_version = "v1"; },
       false},
      {"targetRef with resourceVersion",
       [](model::Endpoint& e) { e.target_ref->resource_version = "12"; }, false},
      {"targetRef with fieldPath", [](model::Endpoint& e) { e.target_ref->field_path = "x"; },
       false},
      {"targetRef uid not a UUID", [](model::Endpoint& e) { e.target_ref->uid = "pod-1"; }, false},
      {"targetRef uid upper case",
       [](model::Endpoint& e) { e.target_ref->uid = "5B0C7A8E-3D2F-4E61-B7A9-1C2D3E4F5A6B"; },
       false},
      {"targetRef without uid", [](model::Endpoint& e) { e.target_ref->uid.clear(); }, false},
      {"targetRef with empty name", [](model::Endpoint& e) { e.target_ref->name.clear(); }, true},
      {"hostname", [](model::Endpoint& e) { e.hostname = "web-0"; }, false},
      {"no nodeName", [](model::Endpoint& e) { e.node_name.reset(); }, true},
      {"empty nodeName", [](model::Endpoint& e) { e.node_name = ""; }, true},
      {"no zone", [](model::Endpoint& e) { e.zone.reset(); }, true},
      {"empty zone", [](model::Endpoint& e) { e.zone = ""; }, true},
      {"no hints", [](model::Endpoint& e) { e.hints.reset(); }, true},
      {"empty hints", [](model::Endpoint& e) { e.hints = model::EndpointHints{}; }, true},
      {"node hints",
       [](model::Endpoint& e) {
         e.hints = model::EndpointHints{{"zone-a", "zone-b"}, {"node-3"}};
       },
       true},
      {"no conditions", [](model::Endpoint& e) { e.conditions = {}; }, true},
      {"ready only",
       [](model::Endpoint& e) {
         e.conditions = {true, std::nullopt, std::nullopt};
       },
       true},
      {"serving false only",
       [](model::Endpoint& e) {
         e.conditions = {std::nullopt, false, std::nullopt};
       },
       true},
      {"terminating true only",
       [](model::Endpoint& e) {
         e.conditions = {std::nullopt, std::nullopt, true};
       },
       true},
  };
  for (const Variation& variation : variations) {
    SCOPED_TRACE(variation.name);
    SliceInterners interners;
    model::EndpointSlice slice = TypicalSlice();
    variation.change(slice.endpoints[0]);
    const CompactEndpointSlice compact = CompactEndpointSlice::FromSlice(slice, interners);
    EXPECT_EQ(compact.ToSlice(), slice);
    EXPECT_EQ(compact.whole_endpoint_count(), variation.compact ? 0U : 1U);
  }
}

// An MCS slice's endpoints (no targetRef, no node: DesiredBrokerSlices drops them) take the short
// form; endpoints with extras between them keep theirs, in order.
TEST(CompactEndpointSliceTest, EndpointsWithoutExtrasTakeTheShortForm) {
  SliceInterners interners;
  model::EndpointSlice slice = TypicalSlice();
  slice.endpoints.resize(6, slice.endpoints[1]);
  for (int i = 0; i < 6; ++i) {
    model::Endpoint& endpoint = slice.endpoints[static_cast<std::size_t>(i)];
    endpoint.addresses = {"10.9.0." + std::to_string(i + 1)};
    endpoint.target_ref.reset();
    endpoint.node_name.reset();
    endpoint.hints.reset();
  }
  slice.endpoints[1].node_name = "node-7";                                 // extras: a node
  slice.endpoints[3].hostname = "db-3";                                    // kept whole
  slice.endpoints[4].target_ref = TypicalSlice().endpoints[0].target_ref;  // extras: a pod
  const CompactEndpointSlice compact = CompactEndpointSlice::FromSlice(slice, interners);
  EXPECT_EQ(compact.ToSlice(), slice);
  EXPECT_EQ(compact.extras_count(), 3U);
  EXPECT_EQ(compact.whole_endpoint_count(), 1U);
  model::EndpointSlice plain = slice;
  plain.endpoints[1].node_name.reset();
  plain.endpoints[3].hostname.reset();
  plain.endpoints[4].target_ref.reset();
  const CompactEndpointSlice short_form = CompactEndpointSlice::FromSlice(plain, interners);
  EXPECT_EQ(short_form.ToSlice(), plain);
  EXPECT_EQ(short_form.extras_count(), 0U);
  EXPECT_FALSE(short_form == compact);
}

TEST(CompactEndpointSliceTest, SharedValuesAreInternedOnce) {
  SliceInterners interners;
  std::vector<CompactEndpointSlice> slices;
  for (int i = 0; i < 10; ++i) {
    model::EndpointSlice slice = TypicalSlice();
    slice.metadata.name = "web-" + std::to_string(i);
    slices.push_back(CompactEndpointSlice::FromSlice(slice, interners));
  }
  EXPECT_EQ(interners.ports.size(), 1U);
  EXPECT_EQ(interners.node_names.size(), 2U);  // node-3, node-4
  EXPECT_EQ(interners.zones.size(), 2U);
  EXPECT_EQ(interners.hints.size(), 1U);
  for (const CompactEndpointSlice& compact : slices) {
    EXPECT_EQ(compact.ToSlice().ports, TypicalSlice().ports);
  }
}

TEST(CompactEndpointSliceTest, EqualityFollowsTheSlice) {
  SliceInterners interners;
  const model::EndpointSlice slice = TypicalSlice();
  EXPECT_EQ(CompactEndpointSlice::FromSlice(slice, interners),
            CompactEndpointSlice::FromSlice(slice, interners));
  model::EndpointSlice not_ready = slice;
  not_ready.endpoints[0].conditions.ready = false;
  EXPECT_FALSE(CompactEndpointSlice::FromSlice(slice, interners) ==
               CompactEndpointSlice::FromSlice(not_ready, interners));
  model::EndpointSlice hostname = slice;
  hostname.endpoints[1].hostname = "a";  // kept whole
  model::EndpointSlice other_hostname = slice;
  other_hostname.endpoints[1].hostname = "b";
  EXPECT_EQ(CompactEndpointSlice::FromSlice(hostname, interners),
            CompactEndpointSlice::FromSlice(hostname, interners));
  EXPECT_FALSE(CompactEndpointSlice::FromSlice(hostname, interners) ==
               CompactEndpointSlice::FromSlice(other_hostname, interners));
  model::EndpointSlice relabelled = slice;
  relabelled.metadata.labels["x"] = "y";
  EXPECT_FALSE(CompactEndpointSlice::FromSlice(slice, interners) ==
               CompactEndpointSlice::FromSlice(relabelled, interners));
}

}  // namespace
}  // namespace slicewright::cache

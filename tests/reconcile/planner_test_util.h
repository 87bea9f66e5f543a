// Builders for planner tests: the spec §16 conventions (namespace test, Service foo with UID
// test-foo, one port foo/TCP/80, pods on node-1) and a tiny in-memory API that applies a plan.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "slicewright/model/discovery.h"
#include "slicewright/model/well_known.h"
#include "slicewright/reconcile/desired.h"
#include "slicewright/reconcile/plan.h"
#include "slicewright/reconcile/planner.h"

namespace slicewright::reconcile::testing {

inline Owner FooOwner() {
  Owner owner;
  owner.namespace_ = "test";
  owner.name = "foo";
  owner.uid = "test-foo";
  return owner;
}

// A unique, valid IPv4 address for pod i (spec uses 1.2.3.(4+i); that overflows past 251 pods).
inline std::string PodIp(int i) {
  const int n = i + 4;
  return "1.2." + std::to_string(3 + n / 256) + "." + std::to_string(n % 256);
}

inline model::EndpointPort Port(std::string name, int port, std::string protocol = "TCP") {
  return model::EndpointPort{std::move(name), std::move(protocol), port, std::nullopt};
}

inline model::Endpoint PodEndpoint(int i, bool ready = true) {
  model::Endpoint endpoint;
  endpoint.addresses = {PodIp(i)};
  endpoint.conditions = model::EndpointConditions{ready, ready, false};
  endpoint.node_name = "node-1";
  endpoint.target_ref = model::ObjectReference{
      "Pod", "test", "pod" + std::to_string(i), "uid-pod" + std::to_string(i), "", "", ""};
  return endpoint;
}

inline model::StringMap FooLabels(bool headless = true) {
  model::StringMap labels{
      {std::string(model::kLabelServiceName), "foo"},
      {std::string(model::kLabelManagedBy), std::string(model::kManagedByEndpointSliceController)}};
  if (headless) labels[std::string(model::kLabelHeadless)] = "";
  return labels;
}

// Desired state of Service foo with pods [first, first+count), every `unready_every`-th unready.
inline DesiredEndpoints FooDesired(int count, int first = 0,
                                   std::vector<model::EndpointPort> ports = {Port("foo", 80)},
                                   int unready_every = 0) {
  DesiredEndpoints desired;
  desired.owner = FooOwner();
  desired.address_types = {"IPv4"};
  desired.labels = FooLabels();
  EndpointGroup group{"IPv4", std::move(ports), {}};
  for (int i = first; i < first + count; ++i) {
    const bool ready = unready_every == 0 || i % unready_every != 0;
    group.endpoints.push_back(PodEndpoint(i, ready));
  }
  if (count > 0) desired.groups.push_back(std::move(group));
  return desired;
}

inline model::EndpointSlice StoredSlice(std::string name, std::vector<model::Endpoint> endpoints,
                                        std::vector<model::EndpointPort> ports = {Port("foo", 80)},
                                        std::string owner_uid = "test-foo") {
  model::EndpointSlice slice;
  slice.metadata.name = std::move(name);
  slice.metadata.namespace_ = "test";
  slice.metadata.uid = "uid-" + slice.metadata.name;
  slice.metadata.resource_version = "7";
  slice.metadata.generation = 1;
  slice.metadata.labels = FooLabels();
  slice.metadata.owner_references = {
      model::OwnerReference{"v1", "Service", "foo", std::move(owner_uid), true, true}};
  slice.address_type = "IPv4";
  slice.ports = std::move(ports);
  slice.endpoints = std::move(endpoints);
  return slice;
}

inline std::vector<model::Endpoint> PodEndpoints(int first, int count) {
  std::vector<model::Endpoint> out;
  for (int i = first; i < first + count; ++i) out.push_back(PodEndpoint(i));
  return out;
}

// Applies a plan as an API server would: creates get a name, updates replace, deletes remove.
inline void ApplyPlan(const Plan& plan, std::vector<model::EndpointSlice>& cluster) {
  static int counter = 0;
  for (const SliceAction& action : plan.actions) {
    model::EndpointSlice slice = action.slice;
    auto same_name = [&](const model::EndpointSlice& s) {
      return s.metadata.name == slice.metadata.name;
    };
    switch (action.operation) {
      case Operation::kCreate:
        slice.metadata.name = slice.metadata.generate_name + "gen" + std::to_string(++counter);
        slice.metadata.uid = "uid-" + slice.metadata.name;
        slice.metadata.resource_version = "1";
        slice.metadata.generation = 1;
        cluster.push_back(std::move(slice));
        break;
      case Operation::kUpdate:
        std::replace_if(cluster.begin(), cluster.end(), same_name, slice);
        break;
      case Operation::kDelete:
        std::erase_if(cluster, same_name);
        break;
    }
  }
}

// Endpoint counts of the slices an operation writes, in plan order.
inline std::vector<std::size_t> Lengths(const Plan& plan, Operation op) {
  std::vector<std::size_t> out;
  for (const SliceAction& action : plan.actions) {
    if (action.operation == op) out.push_back(action.slice.endpoints.size());
  }
  return out;
}

inline std::vector<std::size_t> SortedLengths(const std::vector<model::EndpointSlice>& slices) {
  std::vector<std::size_t> out;
  for (const auto& slice : slices) out.push_back(slice.endpoints.size());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace slicewright::reconcile::testing

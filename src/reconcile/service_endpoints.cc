#include "slicewright/reconcile/service_endpoints.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "slicewright/base/check.h"
#include "slicewright/model/core.h"
#include "slicewright/model/discovery.h"
#include "slicewright/net/ip.h"
#include "slicewright/reconcile/fingerprint.h"
#include "slicewright/reconcile/hints.h"
#include "slicewright/reconcile/planner.h"

#include "reconcile/pod_source_internal.h"

namespace slicewright::reconcile {
namespace {

// The position of the endpoint with `identity` in a group sorted by identity, or of where it
// would go.
std::size_t LowerBound(const EndpointGroup& group, const model::Endpoint& identity) {
  const auto it = std::lower_bound(group.endpoints.begin(), group.endpoints.end(), identity,
                                   [](const model::Endpoint& a, const model::Endpoint& b) {
                                     return CompareEndpointIdentity(a, b) < 0;
                                   });
  return static_cast<std::size_t>(it - group.endpoints.begin());
}

}  // namespace

ServiceEndpointsBuilder::ServiceEndpointsBuilder(const model::Service& service,
                                                 const ServiceSourceOptions& options)
    : service_(service), options_(options) {
  // The fields DesiredFromService fills besides groups and diagnostics, from the same code.
  desired_ = DesiredFromService(
      service_, std::span<const model::Pod* const>(),
      [](std::string_view) -> const model::Node* { return nullptr; }, options_);
  type_count_ = std::min(desired_.address_types.size(), kMaxTypes);
}

model::Endpoint ServiceEndpointsBuilder::IdentityEndpoint(const Identity& identity,
                                                          std::string_view name) const {
  model::Endpoint endpoint;
  endpoint.addresses = identity.addresses;
  endpoint.hostname = identity.hostname;
  model::ObjectReference& ref = endpoint.target_ref.emplace();
  ref.namespace_ = service_.metadata.namespace_;
  ref.name = name;
  return endpoint;
}

ServiceEndpointsBuilder::Derived ServiceEndpointsBuilder::Derive(const model::Pod& pod,
                                                                 const model::Node* node) const {
  Derived derived;
  if (!ShouldPodBeInEndpoints(pod, /*include_terminating=*/true)) {
    return derived;
  }
  // The port set counts from here on, even if the pod is skipped below (spec §3.6).
  derived.ports = EndpointPortsForPod(service_, pod);
  derived.state.port_key = PortMapKey(derived.ports);
  if (pod.spec.node_name.empty()) {
    node = nullptr;
  }
  if (node == nullptr && !service_.spec.publish_not_ready_addresses) {
    derived.state.node_not_found = internal::NodeNotFoundDiagnostic(service_, pod);
    return derived;
  }
  for (std::size_t i = 0; i < pod.status.pod_ips.size(); ++i) {
    const std::string& text = pod.status.pod_ips[i];
    if (!net::ParseIpSloppy(text) && derived.state.invalid_ips++ == 0) {
      derived.state.first_invalid = model::RareString(internal::InvalidPodIpDetail(pod, i, text));
    }
  }
  for (std::size_t t = 0; t < type_count_; ++t) {
    model::Endpoint endpoint = PodToEndpoint(pod, node, service_, desired_.address_types[t]);
    if (!endpoint.addresses.empty()) {
      // IdentityEndpoint rebuilds the targetRef from the pod's name and the Service's namespace.
      SW_DCHECK(endpoint.target_ref && endpoint.target_ref->name == pod.metadata.name &&
                endpoint.target_ref->namespace_ == service_.metadata.namespace_);
      derived.state.identity[t] = Identity{endpoint.addresses, endpoint.hostname};
      derived.endpoints[t] = std::move(endpoint);
    }
  }
  return derived;
}

void ServiceEndpointsBuilder::SetPod(const model::Pod& pod, const model::Node* node) {
  Derived derived = Derive(pod, node);
  auto it = pods_.find(pod.metadata.name);
  Apply(pod.metadata.name, it == pods_.end() ? nullptr : &it->second, std::move(derived));
}

bool ServiceEndpointsBuilder::RemovePod(std::string_view name) {
  auto it = pods_.find(name);
  if (it == pods_.end()) {
    return false;
  }
  const std::string key = it->first;
  Apply(key, &it->second, Derived{});
  pods_.erase(key);
  return true;
}

void ServiceEndpointsBuilder::Apply(const std::string& name, const PodState* old,
                                    Derived&& derived) {
  PodState& state = derived.state;
  // Acquire before releasing, so a pod staying in its port set never empties it.
  if (state.port_key) {
    AcquirePortSet(*state.port_key, std::move(derived.ports));
  }
  for (std::size_t t = 0; t < type_count_; ++t) {
    const bool had = old != nullptr && old->identity[t].has_value();
    const bool has = derived.endpoints[t].has_value();
    const std::optional<model::Endpoint> old_identity =
        had ? std::optional(IdentityEndpoint(*old->identity[t], name)) : std::nullopt;
    if (had && has && old->port_key == state.port_key &&
        CompareEndpointIdentity(*old_identity, *derived.endpoints[t]) == 0) {
      // Same identity, same group: replace in place (readiness, node or zone changes).
      EndpointGroup& group = GroupFor(*state.port_key, t);
      const std::size_t position = LowerBound(group, *old_identity);
      SW_CHECK(position < group.endpoints.size());
      group.fingerprints.Replace(position, *derived.endpoints[t]);
      group.endpoints[position] = std::move(*derived.endpoints[t]);
      continue;
    }
    if (had) {
      EndpointGroup& group = GroupFor(*old->port_key, t);
      const std::size_t position = LowerBound(group, *old_identity);
      SW_CHECK(position < group.endpoints.size());
      group.endpoints.erase(group.endpoints.begin() + static_cast<std::ptrdiff_t>(position));
      group.fingerprints.Erase(position);
    }
    if (has) {
      EndpointGroup& group = GroupFor(*state.port_key, t);
      const std::size_t position = LowerBound(group, *derived.endpoints[t]);
      group.fingerprints.Insert(position, *derived.endpoints[t]);
      group.endpoints.insert(group.endpoints.begin() + static_cast<std::ptrdiff_t>(position),
                             std::move(*derived.endpoints[t]));
    }
  }
  const bool had_problem =
      old != nullptr && (old->node_not_found.has_value() || old->invalid_ips > 0);
  const bool has_problem = state.node_not_found.has_value() || state.invalid_ips > 0;
  if (old != nullptr && old->port_key) {
    ReleasePortSet(*old->port_key);
  }
  PodState& stored = pods_[name];
  stored = std::move(state);
  if (has_problem) {
    problem_pods_[name] = &stored;
  } else {
    problem_pods_.erase(name);
  }
  if (had_problem || has_problem) {
    RebuildDiagnostics();
  }
}

void ServiceEndpointsBuilder::AcquirePortSet(const std::string& key,
                                             std::vector<model::EndpointPort>&& ports) {
  auto it = port_sets_.find(key);
  if (it != port_sets_.end()) {
    ++it->second.pods;
    return;
  }
  const std::size_t old_count = port_sets_.size();
  port_sets_.emplace(key, PortSet{std::move(ports), 1, kNoRank});
  RegroupPortSets(old_count);
}

void ServiceEndpointsBuilder::ReleasePortSet(const std::string& key) {
  auto it = port_sets_.find(key);
  SW_CHECK(it != port_sets_.end());
  if (--it->second.pods > 0) {
    return;
  }
  const std::size_t old_count = port_sets_.size();
  // Its groups are empty: only pods in the set had endpoints there.
  port_sets_.erase(it);
  RegroupPortSets(old_count);
}

void ServiceEndpointsBuilder::RegroupPortSets(std::size_t old_count) {
  // Groups are ordered by address type, then port map key (the map's order), as
  // DesiredFromService orders them.
  std::vector<EndpointGroup> old = std::move(desired_.groups);
  desired_.groups.clear();
  desired_.groups.reserve(type_count_ * port_sets_.size());
  for (std::size_t t = 0; t < type_count_; ++t) {
    for (const auto& [key, set] : port_sets_) {
      if (set.rank != kNoRank) {
        desired_.groups.push_back(std::move(old[t * old_count + set.rank]));
      } else {
        EndpointGroup& group = desired_.groups.emplace_back();
        group.address_type = desired_.address_types[t];
        group.ports = set.ports;
        // Kept so by every change (LowerBound), and unique: an identity names its pod.
        group.sorted_unique = true;
        group.without_hints = true;
      }
    }
  }
  std::size_t rank = 0;
  for (auto& entry : port_sets_) {
    entry.second.rank = rank++;
  }
}

EndpointGroup& ServiceEndpointsBuilder::GroupFor(const std::string& key, std::size_t type) {
  auto it = port_sets_.find(key);
  SW_CHECK(it != port_sets_.end());
  return desired_.groups[type * port_sets_.size() + it->second.rank];
}

void ServiceEndpointsBuilder::RebuildDiagnostics() {
  desired_.diagnostics.clear();
  std::int64_t invalid_ips = 0;
  const model::RareString* first_invalid = nullptr;
  for (const auto& [name, state] : problem_pods_) {
    if (state->node_not_found) {
      desired_.diagnostics.push_back(*state->node_not_found);
    }
    if (state->invalid_ips > 0 && invalid_ips == 0) {
      first_invalid = &state->first_invalid;
    }
    invalid_ips += state->invalid_ips;
  }
  if (invalid_ips > 0) {
    desired_.diagnostics.push_back(
        internal::InvalidPodIpsDiagnostic(service_, invalid_ips, first_invalid->str()));
  }
}

void ServiceEndpointsBuilder::SetPods(std::span<const model::Pod* const> pods,
                                      const NodeLookup& nodes) {
  pods_.clear();
  problem_pods_.clear();
  port_sets_.clear();
  desired_.groups.clear();
  desired_.diagnostics.clear();

  // Derive every pod, then sort each group once (inserting one by one would be quadratic).
  std::vector<const model::Pod*> sorted(pods.begin(), pods.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const model::Pod* a, const model::Pod* b) {
    return a->metadata.name < b->metadata.name;
  });
  // Of two pods with one name, the later one counts (as SetPod would leave it).
  std::vector<const model::Pod*> unique;
  unique.reserve(sorted.size());
  for (const model::Pod* pod : sorted) {
    if (!unique.empty() && unique.back()->metadata.name == pod->metadata.name) {
      unique.back() = pod;
    } else {
      unique.push_back(pod);
    }
  }
  sorted = std::move(unique);
  std::vector<std::vector<model::Endpoint>> pending;  // per (port set, type), unsorted
  std::map<std::string, std::size_t, std::less<>> pending_index;
  for (const model::Pod* pod : sorted) {
    const model::Node* node = pod->spec.node_name.empty() ? nullptr : nodes(pod->spec.node_name);
    Derived derived = Derive(*pod, node);
    PodState& state = derived.state;
    if (state.port_key) {
      auto [set, inserted] = port_sets_.try_emplace(*state.port_key);
      if (inserted) {
        set->second.ports = std::move(derived.ports);
        pending_index.emplace(*state.port_key, pending.size());
        pending.resize(pending.size() + type_count_);
      }
      ++set->second.pods;
      const std::size_t base = pending_index.find(*state.port_key)->second;
      for (std::size_t t = 0; t < type_count_; ++t) {
        if (derived.endpoints[t]) {
          pending[base + t].push_back(std::move(*derived.endpoints[t]));
        }
      }
    }
    auto [it, inserted] = pods_.insert_or_assign(pod->metadata.name, std::move(state));
    if (it->second.node_not_found || it->second.invalid_ips > 0) {
      problem_pods_[it->first] = &it->second;
    }
  }
  RegroupPortSets(0);
  for (const auto& [key, base] : pending_index) {
    for (std::size_t t = 0; t < type_count_; ++t) {
      std::vector<model::Endpoint>& endpoints = pending[base + t];
      std::vector<std::uint32_t> order(endpoints.size());
      std::iota(order.begin(), order.end(), 0U);
      std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
        return CompareEndpointIdentity(endpoints[a], endpoints[b]) < 0;
      });
      EndpointGroup& group = GroupFor(key, t);
      group.endpoints.reserve(order.size());
      group.fingerprints.ends.reserve(order.size());
      group.fingerprints.ids.reserve(order.size());
      for (std::uint32_t index : order) {
        group.fingerprints.Append(endpoints[index]);
        group.endpoints.push_back(std::move(endpoints[index]));
      }
    }
  }
  RebuildDiagnostics();
}

}  // namespace slicewright::reconcile

#include "slicewright/reconcile/endpoints_source.h"

#include <algorithm>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "slicewright/model/endpoint_controller.h"
#include "slicewright/net/ip.h"
#include "slicewright/reconcile/endpoints_builder.h"

namespace slicewright::reconcile {
namespace {

using model::CoreEndpointPort;
using model::EndpointAddress;
using model::EndpointSubset;

model::EndpointPort ToSlicePort(const CoreEndpointPort& port) {
  return model::EndpointPort{port.name, port.protocol, port.port, port.app_protocol};
}

// Sorts by identity and keeps, of equal identities, the later endpoint (EndpointSet.Insert).
void SortUniqueByIdentity(std::vector<model::Endpoint>& endpoints) {
  std::stable_sort(endpoints.begin(), endpoints.end(),
                   [](const model::Endpoint& a, const model::Endpoint& b) {
                     return CompareEndpointIdentity(a, b) < 0;
                   });
  std::vector<model::Endpoint> unique;
  unique.reserve(endpoints.size());
  for (model::Endpoint& endpoint : endpoints) {
    if (!unique.empty() && CompareEndpointIdentity(unique.back(), endpoint) == 0) {
      unique.back() = std::move(endpoint);
    } else {
      unique.push_back(std::move(endpoint));
    }
  }
  endpoints = std::move(unique);
}

model::Endpoint AddressToEndpoint(const EndpointAddress& address, std::string canonical_ip,
                                  bool ready) {
  model::Endpoint endpoint;
  endpoint.addresses = {std::move(canonical_ip)};
  // Endpoints carry readiness only; serving and terminating stay unset (spec §12 step 3).
  endpoint.conditions.ready = ready;
  endpoint.target_ref = address.target_ref;
  endpoint.node_name = address.node_name;
  if (!address.hostname.empty()) {
    endpoint.hostname = address.hostname;
  }
  return endpoint;
}

}  // namespace

std::string_view MirrorDecisionName(MirrorDecision decision) {
  switch (decision) {
    case MirrorDecision::kMirror:
      return "mirror";
    case MirrorDecision::kEndpointsNotFound:
      return "Endpoints not found";
    case MirrorDecision::kSkipMirrorLabel:
      return "skip-mirror label";
    case MirrorDecision::kLeaderElection:
      return "leader-election annotation";
    case MirrorDecision::kServiceNotFound:
      return "Service not found";
    case MirrorDecision::kServiceHasSelector:
      return "Service has a selector";
    case MirrorDecision::kServiceDelegated:
      return "Service labelled endpoint-controller-name";
  }
  return "unknown";
}

bool ShouldMirrorEndpoints(const model::Endpoints& endpoints) {
  const auto skip = endpoints.metadata.labels.find(model::kLabelSkipMirror);
  if (skip != endpoints.metadata.labels.end() && skip->second == "true") {
    return false;
  }
  return !endpoints.metadata.annotations.contains(model::kAnnotationLeader);
}

MirrorDecision DecideMirroring(const model::Endpoints* endpoints, const model::Service* service,
                               const MirroringOptions& options) {
  if (endpoints == nullptr) {
    return MirrorDecision::kEndpointsNotFound;
  }
  const auto skip = endpoints->metadata.labels.find(model::kLabelSkipMirror);
  if (skip != endpoints->metadata.labels.end() && skip->second == "true") {
    return MirrorDecision::kSkipMirrorLabel;
  }
  if (endpoints->metadata.annotations.contains(model::kAnnotationLeader)) {
    return MirrorDecision::kLeaderElection;
  }
  if (service == nullptr) {
    return MirrorDecision::kServiceNotFound;
  }
  // A selector means the Service's endpoints come from its pods, not from this object.
  if (service->spec.selector.has_value()) {
    return MirrorDecision::kServiceHasSelector;
  }
  if (model::LeftToAnotherController(*service, options.external_endpoint_controller)) {
    return MirrorDecision::kServiceDelegated;
  }
  return MirrorDecision::kMirror;
}

model::StringMap MirroredSliceLabels(const model::Endpoints& endpoints,
                                     std::string_view managed_by) {
  model::StringMap labels = endpoints.metadata.labels;
  labels[std::string(model::kLabelServiceName)] = endpoints.metadata.name;
  labels[std::string(model::kLabelManagedBy)] = std::string(managed_by);
  return labels;
}

model::StringMap MirroredSliceAnnotations(const model::Endpoints& endpoints) {
  model::StringMap annotations = endpoints.metadata.annotations;
  // The trigger time describes the Endpoints write, and last-applied-configuration kubectl's view
  // of the Endpoints: neither is true of the slice.
  annotations.erase(std::string(model::kAnnotationLastChangeTriggerTime));
  annotations.erase(std::string(model::kAnnotationLastAppliedConfig));
  annotations.erase(std::string(kAnnotationWrittenSubsets));
  return annotations;
}

DesiredEndpoints DesiredFromEndpoints(const model::Endpoints& endpoints,
                                      const model::Service& service,
                                      const MirroringOptions& options, MirroringStats* stats) {
  DesiredEndpoints desired;
  desired.owner.api_version = "v1";
  desired.owner.kind = "Endpoints";
  desired.owner.namespace_ = endpoints.metadata.namespace_;
  desired.owner.name = endpoints.metadata.name;
  desired.owner.uid = endpoints.metadata.uid;
  desired.owner.being_deleted = endpoints.metadata.deletion_timestamp.has_value();
  desired.address_types = {std::string(model::kAddressTypeIPv4),
                           std::string(model::kAddressTypeIPv6)};
  desired.labels = MirroredSliceLabels(endpoints, options.managed_by);
  desired.annotations = MirroredSliceAnnotations(endpoints);

  MirroringStats counts;
  if (DecideMirroring(&endpoints, &service, options) != MirrorDecision::kMirror) {
    if (stats != nullptr) {
      *stats = counts;
    }
    return desired;  // no groups: every mirrored slice is deleted
  }

  const auto max_per_subset =
      static_cast<std::size_t>(std::max(1, options.max_endpoints_per_subset));
  for (const EndpointSubset& subset : RepackSubsets(endpoints.subsets)) {
    std::vector<model::EndpointPort> ports;
    ports.reserve(subset.ports.size());
    for (const CoreEndpointPort& port : subset.ports) {
      ports.push_back(ToSlicePort(port));
    }
    EndpointGroup ipv4{std::string(model::kAddressTypeIPv4), ports, {}};
    EndpointGroup ipv6{std::string(model::kAddressTypeIPv6), std::move(ports), {}};

    counts.addresses +=
        static_cast<std::int64_t>(subset.addresses.size() + subset.not_ready_addresses.size());
    // The budget is per subset over both families, so one subset maps onto one slice per family.
    std::size_t added = 0;
    const auto add = [&](const EndpointAddress& address, bool ready) {
      if (added >= max_per_subset) {
        return false;
      }
      const std::optional<net::IpAddress> ip = net::ParseIpSloppy(address.ip);
      if (!ip) {
        ++counts.invalid;  // decision §15.4: never written, counted, reported once
        return true;
      }
      EndpointGroup& group = ip->family == net::IpFamily::kIPv4 ? ipv4 : ipv6;
      group.endpoints.push_back(AddressToEndpoint(address, net::FormatIp(*ip), ready));
      ++added;
      return true;
    };
    for (const EndpointAddress& address : subset.addresses) {
      if (!add(address, true)) {
        break;
      }
    }
    for (const EndpointAddress& address : subset.not_ready_addresses) {
      if (!add(address, false)) {
        break;
      }
    }
    counts.mirrored += static_cast<std::int64_t>(added);

    SortUniqueByIdentity(ipv4.endpoints);
    SortUniqueByIdentity(ipv6.endpoints);
    desired.groups.push_back(std::move(ipv4));
    desired.groups.push_back(std::move(ipv6));
  }
  // Ordered by address type, then port set, as the pod source orders its groups.
  std::vector<std::pair<std::string, std::size_t>> order;
  order.reserve(desired.groups.size());
  for (std::size_t i = 0; i < desired.groups.size(); ++i) {
    order.emplace_back(desired.groups[i].address_type + "\n" + PortMapKey(desired.groups[i].ports),
                       i);
  }
  std::sort(order.begin(), order.end());
  std::vector<EndpointGroup> sorted;
  sorted.reserve(order.size());
  for (const auto& entry : order) {
    sorted.push_back(std::move(desired.groups[entry.second]));
  }
  desired.groups = std::move(sorted);

  if (counts.invalid > 0) {
    desired.diagnostics.push_back(
        Diagnostic{Diagnostic::Severity::kWarning, std::string(kReasonInvalidIPAddress),
                   "Skipped " + std::to_string(counts.invalid) +
                       " invalid IP addresses when mirroring to EndpointSlices",
                   /*retry=*/false});
  }
  if (counts.skipped() > counts.invalid) {
    desired.diagnostics.push_back(
        Diagnostic{Diagnostic::Severity::kWarning, std::string(kReasonTooManyAddressesToMirror),
                   "A max of " + std::to_string(max_per_subset) +
                       " addresses can be mirrored to EndpointSlices per Endpoints subset. " +
                       std::to_string(counts.skipped()) + " addresses were skipped",
                   /*retry=*/false});
  }
  if (stats != nullptr) {
    *stats = counts;
  }
  return desired;
}

PlanOptions MirroringPlanOptions(const MirroringOptions& options) {
  PlanOptions plan;
  // A subset never holds more than this many endpoints, so each (address type, port set) group
  // fits one slice, as upstream's one-slice-per-group mirroring has it.
  plan.max_endpoints_per_slice = std::clamp(options.max_endpoints_per_subset, 1, 1000);
  plan.managed_by = options.managed_by;
  plan.placeholder_enabled = false;
  plan.ownership_enforced = false;
  plan.labels_ignored_for_change = {std::string(model::kLabelServiceName),
                                    std::string(model::kLabelManagedBy)};
  plan.compare_annotations = true;
  return plan;
}

std::int64_t CountUpdatedEndpoints(const Plan& plan,
                                   std::span<const model::EndpointSlice> existing) {
  std::int64_t updated = 0;
  std::vector<const model::Endpoint*> stored;
  const auto less = [](const model::Endpoint* a, const model::Endpoint* b) {
    return CompareEndpointIdentity(*a, *b) < 0;
  };
  for (const SliceAction& action : plan.actions) {
    if (action.operation != Operation::kUpdate) {
      continue;
    }
    const auto slice = std::find_if(existing.begin(), existing.end(), [&](const auto& s) {
      return s.metadata.name == action.slice.metadata.name;
    });
    if (slice == existing.end()) {
      continue;
    }
    stored.clear();
    for (const model::Endpoint& endpoint : slice->endpoints) {
      stored.push_back(&endpoint);
    }
    std::sort(stored.begin(), stored.end(), less);
    for (const model::Endpoint& endpoint : action.slice.endpoints) {
      const auto it = std::lower_bound(stored.begin(), stored.end(), &endpoint, less);
      if (it != stored.end() && CompareEndpointIdentity(**it, endpoint) == 0 &&
          !EndpointEqualBeyondIdentity(endpoint, **it)) {
        ++updated;
      }
    }
  }
  return updated;
}

Plan PlanDeleteMirrored(std::span<const model::EndpointSlice> mirrored) {
  Plan plan;
  plan.actions.reserve(mirrored.size());
  for (const model::EndpointSlice& slice : mirrored) {
    plan.actions.push_back(SliceAction{Operation::kDelete, slice});
  }
  return plan;
}

}  // namespace slicewright::reconcile

#include "slicewright/reconcile/endpoints_builder.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "slicewright/model/core.h"
#include "slicewright/model/meta.h"
#include "slicewright/model/time.h"
#include "slicewright/model/well_known.h"
#include "slicewright/net/ip.h"
#include "slicewright/reconcile/pod_source.h"

#include "reconcile/md5.h"
#include "reconcile/pod_source_internal.h"

namespace slicewright::reconcile {

using internal::Md5;
using internal::Md5Digest;

namespace {

std::string_view UidOf(const model::EndpointAddress& address) {
  return address.target_ref.has_value() ? address.target_ref->uid.view() : std::string_view();
}

// Upstream LessEndpointAddress: IP text byte-wise, then targetRef UID with no targetRef first.
bool LessAddress(const model::EndpointAddress& a, const model::EndpointAddress& b) {
  if (const int c = a.ip.compare(b.ip); c != 0) {
    return c < 0;
  }
  if (!b.target_ref.has_value()) {
    return false;
  }
  if (!a.target_ref.has_value()) {
    return true;
  }
  return a.target_ref->uid < b.target_ref->uid;
}

int ComparePorts(const model::CoreEndpointPort& a, const model::CoreEndpointPort& b) {
  if (const int c = a.name.compare(b.name); c != 0) {
    return c;
  }
  if (a.port != b.port) {
    return a.port < b.port ? -1 : 1;
  }
  if (const int c = a.protocol.compare(b.protocol); c != 0) {
    return c;
  }
  if (a.app_protocol.has_value() != b.app_protocol.has_value()) {
    return a.app_protocol.has_value() ? 1 : -1;
  }
  return a.app_protocol.has_value() ? a.app_protocol->compare(*b.app_protocol) : 0;
}

struct PortLess {
  bool operator()(const model::CoreEndpointPort& a, const model::CoreEndpointPort& b) const {
    return ComparePorts(a, b) < 0;
  }
};

// Subsets by their ports (port-less first); ties cannot occur between repacked subsets, but the
// addresses break them so the order is total for any input.
bool LessSubset(const model::EndpointSubset& a, const model::EndpointSubset& b) {
  const PortLess port_less;
  if (std::lexicographical_compare(a.ports.begin(), a.ports.end(), b.ports.begin(), b.ports.end(),
                                   port_less)) {
    return true;
  }
  if (std::lexicographical_compare(b.ports.begin(), b.ports.end(), a.ports.begin(), a.ports.end(),
                                   port_less)) {
    return false;
  }
  if (std::lexicographical_compare(a.addresses.begin(), a.addresses.end(), b.addresses.begin(),
                                   b.addresses.end(), LessAddress)) {
    return true;
  }
  if (std::lexicographical_compare(b.addresses.begin(), b.addresses.end(), a.addresses.begin(),
                                   a.addresses.end(), LessAddress)) {
    return false;
  }
  return std::lexicographical_compare(a.not_ready_addresses.begin(), a.not_ready_addresses.end(),
                                      b.not_ready_addresses.begin(), b.not_ready_addresses.end(),
                                      LessAddress);
}

// ---- upstream's order: the MD5 of Go's printout ----
//
// Upstream's SortSubsets orders the ports of a subset, then the subsets, by the MD5 of
// DeepHashObject's printout: go-spew's "%#v" (types in parentheses before each field's value,
// none for slice elements or a pointer's target, strings unquoted, nil slices and pointers as
// "<nil>"). The objects printed are RepackSubsets' output, where an empty address or port list is
// nil. Writing the same order lets kube-controller-manager, which compares subsets in order, take
// over our Endpoints without rewriting them.

void AppendOptional(std::string& out, const std::optional<std::string>& value) {
  out += value.has_value() ? *value : std::string("<nil>");
}

void AppendPort(std::string& out, const model::CoreEndpointPort& port) {
  out += "{Name:(string)";
  out += port.name;
  out += " Port:(int32)";
  out += std::to_string(port.port);
  out += " Protocol:(v1.Protocol)";
  out += port.protocol;
  out += " AppProtocol:(*string)";
  AppendOptional(out, port.app_protocol);
  out += '}';
}

void AppendAddress(std::string& out, const model::EndpointAddress& address) {
  out += "{IP:(string)";
  out += address.ip;
  out += " Hostname:(string)";
  out += address.hostname;
  out += " NodeName:(*string)";
  AppendOptional(out, address.node_name);
  out += " TargetRef:(*v1.ObjectReference)";
  if (!address.target_ref.has_value()) {
    out += "<nil>";
  } else {
    const model::ObjectReference& ref = *address.target_ref;
    out += "{Kind:(string)";
    out += ref.kind;
    out += " Namespace:(string)";
    out += ref.namespace_;
    out += " Name:(string)";
    out += ref.name.view();
    out += " UID:(types.UID)";
    out += ref.uid.view();
    out += " APIVersion:(string)";
    out += ref.api_version.view();
    out += " ResourceVersion:(string)";
    out += ref.resource_version.view();
    out += " FieldPath:(string)";
    out += ref.field_path.view();
    out += '}';
  }
  out += '}';
}

template <typename T, typename Append>
void AppendList(std::string& out, std::string_view field, std::string_view type,
                const std::vector<T>& items, Append append) {
  out += field;
  out += ":([]";
  out += type;
  out += ')';
  if (items.empty()) {
    out += "<nil>";
    return;
  }
  out += '[';
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ' ';
    append(out, items[i]);
  }
  out += ']';
}

Md5Digest PortDigest(const model::CoreEndpointPort& port) {
  std::string text = "(v1.EndpointPort)";
  AppendPort(text, port);
  return Md5(text);
}

Md5Digest SubsetDigest(const model::EndpointSubset& subset) {
  std::string text = "(v1.EndpointSubset){";
  AppendList(text, "Addresses", "v1.EndpointAddress", subset.addresses, AppendAddress);
  text += ' ';
  AppendList(text, "NotReadyAddresses", "v1.EndpointAddress", subset.not_ready_addresses,
             AppendAddress);
  text += ' ';
  AppendList(text, "Ports", "v1.EndpointPort", subset.ports, AppendPort);
  text += '}';
  return Md5(text);
}

// Sorts `items` by `digest` of each (computed once), as sort.Sort by the hash would; equal
// digests (equal items) keep no particular order, as upstream's.
template <typename T, typename Digest>
void SortByDigest(std::vector<T>& items, Digest digest) {
  std::vector<std::pair<Md5Digest, T>> keyed;
  keyed.reserve(items.size());
  for (T& item : items) keyed.emplace_back(digest(item), std::move(item));
  std::sort(keyed.begin(), keyed.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  items.clear();
  for (auto& [key, item] : keyed) items.push_back(std::move(item));
}

// RepackSubsets' state: every (address, port) pair seen, with its readiness.
class Repacker final {
 public:
  // `address` serves `port` (nullptr: the address has no port) and is (not) ready there. Not ready
  // wins over ready for one address and port, as upstream's.
  void Add(const model::EndpointAddress& address, const model::CoreEndpointPort* port, bool ready) {
    auto [address_it, new_address] = address_index_.try_emplace(
        std::make_pair(address.ip, std::string(UidOf(address))), addresses_.size());
    if (new_address) {
      addresses_.push_back(address);  // the first copy is the one kept
    }
    std::map<std::size_t, bool>* served = nullptr;
    if (port == nullptr) {
      served = &no_port_;
    } else {
      auto [port_it, new_port] = port_index_.try_emplace(*port, by_port_.size());
      if (new_port) {
        by_port_.emplace_back(*port, std::map<std::size_t, bool>{});
      }
      served = &by_port_[port_it->second].second;
    }
    auto [entry, inserted] = served->try_emplace(address_it->second, ready);
    if (!inserted && entry->second) {
      entry->second = ready;
    }
  }

  std::vector<model::EndpointSubset> Finish() const {
    // Ports served by the same addresses with the same readiness share a subset. The address sets
    // are keyed by address index, in index order, so equal sets have equal keys.
    using AddressSet = std::vector<std::pair<std::size_t, bool>>;
    std::map<AddressSet, std::vector<model::CoreEndpointPort>> groups;
    for (const auto& [port, served] : by_port_) {
      groups[AddressSet(served.begin(), served.end())].push_back(port);
    }
    if (!no_port_.empty()) {
      groups.try_emplace(AddressSet(no_port_.begin(), no_port_.end()));
    }
    std::vector<model::EndpointSubset> out;
    out.reserve(groups.size());
    for (auto& [set, ports] : groups) {
      model::EndpointSubset& subset = out.emplace_back();
      for (const auto& [index, ready] : set) {
        (ready ? subset.addresses : subset.not_ready_addresses).push_back(addresses_[index]);
      }
      subset.ports = std::move(ports);
      std::sort(subset.addresses.begin(), subset.addresses.end(), LessAddress);
      std::sort(subset.not_ready_addresses.begin(), subset.not_ready_addresses.end(), LessAddress);
      SortByDigest(subset.ports, PortDigest);
    }
    SortByDigest(out, SubsetDigest);
    return out;
  }

 private:
  std::vector<model::EndpointAddress> addresses_;
  std::map<std::pair<std::string, std::string>, std::size_t> address_index_;  // (IP, UID)
  std::vector<std::pair<model::CoreEndpointPort, std::map<std::size_t, bool>>> by_port_;
  std::map<model::CoreEndpointPort, std::size_t, PortLess> port_index_;
  std::map<std::size_t, bool> no_port_;  // address index -> ready
};

bool ReferencesEqualIgnoringVersion(const model::ObjectReference& a,
                                    const model::ObjectReference& b) {
  return a.kind == b.kind && a.namespace_ == b.namespace_ && a.name == b.name && a.uid == b.uid &&
         a.api_version == b.api_version && a.field_path == b.field_path;
}

bool AddressesEqual(const std::vector<model::EndpointAddress>& a,
                    const std::vector<model::EndpointAddress>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const model::EndpointAddress& x, const model::EndpointAddress& y) {
                      if (x.ip != y.ip || x.hostname != y.hostname || x.node_name != y.node_name ||
                          x.target_ref.has_value() != y.target_ref.has_value()) {
                        return false;
                      }
                      return !x.target_ref.has_value() ||
                             ReferencesEqualIgnoringVersion(*x.target_ref, *y.target_ref);
                    });
}

// RepackSubsets' output with ports and subsets in value order (PortLess, LessSubset): a layout
// that depends on the content alone.
std::vector<model::EndpointSubset> ValueOrdered(std::span<const model::EndpointSubset> subsets) {
  std::vector<model::EndpointSubset> out = RepackSubsets(subsets);
  for (model::EndpointSubset& subset : out) {
    std::sort(subset.ports.begin(), subset.ports.end(), PortLess());
  }
  std::sort(out.begin(), out.end(), LessSubset);
  return out;
}

bool SubsetsEqualAsGiven(std::span<const model::EndpointSubset> a,
                         std::span<const model::EndpointSubset> b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const model::EndpointSubset& x, const model::EndpointSubset& y) {
                      return x.ports == y.ports && AddressesEqual(x.addresses, y.addresses) &&
                             AddressesEqual(x.not_ready_addresses, y.not_ready_addresses);
                    });
}

// FNV-1a 64 over length-prefixed fields, so no two different inputs share an encoding.
class Fnv64 final {
 public:
  void Bytes(std::string_view bytes) {
    Number(bytes.size());
    for (const char c : bytes) {
      Byte(static_cast<std::uint8_t>(c));
    }
  }
  void Number(std::uint64_t value) {
    for (int i = 0; i < 8; ++i) {
      Byte(static_cast<std::uint8_t>(value >> (8 * i)));
    }
  }
  void Optional(const std::optional<std::string>& value) {
    Number(value.has_value() ? 1 : 0);
    if (value.has_value()) {
      Bytes(*value);
    }
  }
  std::string Hex() const {
    constexpr std::string_view kDigits = "0123456789abcdef";
    std::string out(16, '0');
    for (int i = 0; i < 16; ++i) {
      out[static_cast<std::size_t>(i)] = kDigits[(hash_ >> (60 - 4 * i)) & 0xF];
    }
    return out;
  }

 private:
  void Byte(std::uint8_t byte) {
    hash_ ^= byte;
    hash_ *= 0x100000001b3ULL;
  }
  std::uint64_t hash_ = 0xcbf29ce484222325ULL;
};

void HashAddresses(Fnv64& hash, const std::vector<model::EndpointAddress>& addresses) {
  hash.Number(addresses.size());
  for (const model::EndpointAddress& address : addresses) {
    hash.Bytes(address.ip);
    hash.Bytes(address.hostname);
    hash.Optional(address.node_name);
    hash.Number(address.target_ref.has_value() ? 1 : 0);
    if (address.target_ref.has_value()) {
      const model::ObjectReference& ref = *address.target_ref;
      for (const std::string_view field :
           {std::string_view(ref.kind), std::string_view(ref.namespace_),
            std::string_view(ref.name), ref.uid.view(), std::string_view(ref.api_version),
            std::string_view(ref.field_path)}) {
        hash.Bytes(field);
      }
    }
  }
}

bool IsIpv6Text(std::string_view text) {
  const std::optional<net::IpAddress> parsed = net::ParseIpSloppy(text);
  return parsed.has_value() && parsed->family == net::IpFamily::kIPv6;
}

bool ShouldSetHostname(const model::Pod& pod, const model::Service& service) {
  return !pod.spec.hostname.empty() && pod.spec.subdomain == service.metadata.name &&
         pod.metadata.namespace_ == service.metadata.namespace_;
}

// The labels compared: those the controller sets itself (headless, managed-by) left out.
model::StringMap ComparedLabels(model::StringMap labels) {
  labels.erase(std::string(model::kLabelHeadless));
  labels.erase(std::string(model::kLabelEndpointsManagedBy));
  return labels;
}

bool LabelsRight(const model::StringMap& stored, const model::Service& service,
                 bool managed_by_label) {
  if (managed_by_label) {
    const auto managed_by = stored.find(model::kLabelEndpointsManagedBy);
    if (managed_by == stored.end() || managed_by->second != model::kManagedByEndpointsController) {
      return false;
    }
  }
  return ComparedLabels(stored) == ComparedLabels(service.metadata.labels);
}

}  // namespace

std::vector<model::EndpointSubset> RepackSubsets(std::span<const model::EndpointSubset> subsets) {
  Repacker repacker;
  for (const model::EndpointSubset& subset : subsets) {
    for (const auto* list : {&subset.addresses, &subset.not_ready_addresses}) {
      const bool ready = list == &subset.addresses;
      for (const model::EndpointAddress& address : *list) {
        if (subset.ports.empty()) {
          repacker.Add(address, nullptr, ready);
        }
        for (const model::CoreEndpointPort& port : subset.ports) {
          repacker.Add(address, &port, ready);
        }
      }
    }
  }
  return repacker.Finish();
}

bool TruncateSubsets(std::vector<model::EndpointSubset>& subsets, std::size_t max_capacity) {
  std::size_t total_ready = 0;
  std::size_t total_not_ready = 0;
  for (const model::EndpointSubset& subset : subsets) {
    total_ready += subset.addresses.size();
    total_not_ready += subset.not_ready_addresses.size();
  }
  if (total_ready + total_not_ready <= max_capacity) {
    return false;
  }
  const bool truncate_ready = total_ready > max_capacity;
  const std::size_t budget = truncate_ready ? max_capacity : max_capacity - total_ready;
  const std::size_t total = truncate_ready ? total_ready : total_not_ready;
  std::size_t left = budget;
  for (model::EndpointSubset& subset : subsets) {
    std::vector<model::EndpointAddress>& kind =
        truncate_ready ? subset.addresses : subset.not_ready_addresses;
    // Upstream's float arithmetic, so the shares are the same to the address.
    const auto share = static_cast<std::size_t>(
        std::ceil(static_cast<double>(kind.size()) / static_cast<double>(total) *
                  static_cast<double>(budget)));
    if (kind.size() > std::min(share, left)) {
      kind.resize(std::min(share, left));
    }
    left -= kind.size();
    if (truncate_ready) {
      subset.not_ready_addresses.clear();
    }
  }
  std::erase_if(subsets, [](const model::EndpointSubset& subset) {
    return subset.addresses.empty() && subset.not_ready_addresses.empty();
  });
  return true;
}

bool EndpointSubsetsEqual(std::span<const model::EndpointSubset> a,
                          std::span<const model::EndpointSubset> b) {
  if (SubsetsEqualAsGiven(a, b)) {
    return true;
  }
  // In value order: the written (hash) order depends on fields equality ignores (a targetRef's
  // resourceVersion).
  return SubsetsEqualAsGiven(ValueOrdered(a), ValueOrdered(b));
}

std::string SubsetsFingerprint(std::span<const model::EndpointSubset> subsets) {
  Fnv64 hash;
  // By value, not in the written (hash) order: the mark then depends on the content alone.
  const std::vector<model::EndpointSubset> canonical = ValueOrdered(subsets);
  hash.Number(canonical.size());
  for (const model::EndpointSubset& subset : canonical) {
    HashAddresses(hash, subset.addresses);
    HashAddresses(hash, subset.not_ready_addresses);
    hash.Number(subset.ports.size());
    for (const model::CoreEndpointPort& port : subset.ports) {
      hash.Bytes(port.name);
      hash.Number(static_cast<std::uint32_t>(port.port));
      hash.Bytes(port.protocol);
      hash.Optional(port.app_protocol);
    }
  }
  return hash.Hex();
}

EndpointsSubsets EndpointsSubsetsForService(const model::Service& service,
                                            std::span<const model::Pod* const> pods) {
  EndpointsSubsets out;
  const bool publish_not_ready = service.spec.publish_not_ready_addresses;
  // One family for the whole Service, except a headless one on an old API server (no
  // ipFamilies), which goes by each pod's primary IP (spec §13).
  std::optional<bool> service_wants_ipv6;
  if (!service.spec.ip_families.empty()) {
    service_wants_ipv6 = service.spec.ip_families.front() == model::kAddressTypeIPv6;
  } else if (!service.spec.cluster_ip.empty() && service.spec.cluster_ip != "None") {
    service_wants_ipv6 = IsIpv6Text(service.spec.cluster_ip);
  }
  const bool headless_without_ports =
      service.spec.ports.empty() && service.spec.cluster_ip == "None";

  Repacker repacker;
  std::int64_t invalid_ips = 0;
  std::string first_invalid;
  for (const model::Pod* pod : pods) {
    if (!ShouldPodBeInEndpoints(*pod, /*include_terminating=*/publish_not_ready)) {
      continue;
    }
    const bool wants_ipv6 = service_wants_ipv6.value_or(IsIpv6Text(pod->status.pod_ip));
    std::optional<std::string> ip;
    for (std::size_t i = 0; i < pod->status.pod_ips.size() && !ip.has_value(); ++i) {
      const std::string& text = pod->status.pod_ips[i];
      const std::optional<net::IpAddress> parsed = net::ParseIpSloppy(text);
      if (!parsed.has_value()) {
        // Upstream would publish it as an IPv4 address; decision §15.4 skips it and says so.
        if (invalid_ips++ == 0) {
          first_invalid = internal::InvalidPodIpDetail(*pod, i, text);
        }
        continue;
      }
      if ((parsed->family == net::IpFamily::kIPv6) == wants_ipv6) {
        ip = net::FormatIp(*parsed);
      }
    }
    if (!ip.has_value()) {
      continue;  // no IP of the Service's family (a dual-stack cluster mid-upgrade)
    }
    model::EndpointAddress address;
    address.ip = std::move(*ip);
    address.node_name = pod->spec.node_name;  // upstream always sets it, even when empty
    address.target_ref = model::ObjectReference{
        "Pod", pod->metadata.namespace_, pod->metadata.name, pod->metadata.uid, {}, {}, {}};
    if (ShouldSetHostname(*pod, service)) {
      address.hostname = pod->spec.hostname;
    }
    const bool ready = publish_not_ready || model::IsPodReady(*pod);
    if (service.spec.ports.empty()) {
      if (headless_without_ports) {
        repacker.Add(address, nullptr, ready);
      }
      continue;
    }
    for (const model::ServicePort& service_port : service.spec.ports) {
      const std::optional<std::int32_t> number = FindPort(*pod, service_port);
      if (!number.has_value()) {
        continue;  // this pod does not serve that port
      }
      const model::CoreEndpointPort port{service_port.name, *number, service_port.protocol,
                                         service_port.app_protocol};
      repacker.Add(address, &port, ready);
    }
  }
  out.subsets = repacker.Finish();
  for (const model::EndpointSubset& subset : out.subsets) {
    out.ready += subset.addresses.size();
    out.not_ready += subset.not_ready_addresses.size();
  }
  if (invalid_ips > 0) {
    out.diagnostics.push_back(
        internal::InvalidPodIpsDiagnostic(service, invalid_ips, first_invalid));
  }
  return out;
}

EndpointsPlan PlanEndpoints(const model::Service& service, std::span<const model::Pod* const> pods,
                            const model::Endpoints* current, const EndpointsBuildOptions& options) {
  EndpointsPlan plan;
  EndpointsSubsets desired = EndpointsSubsetsForService(service, pods);
  plan.ready = desired.ready;
  plan.not_ready = desired.not_ready;
  plan.diagnostics = std::move(desired.diagnostics);
  plan.truncated = TruncateSubsets(desired.subsets, options.max_capacity);

  model::Endpoints& out = plan.endpoints;
  if (current != nullptr) {
    out = *current;
  } else {
    out.metadata.name = service.metadata.name;
    out.metadata.namespace_ = service.metadata.namespace_;
  }
  out.subsets = std::move(desired.subsets);
  out.metadata.labels = service.metadata.labels;
  if (IsHeadless(service)) {
    out.metadata.labels[std::string(model::kLabelHeadless)] = "";
  } else {
    out.metadata.labels.erase(std::string(model::kLabelHeadless));
  }
  if (options.managed_by_label) {
    out.metadata.labels[std::string(model::kLabelEndpointsManagedBy)] =
        model::kManagedByEndpointsController;
  } else {
    out.metadata.labels.erase(std::string(model::kLabelEndpointsManagedBy));
  }
  model::StringMap& annotations = out.metadata.annotations;
  if (!options.trigger_time.IsZero()) {
    annotations[std::string(model::kAnnotationLastChangeTriggerTime)] =
        model::FormatRfc3339Nano(options.trigger_time);
  } else {
    annotations.erase(std::string(model::kAnnotationLastChangeTriggerTime));
  }
  if (plan.truncated) {
    annotations[std::string(model::kAnnotationEndpointsOverCapacity)] = kOverCapacityTruncated;
  } else {
    annotations.erase(std::string(model::kAnnotationEndpointsOverCapacity));
  }
  annotations[std::string(kAnnotationWrittenSubsets)] = SubsetsFingerprint(out.subsets);

  if (current == nullptr || current->metadata.resource_version.empty()) {
    plan.action = EndpointsPlan::Action::kCreate;
    return plan;
  }
  const auto over_capacity =
      current->metadata.annotations.find(model::kAnnotationEndpointsOverCapacity);
  const bool capacity_annotation_right =
      plan.truncated ? over_capacity != current->metadata.annotations.end() &&
                           over_capacity->second == kOverCapacityTruncated
                     : over_capacity == current->metadata.annotations.end();
  // The headless and managed-by labels are ours to set, so they are left out on both sides
  // (upstream leaves them out of the stored labels only, and rewrites forever a Service that
  // carries either key itself). Before 1.33 a managed-by label is tolerated: removing it would
  // rewrite, for nothing, every Endpoints a newer controller wrote.
  const bool unchanged = capacity_annotation_right &&
                         LabelsRight(current->metadata.labels, service, options.managed_by_label) &&
                         EndpointSubsetsEqual(current->subsets, out.subsets);
  plan.action = unchanged ? EndpointsPlan::Action::kNone : EndpointsPlan::Action::kUpdate;
  return plan;
}

bool CarriesWrittenSubsetsMark(const model::Endpoints& stored) {
  const auto mark = stored.metadata.annotations.find(kAnnotationWrittenSubsets);
  return mark != stored.metadata.annotations.end() &&
         mark->second == SubsetsFingerprint(stored.subsets);
}

bool WrittenByEndpointsController(const model::Endpoints& stored, const EndpointsPlan& plan) {
  return CarriesWrittenSubsetsMark(stored) ||
         EndpointSubsetsEqual(stored.subsets, plan.endpoints.subsets);
}

}  // namespace slicewright::reconcile

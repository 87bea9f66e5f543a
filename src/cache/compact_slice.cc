#include "slicewright/cache/compact_slice.h"

#include <functional>
#include <optional>
#include <utility>

#include "slicewright/net/ip.h"

#include "model/compact_text.h"

namespace slicewright::cache {
namespace {

using model::internal::HashCombine;

constexpr std::string_view kPodKind = "Pod";

std::uint16_t ConditionBits(const std::optional<bool>& condition) {
  if (!condition.has_value()) return 0;
  return *condition ? 2 : 1;
}

std::optional<bool> ConditionOf(std::uint16_t bits) {
  switch (bits & 3U) {
    case 1:
      return false;
    case 2:
      return true;
    default:
      return std::nullopt;
  }
}

// The address in binary when printing it back gives the same text; a sloppy or non-canonical
// form ("010.0.0.1", "::FFFF") must reach the planner as written, or it would not rewrite it.
std::optional<net::IpAddress> CanonicalIp(const std::string& text) {
  std::optional<net::IpAddress> address = net::ParseIpSloppy(text);
  if (!address.has_value() || net::FormatIp(*address) != text) return std::nullopt;
  return address;
}

}  // namespace

std::size_t EndpointPortsHash::operator()(const std::vector<model::EndpointPort>& ports) const {
  std::size_t seed = ports.size();
  for (const model::EndpointPort& port : ports) {
    HashCombine(seed, std::hash<std::string>{}(port.name.value_or("")));
    HashCombine(seed, std::hash<std::string>{}(port.protocol.value_or("")));
    HashCombine(seed, static_cast<std::size_t>(port.port.value_or(-1)));
    HashCombine(seed, std::hash<std::string>{}(port.app_protocol.value_or("")));
  }
  return seed;
}

std::size_t EndpointHintsHash::operator()(const model::EndpointHints& hints) const {
  std::size_t seed = hints.for_zones.size() * 31 + hints.for_nodes.size();
  for (const std::string& zone : hints.for_zones) HashCombine(seed, std::hash<std::string>{}(zone));
  for (const std::string& node : hints.for_nodes) HashCombine(seed, std::hash<std::string>{}(node));
  return seed;
}

void CompactEndpointSlice::AddEndpoint(const model::Endpoint& endpoint, SliceInterners& interners) {
  CompactEndpoint& out = endpoints_.emplace_back();
  const auto add_extras = [&]() -> EndpointExtras& {
    out.extras = static_cast<std::uint32_t>(extras_.size());
    return extras_.emplace_back();
  };
  std::optional<net::IpAddress> address;
  if (endpoint.addresses.size() == 1) address = CanonicalIp(endpoint.addresses[0]);
  const std::optional<model::ObjectReference>& ref = endpoint.target_ref;
  std::array<std::uint8_t, 16> target_uid{};
  const bool ref_fits =
      !ref.has_value() ||
      (ref->kind == kPodKind && ref->namespace_ == metadata.namespace_ &&
       ref->api_version.empty() && ref->resource_version.empty() && ref->field_path.empty() &&
       model::internal::ParseUuid(ref->uid, target_uid));
  if (!address.has_value() || !ref_fits || endpoint.hostname.has_value()) {
    add_extras().whole = std::make_shared<const model::Endpoint>(endpoint);
    return;
  }
  out.address = address->bytes;
  if (address->family == net::IpFamily::kIPv6) out.bits |= kIPv6;
  if (endpoint.zone.has_value()) {
    out.bits |= kHasZone;
    out.zone = interners.zones.Intern(*endpoint.zone);
  }
  out.bits |= ConditionBits(endpoint.conditions.ready) << kReadyShift;
  out.bits |= ConditionBits(endpoint.conditions.serving) << kServingShift;
  out.bits |= ConditionBits(endpoint.conditions.terminating) << kTerminatingShift;
  if (!ref.has_value() && !endpoint.node_name.has_value() && !endpoint.hints.has_value()) return;
  EndpointExtras& extras = add_extras();
  if (ref.has_value()) {
    out.bits |= kHasTargetRef;
    extras.target_name = ref->name;
    extras.target_uid = target_uid;
  }
  if (endpoint.node_name.has_value()) {
    out.bits |= kHasNodeName;
    extras.node_name = interners.node_names.Intern(endpoint.node_name->str());
  }
  if (endpoint.hints.has_value()) {
    out.bits |= kHasHints;
    extras.hints = interners.hints.Intern(*endpoint.hints);
  }
}

CompactEndpointSlice CompactEndpointSlice::FromSlice(const model::EndpointSlice& slice,
                                                     SliceInterners& interners) {
  CompactEndpointSlice out;
  out.metadata = slice.metadata;
  out.address_type_ = slice.address_type;
  out.ports_ = interners.ports.Intern(slice.ports);
  out.endpoints_.reserve(slice.endpoints.size());
  for (const model::Endpoint& endpoint : slice.endpoints) out.AddEndpoint(endpoint, interners);
  out.extras_.shrink_to_fit();
  return out;
}

model::Endpoint CompactEndpointSlice::Expand(const CompactEndpoint& compact) const {
  const EndpointExtras* extras = compact.extras == kNoExtras ? nullptr : &extras_[compact.extras];
  if (extras != nullptr && extras->whole != nullptr) return *extras->whole;
  model::Endpoint endpoint;
  net::IpAddress address;
  address.family = (compact.bits & kIPv6) != 0 ? net::IpFamily::kIPv6 : net::IpFamily::kIPv4;
  address.bytes = compact.address;
  endpoint.addresses.push_back(net::FormatIp(address));
  endpoint.conditions.ready = ConditionOf(compact.bits >> kReadyShift);
  endpoint.conditions.serving = ConditionOf(compact.bits >> kServingShift);
  endpoint.conditions.terminating = ConditionOf(compact.bits >> kTerminatingShift);
  if ((compact.bits & kHasZone) != 0) endpoint.zone = compact.zone.get();
  if (extras == nullptr) return endpoint;
  if ((compact.bits & kHasTargetRef) != 0) {
    model::ObjectReference& ref = endpoint.target_ref.emplace();
    ref.kind = std::string(kPodKind);
    ref.namespace_ = metadata.namespace_;
    ref.name = extras->target_name;
    ref.uid = model::internal::FormatUuid(extras->target_uid);
  }
  if ((compact.bits & kHasNodeName) != 0) endpoint.node_name = extras->node_name.get();
  if ((compact.bits & kHasHints) != 0) endpoint.hints = extras->hints.get();
  return endpoint;
}

model::EndpointSlice CompactEndpointSlice::ToSlice() const {
  model::EndpointSlice slice;
  slice.metadata = metadata;
  slice.address_type = address_type_;
  slice.ports = ports_.get();
  slice.endpoints.reserve(endpoints_.size());
  for (const CompactEndpoint& endpoint : endpoints_) slice.endpoints.push_back(Expand(endpoint));
  return slice;
}

std::size_t CompactEndpointSlice::whole_endpoint_count() const {
  std::size_t count = 0;
  for (const EndpointExtras& extras : extras_) count += extras.whole != nullptr ? 1 : 0;
  return count;
}

bool operator==(const CompactEndpointSlice& a, const CompactEndpointSlice& b) {
  return a.metadata == b.metadata && a.address_type_ == b.address_type_ && a.ports_ == b.ports_ &&
         a.endpoints_ == b.endpoints_ && a.extras_ == b.extras_;
}

}  // namespace slicewright::cache

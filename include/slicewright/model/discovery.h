// discovery.k8s.io/v1 EndpointSlice. Copyable aggregate with defaulted equality; thread-compatible.
// nil and empty lists are the same here (both an empty vector), as the reconciler requires.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "slicewright/model/meta.h"
#include "slicewright/model/rare.h"

namespace slicewright::model {

inline constexpr std::string_view kAddressTypeIPv4 = "IPv4";
inline constexpr std::string_view kAddressTypeIPv6 = "IPv6";
inline constexpr std::string_view kAddressTypeFQDN = "FQDN";

struct EndpointConditions {
  std::optional<bool> ready;
  std::optional<bool> serving;
  std::optional<bool> terminating;
  friend bool operator==(const EndpointConditions&, const EndpointConditions&) = default;
};

struct EndpointHints {
  std::vector<std::string> for_zones;  // forZones[].name
  std::vector<std::string> for_nodes;  // forNodes[].name
  friend bool operator==(const EndpointHints&, const EndpointHints&) = default;
};

// Almost every endpoint has exactly one address (the EndpointSlice controller writes one per
// family): holding it inline saves a heap allocation per endpoint on the reconcile hot path.
using EndpointAddresses = boost::container::small_vector<std::string, 1>;

struct Endpoint {
  // User-provided, unlike `= default`, so that value-initialization (vector::resize, Endpoint{})
  // does not zero all ~370 bytes before the members' constructors run: a full reconcile builds
  // endpoints in vectors resized to thousands.
  Endpoint() {}  // NOLINT(modernize-use-equals-default): see above
  Endpoint(const Endpoint&) = default;
  Endpoint& operator=(const Endpoint&) = default;
  // noexcept, which Boost 1.74's small_vector does not declare although moving it between equal
  // inline capacities never allocates: without it std::vector<Endpoint> copies on every growth.
  Endpoint(Endpoint&&) noexcept = default;             // NOLINT(bugprone-exception-escape)
  Endpoint& operator=(Endpoint&&) noexcept = default;  // NOLINT(bugprone-exception-escape)
  ~Endpoint() = default;

  EndpointAddresses addresses;
  EndpointConditions conditions;
  // Set only for a pod whose subdomain names a headless Service (StatefulSets): boxed, 8 bytes
  // instead of 40.
  OptionalBox<std::string> hostname;
  std::optional<ObjectReference> target_ref;
  // Inline: cloud Node names ("ip-10-0-1-23.eu-west-1.compute.internal") outgrow std::string's
  // 15 characters, and a copy per endpoint would allocate.
  std::optional<InlineString> node_name;
  std::optional<std::string> zone;
  // Set only under topology-aware hints or trafficDistribution: boxed, 8 bytes instead of 56.
  OptionalBox<EndpointHints> hints;
  friend bool operator==(const Endpoint&, const Endpoint&) = default;
};

static_assert(std::is_nothrow_move_constructible_v<Endpoint> &&
              std::is_nothrow_move_assignable_v<Endpoint>);

// discovery/v1 EndpointPort: every field optional.
struct EndpointPort {
  std::optional<std::string> name;
  std::optional<std::string> protocol;
  std::optional<std::int32_t> port;
  std::optional<std::string> app_protocol;
  friend bool operator==(const EndpointPort&, const EndpointPort&) = default;
};

struct EndpointSlice {
  ObjectMeta metadata;
  std::string address_type;
  std::vector<Endpoint> endpoints;
  std::vector<EndpointPort> ports;
  friend bool operator==(const EndpointSlice&, const EndpointSlice&) = default;
};

}  // namespace slicewright::model

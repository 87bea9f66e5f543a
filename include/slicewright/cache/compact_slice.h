// CompactEndpointSlice: what the endpoint controllers' EndpointSlice cache keeps of a slice (issue
// #5: controller RSS). The metadata is kept as it is; each endpoint as a pod-backed endpoint is
// usually written (one canonical IP, a Pod targetRef in the slice's namespace with a UUID) takes
// ~120 bytes instead of ~550 (one with no targetRef and no node, as in MCS slices, 32), node
// names, zones, hints and port lists are interned. Anything else keeps its endpoint whole, so
// ToSlice() gives back exactly the slice that was cached.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "slicewright/model/discovery.h"
#include "slicewright/model/interned.h"
#include "slicewright/model/meta.h"

namespace slicewright::cache {

struct EndpointPortsHash {
  std::size_t operator()(const std::vector<model::EndpointPort>& ports) const;
};
struct EndpointHintsHash {
  std::size_t operator()(const model::EndpointHints& hints) const;
};

// The pools one EndpointSlice cache interns into. Thread-safe.
struct SliceInterners {
  model::Interner<std::string> node_names;
  model::Interner<std::string> zones;
  model::Interner<model::EndpointHints, EndpointHintsHash> hints;
  model::Interner<std::vector<model::EndpointPort>, EndpointPortsHash> ports;
};

class CompactEndpointSlice final {
 public:
  static CompactEndpointSlice FromSlice(const model::EndpointSlice& slice,
                                        SliceInterners& interners);

  // The slice as it was cached: ToSlice() == the slice given to FromSlice().
  model::EndpointSlice ToSlice() const;

  const std::string& address_type() const { return address_type_; }
  std::size_t endpoint_count() const { return endpoints_.size(); }
  // Endpoints that did not fit the compact form and are kept whole.
  std::size_t whole_endpoint_count() const;
  // Endpoints with more than an address, a zone and conditions (a targetRef, a node, hints), or
  // kept whole: those take an EndpointExtras besides their 32 bytes.
  std::size_t extras_count() const { return extras_.size(); }

  // Public as in the model types, so the cache's and the controllers' metadata readers
  // (cache::ObjectAccess, the slice tracker) read a CompactEndpointSlice as they read a slice.
  model::ObjectMeta metadata;

  friend bool operator==(const CompactEndpointSlice& a, const CompactEndpointSlice& b);

 private:
  // Presence of the optional fields and the conditions, as bits of CompactEndpoint::bits.
  enum Bit : std::uint16_t {
    kIPv6 = 1U << 0,
    kHasTargetRef = 1U << 1,
    kHasNodeName = 1U << 2,
    kHasZone = 1U << 3,
    kHasHints = 1U << 4,
  };
  // Each condition takes two bits: 0 unset, 1 false, 2 true.
  static constexpr int kReadyShift = 5;
  static constexpr int kServingShift = 7;
  static constexpr int kTerminatingShift = 9;

  // What an endpoint has beyond an address, a zone and conditions: a pod-backed endpoint's
  // targetRef, node and hints, or the whole endpoint when it has no compact form. Kept apart so
  // that an endpoint without them (an MCS slice's: no targetRef, no node) takes 32 bytes, not 112.
  struct EndpointExtras {
    std::string target_name;                    // targetRef.name
    std::array<std::uint8_t, 16> target_uid{};  // targetRef.uid
    model::Interned<std::string> node_name;
    model::Interned<model::EndpointHints> hints;
    std::shared_ptr<const model::Endpoint> whole;  // set when the endpoint has no compact form
    friend bool operator==(const EndpointExtras& a, const EndpointExtras& b) {
      const bool whole_equal =
          a.whole == b.whole || (a.whole != nullptr && b.whole != nullptr && *a.whole == *b.whole);
      return whole_equal && a.target_name == b.target_name && a.target_uid == b.target_uid &&
             a.node_name == b.node_name && a.hints == b.hints;
    }
  };
  static constexpr std::uint32_t kNoExtras = UINT32_MAX;

  struct CompactEndpoint {
    std::array<std::uint8_t, 16> address{};  // addresses[0]
    model::Interned<std::string> zone;
    std::uint32_t extras = kNoExtras;  // index into extras_
    std::uint16_t bits = 0;
    friend bool operator==(const CompactEndpoint& a, const CompactEndpoint& b) = default;
  };

  // Appends `endpoint` to endpoints_, and its extras to extras_ when it has any.
  void AddEndpoint(const model::Endpoint& endpoint, SliceInterners& interners);
  model::Endpoint Expand(const CompactEndpoint& endpoint) const;

  std::string address_type_;
  model::Interned<std::vector<model::EndpointPort>> ports_;
  std::vector<CompactEndpoint> endpoints_;
  std::vector<EndpointExtras> extras_;
};

}  // namespace slicewright::cache

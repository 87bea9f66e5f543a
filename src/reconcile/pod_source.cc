#include "slicewright/reconcile/pod_source.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "slicewright/model/core.h"
#include "slicewright/model/discovery.h"
#include "slicewright/model/well_known.h"
#include "slicewright/net/ip.h"
#include "slicewright/reconcile/hints.h"
#include "slicewright/reconcile/planner.h"

#include "reconcile/pod_source_internal.h"
#include "reconcile/same_text.h"

namespace slicewright::reconcile {
namespace {

constexpr std::string_view kClusterIPNone = "None";
constexpr std::string_view kRestartPolicyAlways = "Always";

// What the Service source reads of a pod, for both forms it takes: a model::Pod, and the
// model::CompactPod that the controllers' Pod caches keep (read in place, so a sync builds no
// model::Pod). The overloads below are the only place the two forms differ.
std::string_view PodName(const model::Pod& pod) { return pod.metadata.name; }
std::string_view PodName(const model::CompactPod& pod) { return pod.name(); }
std::string_view PodNamespace(const model::Pod& pod) { return pod.metadata.namespace_; }
std::string_view PodNamespace(const model::CompactPod& pod) { return pod.namespace_(); }
const std::string& PodNodeName(const model::Pod& pod) { return pod.spec.node_name; }
const std::string& PodNodeName(const model::CompactPod& pod) { return pod.node_name(); }
std::string_view PodHostname(const model::Pod& pod) { return pod.spec.hostname; }
std::string_view PodHostname(const model::CompactPod& pod) { return pod.hostname(); }
std::string_view PodSubdomain(const model::Pod& pod) { return pod.spec.subdomain; }
std::string_view PodSubdomain(const model::CompactPod& pod) { return pod.subdomain(); }
std::string_view PodUid(const model::Pod& pod) { return pod.metadata.uid; }

bool IsReservedLabelKey(std::string_view key) {
  return key == model::kLabelServiceName || key == model::kLabelManagedBy ||
         key == model::kLabelHeadless;
}

// upstream ShouldSetHostname: any Service type, not only headless ones (spec §3.4).
template <typename PodT>
bool ShouldSetHostname(const PodT& pod, const model::Service& service) {
  return !PodHostname(pod).empty() && PodSubdomain(pod) == service.metadata.name &&
         service.metadata.namespace_ == PodNamespace(pod);
}

// The zone of a found Node, nullptr when the node is missing or has no (or an empty) zone label.
const std::string* ZoneOf(const model::Node* node) {
  if (node == nullptr) {
    return nullptr;
  }
  auto it = node->metadata.labels.find(model::kLabelTopologyZone);
  if (it == node->metadata.labels.end() || it->second.empty()) {
    return nullptr;
  }
  return &it->second;
}

// What FillEndpoint reads of a pod's state, taken apart so a caller can read it in a pass of its
// own (the conditions live in a heap block of their own).
struct PodState {
  bool serving = false;
  bool terminating = false;
};
PodState StateOf(const model::Pod& pod) {
  return PodState{model::IsPodReady(pod), pod.metadata.deletion_timestamp.has_value()};
}
PodState StateOf(const model::CompactPod& pod) { return PodState{pod.ready(), pod.terminating()}; }

// A pod endpoint's conditions (spec §3.3).
model::EndpointConditions ConditionsOf(PodState state, const model::Service& service) {
  // A terminating pod is never ready unless the Service publishes not-ready addresses.
  return model::EndpointConditions{
      service.spec.publish_not_ready_addresses || (state.serving && !state.terminating),
      state.serving, state.terminating};
}

// Sets a pod endpoint's conditions and starts its targetRef (kind Pod), which the caller fills.
model::ObjectReference& StartPodEndpoint(model::Endpoint& endpoint, PodState state,
                                         const model::Service& service) {
  endpoint.conditions = ConditionsOf(state, service);
  model::ObjectReference& ref = endpoint.target_ref.emplace();
  ref.kind = "Pod";
  return ref;
}

// Every field of podToEndpoint but the addresses (spec §3.4); `state` is StateOf(pod).
template <typename PodT>
void FillEndpoint(model::Endpoint& endpoint, const PodT& pod, PodState state,
                  const std::string* zone, const model::Service& service) {
  model::ObjectReference& ref = StartPodEndpoint(endpoint, state, service);
  ref.namespace_ = PodNamespace(pod);
  ref.name = PodName(pod);
  ref.uid = PodUid(pod);
  if (const std::string& node_name = PodNodeName(pod); !node_name.empty()) {
    endpoint.node_name = node_name;
  }
  if (zone != nullptr) {
    endpoint.zone = *zone;
  }
  if (ShouldSetHostname(pod, service)) {
    endpoint.hostname = std::string(PodHostname(pod));
  }
}

std::optional<std::int32_t> FindNamedPortIn(const std::vector<model::ContainerPort>& ports,
                                            const model::ServicePort& port) {
  for (const model::ContainerPort& container_port : ports) {
    if (container_port.name == port.target_port.string_value &&
        container_port.protocol == port.protocol) {
      return container_port.container_port;
    }
  }
  return std::nullopt;
}

std::optional<std::int32_t> FindNamedPort(const std::vector<model::Container>& containers,
                                          const model::ServicePort& port, bool sidecars_only) {
  for (const model::Container& container : containers) {
    if (sidecars_only && container.restart_policy != kRestartPolicyAlways) {
      continue;
    }
    if (auto found = FindNamedPortIn(container.ports, port)) {
      return found;
    }
  }
  return std::nullopt;
}

using ::slicewright::reconcile::FindPort;

// FindPort on a compact pod, whose ports are already split into regular and sidecar ones.
std::optional<std::int32_t> FindPort(const model::CompactPod& pod, const model::ServicePort& port) {
  if (!port.target_port.is_string) {
    return port.target_port.int_value;
  }
  if (auto found = FindNamedPortIn(pod.ports().regular, port)) {
    return found;
  }
  return FindNamedPortIn(pod.ports().sidecar, port);
}

model::EndpointPort MakeEndpointPort(const model::ServicePort& port, std::int32_t number) {
  model::EndpointPort result;
  result.name = port.name;
  result.protocol = port.protocol;
  result.port = number;
  result.app_protocol = port.app_protocol;
  return result;
}

int CompareStrings(std::string_view a, std::string_view b) {
  const int c = a.compare(b);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

// ---- DesiredFromService internals ----

// Sentinel in a port resolution for a Service port not found on the pod.
constexpr std::int64_t kPortNotFound = -(std::int64_t{1} << 40);

// One port set (spec §3.6): its PortMapKey and ports.
struct KeyGroup {
  std::string key;
  std::vector<model::EndpointPort> ports;
};

// Maps a pod to the port set of its endpoint. Int target ports resolve the same for every pod, so
// that set is computed once; named ones are resolved per pod to a vector of numbers, and only a
// resolution not seen before builds ports and a PortMapKey.
class PortSets final {
 public:
  PortSets(const PortSets&) = delete;
  PortSets& operator=(const PortSets&) = delete;
  explicit PortSets(const model::Service& service) : service_(service) {
    const auto& ports = service.spec.ports;
    named_ = std::any_of(ports.begin(), ports.end(),
                         [](const model::ServicePort& p) { return p.target_port.is_string; });
  }

  template <typename PodT>
  std::size_t KeyFor(const PodT& pod) {
    if (!named_) {
      if (!fixed_key_) {
        fixed_key_ = KeyIndexFor(EndpointPortsForPod(service_, model::Pod()));
      }
      return *fixed_key_;
    }
    const auto& ports = service_.spec.ports;
    resolved_.resize(ports.size());
    for (std::size_t i = 0; i < ports.size(); ++i) {
      std::optional<std::int32_t> number = FindPort(pod, ports[i]);
      resolved_[i] = number ? *number : kPortNotFound;
    }
    if (last_ != variants_.end() && last_->first == resolved_) {
      return last_->second;
    }
    auto it = variants_.find(resolved_);
    if (it == variants_.end()) {
      std::vector<model::EndpointPort> endpoint_ports;
      if (!(ports.empty() && service_.spec.cluster_ip == kClusterIPNone)) {
        for (std::size_t i = 0; i < ports.size(); ++i) {
          if (resolved_[i] == kPortNotFound) {
            continue;
          }
          endpoint_ports.push_back(
              MakeEndpointPort(ports[i], static_cast<std::int32_t>(resolved_[i])));
        }
      }
      it = variants_.emplace(resolved_, KeyIndexFor(std::move(endpoint_ports))).first;
    }
    last_ = it;
    return it->second;
  }

  std::vector<KeyGroup>& keys() { return keys_; }

 private:
  std::size_t KeyIndexFor(std::vector<model::EndpointPort> ports) {
    std::string key = PortMapKey(ports);
    auto [it, inserted] = key_index_.try_emplace(key, keys_.size());
    if (inserted) {
      keys_.push_back(KeyGroup{std::move(key), std::move(ports)});
    }
    return it->second;
  }

  const model::Service& service_;
  bool named_ = false;
  std::optional<std::size_t> fixed_key_;
  std::vector<std::int64_t> resolved_;  // scratch, reused across pods
  std::map<std::vector<std::int64_t>, std::size_t> variants_;
  std::map<std::vector<std::int64_t>, std::size_t>::const_iterator last_ = variants_.end();
  std::map<std::string, std::size_t, std::less<>> key_index_;
  std::vector<KeyGroup> keys_;
};

// The text order of IPv4 addresses as a number. Canonical dotted quads compare as strings the
// way their octets' decimal texts compare one after the other, since the '.' and the end that
// follow an octet sort before any digit ("1." < "10."): so replacing each octet by the place of
// its text among those of 0-255 ("0" < "1" < "10" < "100" < ... < "99") gives a 32-bit key that
// orders like the text. Sorting by it takes about three radix passes; the text took nine.
struct OctetTexts {
  std::array<std::uint8_t, 256> rank{};         // octet -> place of its text
  std::array<std::uint8_t, 256> octet{};        // place -> octet
  std::array<std::array<char, 4>, 256> text{};  // octet -> digits, then their count
};
constexpr OctetTexts MakeOctetTexts() {
  OctetTexts tables;
  for (unsigned n = 0; n < 256; ++n) {
    std::array<char, 4>& t = tables.text[n];
    if (n >= 100) {
      t = {static_cast<char>('0' + n / 100), static_cast<char>('0' + n / 10 % 10),
           static_cast<char>('0' + n % 10), 3};
    } else if (n >= 10) {
      t = {static_cast<char>('0' + n / 10), static_cast<char>('0' + n % 10), 0, 2};
    } else {
      t = {static_cast<char>('0' + n), 0, 0, 1};
    }
  }
  // String order of the texts is a walk of their digit tree: "0", then each first digit
  // followed by its two- and three-digit extensions ("1", "10", "100".."109", "11", ...).
  unsigned place = 0;
  const auto emit = [&](unsigned n) {
    tables.rank[n] = static_cast<std::uint8_t>(place);
    tables.octet[place] = static_cast<std::uint8_t>(n);
    ++place;
  };
  emit(0);
  for (unsigned first = 1; first <= 9; ++first) {
    emit(first);
    for (unsigned second = 0; second <= 9; ++second) {
      emit(first * 10 + second);
      for (unsigned third = 0; third <= 9 && (first * 10 + second) * 10 + third <= 255; ++third) {
        emit((first * 10 + second) * 10 + third);
      }
    }
  }
  return tables;
}
constexpr OctetTexts kOctetTexts = MakeOctetTexts();
static_assert(kOctetTexts.octet[0] == 0 && kOctetTexts.octet[1] == 1 &&
              kOctetTexts.octet[2] == 10 && kOctetTexts.octet[3] == 100 &&
              kOctetTexts.octet[255] == 99);

std::uint32_t Ipv4TextOrderKey(const net::IpAddress& address) {
  return std::uint32_t{kOctetTexts.rank[address.bytes[0]]} << 24U |
         std::uint32_t{kOctetTexts.rank[address.bytes[1]]} << 16U |
         std::uint32_t{kOctetTexts.rank[address.bytes[2]]} << 8U |
         std::uint32_t{kOctetTexts.rank[address.bytes[3]]};
}

// The Ipv4TextOrderKey of `text` when it is a canonical dotted quad (decimal octets without
// leading zeros), read from the digits; nullopt for any other text. A resync keys every stored
// endpoint of slices in another controller's order, and the general parser was a tenth of it.
std::optional<std::uint32_t> CanonicalIpv4TextOrderKey(std::string_view text) {
  std::uint32_t key = 0;
  std::size_t pos = 0;
  for (int octet = 0; octet < 4; ++octet) {
    if (octet > 0) {
      if (pos == text.size() || text[pos] != '.') {
        return std::nullopt;
      }
      ++pos;
    }
    const std::size_t start = pos;
    unsigned value = 0;
    while (pos < text.size() && pos - start < 3 && text[pos] >= '0' && text[pos] <= '9') {
      value = value * 10 + static_cast<unsigned>(text[pos] - '0');
      ++pos;
    }
    if (pos == start || value > 255 || (text[start] == '0' && pos - start > 1)) {
      return std::nullopt;
    }
    key = key << 8U | kOctetTexts.rank[value];
  }
  if (pos != text.size()) {
    return std::nullopt;
  }
  return key;
}

// The canonical text of the IPv4 address whose Ipv4TextOrderKey is `key`, written in `text`.
std::string_view Ipv4TextFromKey(std::uint32_t key, std::array<char, 16>& text) {
  std::size_t length = 0;
  for (int shift = 24; shift >= 0; shift -= 8) {
    const std::array<char, 4>& octet =
        kOctetTexts.text[kOctetTexts.octet[(key >> static_cast<unsigned>(shift)) & 0xffU]];
    std::memcpy(text.data() + length, octet.data(), 4);  // the 4th byte is overwritten next
    length += static_cast<std::size_t>(octet[3]);
    text[length++] = '.';
  }
  return {text.data(), length - 1};
}

// Appends the canonical text of the IPv4 address whose Ipv4TextOrderKey is `key`.
void AppendIpv4FromKey(std::uint32_t key, model::EndpointAddresses& addresses) {
  std::array<char, 16> text{};
  addresses.emplace_back(Ipv4TextFromKey(key, text));
}

// A pod IP parsed once per sync: an IPv6 address as canonical text, an IPv4 one as its
// Ipv4TextOrderKey only (its text is made once, from the key, where an endpoint is written).
struct PodIp {
  bool ipv6 = false;
  std::uint32_t ipv4_key = 0;
  std::string text;  // IPv6 only
};

// Compares two addresses of one family as their canonical texts compare.
int CompareIps(const PodIp& x, const PodIp& y) {
  if (!x.ipv6) {
    return x.ipv4_key < y.ipv4_key ? -1 : (x.ipv4_key > y.ipv4_key ? 1 : 0);
  }
  return CompareStrings(x.text, y.text);
}

// A pod's Node and that Node's zone (ZoneOf), both nullptr when the Node is not found.
struct FoundNode {
  const model::Node* node = nullptr;
  const std::string* zone = nullptr;
};

// The caller's Node lookup, asked once per Node name: a Service's pods share few Nodes, and in the
// controller each lookup is a cache read under a lock that also keeps a snapshot alive. The zone
// label is looked up once per Node too, not once per endpoint.
class NodeMemo {
 public:
  explicit NodeMemo(const NodeLookup& nodes) : nodes_(nodes) {}

  // `name` must outlive the memo (it is the pod's spec.nodeName).
  FoundNode Find(std::string_view name) {
    // A small direct-mapped cache in front of the map: node names mostly differ in their last
    // characters ("node-0", "node-1"), so most lookups cost one short comparison, not a hash.
    RecentNode& recent = recent_[RecentSlot(name)];
    if (recent.filled && recent.name == name) {
      return recent.found;
    }
    const FoundNode found = Lookup(name);
    recent = RecentNode{true, name, found};
    return found;
  }

  // For a name interned per node (a compact pod's): its address stands for its text, so a hit
  // costs no comparison at all. Cloud Node names ("ip-10-0-1-23.eu-west-1.compute.internal")
  // differ only in their first characters, where Find's slot and comparison look last.
  FoundNode FindInterned(const std::string& name) {
    const auto address = reinterpret_cast<std::uintptr_t>(name.data());
    RecentNode& recent = recent_[(address >> 4U) % kRecentNodes];
    if (recent.filled && recent.name.data() == name.data() && recent.name.size() == name.size()) {
      return recent.found;
    }
    const FoundNode found = Lookup(name);
    recent = RecentNode{true, name, found};
    return found;
  }

 private:
  struct RecentNode {
    bool filled = false;
    std::string_view name;
    FoundNode found;
  };
  static constexpr std::size_t kRecentNodes = 16;

  FoundNode Lookup(std::string_view name) {
    auto [it, inserted] = found_.try_emplace(name);
    if (inserted) {
      it->second.node = nodes_(name);
      it->second.zone = ZoneOf(it->second.node);
    }
    return it->second;
  }

  static std::size_t RecentSlot(std::string_view name) {
    if (name.empty()) {
      return 0;
    }
    const auto last = static_cast<unsigned char>(name.back());
    const auto before = name.size() > 1 ? static_cast<unsigned char>(name[name.size() - 2]) : 0u;
    return (last ^ (before << 2U) ^ name.size()) % kRecentNodes;
  }

  const NodeLookup& nodes_;
  std::unordered_map<std::string_view, FoundNode> found_;
  std::array<RecentNode, kRecentNodes> recent_{};
};

FoundNode FindNode(NodeMemo& memo, const model::Pod& pod) { return memo.Find(pod.spec.node_name); }
FoundNode FindNode(NodeMemo& memo, const model::CompactPod& pod) {
  return memo.FindInterned(pod.node_name());
}

// What pass 3 reads of a compact pod besides its name and state, copied in pass 1 (which reads
// each pod anyway, in list order) so that pass 3, which visits the pods at random, reads one
// record line and the pod's name instead of the pod's three to four lines. For a model::Pod,
// nothing: that path reads the pod in place.
template <typename PodT>
struct PodCopy {};
template <>
struct PodCopy<model::CompactPod> {
  const std::string* namespace_name;
  const std::string* node_name;
  std::array<std::uint8_t, 16> uid;  // when kRecordBinaryUid
};

// PodRecord::flags.
constexpr std::uint8_t kRecordSingleIpv4 = 1U << 0U;  // exactly one address of the family
constexpr std::uint8_t kRecordSingleIpv6 = 1U << 1U;
constexpr std::uint8_t kRecordSetHostname = 1U << 2U;  // ShouldSetHostname
constexpr std::uint8_t kRecordBinaryUid = 1U << 3U;    // PodCopy::uid holds the UID

// A pod that will be published in at least one address type. A compact pod's record is one cache
// line, aligned, as pass 3 reads it at random.
template <typename PodT>
struct alignas(std::is_same_v<PodT, model::CompactPod> ? 64 : alignof(void*)) PodRecord {
  const PodT* pod;
  const std::string* zone;  // the zone of the pod's Node, or nullptr
  std::uint32_t ip_begin;
  std::uint32_t ip_end;
  std::uint32_t key_index;
  // Read in pass 1, which walks the pods in their order, so that pass 3, which visits them in
  // endpoint order, need not touch each pod's conditions again.
  PodState state;
  std::uint8_t flags;
  [[no_unique_address]] PodCopy<PodT> copy;
};
static_assert(sizeof(PodRecord<model::CompactPod>) == 64);

// FillEndpoint from a record: a model::Pod is read in place, a compact pod from its record's copy.
void FillEndpointFromRecord(model::Endpoint& endpoint, const PodRecord<model::Pod>& record,
                            const model::Service& service) {
  FillEndpoint(endpoint, *record.pod, record.state, record.zone, service);
}
void FillEndpointFromRecord(model::Endpoint& endpoint, const PodRecord<model::CompactPod>& record,
                            const model::Service& service) {
  model::ObjectReference& ref = StartPodEndpoint(endpoint, record.state, service);
  ref.namespace_ = *record.copy.namespace_name;
  ref.name = record.pod->name();
  ref.uid = (record.flags & kRecordBinaryUid) != 0 ? model::CompactPod::FormatUid(record.copy.uid)
                                                   : record.pod->uid();
  if (!record.copy.node_name->empty()) {
    endpoint.node_name = *record.copy.node_name;
  }
  if (record.zone != nullptr) {
    endpoint.zone = *record.zone;
  }
  if ((record.flags & kRecordSetHostname) != 0) {
    endpoint.hostname = std::string(record.pod->hostname());
  }
}

// The record of `pod`, but for its IPs' flags.
PodRecord<model::Pod> MakeRecord(const model::Pod& pod, const std::string* zone,
                                 std::uint32_t ip_begin, std::uint32_t ip_end,
                                 std::uint32_t key_index, const model::Service& /*service*/) {
  return PodRecord<model::Pod>{&pod, zone, ip_begin, ip_end, key_index, StateOf(pod), 0, {}};
}
PodRecord<model::CompactPod> MakeRecord(const model::CompactPod& pod, const std::string* zone,
                                        std::uint32_t ip_begin, std::uint32_t ip_end,
                                        std::uint32_t key_index, const model::Service& service) {
  PodRecord<model::CompactPod> record{
      &pod,      zone,
      ip_begin,  ip_end,
      key_index, StateOf(pod),
      0,         PodCopy<model::CompactPod>{&pod.namespace_(), &pod.node_name(), {}}};
  if (const std::array<std::uint8_t, 16>* uid = pod.binary_uid()) {
    record.copy.uid = *uid;
    record.flags |= kRecordBinaryUid;
  }
  if (ShouldSetHostname(pod, service)) {
    record.flags |= kRecordSetHostname;
  }
  return record;
}

// Sort record of one pod in one (address type, port set) group, keyed by the pod's smallest address
// of that family so that comparing (hi, lo) orders like comparing the texts, and most comparisons
// never touch them. IPv6: hi/lo hold the text's first 16 bytes, big-endian and zero-padded. IPv4:
// hi holds the Ipv4TextOrderKey in its upper half, lo is zero (equal keys are equal addresses).
struct SortRecord {
  std::uint64_t hi;
  std::uint64_t lo;
  std::uint32_t record;
};

bool KeyBefore(const SortRecord& a, const SortRecord& b) {
  return a.hi != b.hi ? a.hi < b.hi : a.lo < b.lo;
}
bool SameKey(const SortRecord& a, const SortRecord& b) { return a.hi == b.hi && a.lo == b.lo; }

// The first position of each key among a group's sorted records, in a hash table: finding a
// stored endpoint's records by a binary search instead was a third of a resync of slices that
// hold their endpoints in another controller's order (perf). `sorted` must outlive the index.
class KeyIndex final {
 public:
  explicit KeyIndex(const std::vector<SortRecord>& sorted) : sorted_(sorted) {
    std::size_t capacity = 16;
    while (capacity < 2 * sorted.size()) {  // at most half full
      capacity *= 2;
      --shift_;
    }
    slots_.assign(capacity, kEmpty);
    for (std::size_t i = 0; i < sorted.size(); ++i) {
      if (i > 0 && SameKey(sorted[i - 1], sorted[i])) {
        continue;  // records of one key (pods sharing an address) follow its first
      }
      std::size_t slot = SlotOf(sorted[i]);
      while (slots_[slot] != kEmpty) {
        slot = (slot + 1) & (capacity - 1);
      }
      slots_[slot] = static_cast<std::uint32_t>(i);
    }
  }

  // The first position whose key is `key`'s, if any.
  std::optional<std::size_t> Find(const SortRecord& key) const {
    for (std::size_t slot = SlotOf(key); slots_[slot] != kEmpty;
         slot = (slot + 1) & (slots_.size() - 1)) {
      if (SameKey(sorted_[slots_[slot]], key)) {
        return slots_[slot];
      }
    }
    return std::nullopt;
  }

 private:
  static constexpr std::uint32_t kEmpty = ~std::uint32_t{0};

  // Fibonacci hashing: the top bits of the product (an IPv4 key's low word is zero, and so are
  // the product's low bits).
  std::size_t SlotOf(const SortRecord& key) const {
    constexpr std::uint64_t kGolden = 0x9e3779b97f4a7c15ULL;
    return static_cast<std::size_t>(((key.hi ^ (key.lo * kGolden)) * kGolden) >> shift_);
  }

  const std::vector<SortRecord>& sorted_;
  std::vector<std::uint32_t> slots_;
  unsigned shift_ = 64 - 4;  // 64 - log2(capacity)
};

std::uint64_t LoadBigEndian64(const unsigned char* bytes) {
  std::uint64_t value = 0;
  std::memcpy(&value, bytes, sizeof(value));
  if constexpr (std::endian::native == std::endian::little) {
    value = __builtin_bswap64(value);
  }
  return value;
}

void PackPrefix(std::string_view text, std::uint64_t& hi, std::uint64_t& lo) {
  std::array<unsigned char, 16> bytes{};
  std::memcpy(bytes.data(), text.data(), std::min(text.size(), bytes.size()));
  hi = LoadBigEndian64(bytes.data());
  lo = LoadBigEndian64(bytes.data() + 8);
}

// The IPv6 text PackPrefix packed into `sorted`, written in `bytes`, when all of it is there
// (shorter than the 16 bytes, as "fd00::1b" is); nullopt otherwise. The texts are canonical
// addresses, which hold no zero byte, so the zero bytes are exactly the padding at the end.
std::optional<std::string_view> PrefixText(const SortRecord& sorted, std::array<char, 16>& bytes) {
  if ((sorted.lo & 0xffU) != 0) {
    return std::nullopt;  // 16 bytes or more: the prefix may have cut it
  }
  std::size_t length = 0;
  if (sorted.lo != 0) {
    length = 16 - static_cast<std::size_t>(std::countr_zero(sorted.lo)) / 8;
  } else if (sorted.hi != 0) {
    length = 8 - static_cast<std::size_t>(std::countr_zero(sorted.hi)) / 8;
  }
  std::uint64_t hi = sorted.hi;
  std::uint64_t lo = sorted.lo;
  if constexpr (std::endian::native == std::endian::little) {
    hi = __builtin_bswap64(hi);
    lo = __builtin_bswap64(lo);
  }
  std::memcpy(bytes.data(), &hi, sizeof(hi));
  std::memcpy(bytes.data() + 8, &lo, sizeof(lo));
  return std::string_view(bytes.data(), length);
}

// The text of the address a SortRecord was keyed by, written in `buffer`, when the key holds all
// of it (every IPv4 address, short IPv6 ones); nullopt otherwise.
std::optional<std::string_view> SortKeyText(const SortRecord& sorted, bool ipv6,
                                            std::array<char, 16>& buffer) {
  if (ipv6) {
    return PrefixText(sorted, buffer);
  }
  return Ipv4TextFromKey(static_cast<std::uint32_t>(sorted.hi >> 32U), buffer);
}

// Appends the address a SortRecord was keyed by, when the key holds all of it; false, appending
// nothing, otherwise.
bool AppendFromSortKey(const SortRecord& sorted, bool ipv6, model::EndpointAddresses& addresses) {
  std::array<char, 16> buffer{};
  const std::optional<std::string_view> text = SortKeyText(sorted, ipv6, buffer);
  if (!text) {
    return false;
  }
  addresses.emplace_back(*text);
  return true;
}

// Appends a record's addresses of one family, in the pod's order, as its endpoint lists them.
// IPv6 texts are moved out of `ips` when `take_texts` (each is written once), else copied.
template <typename PodT>
void AppendRecordAddresses(const PodRecord<PodT>& record, bool ipv6, std::vector<PodIp>& ips,
                           bool take_texts, model::EndpointAddresses& addresses) {
  std::uint32_t count = 0;
  for (std::uint32_t k = record.ip_begin; k < record.ip_end; ++k) {
    count += ips[k].ipv6 == ipv6 ? 1 : 0;
  }
  addresses.reserve(count);
  for (std::uint32_t k = record.ip_begin; k < record.ip_end; ++k) {
    if (ips[k].ipv6 != ipv6) {
      continue;
    }
    if (!ipv6) {
      AppendIpv4FromKey(ips[k].ipv4_key, addresses);
    } else if (take_texts) {
      addresses.push_back(std::move(ips[k].text));
    } else {
      addresses.push_back(ips[k].text);
    }
  }
}

// Below this many records std::sort beats the radix sort's fixed passes.
constexpr std::size_t kRadixSortMinimum = 512;

// Orders records by (hi, lo), stably: a least-significant-digit radix sort over the prefix bytes,
// skipping the bytes every record shares (a Service's IPv4 keys share the first octet, IPv6 texts
// their prefix and the zero padding). std::sort of 100k records in random order, the order IPs have
// when pods are listed by name, was 15% of a full reconcile (perf, docs/performance.md), mostly
// mispredicted branches; this costs a few passes of sequential reads and 256-way scattered writes.
// Input already in order is left alone.
void SortByPrefix(std::vector<SortRecord>& records) {
  if (records.size() < 2) {
    return;
  }
  const SortRecord& first = records.front();
  std::uint64_t hi_differs = 0;
  std::uint64_t lo_differs = 0;
  bool ordered = true;
  for (std::size_t i = 1; i < records.size(); ++i) {
    const SortRecord& r = records[i];
    const SortRecord& previous = records[i - 1];
    hi_differs |= r.hi ^ first.hi;
    lo_differs |= r.lo ^ first.lo;
    ordered = ordered && (previous.hi < r.hi || (previous.hi == r.hi && previous.lo <= r.lo));
  }
  if (ordered) {
    return;
  }
  // Digit d is byte d of lo for d < 8 and byte d - 8 of hi beyond, least significant first.
  constexpr std::size_t kDigits = 16;
  constexpr std::size_t kBuckets = 256;
  const auto digit = [](const SortRecord& r, std::size_t d) {
    const std::uint64_t word = d < 8 ? r.lo : r.hi;
    return static_cast<std::size_t>((word >> (8 * (d % 8))) & 0xffU);
  };
  std::array<std::size_t, kDigits> varying{};
  std::size_t varying_count = 0;
  for (std::size_t d = 0; d < kDigits; ++d) {
    const std::uint64_t differs = d < 8 ? lo_differs : hi_differs;
    if (((differs >> (8 * (d % 8))) & 0xffU) != 0) {
      varying[varying_count++] = d;
    }
  }
  std::vector<std::array<std::uint32_t, kBuckets>> counts(varying_count);
  for (const SortRecord& r : records) {
    for (std::size_t v = 0; v < varying_count; ++v) {
      ++counts[v][digit(r, varying[v])];
    }
  }
  std::vector<SortRecord> scratch(records.size());
  std::vector<SortRecord>* from = &records;
  std::vector<SortRecord>* to = &scratch;
  for (std::size_t v = 0; v < varying_count; ++v) {
    std::array<std::uint32_t, kBuckets>& next = counts[v];
    std::uint32_t sum = 0;
    for (std::uint32_t& count : next) {
      const std::uint32_t here = count;
      count = sum;
      sum += here;
    }
    const std::size_t d = varying[v];
    for (const SortRecord& r : *from) {
      (*to)[next[digit(r, d)]++] = r;
    }
    std::swap(from, to);
  }
  if (from != &records) {
    records.swap(scratch);
  }
}

// Compares the identities (spec §3.7) of two records within one family without building
// endpoints: the sort runs before any endpoint exists.
template <typename PodT>
class IdentityComparer final {
 public:
  IdentityComparer(const model::Service& service, const std::vector<PodRecord<PodT>>& records,
                   const std::vector<PodIp>& ips)
      : service_(service), records_(records), ips_(ips) {}

  // The smallest address of `ipv6`'s family of a record; nullptr when it has none.
  const PodIp* SmallestAddress(std::uint32_t record, bool ipv6) const {
    const PodRecord<PodT>& r = records_[record];
    const PodIp* best = nullptr;
    for (std::uint32_t i = r.ip_begin; i < r.ip_end; ++i) {
      if (ips_[i].ipv6 != ipv6) {
        continue;
      }
      if (best == nullptr || CompareIps(ips_[i], *best) < 0) {
        best = &ips_[i];
      }
    }
    return best;
  }

  int Compare(std::uint32_t a, std::uint32_t b, bool ipv6) const {
    if (int c = CompareAddresses(records_[a], records_[b], ipv6)) {
      return c;
    }
    const PodT& pa = *records_[a].pod;
    const PodT& pb = *records_[b].pod;
    if (int c = CompareStrings(HostnameFor(pa), HostnameFor(pb))) {
      return c;
    }
    if (int c = CompareStrings(PodNamespace(pa), PodNamespace(pb))) {
      return c;
    }
    return CompareStrings(PodName(pa), PodName(pb));
  }

 private:
  std::string_view HostnameFor(const PodT& pod) const {
    if (!ShouldSetHostname(pod, service_)) {
      return {};
    }
    return PodHostname(pod);
  }

  int CompareAddresses(const PodRecord<PodT>& a, const PodRecord<PodT>& b, bool ipv6) const {
    const PodIp* single_a = nullptr;
    const PodIp* single_b = nullptr;
    std::uint32_t count_a = 0;
    std::uint32_t count_b = 0;
    for (std::uint32_t i = a.ip_begin; i < a.ip_end; ++i) {
      if (ips_[i].ipv6 == ipv6 && count_a++ == 0) {
        single_a = &ips_[i];
      }
    }
    for (std::uint32_t i = b.ip_begin; i < b.ip_end; ++i) {
      if (ips_[i].ipv6 == ipv6 && count_b++ == 0) {
        single_b = &ips_[i];
      }
    }
    if (count_a == 1 && count_b == 1) {
      return CompareIps(*single_a, *single_b);
    }
    // More than one address of a family: compare the sorted lists (never written by kubelet).
    std::vector<const PodIp*> va;
    std::vector<const PodIp*> vb;
    for (std::uint32_t i = a.ip_begin; i < a.ip_end; ++i) {
      if (ips_[i].ipv6 == ipv6) {
        va.push_back(&ips_[i]);
      }
    }
    for (std::uint32_t i = b.ip_begin; i < b.ip_end; ++i) {
      if (ips_[i].ipv6 == ipv6) {
        vb.push_back(&ips_[i]);
      }
    }
    const auto less = [](const PodIp* x, const PodIp* y) { return CompareIps(*x, *y) < 0; };
    std::sort(va.begin(), va.end(), less);
    std::sort(vb.begin(), vb.end(), less);
    for (std::size_t i = 0; i < std::min(va.size(), vb.size()); ++i) {
      if (int c = CompareIps(*va[i], *vb[i])) {
        return c;
      }
    }
    return va.size() < vb.size() ? -1 : (va.size() > vb.size() ? 1 : 0);
  }

  const model::Service& service_;
  const std::vector<PodRecord<PodT>>& records_;
  const std::vector<PodIp>& ips_;
};

// Sorts one group's records by identity (ties by pod order) and keeps only the last pod of each
// identity: a later pod replaces an earlier one (spec §3.7).
template <typename PodT>
void OrderGroup(std::vector<SortRecord>& sort, bool ipv6, const IdentityComparer<PodT>& identity) {
  const auto same_prefix = [](const SortRecord& x, const SortRecord& y) {
    return x.hi == y.hi && x.lo == y.lo;
  };
  const auto by_identity = [&](const SortRecord& x, const SortRecord& y) {
    if (x.hi != y.hi) {
      return x.hi < y.hi;
    }
    if (x.lo != y.lo) {
      return x.lo < y.lo;
    }
    if (int c = identity.Compare(x.record, y.record, ipv6)) {
      return c < 0;
    }
    return x.record < y.record;
  };
  if (sort.size() < kRadixSortMinimum) {
    std::sort(sort.begin(), sort.end(), by_identity);
  } else {
    // The prefixes in order, stably (records with equal prefixes stay in pod order); then only
    // the runs of equal prefixes need the full comparison. The result is the same as above: the
    // comparison is a total order, so there is one sorted order.
    SortByPrefix(sort);
    for (std::size_t begin = 0; begin < sort.size();) {
      std::size_t end = begin + 1;
      while (end < sort.size() && same_prefix(sort[begin], sort[end])) {
        ++end;
      }
      if (end - begin > 1) {
        std::sort(sort.begin() + static_cast<std::ptrdiff_t>(begin),
                  sort.begin() + static_cast<std::ptrdiff_t>(end), by_identity);
      }
      begin = end;
    }
  }
  std::size_t kept = 0;
  for (std::size_t i = 0; i < sort.size(); ++i) {
    if (i + 1 < sort.size() && same_prefix(sort[i], sort[i + 1]) &&
        identity.Compare(sort[i].record, sort[i + 1].record, ipv6) == 0) {
      continue;
    }
    sort[kept++] = sort[i];
  }
  sort.resize(kept);
}

}  // namespace

namespace internal {

Diagnostic NodeNotFoundDiagnostic(const model::Service& service, std::string_view pod_name,
                                  std::string_view node_name) {
  return Diagnostic{Diagnostic::Severity::kWarning, std::string(kReasonNodeNotFound),
                    "skipping Pod " + std::string(pod_name) + " for Service " +
                        model::NamespacedName(service.metadata) + ": Node " +
                        std::string(node_name) + " Not Found",
                    /*retry=*/true};
}

Diagnostic NodeNotFoundDiagnostic(const model::Service& service, const model::Pod& pod) {
  return NodeNotFoundDiagnostic(service, pod.metadata.name, pod.spec.node_name);
}

std::string InvalidPodIpDetail(std::string_view pod_namespace, std::string_view pod_name,
                               std::size_t index, const std::string& text) {
  return "pods/" + std::string(pod_namespace) + "/" + std::string(pod_name) + ": .status.podIPs[" +
         std::to_string(index) + "].ip: \"" + text.substr(0, 64) + "\" is not an IP address";
}

std::string InvalidPodIpDetail(const model::Pod& pod, std::size_t index, const std::string& text) {
  return InvalidPodIpDetail(pod.metadata.namespace_, pod.metadata.name, index, text);
}

Diagnostic InvalidPodIpsDiagnostic(const model::Service& service, std::int64_t count,
                                   const std::string& first) {
  return Diagnostic{Diagnostic::Severity::kWarning, std::string(kReasonInvalidIPAddress),
                    "Skipped " + std::to_string(count) + " invalid Pod IP addresses for Service " +
                        model::NamespacedName(service.metadata) + " (first: " + first + ")",
                    /*retry=*/false};
}

}  // namespace internal

std::vector<std::string> SupportedAddressTypes(const model::Service& service) {
  bool ipv4 = false;
  bool ipv6 = false;
  for (const std::string& family : service.spec.ip_families) {
    ipv4 = ipv4 || family == "IPv4";
    ipv6 = ipv6 || family == "IPv6";
  }
  if (!ipv4 && !ipv6) {
    const std::string& cluster_ip = service.spec.cluster_ip;
    if (!cluster_ip.empty() && cluster_ip != kClusterIPNone) {
      // An unparseable ClusterIP counts as IPv4, as upstream's IsIPv6String makes it.
      std::optional<net::IpAddress> parsed = net::ParseIpSloppy(cluster_ip);
      if (parsed && parsed->family == net::IpFamily::kIPv6) {
        ipv6 = true;
      } else {
        ipv4 = true;
      }
    } else {
      // Headless or not yet defaulted: assume dual-stack so no slices are deleted (spec §3.1).
      ipv4 = true;
      ipv6 = true;
    }
  }
  std::vector<std::string> types;
  if (ipv4) {
    types.emplace_back(model::kAddressTypeIPv4);
  }
  if (ipv6) {
    types.emplace_back(model::kAddressTypeIPv6);
  }
  return types;
}

bool IsHeadless(const model::Service& service) {
  return service.spec.cluster_ip.empty() || service.spec.cluster_ip == kClusterIPNone;
}

bool ShouldPodBeInEndpoints(const model::Pod& pod, bool include_terminating) {
  if (pod.status.phase == "Failed" || pod.status.phase == "Succeeded") {
    return false;
  }
  if (pod.status.pod_ip.empty() && pod.status.pod_ips.empty()) {
    return false;
  }
  if (!include_terminating && pod.metadata.deletion_timestamp.has_value()) {
    return false;
  }
  return true;
}

std::optional<std::int32_t> FindPort(const model::Pod& pod, const model::ServicePort& port) {
  if (!port.target_port.is_string) {
    return port.target_port.int_value;
  }
  // Regular containers win over sidecars (restartable init containers).
  if (auto found = FindNamedPort(pod.spec.containers, port, /*sidecars_only=*/false)) {
    return found;
  }
  return FindNamedPort(pod.spec.init_containers, port, /*sidecars_only=*/true);
}

std::vector<model::EndpointPort> EndpointPortsForPod(const model::Service& service,
                                                     const model::Pod& pod) {
  std::vector<model::EndpointPort> result;
  // A headless Service may have no ports.
  if (service.spec.ports.empty() && service.spec.cluster_ip == kClusterIPNone) {
    return result;
  }
  result.reserve(service.spec.ports.size());
  for (const model::ServicePort& port : service.spec.ports) {
    std::optional<std::int32_t> number = FindPort(pod, port);
    if (!number) {
      continue;  // this pod lands in a group with fewer ports (spec §3.5)
    }
    result.push_back(MakeEndpointPort(port, *number));
  }
  return result;
}

model::Endpoint PodToEndpoint(const model::Pod& pod, const model::Node* node,
                              const model::Service& service, std::string_view address_type) {
  model::Endpoint endpoint;
  const bool want_ipv4 = address_type == model::kAddressTypeIPv4;
  const bool want_ipv6 = address_type == model::kAddressTypeIPv6;
  for (const std::string& text : pod.status.pod_ips) {
    std::optional<net::IpAddress> parsed = net::ParseIpSloppy(text);
    // Upstream writes an unparseable IP as "<nil>" into IPv4 slices; we skip it (decision §15.4).
    if (!parsed) {
      continue;
    }
    const bool ipv6 = parsed->family == net::IpFamily::kIPv6;
    if ((ipv6 && want_ipv6) || (!ipv6 && want_ipv4)) {
      endpoint.addresses.push_back(net::FormatIp(*parsed));
    }
  }
  FillEndpoint(endpoint, pod, StateOf(pod), ZoneOf(node), service);
  return endpoint;
}

model::StringMap ServiceSliceLabels(const model::Service& service, std::string_view managed_by) {
  model::StringMap labels;
  for (const auto& [key, value] : service.metadata.labels) {
    // A reserved key on the Service is ignored (upstream logs it).
    if (!IsReservedLabelKey(key)) {
      labels.emplace_hint(labels.end(), key, value);
    }
  }
  if (IsHeadless(service)) {
    labels.emplace(model::kLabelHeadless, "");
  }
  labels.insert_or_assign(std::string(model::kLabelServiceName), service.metadata.name);
  labels.insert_or_assign(std::string(model::kLabelManagedBy), std::string(managed_by));
  return labels;
}

SliceLabels SetEndpointSliceLabels(const model::StringMap& slice_labels,
                                   const model::Service& service, std::string_view managed_by) {
  SliceLabels result;
  result.labels = ServiceSliceLabels(service, managed_by);
  // Compare the non-reserved parts only: the desired set minus reserved keys is the Service's.
  auto a = slice_labels.begin();
  auto b = result.labels.begin();
  const auto skip_reserved = [](auto& it, const auto end) {
    while (it != end && IsReservedLabelKey(it->first)) {
      ++it;
    }
  };
  while (true) {
    skip_reserved(a, slice_labels.end());
    skip_reserved(b, result.labels.end());
    if (a == slice_labels.end() || b == result.labels.end()) {
      result.changed = (a == slice_labels.end()) != (b == result.labels.end());
      break;
    }
    if (a->first != b->first || a->second != b->second) {
      result.changed = true;
      break;
    }
    ++a;
    ++b;
  }
  return result;
}

namespace {

// Whether a pod has an endpoint at all (ShouldPodBeInEndpoints with include_terminating = true).
bool InEndpoints(const model::Pod& pod) {
  return ShouldPodBeInEndpoints(pod, /*include_terminating=*/true);
}
bool InEndpoints(const model::CompactPod& pod) {
  return pod.phase() != "Failed" && pod.phase() != "Succeeded" && pod.has_pod_ip();
}

// Calls on_text(index, text) for each podIPs text to parse, or on_parsed(address) for each address
// already parsed (a compact pod's usual form).
template <typename OnText, typename OnParsed>
void ForEachPodIp(const model::Pod& pod, const OnText& on_text, const OnParsed& /*on_parsed*/) {
  for (std::size_t i = 0; i < pod.status.pod_ips.size(); ++i) {
    on_text(i, pod.status.pod_ips[i]);
  }
}
template <typename OnText, typename OnParsed>
void ForEachPodIp(const model::CompactPod& pod, const OnText& on_text, const OnParsed& on_parsed) {
  for (std::size_t i = 0; i < pod.parsed_pod_ip_count(); ++i) {
    on_parsed(pod.parsed_pod_ip(i));
  }
  const std::span<const std::string> texts = pod.text_pod_ips();
  for (std::size_t i = 0; i < texts.size(); ++i) {
    on_text(i, texts[i]);
  }
}

// Software prefetches for the pod passes. Pass 1 walks the pods in the caller's order and pass 3
// in endpoint order; at 100k pods neither fits in cache, and each pod's fields are spread over
// several cache lines and heap blocks that the hardware prefetcher cannot guess. `Far` is issued
// kPrefetchDistance pods ahead, `Near` half as far, when the lines Far fetched hold the pointers it
// follows.
constexpr std::size_t kPrefetchDistance = 16;

void PrefetchFarForPass1(const model::Pod& pod) {
  __builtin_prefetch(&pod.metadata.deletion_timestamp);
  __builtin_prefetch(&pod.spec.node_name);
  __builtin_prefetch(&pod.status.phase);
  __builtin_prefetch(&pod.status.conditions);
}
void PrefetchNearForPass1(const model::Pod& pod) {
  __builtin_prefetch(pod.status.pod_ips.data());
  __builtin_prefetch(pod.status.conditions.data());
}
void PrefetchFarForPass3(const model::Pod& pod) {
  __builtin_prefetch(&pod.metadata.name);
  __builtin_prefetch(&pod.metadata.uid);
  __builtin_prefetch(&pod.spec.node_name);
  __builtin_prefetch(&pod.spec.hostname);
}
void PrefetchNearForPass3(const model::Pod& pod) { __builtin_prefetch(pod.metadata.uid.data()); }

// A compact pod is 176 bytes in place; what it points to is shared by many pods, but for a name
// longer than CompactPod::Name keeps inline. Pods are not aligned to cache lines, so 176 bytes span
// three or four lines: the last byte is fetched too (it holds the flags uid() reads first).
void PrefetchCompactPod(const model::CompactPod& pod) {
  const auto* bytes = reinterpret_cast<const char*>(&pod);
  for (std::size_t offset = 0; offset < sizeof(model::CompactPod); offset += 64) {
    __builtin_prefetch(bytes + offset);
  }
  __builtin_prefetch(bytes + sizeof(model::CompactPod) - 1);
}
void PrefetchFarForPass1(const model::CompactPod& pod) { PrefetchCompactPod(pod); }
void PrefetchNearForPass1(const model::CompactPod& /*pod*/) {}
// Pass 3 reads only the name of a compact pod (its record holds the rest): its first
// sizeof(CompactPod::Name) bytes, and a block on the heap only for a name longer than 36.
void PrefetchFarForPass3(const model::CompactPod& pod) {
  const auto* bytes = reinterpret_cast<const char*>(&pod);
  __builtin_prefetch(bytes);
  __builtin_prefetch(bytes + sizeof(model::CompactPod::Name) - 1);
}
void PrefetchNearForPass3(const model::CompactPod& pod) {
  if (pod.name().size() > model::CompactPod::Name::kInlineCapacity) {
    __builtin_prefetch(pod.name().data());
  }
}

// ---- Held slices (ServiceSourceOptions::stored_slices) ----

// What the record's endpoint has besides its addresses and conditions, read the way
// FillEndpointFromRecord writes it: a model::Pod in place, a compact pod from its record.
std::string_view RecordNamespace(const PodRecord<model::Pod>& record) {
  return record.pod->metadata.namespace_;
}
std::string_view RecordNamespace(const PodRecord<model::CompactPod>& record) {
  return *record.copy.namespace_name;
}
std::string_view RecordNodeName(const PodRecord<model::Pod>& record) {
  return record.pod->spec.node_name;
}
std::string_view RecordNodeName(const PodRecord<model::CompactPod>& record) {
  return *record.copy.node_name;
}
bool RecordSetsHostname(const PodRecord<model::Pod>& record, const model::Service& service) {
  return ShouldSetHostname(*record.pod, service);
}
bool RecordSetsHostname(const PodRecord<model::CompactPod>& record,
                        const model::Service& /*service*/) {
  return (record.flags & kRecordSetHostname) != 0;
}
bool RecordHasUid(const PodRecord<model::Pod>& record, std::string_view uid) {
  return internal::SameText(record.pod->metadata.uid, uid);
}
bool RecordHasUid(const PodRecord<model::CompactPod>& record, std::string_view uid) {
  return (record.flags & kRecordBinaryUid) != 0
             ? internal::SameText(model::CompactPod::FormatUid(record.copy.uid).view(), uid)
             : internal::SameText(record.pod->uid().view(), uid);
}

bool SameOptional(const std::optional<std::string>& stored, std::string_view desired, bool set) {
  return stored.has_value() == set && (!set || internal::SameText(*stored, desired));
}

// Finds the stored slices that already hold, unchanged, runs of one group's endpoints, so that
// pass 3 need not build endpoints only to find them equal (EndpointGroup::held). Each check is
// at least as strict as the planner's own comparison of a stored endpoint with its desired form:
// a slice it cannot vouch for is left to the planner, which then sees its endpoints built.
template <typename PodT>
class HeldSliceFinder final {
 public:
  HeldSliceFinder(const model::Service& service, const std::vector<PodRecord<PodT>>& records,
                  std::vector<PodIp>& ips)
      : service_(service), records_(records), ips_(ips) {}

  static constexpr std::uint32_t kNobody = ~std::uint32_t{0};
  static constexpr std::uint32_t kHeld = kNobody - 1;

  // The held slices of one group, and which of its sorted positions they hold.
  struct Held {
    std::vector<const model::EndpointSlice*> slices;
    // Per sorted position, kHeld when a held slice holds it; empty when no slice is held.
    std::vector<std::uint32_t> positions;
    std::size_t count = 0;  // positions held
  };

  // The held slices of the group of `address_type` and `ports` whose records are `sorted`.
  // `stored` are all the stored slices handed to the planner.
  Held Find(std::span<const model::EndpointSlice> stored, const std::string& address_type,
            const std::vector<model::EndpointPort>& ports,
            const std::vector<SortRecord>& sorted) const {
    const bool ipv6 = address_type == model::kAddressTypeIPv6;
    // Which candidate holds each position; two holding one (a contested claim, which the planner
    // settles by name, or a slice that holds an endpoint twice) or a slice that is not a
    // candidate holding one rules the holders out.
    std::vector<std::uint32_t> holder;
    std::vector<const model::EndpointSlice*> candidates;
    std::vector<bool> ruled_out;
    std::optional<KeyIndex> index;  // built for the first slice in another order
    std::vector<std::size_t> positions;
    for (const model::EndpointSlice& slice : stored) {
      if (slice.address_type != address_type || slice.endpoints.empty() ||
          !SamePortSet(slice.ports, ports) || !OwnedByService(slice) ||
          !PositionsOf(slice, ipv6, sorted, index, positions)) {
        continue;
      }
      if (holder.empty()) {
        holder.assign(sorted.size(), kNobody);
      }
      const auto candidate = static_cast<std::uint32_t>(candidates.size());
      candidates.push_back(&slice);
      ruled_out.push_back(false);
      for (const std::size_t position : positions) {
        if (holder[position] != kNobody) {
          ruled_out[holder[position]] = true;
          ruled_out[candidate] = true;
        }
        holder[position] = candidate;
      }
    }
    Held held;
    if (candidates.empty()) {
      return held;
    }
    // Checked over the other stored slices the planner groups with these (of the address type
    // and the same PortMapKey, whatever their owner), by MayBeIdentityOf, which never misses an
    // endpoint a slice holds.
    const std::string port_key = PortMapKey(ports);
    for (const model::EndpointSlice& slice : stored) {
      if (slice.address_type != address_type || slice.endpoints.empty() ||
          std::find(candidates.begin(), candidates.end(), &slice) != candidates.end() ||
          (!SamePortSet(slice.ports, ports) && PortMapKey(slice.ports) != port_key)) {
        continue;
      }
      for (const model::Endpoint& endpoint : slice.endpoints) {
        const std::optional<SortRecord> key = KeyOf(endpoint, ipv6);
        if (!key) {
          continue;  // an address no pod has: it matches no desired endpoint
        }
        for (std::size_t i = LowerBound(sorted, 0, *key);
             i < sorted.size() && SameKey(sorted[i], *key); ++i) {
          const std::uint32_t holding = holder[i];
          if (holding != kNobody && MayBeIdentityOf(endpoint, sorted[i])) {
            ruled_out[holding] = true;
          }
        }
      }
    }
    for (std::uint32_t& holding : holder) {
      if (holding != kNobody) {
        holding = ruled_out[holding] ? kNobody : kHeld;
        held.count += holding == kHeld ? 1 : 0;
      }
    }
    held.positions = std::move(holder);
    for (std::size_t c = 0; c < candidates.size(); ++c) {
      if (!ruled_out[c]) {
        held.slices.push_back(candidates[c]);
      }
    }
    return held;
  }

 private:
  // The first position at or after `from` whose key is not before `key`.
  static std::size_t LowerBound(const std::vector<SortRecord>& sorted, std::size_t from,
                                const SortRecord& key) {
    const auto begin = sorted.begin();
    return static_cast<std::size_t>(
        std::lower_bound(begin + static_cast<std::ptrdiff_t>(from), sorted.end(), key,
                         [](const SortRecord& a, const SortRecord& b) { return KeyBefore(a, b); }) -
        begin);
  }

  // The planner's grouping (PortMapKey): the same ports in any order.
  static bool SamePortSet(const std::vector<model::EndpointPort>& a,
                          const std::vector<model::EndpointPort>& b) {
    return a == b || (a.size() == b.size() && std::is_permutation(a.begin(), a.end(), b.begin()));
  }

  // The sorted positions whose endpoints are `slice`'s, one for one; false when one of them is
  // not a desired endpoint as it stands. A slice this source wrote holds its endpoints in the
  // records' order (PositionsInOrder); one in another order (kube-controller-manager writes its
  // pod cache's) has each endpoint's record found by its key (PositionsByKey) in `index`, built
  // the first time it is needed.
  bool PositionsOf(const model::EndpointSlice& slice, bool ipv6,
                   const std::vector<SortRecord>& sorted, std::optional<KeyIndex>& index,
                   std::vector<std::size_t>& out) const {
    switch (PositionsInOrder(slice, ipv6, sorted, out)) {
      case InOrder::kAll:
        return true;
      case InOrder::kNotDesired:
        return false;
      case InOrder::kOtherOrder:
        break;
    }
    if (!index) {
      index.emplace(sorted);
    }
    return PositionsByKey(slice, ipv6, sorted, *index, out);
  }

  enum class InOrder {
    kAll,         // every endpoint is a desired one, in the records' order
    kOtherOrder,  // one is desired but comes before the previous one
    kNotDesired,  // one is not a desired endpoint as it stands
  };

  // The sorted positions whose endpoints are `slice`'s, one for one and in its order, when that
  // is the records' order. A slice this source wrote holds runs of consecutive positions, so the
  // position after the previous one is tried first.
  InOrder PositionsInOrder(const model::EndpointSlice& slice, bool ipv6,
                           const std::vector<SortRecord>& sorted,
                           std::vector<std::size_t>& out) const {
    out.clear();
    std::size_t next = 0;
    for (std::size_t k = 0; k < slice.endpoints.size(); ++k) {
      // The records and pods are visited at random, as in pass 3: fetched ahead.
      if (next + kPrefetchDistance < sorted.size()) {
        const PodRecord<PodT>& ahead = records_[sorted[next + kPrefetchDistance].record];
        __builtin_prefetch(&ahead);
        PrefetchFarForPass3(*ahead.pod);
      }
      const model::Endpoint& endpoint = slice.endpoints[k];
      std::optional<std::size_t> position;
      if (k > 0 && next < sorted.size() && IsEndpointOf(endpoint, sorted[next], ipv6)) {
        position = next;
      } else {
        position = Locate(endpoint, ipv6, sorted, next);
      }
      if (!position) {
        return k > 0 && Locate(endpoint, ipv6, sorted, 0) ? InOrder::kOtherOrder
                                                          : InOrder::kNotDesired;
      }
      out.push_back(*position);
      next = *position + 1;
    }
    return InOrder::kAll;
  }

  // The sorted positions whose endpoints are `slice`'s, one for one, in whatever order it holds
  // them; false when one of them is not a desired endpoint as it stands. Every endpoint's first
  // record is looked up (and fetched) before any endpoint is compared with its record.
  bool PositionsByKey(const model::EndpointSlice& slice, bool ipv6,
                      const std::vector<SortRecord>& sorted, const KeyIndex& index,
                      std::vector<std::size_t>& out) const {
    out.clear();
    for (const model::Endpoint& endpoint : slice.endpoints) {
      const std::optional<SortRecord> key = KeyOf(endpoint, ipv6);
      const std::optional<std::size_t> first = key ? index.Find(*key) : std::nullopt;
      if (!first) {
        return false;
      }
      out.push_back(*first);
    }
    for (std::size_t k = 0; k < out.size(); ++k) {
      if (k + kPrefetchDistance < out.size()) {
        __builtin_prefetch(&records_[sorted[out[k + kPrefetchDistance]].record]);
      }
      if (k + kPrefetchDistance / 2 < out.size()) {
        PrefetchFarForPass3(*records_[sorted[out[k + kPrefetchDistance / 2]].record].pod);
      }
      // Pods may share an address: each record of the key is tried.
      const SortRecord& key = sorted[out[k]];
      std::size_t i = out[k];
      while (i < sorted.size() && SameKey(sorted[i], key) &&
             !IsEndpointOf(slice.endpoints[k], sorted[i], ipv6)) {
        ++i;
      }
      if (i == sorted.size() || !SameKey(sorted[i], key)) {
        return false;
      }
      out[k] = i;
    }
    return true;
  }

  bool OwnedByService(const model::EndpointSlice& slice) const {
    return std::any_of(slice.metadata.owner_references.begin(),
                       slice.metadata.owner_references.end(),
                       [this](const model::OwnerReference& ref) {
                         return ref.uid == service_.metadata.uid && ref.kind == "Service" &&
                                ref.api_version == "v1";
                       });
  }

  // The sort key a record would have for `endpoint`'s smallest address, or nullopt when that
  // address is not one of the family's.
  static std::optional<SortRecord> KeyOf(const model::Endpoint& endpoint, bool ipv6) {
    if (endpoint.addresses.empty()) {
      return std::nullopt;
    }
    const std::string* smallest = &endpoint.addresses.front();
    for (std::size_t i = 1; i < endpoint.addresses.size(); ++i) {
      if (endpoint.addresses[i] < *smallest) {
        smallest = &endpoint.addresses[i];
      }
    }
    SortRecord key{0, 0, 0};
    if (ipv6) {
      if (smallest->find(':') == std::string::npos) {
        return std::nullopt;
      }
      PackPrefix(*smallest, key.hi, key.lo);
      return key;
    }
    std::optional<std::uint32_t> ipv4_key = CanonicalIpv4TextOrderKey(*smallest);
    if (!ipv4_key) {  // rare: an address another writer did not write canonically
      const std::optional<net::IpAddress> parsed = net::ParseIpSloppy(*smallest);
      if (!parsed || parsed->family != net::IpFamily::kIPv4) {
        return std::nullopt;
      }
      ipv4_key = Ipv4TextOrderKey(*parsed);
    }
    key.hi = std::uint64_t{*ipv4_key} << 32U;
    return key;
  }

  // The position, at `from` or after, of the record whose endpoint `endpoint` is, if any.
  std::optional<std::size_t> Locate(const model::Endpoint& endpoint, bool ipv6,
                                    const std::vector<SortRecord>& sorted, std::size_t from) const {
    const std::optional<SortRecord> key = KeyOf(endpoint, ipv6);
    if (!key) {
      return std::nullopt;
    }
    for (std::size_t i = LowerBound(sorted, from, *key);
         i < sorted.size() && SameKey(sorted[i], *key); ++i) {
      if (IsEndpointOf(endpoint, sorted[i], ipv6)) {
        return i;
      }
    }
    return std::nullopt;
  }

  // False only when `stored`, whose smallest address has `sorted`'s key, cannot have the identity
  // (spec §3.7) of the endpoint pass 3 would build from `sorted`: another pod, or hostname.
  // Several addresses are not compared, so it may say true for another identity.
  bool MayBeIdentityOf(const model::Endpoint& stored, const SortRecord& sorted) const {
    const PodRecord<PodT>& record = records_[sorted.record];
    if (!stored.target_ref || stored.target_ref->name.view() != PodName(*record.pod) ||
        stored.target_ref->namespace_ != RecordNamespace(record)) {
      return false;  // a desired endpoint's targetRef always names its pod
    }
    // The planner compares hostnames as texts, an unset one as "".
    const std::string_view hostname =
        RecordSetsHostname(record, service_) ? PodHostname(*record.pod) : std::string_view();
    return (stored.hostname ? std::string_view(*stored.hostname) : std::string_view()) == hostname;
  }

  // Whether `stored` equals the endpoint pass 3 would build from `sorted` in identity and in
  // every field the planner compares beyond it (EndpointEqualBeyondIdentity), read in place.
  // Stricter than the planner in one way: several addresses must be in the same order.
  bool IsEndpointOf(const model::Endpoint& stored, const SortRecord& sorted, bool ipv6) const {
    const PodRecord<PodT>& record = records_[sorted.record];
    const std::uint8_t single_flag = ipv6 ? kRecordSingleIpv6 : kRecordSingleIpv4;
    std::array<char, 16> buffer{};
    std::optional<std::string_view> single;
    if ((record.flags & single_flag) != 0) {
      single = SortKeyText(sorted, ipv6, buffer);
    }
    if (single) {
      if (stored.addresses.size() != 1 || !internal::SameText(stored.addresses.front(), *single)) {
        return false;
      }
    } else {
      model::EndpointAddresses addresses;
      AppendRecordAddresses(record, ipv6, ips_, /*take_texts=*/false, addresses);
      if (addresses != stored.addresses) {
        return false;
      }
    }
    if (!(stored.conditions == ConditionsOf(record.state, service_))) {
      return false;
    }
    if (!stored.target_ref) {
      return false;
    }
    const model::ObjectReference& ref = *stored.target_ref;
    if (!internal::SameText(ref.kind, "Pod") || !ref.api_version.view().empty() ||
        !ref.field_path.view().empty() || !internal::SameText(ref.name, PodName(*record.pod)) ||
        !internal::SameText(ref.namespace_, RecordNamespace(record)) ||
        !RecordHasUid(record, ref.uid.view())) {
      return false;
    }
    const std::string_view node_name = RecordNodeName(record);
    if (stored.node_name.has_value() != !node_name.empty() ||
        (stored.node_name && !internal::SameText(*stored.node_name, node_name))) {
      return false;
    }
    if (!SameOptional(stored.zone, record.zone != nullptr ? *record.zone : std::string_view(),
                      record.zone != nullptr)) {
      return false;
    }
    const bool sets_hostname = RecordSetsHostname(record, service_);
    if (stored.hostname.has_value() != sets_hostname ||
        (sets_hostname && !internal::SameText(*stored.hostname, PodHostname(*record.pod)))) {
      return false;
    }
    return true;
  }

  const model::Service& service_;
  const std::vector<PodRecord<PodT>>& records_;
  std::vector<PodIp>& ips_;  // only read: AppendRecordAddresses copies
};

template <typename PodT>
DesiredEndpoints DeriveFromPods(const model::Service& service, std::span<const PodT* const> pods,
                                const NodeLookup& nodes, const ServiceSourceOptions& options) {
  DesiredEndpoints desired;
  desired.owner.api_version = "v1";
  desired.owner.kind = "Service";
  desired.owner.namespace_ = service.metadata.namespace_;
  desired.owner.name = service.metadata.name;
  desired.owner.uid = service.metadata.uid;
  desired.owner.being_deleted = service.metadata.deletion_timestamp.has_value();
  desired.address_types = SupportedAddressTypes(service);
  desired.labels = ServiceSliceLabels(service, options.managed_by);
  desired.trigger_time = options.trigger_time;
  desired.traffic_distribution = service.spec.traffic_distribution;
  desired.topology_hints_requested =
      TopologyHintsEnabled(service.metadata.annotations, options.topology_mode_annotation);

  bool serve_ipv4 = false;
  bool serve_ipv6 = false;
  for (const std::string& type : desired.address_types) {
    serve_ipv4 = serve_ipv4 || type == model::kAddressTypeIPv4;
    serve_ipv6 = serve_ipv6 || type == model::kAddressTypeIPv6;
  }

  const std::size_t capacity = options.slice_capacity;

  // Pass 1: filter pods, resolve port sets and nodes, parse IPs once per pod.
  PortSets port_sets(service);
  NodeMemo node_memo(nodes);
  std::vector<PodRecord<PodT>> records;
  records.reserve(pods.size());
  std::vector<PodIp> ips;
  ips.reserve(pods.size() * (serve_ipv4 && serve_ipv6 ? 2 : 1));
  std::int64_t invalid_ips = 0;
  std::string first_invalid;  // names the first offender, so the Event says where to look
  for (std::size_t p = 0; p < pods.size(); ++p) {
    if (p + kPrefetchDistance < pods.size()) {
      PrefetchFarForPass1(*pods[p + kPrefetchDistance]);
    }
    if (p + kPrefetchDistance / 2 < pods.size()) {
      PrefetchNearForPass1(*pods[p + kPrefetchDistance / 2]);
    }
    const PodT* pod = pods[p];
    if (!InEndpoints(*pod)) {
      continue;
    }
    // The group exists from here on, even if the pod is skipped below (spec §3.6).
    const std::size_t key_index = port_sets.KeyFor(*pod);
    const std::string& node_name = PodNodeName(*pod);
    const FoundNode node = node_name.empty() ? FoundNode{} : FindNode(node_memo, *pod);
    if (node.node == nullptr && !service.spec.publish_not_ready_addresses) {
      desired.diagnostics.push_back(
          internal::NodeNotFoundDiagnostic(service, PodName(*pod), node_name));
      continue;
    }
    const auto ip_begin = static_cast<std::uint32_t>(ips.size());
    const auto serves = [&](const net::IpAddress& address) {
      return address.family == net::IpFamily::kIPv6 ? serve_ipv6 : serve_ipv4;
    };
    ForEachPodIp(
        *pod,
        [&](std::size_t i, const std::string& text) {
          std::optional<net::IpAddress> parsed = net::ParseIpSloppy(text);
          if (!parsed) {
            if (invalid_ips++ == 0) {  // decision §15.4: skipped and reported once per sync
              first_invalid =
                  internal::InvalidPodIpDetail(PodNamespace(*pod), PodName(*pod), i, text);
            }
            return;
          }
          if (!serves(*parsed)) {
            return;
          }
          const bool ipv6 = parsed->family == net::IpFamily::kIPv6;
          ips.push_back(ipv6 ? PodIp{true, 0, net::FormatIp(*parsed)}
                             : PodIp{false, Ipv4TextOrderKey(*parsed), {}});
        },
        [&](const net::IpAddress& address) {
          if (serves(address)) {
            const bool ipv6 = address.family == net::IpFamily::kIPv6;
            ips.push_back(ipv6 ? PodIp{true, 0, net::FormatIp(address)}
                               : PodIp{false, Ipv4TextOrderKey(address), {}});
          }
        });
    const auto ip_end = static_cast<std::uint32_t>(ips.size());
    if (ip_end == ip_begin) {
      continue;  // no address in any served family: no endpoint
    }
    PodRecord<PodT>& record = records.emplace_back(MakeRecord(
        *pod, node.zone, ip_begin, ip_end, static_cast<std::uint32_t>(key_index), service));
    std::uint32_t ipv4_count = 0;
    for (std::uint32_t k = ip_begin; k < ip_end; ++k) {
      ipv4_count += ips[k].ipv6 ? 0 : 1;
    }
    const std::uint32_t ipv6_count = ip_end - ip_begin - ipv4_count;
    record.flags |=
        (ipv4_count == 1 ? kRecordSingleIpv4 : 0) | (ipv6_count == 1 ? kRecordSingleIpv6 : 0);
  }
  if (invalid_ips > 0) {
    desired.diagnostics.push_back(
        internal::InvalidPodIpsDiagnostic(service, invalid_ips, first_invalid));
  }

  // Pass 2: per (port set, address type), order the records by identity: by the parsed IPs, and
  // only pods with equal addresses are read.
  std::vector<KeyGroup>& keys = port_sets.keys();
  const std::size_t type_count = desired.address_types.size();
  if (type_count == 0) {
    return desired;  // SupportedAddressTypes always yields one; keeps the divisions below safe
  }
  std::vector<bool> type_is_ipv6(type_count);
  for (std::size_t t = 0; t < type_count; ++t) {
    type_is_ipv6[t] = desired.address_types[t] == model::kAddressTypeIPv6;
  }
  const IdentityComparer<PodT> identity(service, records, ips);
  std::vector<std::vector<SortRecord>> buckets(keys.size() * type_count);
  if (keys.size() == 1) {
    for (auto& bucket : buckets) {
      bucket.reserve(records.size());
    }
  }
  for (std::uint32_t r = 0; r < records.size(); ++r) {
    for (std::size_t t = 0; t < type_count; ++t) {
      const PodIp* smallest = identity.SmallestAddress(r, type_is_ipv6[t]);
      if (smallest == nullptr) {
        continue;
      }
      SortRecord sort_record{0, 0, r};
      if (type_is_ipv6[t]) {
        PackPrefix(smallest->text, sort_record.hi, sort_record.lo);
      } else {
        sort_record.hi = std::uint64_t{smallest->ipv4_key} << 32U;
      }
      buckets[records[r].key_index * type_count + t].push_back(sort_record);
    }
  }
  for (std::size_t b = 0; b < buckets.size(); ++b) {
    OrderGroup(buckets[b], type_is_ipv6[b % type_count], identity);
  }

  // Stored slices that already hold runs of a group's endpoints unchanged are handed over as held
  // (EndpointGroup::held): a resync then builds only the endpoints that changed or moved.
  std::vector<typename HeldSliceFinder<PodT>::Held> held(buckets.size());
  if (!options.stored_slices.empty()) {
    const HeldSliceFinder<PodT> finder(service, records, ips);
    for (std::size_t b = 0; b < buckets.size(); ++b) {
      held[b] = finder.Find(options.stored_slices, desired.address_types[b % type_count],
                            keys[b / type_count].ports, buckets[b]);
    }
  }

  // Groups ordered by address type, then port map key.
  std::vector<std::size_t> key_order(keys.size());
  for (std::size_t k = 0; k < keys.size(); ++k) {
    key_order[k] = k;
  }
  std::sort(key_order.begin(), key_order.end(),
            [&](std::size_t a, std::size_t b) { return keys[a].key < keys[b].key; });
  std::vector<std::size_t> group_of(keys.size() * type_count);  // bucket -> group index
  desired.groups.reserve(keys.size() * type_count);
  for (std::size_t t = 0; t < type_count; ++t) {
    for (std::size_t k : key_order) {
      group_of[k * type_count + t] = desired.groups.size();
      EndpointGroup& group = desired.groups.emplace_back();
      group.address_type = desired.address_types[t];
      group.ports = t + 1 == type_count ? std::move(keys[k].ports) : keys[k].ports;
      group.sorted_unique = true;
      group.without_hints = true;
      const auto& group_held = held[k * type_count + t];
      group.held = group_held.slices;
      const std::size_t count = buckets[k * type_count + t].size() - group_held.count;
      if (capacity == 0) {
        group.endpoints.reserve(count);
        continue;
      }
      group.run_capacity = capacity;
      group.runs.resize((count + capacity - 1) / capacity);
      for (std::size_t run = 0; run < group.runs.size(); ++run) {
        group.runs[run].reserve(std::min(capacity, count - run * capacity));
      }
    }
  }

  // Pass 3: build each endpoint once, where it is written from, in sorted order. Each endpoint is
  // constructed as it is appended: building them in pod order instead needs every endpoint
  // constructed up front and then written again at a scattered position, two passes over
  // ~370 bytes an endpoint that cost more than reading the pods out of order. At 100k pods the
  // random reads are what this pass waits for (the core runs out of outstanding misses), so it
  // reads as few lines as it can: the record, and the pod's name (inline up to 36 characters); a
  // pod's only address of the family comes from its sort key when the key holds all of it, not
  // from `ips`.
  for (std::size_t b = 0; b < buckets.size(); ++b) {
    const std::size_t t = b % type_count;
    const bool ipv6 = type_is_ipv6[t];
    const std::uint8_t single_flag = ipv6 ? kRecordSingleIpv6 : kRecordSingleIpv4;
    EndpointGroup& group = desired.groups[group_of[b]];
    std::size_t position = 0;
    const std::vector<SortRecord>& bucket = buckets[b];
    const std::vector<std::uint32_t>& held_positions = held[b].positions;
    for (std::size_t i = 0; i < bucket.size(); ++i) {
      if (!held_positions.empty() && held_positions[i] == HeldSliceFinder<PodT>::kHeld) {
        continue;  // in a held slice: not built
      }
      // Sorted order visits the records and their pods at random: each is fetched ahead in its
      // own stage, since each address comes from the one before.
      if (i + 2 * kPrefetchDistance < bucket.size()) {
        __builtin_prefetch(&records[bucket[i + 2 * kPrefetchDistance].record]);
      }
      if (i + kPrefetchDistance < bucket.size()) {
        const PodRecord<PodT>& ahead = records[bucket[i + kPrefetchDistance].record];
        if ((ahead.flags & single_flag) == 0) {
          __builtin_prefetch(&ips[ahead.ip_begin]);
        }
        PrefetchFarForPass3(*ahead.pod);
      }
      if (i + kPrefetchDistance / 2 < bucket.size()) {
        PrefetchNearForPass3(*records[bucket[i + kPrefetchDistance / 2].record].pod);
      }
      const SortRecord& sorted = bucket[i];
      const PodRecord<PodT>& record = records[sorted.record];
      model::Endpoint& endpoint = capacity == 0 ? group.endpoints.emplace_back()
                                                : group.runs[position / capacity].emplace_back();
      ++position;
      if ((record.flags & single_flag) == 0 ||
          !AppendFromSortKey(sorted, ipv6, endpoint.addresses)) {
        // Each address belongs to one family, so an IPv6 text is moved out exactly once.
        AppendRecordAddresses(record, ipv6, ips, /*take_texts=*/true, endpoint.addresses);
      }
      FillEndpointFromRecord(endpoint, record, service);
    }
  }
  return desired;
}

}  // namespace

DesiredEndpoints DesiredFromService(const model::Service& service,
                                    std::span<const model::Pod* const> pods,
                                    const NodeLookup& nodes, const ServiceSourceOptions& options) {
  return DeriveFromPods(service, pods, nodes, options);
}

DesiredEndpoints DesiredFromService(const model::Service& service,
                                    std::span<const model::CompactPod* const> pods,
                                    const NodeLookup& nodes, const ServiceSourceOptions& options) {
  return DeriveFromPods(service, pods, nodes, options);
}

}  // namespace slicewright::reconcile

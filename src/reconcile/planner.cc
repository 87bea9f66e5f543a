#include "slicewright/reconcile/planner.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <functional>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "slicewright/base/check.h"
#include "slicewright/labels/validation.h"
#include "slicewright/model/well_known.h"
#include "slicewright/reconcile/endpoints_builder.h"
#include "slicewright/reconcile/hints.h"

#include "reconcile/same_text.h"

namespace slicewright::reconcile {
namespace {

using model::Endpoint;
using model::EndpointPort;
using model::EndpointSlice;

constexpr std::uint32_t kNotFound = UINT32_MAX;

using internal::Load64;
using internal::SameText;

std::string_view OptionalView(const model::OptionalBox<std::string>& value) {
  return value ? std::string_view(*value) : std::string_view();
}

int CompareViews(std::string_view a, std::string_view b) {
  const int c = a.compare(b);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

int CompareAddresses(const model::EndpointAddresses& a, const model::EndpointAddresses& b) {
  // Controllers write exactly one address per endpoint; only other writers need the sort.
  if (a.size() == 1 && b.size() == 1) {
    return CompareViews(a[0], b[0]);
  }
  if (a.empty() || b.empty()) {
    return a.size() < b.size() ? -1 : (a.size() > b.size() ? 1 : 0);
  }
  std::vector<std::string_view> sorted_a(a.begin(), a.end());
  std::vector<std::string_view> sorted_b(b.begin(), b.end());
  std::sort(sorted_a.begin(), sorted_a.end());
  std::sort(sorted_b.begin(), sorted_b.end());
  const auto [ia, ib] =
      std::mismatch(sorted_a.begin(), sorted_a.end(), sorted_b.begin(), sorted_b.end());
  if (ia == sorted_a.end() && ib == sorted_b.end()) {
    return 0;
  }
  if (ia == sorted_a.end()) {
    return -1;
  }
  if (ib == sorted_b.end()) {
    return 1;
  }
  return CompareViews(*ia, *ib);
}

// Big-endian word of 8 bytes, so integer order is byte order (std::string::compare's order).
std::uint64_t LoadOrdered64(const char* p) {
  const std::uint64_t word = Load64(p);
  if constexpr (std::endian::native == std::endian::little) {
    return __builtin_bswap64(word);
  } else {
    return word;
  }
}

// Three-way compare with std::string::compare's result sign, inlined for the same reason as
// SameText: checking that a source is sorted compares every adjacent pair of addresses.
[[gnu::always_inline]] inline int CompareText(std::string_view a, std::string_view b) {
  const std::size_t n = std::min(a.size(), b.size());
  const char* p = a.data();
  const char* q = b.data();
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const std::uint64_t x = LoadOrdered64(p + i);
    const std::uint64_t y = LoadOrdered64(q + i);
    if (x != y) {
      return x < y ? -1 : 1;
    }
  }
  if (i < n && n >= 8) {
    // The overlapped leading bytes are known equal, so the last word decides.
    const std::uint64_t x = LoadOrdered64(p + n - 8);
    const std::uint64_t y = LoadOrdered64(q + n - 8);
    if (x != y) {
      return x < y ? -1 : 1;
    }
    i = n;
  }
  for (; i < n; ++i) {
    const auto x = static_cast<unsigned char>(p[i]);
    const auto y = static_cast<unsigned char>(q[i]);
    if (x != y) {
      return x < y ? -1 : 1;
    }
  }
  return a.size() < b.size() ? -1 : (a.size() > b.size() ? 1 : 0);
}

template <typename Text>  // std::string or model::InlineString
inline bool SameOptionalText(const std::optional<Text>& a, const std::optional<Text>& b) {
  if (a.has_value() != b.has_value()) {
    return false;
  }
  return !a || SameText(*a, *b);
}

bool TargetRefsEqualIgnoringVersion(const std::optional<model::ObjectReference>& a,
                                    const std::optional<model::ObjectReference>& b) {
  if (a.has_value() != b.has_value()) {
    return false;
  }
  if (!a) {
    return true;
  }
  return SameText(a->uid, b->uid) && SameText(a->name, b->name) &&
         SameText(a->namespace_, b->namespace_) && SameText(a->kind, b->kind) &&
         SameText(a->api_version, b->api_version) && SameText(a->field_path, b->field_path);
}

// Equality beyond identity for an endpoint already matched by identity, so targetRef name and
// namespace are known equal. The fields most likely to differ go first.
bool MatchedEndpointEqualBeyondIdentity(const Endpoint& desired, const Endpoint& stored) {
  if (!(desired.conditions == stored.conditions)) {
    return false;
  }
  const auto& a = desired.target_ref;
  const auto& b = stored.target_ref;
  if (a.has_value() != b.has_value()) {
    return false;
  }
  if (a && !(SameText(a->uid, b->uid) && SameText(a->kind, b->kind) &&
             SameText(a->api_version, b->api_version) && SameText(a->field_path, b->field_path))) {
    return false;
  }
  return SameOptionalText(desired.node_name, stored.node_name) &&
         SameOptionalText(desired.zone, stored.zone);
}

// Identity equality without ordering work: the planner's common case is "same endpoint".
bool IdentityEqual(const Endpoint& a, const Endpoint& b) {
  if (a.addresses.size() == 1 && b.addresses.size() == 1) {
    if (!SameText(a.addresses[0], b.addresses[0])) {
      return false;
    }
  } else if (CompareAddresses(a.addresses, b.addresses) != 0) {
    return false;
  }
  if (!SameText(OptionalView(a.hostname), OptionalView(b.hostname))) {
    return false;
  }
  if (a.target_ref.has_value() != b.target_ref.has_value()) {
    const model::ObjectReference& ref = a.target_ref ? *a.target_ref : *b.target_ref;
    return ref.namespace_.empty() && ref.name.empty();
  }
  return !a.target_ref || (SameText(a.target_ref->name, b.target_ref->name) &&
                           SameText(a.target_ref->namespace_, b.target_ref->namespace_));
}

// True when a precedes b strictly in identity order. Decided by the first address alone when
// those differ (the usual case: one address per endpoint), which is what makes checking a
// sorted source cheap.
bool StrictlyBefore(const Endpoint& a, const Endpoint& b) {
  if (a.addresses.size() == 1 && b.addresses.size() == 1) {
    const int c = CompareText(a.addresses[0], b.addresses[0]);
    if (c != 0) {
      return c < 0;
    }
  }
  return CompareEndpointIdentity(a, b) < 0;
}

// The address in the fingerprint key at `data` (fingerprint.h) when its endpoint has exactly one
// address of fewer than 128 bytes (one length byte); a null view otherwise.
[[gnu::always_inline]] inline std::string_view SingleAddressOfKey(const char* data,
                                                                  std::size_t size) {
  if (size < 2 || data[0] != 1) {
    return {};
  }
  const auto length = static_cast<unsigned char>(data[1]);
  if (length >= 0x80 || size < 2U + length) {
    return {};
  }
  return {data + 2, length};
}

bool IsIgnoredKey(std::string_view key, std::span<const std::string> ignored) {
  return std::any_of(ignored.begin(), ignored.end(),
                     [key](const std::string& k) { return k == key; });
}

// The entries of a StringMap or a FlatStringMap by index, as the merge walk reads them.
struct MapEntries {
  explicit MapEntries(const model::StringMap& map) : tree(&map), it(map.begin()) {}
  explicit MapEntries(const FlatStringMap& map) : flat(&map) {}
  bool done() const { return tree != nullptr ? it == tree->end() : index == flat->size(); }
  std::string_view key() const {
    return tree != nullptr ? std::string_view(it->first) : flat->key(index);
  }
  std::string_view value() const {
    return tree != nullptr ? std::string_view(it->second) : flat->value(index);
  }
  void next() {
    if (tree != nullptr) {
      ++it;
    } else {
      ++index;
    }
  }
  const model::StringMap* tree = nullptr;
  model::StringMap::const_iterator it;
  const FlatStringMap* flat = nullptr;
  std::size_t index = 0;
};

// Map equality after dropping `ignored_in_stored` keys from `stored` and `ignored_in_desired`
// from `desired`; a merge walk, no allocation.
bool MapsDiffer(MapEntries s, MapEntries d, std::span<const std::string> ignored_in_stored,
                std::span<const std::string> ignored_in_desired) {
  while (true) {
    while (!s.done() && IsIgnoredKey(s.key(), ignored_in_stored)) {
      s.next();
    }
    while (!d.done() && IsIgnoredKey(d.key(), ignored_in_desired)) {
      d.next();
    }
    if (s.done() || d.done()) {
      return !s.done() || !d.done();
    }
    if (s.key() != d.key() || s.value() != d.value()) {
      return true;
    }
    s.next();
    d.next();
  }
}

// Whether `verified` still describes `stored` (the same version) and `desired` still has the
// same keys at the same positions (the same ids): then they are equal one for one.
bool StillHolds(const VerifiedRun& verified, const EndpointSlice& stored,
                const FingerprintRun& desired) {
  const std::size_t count = verified.ids.size();
  return count != 0 && count == stored.endpoints.size() && verified.first <= desired.ids.size() &&
         count <= desired.ids.size() - verified.first &&
         verified.resource_version == stored.metadata.resource_version &&
         verified.uid == stored.metadata.uid &&
         std::memcmp(desired.ids.data() + verified.first, verified.ids.data(),
                     count * sizeof(std::uint64_t)) == 0;
}

bool OwnedBy(const EndpointSlice& slice, const Owner& owner) {
  return std::any_of(slice.metadata.owner_references.begin(), slice.metadata.owner_references.end(),
                     [&](const model::OwnerReference& ref) {
                       return ref.uid == owner.uid && ref.kind == owner.kind &&
                              ref.api_version == owner.api_version;
                     });
}

// Desired positions a stored slice keeps, in its order, as runs of consecutive positions: a slice
// this planner wrote is one run, so a resync records one pair per slice, not one per endpoint.
class PositionRuns {
 public:
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  void clear() {
    runs_.clear();
    size_ = 0;
  }
  void Add(std::uint32_t start, std::size_t count) {
    if (count == 0) {
      return;
    }
    if (!runs_.empty() && end_of_last() == start) {
      runs_.back().second += static_cast<std::uint32_t>(count);
    } else {
      runs_.emplace_back(start, static_cast<std::uint32_t>(count));
    }
    size_ += count;
  }
  // One past the last position added; requires !empty().
  std::uint32_t end_of_last() const { return runs_.back().first + runs_.back().second; }
  bool is_one_run() const { return runs_.size() == 1; }
  std::uint32_t first() const { return runs_.front().first; }  // requires !empty()
  template <typename Fn>
  void ForEach(Fn&& fn) const {
    for (const auto& [start, count] : runs_) {
      for (std::uint32_t k = 0; k < count; ++k) {
        fn(start + k);
      }
    }
  }

 private:
  std::vector<std::pair<std::uint32_t, std::uint32_t>> runs_;  // (first position, count)
  std::size_t size_ = 0;
};

// Whether `group`'s endpoints, in either form, are in strictly increasing identity order.
bool StrictlyIncreasing(const EndpointGroup& group) {
  const Endpoint* previous = nullptr;
  const auto increasing = [&previous](const std::vector<Endpoint>& endpoints) {
    for (const Endpoint& endpoint : endpoints) {
      if (previous != nullptr && !StrictlyBefore(*previous, endpoint)) {
        return false;
      }
      previous = &endpoint;
    }
    return true;
  };
  if (group.runs.empty()) {
    return increasing(group.endpoints);
  }
  return std::all_of(group.runs.begin(), group.runs.end(), increasing);
}

// The desired endpoints of one group, sorted by identity and unique, consumed as slices claim
// them. Lookups try the position after the previous match first: slices this planner wrote hold
// runs of consecutive desired endpoints, so a full resync costs one comparison per endpoint.
class DesiredSet {
 public:
  // `movable`: the same group when the caller gave up its input (endpoints are then moved out),
  // else nullptr. `fingerprints`: nullptr, or the group's keys, one per endpoint.
  // `lookups`: endpoints will be looked up by identity (there are stored slices to match).
  DesiredSet(const EndpointGroup& group, EndpointGroup* movable, const FingerprintRun* fingerprints,
             bool lookups)
      : endpoints_(group.endpoints),
        movable_(movable),
        group_(group),
        run_capacity_(group.runs.empty() ? 0 : group.run_capacity),
        size_(group.endpoint_count()) {
    // The position arithmetic below relies on the runs' documented shape (desired.h).
    SW_CHECK(group.runs.empty() || (group.run_capacity > 0 && group.endpoints.empty()));
    for (std::size_t r = 0; r + 1 < group.runs.size(); ++r) {
      SW_CHECK(group.runs[r].size() == group.run_capacity);
    }
    SW_CHECK(group.runs.empty() || group.runs.back().size() <= group.run_capacity);
    // Lookups and the sortedness check read endpoints at random: index several runs once for them.
    if (group.runs.size() > 1 && (lookups || !group.sorted_unique)) {
      by_position_.reserve(size_);
      for (const std::vector<Endpoint>& run : group.runs) {
        for (const Endpoint& endpoint : run) {
          by_position_.push_back(&endpoint);
        }
      }
    }
    // One pass over adjacent pairs, in every build and whatever the source promised: a source
    // that breaks its sorted_unique promise gets its endpoints sorted, and the plan says so
    // (promise_broken), instead of a wrong plan in silence. The promise only picks the cheapest
    // pass: the keys when there are any, else the endpoints as they are laid out.
    bool sorted_unique = true;
    if (fingerprints != nullptr && run_capacity_ == 0 && !endpoints_.empty()) {
      // The keys hold the addresses back to back: no visit to the endpoints' address vectors.
      const char* keys = fingerprints->keys.data();
      const std::uint32_t* ends = fingerprints->ends.data();
      std::string_view previous = SingleAddressOfKey(keys, ends[0]);
      for (std::size_t i = 1; i < endpoints_.size(); ++i) {
        const std::string_view current =
            SingleAddressOfKey(keys + ends[i - 1], ends[i] - ends[i - 1]);
        const int c = previous.data() != nullptr && current.data() != nullptr
                          ? CompareText(previous, current)
                          : 0;
        if (c > 0 || (c == 0 && !StrictlyBefore(endpoints_[i - 1], endpoints_[i]))) {
          sorted_unique = false;
          break;
        }
        previous = current;
      }
    } else if (group.sorted_unique) {
      sorted_unique = StrictlyIncreasing(group);  // no index of the runs needed
    } else {
      for (std::size_t i = 1; i < size_ && sorted_unique; ++i) {
        sorted_unique = StrictlyBefore(Input(i - 1), Input(i));
      }
    }
    promise_broken_ = group.sorted_unique && !sorted_unique;
    // A sorted source (the usual case) needs no permutation: positions are input indexes.
    if (!sorted_unique) {
      order_.resize(size_);
      std::iota(order_.begin(), order_.end(), 0U);
      std::stable_sort(order_.begin(), order_.end(), [&](std::uint32_t a, std::uint32_t b) {
        return CompareEndpointIdentity(Input(a), Input(b)) < 0;
      });
      // Equal identities: the later one replaces the earlier (EndpointSet.Insert).
      std::vector<std::uint32_t> unique;
      unique.reserve(order_.size());
      for (std::uint32_t index : order_) {
        if (!unique.empty() && CompareEndpointIdentity(Input(unique.back()), Input(index)) == 0) {
          unique.back() = index;
        } else {
          unique.push_back(index);
        }
      }
      order_ = std::move(unique);
      permuted_ = true;
      size_ = order_.size();
    }
    consumed_.assign(size_, 0);
    remaining_ = size_;
  }

  std::size_t size() const { return size_; }
  std::size_t remaining() const { return remaining_; }
  // Where the next lookup looks first: the position after the previous match.
  std::uint32_t hint() const { return hint_; }
  const Endpoint& at(std::uint32_t position) const { return Input(Index(position)); }

  // The position of `endpoint`'s identity if it is desired and not yet claimed; kNotFound else.
  std::uint32_t Claim(const Endpoint& endpoint) {
    const std::uint32_t position =
        hint_ < size_ && IdentityEqual(at(hint_), endpoint) ? hint_ : Find(endpoint);
    if (position == kNotFound) {
      return kNotFound;
    }
    if (consumed_[position] != 0) {
      ++contested_;
      return kNotFound;
    }
    consumed_[position] = 1;
    --remaining_;
    hint_ = position + 1;
    return position;
  }

  // Claims, from the position after the previous match on, the run of unclaimed positions whose
  // keys equal stored's keys [from, ...) one for one (so identity and every compared field are
  // equal), and appends them to `kept`. Returns how many it claimed; the caller compares the
  // rest field by field. `fingerprints` are the group's keys, indexed like its endpoints.
  std::size_t ClaimRunByFingerprint(const FingerprintRun& stored, std::size_t from,
                                    const FingerprintRun& fingerprints, PositionRuns& kept) {
    const std::size_t start = hint_;
    const std::size_t limit = std::min(stored.size() - from, size_ - std::min(size_, start));
    std::size_t count = 0;
    if (!permuted_ && limit > 0 && std::memchr(consumed_.data() + start, 1, limit) == nullptr) {
      // Keys are self-delimiting, so equal byte ranges mean equal keys one for one: a slice that
      // holds a run of desired endpoints unchanged costs one memcmp.
      const std::size_t d_begin = fingerprints.begin_of(start);
      const std::size_t d_end = fingerprints.ends[start + limit - 1];
      const std::size_t s_begin = stored.begin_of(from);
      const std::size_t s_end = stored.ends[from + limit - 1];
      if (d_end - d_begin == s_end - s_begin &&
          std::memcmp(fingerprints.keys.data() + d_begin, stored.keys.data() + s_begin,
                      d_end - d_begin) == 0) {
        count = limit;
      }
    }
    if (count == 0) {
      while (count < limit && consumed_[start + count] == 0) {
        const auto position = static_cast<std::uint32_t>(start + count);
        if (fingerprints.key(Index(position)) != stored.key(from + count)) {
          break;
        }
        ++count;
      }
    }
    std::memset(consumed_.data() + start, 1, count);
    kept.Add(static_cast<std::uint32_t>(start), count);
    remaining_ -= count;
    hint_ = start + count;
    return count;
  }

  // Claims, from the position after the previous match on, the run of unclaimed positions whose
  // endpoints equal `stored`'s one for one in identity and every compared field, and appends
  // them to `kept`: what Claim does for each, its bookkeeping done once per run. Returns how many
  // it claimed.
  std::size_t ClaimRunOfEqual(std::span<const Endpoint> stored, PositionRuns& kept) {
    const std::size_t start = hint_;
    std::size_t count = 0;
    while (count < stored.size() && start + count < size_ && consumed_[start + count] == 0) {
      const Endpoint& endpoint = at(static_cast<std::uint32_t>(start + count));
      if (!IdentityEqual(endpoint, stored[count]) ||
          !MatchedEndpointEqualBeyondIdentity(endpoint, stored[count])) {
        break;
      }
      ++count;
    }
    // Nothing to claim (an empty group has no consumed_ storage to write to).
    if (count == 0) return 0;
    std::memset(consumed_.data() + start, 1, count);
    kept.Add(static_cast<std::uint32_t>(start), count);
    remaining_ -= count;
    hint_ = static_cast<std::uint32_t>(start + count);
    return count;
  }

  // Claims positions [first, first + count), known (VerifiedRun) to hold a stored slice's keys one
  // for one, unless one of them is claimed already or positions are permuted; appends them to
  // `kept`. The same claims the lookups would make, without reading a key.
  bool ClaimVerified(std::size_t first, std::size_t count, PositionRuns& kept) {
    if (permuted_ || count == 0 || first > size_ || count > size_ - first ||
        std::memchr(consumed_.data() + first, 1, count) != nullptr) {
      return false;
    }
    std::memset(consumed_.data() + first, 1, count);
    kept.Add(static_cast<std::uint32_t>(first), count);
    remaining_ -= count;
    hint_ = static_cast<std::uint32_t>(first + count);
    return true;
  }

  // How many lookups found their identity already claimed: two stored slices (or one twice)
  // hold the same endpoint, and which one keeps it depends on the order slices are visited in.
  std::size_t contested() const { return contested_; }

  // The group promised sorted_unique and was not: it was sorted here.
  bool promise_broken() const { return promise_broken_; }

  // Positions are identity order over an unsorted input, not input indexes.
  bool permuted() const { return permuted_; }

  // Every position unclaimed again, as before the first claim.
  void ResetClaims() {
    std::fill(consumed_.begin(), consumed_.end(), std::uint8_t{0});
    remaining_ = size_;
    hint_ = 0;
    cursor_ = 0;
    contested_ = 0;
  }

  // The next unclaimed position in identity order, claimed. Requires remaining() > 0.
  std::uint32_t PopNext() {
    while (consumed_[cursor_] != 0) {
      ++cursor_;
    }
    consumed_[cursor_] = 1;
    --remaining_;
    return cursor_++;
  }

  // The endpoint at `position`, moved out when the caller gave up its input.
  Endpoint Take(std::uint32_t position) {
    const std::uint32_t index = Index(position);
    if (movable_ == nullptr) {
      return Input(index);
    }
    if (run_capacity_ != 0) {
      return std::move(movable_->runs[index / run_capacity_][index % run_capacity_]);
    }
    return std::move(movable_->endpoints[index]);
  }

  // When the next min(max, remaining()) positions PopNext would claim are exactly one whole run
  // of a movable input cut at `max`, claims them and moves that run into `out` as one vector.
  bool TakeRun(std::size_t max, std::vector<Endpoint>& out) {
    if (movable_ == nullptr || run_capacity_ != max || permuted_) {
      return false;
    }
    while (cursor_ < size_ && consumed_[cursor_] != 0) {
      ++cursor_;
    }
    if (cursor_ % max != 0 || cursor_ >= size_) {
      return false;
    }
    const std::size_t length = std::min(max, size_ - cursor_);
    if (length != std::min(max, remaining_) ||
        std::memchr(consumed_.data() + cursor_, 1, length) != nullptr) {
      return false;
    }
    std::vector<Endpoint>& run = movable_->runs[cursor_ / max];
    SW_DCHECK(run.size() == length);
    out = std::move(run);
    std::memset(consumed_.data() + cursor_, 1, length);
    remaining_ -= length;
    cursor_ += static_cast<std::uint32_t>(length);
    return true;
  }

 private:
  // The position of `endpoint`'s identity, claimed or not; kNotFound when it is not desired.
  // A binary search, until the hint has missed often: slices another controller wrote (upstream
  // appends endpoints in its pod lister's order) miss on nearly every endpoint, and a binary
  // search costs about log2(n) cache-missing comparisons each. From then on one-address
  // endpoints, nearly all of them, are found through an index of the desired addresses.
  std::uint32_t Find(const Endpoint& endpoint) {
    if (endpoint.addresses.size() == 1) {
      // The index costs about as much as 1/32 of the group's lookups by binary search.
      if (!indexed_ && ++misses_ > size_ / 32) {
        IndexAddresses();
      }
      if (indexed_) {
        const std::string& address = endpoint.addresses[0];
        // Identity order puts the endpoints of one address list next to each other.
        for (std::uint32_t position = FindAddress(address);
             position < size_ && at(position).addresses.size() == 1 &&
             at(position).addresses[0] == address;
             ++position) {
          if (IdentityEqual(at(position), endpoint)) {
            return position;
          }
        }
        return kNotFound;
      }
    }
    std::size_t low = 0;
    std::size_t count = size_;
    while (count > 0) {
      const std::size_t half = count / 2;
      if (CompareEndpointIdentity(at(static_cast<std::uint32_t>(low + half)), endpoint) < 0) {
        low += half + 1;
        count -= half + 1;
      } else {
        count = half;
      }
    }
    if (low < size_ &&
        CompareEndpointIdentity(at(static_cast<std::uint32_t>(low)), endpoint) == 0) {
      return static_cast<std::uint32_t>(low);
    }
    return kNotFound;
  }

  // Indexes the first position of each address among one-address desired endpoints (which
  // identity order keeps next to each other): open addressing in a table of at least twice as
  // many slots, probed linearly from the address's hash. A std::unordered_map cost a heap node
  // per endpoint and a chase to it per lookup, a third of a foreign-order resync.
  void IndexAddresses() {
    indexed_ = true;
    std::size_t slots = 16;
    while (slots < 2 * size_) {
      slots *= 2;
    }
    by_address_.assign(slots, AddressSlot{});
    for (std::uint32_t position = 0; position < size_; ++position) {
      const Endpoint& desired = at(position);
      if (desired.addresses.size() != 1 ||
          (position > 0 && at(position - 1).addresses.size() == 1 &&
           at(position - 1).addresses[0] == desired.addresses[0])) {
        continue;
      }
      const std::size_t hash = std::hash<std::string_view>{}(desired.addresses[0]);
      std::size_t slot = hash & (slots - 1);
      while (by_address_[slot].position != kNotFound) {
        slot = (slot + 1) & (slots - 1);
      }
      by_address_[slot] = AddressSlot{position, Tag(hash)};
    }
  }

  // The position IndexAddresses gave `address`, or kNotFound. The tag spares reading the
  // endpoint of a slot that holds another address.
  std::uint32_t FindAddress(std::string_view address) const {
    const std::size_t hash = std::hash<std::string_view>{}(address);
    const std::size_t mask = by_address_.size() - 1;
    for (std::size_t slot = hash & mask; by_address_[slot].position != kNotFound;
         slot = (slot + 1) & mask) {
      const AddressSlot& entry = by_address_[slot];
      if (entry.tag == Tag(hash) && at(entry.position).addresses[0] == address) {
        return entry.position;
      }
    }
    return kNotFound;
  }

  struct AddressSlot {
    std::uint32_t position = kNotFound;  // kNotFound: a free slot
    std::uint32_t tag = 0;               // the hash's high bits
  };
  static std::uint32_t Tag(std::size_t hash) {
    return static_cast<std::uint32_t>(static_cast<std::uint64_t>(hash) >> 32U);
  }

  std::uint32_t Index(std::uint32_t position) const {
    return permuted_ ? order_[position] : position;
  }
  // The input endpoint at `index` (input order, before any permutation).
  const Endpoint& Input(std::size_t index) const {
    if (run_capacity_ == 0) {
      return endpoints_[index];
    }
    return by_position_.empty() ? group_.endpoint_at(index) : *by_position_[index];
  }

  std::span<const Endpoint> endpoints_;
  EndpointGroup* movable_;
  const EndpointGroup& group_;
  // Non-zero for a runs input, whose endpoints are then reached through by_position_ when it is
  // filled, else through group_.endpoint_at.
  std::size_t run_capacity_ = 0;
  std::vector<const Endpoint*> by_position_;
  std::vector<std::uint32_t> order_;  // identity order, when the input was not already in it
  std::vector<std::uint8_t> consumed_;
  std::size_t size_ = 0;
  std::size_t remaining_ = 0;
  std::uint32_t hint_ = 0;
  std::uint32_t cursor_ = 0;
  std::size_t contested_ = 0;
  std::size_t misses_ = 0;  // one-address lookups the hint missed, until indexed_
  bool indexed_ = false;
  std::vector<AddressSlot> by_address_;  // see IndexAddresses
  bool permuted_ = false;
  bool promise_broken_ = false;
};

// The planner's per-address-type working state (upstream's slicesToCreate/Update/Delete).
struct TypeWork {
  std::vector<EndpointSlice> creates;
  std::vector<EndpointSlice> updates;
  std::vector<const EndpointSlice*> deletes;
  std::vector<const EndpointSlice*> unchanged;
  std::int64_t added = 0;
  std::int64_t removed = 0;
  // Every group planned into `creates` was EndpointGroup::without_hints (placeholders have no
  // endpoints).
  bool creates_without_hints = true;
};

class Planner {
 public:
  Planner(const DesiredEndpoints& desired, const PlanOptions& options,
          std::vector<EndpointGroup>* movable_groups)
      : desired_(desired),
        options_(options),
        movable_groups_(movable_groups),
        max_(static_cast<std::size_t>(std::max(1, options.max_endpoints_per_slice))),
        trigger_time_text_(desired.trigger_time.IsZero()
                               ? std::string()
                               : model::FormatRfc3339Nano(desired.trigger_time)) {}

  Plan Run(std::span<const EndpointSlice> existing);

 private:
  // The usable fingerprints of `stored`, or nullptr (see PlanOptions::existing_fingerprints).
  const SliceFingerprints* FingerprintsOf(const EndpointSlice& stored) const;
  // The cache entry of `stored` (PlanOptions::verified_runs), or nullptr.
  VerifiedRun* VerifiedOf(const EndpointSlice& stored) const;

  void PlanAddressType(const std::string& address_type,
                       const std::vector<const EndpointSlice*>& existing, Plan& plan);
  void PlanGroup(const EndpointGroup& group, EndpointGroup* movable,
                 const std::vector<const EndpointSlice*>& existing, TypeWork& work, Plan& plan);
  void ApplyHints(const std::string& address_type, TypeWork& work, Plan& plan);
  void Finalize(TypeWork& work, Plan& plan);

  EndpointSlice NewSlice(const std::string& address_type,
                         const std::vector<EndpointPort>& ports) const;
  bool MetadataChanged(const EndpointSlice& stored) const;
  bool IsPlaceholderFor(const EndpointSlice& stored, const std::string& address_type) const;
  void PrepareWrite(EndpointSlice& slice) const;

  const DesiredEndpoints& desired_;
  const PlanOptions& options_;
  std::vector<EndpointGroup>* movable_groups_;
  const std::size_t max_;
  // The trigger-time annotation's value, formatted once for every slice written.
  const std::string trigger_time_text_;
  std::vector<std::string> populated_address_types_;
  std::span<const EndpointSlice> existing_;
};

VerifiedRun* Planner::VerifiedOf(const EndpointSlice& stored) const {
  std::vector<VerifiedRun>* all = options_.verified_runs;
  if (all == nullptr || all->size() != existing_.size()) {
    return nullptr;
  }
  return &(*all)[static_cast<std::size_t>(&stored - existing_.data())];
}

const SliceFingerprints* Planner::FingerprintsOf(const EndpointSlice& stored) const {
  const std::vector<SliceFingerprints>* all = options_.existing_fingerprints;
  if (all == nullptr || all->size() != existing_.size()) {
    return nullptr;
  }
  const auto index = static_cast<std::size_t>(&stored - existing_.data());
  SW_DCHECK(index < all->size());
  const SliceFingerprints& fingerprints = (*all)[index];
  return FingerprintsDescribe(fingerprints, stored) ? &fingerprints : nullptr;
}

EndpointSlice Planner::NewSlice(const std::string& address_type,
                                const std::vector<EndpointPort>& ports) const {
  EndpointSlice slice;
  slice.metadata.generate_name = SliceGenerateName(desired_.owner.name);
  slice.metadata.namespace_ = desired_.owner.namespace_;
  slice.metadata.owner_references.push_back(
      model::OwnerReference{desired_.owner.api_version, desired_.owner.kind, desired_.owner.name,
                            desired_.owner.uid, true, true});
  slice.metadata.labels = desired_.labels;
  slice.address_type = address_type;
  slice.ports = ports;
  return slice;
}

const std::vector<std::string>& AnnotationsIgnoredInStored() {
  static const std::vector<std::string> keys = {
      std::string(model::kAnnotationLastChangeTriggerTime),
      std::string(model::kAnnotationLastAppliedConfig),
      // Mirrored slices do not carry our Endpoints controller's mark (MirroredSliceAnnotations),
      // but one kube-controller-manager mirrored from an Endpoints we wrote does: tolerated, not
      // rewritten.
      std::string(kAnnotationWrittenSubsets)};
  return keys;
}

bool Planner::MetadataChanged(const EndpointSlice& stored) const {
  // The fingerprints' flat copies of the maps, when they describe this version of the slice.
  const SliceFingerprints* fingerprints = FingerprintsOf(stored);
  const auto stored_map = [fingerprints](const model::StringMap& map,
                                         const FlatStringMap SliceFingerprints::*flat) {
    return fingerprints != nullptr ? MapEntries(fingerprints->*flat) : MapEntries(map);
  };
  const auto& ignored = options_.labels_ignored_for_change;
  if (MapsDiffer(stored_map(stored.metadata.labels, &SliceFingerprints::labels),
                 MapEntries(desired_.labels), ignored, ignored)) {
    return true;
  }
  return options_.compare_annotations &&
         MapsDiffer(stored_map(stored.metadata.annotations, &SliceFingerprints::annotations),
                    MapEntries(desired_.annotations), AnnotationsIgnoredInStored(), {});
}

// Upstream compares namespace, labels, address type, ports and endpoints; decision §15.2 adds
// ownership so a placeholder left by a previous Service with the same name is replaced.
bool Planner::IsPlaceholderFor(const EndpointSlice& stored, const std::string& address_type) const {
  return stored.metadata.namespace_ == desired_.owner.namespace_ &&
         stored.metadata.labels == desired_.labels && stored.address_type == address_type &&
         stored.ports.empty() && stored.endpoints.empty() && OwnedBy(stored, desired_.owner);
}

void Planner::PrepareWrite(EndpointSlice& slice) const {
  slice.metadata.labels = desired_.labels;
  if (options_.compare_annotations) {
    slice.metadata.annotations = desired_.annotations;
  }
  const std::string trigger_key(model::kAnnotationLastChangeTriggerTime);
  if (desired_.trigger_time.IsZero()) {
    slice.metadata.annotations.erase(trigger_key);
  } else {
    slice.metadata.annotations[trigger_key] = trigger_time_text_;
  }
}

Plan Planner::Run(std::span<const EndpointSlice> existing) {
  Plan plan;
  existing_ = existing;
  if (options_.verified_runs != nullptr && options_.verified_runs->size() != existing.size()) {
    options_.verified_runs->assign(existing.size(), VerifiedRun{});
  }
  if (options_.topology != nullptr) {
    populated_address_types_.assign(options_.topology->populated_address_types.begin(),
                                    options_.topology->populated_address_types.end());
  }
  std::vector<std::string> address_types = desired_.address_types;
  std::sort(address_types.begin(), address_types.end());
  address_types.erase(std::unique(address_types.begin(), address_types.end()), address_types.end());

  std::vector<std::vector<const EndpointSlice*>> by_type(address_types.size());
  std::vector<const EndpointSlice*> unsupported;
  for (const EndpointSlice& slice : existing) {
    auto it = std::lower_bound(address_types.begin(), address_types.end(), slice.address_type);
    if (it != address_types.end() && *it == slice.address_type) {
      by_type[static_cast<std::size_t>(it - address_types.begin())].push_back(&slice);
    } else {
      unsupported.push_back(&slice);
    }
  }

  for (std::size_t i = 0; i < address_types.size(); ++i) {
    PlanAddressType(address_types[i], by_type[i], plan);
  }

  // Slices of address types no longer served go last, never recycled (spec §4.1 step 3).
  std::vector<std::string> dropped_types;
  for (const EndpointSlice* slice : unsupported) {
    plan.actions.push_back(SliceAction{Operation::kDelete, *slice});
    if (std::find(dropped_types.begin(), dropped_types.end(), slice->address_type) ==
        dropped_types.end()) {
      dropped_types.push_back(slice->address_type);
    }
  }
  if (options_.topology != nullptr) {
    for (const std::string& type : dropped_types) {
      plan.topology.push_back(TopologyOutcome{type, false, {}});
    }
  }

  plan.diagnostics.insert(plan.diagnostics.begin(), desired_.diagnostics.begin(),
                          desired_.diagnostics.end());
  const bool hints_enabled = desired_.topology_hints_requested;
  const bool use_traffic_distribution =
      desired_.traffic_distribution.has_value() &&
      IsValidTrafficDistribution(*desired_.traffic_distribution,
                                 options_.prefer_same_traffic_distribution) &&
      !hints_enabled;
  plan.stats.topology_label = options_.topology != nullptr && hints_enabled ? "Auto" : "Disabled";
  if (use_traffic_distribution) {
    plan.stats.traffic_distribution_label = *desired_.traffic_distribution;
  }
  return plan;
}

void Planner::PlanAddressType(const std::string& address_type,
                              const std::vector<const EndpointSlice*>& existing, Plan& plan) {
  TypeWork work;

  // Owned slices grouped by port set; slices of another owner go straight to deletion (§4.2).
  std::vector<std::pair<std::string, std::vector<const EndpointSlice*>>> existing_by_key;
  // A Service's slices mostly carry the same ports: the previous slice's key is reused for equal
  // ports instead of built again (building it was a tenth of a one-pod sync).
  const EndpointSlice* previous = nullptr;
  std::size_t previous_entry = 0;
  for (const EndpointSlice* slice : existing) {
    if (options_.ownership_enforced && !OwnedBy(*slice, desired_.owner)) {
      work.deletes.push_back(slice);
      continue;
    }
    if (previous != nullptr && previous->ports == slice->ports) {
      existing_by_key[previous_entry].second.push_back(slice);
      continue;
    }
    std::string key = PortMapKey(slice->ports);
    auto it = std::find_if(existing_by_key.begin(), existing_by_key.end(),
                           [&](const auto& entry) { return entry.first == key; });
    if (it == existing_by_key.end()) {
      existing_by_key.emplace_back(std::move(key), std::vector<const EndpointSlice*>{slice});
      it = existing_by_key.end() - 1;
    } else {
      it->second.push_back(slice);
    }
    previous = slice;
    previous_entry = static_cast<std::size_t>(it - existing_by_key.begin());
  }

  // Slices are visited by name, so ties in the packing break the same way whatever the list order.
  // Callers mostly list them by name already (the controllers do), and then one pass checks it.
  const auto by_name = [](const EndpointSlice* a, const EndpointSlice* b) {
    return a->metadata.name < b->metadata.name;
  };
  for (auto& entry : existing_by_key) {
    if (!std::is_sorted(entry.second.begin(), entry.second.end(), by_name)) {
      std::stable_sort(entry.second.begin(), entry.second.end(), by_name);
    }
  }

  // Desired groups of this type, in port-key order.
  std::vector<std::pair<std::string, std::size_t>> groups;
  for (std::size_t i = 0; i < desired_.groups.size(); ++i) {
    if (desired_.groups[i].address_type == address_type) {
      groups.emplace_back(PortMapKey(desired_.groups[i].ports), i);
    }
  }
  std::stable_sort(groups.begin(), groups.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });

  static const std::vector<const EndpointSlice*> kNoSlices;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    if (g > 0 && groups[g].first == groups[g - 1].first) {
      continue;  // sources keep keys unique
    }
    const std::size_t index = groups[g].second;
    auto existing_it =
        std::find_if(existing_by_key.begin(), existing_by_key.end(),
                     [&](const auto& entry) { return entry.first == groups[g].first; });
    const std::vector<const EndpointSlice*>& group_existing =
        existing_it == existing_by_key.end() ? kNoSlices : existing_it->second;
    EndpointGroup* movable = movable_groups_ != nullptr ? &(*movable_groups_)[index] : nullptr;
    work.creates_without_hints = work.creates_without_hints && desired_.groups[index].without_hints;
    PlanGroup(desired_.groups[index], movable, group_existing, work, plan);
    plan.stats.groups.back().port_key = groups[g].first;
  }

  // Port sets no longer desired: all their slices go.
  for (const auto& entry : existing_by_key) {
    const std::string& key = entry.first;
    const bool wanted = std::any_of(groups.begin(), groups.end(),
                                    [&key](const auto& group) { return group.first == key; });
    if (!wanted) {
      work.deletes.insert(work.deletes.end(), entry.second.begin(), entry.second.end());
    }
  }

  // Placeholder (§4.4): an address type with nothing to publish still gets one empty slice.
  if (options_.placeholder_enabled && existing.size() == work.deletes.size() &&
      work.creates.empty()) {
    if (work.deletes.size() == 1 && IsPlaceholderFor(*work.deletes[0], address_type)) {
      work.unchanged.push_back(work.deletes[0]);
      work.deletes.clear();
    } else {
      work.creates.push_back(NewSlice(address_type, {}));
    }
    const std::string empty_key = PortMapKey({});
    auto stats =
        std::find_if(plan.stats.groups.begin(), plan.stats.groups.end(), [&](const GroupStats& s) {
          return s.address_type == address_type && s.port_key == empty_key;
        });
    if (stats == plan.stats.groups.end()) {
      plan.stats.groups.push_back(GroupStats{address_type, empty_key, 0, 1});
    } else {
      stats->endpoints = 0;
      stats->slices = 1;
    }
  }

  plan.stats.per_address_type.push_back(AddressTypeStats{address_type, work.added, work.removed});
  ApplyHints(address_type, work, plan);
  Finalize(work, plan);
}

void Planner::PlanGroup(const EndpointGroup& group, EndpointGroup* movable,
                        const std::vector<const EndpointSlice*>& existing, TypeWork& work,
                        Plan& plan) {
  // Fingerprints on both sides turn the common case (slices holding runs of desired endpoints
  // unchanged) into one byte comparison per slice.
  const bool desired_fingerprints =
      !group.fingerprints.empty() && group.fingerprints.size() == group.endpoints.size();
  SW_DCHECK(!desired_fingerprints || group.fingerprints == FingerprintEndpoints(group.endpoints));
  DesiredSet desired(group, movable, desired_fingerprints ? &group.fingerprints : nullptr,
                     !existing.empty());
  // Endpoints of held slices are desired too, though the source did not build them.
  const std::size_t held_endpoints = group.desired_count() - group.endpoint_count();
  const std::size_t desired_count = desired.size() + held_endpoints;
  if (desired.promise_broken()) {
    // A bug of the source, not of the owner; an Event on the owner makes it visible where a
    // debug-only check would not (SW_BUG would abort debug builds, and tests of this path).
    plan.diagnostics.push_back(
        Diagnostic{Diagnostic::Severity::kWarning, "EndpointOrderPromiseBroken",
                   "The endpoints of address type " + group.address_type + " and ports [" +
                       PortMapKey(group.ports) +
                       "] were promised sorted and unique but were not; planned after sorting them",
                   false});
  }

  // The slices of this group, in input order, with what happens to each.
  enum class Fate { kUnchanged, kUpdate, kDelete };
  struct Entry {
    const EndpointSlice* stored = nullptr;
    Fate fate = Fate::kUnchanged;
    EndpointSlice copy;  // valid when fate == kUpdate
    PositionRuns kept;   // desired positions to write, when endpoints changed
  };
  // Step 1: keep desired endpoints in place (in their desired form), drop the rest.
  PositionRuns kept;
  const auto match = [&](const EndpointSlice* stored, Entry& entry, std::int64_t& removed) {
    kept.clear();
    bool endpoint_updated = false;
    const SliceFingerprints* stored_fingerprints =
        desired_fingerprints ? FingerprintsOf(*stored) : nullptr;
    const std::size_t stored_count = stored->endpoints.size();
    VerifiedRun* verified = stored_fingerprints != nullptr && group.fingerprints.has_ids()
                                ? VerifiedOf(*stored)
                                : nullptr;
    const bool matched_verified = verified != nullptr &&
                                  StillHolds(*verified, *stored, group.fingerprints) &&
                                  desired.ClaimVerified(verified->first, stored_count, kept);
#ifndef NDEBUG
    for (std::size_t k = 0; matched_verified && k < stored_count; ++k) {
      SW_DCHECK(group.fingerprints.key(verified->first + k) ==
                stored_fingerprints->endpoints.key(k));
    }
#endif
    bool try_run = true;
    for (std::size_t j = matched_verified ? stored_count : 0; j < stored_count; ++j) {
      if (stored_fingerprints != nullptr) {
        const std::size_t run = desired.ClaimRunByFingerprint(stored_fingerprints->endpoints, j,
                                                              group.fingerprints, kept);
#ifndef NDEBUG
        // The run claimed the `run` positions that end kept's last run.
        for (std::size_t k = 0; k < run; ++k) {
          const auto position = static_cast<std::uint32_t>(kept.end_of_last() - run + k);
          SW_DCHECK(
              IdentityEqual(desired.at(position), stored->endpoints[j + k]) &&
              MatchedEndpointEqualBeyondIdentity(desired.at(position), stored->endpoints[j + k]));
        }
#endif
        j += run;
        if (j == stored_count) {
          break;
        }
      } else if (try_run) {
        j += desired.ClaimRunOfEqual(std::span(stored->endpoints).subspan(j), kept);
        if (j == stored_count) {
          break;
        }
      }
      const Endpoint& endpoint = stored->endpoints[j];
      const std::uint32_t hint = desired.hint();
      const std::uint32_t position = desired.Claim(endpoint);
      // A run is tried again once an endpoint is found where the run would have looked: in
      // slices another controller wrote nearly none is, and each try compares once more.
      try_run = position == hint;
      if (position == kNotFound) {
        continue;
      }
      kept.Add(position, 1);
      if (!endpoint_updated &&
          !MatchedEndpointEqualBeyondIdentity(desired.at(position), endpoint)) {
        endpoint_updated = true;
      }
    }
    if (verified != nullptr && !matched_verified) {
      // Every stored endpoint kept in place, unchanged, as one run of positions: the keys at
      // those positions are the stored keys one for one. Only positions that are input indexes
      // name the ids of those keys (a permuted input's would name other endpoints' ids).
      if (!endpoint_updated && stored_count > 0 && kept.size() == stored_count &&
          kept.is_one_run() && !desired.permuted()) {
        const auto* ids = group.fingerprints.ids.data() + kept.first();
        verified->uid = stored->metadata.uid;
        verified->resource_version = stored->metadata.resource_version;
        verified->first = kept.first();
        verified->ids.assign(ids, ids + stored_count);
      } else {
        verified->ids.clear();
      }
    }
    entry = Entry{stored, Fate::kUnchanged, {}, {}};
    if (endpoint_updated || kept.size() != stored->endpoints.size()) {
      if (stored->endpoints.size() > kept.size()) {
        removed += static_cast<std::int64_t>(stored->endpoints.size() - kept.size());
      }
      if (kept.empty()) {
        entry.fate = Fate::kDelete;
      } else {
        entry.fate = Fate::kUpdate;
        entry.kept = kept;
      }
    } else if (MetadataChanged(*stored)) {
      entry.fate = Fate::kUpdate;
      entry.copy = *stored;  // endpoints untouched, hints preserved
    }
  };

  // Slices are matched in the order of their first endpoint, so that each one's run starts where
  // the previous one's ended and the lookup's hint finds it: in name order (generated names are
  // random) every slice began with a binary search over cold endpoints, a tenth of a one-pod
  // sync. The order changes the result only when slices hold the same endpoint (a contested
  // claim); then the match is done again in name order, upstream's.
  std::vector<std::uint32_t> visit(existing.size());
  std::iota(visit.begin(), visit.end(), 0U);
  if (existing.size() > 1) {
    // Each slice's first endpoint is a cache miss of its own: issued together, they overlap.
    for (const EndpointSlice* stored : existing) {
      if (!stored->endpoints.empty()) {
        __builtin_prefetch(stored->endpoints.data());
      }
    }
    std::stable_sort(visit.begin(), visit.end(), [&](std::uint32_t a, std::uint32_t b) {
      const std::vector<Endpoint>& left = existing[a]->endpoints;
      const std::vector<Endpoint>& right = existing[b]->endpoints;
      if (left.empty() || right.empty()) {
        return left.empty() && !right.empty();
      }
      return CompareEndpointIdentity(left.front(), right.front()) < 0;
    });
  }
  // A held slice (EndpointGroup::held) holds desired endpoints the source left out, unchanged and
  // claimed by no other slice: it is kept as matching would have kept it, without a lookup.
  std::vector<const EndpointSlice*> held(group.held.begin(), group.held.end());
  std::sort(held.begin(), held.end());
  std::size_t held_found = 0;
  const auto keep_held = [&](const EndpointSlice* stored, Entry& entry) {
    if (held.empty() || !std::binary_search(held.begin(), held.end(), stored)) {
      return false;
    }
    ++held_found;
    entry = Entry{stored, Fate::kUnchanged, {}, {}};
    if (MetadataChanged(*stored)) {
      entry.fate = Fate::kUpdate;
      entry.copy = *stored;  // endpoints untouched, hints preserved
    }
    return true;
  };
  std::vector<Entry> entries(existing.size());
  std::int64_t removed = 0;
  for (const std::uint32_t index : visit) {
    if (!keep_held(existing[index], entries[index])) {
      match(existing[index], entries[index], removed);
    }
  }
  if (desired.contested() != 0 && !std::is_sorted(visit.begin(), visit.end())) {
    desired.ResetClaims();
    removed = 0;
    held_found = 0;
    for (std::size_t index = 0; index < existing.size(); ++index) {
      if (!keep_held(existing[index], entries[index])) {
        match(existing[index], entries[index], removed);
      }
    }
  }
  if (held_found != held.size()) {
    // A held slice that is not among this group's stored slices: its endpoints are missing from
    // the plan. A bug of the source, made visible as EndpointOrderPromiseBroken is.
    plan.diagnostics.push_back(
        Diagnostic{Diagnostic::Severity::kWarning, "HeldSlicePromiseBroken",
                   "A slice handed over as holding endpoints of address type " +
                       group.address_type + " and ports [" + PortMapKey(group.ports) +
                       "] unchanged is not one of its stored slices",
                   false});
  }
  work.removed += removed;
  work.added += static_cast<std::int64_t>(desired.remaining());

  // Endpoints are taken (possibly moved) only now: every lookup above compared against them.
  for (Entry& entry : entries) {
    if (entry.kept.empty()) {
      continue;
    }
    entry.copy.metadata = entry.stored->metadata;
    entry.copy.address_type = entry.stored->address_type;
    entry.copy.ports = entry.stored->ports;
    entry.copy.endpoints.reserve(std::max(entry.kept.size(), std::min(max_, desired_count)));
    entry.kept.ForEach(
        [&](std::uint32_t position) { entry.copy.endpoints.push_back(desired.Take(position)); });
    entry.kept = {};
  }

  // Step 2: slices being written anyway are topped up first, fullest first.
  if (desired.remaining() > 0) {
    std::vector<Entry*> updating;
    for (Entry& entry : entries) {
      if (entry.fate == Fate::kUpdate) {
        updating.push_back(&entry);
      }
    }
    std::stable_sort(updating.begin(), updating.end(), [](const Entry* a, const Entry* b) {
      return a->copy.endpoints.size() > b->copy.endpoints.size();
    });
    for (Entry* entry : updating) {
      while (desired.remaining() > 0 && entry->copy.endpoints.size() < max_) {
        entry->copy.endpoints.push_back(desired.Take(desired.PopNext()));
      }
    }
  }

  // Step 3: the rest goes into new full slices, and a remainder below `max` into the unchanged
  // slice it fills closest to full, if it fits entirely.
  std::vector<EndpointSlice> creates;
  while (desired.remaining() > 0) {
    Entry* fill = nullptr;
    if (desired.remaining() < max_) {
      std::size_t closest_diff = max_;
      for (Entry& entry : entries) {
        if (entry.fate != Fate::kUnchanged) {
          continue;
        }
        const std::size_t size = entry.stored->endpoints.size() + desired.remaining();
        if (size > max_) {
          continue;
        }
        const std::size_t diff = max_ - size;
        if (diff < closest_diff) {
          closest_diff = diff;
          fill = &entry;
          if (diff == 0) {
            break;
          }
        }
      }
    }
    EndpointSlice* target = nullptr;
    if (fill != nullptr) {
      fill->fate = Fate::kUpdate;
      fill->copy = *fill->stored;
      target = &fill->copy;
    } else {
      creates.push_back(NewSlice(group.address_type, group.ports));
      target = &creates.back();
      if (desired.TakeRun(max_, target->endpoints)) {
        continue;  // built where it is written from: nothing moved one by one
      }
      target->endpoints.reserve(std::min(max_, desired.remaining()));
    }
    while (desired.remaining() > 0 && target->endpoints.size() < max_) {
      target->endpoints.push_back(desired.Take(desired.PopNext()));
    }
  }

  std::int64_t slices = static_cast<std::int64_t>(existing.size() + creates.size());
  for (Entry& entry : entries) {
    switch (entry.fate) {
      case Fate::kUnchanged:
        work.unchanged.push_back(entry.stored);
        break;
      case Fate::kUpdate:
        work.updates.push_back(std::move(entry.copy));
        break;
      case Fate::kDelete:
        work.deletes.push_back(entry.stored);
        --slices;
        break;
    }
  }
  for (EndpointSlice& slice : creates) {
    work.creates.push_back(std::move(slice));
  }
  plan.stats.groups.push_back(
      GroupStats{group.address_type, {}, static_cast<std::int64_t>(desired_count), slices});
}

void Planner::ApplyHints(const std::string& address_type, TypeWork& work, Plan& plan) {
  HintsWorkingSet hints_work{&work.creates, &work.updates, &work.unchanged, {}};
  hints_work.creates_without_hints = work.creates_without_hints;
  if (options_.existing_fingerprints != nullptr) {
    hints_work.any_hint_of_unchanged = [this](const EndpointSlice& slice) {
      const SliceFingerprints* fingerprints = FingerprintsOf(slice);
      return fingerprints != nullptr ? fingerprints->any_hints : AnyHint(slice);
    };
  }
  const bool hints_enabled = desired_.topology_hints_requested;
  if (options_.topology != nullptr && hints_enabled) {
    const bool populated =
        std::find(populated_address_types_.begin(), populated_address_types_.end(), address_type) !=
        populated_address_types_.end();
    plan.topology.push_back(AddTopologyHints(options_.topology->zone_ratios, populated,
                                             address_type, hints_work, plan.diagnostics));
    return;
  }
  if (options_.topology != nullptr) {
    // HasPopulatedHints is per Service: it fires while any address type still has hints.
    if (!populated_address_types_.empty()) {
      plan.diagnostics.push_back(Diagnostic{
          Diagnostic::Severity::kWarning, "TopologyAwareHintsDisabled",
          "Topology Aware Hints has been disabled, addressType: " + address_type, false});
    }
    std::erase(populated_address_types_, address_type);
    plan.topology.push_back(TopologyOutcome{address_type, false, {}});
  }
  // useTD (spec §6.1) excludes a requested topology mode even without a topology cache, as the
  // traffic_distribution_label of Run does: then every hint goes.
  const bool use_traffic_distribution =
      desired_.traffic_distribution.has_value() &&
      IsValidTrafficDistribution(*desired_.traffic_distribution,
                                 options_.prefer_same_traffic_distribution) &&
      !hints_enabled;
  if (use_traffic_distribution) {
    ReconcileTrafficDistributionHints(*desired_.traffic_distribution, hints_work);
  } else {
    RemoveAllHints(hints_work);
  }
}

void Planner::Finalize(TypeWork& work, Plan& plan) {
  // Recycling (§4.5): a create and a delete of the same address type become one update of the
  // deleted slice. Decision §15.6: the update carries the old resourceVersion.
  for (std::size_t i = 0; i < work.deletes.size() && !work.creates.empty();) {
    const EndpointSlice& doomed = *work.deletes[i];
    EndpointSlice& candidate = work.creates.back();
    const bool owned = !options_.ownership_enforced || OwnedBy(doomed, desired_.owner);
    if (doomed.address_type == candidate.address_type && owned) {
      candidate.metadata.name = doomed.metadata.name;
      candidate.metadata.resource_version = doomed.metadata.resource_version;
      candidate.metadata.uid = doomed.metadata.uid;
      candidate.metadata.generation = doomed.metadata.generation;
      candidate.metadata.creation_timestamp = doomed.metadata.creation_timestamp;
      work.updates.push_back(std::move(candidate));
      work.creates.pop_back();
      work.deletes.erase(work.deletes.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
  if (desired_.owner.being_deleted) {
    work.creates.clear();
  }

  for (EndpointSlice& slice : work.creates) {
    PrepareWrite(slice);
    plan.actions.push_back(SliceAction{Operation::kCreate, std::move(slice)});
  }
  for (EndpointSlice& slice : work.updates) {
    PrepareWrite(slice);
    plan.actions.push_back(SliceAction{Operation::kUpdate, std::move(slice)});
  }
  for (const EndpointSlice* slice : work.deletes) {
    plan.actions.push_back(SliceAction{Operation::kDelete, *slice});
  }
  for (const EndpointSlice* slice : work.unchanged) {
    plan.unchanged.push_back(slice->metadata.name);
  }
}

}  // namespace

int CompareEndpointIdentity(const Endpoint& a, const Endpoint& b) {
  int c = CompareAddresses(a.addresses, b.addresses);
  if (c != 0) {
    return c;
  }
  c = CompareViews(OptionalView(a.hostname), OptionalView(b.hostname));
  if (c != 0) {
    return c;
  }
  const std::string_view a_ns = a.target_ref ? std::string_view(a.target_ref->namespace_) : "";
  const std::string_view b_ns = b.target_ref ? std::string_view(b.target_ref->namespace_) : "";
  c = CompareViews(a_ns, b_ns);
  if (c != 0) {
    return c;
  }
  const std::string_view a_name = a.target_ref ? std::string_view(a.target_ref->name) : "";
  const std::string_view b_name = b.target_ref ? std::string_view(b.target_ref->name) : "";
  return CompareViews(a_name, b_name);
}

bool EndpointEqualBeyondIdentity(const Endpoint& desired, const Endpoint& stored) {
  return desired.conditions == stored.conditions &&
         SameOptionalText(desired.node_name, stored.node_name) &&
         SameOptionalText(desired.zone, stored.zone) &&
         TargetRefsEqualIgnoringVersion(desired.target_ref, stored.target_ref);
}

std::string PortMapKey(std::span<const EndpointPort> ports) {
  // Each port as "name/protocol/port/appProtocol" with '~' for an unset field; none of name,
  // protocol or port can hold '/' or '~', so the text is unambiguous. Sorted: order-insensitive.
  std::vector<std::string> parts;
  parts.reserve(ports.size());
  for (const EndpointPort& port : ports) {
    std::string part = port.name ? *port.name : "~";
    part += '/';
    part += port.protocol ? *port.protocol : "~";
    part += '/';
    part += port.port ? std::to_string(*port.port) : "~";
    part += '/';
    part += port.app_protocol ? *port.app_protocol : "~";
    parts.push_back(std::move(part));
  }
  std::sort(parts.begin(), parts.end());
  std::string key;
  for (const std::string& part : parts) {
    if (!key.empty()) {
      key += ',';
    }
    key += part;
  }
  return key;
}

std::string SliceGenerateName(std::string_view owner_name) {
  // Upstream validates "<name>-" as a DNS subdomain with the trailing dash masked.
  std::string masked(owner_name);
  masked += 'a';
  if (labels::IsDNS1123Subdomain(masked).empty()) {
    return std::string(owner_name) + "-";
  }
  return std::string(owner_name);
}

Plan PlanSlices(const DesiredEndpoints& desired, std::span<const EndpointSlice> existing,
                const PlanOptions& options) {
  return Planner(desired, options, nullptr).Run(existing);
}

Plan PlanSlices(DesiredEndpoints&& desired, std::span<const EndpointSlice> existing,
                const PlanOptions& options) {
  return Planner(desired, options, &desired.groups).Run(existing);
}

}  // namespace slicewright::reconcile

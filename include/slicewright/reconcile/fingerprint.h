// Endpoint fingerprints: a canonical, collision-free byte encoding (the key) of exactly the fields
// the planner compares between a stored and a desired endpoint (identity, spec §3.7, and
// EqualBeyondHash). Keys are computed once, when a source derives an endpoint or when the informer
// cache observes a stored slice, and kept back to back per slice or group, so a sync that changes
// one pod compares a few contiguous byte ranges instead of two 440-byte endpoints per endpoint.
// Plain values; the functions are pure and reentrant.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "slicewright/model/discovery.h"
#include "slicewright/model/meta.h"

namespace slicewright::reconcile {

// Appends `endpoint`'s key to `out`: the number of addresses and each address (in order,
// LEB128-length-prefixed), hostname, the three conditions, targetRef (kind, namespace, name, uid,
// apiVersion, fieldPath; not resourceVersion), nodeName and zone, each optional field with a
// presence mark. Keys are injective (equal keys: the planner sees the same endpoint needing no
// rewrite) and self-delimiting (no key is a prefix of another), so two runs of keys are equal
// exactly when their keys are equal one for one. Hints are left out, as the planner ignores them.
// The planner also reads the leading address of a group's keys to check their identity order, so
// the layout is part of this contract.
void AppendFingerprintKey(const model::Endpoint& endpoint, std::string& out);
std::string FingerprintKey(const model::Endpoint& endpoint);

// The keys of a sequence of endpoints, back to back.
struct FingerprintRun {
  std::string keys;
  std::vector<std::uint32_t> ends;  // ends[i]: the offset just past key i
  // ids[i]: a number unique in the process, given to key i when a method below wrote it, so that
  // equal ids mean equal keys without reading them (VerifiedRun). Code that edits `keys` or
  // `ends` directly must clear `ids`; a run whose ids are not one per key vouches for nothing.
  std::vector<std::uint64_t> ids;

  std::size_t size() const { return ends.size(); }
  bool empty() const { return ends.empty(); }
  std::size_t begin_of(std::size_t i) const { return i == 0 ? 0 : ends[i - 1]; }
  std::string_view key(std::size_t i) const {
    return std::string_view(keys).substr(begin_of(i), ends[i] - begin_of(i));
  }
  void clear();
  void Append(const model::Endpoint& endpoint);
  // Key i becomes `endpoint`'s (in place when the length is unchanged, the common case).
  void Replace(std::size_t i, const model::Endpoint& endpoint);
  void Insert(std::size_t i, const model::Endpoint& endpoint);
  void Erase(std::size_t i);
  bool has_ids() const { return ids.size() == ends.size(); }
  // Equal keys; the ids tell when the keys were written, not what they are.
  friend bool operator==(const FingerprintRun& a, const FingerprintRun& b) {
    return a.keys == b.keys && a.ends == b.ends;
  }
};

FingerprintRun FingerprintEndpoints(const std::vector<model::Endpoint>& endpoints);

// A label or annotation map as one block of text, read in key order: comparing it costs a line or
// two, where a walk over a cold std::map costs a cache miss per node and per long string.
class FlatStringMap {
 public:
  FlatStringMap() = default;
  explicit FlatStringMap(const model::StringMap& map);

  std::size_t size() const { return ends_.size() / 2; }
  std::string_view key(std::size_t i) const { return Slice(2 * i); }
  std::string_view value(std::size_t i) const { return Slice(2 * i + 1); }
  friend bool operator==(const FlatStringMap&, const FlatStringMap&) = default;

 private:
  std::string_view Slice(std::size_t k) const {
    const std::size_t begin = k == 0 ? 0 : ends_[k - 1];
    return std::string_view(text_).substr(begin, ends_[k] - begin);
  }
  std::string text_;
  std::vector<std::uint32_t> ends_;  // key 0 end, value 0 end, key 1 end, ...
};

// The fingerprints of a stored slice's endpoints, in order, and the version of the slice they were
// taken from. The planner uses them only for the slice with this uid and a non-empty, equal
// resourceVersion and the same number of endpoints; any other slice is compared field by field.
struct SliceFingerprints {
  std::string uid;
  std::string resource_version;
  FingerprintRun endpoints;
  // Whether any endpoint carries hints (which the keys leave out): when the planner leaves the
  // slice unchanged and hints must go, this answers without reading every endpoint again.
  bool any_hints = false;
  // The slice's labels and annotations, for the planner's metadata comparison.
  FlatStringMap labels;
  FlatStringMap annotations;
  friend bool operator==(const SliceFingerprints&, const SliceFingerprints&) = default;
};

SliceFingerprints FingerprintSlice(const model::EndpointSlice& slice);

// What one plan found and the next can reuse: the stored slice with this uid and resourceVersion
// held exactly the desired keys with these ids, at positions [first, first + ids.size()) of its
// group. While the slice keeps its version and the group still has those ids there, the two are
// equal without reading either side's keys (PlanOptions::verified_runs).
struct VerifiedRun {
  std::string uid;
  std::string resource_version;
  std::uint32_t first = 0;
  std::vector<std::uint64_t> ids;
};

// Whether `fingerprints` were taken of `slice` as it is (see SliceFingerprints).
bool FingerprintsDescribe(const SliceFingerprints& fingerprints, const model::EndpointSlice& slice);

}  // namespace slicewright::reconcile

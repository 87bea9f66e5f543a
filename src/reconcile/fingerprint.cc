#include "slicewright/reconcile/fingerprint.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "slicewright/reconcile/hints.h"

namespace slicewright::reconcile {
namespace {

// The source of FingerprintRun::ids: a key written anywhere in the process gets the next one.
std::uint64_t NextKeyId() {
  static std::atomic<std::uint64_t> last{0};
  return last.fetch_add(1, std::memory_order_relaxed) + 1;
}

// Field marks: an optional field is either absent or present and then followed by its value.
constexpr char kAbsent = 0;
constexpr char kPresent = 1;

// Writes into a buffer sized beforehand: one resize per key, no per-field append calls.
class KeyWriter {
 public:
  explicit KeyWriter(char* out) : out_(out) {}

  void Byte(char c) { *out_++ = c; }
  void Length(std::size_t length) {
    while (length >= 0x80) {
      *out_++ = static_cast<char>(0x80 | (length & 0x7f));
      length >>= 7;
    }
    *out_++ = static_cast<char>(length);
  }
  void Text(std::string_view text) {
    Length(text.size());
    std::memcpy(out_, text.data(), text.size());
    out_ += text.size();
  }
  // `Optional`: std::optional or model::OptionalBox of std::string or model::InlineString.
  template <typename Optional>
  void OptionalText(const Optional& text) {
    if (!text) {
      Byte(kAbsent);
      return;
    }
    Byte(kPresent);
    Text(*text);
  }
  char* position() const { return out_; }

 private:
  char* out_;
};

char Tristate(const std::optional<bool>& value) { return value ? (*value ? '\2' : '\1') : '\0'; }

// An upper bound of the key's size: each length prefix takes at most 5 bytes here.
std::size_t KeyBound(const model::Endpoint& endpoint) {
  std::size_t size = std::size_t{5} + 3 + 1 + std::size_t{3} * 6;
  for (const std::string& address : endpoint.addresses) {
    size += address.size() + 5;
  }
  if (endpoint.target_ref) {
    const model::ObjectReference& ref = *endpoint.target_ref;
    size += ref.kind.size() + ref.namespace_.size() + ref.name.size() + ref.uid.size() +
            ref.api_version.size() + ref.field_path.size() + std::size_t{6} * 5;
  }
  size += endpoint.node_name ? endpoint.node_name->size() : 0;
  size += endpoint.zone ? endpoint.zone->size() : 0;
  size += endpoint.hostname ? endpoint.hostname->size() : 0;
  return size;
}

}  // namespace

void AppendFingerprintKey(const model::Endpoint& endpoint, std::string& out) {
  const std::size_t start = out.size();
  out.resize(start + KeyBound(endpoint));
  KeyWriter w(out.data() + start);
  w.Length(endpoint.addresses.size());
  for (const std::string& address : endpoint.addresses) {
    w.Text(address);
  }
  w.OptionalText(endpoint.hostname);
  w.Byte(Tristate(endpoint.conditions.ready));
  w.Byte(Tristate(endpoint.conditions.serving));
  w.Byte(Tristate(endpoint.conditions.terminating));
  if (endpoint.target_ref) {
    const model::ObjectReference& ref = *endpoint.target_ref;
    w.Byte(kPresent);
    w.Text(ref.kind);
    w.Text(ref.namespace_);
    w.Text(ref.name);
    w.Text(ref.uid);
    w.Text(ref.api_version);
    w.Text(ref.field_path);
  } else {
    w.Byte(kAbsent);
  }
  w.OptionalText(endpoint.node_name);
  w.OptionalText(endpoint.zone);
  out.resize(static_cast<std::size_t>(w.position() - out.data()));
}

std::string FingerprintKey(const model::Endpoint& endpoint) {
  std::string key;
  AppendFingerprintKey(endpoint, key);
  return key;
}

void FingerprintRun::clear() {
  keys.clear();
  ends.clear();
  ids.clear();
}

void FingerprintRun::Append(const model::Endpoint& endpoint) {
  AppendFingerprintKey(endpoint, keys);
  ends.push_back(static_cast<std::uint32_t>(keys.size()));
  if (ids.size() + 1 == ends.size()) {  // the run had an id per key before this one
    ids.push_back(NextKeyId());
  }
}

void FingerprintRun::Replace(std::size_t i, const model::Endpoint& endpoint) {
  if (has_ids()) {
    ids[i] = NextKeyId();
  }
  const std::string key = FingerprintKey(endpoint);
  const std::size_t begin = begin_of(i);
  const std::size_t old_size = ends[i] - begin;
  if (key.size() == old_size) {
    std::memcpy(keys.data() + begin, key.data(), key.size());
    return;
  }
  keys.replace(begin, old_size, key);
  const auto delta = static_cast<std::uint32_t>(key.size() - old_size);  // modular
  for (std::size_t k = i; k < ends.size(); ++k) {
    ends[k] += delta;
  }
}

void FingerprintRun::Insert(std::size_t i, const model::Endpoint& endpoint) {
  if (has_ids()) {
    ids.insert(ids.begin() + static_cast<std::ptrdiff_t>(i), NextKeyId());
  }
  const std::string key = FingerprintKey(endpoint);
  const std::size_t begin = begin_of(i);
  keys.insert(begin, key);
  ends.insert(ends.begin() + static_cast<std::ptrdiff_t>(i),
              static_cast<std::uint32_t>(begin + key.size()));
  for (std::size_t k = i + 1; k < ends.size(); ++k) {
    ends[k] += static_cast<std::uint32_t>(key.size());
  }
}

void FingerprintRun::Erase(std::size_t i) {
  if (has_ids()) {
    ids.erase(ids.begin() + static_cast<std::ptrdiff_t>(i));
  }
  const std::size_t begin = begin_of(i);
  const std::size_t size = ends[i] - begin;
  keys.erase(begin, size);
  ends.erase(ends.begin() + static_cast<std::ptrdiff_t>(i));
  for (std::size_t k = i; k < ends.size(); ++k) {
    ends[k] -= static_cast<std::uint32_t>(size);
  }
}

FlatStringMap::FlatStringMap(const model::StringMap& map) {
  ends_.reserve(2 * map.size());
  for (const auto& [key, value] : map) {
    text_ += key;
    ends_.push_back(static_cast<std::uint32_t>(text_.size()));
    text_ += value;
    ends_.push_back(static_cast<std::uint32_t>(text_.size()));
  }
}

namespace {

// With `with_ids` false the run vouches for nothing (FingerprintRun::ids).
FingerprintRun KeysOf(const std::vector<model::Endpoint>& endpoints, bool with_ids) {
  FingerprintRun run;
  run.ends.reserve(endpoints.size());
  if (with_ids) run.ids.reserve(endpoints.size());
  for (const model::Endpoint& endpoint : endpoints) {
    AppendFingerprintKey(endpoint, run.keys);
    run.ends.push_back(static_cast<std::uint32_t>(run.keys.size()));
    if (with_ids) run.ids.push_back(NextKeyId());
  }
  return run;
}

}  // namespace

FingerprintRun FingerprintEndpoints(const std::vector<model::Endpoint>& endpoints) {
  return KeysOf(endpoints, /*with_ids=*/true);
}

SliceFingerprints FingerprintSlice(const model::EndpointSlice& slice) {
  SliceFingerprints fingerprints;
  fingerprints.uid = slice.metadata.uid;
  fingerprints.resource_version = slice.metadata.resource_version;
  // A stored slice's keys are compared against, never vouched for: no ids.
  fingerprints.endpoints = KeysOf(slice.endpoints, /*with_ids=*/false);
  fingerprints.any_hints = AnyHint(slice);
  fingerprints.labels = FlatStringMap(slice.metadata.labels);
  fingerprints.annotations = FlatStringMap(slice.metadata.annotations);
  return fingerprints;
}

bool FingerprintsDescribe(const SliceFingerprints& fingerprints,
                          const model::EndpointSlice& slice) {
  return !fingerprints.resource_version.empty() &&
         fingerprints.resource_version == slice.metadata.resource_version &&
         fingerprints.uid == slice.metadata.uid &&
         fingerprints.endpoints.size() == slice.endpoints.size();
}

}  // namespace slicewright::reconcile

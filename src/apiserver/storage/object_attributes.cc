#include "apiserver/storage/object_attributes.h"

#include <limits>

namespace slicewright::apiserver {
namespace {

void PutLength(std::string& out, std::size_t length) {
  while (length >= 0x80) {
    out += static_cast<char>(0x80 | (length & 0x7f));
    length >>= 7;
  }
  out += static_cast<char>(length);
}

void PutString(std::string& out, std::string_view text) {
  PutLength(out, text.size());
  out += text;
}

// Reads the encoded form from a position; every read checks its bounds, so the same reader
// validates untrusted input and walks validated data.
class Reader {
 public:
  Reader(std::string_view data, std::size_t position) : data_(data), position_(position) {}

  bool Length(std::size_t& length) {
    length = 0;
    for (int shift = 0; shift < 35; shift += 7) {
      if (position_ >= data_.size()) return false;
      const auto byte = static_cast<unsigned char>(data_[position_++]);
      length |= static_cast<std::size_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return true;
    }
    return false;
  }
  bool String(std::string_view& text) {
    std::size_t length = 0;
    if (!Length(length) || length > data_.size() - position_) return false;
    text = data_.substr(position_, length);
    position_ += length;
    return true;
  }
  // A count of items that each take at least `min_bytes`: bounded by what is left.
  bool Count(std::size_t& count, std::size_t min_bytes) {
    return Length(count) && count <= (data_.size() - position_) / min_bytes;
  }
  bool Pairs(std::size_t count) {
    std::string_view first;
    std::string_view second;
    for (std::size_t i = 0; i < count; ++i) {
      if (!String(first) || !String(second)) return false;
    }
    return true;
  }
  std::size_t position() const { return position_; }

 private:
  std::string_view data_;
  std::size_t position_;
};

// The entries of the key-value section at `at` (labels or fields).
std::vector<std::pair<std::string_view, std::string_view>> ReadPairs(std::string_view data,
                                                                     std::size_t at) {
  Reader reader(data, at);
  std::size_t count = 0;
  std::vector<std::pair<std::string_view, std::string_view>> pairs;
  if (!reader.Count(count, 2)) return pairs;
  pairs.resize(count);
  for (auto& [key, value] : pairs) {
    if (!reader.String(key) || !reader.String(value)) return {};
  }
  return pairs;
}

// The value of `wanted` in the key-value section at `at` (labels or fields), the first match.
std::optional<std::string_view> FindPair(std::string_view data, std::size_t at,
                                         std::string_view wanted) {
  Reader reader(data, at);
  std::size_t count = 0;
  if (!reader.Count(count, 2)) return std::nullopt;
  for (std::size_t i = 0; i < count; ++i) {
    std::string_view key;
    std::string_view value;
    if (!reader.String(key) || !reader.String(value)) return std::nullopt;
    if (key == wanted) return value;
  }
  return std::nullopt;
}

}  // namespace

// Zero labels, zero fields, an empty uid, zero owners.
ObjectAttributes::ObjectAttributes() : data_(4, '\0'), fields_at_(1), uid_at_(2), owners_at_(3) {}

std::optional<ObjectAttributes> ObjectAttributes::Decode(std::string_view encoded) {
  if (encoded.size() > std::numeric_limits<std::uint32_t>::max()) return std::nullopt;
  Reader reader(encoded, 0);
  std::size_t count = 0;
  if (!reader.Count(count, 2) || !reader.Pairs(count)) return std::nullopt;
  const std::size_t fields_at = reader.position();
  if (!reader.Count(count, 2) || !reader.Pairs(count)) return std::nullopt;
  const std::size_t uid_at = reader.position();
  std::string_view uid;
  if (!reader.String(uid)) return std::nullopt;
  const std::size_t owners_at = reader.position();
  if (!reader.Count(count, 1)) return std::nullopt;
  for (std::size_t i = 0; i < count; ++i) {
    if (!reader.String(uid)) return std::nullopt;
  }
  if (reader.position() != encoded.size()) return std::nullopt;
  ObjectAttributes attributes;
  attributes.data_.assign(encoded);
  attributes.fields_at_ = static_cast<std::uint32_t>(fields_at);
  attributes.uid_at_ = static_cast<std::uint32_t>(uid_at);
  attributes.owners_at_ = static_cast<std::uint32_t>(owners_at);
  return attributes;
}

std::optional<std::string_view> ObjectAttributes::Label(std::string_view key) const {
  return FindPair(data_, 0, key);
}

std::optional<std::string_view> ObjectAttributes::Field(std::string_view name) const {
  return FindPair(data_, fields_at_, name);
}

std::string_view ObjectAttributes::uid() const {
  Reader reader(data_, uid_at_);
  std::string_view uid;
  return reader.String(uid) ? uid : std::string_view();
}

std::vector<std::string_view> ObjectAttributes::OwnerUids() const {
  Reader reader(data_, owners_at_);
  std::size_t count = 0;
  std::vector<std::string_view> owners;
  if (!reader.Count(count, 1)) return owners;
  owners.resize(count);
  for (std::string_view& owner : owners) {
    if (!reader.String(owner)) return {};
  }
  return owners;
}

std::vector<std::pair<std::string_view, std::string_view>> ObjectAttributes::Labels() const {
  return ReadPairs(data_, 0);
}

std::vector<std::pair<std::string_view, std::string_view>> ObjectAttributes::Fields() const {
  return ReadPairs(data_, fields_at_);
}

ObjectAttributes::Builder& ObjectAttributes::Builder::AddLabel(std::string_view key,
                                                               std::string_view value) {
  labels_.insert_or_assign(std::string(key), std::string(value));
  return *this;
}

ObjectAttributes::Builder& ObjectAttributes::Builder::AddField(std::string_view name,
                                                               std::string_view value) {
  fields_.emplace_back(name, value);
  return *this;
}

ObjectAttributes::Builder& ObjectAttributes::Builder::SetUid(std::string_view uid) {
  uid_.assign(uid);
  return *this;
}

ObjectAttributes::Builder& ObjectAttributes::Builder::AddOwnerUid(std::string_view uid) {
  owner_uids_.emplace_back(uid);
  return *this;
}

ObjectAttributes ObjectAttributes::Builder::Build() const {
  ObjectAttributes attributes;
  std::string& out = attributes.data_;
  out.clear();
  PutLength(out, labels_.size());
  for (const auto& [key, value] : labels_) {
    PutString(out, key);
    PutString(out, value);
  }
  attributes.fields_at_ = static_cast<std::uint32_t>(out.size());
  PutLength(out, fields_.size());
  for (const auto& [name, value] : fields_) {
    PutString(out, name);
    PutString(out, value);
  }
  attributes.uid_at_ = static_cast<std::uint32_t>(out.size());
  PutString(out, uid_);
  attributes.owners_at_ = static_cast<std::uint32_t>(out.size());
  PutLength(out, owner_uids_.size());
  for (const std::string& owner : owner_uids_) PutString(out, owner);
  return attributes;
}

}  // namespace slicewright::apiserver

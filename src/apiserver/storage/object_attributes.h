// ObjectAttributes: what label and field selectors and the garbage collector read of one stored
// version. The server keeps one per stored version (hundreds of thousands), so each lives in one
// buffer, in the form it is stored on disk, and is read in place.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "slicewright/model/meta.h"

namespace slicewright::apiserver {

class ObjectAttributes {
 public:
  class Builder;

  // No labels, no fields, no uid, no owners.
  ObjectAttributes();

  // The form encoded() gives, read back (from disk); nullopt when it is truncated, malformed or
  // has bytes left over. Format: counts and lengths as LEB128 varints, strings as length + bytes:
  // labels (count, then key and value each), fields (count, then name and value each), uid,
  // owner uids (count, then each).
  static std::optional<ObjectAttributes> Decode(std::string_view encoded);
  std::string_view encoded() const { return data_; }

  // A label's value; nullopt when the object has no such label.
  std::optional<std::string_view> Label(std::string_view key) const;
  // A selectable field's value ("metadata.name", "spec.nodeName", ...); nullopt for a field the
  // resource does not have.
  std::optional<std::string_view> Field(std::string_view name) const;
  // metadata.uid ("" when absent).
  std::string_view uid() const;
  // metadata.ownerReferences[*].uid, in order.
  std::vector<std::string_view> OwnerUids() const;
  // Labels and fields in stored order (labels by key, fields as added). Views into *this.
  std::vector<std::pair<std::string_view, std::string_view>> Labels() const;
  std::vector<std::pair<std::string_view, std::string_view>> Fields() const;

  friend bool operator==(const ObjectAttributes& a, const ObjectAttributes& b) {
    return a.data_ == b.data_;
  }

 private:
  std::string data_;
  // Where the field count, the uid and the owner count start in data_: the accessors go straight
  // to their section.
  std::uint32_t fields_at_ = 0;
  std::uint32_t uid_at_ = 0;
  std::uint32_t owners_at_ = 0;
};

// Collects the parts, then encodes them once.
class ObjectAttributes::Builder {
 public:
  // A repeated key keeps the last value; labels are stored in key order.
  Builder& AddLabel(std::string_view key, std::string_view value);
  // Fields keep the order they are added in.
  Builder& AddField(std::string_view name, std::string_view value);
  Builder& SetUid(std::string_view uid);
  Builder& AddOwnerUid(std::string_view uid);
  ObjectAttributes Build() const;

 private:
  model::StringMap labels_;
  std::vector<std::pair<std::string, std::string>> fields_;
  std::string uid_;
  std::vector<std::string> owner_uids_;
};

}  // namespace slicewright::apiserver

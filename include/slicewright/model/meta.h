// meta/v1 types shared by every object: ObjectMeta, OwnerReference, LabelSelector, Condition, and
// core/v1 ObjectReference. Copyable aggregates with defaulted equality; thread-compatible.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "slicewright/model/inline_string.h"
#include "slicewright/model/rare.h"
#include "slicewright/model/time.h"

namespace slicewright::model {

// Labels and annotations. An ordered map, so every encoding and comparison is deterministic.
using StringMap = std::map<std::string, std::string, std::less<>>;

struct OwnerReference {
  std::string api_version;
  std::string kind;
  std::string name;
  std::string uid;
  std::optional<bool> controller;
  std::optional<bool> block_owner_deletion;
  friend bool operator==(const OwnerReference&, const OwnerReference&) = default;
};

struct ObjectMeta {
  std::string name;
  std::string generate_name;
  std::string namespace_;  // "namespace" is a C++ keyword
  std::string uid;
  std::string resource_version;
  std::int64_t generation = 0;
  StringMap labels;
  StringMap annotations;
  std::vector<OwnerReference> owner_references;
  std::vector<std::string> finalizers;
  std::optional<Time> creation_timestamp;
  std::optional<Time> deletion_timestamp;
  friend bool operator==(const ObjectMeta&, const ObjectMeta&) = default;
};

// core/v1 ObjectReference (also EndpointSlice targetRef and Event involvedObject).
struct ObjectReference {
  std::string kind;
  std::string namespace_;
  // Inline, like uid: a Deployment's pod names ("<name>-<10 chars>-<5 chars>") are longer than
  // std::string keeps inline, and every endpoint carries one.
  InlineString name;
  // Inline: every endpoint of a slice carries its pod's UID, and a UUID is 36 characters.
  InlineString uid;
  // Rare on an endpoint's targetRef (the controllers write kind, namespace, name and uid): one
  // pointer each instead of 32 bytes.
  RareString api_version;
  RareString resource_version;
  RareString field_path;
  friend bool operator==(const ObjectReference&, const ObjectReference&) = default;
};

struct LabelSelectorRequirement {
  std::string key;
  std::string operator_;  // In, NotIn, Exists, DoesNotExist
  std::vector<std::string> values;
  friend bool operator==(const LabelSelectorRequirement&,
                         const LabelSelectorRequirement&) = default;
};

struct LabelSelector {
  StringMap match_labels;
  std::vector<LabelSelectorRequirement> match_expressions;
  friend bool operator==(const LabelSelector&, const LabelSelector&) = default;
};

// meta/v1 Condition.
struct Condition {
  std::string type;
  std::string status;  // True, False, Unknown
  std::int64_t observed_generation = 0;
  std::optional<Time> last_transition_time;
  std::string reason;
  std::string message;
  friend bool operator==(const Condition&, const Condition&) = default;
};

// Finds the owner reference that marks `owner_uid` as controller; nullptr if none.
const OwnerReference* FindControllerRef(const ObjectMeta& meta);

// "namespace/name", or "name" for cluster-scoped objects: the key the work queues use.
std::string NamespacedName(std::string_view namespace_, std::string_view name);
std::string NamespacedName(const ObjectMeta& meta);

}  // namespace slicewright::model

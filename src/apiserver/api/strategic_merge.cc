// Strategic merge patch, ported from the apply half of k8s.io/apimachinery/pkg/util/strategicpatch
// (mergeMap, mergeSlice, mergePatchIntoOriginal and their helpers), over nlohmann::json.
#include "apiserver/api/strategic_merge.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "slicewright/base/result.h"
#include "slicewright/base/status.h"

namespace slicewright::apiserver::internal {

// A field's patchStrategy tag. retainKeys only tells kubectl to send $retainKeys; the server
// honours $retainKeys wherever it appears, so for applying a patch it matters as documentation.
enum class Strategy : std::uint8_t {
  kAtomic,           // no tag: lists are replaced, maps are merged key by key
  kMerge,            // patchStrategy:"merge"
  kMergeRetainKeys,  // patchStrategy:"merge,retainKeys"
  kReplace,          // patchStrategy:"replace"
};

// One JSON field of a Go struct and its patch tags.
struct PatchField {
  std::string_view name;
  Strategy strategy;
  std::string_view merge_key;  // patchMergeKey; "" for a list of scalars or an untagged field
  const PatchSchema* schema;   // the field's struct (a list's item struct); nullptr: no tags below
};

struct PatchSchema {
  std::span<const PatchField> fields;
};

namespace {

using nlohmann::json;

// ---- The patch tags of the kinds we serve (k8s.io/api v1.32 types.go) ----
// A field is listed when it has a patchStrategy tag or a tagged field below it. Everything else
// behaves as upstream's untagged fields: lists are atomic, maps are merged key by key.

constexpr Strategy kMerge = Strategy::kMerge;
constexpr Strategy kMergeRetainKeys = Strategy::kMergeRetainKeys;
constexpr Strategy kAtomic = Strategy::kAtomic;
constexpr Strategy kReplace = Strategy::kReplace;

// meta/v1 ObjectMeta.
constexpr PatchField kObjectMetaFields[] = {
    {"finalizers", kMerge, "", nullptr},
    {"ownerReferences", kMerge, "uid", nullptr},
};
constexpr PatchSchema kObjectMeta{kObjectMetaFields};

// core/v1 Container, and EphemeralContainerCommon, which carries the same tags.
constexpr PatchField kContainerFields[] = {
    {"ports", kMerge, "containerPort", nullptr},
    {"env", kMerge, "name", nullptr},
    {"volumeMounts", kMerge, "mountPath", nullptr},
    {"volumeDevices", kMerge, "devicePath", nullptr},
};
constexpr PatchSchema kContainer{kContainerFields};

// core/v1 PodSpec (tolerations, readinessGates and the rest are untagged).
constexpr PatchField kPodSpecFields[] = {
    {"volumes", kMergeRetainKeys, "name", nullptr},
    {"initContainers", kMerge, "name", &kContainer},
    {"containers", kMerge, "name", &kContainer},
    {"ephemeralContainers", kMerge, "name", &kContainer},
    {"imagePullSecrets", kMerge, "name", nullptr},
    {"hostAliases", kMerge, "ip", nullptr},
    {"topologySpreadConstraints", kMerge, "topologyKey", nullptr},
    {"resourceClaims", kMergeRetainKeys, "name", nullptr},
    {"schedulingGates", kMerge, "name", nullptr},
};
constexpr PatchSchema kPodSpec{kPodSpecFields};

// core/v1 PodStatus (containerStatuses and friends are untagged, hence atomic).
constexpr PatchField kPodStatusFields[] = {
    {"conditions", kMerge, "type", nullptr},
    {"hostIPs", kMerge, "ip", nullptr},
    {"podIPs", kMerge, "ip", nullptr},
    {"resourceClaimStatuses", kMergeRetainKeys, "name", nullptr},
};
constexpr PatchSchema kPodStatus{kPodStatusFields};

// core/v1 ServiceSpec and ServiceStatus.
constexpr PatchField kServiceSpecFields[] = {{"ports", kMerge, "port", nullptr}};
constexpr PatchSchema kServiceSpec{kServiceSpecFields};
// NodeStatus.conditions, NamespaceStatus.conditions and ServiceStatus.conditions share this.
constexpr PatchField kConditionsByTypeFields[] = {{"conditions", kMerge, "type", nullptr}};
constexpr PatchSchema kConditionsByType{kConditionsByTypeFields};

// core/v1 NodeSpec (taints are untagged) and NodeStatus.
constexpr PatchField kNodeSpecFields[] = {{"podCIDRs", kMerge, "", nullptr}};
constexpr PatchSchema kNodeSpec{kNodeSpecFields};
constexpr PatchField kNodeStatusFields[] = {
    {"conditions", kMerge, "type", nullptr},
    {"addresses", kMerge, "type", nullptr},
};
constexpr PatchSchema kNodeStatus{kNodeStatusFields};

// Top-level objects.
constexpr PatchField kMetadataOnlyFields[] = {{"metadata", kAtomic, "", &kObjectMeta}};
constexpr PatchSchema kMetadataOnly{kMetadataOnlyFields};
constexpr PatchField kPodFields[] = {
    {"metadata", kAtomic, "", &kObjectMeta},
    {"spec", kAtomic, "", &kPodSpec},
    {"status", kAtomic, "", &kPodStatus},
};
constexpr PatchSchema kPod{kPodFields};
constexpr PatchField kServiceFields[] = {
    {"metadata", kAtomic, "", &kObjectMeta},
    {"spec", kAtomic, "", &kServiceSpec},
    {"status", kAtomic, "", &kConditionsByType},
};
constexpr PatchSchema kService{kServiceFields};
constexpr PatchField kNodeFields[] = {
    {"metadata", kAtomic, "", &kObjectMeta},
    {"spec", kAtomic, "", &kNodeSpec},
    {"status", kAtomic, "", &kNodeStatus},
};
constexpr PatchSchema kNode{kNodeFields};
constexpr PatchField kNamespaceFields[] = {
    {"metadata", kAtomic, "", &kObjectMeta},
    {"status", kAtomic, "", &kConditionsByType},
};
constexpr PatchSchema kNamespace{kNamespaceFields};

// apps/v1 Deployment: the pod template carries PodSpec's tags; DeploymentSpec.strategy is
// retainKeys (honoured wherever $retainKeys appears) and DeploymentStatus.conditions merge by type.
constexpr PatchField kPodTemplateFields[] = {
    {"metadata", kAtomic, "", &kObjectMeta},
    {"spec", kAtomic, "", &kPodSpec},
};
constexpr PatchSchema kPodTemplate{kPodTemplateFields};
constexpr PatchField kDeploymentSpecFields[] = {{"template", kAtomic, "", &kPodTemplate}};
constexpr PatchSchema kDeploymentSpec{kDeploymentSpecFields};
constexpr PatchField kDeploymentFields[] = {
    {"metadata", kAtomic, "", &kObjectMeta},
    {"spec", kAtomic, "", &kDeploymentSpec},
    {"status", kAtomic, "", &kConditionsByType},
};
constexpr PatchSchema kDeployment{kDeploymentFields};
// policy/v1: PodDisruptionBudgetSpec.selector is patchStrategy "replace" (kubectl therefore sends
// it in every apply) and PodDisruptionBudgetStatus.conditions merge by type.
constexpr PatchField kPodDisruptionBudgetSpecFields[] = {{"selector", kReplace, "", nullptr}};
constexpr PatchSchema kPodDisruptionBudgetSpec{kPodDisruptionBudgetSpecFields};
constexpr PatchField kPodDisruptionBudgetFields[] = {
    {"metadata", kAtomic, "", &kObjectMeta},
    {"spec", kAtomic, "", &kPodDisruptionBudgetSpec},
    {"status", kAtomic, "", &kConditionsByType},
};
constexpr PatchSchema kPodDisruptionBudget{kPodDisruptionBudgetFields};

struct KindSchema {
  std::string_view api_version;
  std::string_view kind;
  const PatchSchema* schema;
};

// EndpointSlice (endpoints and ports are listType=atomic), Lease, both Events, Endpoints,
// ConfigMap, Secret, CustomResourceDefinition and the RBAC kinds (rules and subjects are
// untagged) have no tags outside ObjectMeta. Scale is the
// scale subresource's body, which kube-apiserver also strategic-merges.
constexpr KindSchema kKinds[] = {
    {"v1", "Namespace", &kNamespace},
    {"v1", "Service", &kService},
    {"v1", "Pod", &kPod},
    {"v1", "Node", &kNode},
    {"v1", "Endpoints", &kMetadataOnly},
    {"v1", "Event", &kMetadataOnly},
    {"v1", "ConfigMap", &kMetadataOnly},
    {"v1", "Secret", &kMetadataOnly},
    {"discovery.k8s.io/v1", "EndpointSlice", &kMetadataOnly},
    {"coordination.k8s.io/v1", "Lease", &kMetadataOnly},
    {"events.k8s.io/v1", "Event", &kMetadataOnly},
    {"apiextensions.k8s.io/v1", "CustomResourceDefinition", &kMetadataOnly},
    {"apps/v1", "Deployment", &kDeployment},
    {"policy/v1", "PodDisruptionBudget", &kPodDisruptionBudget},
    {"rbac.authorization.k8s.io/v1", "ClusterRole", &kMetadataOnly},
    {"rbac.authorization.k8s.io/v1", "ClusterRoleBinding", &kMetadataOnly},
    {"rbac.authorization.k8s.io/v1", "Role", &kMetadataOnly},
    {"rbac.authorization.k8s.io/v1", "RoleBinding", &kMetadataOnly},
    {"autoscaling/v1", "Scale", &kMetadataOnly},
};

// ---- Directives ----

constexpr std::string_view kDirectiveMarker = "$patch";
constexpr std::string_view kDeleteDirective = "delete";
constexpr std::string_view kReplaceDirective = "replace";
constexpr std::string_view kMergeDirective = "merge";
constexpr std::string_view kRetainKeysDirective = "$retainKeys";
constexpr std::string_view kDeleteFromPrimitiveListPrefix = "$deleteFromPrimitiveList";
constexpr std::string_view kSetElementOrderPrefix = "$setElementOrder";

constexpr std::string_view kGoMapType = "map[string]interface {}";
constexpr std::string_view kGoSliceType = "[]interface {}";

const PatchField* LookupField(const PatchSchema* schema, std::string_view name) {
  if (schema == nullptr) return nullptr;
  for (const PatchField& field : schema->fields) {
    if (field.name == name) return &field;
  }
  return nullptr;
}

bool IsMergeList(const PatchField* field) {
  return field != nullptr &&
         (field->strategy == Strategy::kMerge || field->strategy == Strategy::kMergeRetainKeys);
}
bool IsReplace(const PatchField* field) {
  return field != nullptr && field->strategy == Strategy::kReplace;
}
std::string_view MergeKeyOf(const PatchField* field) {
  return field == nullptr ? std::string_view() : field->merge_key;
}
const PatchSchema* SchemaOf(const PatchField* field) {
  return field == nullptr ? nullptr : field->schema;
}

bool StartsWith(std::string_view text, std::string_view prefix) { return text.starts_with(prefix); }

bool IsDirective(const json& value, std::string_view directive) {
  return value.is_string() && value.get_ref<const std::string&>() == directive;
}

// Go's "%s" of an interface value: the string itself, or "%!s(type=value)".
[[gnu::noinline]] std::string GoStringVerb(const json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_null()) return "%!s(<nil>)";
  return "%!s(" + GoTypeName(value) + "=" + GoValueString(value) + ")";
}

// ---- upstream's errors (k8s.io/apimachinery/pkg/util/mergepatch/errors.go) ----

[[gnu::noinline]] Status ErrBadPatchFormatForPrimitiveList() {
  return BadRequestError("invalid patch format of primitive list");
}
[[gnu::noinline]] Status ErrBadPatchFormatForRetainKeys() {
  return BadRequestError("invalid patch format of retainKeys");
}
[[gnu::noinline]] Status ErrBadPatchFormatForSetElementOrderList() {
  return BadRequestError("invalid patch format of setElementOrder list");
}
// Upstream answers 422 for this one (interpretStrategicMergePatchError).
[[gnu::noinline]] Status ErrNoListOfLists() {
  return InvalidError("lists of lists are not supported");
}
[[gnu::noinline]] Status ErrNoMergeKey(const json& map, std::string_view merge_key) {
  return BadRequestError("map: " + GoValueString(map) +
                         " does not contain declared merge key: " + std::string(merge_key));
}
[[gnu::noinline]] Status ErrBadArgType(std::string_view expected, const json& actual) {
  return BadRequestError("expected a " + std::string(expected) + ", but received a " +
                         GoTypeName(actual));
}
[[gnu::noinline]] Status ErrBadPatchType(const json& directive, const json& map) {
  return BadRequestError("unknown patch type: " + GoStringVerb(directive) +
                         " in map: " + GoValueString(map));
}

// extractKey: "$setElementOrder/containers" -> "containers".
[[gnu::noinline]] Result<std::string> ExtractKey(std::string_view key, std::string_view prefix) {
  const std::size_t slash = key.find('/');
  if (slash == std::string_view::npos || key.substr(0, slash) != prefix) {
    if (prefix == kDeleteFromPrimitiveListPrefix) return ErrBadPatchFormatForPrimitiveList();
    return ErrBadPatchFormatForSetElementOrderList();
  }
  return std::string(key.substr(slash + 1));
}

// Go's dynamic type of a decoded value, for "all list elements have one type".
int TypeClass(const json& value) {
  switch (value.type()) {
    case json::value_t::null:
      return 0;
    case json::value_t::boolean:
      return 1;
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return 2;
    case json::value_t::number_float:
      return 3;
    case json::value_t::string:
      return 4;
    case json::value_t::array:
      return 5;
    default:
      return 6;
  }
}

enum class ElementKind { kNone, kScalar, kMap };

// sliceElementType: every element of both lists must have one type, and not be a list.
[[gnu::noinline]] Result<ElementKind> SliceElementKind(const json& original, const json& patch) {
  const json* first = nullptr;
  for (const json* list : {&original, &patch}) {
    for (const json& item : *list) {
      if (first == nullptr) {
        first = &item;
        if (item.is_array()) return ErrNoListOfLists();
      } else if (TypeClass(*first) != TypeClass(item)) {
        return BadRequestError("list element types are not identical: " +
                               GoValueString(json::array({original, patch})));
      }
    }
  }
  if (first == nullptr) return ElementKind::kNone;
  return first->is_object() ? ElementKind::kMap : ElementKind::kScalar;
}

// The identity of a list item: its merge key's value for lists of maps, the item for scalars
// (upstream's index()); null when a map lacks the key, as Go's nil.
json Identity(const json& item, std::string_view merge_key) {
  if (merge_key.empty()) return item;
  if (!item.is_object()) return nullptr;
  auto it = item.find(merge_key);
  return it == item.end() ? json(nullptr) : *it;
}

// The first position of each identity in `list`.
std::map<json, std::size_t> Positions(const json& list, std::string_view merge_key) {
  std::map<json, std::size_t> positions;
  for (std::size_t i = 0; i < list.size(); ++i) positions.emplace(Identity(list[i], merge_key), i);
  return positions;
}

// validateMergeKeyInLists.
Status ValidateMergeKeyIn(const std::vector<json>& list, std::string_view merge_key) {
  for (const json& item : list) {
    if (!item.is_object()) return ErrBadArgType(kGoMapType, item);
    if (!item.contains(merge_key)) return ErrNoMergeKey(item, merge_key);
  }
  return Status::Ok();
}
Status ValidateMergeKeyIn(const json& list, std::string_view merge_key) {
  for (const json& item : list) {
    if (!item.is_object()) return ErrBadArgType(kGoMapType, item);
    if (!item.contains(merge_key)) return ErrNoMergeKey(item, merge_key);
  }
  return Status::Ok();
}

// normalizeSliceOrder: sorts `items` by their position in `order` (stable; items `order` lacks
// go last, which upstream's comparator leaves unspecified). Items marked "$patch: delete" go
// after the rest.
Result<std::vector<json>> NormalizeSliceOrder(std::vector<json> items, const json& order,
                                              std::string_view merge_key, bool is_map) {
  std::vector<json> to_delete;
  if (is_map) {
    SW_RETURN_IF_ERROR(ValidateMergeKeyIn(items, merge_key));
    SW_RETURN_IF_ERROR(ValidateMergeKeyIn(order, merge_key));
    std::vector<json> kept;
    for (json& item : items) {
      auto directive = item.find(kDirectiveMarker);
      if (directive != item.end() && IsDirective(*directive, kDeleteDirective)) {
        to_delete.push_back(std::move(item));
      } else {
        kept.push_back(std::move(item));
      }
    }
    items = std::move(kept);
  }
  const std::map<json, std::size_t> positions = Positions(order, is_map ? merge_key : "");
  auto rank = [&](const json& item) {
    auto it = positions.find(Identity(item, is_map ? merge_key : ""));
    return it == positions.end() ? std::numeric_limits<std::size_t>::max() : it->second;
  };
  std::vector<std::pair<std::size_t, json>> ranked;
  ranked.reserve(items.size());
  for (json& item : items) ranked.emplace_back(rank(item), std::move(item));
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<json> sorted;
  sorted.reserve(ranked.size() + to_delete.size());
  for (auto& [position, item] : ranked) sorted.push_back(std::move(item));
  for (json& item : to_delete) sorted.push_back(std::move(item));
  return sorted;
}

// mergeSortedSlice: interleaves server-only items (`left`) into the patch items (`right`),
// keeping each list's order; a server-only item goes before a patch item when both appear in
// the live list and it came first there.
json MergeSortedSlice(std::vector<json> left, std::vector<json> right, const json& server_order,
                      std::string_view merge_key, bool is_map) {
  const std::string_view key = is_map ? merge_key : "";
  const std::map<json, std::size_t> positions = Positions(server_order, key);
  auto position = [&](const json& item) -> std::optional<std::size_t> {
    auto it = positions.find(Identity(item, key));
    if (it == positions.end()) return std::nullopt;
    return it->second;
  };
  json merged = json::array();
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < left.size() || j < right.size()) {
    if (i >= left.size()) {
      merged.push_back(std::move(right[j++]));
    } else if (j >= right.size()) {
      merged.push_back(std::move(left[i++]));
    } else {
      const std::optional<std::size_t> li = position(left[i]);
      const std::optional<std::size_t> ri = position(right[j]);
      if (li && ri && *li < *ri) {
        merged.push_back(std::move(left[i++]));
      } else {
        merged.push_back(std::move(right[j++]));
      }
    }
  }
  return merged;
}

// normalizeElementOrder.
[[gnu::noinline]] Result<json> NormalizeElementOrder(std::vector<json> patch_items,
                                                     std::vector<json> server_only,
                                                     const json& patch_order,
                                                     const json& server_order,
                                                     std::string_view merge_key, bool is_map) {
  SW_ASSIGN_OR_RETURN(std::vector<json> sorted_patch,
                      NormalizeSliceOrder(std::move(patch_items), patch_order, merge_key, is_map));
  SW_ASSIGN_OR_RETURN(std::vector<json> sorted_server,
                      NormalizeSliceOrder(std::move(server_only), server_order, merge_key, is_map));
  return MergeSortedSlice(std::move(sorted_server), std::move(sorted_patch), server_order,
                          merge_key, is_map);
}

struct Partition {
  std::vector<json> present;  // items that `by` names
  std::vector<json> absent;   // server-only items
};

// partitionPrimitivesByPresentInList / partitionMapsByPresentInList.
[[gnu::noinline]] Result<Partition> PartitionByPresence(json&& merged, const json& by,
                                                        std::string_view merge_key) {
  if (!merge_key.empty()) {
    for (const json& item : merged) {
      if (!item.is_object()) return ErrBadArgType(kGoMapType, item);
      if (!item.contains(merge_key)) return ErrNoMergeKey(item, merge_key);
    }
  }
  std::set<json> names;
  for (std::size_t i = 0; i < by.size(); ++i) {
    if (merge_key.empty()) {
      names.insert(by[i]);
      continue;
    }
    if (!by[i].is_object()) {
      return BadRequestError("value for key " + std::to_string(i) + " is not a map.");
    }
    if (auto it = by[i].find(merge_key); it != by[i].end()) names.insert(*it);
  }
  Partition partition;
  for (json& item : merged) {
    const bool present = names.contains(merge_key.empty() ? item : item[merge_key]);
    (present ? partition.present : partition.absent).push_back(std::move(item));
  }
  return partition;
}

// mergeKeyValueEqual.
Result<bool> MergeKeyValueEqual(const json& left, const json& right, std::string_view merge_key) {
  if (merge_key.empty()) return left == right;
  if (!left.is_object()) return ErrBadArgType(kGoMapType, left);
  if (!right.is_object()) return ErrBadArgType(kGoMapType, right);
  auto l = left.find(merge_key);
  if (l == left.end()) return ErrNoMergeKey(left, merge_key);
  auto r = right.find(merge_key);
  if (r == right.end()) return ErrNoMergeKey(right, merge_key);
  return *l == *r;
}

// validatePatchWithSetOrderList: the patch list's items (deletions aside) must appear in the
// $setElementOrder list, in the same relative order.
Status ValidatePatchWithSetOrderList(const json& patch_list, const json& order,
                                     std::string_view merge_key) {
  if (order.empty() || patch_list.empty()) return Status::Ok();
  std::vector<const json*> non_delete;
  for (const json& item : patch_list) {
    if (!merge_key.empty()) {
      if (!item.is_object()) return ErrBadArgType(kGoMapType, item);
      auto directive = item.find(kDirectiveMarker);
      if (directive != item.end() && IsDirective(*directive, kDeleteDirective)) continue;
    }
    non_delete.push_back(&item);
  }
  std::size_t patch_index = 0;
  std::size_t order_index = 0;
  while (patch_index < non_delete.size() && order_index < order.size()) {
    const json& item = *non_delete[patch_index];
    if (item.is_object() && item.contains(kDirectiveMarker)) {
      ++patch_index;
      continue;
    }
    SW_ASSIGN_OR_RETURN(const bool equal, MergeKeyValueEqual(item, order[order_index], merge_key));
    if (equal) ++patch_index;
    ++order_index;
  }
  if (patch_index < non_delete.size() && order_index >= order.size()) {
    return BadRequestError("The order in patch list:\n" + GoValueString(patch_list) +
                           "\n doesn't match " + std::string(kSetElementOrderPrefix) + " list:\n" +
                           GoValueString(order) + "\n");
  }
  return Status::Ok();
}

// Drops directives and null map values from a value stored without merging (an atomic list):
// maps carrying $patch disappear, as upstream's removeDirectives does. Returns false when
// `value` itself is such a map.
bool StripDirectives(json& value) {
  if (value.is_object()) {
    if (value.contains(kDirectiveMarker)) return false;
    for (auto it = value.begin(); it != value.end();) {
      const std::string_view key = it.key();
      if (it->is_null() || key == kRetainKeysDirective || key.starts_with(kSetElementOrderPrefix) ||
          key.starts_with(kDeleteFromPrimitiveListPrefix) || !StripDirectives(*it)) {
        it = value.erase(it);
      } else {
        ++it;
      }
    }
  } else if (value.is_array()) {
    json kept = json::array();
    for (json& item : value) {
      if (StripDirectives(item)) kept.push_back(std::move(item));
    }
    value = std::move(kept);
  }
  return true;
}

Status MergeMap(json& original, json& patch, const PatchSchema* schema);
Result<json> MergeSliceHandler(json original, json& patch, const PatchField* field,
                               bool is_delete_list);

// The value to store for a patch value that has nothing to merge into (a new key, a type
// change): the patch value with its directives applied to an empty value. nullopt when the
// value is a "$patch: delete" map, which upstream drops.
Result<std::optional<json>> NewValue(json& patch_value, const PatchField* field) {
  if (patch_value.is_object()) {
    auto directive = patch_value.find(kDirectiveMarker);
    if (directive != patch_value.end() && IsDirective(*directive, kDeleteDirective)) {
      return std::optional<json>();
    }
    json fresh = json::object();
    SW_RETURN_IF_ERROR(MergeMap(fresh, patch_value, SchemaOf(field)));
    return std::optional<json>(std::move(fresh));
  }
  if (patch_value.is_array()) {
    SW_ASSIGN_OR_RETURN(json fresh, MergeSliceHandler(json::array(), patch_value, field, false));
    return std::optional<json>(std::move(fresh));
  }
  return std::optional<json>(std::move(patch_value));
}

// applyRetainKeysDirective: clears the keys of `original` that $retainKeys does not list; every
// key the patch sets must be listed.
[[gnu::noinline]] Status ApplyRetainKeys(json& original, json& patch) {
  auto it = patch.find(kRetainKeysDirective);
  if (it == patch.end()) return Status::Ok();
  const json retain = std::move(*it);
  patch.erase(it);
  if (!retain.is_array()) return ErrBadPatchFormatForRetainKeys();
  std::set<std::string, std::less<>> keep;
  for (const json& key : retain) {
    if (key.is_string()) keep.insert(key.get<std::string>());
  }
  for (const auto& [key, value] : patch.items()) {
    if (value.is_null() || StartsWith(key, kDeleteFromPrimitiveListPrefix) ||
        StartsWith(key, kSetElementOrderPrefix)) {
      continue;
    }
    if (!keep.contains(key)) return ErrBadPatchFormatForRetainKeys();
  }
  for (auto field = original.begin(); field != original.end();) {
    if (!keep.contains(field.key())) {
      field = original.erase(field);
    } else {
      ++field;
    }
  }
  return Status::Ok();
}

// mergePatchIntoOriginal: merges each list named by a $setElementOrder/<list> directive and
// orders the result as the directive says; the list is then removed from the patch.
[[gnu::noinline]] Status MergeSetElementOrder(json& original, json& patch,
                                              const PatchSchema* schema) {
  std::vector<std::string> directives;
  for (const auto& [key, value] : patch.items()) {
    if (StartsWith(key, kSetElementOrderPrefix)) directives.push_back(key);
  }
  for (const std::string& directive : directives) {
    const json order = std::move(patch[directive]);
    patch.erase(directive);
    if (!order.is_array()) return ErrBadArgType(kGoSliceType, order);
    SW_ASSIGN_OR_RETURN(const std::string list_key, ExtractKey(directive, kSetElementOrderPrefix));
    auto original_it = original.find(list_key);
    auto patch_it = patch.find(list_key);
    const bool found_original = original_it != original.end();
    const bool found_patch = patch_it != patch.end();
    if (found_original && !original_it->is_array()) {
      return ErrBadArgType(kGoSliceType, *original_it);
    }
    if (found_patch && !patch_it->is_array()) return ErrBadArgType(kGoSliceType, *patch_it);
    if (!found_original && !found_patch) continue;

    const PatchField* field = LookupField(schema, list_key);
    const std::string_view merge_key = MergeKeyOf(field);
    json patch_list = found_patch ? std::move(*patch_it) : json::array();
    if (found_patch) patch.erase(patch_it);
    SW_RETURN_IF_ERROR(ValidatePatchWithSetOrderList(patch_list, order, merge_key));
    const json original_list = found_original ? *original_it : json::array();
    SW_ASSIGN_OR_RETURN(const ElementKind kind, SliceElementKind(original_list, patch_list));

    json merged;
    if (!found_patch) {
      merged = original_list;
    } else {
      SW_ASSIGN_OR_RETURN(merged, MergeSliceHandler(original_list, patch_list, field, false));
    }
    SW_ASSIGN_OR_RETURN(Partition partition,
                        PartitionByPresence(std::move(merged), order, merge_key));
    SW_ASSIGN_OR_RETURN(
        json ordered,
        NormalizeElementOrder(std::move(partition.present), std::move(partition.absent), order,
                              original_list, merge_key, kind == ElementKind::kMap));
    original[list_key] = std::move(ordered);
  }
  return Status::Ok();
}

// mergeSliceWithSpecialElements: applies the "$patch" items of a list of maps. "delete" removes
// every item with that merge key; "replace" makes the other patch items the whole list.
// Returns the patch items without directives.
[[gnu::noinline]] Result<json> MergeSliceWithSpecialElements(json& original, json& patch,
                                                             std::string_view merge_key) {
  json plain = json::array();
  bool replace = false;
  std::set<json> to_delete;
  for (json& item : patch) {
    auto directive = item.find(kDirectiveMarker);
    if (directive == item.end()) {
      plain.push_back(std::move(item));
    } else if (IsDirective(*directive, kDeleteDirective)) {
      auto value = item.find(merge_key);
      if (value == item.end()) return ErrNoMergeKey(item, merge_key);
      to_delete.insert(*value);
    } else if (IsDirective(*directive, kReplaceDirective)) {
      replace = true;
    } else if (IsDirective(*directive, kMergeDirective)) {
      // Upstream rejects this ("merging lists cannot yet be specified in the patch"); an explicit
      // merge of one item is what the item means anyway.
      item.erase(directive);
      plain.push_back(std::move(item));
    } else {
      return ErrBadPatchType(*directive, item);
    }
  }
  if (replace) {
    original = std::move(plain);
    return json::array();
  }
  if (!to_delete.empty()) {
    json kept = json::array();
    for (json& item : original) {
      auto value = item.find(merge_key);
      if (value == item.end() || !to_delete.contains(*value)) kept.push_back(std::move(item));
    }
    original = std::move(kept);
  }
  return plain;
}

// mergeSliceWithoutSpecialElements: merges each patch item into the original item with the same
// merge key, or appends it.
Status MergeSliceWithoutSpecialElements(json& original, const json& plain,
                                        std::string_view merge_key,
                                        const PatchSchema* item_schema) {
  std::map<json, std::size_t> positions;
  for (std::size_t i = 0; i < original.size(); ++i) {
    if (auto it = original[i].find(merge_key); it != original[i].end()) positions.emplace(*it, i);
  }
  for (const json& item : plain) {
    auto value = item.find(merge_key);
    if (value == item.end()) return ErrNoMergeKey(item, merge_key);
    json merge_value = *value;
    // Merging consumes the patch item; `plain` must keep it whole for ordering the result.
    json patch_item = item;
    if (auto found = positions.find(merge_value); found != positions.end()) {
      SW_RETURN_IF_ERROR(MergeMap(original[found->second], patch_item, item_schema));
      continue;
    }
    json fresh = json::object();
    SW_RETURN_IF_ERROR(MergeMap(fresh, patch_item, item_schema));
    original.push_back(std::move(fresh));
    positions.emplace(std::move(merge_value), original.size() - 1);
  }
  return Status::Ok();
}

// The scalar half of mergeSlice: a $deleteFromPrimitiveList list removes its items, anything
// else is a union that keeps the first of duplicates.
[[gnu::noinline]] json MergeScalarSlice(json& original, json& patch, bool is_delete_list) {
  json merged = json::array();
  if (is_delete_list) {
    const std::set<json> to_delete(patch.begin(), patch.end());
    for (json& item : original) {
      if (!to_delete.contains(item)) merged.push_back(std::move(item));
    }
    return merged;
  }
  std::set<json> seen;
  for (const json* list : {&original, &patch}) {
    for (const json& item : *list) {
      if (seen.insert(item).second) merged.push_back(item);
    }
  }
  return merged;
}

// The tail of mergeSlice: patch items in patch order, server-only items around them.
[[gnu::noinline]] Result<json> OrderMergedSlice(json&& merged, const json& patch_order,
                                                const json& server_order,
                                                std::string_view merge_key, bool is_map) {
  SW_ASSIGN_OR_RETURN(Partition partition,
                      PartitionByPresence(std::move(merged), patch_order, merge_key));
  return NormalizeElementOrder(std::move(partition.present), std::move(partition.absent),
                               patch_order, server_order, merge_key, is_map);
}

// mergeSlice: merges a list with the "merge" strategy (or a $deleteFromPrimitiveList list).
Result<json> MergeSlice(json original, json& patch, const PatchField* field, bool is_delete_list) {
  if (original.empty() && patch.empty()) return original;
  SW_ASSIGN_OR_RETURN(const ElementKind kind, SliceElementKind(original, patch));
  const std::string_view merge_key = MergeKeyOf(field);
  if (kind != ElementKind::kMap) {
    json merged = MergeScalarSlice(original, patch, is_delete_list);
    if (is_delete_list) return merged;
    return OrderMergedSlice(std::move(merged), patch, original, merge_key, false);
  }
  if (merge_key.empty()) {
    const std::string_view name = field == nullptr ? std::string_view() : field->name;
    return BadRequestError("cannot merge lists without merge key for " + std::string(name));
  }
  SW_ASSIGN_OR_RETURN(json plain, MergeSliceWithSpecialElements(original, patch, merge_key));
  json merged = original;
  SW_RETURN_IF_ERROR(MergeSliceWithoutSpecialElements(merged, plain, merge_key, SchemaOf(field)));
  return OrderMergedSlice(std::move(merged), plain, original, merge_key, true);
}

// mergeSliceHandler: lists with the "merge" strategy are merged; all others are replaced.
Result<json> MergeSliceHandler(json original, json& patch, const PatchField* field,
                               bool is_delete_list) {
  if (IsMergeList(field) || is_delete_list) {
    return MergeSlice(std::move(original), patch, field, is_delete_list);
  }
  json replaced = std::move(patch);
  StripDirectives(replaced);
  return replaced;
}

// mergeMap.
Status MergeMap(json& original, json& patch, const PatchSchema* schema) {
  if (auto directive = patch.find(kDirectiveMarker); directive != patch.end()) {
    if (IsDirective(*directive, kDeleteDirective)) {
      original = json::object();
      return Status::Ok();
    }
    if (IsDirective(*directive, kReplaceDirective)) {
      // The rest of the patch becomes the map: merging it into an empty map applies its own
      // directives, where upstream would store them verbatim. (No recursion here: the stack
      // must stay bounded by the patch's nesting.)
      original = json::object();
    } else if (!IsDirective(*directive, kMergeDirective)) {
      // Upstream also rejects "$patch: merge" in a map; we accept it as the merge it asks for.
      return ErrBadPatchType(*directive, patch);
    }
    patch.erase(directive);
  }

  SW_RETURN_IF_ERROR(ApplyRetainKeys(original, patch));
  SW_RETURN_IF_ERROR(MergeSetElementOrder(original, patch, schema));

  for (const auto& [patch_key, patch_value] : patch.items()) {
    std::string key = patch_key;
    bool is_delete_list = false;
    if (StartsWith(patch_key, kDeleteFromPrimitiveListPrefix)) {
      SW_ASSIGN_OR_RETURN(key, ExtractKey(patch_key, kDeleteFromPrimitiveListPrefix));
      is_delete_list = true;
    }
    if (patch_value.is_null()) {
      original.erase(key);
      continue;
    }
    const PatchField* field = LookupField(schema, key);
    auto it = original.find(key);
    const bool both_maps = it != original.end() && it->is_object() && patch_value.is_object();
    const bool both_lists = it != original.end() && it->is_array() && patch_value.is_array();
    if (both_maps && !IsReplace(field)) {
      SW_RETURN_IF_ERROR(MergeMap(*it, patch_value, SchemaOf(field)));
    } else if (both_lists) {
      SW_ASSIGN_OR_RETURN(json merged,
                          MergeSliceHandler(std::move(*it), patch_value, field, is_delete_list));
      original[key] = std::move(merged);
    } else if (!is_delete_list) {
      // A new key, a changed type, a scalar or a "replace" map: take the patch value.
      SW_ASSIGN_OR_RETURN(std::optional<json> value, NewValue(patch_value, field));
      if (value) {
        original[key] = std::move(*value);
      } else {
        original.erase(key);
      }
    }
  }
  return Status::Ok();
}

void AppendGoValue(const json& value, std::string& out) {
  switch (value.type()) {
    case json::value_t::null:
      out += "<nil>";
      return;
    case json::value_t::object: {
      // fmt prints maps sorted by key, as nlohmann stores them.
      out += "map[";
      bool first = true;
      for (const auto& [key, item] : value.items()) {
        if (!first) out += ' ';
        first = false;
        out += key;
        out += ':';
        AppendGoValue(item, out);
      }
      out += ']';
      return;
    }
    case json::value_t::array: {
      out += '[';
      bool first = true;
      for (const json& item : value) {
        if (!first) out += ' ';
        first = false;
        AppendGoValue(item, out);
      }
      out += ']';
      return;
    }
    case json::value_t::string:
      out += value.get_ref<const std::string&>();
      return;
    case json::value_t::number_float: {
      // Go's %v of a float64: integral values below 1e21 print without a fraction.
      const double number = value.get<double>();
      char buffer[64];
      if (std::trunc(number) == number && std::fabs(number) < 1e21) {
        auto [end, error] =
            std::to_chars(buffer, buffer + sizeof(buffer), number, std::chars_format::fixed, 0);
        if (error == std::errc()) out.append(buffer, end);
        return;
      }
      auto [end, error] = std::to_chars(buffer, buffer + sizeof(buffer), number);
      if (error == std::errc()) out.append(buffer, end);
      return;
    }
    default:
      out += value.dump();
      return;
  }
}

}  // namespace

const PatchSchema* FindPatchSchema(std::string_view api_version, std::string_view kind) {
  for (const KindSchema& entry : kKinds) {
    if (entry.api_version == api_version && entry.kind == kind) return entry.schema;
  }
  return nullptr;
}

Status StrategicMerge(json& original, json&& patch, const PatchSchema& schema) {
  return MergeMap(original, patch, &schema);
}

std::string GoValueString(const json& value) {
  std::string out;
  AppendGoValue(value, out);
  return out;
}

std::string GoTypeName(const json& value) {
  switch (value.type()) {
    case json::value_t::null:
      return "%!s(<nil>)";
    case json::value_t::object:
      return std::string(kGoMapType);
    case json::value_t::array:
      return std::string(kGoSliceType);
    case json::value_t::string:
      return "string";
    case json::value_t::boolean:
      return "bool";
    case json::value_t::number_float:
      return "float64";
    default:
      return "int64";
  }
}

int JsonDepth(const json& value) {
  int deepest = 0;
  std::vector<std::pair<const json*, int>> stack{{&value, 0}};
  while (!stack.empty()) {
    auto [node, depth] = stack.back();
    stack.pop_back();
    if (!node->is_structured()) continue;
    deepest = std::max(deepest, depth + 1);
    for (const json& child : *node) stack.emplace_back(&child, depth + 1);
  }
  return deepest;
}

}  // namespace slicewright::apiserver::internal

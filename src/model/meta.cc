#include "slicewright/model/meta.h"

#include <cstring>
#include <string_view>

#include "slicewright/model/core.h"

namespace slicewright::model {

const OwnerReference* FindControllerRef(const ObjectMeta& meta) {
  for (const OwnerReference& ref : meta.owner_references) {
    if (ref.controller.value_or(false)) {
      return &ref;
    }
  }
  return nullptr;
}

std::string NamespacedName(std::string_view namespace_, std::string_view name) {
  if (namespace_.empty()) {
    return std::string(name);
  }
  std::string key;
  key.reserve(namespace_.size() + 1 + name.size());
  key += namespace_;
  key += '/';
  key += name;
  return key;
}

std::string NamespacedName(const ObjectMeta& meta) {
  return NamespacedName(meta.namespace_, meta.name);
}

const PodCondition* FindPodCondition(const std::vector<PodCondition>& conditions,
                                     std::string_view type) {
  for (const PodCondition& condition : conditions) {
    if (condition.type == type) {
      return &condition;
    }
  }
  return nullptr;
}

bool IsPodReady(const Pod& pod) {
  // Fixed-length comparisons, which the compiler inlines: this runs for every pod of a Service on
  // every sync. The first Ready condition decides, as FindPodCondition's first match does.
  constexpr std::string_view kReady = "Ready";
  constexpr std::string_view kTrue = "True";
  for (const PodCondition& condition : pod.status.conditions) {
    if (condition.type.size() == kReady.size() &&
        std::memcmp(condition.type.data(), kReady.data(), kReady.size()) == 0) {
      return condition.status.size() == kTrue.size() &&
             std::memcmp(condition.status.data(), kTrue.data(), kTrue.size()) == 0;
    }
  }
  return false;
}

}  // namespace slicewright::model

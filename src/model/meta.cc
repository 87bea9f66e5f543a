#include "slicewright/model/meta.h"

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

std::string NamespacedName(const ObjectMeta& meta) {
  if (meta.namespace_.empty()) {
    return meta.name;
  }
  std::string key;
  key.reserve(meta.namespace_.size() + 1 + meta.name.size());
  key += meta.namespace_;
  key += '/';
  key += meta.name;
  return key;
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
  const PodCondition* ready = FindPodCondition(pod.status.conditions, "Ready");
  return ready != nullptr && ready->status == "True";
}

}  // namespace slicewright::model

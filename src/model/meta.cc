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
  const PodCondition* ready = FindPodCondition(pod.status.conditions, "Ready");
  return ready != nullptr && ready->status == "True";
}

}  // namespace slicewright::model

// What the controllers read from an EndpointSlice's labels: who manages it and which Service (or
// mirrored Endpoints) it belongs to. Pure functions on its metadata.
#pragma once

#include <string>
#include <string_view>

#include "slicewright/model/meta.h"
#include "slicewright/model/well_known.h"

namespace slicewright::controllers {

// The value of `key` in `labels`, or nullptr.
inline const std::string* LabelValue(const model::StringMap& labels, std::string_view key) {
  auto it = labels.find(key);
  return it == labels.end() ? nullptr : &it->second;
}

// The slice's endpointslice.kubernetes.io/managed-by label is `managed_by`.
inline bool ManagedBy(const model::ObjectMeta& slice, std::string_view managed_by) {
  const std::string* value = LabelValue(slice.labels, model::kLabelManagedBy);
  return value != nullptr && *value == managed_by;
}

// "namespace/<kubernetes.io/service-name>" of a slice, or "" when it names no Service.
inline std::string ServiceKeyOfSlice(const model::ObjectMeta& slice) {
  const std::string* service = LabelValue(slice.labels, model::kLabelServiceName);
  if (service == nullptr || service->empty()) return {};
  return model::NamespacedName(slice.namespace_, *service);
}

}  // namespace slicewright::controllers

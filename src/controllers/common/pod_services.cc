#include "controllers/common/pod_services.h"

#include <algorithm>
#include <optional>

#include "slicewright/labels/selector.h"

namespace slicewright::controllers {

std::vector<std::string> ServicesSelectingPod(std::span<const ServiceSnapshot> services,
                                              const model::StringMap& labels) {
  std::vector<std::string> keys;
  for (const ServiceSnapshot& service : services) {
    const std::optional<model::StringMap>& selector = service->spec.selector;
    if (selector.has_value() && labels::SelectorMatchesMap(*selector, labels)) {
      keys.push_back(model::NamespacedName(service->metadata));
    }
  }
  return keys;
}

std::vector<std::string> ServicesToUpdateOnPodChange(std::span<const ServiceSnapshot> services,
                                                     const model::Pod& old_pod,
                                                     const model::Pod& new_pod,
                                                     bool annotations_matter) {
  if (old_pod.metadata.resource_version == new_pod.metadata.resource_version) {
    return {};
  }
  // Upstream compares deletionTimestamp pointers; presence and value are compared here (§15.5).
  const bool pod_changed =
      old_pod.metadata.deletion_timestamp != new_pod.metadata.deletion_timestamp ||
      model::IsPodReady(old_pod) != model::IsPodReady(new_pod) ||
      old_pod.status.pod_ips != new_pod.status.pod_ips ||
      (annotations_matter && old_pod.metadata.annotations != new_pod.metadata.annotations);
  const bool hostname_changed = old_pod.spec.hostname != new_pod.spec.hostname ||
                                old_pod.spec.subdomain != new_pod.spec.subdomain;
  const bool labels_changed = old_pod.metadata.labels != new_pod.metadata.labels;
  if (!pod_changed && !labels_changed && !hostname_changed) {
    return {};
  }
  std::vector<std::string> keys;
  for (const ServiceSnapshot& service : services) {
    const std::optional<model::StringMap>& selector = service->spec.selector;
    if (!selector.has_value()) {
      continue;
    }
    const bool selects_new = labels::SelectorMatchesMap(*selector, new_pod.metadata.labels);
    const bool selects_old = labels::SelectorMatchesMap(*selector, old_pod.metadata.labels);
    bool wanted = false;
    if (pod_changed) {
      wanted = labels_changed ? (selects_new || selects_old) : selects_new;
    } else {
      // Only what selects the endpoints changed: Services that gain or lose the pod, plus those
      // that keep it when its hostname (part of the published address) changed.
      wanted = selects_new != selects_old || (hostname_changed && selects_new);
    }
    if (wanted) {
      keys.push_back(model::NamespacedName(service->metadata));
    }
  }
  return keys;
}

}  // namespace slicewright::controllers

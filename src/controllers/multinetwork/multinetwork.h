// The multi-network controller (issue #5 §2): for Services labelled
// service.kubernetes.io/endpoint-controller-name: multinetwork.slicewright.io that name a network
// in k8s.v1.cni.cncf.io/service-network, it publishes the pods' IPs on that network (from Multus'
// network-status annotation) instead of their pod IPs. It is the EndpointSlice controller with a
// Plugin: the example of a custom controller on the library (docs/custom-controllers.md).
#pragma once

#include <optional>
#include <string_view>

#include "slicewright/base/result.h"
#include "slicewright/model/core.h"

#include "controllers/endpointslice/controller.h"

namespace slicewright::controllers::multinetwork {

inline constexpr std::string_view kControllerName = "multinetwork.slicewright.io";

// Its managed-by value, work queue name, and no upstream metrics (those belong to the
// EndpointSlice controller).
endpointslice::Options DefaultOptions();
endpointslice::Plugin MakePlugin();

// The network `service` publishes, as "namespace/name" ("" if the annotation is absent or empty).
std::string ServiceNetwork(const model::Service& service);
// `pod` with its IPs on `network` as its pod IPs; nullopt when the pod is not attached to it;
// kBadRequest naming the pod and annotation when network-status does not parse.
Result<std::optional<model::Pod>> PodOnNetwork(model::Pod pod, std::string_view network);

}  // namespace slicewright::controllers::multinetwork

// Well-known label and annotation keys and values, spelled exactly as upstream Kubernetes does.
#pragma once

#include <string_view>

namespace slicewright::model {

inline constexpr std::string_view kLabelServiceName = "kubernetes.io/service-name";
inline constexpr std::string_view kLabelManagedBy = "endpointslice.kubernetes.io/managed-by";
inline constexpr std::string_view kLabelSkipMirror = "endpointslice.kubernetes.io/skip-mirror";
inline constexpr std::string_view kLabelHeadless = "service.kubernetes.io/headless";
inline constexpr std::string_view kLabelServiceProxyName =
    "service.kubernetes.io/service-proxy-name";
// KEP-4770: a Service with this label is left to a custom endpoint controller.
inline constexpr std::string_view kLabelEndpointControllerName =
    "service.kubernetes.io/endpoint-controller-name";
inline constexpr std::string_view kLabelTopologyZone = "topology.kubernetes.io/zone";
inline constexpr std::string_view kLabelNodeRoleControlPlane =
    "node-role.kubernetes.io/control-plane";
inline constexpr std::string_view kLabelNodeRoleMaster = "node-role.kubernetes.io/master";

inline constexpr std::string_view kAnnotationLastChangeTriggerTime =
    "endpoints.kubernetes.io/last-change-trigger-time";
inline constexpr std::string_view kAnnotationEndpointsOverCapacity =
    "endpoints.kubernetes.io/over-capacity";
inline constexpr std::string_view kAnnotationTopologyMode = "service.kubernetes.io/topology-mode";
inline constexpr std::string_view kAnnotationTopologyAwareHints =
    "service.kubernetes.io/topology-aware-hints";
inline constexpr std::string_view kAnnotationLeader = "control-plane.alpha.kubernetes.io/leader";
inline constexpr std::string_view kAnnotationLastAppliedConfig =
    "kubectl.kubernetes.io/last-applied-configuration";

// Kubernetes 1.33+ labels the Endpoints its Endpoints controller writes
// endpoints.kubernetes.io/managed-by: endpoint-controller (not in k8s.io/api: the controller's own
// constants LabelManagedBy and ControllerName).
inline constexpr std::string_view kLabelEndpointsManagedBy = "endpoints.kubernetes.io/managed-by";
inline constexpr std::string_view kManagedByEndpointsController = "endpoint-controller";

inline constexpr std::string_view kManagedByEndpointSliceController =
    "endpointslice-controller.k8s.io";
inline constexpr std::string_view kManagedByMirroringController =
    "endpointslicemirroring-controller.k8s.io";

inline constexpr std::string_view kTrafficDistributionPreferClose = "PreferClose";
inline constexpr std::string_view kTrafficDistributionPreferSameZone = "PreferSameZone";
inline constexpr std::string_view kTrafficDistributionPreferSameNode = "PreferSameNode";

}  // namespace slicewright::model

// Bodies of the writes a scheduler and a kubelet make (node registration, binding, pod status,
// pod annotations), for the pod simulator of `slicewright dev`. They carry fields the object model
// leaves out (node addresses, hostIP, startTime), so they are built here as text. Reentrant.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "slicewright/model/core.h"
#include "slicewright/model/meta.h"
#include "slicewright/model/time.h"

namespace slicewright::codec {

// A Node as a kubelet registers it: metadata, status.capacity and allocatable (both
// `resources`), addresses InternalIP and Hostname, and a Ready=True condition (reason
// KubeletReady) heartbeating at `now`.
// status.nodeInfo, as a kubelet (or KWOK) reports it.
struct NodeSystemInfo {
  std::string machine_id;
  std::string system_uuid;
  std::string boot_id;
  std::string kernel_version;
  std::string os_image;
  std::string container_runtime_version;
  std::string kubelet_version;
  std::string kube_proxy_version;
  std::string operating_system;
  std::string architecture;
};

struct NodeRegistration {
  model::ObjectMeta metadata;
  std::string internal_ip;
  model::StringMap resources;  // "cpu" -> "8", "memory" -> "32Gi", "pods" -> "110"
  model::Time now;
  NodeSystemInfo node_info;
};
std::string EncodeNodeRegistration(const NodeRegistration& node);

// A JSON merge patch binding a pod: {"metadata":{"resourceVersion":RV},"spec":{"nodeName":N}}.
// The resourceVersion makes it conditional (409 if the pod changed); "" leaves it out.
std::string EncodePodBindingPatch(std::string_view resource_version, std::string_view node_name);

// A JSON merge patch of a pod's status subresource. Lists (podIPs, conditions) replace the
// stored ones whole, as merge patches do; unset optionals are left as stored.
// One status.containerStatuses entry of a running container.
struct RunningContainerStatus {
  std::string name;
  std::string image;
  std::string image_id;
  std::string container_id;
  bool ready = false;
  model::Time started_at;
};

struct PodStatusPatch {
  std::string resource_version;  // precondition; "" for none
  std::string phase;
  std::vector<std::string> pod_ips;  // podIP is the first; podIPs all
  std::optional<std::string> host_ip;
  std::optional<model::Time> start_time;
  std::vector<model::PodCondition> conditions;
  // Replaces status.containerStatuses whole when not empty (state running, started, no restarts).
  std::vector<RunningContainerStatus> container_statuses;
};
std::string EncodePodStatusPatch(const PodStatusPatch& patch);

// A JSON merge patch setting one annotation: {"metadata":{"annotations":{KEY:VALUE}}}.
std::string EncodeAnnotationPatch(std::string_view key, std::string_view value);

}  // namespace slicewright::codec

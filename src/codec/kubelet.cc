// Scheduler and kubelet write bodies, built as text: small fixed shapes need no JSON library, and
// ObjectMeta comes from the shared encoder so it reads as every other object we write.

#include "slicewright/codec/kubelet.h"

#include <cstddef>
#include <iterator>
#include <string>
#include <string_view>
#include <utility>

#include "codec/internal.h"

namespace slicewright::codec {
namespace {

void AppendKey(std::string& out, std::string_view key) {
  internal::AppendJsonString(out, key);
  out += ':';
}

void AppendStringMap(std::string& out, const model::StringMap& map) {
  out += '{';
  bool first = true;
  for (const auto& [key, value] : map) {
    if (!first) out += ',';
    first = false;
    AppendKey(out, key);
    internal::AppendJsonString(out, value);
  }
  out += '}';
}

void AppendCondition(std::string& out, const model::PodCondition& condition,
                     const std::optional<model::Time>& heartbeat) {
  out += R"({"type":)";
  internal::AppendJsonString(out, condition.type);
  out += R"(,"status":)";
  internal::AppendJsonString(out, condition.status);
  if (heartbeat) {
    out += R"(,"lastHeartbeatTime":)";
    internal::AppendJsonString(out, model::FormatRfc3339(*heartbeat));
  }
  if (condition.last_transition_time) {
    out += R"(,"lastTransitionTime":)";
    internal::AppendJsonString(out, model::FormatRfc3339(*condition.last_transition_time));
  }
  if (!condition.reason.empty()) {
    out += R"(,"reason":)";
    internal::AppendJsonString(out, condition.reason);
  }
  if (!condition.message.empty()) {
    out += R"(,"message":)";
    internal::AppendJsonString(out, condition.message);
  }
  out += '}';
}

void AppendResourceVersion(std::string& out, std::string_view resource_version) {
  if (resource_version.empty()) return;
  out += R"("metadata":{"resourceVersion":)";
  internal::AppendJsonString(out, resource_version);
  out += "},";
}

}  // namespace

std::string EncodeNodeRegistration(const NodeRegistration& node) {
  std::string out = R"({"apiVersion":"v1","kind":"Node","metadata":)";
  out += internal::EncodeObjectMeta(node.metadata);
  out += R"(,"spec":{},"status":{"capacity":)";
  AppendStringMap(out, node.resources);
  out += R"(,"allocatable":)";
  AppendStringMap(out, node.resources);
  out += R"(,"conditions":[)";
  model::PodCondition ready{"Ready", "True", node.now, "KubeletReady",
                            "kubelet is posting ready status"};
  AppendCondition(out, ready, node.now);
  out += R"(],"addresses":[{"type":"InternalIP","address":)";
  internal::AppendJsonString(out, node.internal_ip);
  out += R"(},{"type":"Hostname","address":)";
  internal::AppendJsonString(out, node.metadata.name);
  out += R"(}],"nodeInfo":{)";
  const NodeSystemInfo& info = node.node_info;
  const std::pair<const char*, const std::string*> fields[] = {
      {"machineID", &info.machine_id},
      {"systemUUID", &info.system_uuid},
      {"bootID", &info.boot_id},
      {"kernelVersion", &info.kernel_version},
      {"osImage", &info.os_image},
      {"containerRuntimeVersion", &info.container_runtime_version},
      {"kubeletVersion", &info.kubelet_version},
      {"kubeProxyVersion", &info.kube_proxy_version},
      {"operatingSystem", &info.operating_system},
      {"architecture", &info.architecture},
  };
  for (std::size_t i = 0; i < std::size(fields); ++i) {
    if (i > 0) out += ',';
    AppendKey(out, fields[i].first);
    internal::AppendJsonString(out, *fields[i].second);
  }
  out += "}}}";
  return out;
}

std::string EncodePodBindingPatch(std::string_view resource_version, std::string_view node_name) {
  std::string out = "{";
  AppendResourceVersion(out, resource_version);
  out += R"("spec":{"nodeName":)";
  internal::AppendJsonString(out, node_name);
  out += "}}";
  return out;
}

std::string EncodePodStatusPatch(const PodStatusPatch& patch) {
  std::string out = "{";
  AppendResourceVersion(out, patch.resource_version);
  out += R"("status":{"phase":)";
  internal::AppendJsonString(out, patch.phase);
  if (patch.host_ip) {
    out += R"(,"hostIP":)";
    internal::AppendJsonString(out, *patch.host_ip);
    out += R"(,"hostIPs":[{"ip":)";
    internal::AppendJsonString(out, *patch.host_ip);
    out += "}]";
  }
  if (!patch.pod_ips.empty()) {
    out += R"(,"podIP":)";
    internal::AppendJsonString(out, patch.pod_ips.front());
    out += R"(,"podIPs":[)";
    for (std::size_t i = 0; i < patch.pod_ips.size(); ++i) {
      if (i > 0) out += ',';
      out += R"({"ip":)";
      internal::AppendJsonString(out, patch.pod_ips[i]);
      out += '}';
    }
    out += ']';
  }
  if (patch.start_time) {
    out += R"(,"startTime":)";
    internal::AppendJsonString(out, model::FormatRfc3339(*patch.start_time));
  }
  out += R"(,"conditions":[)";
  for (std::size_t i = 0; i < patch.conditions.size(); ++i) {
    if (i > 0) out += ',';
    AppendCondition(out, patch.conditions[i], std::nullopt);
  }
  out += ']';
  if (!patch.container_statuses.empty()) {
    out += R"(,"containerStatuses":[)";
    for (std::size_t i = 0; i < patch.container_statuses.size(); ++i) {
      const RunningContainerStatus& c = patch.container_statuses[i];
      if (i > 0) out += ',';
      out += R"({"name":)";
      internal::AppendJsonString(out, c.name);
      out += R"(,"image":)";
      internal::AppendJsonString(out, c.image);
      out += R"(,"imageID":)";
      internal::AppendJsonString(out, c.image_id);
      out += R"(,"containerID":)";
      internal::AppendJsonString(out, c.container_id);
      out += c.ready ? R"(,"ready":true)" : R"(,"ready":false)";
      out += R"(,"started":true,"restartCount":0,"state":{"running":{"startedAt":)";
      internal::AppendJsonString(out, model::FormatRfc3339(c.started_at));
      out += "}}}";
    }
    out += ']';
  }
  out += "}}";
  return out;
}

std::string EncodeAnnotationPatch(std::string_view key, std::string_view value) {
  std::string out = R"({"metadata":{"annotations":{)";
  AppendKey(out, key);
  internal::AppendJsonString(out, value);
  out += "}}}";
  return out;
}

}  // namespace slicewright::codec

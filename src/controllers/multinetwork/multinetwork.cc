#include "controllers/multinetwork/multinetwork.h"

#include <string>
#include <utility>

#include "slicewright/codec/network_status.h"
#include "slicewright/model/endpoint_controller.h"
#include "slicewright/model/network_status.h"
#include "slicewright/model/well_known.h"

namespace slicewright::controllers::multinetwork {

endpointslice::Options DefaultOptions() {
  endpointslice::Options options;
  options.managed_by = std::string(kControllerName);
  options.name = "multinetwork";
  options.thread_name = "mnet";
  options.upstream_metrics = false;
  return options;
}

std::string ServiceNetwork(const model::Service& service) {
  auto it = service.metadata.annotations.find(model::kAnnotationServiceNetwork);
  if (it == service.metadata.annotations.end() || it->second.empty()) return {};
  // "NAME" means the NetworkAttachmentDefinition in the Service's namespace.
  if (it->second.find('/') == std::string::npos) {
    return service.metadata.namespace_ + "/" + it->second;
  }
  return it->second;
}

Result<std::optional<model::Pod>> PodOnNetwork(model::Pod pod, std::string_view network) {
  auto it = pod.metadata.annotations.find(model::kAnnotationNetworkStatus);
  if (it == pod.metadata.annotations.end()) return std::optional<model::Pod>();
  Result<std::vector<model::NetworkStatus>> networks = codec::DecodeNetworkStatus(it->second);
  if (!networks.ok()) {
    Status status = networks.status();
    status.WithContext("annotation " + std::string(model::kAnnotationNetworkStatus));
    status.WithObject("pods/" + pod.metadata.namespace_ + "/" + pod.metadata.name);
    return status;
  }
  const std::string_view bare_name = network.substr(network.find('/') + 1);
  for (const model::NetworkStatus& entry : *networks) {
    // Multus names attachments "namespace/name"; a bare name is read in the pod's namespace.
    const bool same = entry.name == network ||
                      (entry.name.find('/') == std::string::npos && entry.name == bare_name &&
                       network.starts_with(pod.metadata.namespace_ + "/"));
    if (!same || entry.is_default) continue;
    pod.status.pod_ips = entry.ips;
    pod.status.pod_ip = entry.ips.empty() ? std::string() : entry.ips.front();
    if (entry.ips.empty()) return std::optional<model::Pod>();
    return std::optional<model::Pod>(std::move(pod));
  }
  return std::optional<model::Pod>();
}

endpointslice::Plugin MakePlugin() {
  endpointslice::Plugin plugin;
  plugin.owns = [](const model::Service& service) {
    return model::LabelledForController(service, kControllerName) &&
           !ServiceNetwork(service).empty();
  };
  plugin.adapt_pod = [](const model::Service& service, model::Pod pod) {
    return PodOnNetwork(std::move(pod), ServiceNetwork(service));
  };
  plugin.adapt_failed_reason = "FailedToReadPodNetworks";
  return plugin;
}

}  // namespace slicewright::controllers::multinetwork

// What the load drivers (scale_sim, mcs_sim) write: pods of the pause image with an http port and
// their status as a kubelet writes it, Services selecting them, and clients the driver never
// throttles.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "slicewright/base/result.h"
#include "slicewright/client/rest_client.h"
#include "slicewright/client/rest_config.h"
#include "slicewright/client/transport.h"
#include "slicewright/model/core.h"

namespace slicewright::bench {

inline constexpr int kTargetPort = 8080;

// Pod IP number `index` of cluster `cluster` (1, 2, ...): 10.(64*cluster + ...).x.y, distinct
// per cluster for a million pods each.
inline std::string PodIp(int cluster, std::int64_t index) {
  return "10." + std::to_string(64 * cluster + (index >> 16) % 64) + "." +
         std::to_string((index >> 8) & 255) + "." + std::to_string(index & 255);
}

// A pod labelled app=`app` on `node`, one container with the named port "http".
inline model::Pod HttpPod(std::string namespace_, std::string name, const std::string& app,
                          std::string node) {
  model::Pod pod;
  pod.metadata.namespace_ = std::move(namespace_);
  pod.metadata.name = std::move(name);
  pod.metadata.labels = {{"app", app}};
  pod.spec.node_name = std::move(node);
  model::Container container;
  container.name = "app";
  container.image = "registry.k8s.io/pause:3.9";
  model::ContainerPort port;
  port.name = "http";
  port.container_port = kTargetPort;
  container.ports = {port};
  pod.spec.containers = {container};
  return pod;
}

// Running with `ip`, Ready or not: what a kubelet's status write carries.
inline void SetStatus(model::Pod& pod, const std::string& ip, bool ready) {
  pod.status.phase = "Running";
  pod.status.pod_ip = ip;
  pod.status.pod_ips = {ip};
  model::PodCondition condition;
  condition.type = "Ready";
  condition.status = ready ? "True" : "False";
  pod.status.conditions = {condition};
}

// A Service named `name` selecting app=`name`, port 80 to the pods' "http".
inline model::Service HttpService(std::string namespace_, const std::string& name) {
  model::Service service;
  service.metadata.namespace_ = std::move(namespace_);
  service.metadata.name = name;
  service.spec.selector = model::StringMap{{"app", name}};
  model::ServicePort port;
  port.name = "http";
  port.port = 80;
  port.target_port = model::IntOrString::FromString("http");
  service.spec.ports = {port};
  return service;
}

// A client of `context` in `kubeconfig` ("" = current) without client-side rate limits: the
// driver measures the server, not its own throttle.
inline Result<std::unique_ptr<client::RestClient>> UnthrottledClient(
    const std::string& kubeconfig, const std::string& context = "") {
  client::LoadOptions load;
  load.kubeconfig = kubeconfig;
  load.context = context;
  SW_ASSIGN_OR_RETURN(client::RestConfig config, client::LoadRestConfig(load));
  client::TransportOptions transport_options;
  transport_options.max_idle_connections = 64;
  SW_ASSIGN_OR_RETURN(std::unique_ptr<client::Transport> transport,
                      client::Transport::Create(config, transport_options));
  client::RestClientOptions client_options;
  client_options.qps = 1e6;
  client_options.burst = 1000000;
  return client::RestClient::Create(std::shared_ptr<client::Transport>(std::move(transport)),
                                    client_options);
}

}  // namespace slicewright::bench

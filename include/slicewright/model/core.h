// core/v1 types, limited to the fields slicewright reads or writes: Service, Pod, Node, Endpoints,
// Namespace and Event. Copyable aggregates with defaulted equality; thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "slicewright/model/meta.h"

namespace slicewright::model {

// intstr.IntOrString as used by ServicePort.targetPort.
struct IntOrString {
  bool is_string = false;
  std::int32_t int_value = 0;
  std::string string_value;
  static IntOrString FromInt(std::int32_t value) { return {false, value, {}}; }
  static IntOrString FromString(std::string value) { return {true, 0, std::move(value)}; }
  friend bool operator==(const IntOrString&, const IntOrString&) = default;
};

// ---- Service ----

// core/v1 SessionAffinityConfig (also the ServiceImport's): only clientIP.timeoutSeconds exists.
struct ClientIPConfig {
  std::optional<std::int32_t> timeout_seconds;
  friend bool operator==(const ClientIPConfig&, const ClientIPConfig&) = default;
};
struct SessionAffinityConfig {
  std::optional<ClientIPConfig> client_ip;
  friend bool operator==(const SessionAffinityConfig&, const SessionAffinityConfig&) = default;
};

struct ServicePort {
  std::string name;
  std::string protocol = "TCP";
  std::int32_t port = 0;
  IntOrString target_port;  // the decoder defaults it to `port`, as the API server does
  std::optional<std::string> app_protocol;
  std::int32_t node_port = 0;
  friend bool operator==(const ServicePort&, const ServicePort&) = default;
};

struct ServiceSpec {
  std::string type;  // "" means ClusterIP
  // nullopt: no selector (endpoints come from elsewhere); an empty map selects every pod.
  std::optional<StringMap> selector;
  std::string cluster_ip;
  std::vector<std::string> cluster_ips;
  std::vector<std::string> ip_families;  // "IPv4", "IPv6"
  std::string ip_family_policy;
  std::vector<ServicePort> ports;
  bool publish_not_ready_addresses = false;
  std::optional<std::string> traffic_distribution;
  std::string external_name;
  std::string session_affinity;
  std::optional<SessionAffinityConfig> session_affinity_config;
  std::string internal_traffic_policy;
  std::string external_traffic_policy;
  friend bool operator==(const ServiceSpec&, const ServiceSpec&) = default;
};

struct Service {
  ObjectMeta metadata;
  ServiceSpec spec;
  friend bool operator==(const Service&, const Service&) = default;
};

// ---- Pod ----

struct ContainerPort {
  std::string name;
  std::int32_t container_port = 0;
  std::string protocol = "TCP";
  std::int32_t host_port = 0;
  std::string host_ip;
  friend bool operator==(const ContainerPort&, const ContainerPort&) = default;
};

struct Container {
  std::string name;
  std::string image;
  std::vector<ContainerPort> ports;
  std::optional<std::string> restart_policy;  // init containers only: "Always" marks a sidecar
  friend bool operator==(const Container&, const Container&) = default;
};

struct PodSpec {
  std::string node_name;
  std::string hostname;
  std::string subdomain;
  std::vector<Container> containers;
  std::vector<Container> init_containers;
  friend bool operator==(const PodSpec&, const PodSpec&) = default;
};

// core/v1 PodCondition and NodeCondition share these fields.
struct PodCondition {
  std::string type;
  std::string status;
  std::optional<Time> last_transition_time;
  std::string reason;
  std::string message;
  friend bool operator==(const PodCondition&, const PodCondition&) = default;
};

struct PodStatus {
  std::string phase;  // Pending, Running, Succeeded, Failed, Unknown
  std::string pod_ip;
  std::vector<std::string> pod_ips;  // status.podIPs[].ip
  std::vector<PodCondition> conditions;
  friend bool operator==(const PodStatus&, const PodStatus&) = default;
};

struct Pod {
  ObjectMeta metadata;
  PodSpec spec;
  PodStatus status;
  friend bool operator==(const Pod&, const Pod&) = default;
};

// ---- Node ----

struct NodeStatus {
  StringMap allocatable;  // resource name -> quantity text ("4", "3500m")
  std::vector<PodCondition> conditions;
  friend bool operator==(const NodeStatus&, const NodeStatus&) = default;
};

struct Node {
  ObjectMeta metadata;
  NodeStatus status;
  friend bool operator==(const Node&, const Node&) = default;
};

// ---- Endpoints ----

struct EndpointAddress {
  std::string ip;
  std::string hostname;
  std::optional<std::string> node_name;
  std::optional<ObjectReference> target_ref;
  friend bool operator==(const EndpointAddress&, const EndpointAddress&) = default;
};

// core/v1 EndpointPort.
struct CoreEndpointPort {
  std::string name;
  std::int32_t port = 0;
  std::string protocol = "TCP";
  std::optional<std::string> app_protocol;
  friend bool operator==(const CoreEndpointPort&, const CoreEndpointPort&) = default;
};

struct EndpointSubset {
  std::vector<EndpointAddress> addresses;
  std::vector<EndpointAddress> not_ready_addresses;
  std::vector<CoreEndpointPort> ports;
  friend bool operator==(const EndpointSubset&, const EndpointSubset&) = default;
};

struct Endpoints {
  ObjectMeta metadata;
  std::vector<EndpointSubset> subsets;
  friend bool operator==(const Endpoints&, const Endpoints&) = default;
};

// ---- Namespace ----

struct Namespace {
  ObjectMeta metadata;
  std::string phase;  // Active, Terminating
  friend bool operator==(const Namespace&, const Namespace&) = default;
};

// ---- Event (core/v1) ----

struct Event {
  ObjectMeta metadata;
  ObjectReference involved_object;
  std::string reason;
  std::string message;
  std::string type;  // Normal, Warning
  std::string source_component;
  std::string source_host;
  std::optional<Time> first_timestamp;
  std::optional<Time> last_timestamp;
  std::int32_t count = 0;
  std::string reporting_component;
  std::string reporting_instance;
  std::string action;
  friend bool operator==(const Event&, const Event&) = default;
};

// The condition of `type` in a Pod's or Node's conditions; nullptr if absent.
const PodCondition* FindPodCondition(const std::vector<PodCondition>& conditions,
                                     std::string_view type);
// True when the Pod condition Ready has status "True".
bool IsPodReady(const Pod& pod);

}  // namespace slicewright::model

// The simdjson adapter: decodes Kubernetes JSON into the model. simdjson is used only through its
// error-code API, so nothing here throws. Every decoder walks a fixed schema, so recursion depth is
// bounded by the schema, not by the input (simdjson itself refuses nesting deeper than 1024).

#include "slicewright/codec/json.h"

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <simdjson.h>

#include "slicewright/base/status.h"
#include "slicewright/codec/network_status.h"
#include "slicewright/model/time.h"

#include "codec/internal.h"
#include "codec/json_readers.h"

namespace slicewright::codec {
namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

using internal::AtDocument;
using internal::AtKey;
using internal::Compose;
using internal::Expected;
using internal::ForEachField;
using internal::kMaxReservedItems;
using internal::OutOfRange;
using internal::ReadApiStatus;
using internal::ReadBool;
using internal::ReadInt;
using internal::ReadList;
using internal::ReadMap;
using internal::ReadOptBool;
using internal::ReadOptInt;
using internal::ReadOptional;
using internal::ReadOptString;
using internal::ReadString;
using internal::ReadStringList;
using internal::ReadStringMap;
using internal::ReadTime;
using internal::ReadTypeMeta;
using internal::SyntaxErrorOffset;
using internal::WithParsed;

// ---- Scalars beyond json_readers.h ----

// intstr.IntOrString: sets `present` unless the value is null.
Status ReadIntOrString(element value, model::IntOrString& out, bool& present) {
  switch (value.type()) {
    case element_type::STRING:
      out = model::IntOrString::FromString(std::string(value.get_string().value_unsafe()));
      present = true;
      return Status();
    case element_type::INT64: {
      std::int32_t v = 0;
      SW_RETURN_IF_ERROR(ReadInt(value, v));
      out = model::IntOrString::FromInt(v);
      present = true;
      return Status();
    }
    case element_type::UINT64:
      return OutOfRange();
    case element_type::NULL_VALUE:
      present = false;
      return Status();
    default:
      return Expected("integer or string");
  }
}

// resource.Quantity accepts a JSON string or a bare number; both are kept as text.
Status ReadQuantity(element value, std::string& out) {
  switch (value.type()) {
    case element_type::STRING:
      out.assign(value.get_string().value_unsafe());
      return Status();
    case element_type::INT64:
      out = std::to_string(value.get_int64().value_unsafe());
      return Status();
    case element_type::UINT64:
      out = std::to_string(value.get_uint64().value_unsafe());
      return Status();
    case element_type::DOUBLE: {
      char buffer[32];
      const auto result =
          std::to_chars(buffer, buffer + sizeof buffer, value.get_double().value_unsafe());
      out.assign(buffer, result.ptr);
      return Status();
    }
    case element_type::NULL_VALUE:
      out.clear();
      return Status();
    default:
      return Expected("string or number");
  }
}

// {"name": "..."} as in EndpointHints.forZones and forNodes.
Status DecodeNameRef(element value, std::string& out) {
  return ForEachField(value, [&out](std::string_view key, element v) {
    if (key == "name") return ReadString(v, out);
    return Status();
  });
}

// ---- meta/v1 ----

Status DecodeOwnerReference(element value, model::OwnerReference& out) {
  return ForEachField(value, [&out](std::string_view key, element v) {
    if (key == "apiVersion") return ReadString(v, out.api_version);
    if (key == "kind") return ReadString(v, out.kind);
    if (key == "name") return ReadString(v, out.name);
    if (key == "uid") return ReadString(v, out.uid);
    if (key == "controller") return ReadOptBool(v, out.controller);
    if (key == "blockOwnerDeletion") return ReadOptBool(v, out.block_owner_deletion);
    return Status();
  });
}

Status DecodeObjectMeta(element value, model::ObjectMeta& out) {
  return ForEachField(value, [&out](std::string_view key, element v) {
    if (key == "name") return ReadString(v, out.name);
    if (key == "namespace") return ReadString(v, out.namespace_);
    if (key == "uid") return ReadString(v, out.uid);
    if (key == "resourceVersion") return ReadString(v, out.resource_version);
    if (key == "labels") return ReadStringMap(v, out.labels);
    if (key == "annotations") return ReadStringMap(v, out.annotations);
    if (key == "generateName") return ReadString(v, out.generate_name);
    if (key == "generation") return ReadInt(v, out.generation);
    if (key == "ownerReferences") return ReadList(v, out.owner_references, DecodeOwnerReference);
    if (key == "finalizers") return ReadStringList(v, out.finalizers);
    if (key == "creationTimestamp") return ReadTime(v, out.creation_timestamp);
    if (key == "deletionTimestamp") return ReadTime(v, out.deletion_timestamp);
    return Status();  // managedFields, selfLink, ... are not modelled
  });
}

Status DecodeObjectReference(element value, model::ObjectReference& out) {
  return ForEachField(value, [&out](std::string_view key, element v) {
    if (key == "kind") return ReadString(v, out.kind);
    if (key == "namespace") return ReadString(v, out.namespace_);
    if (key == "name") return ReadString(v, out.name);
    if (key == "uid") return ReadString(v, out.uid);
    if (key == "apiVersion") return ReadString(v, out.api_version);
    if (key == "resourceVersion") return ReadString(v, out.resource_version);
    if (key == "fieldPath") return ReadString(v, out.field_path);
    return Status();
  });
}

// ---- core/v1 Service ----

Status DecodeServicePort(element value, model::ServicePort& out) {
  bool has_target_port = false;
  SW_RETURN_IF_ERROR(ForEachField(value, [&](std::string_view key, element v) {
    if (key == "name") return ReadString(v, out.name);
    if (key == "protocol") return ReadString(v, out.protocol);
    if (key == "port") return ReadInt(v, out.port);
    if (key == "targetPort") return ReadIntOrString(v, out.target_port, has_target_port);
    if (key == "appProtocol") return ReadOptString(v, out.app_protocol);
    if (key == "nodePort") return ReadInt(v, out.node_port);
    return Status();
  }));
  // The API server's SetDefaults_ServicePort: protocol TCP; a missing, 0 or "" targetPort is the
  // port itself. Applied after the loop because targetPort may precede port.
  if (out.protocol.empty()) out.protocol = "TCP";
  const bool unset_target =
      !has_target_port || (out.target_port.is_string ? out.target_port.string_value.empty()
                                                     : out.target_port.int_value == 0);
  if (unset_target) out.target_port = model::IntOrString::FromInt(out.port);
  return Status();
}

Status DecodeClientIPConfig(element value, model::ClientIPConfig& out) {
  return ForEachField(value, [&out](std::string_view key, element v) {
    if (key == "timeoutSeconds") return ReadOptInt(v, out.timeout_seconds);
    return Status();
  });
}

Status DecodeSessionAffinityConfig(element value, model::SessionAffinityConfig& out) {
  return ForEachField(value, [&out](std::string_view key, element v) {
    if (key == "clientIP") return ReadOptional(v, out.client_ip, DecodeClientIPConfig);
    return Status();
  });
}

Status DecodeServiceSpec(element value, model::ServiceSpec& out) {
  return ForEachField(value, [&out](std::string_view key, element v) {
    if (key == "ports") return ReadList(v, out.ports, DecodeServicePort);
    if (key == "selector") return ReadOptional(v, out.selector, ReadStringMap);
    if (key == "clusterIP") return ReadString(v, out.cluster_ip);
    if (key == "clusterIPs") return ReadStringList(v, out.cluster_ips);
    if (key == "type") return ReadString(v, out.type);
    if (key == "sessionAffinity") return ReadString(v, out.session_affinity);
    if (key == "sessionAffinityConfig") {
      return ReadOptional(v, out.session_affinity_config, DecodeSessionAffinityConfig);
    }
    if (key == "ipFamilies") return ReadStringList(v, out.ip_families);
    if (key == "ipFamilyPolicy") return ReadString(v, out.ip_family_policy);
    if (key == "internalTrafficPolicy") return ReadString(v, out.internal_traffic_policy);
    if (key == "externalTrafficPolicy") return ReadString(v, out.external_traffic_policy);
    if (key == "publishNotReadyAddresses") return ReadBool(v, out.publish_not_ready_addresses);
    if (key == "trafficDistribution") return ReadOptString(v, out.traffic_distribution);
    if (key == "externalName") return ReadString(v, out.external_name);
    return Status();
  });
}

Status ReadService(element value, model::Service& out) {
  return ForEachField(value, [&out](std::string_view key, element v) {
    if (key == "metadata") return DecodeObjectMeta(v, out.metadata);
    if (key == "spec") return DecodeServiceSpec(v, out.spec);
    return Status();
  });
}

// ---- core/v1 Pod ----

Status DecodeContainerPort(element value, model::ContainerPort& out) {
  SW_RETURN_IF_ERROR(ForEachField(value, [&out](std::string_view key, element v) {
    if (key == "containerPort") return ReadInt(v, out.container_port);
    if (key == "name") return ReadString(v, out.name);
    if (key == "protocol") return ReadString(v, out.protocol);
    if (key == "hostPort") return ReadInt(v, out.host_port);
    if (key == "hostIP") return ReadString(v, out.host_ip);
    return Status();
  }));
  if (out.protocol.empty()) out.protocol = "TCP";  // SetDefaults_ContainerPort
  return Status();
}

Status DecodeContainer(element value, model::Container& out) {
  return ForEachField(value, [&out](std::string_view key, element v) {
    if (key == "name") return ReadString(v, out.name);
    if (key == "image") return ReadString(v, out.image);
    if (key == "ports") return ReadList(v, out.ports, DecodeContainerPort);
    if (key == "restartPolicy") return ReadOptString(v, out.restart_policy);
    return Status();
  });
}

Status DecodePodSpec(element value, model::PodSpec& out) {
  return ForEachField(value, [&out](std::string_view key, element v) {
    if (key == "containers") return ReadList(v, out.containers, DecodeContainer);
    if (key == "nodeName") return ReadString(v, out.node_name);
    if (key == "initContainers") return ReadList(v, out.init_containers, DecodeContainer);
    if (key == "hostname") return ReadString(v, out.hostname);
    if (key == "subdomain") return ReadString(v, out.subdomain);
    return Status();
  });
}

Status DecodePodCondition(element value, model::PodCondition& out) {
  return ForEachField(value, [&out](std::string_view key, element v) {
    if (key == "type") return ReadString(v, out.type);
    if (key == "status") return ReadString(v, out.status);
    if (key == "lastTransitionTime") return ReadTime(v, out.last_transition_time);
    if (key == "reason") return ReadString(v, out.reason);
    if (key == "message") return ReadString(v, out.message);
    return Status();  // lastProbeTime, lastHeartbeatTime
  });
}

Status DecodePodIp(element value, std::string& out) {
  return ForEachField(value, [&out](std::string_view key, element v) {
    if (key == "ip") return ReadString(v, out);
    return Status();
  });
}

Status DecodePodStatus(element value, model::PodStatus& out) {
  return ForEachField(value, [&out](std::string_view key, element v) {
    if (key == "phase") return ReadString(v, out.phase);
    if (key == "conditions") return ReadList(v, out.conditions, DecodePodCondition);
    if (key == "podIP") return ReadString(v, out.pod_ip);
    if (key == "podIPs") return ReadList(v, out.pod_ips, DecodePodIp);
    return Status();
  });
}

Status ReadPod(element value, model::Pod& out) {
  return ForEachField(value, [&out](std::string_view key, element v) {
    if (key == "metadata") return DecodeObjectMeta(v, out.metadata);
    if (key == "spec") return DecodePodSpec(v, out.spec);
    if (key == "status") return DecodePodStatus(v, out.status);
    return Status();
  });
}

// ---- core/v1 Node, Namespace ----

Status DecodeNodeStatus(element value, model::NodeStatus& out) {
  return ForEachField(value, [&out](std::string_view key, element v) {
    if (key == "allocatable") return ReadMap(v, out.allocatable, ReadQuantity);
    if (key == "conditions") return ReadList(v, out.conditions, DecodePodCondition);
    return Status();
  });
}

Status ReadNode(element value, model::Node& out) {
  return ForEachField(value, [&out](std::string_view key, element v) {
    if (key == "metadata") return DecodeObjectMeta(v, out.metadata);
    if (key == "status") return DecodeNodeStatus(v, out.status);
    return Status();
  });
}

Status ReadNamespace(element value, model::Namespace& out) {
  return ForEachField(value, [&out](std::string_view key, element v) {
    if (key == "metadata") return DecodeObjectMeta(v, out.metadata);
    if (key == "status") {
      return ForEachField(v, [&out](std::string_view status_key, element status_value) {
        if (status_key == "phase") return ReadString(status_value, out.phase);
        return Status();
      });
    }
    return Status();
  });
}

// ---- core/v1 Endpoints ----

Status DecodeEndpointAddress(element value, model::EndpointAddress& out) {
  return ForEachField(value, [&out](std::string_view key, element v) {
    if (key == "ip") return ReadString(v, out.ip);
    if (key == "targetRef") return ReadOptional(v, out.target_ref, DecodeObjectReference);
    if (key == "nodeName") return ReadOptString(v, out.node_name);
    if (key == "hostname") return ReadString(v, out.hostname);
    return Status();
  });
}

Status DecodeCoreEndpointPort(element value, model::CoreEndpointPort& out) {
  SW_RETURN_IF_ERROR(ForEachField(value, [&out](std::string_view key, element v) {
    if (key == "port") return ReadInt(v, out.port);
    if (key == "name") return ReadString(v, out.name);
    if (key == "protocol") return ReadString(v, out.protocol);
    if (key == "appProtocol") return ReadOptString(v, out.app_protocol);
    return Status();
  }));
  if (out.protocol.empty()) out.protocol = "TCP";  // SetDefaults_EndpointPort (core/v1)
  return Status();
}

Status DecodeEndpointSubset(element value, model::EndpointSubset& out) {
  return ForEachField(value, [&out](std::string_view key, element v) {
    if (key == "addresses") return ReadList(v, out.addresses, DecodeEndpointAddress);
    if (key == "notReadyAddresses") {
      return ReadList(v, out.not_ready_addresses, DecodeEndpointAddress);
    }
    if (key == "ports") return ReadList(v, out.ports, DecodeCoreEndpointPort);
    return Status();
  });
}

Status ReadEndpoints(element value, model::Endpoints& out) {
  return ForEachField(value, [&out](std::string_view key, element v) {
    if (key == "metadata") return DecodeObjectMeta(v, out.metadata);
    if (key == "subsets") return ReadList(v, out.subsets, DecodeEndpointSubset);
    return Status();
  });
}

// ---- core/v1 Event ----

Status ReadEvent(element value, model::Event& out) {
  return ForEachField(value, [&out](std::string_view key, element v) {
    if (key == "metadata") return DecodeObjectMeta(v, out.metadata);
    if (key == "involvedObject") return DecodeObjectReference(v, out.involved_object);
    if (key == "reason") return ReadString(v, out.reason);
    if (key == "message") return ReadString(v, out.message);
    if (key == "type") return ReadString(v, out.type);
    if (key == "source") {
      return ForEachField(v, [&out](std::string_view source_key, element source_value) {
        if (source_key == "component") return ReadString(source_value, out.source_component);
        if (source_key == "host") return ReadString(source_value, out.source_host);
        return Status();
      });
    }
    if (key == "firstTimestamp") return ReadTime(v, out.first_timestamp);
    if (key == "lastTimestamp") return ReadTime(v, out.last_timestamp);
    if (key == "count") return ReadInt(v, out.count);
    if (key == "reportingComponent") return ReadString(v, out.reporting_component);
    if (key == "reportingInstance") return ReadString(v, out.reporting_instance);
    if (key == "action") return ReadString(v, out.action);
    return Status();
  });
}

// ---- discovery.k8s.io/v1 EndpointSlice ----

Status DecodeEndpointConditions(element value, model::EndpointConditions& out) {
  return ForEachField(value, [&out](std::string_view key, element v) {
    if (key == "ready") return ReadOptBool(v, out.ready);
    if (key == "serving") return ReadOptBool(v, out.serving);
    if (key == "terminating") return ReadOptBool(v, out.terminating);
    return Status();
  });
}

Status DecodeEndpointHints(element value, model::EndpointHints& out) {
  return ForEachField(value, [&out](std::string_view key, element v) {
    if (key == "forZones") return ReadList(v, out.for_zones, DecodeNameRef);
    if (key == "forNodes") return ReadList(v, out.for_nodes, DecodeNameRef);
    return Status();
  });
}

Status DecodeEndpoint(element value, model::Endpoint& out) {
  return ForEachField(value, [&out](std::string_view key, element v) {
    if (key == "addresses") return ReadStringList(v, out.addresses);
    if (key == "conditions") return DecodeEndpointConditions(v, out.conditions);
    if (key == "targetRef") return ReadOptional(v, out.target_ref, DecodeObjectReference);
    if (key == "nodeName") return ReadOptString(v, out.node_name);
    if (key == "zone") return ReadOptString(v, out.zone);
    if (key == "hostname") return ReadOptString(v, out.hostname);
    if (key == "hints") return ReadOptional(v, out.hints, DecodeEndpointHints);
    return Status();  // deprecatedTopology
  });
}

Status DecodeEndpointPort(element value, model::EndpointPort& out) {
  return ForEachField(value, [&out](std::string_view key, element v) {
    if (key == "name") return ReadOptString(v, out.name);
    if (key == "protocol") return ReadOptString(v, out.protocol);
    if (key == "port") return ReadOptInt(v, out.port);
    if (key == "appProtocol") return ReadOptString(v, out.app_protocol);
    return Status();
  });
}

Status ReadEndpointSlice(element value, model::EndpointSlice& out) {
  return ForEachField(value, [&out](std::string_view key, element v) {
    if (key == "metadata") return DecodeObjectMeta(v, out.metadata);
    if (key == "endpoints") return ReadList(v, out.endpoints, DecodeEndpoint);
    if (key == "addressType") return ReadString(v, out.address_type);
    if (key == "ports") return ReadList(v, out.ports, DecodeEndpointPort);
    return Status();
  });
}

// ---- Kinds ----

// What a decoder needs to know about each modelled kind: its type meta, how errors name an object
// of it, and where it goes in an ObjectSet.
template <typename T>
struct KindSpec {
  std::string_view api_version;
  std::string_view kind;
  std::string_view resource;  // the REST resource, for "pods/default/web-1"
  bool namespaced;
  Status (*decode)(element, T&);
  std::vector<T> ObjectSet::*members;
};

constexpr KindSpec<model::Service> kServiceKind{"v1", "Service",   "services",
                                                true, ReadService, &ObjectSet::services};
constexpr KindSpec<model::Pod> kPodKind{"v1", "Pod", "pods", true, ReadPod, &ObjectSet::pods};
constexpr KindSpec<model::Node> kNodeKind{"v1",  "Node",   "nodes",
                                          false, ReadNode, &ObjectSet::nodes};
constexpr KindSpec<model::Endpoints> kEndpointsKind{"v1", "Endpoints",   "endpoints",
                                                    true, ReadEndpoints, &ObjectSet::endpoints};
constexpr KindSpec<model::Namespace> kNamespaceKind{"v1",  "Namespace",   "namespaces",
                                                    false, ReadNamespace, &ObjectSet::namespaces};
constexpr KindSpec<model::Event> kEventKind{"v1", "Event",   "events",
                                            true, ReadEvent, &ObjectSet::events};
constexpr KindSpec<model::EndpointSlice> kEndpointSliceKind{
    "discovery.k8s.io/v1",      "EndpointSlice", "endpointslices", true, ReadEndpointSlice,
    &ObjectSet::endpoint_slices};

// Calls fn(spec) with the KindSpec of (api_version, kind); returns false for kinds not modelled
// (events.k8s.io/v1 Event, discovery.k8s.io/v1beta1 EndpointSlice, every CRD, ...).
template <typename Fn>
bool VisitKind(std::string_view api_version, std::string_view kind, Fn&& fn) {
  if (api_version == "v1") {
    if (kind == "Pod") {
      fn(kPodKind);
      return true;
    }
    if (kind == "Service") {
      fn(kServiceKind);
      return true;
    }
    if (kind == "Endpoints") {
      fn(kEndpointsKind);
      return true;
    }
    if (kind == "Node") {
      fn(kNodeKind);
      return true;
    }
    if (kind == "Namespace") {
      fn(kNamespaceKind);
      return true;
    }
    if (kind == "Event") {
      fn(kEventKind);
      return true;
    }
    return false;
  }
  if (api_version == "discovery.k8s.io/v1" && kind == "EndpointSlice") {
    fn(kEndpointSliceKind);
    return true;
  }
  return false;
}

// How errors name the object: "pods/default/web-1", "nodes/node-1"; when the name cannot be read,
// "items[3]" inside a list, else the bare resource ("pods").
template <typename T>
std::string ObjectName(const KindSpec<T>& spec, element value, std::optional<std::size_t> index) {
  std::string_view name;
  std::string_view ns;
  const auto metadata = value.at_key("metadata");
  if (metadata.at_key("name").get_string().get(name) != simdjson::SUCCESS) name = {};
  if (metadata.at_key("namespace").get_string().get(ns) != simdjson::SUCCESS) ns = {};
  std::string out;
  if (name.empty()) {
    if (index.has_value()) return "items[" + std::to_string(*index) + "]";
    return std::string(spec.resource);
  }
  out.reserve(spec.resource.size() + ns.size() + name.size() + 2);
  out += spec.resource;
  out += '/';
  if (spec.namespaced && !ns.empty()) {
    out += ns;
    out += '/';
  }
  out += name;
  return out;
}

struct Decoder {
  std::string_view document;
  ObjectSet& out;
  internal::ErrorSite* site;

  // Records where the error is, for callers that map it back to their own input.
  Status Located(Status status, std::optional<std::size_t> index) const {
    if (site != nullptr) {
      site->path.clear();
      if (index.has_value()) site->path = ".items[" + std::to_string(*index) + "]";
      site->path += status.field();
    }
    return status;
  }

  static std::string ItemName(std::optional<std::size_t> index) {
    return index.has_value() ? "items[" + std::to_string(*index) + "]" : std::string();
  }

  // One object of a known or unknown kind, at the root or at items[index].
  Status Object(element value, std::string_view api_version, std::string_view kind,
                std::optional<std::size_t> index) {
    Status status;
    const bool known = VisitKind(api_version, kind, [&](const auto& spec) {
      auto& members = out.*spec.members;
      status = spec.decode(value, members.emplace_back());
      if (!status.ok()) {
        status.WithObject(Compose(document, ObjectName(spec, value, index)));
        status = Located(std::move(status), index);
      }
    });
    if (!known) {
      std::string skipped;
      skipped.reserve(api_version.size() + 1 + kind.size());
      skipped += api_version;
      skipped += ' ';
      skipped += kind;
      out.skipped_kinds.push_back(std::move(skipped));
    }
    return status;
  }

  // A type-level error (not inside a modelled object): names the document and the item.
  Status TypeError(Status status, std::optional<std::size_t> index) const {
    status.WithObject(Compose(document, ItemName(index)));
    return Located(std::move(status), index);
  }

  Status ListItem(element item, std::string_view list_api_version, std::string_view list_kind,
                  std::string_view item_kind, std::size_t index) {
    if (item.is_null()) return Status();
    if (!item.is_object()) return TypeError(Expected("object"), index);
    std::string_view api_version;
    std::string_view kind;
    Status status = ReadTypeMeta(item, api_version, kind);
    if (!status.ok()) return TypeError(std::move(status), index);
    if (!item_kind.empty()) {
      // Items of a typed list (PodList) may omit their type meta; if present it must agree.
      if (!api_version.empty() && api_version != list_api_version) {
        return TypeError(AtKey(Mismatch(list_api_version, list_api_version, list_kind, api_version),
                               "apiVersion"),
                         index);
      }
      if (!kind.empty() && kind != item_kind) {
        return TypeError(AtKey(Mismatch(item_kind, list_api_version, list_kind, kind), "kind"),
                         index);
      }
      api_version = list_api_version;
      kind = item_kind;
    } else if (api_version.empty() || kind.empty()) {
      return TypeError(BadRequestError("missing apiVersion or kind"), index);
    }
    return Object(item, api_version, kind, index);
  }

  static Status Mismatch(std::string_view want, std::string_view list_api_version,
                         std::string_view list_kind, std::string_view got) {
    std::string message = "expected ";
    message += want;
    message += " in a ";
    message += list_api_version;
    message += ' ';
    message += list_kind;
    message += ", got ";
    message += got;
    return BadRequestError(std::move(message));
  }

  Status List(element root, std::string_view api_version, std::string_view kind) {
    element items;
    if (root.at_key("items").get(items) != simdjson::SUCCESS || items.is_null()) return Status();
    if (!items.is_array()) return TypeError(AtKey(Expected("array"), "items"), std::nullopt);
    // "List" mixes kinds; "PodList" holds Pods of the list's apiVersion.
    const std::string_view item_kind =
        kind == "List" ? std::string_view() : kind.substr(0, kind.size() - 4);
    const simdjson::dom::array array = items.get_array().value_unsafe();
    if (!item_kind.empty()) {
      // Capped: a list of nulls is cheap text but would reserve full objects.
      const std::size_t expected = std::min<std::size_t>(array.size(), kMaxReservedItems);
      VisitKind(api_version, item_kind,
                [&](const auto& spec) { (out.*spec.members).reserve(expected); });
    }
    std::size_t index = 0;
    for (const element item : array) {
      SW_RETURN_IF_ERROR(ListItem(item, api_version, kind, item_kind, index));
      ++index;
    }
    return Status();
  }

  Status Root(element root) {
    if (!root.is_object()) {
      return AtDocument(BadRequestError("expected a JSON object at the top level"), document);
    }
    std::string_view api_version;
    std::string_view kind;
    Status status = ReadTypeMeta(root, api_version, kind);
    if (!status.ok()) return TypeError(std::move(status), std::nullopt);
    // "List" and "<Kind>List" with items; a kind that merely ends in "List" and has no items is
    // an ordinary (unknown) object.
    const bool is_list = kind == "List" || (kind.size() > 4 && kind.ends_with("List") &&
                                            root.at_key("items").error() == simdjson::SUCCESS);
    if (is_list) return List(root, api_version, kind);
    if (api_version.empty() || kind.empty()) {
      return TypeError(BadRequestError("missing apiVersion or kind"), std::nullopt);
    }
    return Object(root, api_version, kind, std::nullopt);
  }
};

using internal::StripBom;

// The API client decodes what it asked for; type meta, when present, must agree with `spec`.
template <typename T>
Status CheckTypeMeta(element root, const KindSpec<T>& spec) {
  std::string_view api_version;
  std::string_view kind;
  SW_RETURN_IF_ERROR(ReadTypeMeta(root, api_version, kind));
  if ((!api_version.empty() && api_version != spec.api_version) ||
      (!kind.empty() && kind != spec.kind)) {
    std::string message = "expected ";
    message += spec.api_version;
    message += ' ';
    message += spec.kind;
    message += ", got ";
    message += api_version;
    message += ' ';
    message += kind;
    return BadRequestError(std::move(message));
  }
  return Status();
}

// Decodes `root` as one object of `spec`'s kind into `out`; errors about it are named
// "<document>: <object>".
template <typename T>
Status DecodeObjectOf(element root, const KindSpec<T>& spec, std::string_view document, T& out) {
  SW_RETURN_IF_ERROR(CheckTypeMeta(root, spec));
  Status decoded = spec.decode(root, out);
  if (!decoded.ok()) decoded.WithObject(Compose(document, ObjectName(spec, root, std::nullopt)));
  return decoded;
}

template <typename T>
Result<T> DecodeSingle(std::string_view json, const KindSpec<T>& spec) {
  T out;
  Status status = WithParsed(json, {}, [&](element root) -> Status {
    if (!root.is_object()) return BadRequestError("expected a JSON object at the top level");
    return DecodeObjectOf(root, spec, {}, out);
  });
  if (!status.ok()) return status;
  return out;
}

// As DecodeSingle, but only `metadata` is decoded; the other fields are parsed, not read.
template <typename T>
Result<model::ObjectMeta> DecodeMetadataOf(std::string_view json, const KindSpec<T>& spec) {
  model::ObjectMeta out;
  Status status = WithParsed(json, {}, [&](element root) -> Status {
    if (!root.is_object()) return BadRequestError("expected a JSON object at the top level");
    SW_RETURN_IF_ERROR(CheckTypeMeta(root, spec));
    Status decoded = ForEachField(root, [&](std::string_view key, element value) -> Status {
      return key == "metadata" ? DecodeObjectMeta(value, out) : Status();
    });
    if (!decoded.ok()) decoded.WithObject(ObjectName(spec, root, std::nullopt));
    return decoded;
  });
  if (!status.ok()) return status;
  return out;
}

// The StatusCode of a metav1.Status an API server sent: by reason, else by HTTP code (a 410 with
// reason "Gone" or none is kExpired, as client-go's reflector treats it).
StatusCode CodeOfApiStatus(std::string_view reason, std::int64_t http_code) {
  constexpr std::array kCodes = {StatusCode::kBadRequest,
                                 StatusCode::kUnauthorized,
                                 StatusCode::kForbidden,
                                 StatusCode::kNotFound,
                                 StatusCode::kAlreadyExists,
                                 StatusCode::kConflict,
                                 StatusCode::kExpired,
                                 StatusCode::kInvalid,
                                 StatusCode::kTooManyRequests,
                                 StatusCode::kInternal,
                                 StatusCode::kUnavailable,
                                 StatusCode::kTimeout,
                                 StatusCode::kMethodNotAllowed,
                                 StatusCode::kNotAcceptable,
                                 StatusCode::kRequestEntityTooLarge,
                                 StatusCode::kUnsupportedMediaType};
  if (!reason.empty()) {
    for (const StatusCode code : kCodes) {
      if (StatusCodeReason(code) == reason) return code;
    }
  }
  if (http_code == 410) return StatusCode::kExpired;
  // By HTTP status as apimachinery's NewGenericServerResponse does: 409 is a Conflict (not
  // AlreadyExists), 504 a Timeout.
  constexpr std::array kByHttpStatus = {StatusCode::kBadRequest,
                                        StatusCode::kUnauthorized,
                                        StatusCode::kForbidden,
                                        StatusCode::kNotFound,
                                        StatusCode::kMethodNotAllowed,
                                        StatusCode::kNotAcceptable,
                                        StatusCode::kConflict,
                                        StatusCode::kRequestEntityTooLarge,
                                        StatusCode::kUnsupportedMediaType,
                                        StatusCode::kInvalid,
                                        StatusCode::kTooManyRequests,
                                        StatusCode::kInternal,
                                        StatusCode::kUnavailable,
                                        StatusCode::kTimeout};
  for (const StatusCode code : kByHttpStatus) {
    if (StatusCodeHttp(code) == http_code) return code;
  }
  return StatusCode::kInternal;
}

}  // namespace

Status internal::ReadApiStatus(element object) {
  std::string_view reason;
  std::string_view message;
  std::int64_t http_code = 0;
  // A field of the wrong type reads as absent: the event is an error either way.
  element value;
  if (object.at_key("reason").get(value) != simdjson::SUCCESS ||
      value.get_string().get(reason) != simdjson::SUCCESS) {
    reason = {};
  }
  if (object.at_key("message").get(value) != simdjson::SUCCESS ||
      value.get_string().get(message) != simdjson::SUCCESS) {
    message = {};
  }
  if (object.at_key("code").get(value) != simdjson::SUCCESS ||
      value.get_int64().get(http_code) != simdjson::SUCCESS) {
    http_code = 0;
  }
  std::string text = message.empty() ? "the server reported a failure" : std::string(message);
  Status status(CodeOfApiStatus(reason, http_code), std::move(text));
  // details.causes: one per field error of a 422, which a condition or log can name by field.
  element causes;
  simdjson::dom::array list;
  if (object.at_pointer("/details/causes").get(causes) == simdjson::SUCCESS &&
      causes.get_array().get(list) == simdjson::SUCCESS) {
    std::vector<StatusCause> read;
    for (element cause : list) {
      StatusCause& out = read.emplace_back();
      std::string_view text_value;
      if (cause.at_key("reason").get_string().get(text_value) == simdjson::SUCCESS) {
        out.reason = text_value;
      }
      if (cause.at_key("message").get_string().get(text_value) == simdjson::SUCCESS) {
        out.message = text_value;
      }
      if (cause.at_key("field").get_string().get(text_value) == simdjson::SUCCESS) {
        out.field = text_value;
      }
    }
    status.WithCauses(std::move(read));
  }
  return status;
}

std::optional<WatchEventType> internal::WatchEventTypeFromName(std::string_view name) {
  if (name == "ADDED") return WatchEventType::kAdded;
  if (name == "MODIFIED") return WatchEventType::kModified;
  if (name == "DELETED") return WatchEventType::kDeleted;
  if (name == "BOOKMARK") return WatchEventType::kBookmark;
  if (name == "ERROR") return WatchEventType::kError;
  return std::nullopt;
}

namespace {

template <typename T>
Result<WatchEvent<T>> DecodeWatchEventOf(std::string_view line, const KindSpec<T>& spec) {
  return internal::DecodeWatchEventLine<T>(
      line,
      [&spec](element object, std::string_view document, T& out) {
        return DecodeObjectOf(object, spec, document, out);
      },
      SyntaxErrorOffset::kLocate);
}

// A list page of `spec`'s kind; see DecodePodList.
template <typename T>
Result<ListPage<T>> DecodeListOf(std::string_view json, const KindSpec<T>& spec) {
  return internal::DecodeListPage<T>(
      json, spec.kind,
      [&spec](element item, std::string_view document, T& out) {
        return DecodeObjectOf(item, spec, document, out);
      },
      SyntaxErrorOffset::kLocate);
}

template <typename T>
void AppendAll(std::vector<T>& to, std::vector<T>&& from) {
  if (to.empty()) {
    to = std::move(from);
  } else {
    to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
  }
  from.clear();
}

}  // namespace

void ObjectSet::Append(ObjectSet&& other) {
  AppendAll(services, std::move(other.services));
  AppendAll(pods, std::move(other.pods));
  AppendAll(nodes, std::move(other.nodes));
  AppendAll(endpoint_slices, std::move(other.endpoint_slices));
  AppendAll(endpoints, std::move(other.endpoints));
  AppendAll(namespaces, std::move(other.namespaces));
  AppendAll(events, std::move(other.events));
  AppendAll(skipped_kinds, std::move(other.skipped_kinds));
}

namespace internal {

simdjson::dom::parser& ReusedParser() {
  thread_local simdjson::dom::parser parser;
  return parser;
}

Status Malformed(std::string_view text, std::string_view document, simdjson::error_code error,
                 bool locate) {
  std::string message = "malformed JSON";
  // A second, strict syntax pass locates the error (simdjson's DOM parser reports none). Skipped
  // for errors it cannot locate: nesting depth, empty input.
  if (locate && error != simdjson::DEPTH_ERROR && error != simdjson::EMPTY) {
    if (const std::optional<SyntaxError> syntax = FindJsonSyntaxError(text)) {
      message += " at byte ";
      message += std::to_string(syntax->offset);
    }
  }
  message += ": ";
  message += simdjson::error_message(error);
  return AtDocument(BadRequestError(std::move(message)), document);
}

bool IsValidUtf8(std::string_view text) {
  return simdjson::validate_utf8(text.data(), text.size());
}

Status DecodeObjectMetaValue(simdjson::dom::element value, model::ObjectMeta& out) {
  return DecodeObjectMeta(value, out);
}

Result<ObjectSet> DecodeJsonWithSite(std::string_view text, std::string_view document_name,
                                     ErrorSite* site) {
  ObjectSet out;
  Status status = WithParsed(text, document_name, [&](element root) {
    return Decoder{document_name, out, site}.Root(root);
  });
  if (!status.ok()) return status;
  return out;
}

}  // namespace internal

Result<ObjectSet> DecodeJsonDocument(std::string_view text, std::string_view document_name) {
  return internal::DecodeJsonWithSite(text, document_name, nullptr);
}

Result<ObjectSet> DecodeDocuments(std::string_view text, std::string_view document_name) {
  const std::string_view body = StripBom(text);
  const std::size_t first = body.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && (body[first] == '{' || body[first] == '[')) {
    return DecodeJsonDocument(body, document_name);
  }
  return DecodeYamlDocuments(text, document_name);
}

Result<model::Service> DecodeService(std::string_view json) {
  return DecodeSingle(json, kServiceKind);
}
Result<model::Pod> DecodePod(std::string_view json) { return DecodeSingle(json, kPodKind); }
Result<model::Node> DecodeNode(std::string_view json) { return DecodeSingle(json, kNodeKind); }
Result<model::EndpointSlice> DecodeEndpointSlice(std::string_view json) {
  return DecodeSingle(json, kEndpointSliceKind);
}
Result<model::ObjectMeta> DecodeEndpointSliceMetadata(std::string_view json) {
  return DecodeMetadataOf(json, kEndpointSliceKind);
}
Result<model::Endpoints> DecodeEndpoints(std::string_view json) {
  return DecodeSingle(json, kEndpointsKind);
}
Result<model::Namespace> DecodeNamespace(std::string_view json) {
  return DecodeSingle(json, kNamespaceKind);
}
Result<model::Event> DecodeEvent(std::string_view json) { return DecodeSingle(json, kEventKind); }

Status DecodeStatusResponse(std::string_view body, int http_status) {
  std::optional<Status> decoded;
  static_cast<void>(WithParsed(body, {}, [&](element root) -> Status {
    std::string_view kind;
    element value;
    if (root.is_object() && root.at_key("kind").get(value) == simdjson::SUCCESS &&
        value.get_string().get(kind) == simdjson::SUCCESS && kind == "Status") {
      decoded = ReadApiStatus(root);
    }
    return Status();
  }));
  if (decoded && !decoded->ok()) {
    if (decoded->code() == StatusCode::kInternal && http_status != 500) {
      return Status(CodeOfApiStatus({}, http_status), std::string(decoded->message()));
    }
    return *decoded;
  }
  std::string message = "the server answered HTTP " + std::to_string(http_status);
  const std::string_view excerpt = body.substr(0, 200);
  if (!excerpt.empty()) {
    message += ": ";
    message += excerpt;
  }
  return Status(CodeOfApiStatus({}, http_status), std::move(message));
}

Result<WatchEvent<model::Service>> DecodeServiceWatchEvent(std::string_view line) {
  return DecodeWatchEventOf(line, kServiceKind);
}
Result<WatchEvent<model::Pod>> DecodePodWatchEvent(std::string_view line) {
  return DecodeWatchEventOf(line, kPodKind);
}
Result<WatchEvent<model::Node>> DecodeNodeWatchEvent(std::string_view line) {
  return DecodeWatchEventOf(line, kNodeKind);
}
Result<WatchEvent<model::EndpointSlice>> DecodeEndpointSliceWatchEvent(std::string_view line) {
  return DecodeWatchEventOf(line, kEndpointSliceKind);
}
Result<WatchEvent<model::Endpoints>> DecodeEndpointsWatchEvent(std::string_view line) {
  return DecodeWatchEventOf(line, kEndpointsKind);
}
Result<WatchEvent<model::Namespace>> DecodeNamespaceWatchEvent(std::string_view line) {
  return DecodeWatchEventOf(line, kNamespaceKind);
}
Result<WatchEvent<model::Event>> DecodeEventWatchEvent(std::string_view line) {
  return DecodeWatchEventOf(line, kEventKind);
}

Result<ListPage<model::Service>> DecodeServiceList(std::string_view json) {
  return DecodeListOf(json, kServiceKind);
}
Result<ListPage<model::Pod>> DecodePodList(std::string_view json) {
  return DecodeListOf(json, kPodKind);
}
Result<ListPage<model::Node>> DecodeNodeList(std::string_view json) {
  return DecodeListOf(json, kNodeKind);
}
Result<ListPage<model::EndpointSlice>> DecodeEndpointSliceList(std::string_view json) {
  return DecodeListOf(json, kEndpointSliceKind);
}
Result<ListPage<model::Endpoints>> DecodeEndpointsList(std::string_view json) {
  return DecodeListOf(json, kEndpointsKind);
}
Result<ListPage<model::Namespace>> DecodeNamespaceList(std::string_view json) {
  return DecodeListOf(json, kNamespaceKind);
}
Result<ListPage<model::Event>> DecodeEventList(std::string_view json) {
  return DecodeListOf(json, kEventKind);
}

namespace {

Status DecodeNetworkStatusEntry(element value, model::NetworkStatus& out) {
  return ForEachField(value, [&out](std::string_view key, element v) -> Status {
    if (key == "name") return ReadString(v, out.name);
    if (key == "interface") return ReadString(v, out.interface);
    if (key == "ips") return ReadStringList(v, out.ips);
    if (key == "mac") return ReadString(v, out.mac);
    if (key == "default") return ReadBool(v, out.is_default);
    return Status();
  });
}

}  // namespace

Result<std::vector<model::NetworkStatus>> DecodeNetworkStatus(std::string_view json) {
  std::vector<model::NetworkStatus> out;
  Status status = WithParsed(json, {}, [&](element root) -> Status {
    if (root.is_null()) return Status();
    if (!root.is_array()) return BadRequestError("expected a JSON list of networks");
    return ReadList(root, out, DecodeNetworkStatusEntry);
  });
  if (!status.ok()) return status;
  return out;
}

}  // namespace slicewright::codec

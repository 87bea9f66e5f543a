// The built-in resources (modelled on kube-apiserver v1.32's registry and printers) and the
// thread-safe registry that adds custom resources to them.
#include "apiserver/api/resources.h"

#include <algorithm>
#include <utility>

namespace slicewright::apiserver {
namespace {

constexpr std::string_view kAgeDescription =
    "CreationTimestamp is a timestamp representing the server time when this object was created.";

PrinterColumn Col(std::string name, std::string description, std::int32_t priority = 0,
                  std::string type = "string") {
  PrinterColumn c;
  c.name = std::move(name);
  c.type = std::move(type);
  c.description = std::move(description);
  c.priority = priority;
  return c;
}

PrinterColumn Age() {
  PrinterColumn c = Col("Age", std::string(kAgeDescription));
  c.json_path = ".metadata.creationTimestamp";
  return c;
}

// The name column of a kind whose name is not the first column (core Events).
PrinterColumn NameColumn(std::int32_t priority) {
  PrinterColumn c = Col("Name", "Name must be unique within a namespace.", priority);
  c.format = "name";
  c.json_path = ".metadata.name";
  return c;
}

struct Builtin {
  std::string group;
  std::string resource;
  std::string kind;
  bool namespaced = true;
  bool has_status = false;
  bool has_scale = false;
  bool tracks_generation = false;
  std::vector<std::string> short_names{};
  std::vector<std::string> categories{};
  std::vector<std::string> selectable_fields{};
  std::vector<PrinterColumn> columns{};
};

ResourceInfo Make(Builtin b) {
  ResourceInfo r;
  r.group = std::move(b.group);
  r.version = "v1";
  r.resource = std::move(b.resource);
  r.kind = std::move(b.kind);
  r.singular.reserve(r.kind.size());
  for (char ch : r.kind) {
    r.singular.push_back(static_cast<char>(ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch));
  }
  r.list_kind = r.kind + "List";
  r.namespaced = b.namespaced;
  r.has_status = b.has_status;
  r.has_scale = b.has_scale;
  r.tracks_generation = b.tracks_generation;
  r.short_names = std::move(b.short_names);
  r.categories = std::move(b.categories);
  r.selectable_fields = std::move(b.selectable_fields);
  r.printer_columns = std::move(b.columns);
  r.builtin = true;
  return r;
}

std::vector<ResourceInfo> Builtins() {
  std::vector<ResourceInfo> out;
  // core/v1, in kube-apiserver's discovery order for the kinds we serve.
  out.push_back(Make({.group = "",
                      .resource = "configmaps",
                      .kind = "ConfigMap",
                      .short_names = {"cm"},
                      .columns = {Col("Data", "Data contains the configuration data."), Age()}}));
  out.push_back(
      Make({.group = "",
            .resource = "endpoints",
            .kind = "Endpoints",
            .short_names = {"ep"},
            .columns = {Col("Endpoints", "Endpoints is the list of endpoint addresses."), Age()}}));
  out.push_back(
      Make({.group = "",
            .resource = "events",
            .kind = "Event",
            .short_names = {"ev"},
            .selectable_fields = {"involvedObject.kind", "involvedObject.namespace",
                                  "involvedObject.name", "involvedObject.uid",
                                  "involvedObject.apiVersion", "involvedObject.resourceVersion",
                                  "involvedObject.fieldPath", "reason", "reportingComponent",
                                  "source", "type"},
            .columns = {
                Col("Last Seen", "The time at which the most recent occurrence was recorded."),
                Col("Type", "Type of this event (Normal, Warning)."),
                Col("Reason", "A short, machine understandable reason for the event."),
                Col("Object", "The object that this event is about."),
                Col("Subobject", "The field path of the object this event is about.", 1),
                Col("Source", "The component reporting this event.", 1),
                Col("Message", "A human-readable description of the status of this event."),
                Col("First Seen", "The time at which the event was first recorded.", 1),
                Col("Count", "The number of times this event has occurred.", 1), NameColumn(1)}}));
  out.push_back(Make({.group = "",
                      .resource = "namespaces",
                      .kind = "Namespace",
                      .namespaced = false,
                      .has_status = true,
                      .short_names = {"ns"},
                      .selectable_fields = {"status.phase"},
                      .columns = {Col("Status", "The status of the namespace"), Age()}}));
  out.push_back(
      Make({.group = "",
            .resource = "nodes",
            .kind = "Node",
            .namespaced = false,
            .has_status = true,
            .short_names = {"no"},
            .selectable_fields = {"spec.unschedulable"},
            .columns = {
                Col("Status", "The status of the node"), Col("Roles", "The roles of the node"),
                Age(), Col("Version", "Kubelet Version reported by the node."),
                Col("Internal-IP", "List of addresses reachable to the node.", 1),
                Col("External-IP", "List of addresses reachable to the node.", 1),
                Col("OS-Image", "OS Image reported by the node from /etc/os-release.", 1),
                Col("Kernel-Version", "Kernel Version reported by the node.", 1),
                Col("Container-Runtime", "Container runtime version reported by the node.", 1)}}));
  out.push_back(Make(
      {.group = "",
       .resource = "pods",
       .kind = "Pod",
       .has_status = true,
       .short_names = {"po"},
       .categories = {"all"},
       .selectable_fields = {"spec.nodeName", "spec.restartPolicy", "spec.schedulerName",
                             "spec.serviceAccountName", "status.phase", "status.podIP",
                             "status.nominatedNodeName"},
       .columns = {Col("Ready", "The aggregate readiness state of this pod for accepting traffic."),
                   Col("Status", "The aggregate status of the containers in this pod."),
                   Col("Restarts",
                       "The number of times the containers in this pod have been "
                       "restarted and when the last container in this pod has "
                       "restarted."),
                   Age(), Col("IP", "IP address allocated to the pod.", 1),
                   Col("Node", "NodeName is the name of the node the pod is scheduled on.", 1),
                   Col("Nominated Node",
                       "nominatedNodeName is set when this pod preempts other "
                       "pods on the node.",
                       1),
                   Col("Readiness Gates",
                       "If specified, all readiness gates will be evaluated "
                       "for pod readiness.",
                       1)}}));
  out.push_back(Make({.group = "",
                      .resource = "secrets",
                      .kind = "Secret",
                      .selectable_fields = {"type"},
                      .columns = {Col("Type", "The type of the secret"),
                                  Col("Data", "The number of entries in the secret"), Age()}}));
  out.push_back(Make({.group = "",
                      .resource = "serviceaccounts",
                      .kind = "ServiceAccount",
                      .short_names = {"sa"},
                      .columns = {Col("Secrets",
                                      "Secrets is a list of the secrets in the same "
                                      "namespace that pods running using this "
                                      "ServiceAccount are allowed to use."),
                                  Age()}}));
  out.push_back(Make(
      {.group = "",
       .resource = "services",
       .kind = "Service",
       .has_status = true,
       .short_names = {"svc"},
       .categories = {"all"},
       .selectable_fields = {"spec.clusterIP", "spec.type"},
       .columns = {Col("Type", "type determines how the Service is exposed."),
                   Col("Cluster-IP", "clusterIP is the IP address of the service."),
                   Col("External-IP",
                       "externalIPs is a list of IP addresses for which nodes in "
                       "the cluster will also accept traffic for this service."),
                   Col("Port(s)", "The list of ports that are exposed by this service."), Age(),
                   Col("Selector",
                       "Route service traffic to pods with label keys and values "
                       "matching this selector.",
                       1)}}));
  // apps/v1: the workload kinds `slicewright dev` rolls out (controllers/workloads), in
  // kube-apiserver's discovery order. kube's strategies bump the generation on any change outside
  // metadata and status; each serves the scale subresource.
  const auto containers_images = [] {
    return std::vector<PrinterColumn>{
        Col("Containers", "Names of each container in the template.", 1),
        Col("Images", "Images referenced by each container in the template.", 1)};
  };
  std::vector<PrinterColumn> deployment_columns = {
      Col("Ready", "Number of the pod with ready state"),
      Col("Up-to-date",
          "Total number of non-terminated pods targeted by this deployment that have the "
          "desired template spec.",
          0, "integer"),
      Col("Available",
          "Total number of available pods (ready for at least minReadySeconds) targeted by "
          "this deployment.",
          0, "integer"),
      Age()};
  for (PrinterColumn& c : containers_images()) deployment_columns.push_back(std::move(c));
  deployment_columns.push_back(
      Col("Selector",
          "Label selector for pods. Existing ReplicaSets whose pods are selected by this "
          "will be the ones affected by this deployment.",
          1));
  out.push_back(Make({.group = "apps",
                      .resource = "deployments",
                      .kind = "Deployment",
                      .has_status = true,
                      .has_scale = true,
                      .tracks_generation = true,
                      .short_names = {"deploy"},
                      .categories = {"all"},
                      .columns = std::move(deployment_columns)}));
  std::vector<PrinterColumn> replicaset_columns = {
      Col("Desired", "Number of desired pods.", 0, "integer"),
      Col("Current", "Number of actual replicas.", 0, "integer"),
      Col("Ready", "The number of ready replicas for this replica set.", 0, "integer"), Age()};
  for (PrinterColumn& c : containers_images()) replicaset_columns.push_back(std::move(c));
  replicaset_columns.push_back(
      Col("Selector",
          "Selector is a label query over pods that should match the replica count. If it is "
          "empty, it is defaulted to the labels on Pod template.",
          1));
  out.push_back(Make({.group = "apps",
                      .resource = "replicasets",
                      .kind = "ReplicaSet",
                      .has_status = true,
                      .has_scale = true,
                      .tracks_generation = true,
                      .short_names = {"rs"},
                      .categories = {"all"},
                      .columns = std::move(replicaset_columns)}));
  std::vector<PrinterColumn> statefulset_columns = {
      Col("Ready", "Number of the pod with ready state"), Age()};
  for (PrinterColumn& c : containers_images()) statefulset_columns.push_back(std::move(c));
  out.push_back(Make({.group = "apps",
                      .resource = "statefulsets",
                      .kind = "StatefulSet",
                      .has_status = true,
                      .has_scale = true,
                      .tracks_generation = true,
                      .short_names = {"sts"},
                      .categories = {"all"},
                      .columns = std::move(statefulset_columns)}));
  // discovery.k8s.io/v1: kube's strategy bumps the generation of an EndpointSlice whenever
  // anything but metadata (or its labels) changes, and the slice tracker relies on it.
  out.push_back(
      Make({.group = "discovery.k8s.io",
            .resource = "endpointslices",
            .kind = "EndpointSlice",
            .tracks_generation = true,
            .columns = {Col("AddressType",
                            "addressType specifies the type of address carried by "
                            "this EndpointSlice."),
                        Col("Ports",
                            "ports specifies the list of network ports exposed by each "
                            "endpoint in this slice."),
                        Col("Endpoints", "endpoints is a list of unique endpoints in this slice."),
                        Age()}}));
  out.push_back(Make({.group = "coordination.k8s.io",
                      .resource = "leases",
                      .kind = "Lease",
                      .columns = {Col("Holder",
                                      "holderIdentity contains the identity of the "
                                      "holder of a current lease."),
                                  Age()}}));
  // events.k8s.io/v1 shares core Events' printer and store (kube-apiserver converts between the
  // two); its own field names are the selectable ones, translated to the core names on use.
  out.push_back(
      Make({.group = "events.k8s.io",
            .resource = "events",
            .kind = "Event",
            .short_names = {"ev"},
            .selectable_fields = {"regarding.kind", "regarding.namespace", "regarding.name",
                                  "regarding.uid", "regarding.apiVersion",
                                  "regarding.resourceVersion", "regarding.fieldPath", "reason",
                                  "reportingController", "source", "type"},
            .columns = out[2].printer_columns}));
  out.back().storage_group = "";
  // policy/v1 and rbac.authorization.k8s.io/v1, for the deploy/ manifests. The server stores
  // them and enforces nothing: it has no authorizer and no eviction API.
  out.push_back(
      Make({.group = "policy",
            .resource = "poddisruptionbudgets",
            .kind = "PodDisruptionBudget",
            .has_status = true,
            .tracks_generation = true,
            .short_names = {"pdb"},
            .columns = {
                Col("Min Available",
                    "The minimum number or percentage of available pods this budget "
                    "requires."),
                Col("Max Unavailable",
                    "The maximum number or percentage of unavailable pods this budget "
                    "requires."),
                Col("Allowed Disruptions",
                    "Calculated number of pods that may be disrupted at this time.", 0, "integer"),
                Age()}}));
  PrinterColumn role_created_at = Col("Created At", std::string(kAgeDescription), 0, "date");
  role_created_at.json_path = ".metadata.creationTimestamp";
  const auto binding_columns = [](std::string_view kind) {
    return std::vector<PrinterColumn>{
        Col("Role", "Role of the " + std::string(kind) + "."), Age(),
        Col("Users", "Users in the " + std::string(kind) + ".", 1),
        Col("Groups", "Groups in the " + std::string(kind) + ".", 1),
        Col("ServiceAccounts", "ServiceAccounts in the " + std::string(kind) + ".", 1)};
  };
  const std::string rbac = "rbac.authorization.k8s.io";
  out.push_back(Make({.group = rbac,
                      .resource = "clusterrolebindings",
                      .kind = "ClusterRoleBinding",
                      .namespaced = false,
                      .columns = binding_columns("ClusterRoleBinding")}));
  out.push_back(Make({.group = rbac,
                      .resource = "clusterroles",
                      .kind = "ClusterRole",
                      .namespaced = false,
                      .columns = {role_created_at}}));
  out.push_back(Make({.group = rbac,
                      .resource = "rolebindings",
                      .kind = "RoleBinding",
                      .columns = binding_columns("RoleBinding")}));
  out.push_back(
      Make({.group = rbac, .resource = "roles", .kind = "Role", .columns = {role_created_at}}));
  PrinterColumn created_at = Col("Created At", std::string(kAgeDescription), 0, "date");
  created_at.json_path = ".metadata.creationTimestamp";
  out.push_back(Make({.group = "apiextensions.k8s.io",
                      .resource = "customresourcedefinitions",
                      .kind = "CustomResourceDefinition",
                      .namespaced = false,
                      .has_status = true,
                      .tracks_generation = true,
                      .short_names = {"crd", "crds"},
                      .categories = {"api-extensions"},
                      .columns = {created_at}}));
  return out;
}

bool SameGroupVersion(const ResourceInfo& r, std::string_view group, std::string_view version) {
  return r.group == group && r.version == version;
}

}  // namespace

std::string ResourceInfo::GroupVersion() const {
  return group.empty() ? version : group + "/" + version;
}

std::string ResourceInfo::KeyPrefix() const {
  const std::string& stored_group = storage_group.value_or(group);
  return "/registry/" + (stored_group.empty() ? std::string("core") : stored_group) + "/" +
         resource + "/";
}

std::string ResourceInfo::Key(std::string_view namespace_, std::string_view name) const {
  std::string key = KeyPrefix();
  if (namespaced) {
    key.append(namespace_);
    key.push_back('/');
  }
  key.append(name);
  return key;
}

ResourceRegistry::ResourceRegistry() {
  for (ResourceInfo& r : Builtins()) {
    resources_.push_back(std::make_shared<const ResourceInfo>(std::move(r)));
  }
}

ResourcePtr ResourceRegistry::Find(std::string_view group, std::string_view version,
                                   std::string_view resource) const {
  MutexLock lock(mu_);
  for (const ResourcePtr& r : resources_) {
    if (SameGroupVersion(*r, group, version) && r->resource == resource) return r;
  }
  return nullptr;
}

ResourcePtr ResourceRegistry::FindKind(std::string_view group, std::string_view version,
                                       std::string_view kind) const {
  MutexLock lock(mu_);
  for (const ResourcePtr& r : resources_) {
    if (SameGroupVersion(*r, group, version) && r->kind == kind) return r;
  }
  return nullptr;
}

std::vector<ResourcePtr> ResourceRegistry::All() const {
  MutexLock lock(mu_);
  return resources_;
}

std::vector<std::string> ResourceRegistry::Groups() const {
  MutexLock lock(mu_);
  std::vector<std::string> groups;
  for (const ResourcePtr& r : resources_) {
    if (std::find(groups.begin(), groups.end(), r->group) == groups.end()) {
      groups.push_back(r->group);
    }
  }
  return groups;
}

std::vector<std::string> ResourceRegistry::Versions(std::string_view group) const {
  MutexLock lock(mu_);
  std::vector<std::string> versions;
  for (const ResourcePtr& r : resources_) {
    if (r->group == group &&
        std::find(versions.begin(), versions.end(), r->version) == versions.end()) {
      versions.push_back(r->version);
    }
  }
  return versions;
}

void ResourceRegistry::SetCustom(const std::string& crd_name, std::vector<ResourceInfo> resources) {
  std::vector<ResourcePtr> added;
  added.reserve(resources.size());
  for (ResourceInfo& r : resources) {
    r.crd_name = crd_name;
    r.builtin = false;
    added.push_back(std::make_shared<const ResourceInfo>(std::move(r)));
  }
  MutexLock lock(mu_);
  std::erase_if(resources_, [&](const ResourcePtr& r) { return r->crd_name == crd_name; });
  resources_.insert(resources_.end(), added.begin(), added.end());
  ++generation_;
}

void ResourceRegistry::RemoveCustom(const std::string& crd_name) {
  MutexLock lock(mu_);
  if (std::erase_if(resources_, [&](const ResourcePtr& r) { return r->crd_name == crd_name; }) >
      0) {
    ++generation_;
  }
}

std::uint64_t ResourceRegistry::generation() const {
  MutexLock lock(mu_);
  return generation_;
}

}  // namespace slicewright::apiserver

// The resources the embedded API server serves: the built-in kinds and, once their
// CustomResourceDefinitions are established, custom resources. ResourceRegistry is thread-safe and
// hands out immutable snapshots.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "slicewright/base/mutex.h"

namespace slicewright::apiserver {

class CompiledSchema;  // apiserver/api/schema_validation.h

// A CRD's additionalPrinterColumns entry (and the built-in columns we print).
struct PrinterColumn {
  std::string name;       // "Age"
  std::string type;       // integer, number, string, boolean, date
  std::string format;     // "name" for the name column
  std::string json_path;  // ".metadata.creationTimestamp"; simple dotted paths and [N]
  std::string description;
  std::int32_t priority = 0;
};

struct ResourceInfo {
  std::string group;      // "" for the core group
  std::string version;    // "v1"
  std::string resource;   // plural, lower case: "pods"
  std::string singular;   // "pod"
  std::string kind;       // "Pod"
  std::string list_kind;  // "PodList"
  bool namespaced = true;
  bool has_status = false;  // serves the status subresource (spec and status updates split)
  // Serves the scale subresource (autoscaling/v1 Scale over spec.replicas, status.replicas and
  // spec.selector), as apps/v1's workload kinds do.
  bool has_scale = false;
  std::vector<std::string> short_names;
  std::vector<std::string> categories;
  // Whether writes bump metadata.generation as kube's strategy does: custom resources and CRDs on
  // any change outside metadata and (with has_status) status; EndpointSlices on any change
  // outside metadata, labels included.
  bool tracks_generation = false;
  // A built-in kind: strategic merge patch and our own validation apply. False for custom
  // resources.
  bool builtin = true;
  // Field selectors allowed besides metadata.name and metadata.namespace, as dotted JSON paths
  // ("spec.nodeName", "status.phase").
  std::vector<std::string> selectable_fields;
  // Columns for `kubectl get` (the Table form), in kube-apiserver's order. A "Name" column
  // (format "name") is implied first unless one is listed (core Events list theirs last). The
  // built-ins list "Age" where kube prints it; a CRD lists its additionalPrinterColumns verbatim
  // (kube's default for a version without any is a single date-typed "Age").
  std::vector<PrinterColumn> printer_columns;
  // For custom resources: the CRD's name ("serviceimports.multicluster.x-k8s.io").
  std::string crd_name;
  // For custom resources: this version's spec.versions[].schema.openAPIV3Schema (shared,
  // immutable), for validation and pruning and for the OpenAPI v3 document. Null for built-ins.
  std::shared_ptr<const nlohmann::json> schema;
  // For custom resources: `schema` compiled, for pruning, defaulting and validating their objects
  // (apiserver/api/schema_validation.h). Null for built-ins.
  std::shared_ptr<const CompiledSchema> structural;
  // The group whose store holds this resource's objects, when not its own: kube-apiserver keeps
  // events.k8s.io/v1 Events in the core Event store and converts at the edge
  // (api/event_conversion.h), so this is "" for them. Unset for every other resource.
  std::optional<std::string> storage_group;

  // "v1" or "discovery.k8s.io/v1".
  std::string GroupVersion() const;
  // The storage key prefix of every object of this resource: "/registry/<group>/<resource>/",
  // with storage_group's name when set.
  std::string KeyPrefix() const;
  // The storage key of one object: prefix + "<namespace>/<name>" or prefix + "<name>".
  std::string Key(std::string_view namespace_, std::string_view name) const;
};

using ResourcePtr = std::shared_ptr<const ResourceInfo>;

class ResourceRegistry final {
 public:
  // Holds the built-in resources.
  ResourceRegistry();

  // Looks up by group, version and plural resource name.
  ResourcePtr Find(std::string_view group, std::string_view version,
                   std::string_view resource) const;
  // Looks up by group, version and kind.
  ResourcePtr FindKind(std::string_view group, std::string_view version,
                       std::string_view kind) const;
  // Every resource, built-in first, in registration order.
  std::vector<ResourcePtr> All() const;
  // The preferred-version group list: groups in registration order ("" first), each with its
  // versions in registration order.
  std::vector<std::string> Groups() const;
  std::vector<std::string> Versions(std::string_view group) const;

  // Adds or replaces the custom resources of one CRD (every served version).
  void SetCustom(const std::string& crd_name, std::vector<ResourceInfo> resources);
  // Removes the custom resources of one CRD.
  void RemoveCustom(const std::string& crd_name);
  // Bumps on every change, so discovery documents can be cached.
  std::uint64_t generation() const;

 private:
  mutable Mutex mu_;
  std::vector<ResourcePtr> resources_ SW_GUARDED_BY(mu_);
  std::uint64_t generation_ SW_GUARDED_BY(mu_) = 1;
};

}  // namespace slicewright::apiserver

// CustomResourceDefinition (apiextensions.k8s.io/v1) handling: validation of the parts that
// decide how custom resources are served, conversion to ResourceInfo entries for the registry,
// and the status kube-apiserver sets once a CRD is established. Pure functions; thread-safe.
#pragma once

#include <chrono>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "slicewright/base/result.h"

#include "apiserver/api/resources.h"

namespace slicewright::apiserver {

// Validates `crd` (a CustomResourceDefinition as decoded JSON) and returns one ResourceInfo per
// served version, in spec.versions order. Defaults as kube does: listKind = kind + "List",
// singular = lower-case kind, and a single date-typed "Age" column for a version without
// additionalPrinterColumns. Checked (kube-apiserver's messages): metadata.name is
// "<plural>.<group>", spec.group is a DNS subdomain with a dot, the names are DNS-1035 labels
// (kind and listKind in any case, and different), spec.scope is Namespaced or Cluster, the
// versions have unique DNS-1035 names, exactly one is the storage version, each has
// schema.openAPIV3Schema, and printer columns and selectable fields are well formed.
// Errors: kInvalid whose message lists every problem as kube does, e.g.
// `spec.versions: Invalid value: ["v1","v2"]: must have exactly one version marked as storage
// version` (several are joined as "[a, b]"); kBadRequest when `crd` is not an object. The
// Status carries the object "customresourcedefinitions/<name>". Never throws.
Result<std::vector<ResourceInfo>> ResourcesFromCrd(const nlohmann::json& crd);

// The status kube-apiserver gives an accepted CRD: conditions NamesAccepted (reason NoConflicts)
// and Established (reason InitialNamesAccepted), both True with lastTransitionTime `now` (kept
// from `crd`'s current status when already True), acceptedNames from spec.names with defaults
// filled in, and storedVersions = the existing ones plus the current storage version. Call
// after ResourcesFromCrd succeeded; malformed input yields a best-effort status.
nlohmann::json CrdEstablishedStatus(const nlohmann::json& crd,
                                    std::chrono::system_clock::time_point now);

}  // namespace slicewright::apiserver

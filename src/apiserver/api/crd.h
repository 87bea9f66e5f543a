// CustomResourceDefinition (apiextensions.k8s.io/v1) handling: validation of the parts that
// decide how custom resources are served, conversion to ResourceInfo entries for the registry,
// and the status kube-apiserver sets once a CRD is established. Pure functions; thread-safe.
#pragma once

#include <chrono>
#include <string_view>
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
//
// `old` (the stored CRD of an update, null on create) only matters to the API-approval rule of
// the protected groups (apiextensions' validateAPIApproval): a CRD whose spec.group is k8s.io,
// kubernetes.io or a subdomain of either must carry the annotation api-approved.kubernetes.io
// with a URL (scheme and host) or a reason starting with "unapproved"; missing is `Required
// value`, anything else `Invalid value`. An update that leaves the approval state as it was
// (missing, invalid, approved or unapproved) is not checked, so a CRD stored before the rule
// keeps working. Groups such as x-k8s.io are not under k8s.io and need nothing.
Result<std::vector<ResourceInfo>> ResourcesFromCrd(const nlohmann::json& crd,
                                                   const nlohmann::json* old = nullptr);

// apiextensions v1's defaults, kept in the stored CRD: names.singular (the kind in lower case),
// names.listKind (kind + "List") and conversion {strategy: None}. Leaves malformed input alone.
void DefaultCrd(nlohmann::json& crd);

// apiextensions' IsProtectedCommunityGroup: k8s.io, kubernetes.io and their subdomains.
bool IsProtectedCrdGroup(std::string_view group);

// What apiextensions' API approval controller reports on a CRD of a protected group: the
// condition KubernetesAPIApprovalPolicyConformant (True "ApprovedAnnotation" for a URL, False
// "UnapprovedAnnotation", "MissingAnnotation" or "InvalidAnnotation" otherwise, with upstream's
// messages) without lastTransitionTime; null for a CRD of any other group.
nlohmann::json CrdApprovalCondition(const nlohmann::json& crd);

// The status kube-apiserver gives an accepted CRD: conditions NamesAccepted (reason NoConflicts)
// and Established (reason InitialNamesAccepted), both True with lastTransitionTime `now` (kept
// from `crd`'s current status when already True), acceptedNames from spec.names with defaults
// filled in, and storedVersions = the existing ones plus the current storage version; for a
// protected group also CrdApprovalCondition (its lastTransitionTime kept while unchanged). Call
// after ResourcesFromCrd succeeded; malformed input yields a best-effort status.
nlohmann::json CrdEstablishedStatus(const nlohmann::json& crd,
                                    std::chrono::system_clock::time_point now);

}  // namespace slicewright::apiserver

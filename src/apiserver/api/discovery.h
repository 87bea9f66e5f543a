// Discovery documents as kube-apiserver v1.32 serves them (/version, /api, /apis, /api/v1,
// /apis/<group>/<version>, and the apidiscovery.k8s.io aggregated forms kubectl asks for), plus
// Accept-header negotiation for discovery and the Table form. Pure functions over a registry
// snapshot; thread-safe. Documents are built fresh on each call: cache them by
// ResourceRegistry::generation() if that matters.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "slicewright/base/result.h"

#include "apiserver/api/resources.h"

namespace slicewright::apiserver {

// The version /version reports: "v1.32.0-slicewright" (major "1", minor "32").
inline constexpr std::string_view kServerGitVersion = "v1.32.0-slicewright";

// One media range of an Accept header: "application/json;as=Table;v=v1;g=meta.k8s.io" has type
// "application", subtype "json" and parameters as, v, g (names lower-cased, values verbatim).
struct MediaRange {
  std::string type;
  std::string subtype;
  std::vector<std::pair<std::string, std::string>> params;
  double quality = 1.0;

  // The value of parameter `name`, "" when absent.
  std::string_view Param(std::string_view name) const;
};

// Splits an Accept header into media ranges, ordered by quality (stable, so equal qualities keep
// the client's order). Malformed pieces are skipped; an empty header yields nothing.
std::vector<MediaRange> ParseAccept(std::string_view accept);

enum class DiscoveryFormat {
  kLegacy,             // APIVersions / APIGroupList / APIResourceList, application/json
  kAggregatedV2,       // apidiscovery.k8s.io/v2 APIGroupDiscoveryList
  kAggregatedV2Beta1,  // apidiscovery.k8s.io/v2beta1 APIGroupDiscoveryList
};

// The discovery form an Accept header asks for at /api or /apis: the first media range we can
// serve wins (kubectl 1.32 sends v2, then v2beta1, then plain application/json).
DiscoveryFormat NegotiateDiscovery(std::string_view accept);
// True when NegotiateDiscovery picks an aggregated form.
bool AcceptsAggregatedDiscovery(std::string_view accept);
// The Content-Type to answer with: "application/json" or
// "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList" (v2beta1 likewise).
std::string_view DiscoveryContentType(DiscoveryFormat format);

// True when the first media range we can serve asks for a meta.k8s.io/v1 Table
// ("application/json;as=Table;v=v1;g=meta.k8s.io", as `kubectl get` sends). v1beta1-only
// requests get false (we only produce v1 Tables).
bool AcceptsTable(std::string_view accept);
// "application/json;as=Table;v=v1;g=meta.k8s.io".
std::string_view TableContentType();

// Orders version strings as Kubernetes does (version.CompareKubeAwareVersionStrings): GA before
// beta before alpha, higher numbers first; strings not shaped like "v1beta2" last, alphabetically.
// Negative when `a` is preferred over `b`, 0 when equal, positive otherwise.
int CompareKubeAwareVersions(std::string_view a, std::string_view b);

// GET /version.
nlohmann::json VersionDocument();
// GET /api (legacy): APIVersions with "v1". `server_address` ("127.0.0.1:6443") fills
// serverAddressByClientCIDRs for 0.0.0.0/0; empty leaves the list out.
nlohmann::json CoreApiVersions(std::string_view server_address = "");
// GET /apis (legacy): APIGroupList of every non-core group, versions in preference order.
nlohmann::json ApiGroupList(const ResourceRegistry& registry);
// GET /apis/<group>: APIGroup. kNotFound for an unknown group (and for the core group "").
Result<nlohmann::json> ApiGroupDocument(const ResourceRegistry& registry, std::string_view group);
// GET /api/v1 or /apis/<group>/<version>: APIResourceList with the status subresources
// ("pods/status"), verbs, shortNames, categories, singularName, kind and namespaced, sorted by
// name. kNotFound when nothing is served at that group version.
Result<nlohmann::json> ApiResourceList(const ResourceRegistry& registry, std::string_view group,
                                       std::string_view version);
// GET /api (core_only = true) or /apis (false) in an aggregated form: an APIGroupDiscoveryList
// of apidiscovery.k8s.io/v2 or v2beta1 (kLegacy is treated as v2).
nlohmann::json AggregatedDiscovery(const ResourceRegistry& registry, bool core_only,
                                   DiscoveryFormat format);

// The verbs kube-apiserver lists for a resource (namespaces lack deletecollection).
std::vector<std::string> ResourceVerbs(const ResourceInfo& info);

}  // namespace slicewright::apiserver

// RequestInfo is what a Kubernetes API request path and method mean: the API group, version,
// namespace, resource, name, subresource and verb, parsed as kube-apiserver's RequestInfoFactory
// does. Pure value; thread-compatible.
#pragma once

#include <string>
#include <string_view>

namespace slicewright::apiserver {

struct RequestInfo {
  // False for non-resource paths (/version, /healthz, /openapi/v3, discovery documents...).
  bool is_resource_request = false;
  std::string api_prefix;  // "api" or "apis"
  std::string group;       // "" for the core group
  std::string version;
  std::string namespace_;
  std::string resource;
  std::string name;
  std::string subresource;
  // get, list, watch, create, update, patch, delete, deletecollection; for non-resource paths the
  // lower-case method.
  std::string verb;
  // Path segments after /api or /apis when the path stops short of a resource: "/api" -> 0,
  // "/api/v1" -> 1, "/apis/g" -> 1, "/apis/g/v" -> 2. -1 for resource requests and other paths.
  int discovery_depth = -1;
};

// Parses `path` (already percent-decoded, no query) for `method`; `watch_param` is the value of
// the ?watch= query parameter, "" when absent (QueryParameterTrue turns a list into a watch).
RequestInfo ParseRequestInfo(std::string_view method, std::string_view path,
                             std::string_view watch_param);

// A boolean query parameter (watch, allowWatchBookmarks, ...) as kube-apiserver decodes it
// (Convert_Slice_string_To_bool): false for "" (absent), "0" and "false" in any case; true for
// anything else, so Python's "True" counts.
bool QueryParameterTrue(std::string_view value);

}  // namespace slicewright::apiserver

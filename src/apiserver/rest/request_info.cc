#include "apiserver/rest/request_info.h"

#include <vector>

namespace slicewright::apiserver {
namespace {

std::vector<std::string_view> SplitPath(std::string_view path) {
  std::vector<std::string_view> parts;
  std::size_t pos = 0;
  while (pos < path.size()) {
    while (pos < path.size() && path[pos] == '/') {
      ++pos;
    }
    const std::size_t end = path.find('/', pos);
    const std::size_t stop = end == std::string_view::npos ? path.size() : end;
    if (stop > pos) {
      parts.push_back(path.substr(pos, stop - pos));
    }
    pos = stop;
  }
  return parts;
}

std::string LowerMethodVerb(std::string_view method) {
  std::string verb(method);
  for (char& c : verb) {
    if (c >= 'A' && c <= 'Z') {
      c = static_cast<char>(c - 'A' + 'a');
    }
  }
  return verb;
}

}  // namespace

bool QueryParameterTrue(std::string_view value) {
  return !value.empty() && value != "0" && LowerMethodVerb(value) != "false";
}

RequestInfo ParseRequestInfo(std::string_view method, std::string_view path,
                             std::string_view watch_param) {
  RequestInfo info;
  info.verb = LowerMethodVerb(method);
  std::vector<std::string_view> parts = SplitPath(path);
  if (parts.empty() || (parts[0] != "api" && parts[0] != "apis")) {
    return info;
  }
  info.api_prefix = std::string(parts[0]);
  std::size_t at = 1;
  if (info.api_prefix == "apis") {
    if (parts.size() < 2) {
      info.discovery_depth = 0;
      return info;
    }
    info.group = std::string(parts[1]);
    at = 2;
  }
  if (parts.size() <= at) {
    info.discovery_depth = static_cast<int>(at) - 1;
    return info;
  }
  info.version = std::string(parts[at]);
  ++at;
  if (parts.size() <= at) {
    info.discovery_depth = static_cast<int>(at) - 1;
    return info;
  }
  std::vector<std::string_view> rest(parts.begin() + static_cast<std::ptrdiff_t>(at), parts.end());
  info.is_resource_request = true;

  // The deprecated /watch/ prefix turns any GET into a watch.
  bool legacy_watch = false;
  if (!rest.empty() && rest[0] == "watch") {
    legacy_watch = true;
    rest.erase(rest.begin());
  }
  if (rest.size() >= 2 && rest[0] == "namespaces") {
    info.namespace_ = std::string(rest[1]);
    // namespaces/<ns>/status and /finalize are the Namespace's own subresources.
    if (rest.size() > 2 && rest[2] != "status" && rest[2] != "finalize") {
      rest.erase(rest.begin(), rest.begin() + 2);
    } else {
      info.resource = "namespaces";
      info.name = info.namespace_;
      if (rest.size() > 2) {
        info.subresource = std::string(rest[2]);
      }
      rest.clear();
    }
  }
  if (!rest.empty()) {
    info.resource = std::string(rest[0]);
    if (rest.size() >= 2) {
      info.name = std::string(rest[1]);
    }
    if (rest.size() >= 3) {
      info.subresource = std::string(rest[2]);
    }
    if (rest.size() > 3) {
      // Deeper paths name nothing we serve; an empty resource makes the handler answer 404.
      info.resource.clear();
    }
  }
  if (info.resource == "namespaces" && info.name.empty() && rest.empty()) {
    // "/api/v1/namespaces" alone: the list of namespaces, not a namespaced request.
    info.namespace_.clear();
  }
  if (info.resource == "namespaces") {
    info.namespace_.clear();
  }

  const bool watch = legacy_watch || QueryParameterTrue(watch_param);
  if (info.verb == "get" || info.verb == "head") {
    if (watch) {
      info.verb = "watch";
    } else {
      info.verb = info.name.empty() ? "list" : "get";
    }
  } else if (info.verb == "post") {
    info.verb = "create";
  } else if (info.verb == "put") {
    info.verb = "update";
  } else if (info.verb == "delete") {
    info.verb = info.name.empty() ? "deletecollection" : "delete";
  }
  return info;
}

}  // namespace slicewright::apiserver

// OpenAPI v3 documents; see openapi.h for what kubectl needs and why.
#include "apiserver/api/openapi.h"

#include <cstdint>
#include <cstdio>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "apiserver/api/discovery.h"

namespace slicewright::apiserver {
namespace {

using nlohmann::json;

std::string GvPath(std::string_view group, std::string_view version) {
  return group.empty() ? "api/" + std::string(version)
                       : "apis/" + std::string(group) + "/" + std::string(version);
}

// "discovery.k8s.io" -> "Discovery", "" -> "Core", "multicluster.x-k8s.io" ->
// "MulticlusterXK8sIo", as kube-openapi builds operation ids.
std::string GroupCamel(const ResourceInfo& r) {
  if (r.group.empty()) return "Core";
  std::string_view g = r.group;
  if (r.builtin && g.ends_with(".k8s.io")) g.remove_suffix(7);
  std::string out;
  bool upper = true;
  for (char c : g) {
    if (c == '.' || c == '-') {
      upper = true;
      continue;
    }
    out.push_back(upper && c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c);
    upper = false;
  }
  return out;
}

std::string Capitalized(std::string_view s) {
  std::string out(s);
  if (!out.empty() && out[0] >= 'a' && out[0] <= 'z') out[0] = static_cast<char>(out[0] - 32);
  return out;
}

json QueryParam(std::string_view name, std::string_view description,
                std::string_view type = "string") {
  return {{"name", name},
          {"in", "query"},
          {"description", description},
          {"schema", {{"type", type}, {"uniqueItems", true}}}};
}

json PathParam(std::string_view name, std::string_view description) {
  return {{"name", name},
          {"in", "path"},
          {"description", description},
          {"required", true},
          {"schema", {{"type", "string"}, {"uniqueItems", true}}}};
}

json WriteParams(bool patch) {
  json params = json::array(
      {QueryParam("dryRun", "When present, indicates that modifications should not be persisted."),
       QueryParam("fieldManager",
                  "fieldManager is a name associated with the actor or entity "
                  "that is making these changes."),
       QueryParam("fieldValidation",
                  "fieldValidation instructs the server on how to handle objects in the request "
                  "containing unknown or duplicate fields. Valid values are: Ignore, Warn "
                  "(the default), Strict.")});
  if (patch) {
    params.push_back(QueryParam("force", "Force is going to \"force\" Apply requests.", "boolean"));
  }
  return params;
}

json ListParams() {
  return json::array(
      {QueryParam("allowWatchBookmarks",
                  "allowWatchBookmarks requests watch events with type "
                  "\"BOOKMARK\".",
                  "boolean"),
       QueryParam("continue",
                  "The continue option should be set when retrieving more results "
                  "from the server."),
       QueryParam("fieldSelector",
                  "A selector to restrict the list of returned objects by their "
                  "fields."),
       QueryParam("labelSelector",
                  "A selector to restrict the list of returned objects by their "
                  "labels."),
       QueryParam("limit", "limit is a maximum number of responses to return for a list call.",
                  "integer"),
       QueryParam("resourceVersion",
                  "resourceVersion sets a constraint on what resource versions "
                  "a request may be served from."),
       QueryParam("resourceVersionMatch",
                  "resourceVersionMatch determines how resourceVersion is "
                  "applied to list calls."),
       QueryParam("timeoutSeconds", "Timeout for the list/watch call.", "integer"),
       QueryParam("watch", "Watch for changes to the described resources.", "boolean")});
}

json Response(std::string_view description) {
  return {{"description", description},
          {"content", {{"application/json", {{"schema", {{"type", "object"}}}}}}}};
}

json Operation(const ResourceInfo& r, std::string_view verb, std::string_view action,
               std::string_view id_kind, json params) {
  json op = {{"operationId",
              std::string(verb) + GroupCamel(r) + Capitalized(r.version) + std::string(id_kind)},
             {"x-kubernetes-action", action},
             {"x-kubernetes-group-version-kind",
              {{"group", r.group}, {"version", r.version}, {"kind", r.kind}}},
             {"responses", {{"200", Response("OK")}, {"401", {{"description", "Unauthorized"}}}}}};
  if (!params.empty()) op["parameters"] = std::move(params);
  if (verb == "create") op["responses"]["201"] = Response("Created");
  return op;
}

json BodyOf(bool patch, bool builtin) {
  json schema = {{"type", "object"}};
  json content = json::object();
  if (patch) {
    content["application/json-patch+json"] = {{"schema", schema}};
    content["application/merge-patch+json"] = {{"schema", schema}};
    if (builtin) content["application/strategic-merge-patch+json"] = {{"schema", schema}};
  } else {
    content["*/*"] = {{"schema", schema}};
  }
  return {{"content", content}, {"required", true}};
}

// The component schema name kube uses for a custom resource: the group reversed
// ("multicluster.x-k8s.io" -> "io.x-k8s.multicluster"), then version and kind.
std::string SchemaName(const ResourceInfo& r) {
  std::vector<std::string> parts;
  std::string_view g = r.group;
  while (true) {
    std::size_t dot = g.find('.');
    parts.emplace_back(g.substr(0, dot));
    if (dot == std::string_view::npos) break;
    g.remove_prefix(dot + 1);
  }
  std::string out;
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) out += *it + ".";
  return out + r.version + "." + r.kind;
}

void AddResource(const ResourceInfo& r, json& paths, json& schemas) {
  const std::string base = "/" + GvPath(r.group, r.version);
  const std::string ns = r.namespaced ? "Namespaced" : "";
  const std::string collection =
      base + (r.namespaced ? "/namespaces/{namespace}/" : "/") + r.resource;
  const std::string item = collection + "/{name}";
  json common =
      json::array({QueryParam("pretty", "If 'true', then the output is pretty printed.")});
  json with_ns = common;
  if (r.namespaced) with_ns.push_back(PathParam("namespace", "object name and auth scope"));
  json with_name = with_ns;
  with_name.push_back(PathParam("name", "name of the " + r.kind));

  json coll = {{"parameters", with_ns}};
  coll["get"] = Operation(r, "list", "list", ns + r.kind, ListParams());
  coll["post"] = Operation(r, "create", "post", ns + r.kind, WriteParams(false));
  coll["post"]["requestBody"] = BodyOf(false, r.builtin);
  coll["delete"] = Operation(r, "deleteCollection", "deletecollection", ns + r.kind, ListParams());
  paths[collection] = std::move(coll);

  auto item_ops = [&](std::string_view suffix) {
    json ops = {{"parameters", with_name}};
    std::string kind_id = ns + r.kind + std::string(suffix);
    ops["get"] = Operation(r, "read", "get", kind_id, json::array());
    ops["put"] = Operation(r, "replace", "put", kind_id, WriteParams(false));
    ops["put"]["requestBody"] = BodyOf(false, r.builtin);
    ops["patch"] = Operation(r, "patch", "patch", kind_id, WriteParams(true));
    ops["patch"]["requestBody"] = BodyOf(true, r.builtin);
    return ops;
  };
  json one = item_ops("");
  one["delete"] = Operation(r, "delete", "delete", ns + r.kind,
                            json::array({QueryParam("dryRun",
                                                    "When present, indicates that "
                                                    "modifications should not be "
                                                    "persisted.")}));
  paths[item] = std::move(one);
  if (r.has_status) paths[item + "/status"] = item_ops("Status");
  if (r.namespaced) {
    json all = {{"parameters", common}};
    all["get"] = Operation(r, "list", "list", r.kind + "ForAllNamespaces", ListParams());
    paths[base + "/" + r.resource] = std::move(all);
  }
  if (!r.builtin && r.schema != nullptr && r.schema->is_object()) {
    json schema = *r.schema;
    schema["x-kubernetes-group-version-kind"] =
        json::array({{{"group", r.group}, {"version", r.version}, {"kind", r.kind}}});
    schemas[SchemaName(r)] = std::move(schema);
  }
}

}  // namespace

json OpenApiV3Index(const ResourceRegistry& registry) {
  json paths = json::object();
  for (const std::string& group : registry.Groups()) {
    for (const std::string& version : registry.Versions(group)) {
      std::string path = GvPath(group, version);
      Result<json> doc = OpenApiV3Document(registry, path);
      if (!doc.ok()) continue;  // raced with a CRD removal
      paths[path] = {{"serverRelativeURL", "/openapi/v3/" + path + "?hash=" + OpenApiV3Hash(*doc)}};
    }
  }
  return {{"paths", paths}};
}

Result<json> OpenApiV3Document(const ResourceRegistry& registry,
                               std::string_view group_version_path) {
  json paths = json::object();
  json schemas = json::object();
  for (const ResourcePtr& r : registry.All()) {
    if (GvPath(r->group, r->version) == group_version_path) AddResource(*r, paths, schemas);
  }
  if (paths.empty()) {
    return NotFoundError("the server could not find the requested resource");
  }
  return json{{"openapi", "3.0.0"},
              {"info", {{"title", "Kubernetes"}, {"version", std::string(kServerGitVersion)}}},
              {"paths", std::move(paths)},
              {"components", {{"schemas", std::move(schemas)}}}};
}

std::string OpenApiV3Hash(const json& document) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : document.dump(-1, ' ', false, json::error_handler_t::replace)) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llX", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace slicewright::apiserver

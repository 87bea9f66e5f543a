// Discovery documents and Accept negotiation; see discovery.h.
#include "apiserver/api/discovery.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <optional>

#include <nlohmann/json.hpp>

namespace slicewright::apiserver {
namespace {

using nlohmann::json;

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  while (true) {
    std::size_t pos = s.find(sep);
    out.push_back(s.substr(0, pos));
    if (pos == std::string_view::npos) break;
    s.remove_prefix(pos + 1);
  }
  return out;
}

bool IsJson(const MediaRange& m) {
  return (m.type == "application" && m.subtype == "json") ||
         (m.type == "application" && m.subtype == "*") || (m.type == "*" && m.subtype == "*");
}

// Parsed "v<major>[alpha|beta<minor>]".
struct KubeVersion {
  int major = 0;
  int stability = 0;  // 2 GA, 1 beta, 0 alpha
  int minor = 0;
};

std::optional<int> ParseNumber(std::string_view s) {
  if (s.empty() || s.front() == '0') return std::nullopt;
  int value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return value;
}

std::optional<KubeVersion> ParseKubeVersion(std::string_view v) {
  if (v.size() < 2 || v.front() != 'v') return std::nullopt;
  v.remove_prefix(1);
  std::size_t digits = 0;
  while (digits < v.size() && v[digits] >= '0' && v[digits] <= '9') ++digits;
  std::optional<int> major = ParseNumber(v.substr(0, digits));
  if (!major) return std::nullopt;
  KubeVersion out{.major = *major, .stability = 2, .minor = 0};
  std::string_view rest = v.substr(digits);
  if (rest.empty()) return out;
  if (rest.starts_with("alpha")) {
    out.stability = 0;
    rest.remove_prefix(5);
  } else if (rest.starts_with("beta")) {
    out.stability = 1;
    rest.remove_prefix(4);
  } else {
    return std::nullopt;
  }
  std::optional<int> minor = ParseNumber(rest);
  if (!minor) return std::nullopt;
  out.minor = *minor;
  return out;
}

// The served group versions of one group, preferred first.
std::vector<std::string> SortedVersions(const ResourceRegistry& registry, std::string_view group) {
  std::vector<std::string> versions = registry.Versions(group);
  std::stable_sort(versions.begin(), versions.end(),
                   [](const std::string& a, const std::string& b) {
                     return CompareKubeAwareVersions(a, b) < 0;
                   });
  return versions;
}

std::string GroupVersionString(std::string_view group, std::string_view version) {
  return group.empty() ? std::string(version) : std::string(group) + "/" + std::string(version);
}

json GroupDocument(const ResourceRegistry& registry, const std::string& group) {
  json versions = json::array();
  for (const std::string& v : SortedVersions(registry, group)) {
    versions.push_back({{"groupVersion", GroupVersionString(group, v)}, {"version", v}});
  }
  json doc = {{"name", group}, {"versions", versions}};
  if (!versions.empty()) doc["preferredVersion"] = versions.front();
  return doc;
}

std::vector<ResourcePtr> ResourcesAt(const ResourceRegistry& registry, std::string_view group,
                                     std::string_view version) {
  std::vector<ResourcePtr> out;
  for (const ResourcePtr& r : registry.All()) {
    if (r->group == group && r->version == version) out.push_back(r);
  }
  std::stable_sort(out.begin(), out.end(), [](const ResourcePtr& a, const ResourcePtr& b) {
    return a->resource < b->resource;
  });
  return out;
}

json Strings(const std::vector<std::string>& values) { return json(values); }

json GroupVersionKind(const ResourceInfo& r) {
  return {{"group", r.group}, {"version", r.version}, {"kind", r.kind}};
}

json AggregatedResource(const ResourceInfo& r) {
  json out = {{"resource", r.resource},
              {"responseKind", GroupVersionKind(r)},
              {"scope", r.namespaced ? "Namespaced" : "Cluster"},
              {"singularResource", r.singular},
              {"verbs", Strings(ResourceVerbs(r))}};
  if (!r.short_names.empty()) out["shortNames"] = Strings(r.short_names);
  if (!r.categories.empty()) out["categories"] = Strings(r.categories);
  if (r.has_status || r.has_scale) out["subresources"] = json::array();
  if (r.has_scale) {
    out["subresources"].push_back(
        {{"subresource", "scale"},
         {"responseKind", {{"group", "autoscaling"}, {"version", "v1"}, {"kind", "Scale"}}},
         {"verbs", {"get", "patch", "update"}}});
  }
  if (r.has_status) {
    out["subresources"].push_back({{"subresource", "status"},
                                   {"responseKind", GroupVersionKind(r)},
                                   {"verbs", {"get", "patch", "update"}}});
  }
  return out;
}

json AggregatedGroup(const ResourceRegistry& registry, const std::string& group) {
  json versions = json::array();
  for (const std::string& v : SortedVersions(registry, group)) {
    json resources = json::array();
    for (const ResourcePtr& r : ResourcesAt(registry, group, v)) {
      resources.push_back(AggregatedResource(*r));
    }
    versions.push_back({{"version", v}, {"resources", resources}, {"freshness", "Current"}});
  }
  return {{"metadata", {{"name", group}, {"creationTimestamp", nullptr}}}, {"versions", versions}};
}

}  // namespace

std::string_view MediaRange::Param(std::string_view name) const {
  for (const auto& [key, value] : params) {
    if (key == name) return value;
  }
  return {};
}

std::vector<MediaRange> ParseAccept(std::string_view accept) {
  std::vector<MediaRange> out;
  for (std::string_view piece : Split(accept, ',')) {
    std::vector<std::string_view> parts = Split(piece, ';');
    std::string_view type = Trim(parts[0]);
    std::size_t slash = type.find('/');
    if (type.empty() || slash == std::string_view::npos || slash == 0 || slash + 1 == type.size()) {
      continue;
    }
    MediaRange m;
    m.type = Lower(type.substr(0, slash));
    m.subtype = Lower(type.substr(slash + 1));
    for (std::size_t i = 1; i < parts.size(); ++i) {
      std::string_view param = Trim(parts[i]);
      std::size_t eq = param.find('=');
      if (eq == std::string_view::npos) continue;
      std::string key = Lower(Trim(param.substr(0, eq)));
      std::string_view value = Trim(param.substr(eq + 1));
      if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
        value = value.substr(1, value.size() - 2);
      }
      if (key == "q") {
        char* end = nullptr;
        std::string text(value);
        double q = std::strtod(text.c_str(), &end);
        if (end != text.c_str() && q >= 0 && q <= 1) m.quality = q;
        continue;
      }
      m.params.emplace_back(std::move(key), std::string(value));
    }
    out.push_back(std::move(m));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const MediaRange& a, const MediaRange& b) { return a.quality > b.quality; });
  std::erase_if(out, [](const MediaRange& m) { return m.quality <= 0; });
  return out;
}

DiscoveryFormat NegotiateDiscovery(std::string_view accept) {
  for (const MediaRange& m : ParseAccept(accept)) {
    if (!IsJson(m)) continue;
    std::string_view as = m.Param("as");
    if (as.empty()) return DiscoveryFormat::kLegacy;
    if (as == "APIGroupDiscoveryList" && m.Param("g") == "apidiscovery.k8s.io") {
      if (m.Param("v") == "v2") return DiscoveryFormat::kAggregatedV2;
      if (m.Param("v") == "v2beta1") return DiscoveryFormat::kAggregatedV2Beta1;
    }
  }
  return DiscoveryFormat::kLegacy;
}

bool AcceptsAggregatedDiscovery(std::string_view accept) {
  return NegotiateDiscovery(accept) != DiscoveryFormat::kLegacy;
}

std::string_view DiscoveryContentType(DiscoveryFormat format) {
  switch (format) {
    case DiscoveryFormat::kAggregatedV2:
      return "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
    case DiscoveryFormat::kAggregatedV2Beta1:
      return "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList";
    case DiscoveryFormat::kLegacy:
      break;
  }
  return "application/json";
}

bool AcceptsTable(std::string_view accept) {
  for (const MediaRange& m : ParseAccept(accept)) {
    if (!IsJson(m)) continue;
    std::string_view as = m.Param("as");
    if (as.empty()) return false;
    if (as == "Table" && m.Param("g") == "meta.k8s.io" && m.Param("v") == "v1") return true;
  }
  return false;
}

std::string_view TableContentType() { return "application/json;as=Table;v=v1;g=meta.k8s.io"; }

int CompareKubeAwareVersions(std::string_view a, std::string_view b) {
  std::optional<KubeVersion> va = ParseKubeVersion(a);
  std::optional<KubeVersion> vb = ParseKubeVersion(b);
  if (va && vb) {
    if (va->stability != vb->stability) return va->stability > vb->stability ? -1 : 1;
    if (va->major != vb->major) return va->major > vb->major ? -1 : 1;
    if (va->minor != vb->minor) return va->minor > vb->minor ? -1 : 1;
    return 0;
  }
  if (va) return -1;
  if (vb) return 1;
  return a.compare(b) < 0 ? -1 : (a == b ? 0 : 1);
}

json VersionDocument() {
  return {{"major", "1"},
          {"minor", "32"},
          {"gitVersion", std::string(kServerGitVersion)},
          {"gitCommit", "0000000000000000000000000000000000000000"},
          {"gitTreeState", "clean"},
          {"buildDate", "1970-01-01T00:00:00Z"},
          {"goVersion", "n/a"},
          {"compiler", "n/a"},
          {"platform", "linux/amd64"}};
}

json CoreApiVersions(std::string_view server_address) {
  json doc = {{"kind", "APIVersions"}, {"versions", {"v1"}}};
  if (!server_address.empty()) {
    doc["serverAddressByClientCIDRs"] =
        json::array({{{"clientCIDR", "0.0.0.0/0"}, {"serverAddress", server_address}}});
  }
  return doc;
}

json ApiGroupList(const ResourceRegistry& registry) {
  json groups = json::array();
  for (const std::string& g : registry.Groups()) {
    if (!g.empty()) groups.push_back(GroupDocument(registry, g));
  }
  return {{"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", groups}};
}

Result<json> ApiGroupDocument(const ResourceRegistry& registry, std::string_view group) {
  std::vector<std::string> groups = registry.Groups();
  if (group.empty() || std::find(groups.begin(), groups.end(), group) == groups.end()) {
    return NotFoundError("the server could not find the requested resource");
  }
  json doc = GroupDocument(registry, std::string(group));
  doc["kind"] = "APIGroup";
  doc["apiVersion"] = "v1";
  return doc;
}

Result<json> ApiResourceList(const ResourceRegistry& registry, std::string_view group,
                             std::string_view version) {
  std::vector<ResourcePtr> resources = ResourcesAt(registry, group, version);
  if (resources.empty()) {
    return NotFoundError("the server could not find the requested resource");
  }
  json list = json::array();
  for (const ResourcePtr& r : resources) {
    json entry = {{"name", r->resource},
                  {"singularName", r->singular},
                  {"namespaced", r->namespaced},
                  {"kind", r->kind},
                  {"verbs", Strings(ResourceVerbs(*r))}};
    if (!r->short_names.empty()) entry["shortNames"] = Strings(r->short_names);
    if (!r->categories.empty()) entry["categories"] = Strings(r->categories);
    list.push_back(std::move(entry));
    if (r->has_scale) {
      list.push_back({{"name", r->resource + "/scale"},
                      {"singularName", ""},
                      {"namespaced", r->namespaced},
                      {"group", "autoscaling"},
                      {"version", "v1"},
                      {"kind", "Scale"},
                      {"verbs", {"get", "patch", "update"}}});
    }
    if (r->has_status) {
      list.push_back({{"name", r->resource + "/status"},
                      {"singularName", ""},
                      {"namespaced", r->namespaced},
                      {"kind", r->kind},
                      {"verbs", {"get", "patch", "update"}}});
    }
  }
  return json{{"kind", "APIResourceList"},
              {"apiVersion", "v1"},
              {"groupVersion", GroupVersionString(group, version)},
              {"resources", list}};
}

json AggregatedDiscovery(const ResourceRegistry& registry, bool core_only, DiscoveryFormat format) {
  json items = json::array();
  for (const std::string& g : registry.Groups()) {
    if (g.empty() == core_only) items.push_back(AggregatedGroup(registry, g));
  }
  std::string api_version = format == DiscoveryFormat::kAggregatedV2Beta1
                                ? "apidiscovery.k8s.io/v2beta1"
                                : "apidiscovery.k8s.io/v2";
  return {{"kind", "APIGroupDiscoveryList"},
          {"apiVersion", api_version},
          {"metadata", json::object()},
          {"items", items}};
}

std::vector<std::string> ResourceVerbs(const ResourceInfo& info) {
  if (info.builtin && info.group.empty() && info.resource == "namespaces") {
    return {"create", "delete", "get", "list", "patch", "update", "watch"};
  }
  return {"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"};
}

}  // namespace slicewright::apiserver

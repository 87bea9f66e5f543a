#include "apiserver/rest/service_ips.h"

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "slicewright/net/ip.h"

namespace slicewright::apiserver {
namespace {

using Strings = std::vector<std::string>;

const Json& Spec(const Json& service) {
  static const Json kEmpty = Json::object();
  const Json* spec = ObjectField(service, "spec");
  return spec != nullptr ? *spec : kEmpty;
}

Json& MutableSpec(Json& service) {
  Json* spec = EnsureObject(service, "spec");
  if (spec == nullptr) {
    service["spec"] = Json::object();
    spec = &service["spec"];
  }
  return *spec;
}

std::string Type(const Json& spec) { return StringOr(spec, "type", "ClusterIP"); }

// A list of strings at `key` (non-strings skipped); empty when absent or null.
Strings List(const Json& spec, std::string_view key) {
  Strings out;
  if (const Json* items = ArrayField(spec, key)) {
    for (const Json& item : *items) {
      if (item.is_string()) {
        out.push_back(item.get<std::string>());
      }
    }
  }
  return out;
}

void SetList(Json& spec, std::string_view key, const Strings& values) {
  if (values.empty()) {
    spec.erase(std::string(key));
  } else {
    spec[std::string(key)] = values;
  }
}

bool HasPolicy(const Json& spec) { return StringField(spec, "ipFamilyPolicy") != nullptr; }

bool NeedsClusterIp(const Json& spec) { return Type(spec) != "ExternalName"; }

bool NeedsNodePort(const Json& spec) {
  const std::string type = Type(spec);
  return type == "NodePort" || type == "LoadBalancer";
}

bool NeedsHealthCheckNodePort(const Json& spec) {
  return Type(spec) == "LoadBalancer" && StringOr(spec, "externalTrafficPolicy") == "Local";
}

bool HasSelector(const Json& spec) {
  const Json* selector = ObjectField(spec, "selector");
  return selector != nullptr && !selector->empty();
}

bool IsHeadless(const Json& spec) {
  const Strings ips = List(spec, "clusterIPs");
  return ips.size() == 1 && ips[0] == "None";
}

std::set<std::int64_t> NodePorts(const Json& spec) {
  std::set<std::int64_t> out;
  if (const Json* ports = ArrayField(spec, "ports")) {
    for (const Json& port : *ports) {
      if (const auto node_port = IntField(port, "nodePort"); node_port && *node_port != 0) {
        out.insert(*node_port);
      }
    }
  }
  return out;
}

Status Refused(const Json& service, const FieldErrors& errors) {
  const Json* metadata = Metadata(service);
  return errors.ToStatus("Service", metadata != nullptr ? StringOr(*metadata, "name") : "");
}

}  // namespace

bool ServiceIpFamilies::Serves(std::string_view family) const {
  return family == primary || (dual_stack && family == Other(primary));
}

std::string ServiceIpFamilies::Other(std::string_view family) {
  return family == "IPv4" ? "IPv6" : "IPv4";
}

std::string IpFamilyOf(std::string_view ip) {
  const auto parsed = net::ParseIpSloppy(ip);
  if (!parsed) {
    return "unknown";
  }
  return parsed->family == net::IpFamily::kIPv6 ? "IPv6" : "IPv4";
}

void PatchAllocatedValues(Json& service, const Json& old) {
  Json& spec = MutableSpec(service);
  const Json& old_spec = Spec(old);
  if (NeedsClusterIp(old_spec) && NeedsClusterIp(spec)) {
    if (StringOr(spec, "clusterIP").empty() && old_spec.contains("clusterIP")) {
      spec["clusterIP"] = old_spec["clusterIP"];
    }
    if (List(spec, "clusterIPs").empty() && !List(old_spec, "clusterIPs").empty()) {
      spec["clusterIPs"] = old_spec["clusterIPs"];
    }
  }
  if (NeedsNodePort(old_spec) && NeedsNodePort(spec)) {
    // Node ports the new version already names, wherever they were: never given twice.
    std::set<std::int64_t> used;
    const std::set<std::int64_t> old_ports = NodePorts(old_spec);
    for (std::int64_t port : NodePorts(spec)) {
      if (old_ports.count(port) > 0) {
        used.insert(port);
      }
    }
    std::map<std::string, std::int64_t> by_name;
    if (const Json* ports = ArrayField(old_spec, "ports")) {
      for (const Json& port : *ports) {
        by_name[StringOr(port, "name")] = IntField(port, "nodePort").value_or(0);
      }
    }
    if (Json* ports = ArrayField(spec, "ports")) {
      for (Json& port : *ports) {
        if (!port.is_object() || IntField(port, "nodePort").value_or(0) != 0) {
          continue;
        }
        const auto it = by_name.find(StringOr(port, "name"));
        if (it != by_name.end() && it->second != 0 && used.count(it->second) == 0) {
          port["nodePort"] = it->second;
        }
      }
    }
  }
  if (NeedsHealthCheckNodePort(old_spec) && NeedsHealthCheckNodePort(spec) &&
      IntField(spec, "healthCheckNodePort").value_or(0) == 0 &&
      old_spec.contains("healthCheckNodePort")) {
    spec["healthCheckNodePort"] = old_spec["healthCheckNodePort"];
  }
}

void NormalizeClusterIps(Json& service, const Json* old) {
  Json& spec = MutableSpec(service);
  const std::string cluster_ip = StringOr(spec, "clusterIP");
  if (old == nullptr) {
    if (!cluster_ip.empty() && List(spec, "clusterIPs").empty()) {
      spec["clusterIPs"] = Json::array({cluster_ip});
    }
    return;
  }
  const Json& old_spec = Spec(*old);
  const std::string old_ip = StringOr(old_spec, "clusterIP");
  if (!List(old_spec, "clusterIPs").empty() && List(spec, "clusterIPs").empty() &&
      old_ip == cluster_ip) {
    spec["clusterIPs"] = old_spec["clusterIPs"];
  }
  if (old_ip != cluster_ip) {
    const bool same_ips = List(old_spec, "clusterIPs") == List(spec, "clusterIPs");
    if (!old_ip.empty() && cluster_ip.empty()) {
      if (same_ips) {
        spec.erase("clusterIPs");
      }
    } else if (same_ips) {
      spec["clusterIPs"] = Json::array({cluster_ip});
    }
  }
}

bool IsUnchangedPreferDualStack(const Json& service, const Json& old) {
  const Json& spec = Spec(service);
  const Json& old_spec = Spec(old);
  if (!HasPolicy(spec) || Type(spec) != Type(old_spec) || !NeedsClusterIp(spec)) {
    return false;
  }
  if (StringOr(spec, "ipFamilyPolicy") != "PreferDualStack" ||
      (HasPolicy(old_spec) && StringOr(old_spec, "ipFamilyPolicy") != "PreferDualStack")) {
    return false;
  }
  return List(spec, "clusterIPs") == List(old_spec, "clusterIPs") &&
         List(spec, "ipFamilies") == List(old_spec, "ipFamilies");
}

void ValidateClusterIpFields(const Json& service, FieldErrors& errors) {
  const Json& spec = Spec(service);
  if (Type(spec) == "ExternalName") {
    return;
  }
  const std::string cluster_ip = StringOr(spec, "clusterIP");
  const Strings ips = List(spec, "clusterIPs");
  const Json shown_ips = ArrayField(spec, "clusterIPs") != nullptr ? spec["clusterIPs"] : Json();
  if (!cluster_ip.empty()) {
    if (ips.empty()) {
      errors.Required("spec.clusterIPs");
    } else if (ips[0] != cluster_ip) {
      errors.Invalid("spec.clusterIPs", shown_ips, "first value must match `clusterIP`");
    }
  } else if (!ips.empty()) {
    errors.Invalid("spec.clusterIPs", shown_ips, "must be empty when `clusterIP` is not specified");
  }
  std::set<std::string> seen;
  const Strings families = List(spec, "ipFamilies");
  for (std::size_t i = 0; i < families.size(); ++i) {
    const std::string field = "spec.ipFamilies[" + std::to_string(i) + "]";
    if (families[i] != "IPv4" && families[i] != "IPv6") {
      errors.NotSupported(field, Json(families[i]), {"IPv4", "IPv6"});
    }
    if (!seen.insert(families[i]).second) {
      errors.Duplicate(field, Json(families[i]));
    }
  }
  if (const std::string* policy = StringField(spec, "ipFamilyPolicy")) {
    if (*policy != "SingleStack" && *policy != "PreferDualStack" && *policy != "RequireDualStack") {
      errors.NotSupported("spec.ipFamilyPolicy", Json(*policy),
                          {"PreferDualStack", "RequireDualStack", "SingleStack"});
    }
  }
  bool invalid_ips = false;
  for (std::size_t i = 0; i < ips.size(); ++i) {
    if (i == 0 && ips[i] == "None") {
      if (ips.size() > 1) {
        invalid_ips = true;
        errors.Invalid("spec.clusterIPs", shown_ips, "'None' must be the first and only value");
      }
      continue;
    }
    if (!net::ParseIpSloppy(ips[i])) {
      invalid_ips = true;
      errors.Invalid("spec.clusterIPs[" + std::to_string(i) + "]", Json(ips[i]),
                     "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)");
    }
  }
  if (ips.size() > 2) {
    errors.Invalid("spec.clusterIPs", shown_ips, "may only hold up to 2 values");
  }
  if (invalid_ips) {
    return;
  }
  if (ips.size() > 1 && (ips.size() != 2 || IpFamilyOf(ips[0]) == IpFamilyOf(ips[1]))) {
    errors.Invalid("spec.clusterIPs", shown_ips,
                   "may specify no more than one IP for each IP family");
  }
  if (!IsHeadless(spec) && !ips.empty() && !families.empty()) {
    for (std::size_t i = 0; i < ips.size() && i < families.size(); ++i) {
      const bool v6 = IpFamilyOf(ips[i]) == "IPv6";
      if ((families[i] == "IPv4" && v6) || (families[i] == "IPv6" && !v6)) {
        errors.Invalid("spec.clusterIPs[" + std::to_string(i) + "]", Json(ips[i]),
                       "expected an " + families[i] + " value as indicated by `ipFamilies[" +
                           std::to_string(i) + "]`");
      }
    }
  }
}

Status InitIpFamilyFields(const ServiceIpFamilies& cluster, Json& service, const Json* old) {
  Json& spec = MutableSpec(service);
  if (Type(spec) == "ExternalName") {
    return Status::Ok();
  }
  if (old != nullptr && IsUnchangedPreferDualStack(service, *old)) {
    return Status::Ok();
  }
  const bool headless_selectorless = StringOr(spec, "clusterIP") == "None" && !HasSelector(spec);
  if (!HasPolicy(spec)) {
    if (old != nullptr && HasPolicy(Spec(*old))) {
      spec["ipFamilyPolicy"] = Spec(*old)["ipFamilyPolicy"];
    } else if (headless_selectorless) {
      spec["ipFamilyPolicy"] = "RequireDualStack";
    } else {
      spec["ipFamilyPolicy"] = "SingleStack";
    }
  }
  {
    FieldErrors loose;
    ValidateClusterIpFields(service, loose);
    if (!loose.empty()) {
      return Refused(service, loose);
    }
  }
  const std::string policy = StringOr(spec, "ipFamilyPolicy");
  FieldErrors errors;
  Strings ips = List(spec, "clusterIPs");
  Strings families = List(spec, "ipFamilies");
  if (old != nullptr) {
    const Json& old_spec = Spec(*old);
    if (policy == "SingleStack") {
      // Setting SingleStack with unchanged IPs and families is the intent to drop the secondary.
      if (ips == List(old_spec, "clusterIPs") && ips.size() > 1) {
        ips.resize(1);
        SetList(spec, "clusterIPs", ips);
      }
      if (families == List(old_spec, "ipFamilies") && families.size() > 1) {
        families.resize(1);
        SetList(spec, "ipFamilies", families);
      }
    } else {
      if (!ips.empty() && ips.size() < List(old_spec, "clusterIPs").size()) {
        errors.Invalid("spec.ipFamilyPolicy", Json(policy),
                       "must be 'SingleStack' to release the secondary cluster IP");
      }
      if (!families.empty() && families.size() < List(old_spec, "ipFamilies").size()) {
        errors.Invalid("spec.ipFamilyPolicy", Json(policy),
                       "must be 'SingleStack' to release the secondary IP family");
      }
    }
  }
  if (policy == "SingleStack") {
    if (ips.size() == 2) {
      errors.Invalid("spec.ipFamilyPolicy", Json(policy),
                     "must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs "
                     "are specified");
    }
    if (families.size() == 2) {
      errors.Invalid("spec.ipFamilyPolicy", Json(policy),
                     "must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families "
                     "are specified");
    }
  }
  // Families follow the given clusterIPs.
  for (std::size_t i = 0; i < ips.size(); ++i) {
    if (ips[i] == "None") {
      break;
    }
    const std::string family = IpFamilyOf(ips[i]);
    if (i >= families.size()) {
      if (!cluster.Serves(family)) {
        errors.Invalid("spec.clusterIPs[" + std::to_string(i) + "]", spec["clusterIPs"],
                       family + " is not configured on this cluster");
      } else {
        families.push_back(family);
      }
    }
  }
  if (!errors.empty()) {
    return Refused(service, errors);
  }
  if (headless_selectorless) {
    // Its endpoints are the user's, of whatever family: both, unless SingleStack, on any cluster.
    if (families.empty()) {
      families.push_back(cluster.primary);
    }
    if (families.size() < 2 && policy != "SingleStack") {
      families.push_back(ServiceIpFamilies::Other(families[0]));
    }
    SetList(spec, "ipFamilies", families);
    return Status::Ok();
  }
  if (policy == "RequireDualStack" && !cluster.dual_stack) {
    errors.Invalid("spec.ipFamilyPolicy", Json(policy),
                   "this cluster is not configured for dual-stack services");
  }
  for (std::size_t i = 0; i < families.size(); ++i) {
    if (!cluster.Serves(families[i])) {
      errors.Invalid("spec.ipFamilies[" + std::to_string(i) + "]", Json(families[i]),
                     "not configured on this cluster");
    }
  }
  if (!errors.empty()) {
    return Refused(service, errors);
  }
  if (families.empty()) {
    families.push_back(cluster.primary);
  }
  if (policy != "SingleStack" && families.size() == 1 && cluster.dual_stack) {
    families.push_back(ServiceIpFamilies::Other(families[0]));
  }
  SetList(spec, "ipFamilies", families);
  return Status::Ok();
}

void DropTypeDependentFields(Json& service, const Json& old) {
  Json& spec = MutableSpec(service);
  const Json& old_spec = Spec(old);
  const auto same = [&](std::string_view key) {
    const bool here = spec.contains(key) && !spec[std::string(key)].is_null();
    const bool there = old_spec.contains(key) && !old_spec[std::string(key)].is_null();
    return here == there && (!here || spec[std::string(key)] == old_spec[std::string(key)]);
  };
  if (NeedsClusterIp(old_spec) && !NeedsClusterIp(spec)) {
    if (List(spec, "clusterIPs") == List(old_spec, "clusterIPs")) {
      spec.erase("clusterIP");
      spec.erase("clusterIPs");
    }
    if (List(spec, "ipFamilies") == List(old_spec, "ipFamilies")) {
      spec.erase("ipFamilies");
    }
    if (same("ipFamilyPolicy")) {
      spec.erase("ipFamilyPolicy");
    }
  }
  if (NeedsNodePort(old_spec) && !NeedsNodePort(spec)) {
    // sameNodePorts: the same ports, in order, with the same nodePort each.
    std::vector<std::int64_t> now;
    std::vector<std::int64_t> before;
    if (const Json* ports = ArrayField(spec, "ports")) {
      for (const Json& port : *ports) now.push_back(IntField(port, "nodePort").value_or(0));
    }
    if (const Json* ports = ArrayField(old_spec, "ports")) {
      for (const Json& port : *ports) before.push_back(IntField(port, "nodePort").value_or(0));
    }
    if (now == before) {
      if (Json* ports = ArrayField(spec, "ports")) {
        for (Json& port : *ports) {
          if (port.is_object()) port.erase("nodePort");
        }
      }
    }
  }
  if (Type(old_spec) == "LoadBalancer" && Type(spec) != "LoadBalancer") {
    if (spec.contains("allocateLoadBalancerNodePorts") &&
        old_spec.contains("allocateLoadBalancerNodePorts") &&
        spec["allocateLoadBalancerNodePorts"] == old_spec["allocateLoadBalancerNodePorts"]) {
      spec.erase("allocateLoadBalancerNodePorts");
    }
    if (same("loadBalancerClass")) {
      spec.erase("loadBalancerClass");
    }
  }
  const auto needs_external_policy = [](const Json& s) { return NeedsNodePort(s); };
  if (!needs_external_policy(spec) && needs_external_policy(old_spec) &&
      same("externalTrafficPolicy")) {
    spec.erase("externalTrafficPolicy");
  }
  if (NeedsHealthCheckNodePort(old_spec) && !NeedsHealthCheckNodePort(spec) &&
      same("healthCheckNodePort")) {
    spec.erase("healthCheckNodePort");
  }
  if (Type(spec) != "LoadBalancer") {
    if (Json* status = EnsureObject(service, "status")) {
      (*status)["loadBalancer"] = Json::object();
    }
  }
}

void ValidateIpUpgradeDowngrade(const Json& service, const Json& old, FieldErrors& errors) {
  const Json& spec = Spec(service);
  const Json& old_spec = Spec(old);
  if (Type(spec) == "ExternalName" || Type(old_spec) == "ExternalName") {
    return;
  }
  const bool headless = IsHeadless(spec);
  const bool old_headless = IsHeadless(old_spec);
  const Strings ips = List(spec, "clusterIPs");
  const Strings old_ips = List(old_spec, "clusterIPs");
  const Json shown_ips = ArrayField(spec, "clusterIPs") != nullptr ? spec["clusterIPs"] : Json();
  const std::string policy = StringOr(spec, "ipFamilyPolicy");
  const Json shown_policy = HasPolicy(spec) ? Json(policy) : Json();
  if (!(headless && old_headless)) {
    if (ips.size() == old_ips.size()) {
      for (std::size_t i = 0; i < old_ips.size(); ++i) {
        if (old_ips[i] != ips[i]) {
          errors.Invalid("spec.clusterIPs[" + std::to_string(i) + "]", shown_ips,
                         "may not change once set");
        }
      }
    } else if (old_ips.size() > ips.size()) {
      if (ips.empty()) {
        errors.Invalid("spec.clusterIPs[0]", shown_ips, "primary clusterIP can not be unset");
      }
      if (!old_ips.empty() && !ips.empty() && ips[0] != old_ips[0]) {
        errors.Invalid("spec.clusterIPs[0]", shown_ips, "may not change once set");
      }
      if (ips.size() == 1 && policy != "SingleStack") {
        errors.Invalid("spec.ipFamilyPolicy", shown_policy,
                       "must be set to 'SingleStack' when releasing the secondary clusterIP");
      }
    } else if (!old_ips.empty() && ips[0] != old_ips[0]) {
      errors.Invalid("spec.clusterIPs[0]", shown_ips, "may not change once set");
    }
  }
  if (headless != old_headless || headless) {
    return;
  }
  const Strings families = List(spec, "ipFamilies");
  const Strings old_families = List(old_spec, "ipFamilies");
  const Json shown_families =
      ArrayField(spec, "ipFamilies") != nullptr ? spec["ipFamilies"] : Json();
  if (families.size() == old_families.size()) {
    for (std::size_t i = 0; i < old_families.size(); ++i) {
      if (old_families[i] != families[i]) {
        errors.Invalid("spec.ipFamilies[0]", shown_families, "may not change once set");
      }
    }
  } else if (old_families.size() > families.size()) {
    if (ips.empty()) {
      errors.Invalid("spec.ipFamilies[0]", shown_families, "primary ipFamily can not be unset");
    }
    if (!families.empty() && families[0] != old_families[0]) {
      errors.Invalid("spec.ipFamilies[0]", shown_ips, "may not change once set");
    }
    if (families.size() == 1 && policy != "SingleStack") {
      errors.Invalid("spec.ipFamilyPolicy", shown_policy,
                     "must be set to 'SingleStack' when releasing the secondary ipFamily");
    }
  } else if (!old_families.empty() && !families.empty() && families[0] != old_families[0]) {
    errors.Invalid("spec.ipFamilies[0]", shown_ips, "may not change once set");
  }
}

}  // namespace slicewright::apiserver

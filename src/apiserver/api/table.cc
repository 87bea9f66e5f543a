// Table conversion; see table.h. The built-in cells follow kube-apiserver's
// pkg/printers/internalversion/printers.go (v1.32), rendered server-side with Wide: true.
#include "apiserver/api/table.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include <nlohmann/json.hpp>

#include "slicewright/model/time.h"

namespace slicewright::apiserver {
namespace {

using nlohmann::json;
using Clock = std::chrono::system_clock;

const json& Null() {
  static const json kNull;
  return kNull;
}

const json& Get(const json& j, std::string_view key) {
  if (!j.is_object()) return Null();
  auto it = j.find(key);
  return it == j.end() ? Null() : *it;
}

const json& Path(const json& j, std::initializer_list<std::string_view> keys) {
  const json* cur = &j;
  for (std::string_view k : keys) cur = &Get(*cur, k);
  return *cur;
}

std::string Str(const json& j) { return j.is_string() ? j.get<std::string>() : std::string(); }

std::int64_t Int(const json& j) {
  if (j.is_number_integer()) return j.get<std::int64_t>();
  return 0;
}

const json& Arr(const json& j) {
  static const json kEmpty = json::array();
  return j.is_array() ? j : kEmpty;
}

std::string Join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += sep;
    out += parts[i];
  }
  return out;
}

std::string ToLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::optional<Clock::time_point> ParseTime(const json& j) {
  if (!j.is_string()) return std::nullopt;
  std::optional<model::Time> t = model::ParseRfc3339(j.get<std::string>());
  if (!t || t->IsZero()) return std::nullopt;
  return Clock::time_point(
      std::chrono::duration_cast<Clock::duration>(std::chrono::nanoseconds(t->unix_nanos)));
}

// translateTimestampSince: "<unknown>" for a missing timestamp.
std::string Since(const json& timestamp, Clock::time_point now) {
  std::optional<Clock::time_point> t = ParseTime(timestamp);
  if (!t) return "<unknown>";
  return HumanDuration(std::chrono::duration_cast<std::chrono::nanoseconds>(now - *t));
}

std::string OrNone(std::string s) { return s.empty() ? "<none>" : s; }

std::string ListWithMore(const std::vector<std::string>& list, bool more, std::size_t count,
                         std::size_t max) {
  std::string ret = Join(list, ",");
  if (more) return ret + " + " + std::to_string(count - max) + " more...";
  return ret.empty() ? "<unset>" : ret;
}

// ---- pods ----

bool IsRestartableInit(const json& pod, std::string_view name) {
  for (const json& c : Arr(Path(pod, {"spec", "initContainers"}))) {
    if (Str(Get(c, "name")) == name) return Str(Get(c, "restartPolicy")) == "Always";
  }
  return false;
}

bool HasCondition(const json& pod, std::string_view type, std::string_view status) {
  for (const json& c : Arr(Path(pod, {"status", "conditions"}))) {
    if (Str(Get(c, "type")) == type && Str(Get(c, "status")) == status) return true;
  }
  return false;
}

std::vector<json> PodCells(const json& pod, Clock::time_point now) {
  const json& status = Get(pod, "status");
  int restarts = 0;
  int restartable_init_restarts = 0;
  int total = static_cast<int>(Arr(Path(pod, {"spec", "containers"})).size());
  int ready = 0;
  std::optional<Clock::time_point> last_restart;
  std::optional<Clock::time_point> last_restartable_init_restart;
  auto later = [](std::optional<Clock::time_point>& acc, const json& ts) {
    std::optional<Clock::time_point> t = ParseTime(ts);
    if (t && (!acc || *acc < *t)) acc = t;
  };
  const std::string phase = Str(Get(status, "phase"));
  std::string reason = phase;
  if (!Str(Get(status, "reason")).empty()) reason = Str(Get(status, "reason"));
  for (const json& c : Arr(Get(status, "conditions"))) {
    if (Str(Get(c, "type")) == "PodScheduled" && Str(Get(c, "reason")) == "SchedulingGated") {
      reason = "SchedulingGated";
    }
  }
  const json& init_specs = Arr(Path(pod, {"spec", "initContainers"}));
  for (const json& c : init_specs) {
    if (Str(Get(c, "restartPolicy")) == "Always") ++total;
  }
  bool initializing = false;
  const json& init_statuses = Arr(Get(status, "initContainerStatuses"));
  for (std::size_t i = 0; i < init_statuses.size(); ++i) {
    const json& c = init_statuses[i];
    const json& last_terminated = Path(c, {"lastState", "terminated"});
    restarts += static_cast<int>(Int(Get(c, "restartCount")));
    if (last_terminated.is_object()) later(last_restart, Get(last_terminated, "finishedAt"));
    const bool restartable = IsRestartableInit(pod, Str(Get(c, "name")));
    if (restartable) {
      restartable_init_restarts += static_cast<int>(Int(Get(c, "restartCount")));
      if (last_terminated.is_object()) {
        later(last_restartable_init_restart, Get(last_terminated, "finishedAt"));
      }
    }
    const json& terminated = Path(c, {"state", "terminated"});
    const json& waiting = Path(c, {"state", "waiting"});
    if (terminated.is_object() && Int(Get(terminated, "exitCode")) == 0) continue;
    if (restartable && Get(c, "started").is_boolean() && Get(c, "started").get<bool>()) {
      if (Get(c, "ready").is_boolean() && Get(c, "ready").get<bool>()) ++ready;
      continue;
    }
    if (terminated.is_object()) {
      if (Str(Get(terminated, "reason")).empty()) {
        reason = Int(Get(terminated, "signal")) != 0
                     ? "Init:Signal:" + std::to_string(Int(Get(terminated, "signal")))
                     : "Init:ExitCode:" + std::to_string(Int(Get(terminated, "exitCode")));
      } else {
        reason = "Init:" + Str(Get(terminated, "reason"));
      }
    } else if (waiting.is_object() && !Str(Get(waiting, "reason")).empty() &&
               Str(Get(waiting, "reason")) != "PodInitializing") {
      reason = "Init:" + Str(Get(waiting, "reason"));
    } else {
      reason = "Init:" + std::to_string(i) + "/" + std::to_string(init_specs.size());
    }
    initializing = true;
    break;
  }
  if (!initializing || HasCondition(pod, "Initialized", "True")) {
    restarts = restartable_init_restarts;
    last_restart = last_restartable_init_restart;
    bool has_running = false;
    const json& statuses = Arr(Get(status, "containerStatuses"));
    for (auto it = statuses.rbegin(); it != statuses.rend(); ++it) {
      const json& c = *it;
      restarts += static_cast<int>(Int(Get(c, "restartCount")));
      const json& last_terminated = Path(c, {"lastState", "terminated"});
      if (last_terminated.is_object()) later(last_restart, Get(last_terminated, "finishedAt"));
      const json& waiting = Path(c, {"state", "waiting"});
      const json& terminated = Path(c, {"state", "terminated"});
      if (waiting.is_object() && !Str(Get(waiting, "reason")).empty()) {
        reason = Str(Get(waiting, "reason"));
      } else if (terminated.is_object() && !Str(Get(terminated, "reason")).empty()) {
        reason = Str(Get(terminated, "reason"));
      } else if (terminated.is_object()) {
        reason = Int(Get(terminated, "signal")) != 0
                     ? "Signal:" + std::to_string(Int(Get(terminated, "signal")))
                     : "ExitCode:" + std::to_string(Int(Get(terminated, "exitCode")));
      } else if (Get(c, "ready").is_boolean() && Get(c, "ready").get<bool>() &&
                 Path(c, {"state", "running"}).is_object()) {
        has_running = true;
        ++ready;
      }
    }
    if (reason == "Completed" && has_running) {
      reason = HasCondition(pod, "Ready", "True") ? "Running" : "NotReady";
    }
  }
  const bool deleting = Path(pod, {"metadata", "deletionTimestamp"}).is_string();
  if (deleting && Str(Get(status, "reason")) == "NodeLost") {
    reason = "Unknown";
  } else if (deleting && phase != "Succeeded" && phase != "Failed") {
    reason = "Terminating";
  }
  std::string restarts_str = std::to_string(restarts);
  if (restarts != 0 && last_restart) {
    restarts_str +=
        " (" +
        HumanDuration(std::chrono::duration_cast<std::chrono::nanoseconds>(now - *last_restart)) +
        " ago)";
  }
  std::string pod_ip;
  const json& ips = Arr(Get(status, "podIPs"));
  if (!ips.empty()) pod_ip = Str(Get(ips[0], "ip"));
  std::string gates = "<none>";
  const json& gate_specs = Arr(Path(pod, {"spec", "readinessGates"}));
  if (!gate_specs.empty()) {
    int true_conditions = 0;
    for (const json& g : gate_specs) {
      for (const json& c : Arr(Get(status, "conditions"))) {
        if (Str(Get(c, "type")) == Str(Get(g, "conditionType"))) {
          if (Str(Get(c, "status")) == "True") ++true_conditions;
          break;
        }
      }
    }
    gates = std::to_string(true_conditions) + "/" + std::to_string(gate_specs.size());
  }
  return {std::to_string(ready) + "/" + std::to_string(total),
          reason,
          restarts_str,
          Since(Path(pod, {"metadata", "creationTimestamp"}), now),
          OrNone(pod_ip),
          OrNone(Str(Path(pod, {"spec", "nodeName"}))),
          OrNone(Str(Get(status, "nominatedNodeName"))),
          gates};
}

// ---- services ----

std::string ServiceExternalIp(const json& svc) {
  const json& spec = Get(svc, "spec");
  std::vector<std::string> external;
  for (const json& ip : Arr(Get(spec, "externalIPs"))) external.push_back(Str(ip));
  std::string type = Str(Get(spec, "type"));
  if (type.empty()) type = "ClusterIP";
  if (type == "ClusterIP" || type == "NodePort") {
    return external.empty() ? "<none>" : Join(external, ",");
  }
  if (type == "LoadBalancer") {
    std::vector<std::string> lb;
    for (const json& ing : Arr(Path(svc, {"status", "loadBalancer", "ingress"}))) {
      if (!Str(Get(ing, "ip")).empty()) {
        lb.push_back(Str(Get(ing, "ip")));
      } else if (!Str(Get(ing, "hostname")).empty()) {
        lb.push_back(Str(Get(ing, "hostname")));
      }
    }
    lb.insert(lb.end(), external.begin(), external.end());
    return lb.empty() ? "<pending>" : Join(lb, ",");
  }
  if (type == "ExternalName") return Str(Get(spec, "externalName"));
  return "<unknown>";
}

std::vector<json> ServiceCells(const json& svc, Clock::time_point now) {
  const json& spec = Get(svc, "spec");
  std::string type = Str(Get(spec, "type"));
  if (type.empty()) type = "ClusterIP";
  std::string cluster_ip = "<none>";
  const json& ips = Arr(Get(spec, "clusterIPs"));
  if (!ips.empty()) {
    cluster_ip = Str(ips[0]);
  } else if (!Str(Get(spec, "clusterIP")).empty()) {
    cluster_ip = Str(Get(spec, "clusterIP"));
  }
  std::vector<std::string> ports;
  for (const json& p : Arr(Get(spec, "ports"))) {
    std::string protocol = Str(Get(p, "protocol"));
    if (protocol.empty()) protocol = "TCP";
    std::string piece = std::to_string(Int(Get(p, "port")));
    if (Int(Get(p, "nodePort")) > 0) piece += ":" + std::to_string(Int(Get(p, "nodePort")));
    ports.push_back(piece + "/" + protocol);
  }
  std::vector<std::string> selector;
  if (Get(spec, "selector").is_object()) {
    for (const auto& [k, v] : Get(spec, "selector").items()) selector.push_back(k + "=" + Str(v));
  }
  std::sort(selector.begin(), selector.end());
  return {type,
          cluster_ip,
          ServiceExternalIp(svc),
          ports.empty() ? "<none>" : Join(ports, ","),
          Since(Path(svc, {"metadata", "creationTimestamp"}), now),
          selector.empty() ? "<none>" : Join(selector, ",")};
}

// ---- endpoint slices and endpoints ----

std::vector<json> SliceCells(const json& slice, Clock::time_point now) {
  constexpr std::size_t kMax = 3;
  std::vector<std::string> ports;
  bool more_ports = false;
  std::size_t port_count = 0;
  for (const json& p : Arr(Get(slice, "ports"))) {
    if (ports.size() < kMax) {
      std::string num = "*";
      if (Get(p, "port").is_number_integer()) {
        num = std::to_string(Int(Get(p, "port")));
      } else if (Get(p, "name").is_string()) {
        num = Str(Get(p, "name"));
      }
      ports.push_back(num);
    } else {
      more_ports = true;
    }
    ++port_count;
  }
  std::vector<std::string> addresses;
  bool more_addresses = false;
  std::size_t address_count = 0;
  for (const json& e : Arr(Get(slice, "endpoints"))) {
    for (const json& a : Arr(Get(e, "addresses"))) {
      if (addresses.size() < kMax) {
        addresses.push_back(Str(a));
      } else {
        more_addresses = true;
      }
      ++address_count;
    }
  }
  return {Str(Get(slice, "addressType")), ListWithMore(ports, more_ports, port_count, kMax),
          ListWithMore(addresses, more_addresses, address_count, kMax),
          Since(Path(slice, {"metadata", "creationTimestamp"}), now)};
}

std::string HostPort(const std::string& ip, std::int64_t port) {
  bool v6 = ip.find(':') != std::string::npos;
  return (v6 ? "[" + ip + "]" : ip) + ":" + std::to_string(port);
}

std::vector<json> EndpointsCells(const json& ep, Clock::time_point now) {
  constexpr std::size_t kMax = 3;
  const json& subsets = Arr(Get(ep, "subsets"));
  std::string text;
  if (subsets.empty()) {
    text = "<none>";
  } else {
    std::vector<std::string> list;
    bool more = false;
    std::size_t count = 0;
    for (const json& ss : subsets) {
      const json& addresses = Arr(Get(ss, "addresses"));
      const json& ports = Arr(Get(ss, "ports"));
      if (ports.empty()) {
        count += addresses.size();
        for (const json& a : addresses) {
          if (list.size() == kMax) {
            more = true;
            break;
          }
          list.push_back(Str(Get(a, "ip")));
        }
        continue;
      }
      for (const json& p : ports) {
        count += addresses.size();
        for (const json& a : addresses) {
          if (list.size() == kMax) {
            more = true;
            break;
          }
          list.push_back(HostPort(Str(Get(a, "ip")), Int(Get(p, "port"))));
        }
      }
    }
    text = Join(list, ",");
    if (more) text += " + " + std::to_string(count - kMax) + " more...";
  }
  return {text, Since(Path(ep, {"metadata", "creationTimestamp"}), now)};
}

// ---- nodes, namespaces, leases, config ----

std::string NodeAddress(const json& node, std::string_view type) {
  for (const json& a : Arr(Path(node, {"status", "addresses"}))) {
    if (Str(Get(a, "type")) == type) return Str(Get(a, "address"));
  }
  return "<none>";
}

std::vector<json> NodeCells(const json& node, Clock::time_point now) {
  std::vector<std::string> status;
  for (const json& c : Arr(Path(node, {"status", "conditions"}))) {
    if (Str(Get(c, "type")) == "Ready") {
      status.push_back(Str(Get(c, "status")) == "True" ? "Ready" : "NotReady");
    }
  }
  if (status.empty()) status.push_back("Unknown");
  const json& unschedulable = Path(node, {"spec", "unschedulable"});
  if (unschedulable.is_boolean() && unschedulable.get<bool>()) {
    status.push_back("SchedulingDisabled");
  }
  std::set<std::string> roles;
  const json& labels = Path(node, {"metadata", "labels"});
  if (labels.is_object()) {
    constexpr std::string_view kRolePrefix = "node-role.kubernetes.io/";
    for (const auto& [k, v] : labels.items()) {
      if (k.starts_with(kRolePrefix) && k.size() > kRolePrefix.size()) {
        roles.insert(k.substr(kRolePrefix.size()));
      } else if (k == "kubernetes.io/role" && !Str(v).empty()) {
        roles.insert(Str(v));
      }
    }
  }
  const json& info = Path(node, {"status", "nodeInfo"});
  auto or_unknown = [](std::string s) { return s.empty() ? std::string("<unknown>") : s; };
  return {Join(status, ","),
          roles.empty() ? "<none>" : Join({roles.begin(), roles.end()}, ","),
          Since(Path(node, {"metadata", "creationTimestamp"}), now),
          Str(Get(info, "kubeletVersion")),
          NodeAddress(node, "InternalIP"),
          NodeAddress(node, "ExternalIP"),
          or_unknown(Str(Get(info, "osImage"))),
          or_unknown(Str(Get(info, "kernelVersion"))),
          or_unknown(Str(Get(info, "containerRuntimeVersion")))};
}

std::size_t Size(const json& j) { return j.is_object() || j.is_array() ? j.size() : 0; }

// Core and events.k8s.io Events share kube's printer; `core` picks the field names.
std::vector<json> EventCells(const json& ev, bool core, Clock::time_point now) {
  auto field = [&](std::string_view core_name, std::string_view new_name) -> const json& {
    return Get(ev, core ? core_name : new_name);
  };
  std::string first = Since(field("firstTimestamp", "deprecatedFirstTimestamp"), now);
  if (!ParseTime(field("firstTimestamp", "deprecatedFirstTimestamp"))) {
    first = Since(Get(ev, "eventTime"), now);
  }
  std::string last = Since(field("lastTimestamp", "deprecatedLastTimestamp"), now);
  if (!ParseTime(field("lastTimestamp", "deprecatedLastTimestamp"))) last = first;
  std::int64_t count = Int(field("count", "deprecatedCount"));
  const json& series = Get(ev, "series");
  if (series.is_object()) {
    last = Since(Get(series, "lastObservedTime"), now);
    count = Int(Get(series, "count"));
  } else if (count == 0) {
    count = 1;
  }
  const json& involved = field("involvedObject", "regarding");
  std::string target = ToLower(Str(Get(involved, "kind")));
  if (!Str(Get(involved, "name")).empty()) target += "/" + Str(Get(involved, "name"));
  const json& source = field("source", "deprecatedSource");
  std::string component = Str(Get(source, "component"));
  if (component.empty()) component = Str(Get(ev, "reportingController"));
  if (core && component.empty()) component = Str(Get(ev, "reportingComponent"));
  std::string instance = Str(Get(source, "host"));
  if (instance.empty()) instance = Str(Get(ev, "reportingInstance"));
  std::string src = instance.empty() ? component : component + ", " + instance;
  std::string message = Str(field("message", "note"));
  while (!message.empty() && (message.back() == ' ' || message.back() == '\n' ||
                              message.back() == '\t' || message.back() == '\r')) {
    message.pop_back();
  }
  std::size_t lead = message.find_first_not_of(" \n\t\r");
  message = lead == std::string::npos ? std::string() : message.substr(lead);
  return {last,
          Str(Get(ev, "type")),
          Str(Get(ev, "reason")),
          target,
          Str(Get(involved, "fieldPath")),
          src,
          message,
          first,
          count,
          Str(Path(ev, {"metadata", "name"}))};
}

// ---- deploy/'s kinds: Deployment, PodDisruptionBudget, RBAC ----

// The template's container names and images, comma-joined, for the wide columns.
std::pair<std::string, std::string> TemplateContainers(const json& spec) {
  std::vector<std::string> names;
  std::vector<std::string> images;
  for (const json& c : Arr(Path(spec, {"template", "spec", "containers"}))) {
    names.push_back(Str(Get(c, "name")));
    images.push_back(Str(Get(c, "image")));
  }
  return {Join(names, ","), Join(images, ",")};
}

// apps/v1 defaults spec.replicas to 1.
std::int64_t DesiredReplicas(const json& spec) {
  return Get(spec, "replicas").is_number_integer() ? Int(Get(spec, "replicas")) : 1;
}

std::vector<json> DeploymentCells(const json& deploy, Clock::time_point now) {
  const json& spec = Get(deploy, "spec");
  const json& status = Get(deploy, "status");
  auto [names, images] = TemplateContainers(spec);
  return {std::to_string(Int(Get(status, "readyReplicas"))) + "/" +
              std::to_string(DesiredReplicas(spec)),
          Int(Get(status, "updatedReplicas")),
          Int(Get(status, "availableReplicas")),
          Since(Path(deploy, {"metadata", "creationTimestamp"}), now),
          std::move(names),
          std::move(images),
          LabelSelectorText(Get(spec, "selector"))};
}

// printReplicaSet: Desired, Current, Ready, Age, then the wide columns.
std::vector<json> ReplicaSetCells(const json& rs, Clock::time_point now) {
  const json& spec = Get(rs, "spec");
  const json& status = Get(rs, "status");
  auto [names, images] = TemplateContainers(spec);
  return {DesiredReplicas(spec),
          Int(Get(status, "replicas")),
          Int(Get(status, "readyReplicas")),
          Since(Path(rs, {"metadata", "creationTimestamp"}), now),
          std::move(names),
          std::move(images),
          LabelSelectorText(Get(spec, "selector"))};
}

// printStatefulSet: "ready/desired", Age, then the wide columns.
std::vector<json> StatefulSetCells(const json& sts, Clock::time_point now) {
  const json& spec = Get(sts, "spec");
  const json& status = Get(sts, "status");
  auto [names, images] = TemplateContainers(spec);
  return {std::to_string(Int(Get(status, "readyReplicas"))) + "/" +
              std::to_string(DesiredReplicas(spec)),
          Since(Path(sts, {"metadata", "creationTimestamp"}), now), std::move(names),
          std::move(images)};
}

// An IntOrString budget: the number, the percentage, or "N/A" when unset.
std::string IntOrStringText(const json& v) {
  if (v.is_number_integer()) return std::to_string(v.get<std::int64_t>());
  if (v.is_string()) return v.get<std::string>();
  return "N/A";
}

std::vector<json> PodDisruptionBudgetCells(const json& pdb, Clock::time_point now) {
  const json& spec = Get(pdb, "spec");
  return {IntOrStringText(Get(spec, "minAvailable")), IntOrStringText(Get(spec, "maxUnavailable")),
          Int(Path(pdb, {"status", "disruptionsAllowed"})),
          Since(Path(pdb, {"metadata", "creationTimestamp"}), now)};
}

std::vector<json> RoleBindingCells(const json& binding, Clock::time_point now) {
  const json& role_ref = Get(binding, "roleRef");
  std::vector<std::string> users;
  std::vector<std::string> groups;
  std::vector<std::string> service_accounts;
  for (const json& subject : Arr(Get(binding, "subjects"))) {
    const std::string kind = Str(Get(subject, "kind"));
    const std::string name = Str(Get(subject, "name"));
    if (kind == "User") {
      users.push_back(name);
    } else if (kind == "Group") {
      groups.push_back(name);
    } else if (kind == "ServiceAccount") {
      service_accounts.push_back(Str(Get(subject, "namespace")) + "/" + name);
    }
  }
  return {Str(Get(role_ref, "kind")) + "/" + Str(Get(role_ref, "name")),
          Since(Path(binding, {"metadata", "creationTimestamp"}), now), Join(users, ", "),
          Join(groups, ", "), Join(service_accounts, ", ")};
}

// The "Created At" column of CustomResourceDefinitions and (Cluster)Roles: an RFC 3339 time.
json CreatedAtCell(const json& obj) {
  std::optional<Clock::time_point> t = ParseTime(Path(obj, {"metadata", "creationTimestamp"}));
  if (!t) return nullptr;
  return model::FormatRfc3339(model::Time{
      std::chrono::duration_cast<std::chrono::nanoseconds>(t->time_since_epoch()).count()});
}

std::vector<json> BuiltinCells(const ResourceInfo& info, const json& obj, Clock::time_point now) {
  const std::string& g = info.group;
  const std::string& r = info.resource;
  const json& created = Path(obj, {"metadata", "creationTimestamp"});
  if (g.empty() && r == "pods") return PodCells(obj, now);
  if (g.empty() && r == "services") return ServiceCells(obj, now);
  if (g == "discovery.k8s.io" && r == "endpointslices") return SliceCells(obj, now);
  if (g.empty() && r == "endpoints") return EndpointsCells(obj, now);
  if (g.empty() && r == "nodes") return NodeCells(obj, now);
  if (r == "events") return EventCells(obj, g.empty(), now);
  if (g.empty() && r == "namespaces") {
    std::string phase = Str(Path(obj, {"status", "phase"}));
    return {phase.empty() ? "Active" : phase, Since(created, now)};
  }
  if (g.empty() && r == "configmaps") {
    return {static_cast<std::int64_t>(Size(Get(obj, "data")) + Size(Get(obj, "binaryData"))),
            Since(created, now)};
  }
  if (g.empty() && r == "secrets") {
    std::string type = Str(Get(obj, "type"));
    return {type.empty() ? "Opaque" : type, static_cast<std::int64_t>(Size(Get(obj, "data"))),
            Since(created, now)};
  }
  if (g.empty() && r == "serviceaccounts") {
    return {static_cast<std::int64_t>(Size(Get(obj, "secrets"))), Since(created, now)};
  }
  if (g == "coordination.k8s.io" && r == "leases") {
    return {OrNone(Str(Path(obj, {"spec", "holderIdentity"}))), Since(created, now)};
  }
  if (g == "apps" && r == "deployments") return DeploymentCells(obj, now);
  if (g == "apps" && r == "replicasets") return ReplicaSetCells(obj, now);
  if (g == "apps" && r == "statefulsets") return StatefulSetCells(obj, now);
  if (g == "policy" && r == "poddisruptionbudgets") return PodDisruptionBudgetCells(obj, now);
  if (g == "rbac.authorization.k8s.io" && (r == "rolebindings" || r == "clusterrolebindings")) {
    return RoleBindingCells(obj, now);
  }
  if ((g == "apiextensions.k8s.io" && r == "customresourcedefinitions") ||
      (g == "rbac.authorization.k8s.io" && (r == "roles" || r == "clusterroles"))) {
    return {CreatedAtCell(obj)};
  }
  std::vector<json> cells;
  for (const PrinterColumn& c : info.printer_columns) {
    cells.push_back(c.name == "Age" ? json(Since(created, now)) : json(nullptr));
  }
  return cells;
}

// Go's fmt %v for a JSON number, as jsonpath's text output prints it.
std::string NumberText(const json& v) {
  if (v.is_number_integer()) return v.dump();
  double d = v.get<double>();
  if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 1e21) {
    return std::to_string(static_cast<std::int64_t>(d));
  }
  return v.dump();
}

// apiextensions' tableconvertor: cellForJSONValue, and jsonpath text for string columns.
json CustomCell(const PrinterColumn& col, const json& obj, Clock::time_point now) {
  const json* v = EvaluateJsonPath(obj, col.json_path);
  if (v == nullptr || v->is_null()) return nullptr;
  if (col.type == "string") {
    if (v->is_string()) return *v;
    if (v->is_number()) return NumberText(*v);
    if (v->is_boolean()) return v->get<bool>() ? "true" : "false";
    return v->dump(-1, ' ', false, json::error_handler_t::replace);
  }
  if (col.type == "integer") return v->is_number_integer() ? *v : json(nullptr);
  if (col.type == "number") return v->is_number() ? *v : json(nullptr);
  if (col.type == "boolean") return v->is_boolean() ? *v : json(nullptr);
  if (col.type == "date") {
    if (!ParseTime(*v)) return nullptr;
    return Since(*v, now);
  }
  return nullptr;
}

json ColumnDefinition(const PrinterColumn& c) {
  return {{"name", c.name},
          {"type", c.type},
          {"format", c.format},
          {"description", c.description},
          {"priority", c.priority}};
}

bool ListsNameColumn(const ResourceInfo& info) {
  return std::any_of(info.printer_columns.begin(), info.printer_columns.end(),
                     [](const PrinterColumn& c) { return c.format == "name"; });
}

json BuildTable(const ResourceInfo& info, const std::vector<const json*>& objects,
                std::string_view resource_version, std::string_view continue_token,
                IncludeObject include, Clock::time_point now) {
  const bool implied_name = !ListsNameColumn(info);
  json columns = json::array();
  if (implied_name) {
    PrinterColumn name;
    name.name = "Name";
    name.type = "string";
    name.format = "name";
    name.description =
        "Name must be unique within a namespace. Is required when creating resources, although "
        "some resources may allow a client to request the generation of an appropriate name "
        "automatically. Name is primarily intended for creation idempotence and configuration "
        "definition. Cannot be updated. More info: "
        "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";
    columns.push_back(ColumnDefinition(name));
  }
  for (const PrinterColumn& c : info.printer_columns) columns.push_back(ColumnDefinition(c));
  json rows = json::array();
  for (const json* obj : objects) {
    if (obj == nullptr) continue;
    json cells = json::array();
    if (implied_name) cells.push_back(Str(Path(*obj, {"metadata", "name"})));
    if (info.builtin) {
      for (json& c : BuiltinCells(info, *obj, now)) cells.push_back(std::move(c));
    } else {
      for (const PrinterColumn& c : info.printer_columns) {
        cells.push_back(CustomCell(c, *obj, now));
      }
    }
    json row = {{"cells", std::move(cells)}};
    if (include == IncludeObject::kMetadata) {
      row["object"] = {
          {"kind", "PartialObjectMetadata"},
          {"apiVersion", "meta.k8s.io/v1"},
          {"metadata", Get(*obj, "metadata").is_object() ? Get(*obj, "metadata") : json::object()}};
    } else if (include == IncludeObject::kObject) {
      row["object"] = *obj;
    }
    rows.push_back(std::move(row));
  }
  json metadata = {{"resourceVersion", resource_version}};
  if (!continue_token.empty()) metadata["continue"] = continue_token;
  return {{"kind", "Table"},
          {"apiVersion", "meta.k8s.io/v1"},
          {"metadata", std::move(metadata)},
          {"columnDefinitions", std::move(columns)},
          {"rows", std::move(rows)}};
}

// One step of the JSONPath subset; returns nullptr when it does not resolve.
const json* Step(const json* cur, std::string_view& path) {
  if (path.front() == '.') {
    path.remove_prefix(1);
    std::size_t end = path.find_first_of(".[");
    std::string key(path.substr(0, end));
    path.remove_prefix(end == std::string_view::npos ? path.size() : end);
    if (key.empty()) return cur;
    if (!cur->is_object()) return nullptr;
    auto it = cur->find(key);
    return it == cur->end() ? nullptr : &*it;
  }
  // '[' ... ']'
  std::size_t close = path.find(']');
  if (close == std::string_view::npos) return nullptr;
  std::string_view inner = path.substr(1, close - 1);
  path.remove_prefix(close + 1);
  if (inner.size() >= 2 && (inner.front() == '\'' || inner.front() == '"') &&
      inner.back() == inner.front()) {
    if (!cur->is_object()) return nullptr;
    auto it = cur->find(std::string(inner.substr(1, inner.size() - 2)));
    return it == cur->end() ? nullptr : &*it;
  }
  if (!cur->is_array()) return nullptr;
  if (inner == "*") return cur->empty() ? nullptr : &(*cur)[0];
  if (inner.starts_with("?(@") && inner.ends_with(")")) {
    std::string_view cond = inner.substr(3, inner.size() - 4);  // ".type==\"Ready\""
    std::size_t eq = cond.find("==");
    if (eq == std::string_view::npos) return nullptr;
    std::string sub(cond.substr(0, eq));
    std::string_view want = cond.substr(eq + 2);
    while (!want.empty() && want.front() == ' ') want.remove_prefix(1);
    while (!sub.empty() && sub.back() == ' ') sub.pop_back();
    json expected;
    if (want.size() >= 2 && (want.front() == '"' || want.front() == '\'') &&
        want.back() == want.front()) {
      expected = std::string(want.substr(1, want.size() - 2));
    } else {
      expected = json::parse(want, nullptr, false);
      if (expected.is_discarded()) return nullptr;
    }
    for (const json& element : *cur) {
      const json* v = EvaluateJsonPath(element, sub);
      if (v != nullptr && *v == expected) return &element;
    }
    return nullptr;
  }
  long index = 0;
  bool negative = !inner.empty() && inner.front() == '-';
  std::string_view digits = negative ? inner.substr(1) : inner;
  if (digits.empty()) return nullptr;
  for (char c : digits) {
    if (c < '0' || c > '9' || index > 1'000'000) return nullptr;
    index = index * 10 + (c - '0');
  }
  long size = static_cast<long>(cur->size());
  if (negative) index = size - index;
  if (index < 0 || index >= size) return nullptr;
  return &(*cur)[static_cast<std::size_t>(index)];
}

}  // namespace

Result<IncludeObject> ParseIncludeObject(std::string_view value) {
  if (value.empty() || value == "Metadata") return IncludeObject::kMetadata;
  if (value == "None") return IncludeObject::kNone;
  if (value == "Object") return IncludeObject::kObject;
  return BadRequestError("includeObject: Unsupported value: \"" + std::string(value) +
                         "\": supported values: \"Metadata\", \"None\", \"Object\"");
}

json ToTable(const ResourceInfo& info, const std::vector<const json*>& objects,
             std::string_view resource_version, std::string_view continue_token,
             IncludeObject include, Clock::time_point now) {
  try {
    return BuildTable(info, objects, resource_version, continue_token, include, now);
  } catch (const json::exception&) {
    // Unreachable with the guarded accessors above; keep the no-throw contract regardless.
    return {{"kind", "Table"},
            {"apiVersion", "meta.k8s.io/v1"},
            {"metadata", json::object()},
            {"columnDefinitions", json::array()},
            {"rows", json::array()}};
  }
}

std::string LabelSelectorText(const json& selector) {
  std::vector<std::pair<std::string, std::string>> requirements;
  if (Get(selector, "matchLabels").is_object()) {
    for (const auto& [k, v] : Get(selector, "matchLabels").items()) {
      requirements.emplace_back(k, k + "=" + Str(v));
    }
  }
  for (const json& e : Arr(Get(selector, "matchExpressions"))) {
    const std::string key = Str(Get(e, "key"));
    const std::string op = Str(Get(e, "operator"));
    std::vector<std::string> values;
    for (const json& v : Arr(Get(e, "values"))) values.push_back(Str(v));
    std::sort(values.begin(), values.end());
    if (op == "In") {
      requirements.emplace_back(key, key + " in (" + Join(values, ",") + ")");
    } else if (op == "NotIn") {
      requirements.emplace_back(key, key + " notin (" + Join(values, ",") + ")");
    } else if (op == "Exists") {
      requirements.emplace_back(key, key);
    } else if (op == "DoesNotExist") {
      requirements.emplace_back(key, "!" + key);
    }
  }
  std::stable_sort(requirements.begin(), requirements.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> parts;
  for (const auto& [key, text] : requirements) parts.push_back(text);
  return Join(parts, ",");
}

std::string HumanDuration(std::chrono::nanoseconds d) {
  using std::to_string;
  const std::int64_t seconds = std::chrono::duration_cast<std::chrono::seconds>(d).count();
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < 60 * 2) return to_string(seconds) + "s";
  const std::int64_t minutes = seconds / 60;
  if (minutes < 10) {
    const std::int64_t s = seconds % 60;
    return s == 0 ? to_string(minutes) + "m" : to_string(minutes) + "m" + to_string(s) + "s";
  }
  if (minutes < 60 * 3) return to_string(minutes) + "m";
  const std::int64_t hours = minutes / 60;
  if (hours < 8) {
    const std::int64_t m = minutes % 60;
    return m == 0 ? to_string(hours) + "h" : to_string(hours) + "h" + to_string(m) + "m";
  }
  if (hours < 48) return to_string(hours) + "h";
  if (hours < 24 * 8) {
    const std::int64_t h = hours % 24;
    return h == 0 ? to_string(hours / 24) + "d" : to_string(hours / 24) + "d" + to_string(h) + "h";
  }
  if (hours < 24 * 365 * 2) return to_string(hours / 24) + "d";
  if (hours < 24 * 365 * 8) {
    const std::int64_t dy = (hours / 24) % 365;
    return dy == 0 ? to_string(hours / 24 / 365) + "y"
                   : to_string(hours / 24 / 365) + "y" + to_string(dy) + "d";
  }
  return to_string(hours / 24 / 365) + "y";
}

const json* EvaluateJsonPath(const json& object, std::string_view path) {
  if (path.starts_with("{") && path.ends_with("}")) path = path.substr(1, path.size() - 2);
  if (path.empty() || (path.front() != '.' && path.front() != '[')) return nullptr;
  const json* cur = &object;
  while (!path.empty() && cur != nullptr) {
    if (path.front() != '.' && path.front() != '[') return nullptr;
    cur = Step(cur, path);
  }
  return cur;
}

}  // namespace slicewright::apiserver

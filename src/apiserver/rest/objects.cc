#include "apiserver/rest/objects.h"

#include <algorithm>
#include <set>
#include <span>
#include <string>
#include <utility>

#include "slicewright/labels/validation.h"
#include "slicewright/net/ip.h"

#include "apiserver/rest/service_ips.h"

namespace slicewright::apiserver {
namespace {

constexpr std::size_t kTotalAnnotationSizeLimit = 256 * 1024;

std::string Join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) {
      out += separator;
    }
    out += parts[i];
  }
  return out;
}

std::string Indexed(std::string_view field, std::size_t index) {
  return std::string(field) + "[" + std::to_string(index) + "]";
}

// A DNS-1035 label: what Service names must be.
std::vector<std::string> IsDNS1035Label(std::string_view value) {
  std::vector<std::string> errors;
  if (value.size() > labels::kDNS1123LabelMaxLength) {
    errors.push_back(labels::MaxLenError(labels::kDNS1123LabelMaxLength));
  }
  bool ok = !value.empty() && value.front() >= 'a' && value.front() <= 'z';
  for (std::size_t i = 0; ok && i < value.size(); ++i) {
    const char c = value[i];
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    ok = alnum || (c == '-' && i + 1 < value.size());
  }
  if (!ok) {
    errors.push_back(labels::RegexError(
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with "
        "an alphabetic character, and end with an alphanumeric character",
        "[a-z]([-a-z0-9]*[a-z0-9])?", {"my-name", "abc-123"}));
  }
  return errors;
}

// path.ValidatePathSegmentName: what Event names must be.
std::vector<std::string> IsPathSegmentName(std::string_view value, bool prefix) {
  std::vector<std::string> errors;
  if (!prefix && (value == "." || value == "..")) {
    errors.push_back("may not be '" + std::string(value) + "'");
  }
  for (std::string_view bad : {"/", "%"}) {
    if (value.find(bad) != std::string_view::npos) {
      errors.push_back("may not contain '" + std::string(bad) + "'");
    }
  }
  return errors;
}

std::vector<std::string> ValidateName(const ResourceInfo& info, std::string_view name,
                                      bool prefix) {
  if (info.group.empty() && info.resource == "namespaces") {
    if (prefix && !name.empty() && name.back() == '-') {
      name.remove_suffix(1);
    }
    return labels::IsDNS1123Label(name);
  }
  if (info.group.empty() && info.resource == "services") {
    if (prefix && !name.empty() && name.back() == '-') {
      name.remove_suffix(1);
    }
    return IsDNS1035Label(name);
  }
  // RBAC names only need to be a path segment, so "system:controller:…" roles are valid.
  if (info.resource == "events" || info.group == "rbac.authorization.k8s.io") {
    return IsPathSegmentName(name, prefix);
  }
  return labels::NameIsDNSSubdomain(name, prefix);
}

void ValidateStringMap(const Json& metadata, std::string_view key, bool values_are_labels,
                       FieldErrors& errors) {
  auto it = metadata.find(key);
  if (it == metadata.end() || it->is_null()) {
    return;
  }
  const std::string field = "metadata." + std::string(key);
  if (!it->is_object()) {
    errors.Invalid(field, *it, "must be a map of strings");
    return;
  }
  std::size_t total = 0;
  for (const auto& [k, v] : it->items()) {
    for (const std::string& message : labels::IsQualifiedName(k)) {
      errors.Invalid(field, Json(k), message);
    }
    if (!v.is_string()) {
      errors.Invalid(field + "[" + k + "]", v, "must be a string");
      continue;
    }
    const auto& value = v.get_ref<const std::string&>();
    total += k.size() + value.size();
    if (values_are_labels) {
      for (const std::string& message : labels::IsValidLabelValue(value)) {
        errors.Invalid(field, v, message);
      }
    }
  }
  if (!values_are_labels && total > kTotalAnnotationSizeLimit) {
    errors.TooLong(field, kTotalAnnotationSizeLimit);
  }
}

bool IsCore(const ResourceInfo& info, std::string_view resource) {
  return info.group.empty() && info.resource == resource;
}

// --- Service ---------------------------------------------------------------------------------

void DefaultService(Json& object) {
  Json* spec = EnsureObject(object, "spec");
  if (spec == nullptr) {
    return;
  }
  const std::string type = StringOr(*spec, "type", "ClusterIP");
  (*spec)["type"] = type;
  if (!spec->contains("sessionAffinity")) {
    (*spec)["sessionAffinity"] = "None";
  }
  const std::string affinity = StringOr(*spec, "sessionAffinity");
  if (affinity == "None") {
    spec->erase("sessionAffinityConfig");
  } else if (affinity == "ClientIP") {
    const Json* config = ObjectField(*spec, "sessionAffinityConfig");
    const Json* client_ip = config != nullptr ? ObjectField(*config, "clientIP") : nullptr;
    if (client_ip == nullptr || !client_ip->contains("timeoutSeconds")) {
      (*spec)["sessionAffinityConfig"] = {{"clientIP", {{"timeoutSeconds", 10800}}}};
    }
  }
  if (type == "LoadBalancer" && !spec->contains("allocateLoadBalancerNodePorts")) {
    (*spec)["allocateLoadBalancerNodePorts"] = true;
  }
  if (type == "ExternalName") {
    // kube-apiserver drops it when it reads an ExternalName Service (it once defaulted it).
    spec->erase("internalTrafficPolicy");
  } else {
    if (!spec->contains("internalTrafficPolicy")) {
      (*spec)["internalTrafficPolicy"] = "Cluster";
    }
    if ((type == "NodePort" || type == "LoadBalancer") &&
        !spec->contains("externalTrafficPolicy")) {
      (*spec)["externalTrafficPolicy"] = "Cluster";
    }
  }
  if (Json* ports = ArrayField(*spec, "ports")) {
    for (Json& port : *ports) {
      if (!port.is_object()) {
        continue;
      }
      if (!port.contains("protocol")) {
        port["protocol"] = "TCP";
      }
      // SetDefaults_Service: an unset targetPort is the port itself. Unset is the zero
      // IntOrString in every spelling: absent, null, 0 (what client-go sends for a targetPort
      // left empty, as JSON and as protobuf) or "". On create, update and patch alike.
      const auto target = port.find("targetPort");
      const bool unset = target == port.end() || target->is_null() ||
                         (target->is_number_integer() && target->get<std::int64_t>() == 0) ||
                         (target->is_string() && target->get_ref<const std::string&>().empty());
      if (unset && port.contains("port") && port["port"].is_number_integer()) {
        port["targetPort"] = port["port"];
      }
    }
  }
  if (!EnsureObject(object, "status")) {
    return;
  }
  Json& status = object["status"];
  if (!status.contains("loadBalancer")) {
    status["loadBalancer"] = Json::object();
  }
}

// validation.IsValidPortName: an IANA service name.
std::vector<std::string> PortNameErrors(std::string_view name) {
  std::vector<std::string> errors;
  if (name.size() > 15) {
    errors.push_back(labels::MaxLenError(15));
  }
  bool charset = !name.empty();
  bool letter = false;
  for (char c : name) {
    charset = charset && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-');
    letter = letter || (c >= 'a' && c <= 'z');
  }
  if (!charset) {
    errors.push_back("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)");
  }
  if (!letter) {
    errors.push_back("must contain at least one letter (a-z)");
  }
  if (name.find("--") != std::string_view::npos) {
    errors.push_back("must not contain consecutive hyphens");
  }
  if (!name.empty() && (name.front() == '-' || name.back() == '-')) {
    errors.push_back("must not begin or end with a hyphen");
  }
  return errors;
}

void ValidateService(const Json& object, const Json* old, FieldErrors& errors) {
  const Json* spec = ObjectField(object, "spec");
  if (spec == nullptr) {
    errors.Required("spec");
    return;
  }
  const std::string type = StringOr(*spec, "type", "ClusterIP");
  static const std::vector<std::string_view> kTypes = {"ClusterIP", "ExternalName", "LoadBalancer",
                                                       "NodePort"};
  if (std::find(kTypes.begin(), kTypes.end(), type) == kTypes.end()) {
    errors.NotSupported("spec.type", Json(type), kTypes);
  }
  const std::string cluster_ip = StringOr(*spec, "clusterIP");
  const bool headless = cluster_ip == "None";
  const Json* ports = ArrayField(*spec, "ports");
  if (type == "ExternalName") {
    for (const char* field : {"clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"}) {
      const Json* value = spec->contains(field) ? &(*spec)[field] : nullptr;
      if (value != nullptr && !value->is_null() &&
          !(value->is_string() && value->get_ref<const std::string&>().empty()) &&
          !(value->is_array() && value->empty())) {
        errors.Forbidden("spec." + std::string(field), "may not be set for ExternalName services");
      }
    }
    std::string cname = StringOr(*spec, "externalName");
    if (!cname.empty() && cname.back() == '.') {
      cname.pop_back();  // a trailing dot marks the name fully qualified
    }
    if (cname.empty()) {
      errors.Required("spec.externalName");
    } else {
      for (const std::string& message : labels::IsDNS1123Subdomain(cname)) {
        errors.Invalid("spec.externalName", Json(cname), message);
      }
    }
  } else if (!headless && (ports == nullptr || ports->empty())) {
    errors.Required("spec.ports");
  }
  if (headless && (type == "LoadBalancer" || type == "NodePort")) {
    errors.Invalid("spec.clusterIPs[0]", Json("None"),
                   "may not be set to 'None' for " + type + " services");
  }
  if (spec->contains("ports") && !(*spec)["ports"].is_null() && ports == nullptr) {
    errors.Invalid("spec.ports", (*spec)["ports"], "must be a list");
  }
  if (ports != nullptr) {
    std::set<std::string> names;
    std::set<std::pair<std::int64_t, std::string>> port_protocols;
    for (std::size_t i = 0; i < ports->size(); ++i) {
      const Json& port = (*ports)[i];
      const std::string field = Indexed("spec.ports", i);
      if (!port.is_object()) {
        errors.Invalid(field, port, "must be an object");
        continue;
      }
      const std::string name = StringOr(port, "name");
      if (ports->size() > 1 && name.empty()) {
        errors.Required(field + ".name");
      }
      if (!name.empty()) {
        for (const std::string& message : labels::IsDNS1123Label(name)) {
          errors.Invalid(field + ".name", Json(name), message);
        }
        if (!names.insert(name).second) {
          errors.Duplicate(field + ".name", Json(name));
        }
      }
      const auto number = IntField(port, "port");
      if (!number) {
        errors.Required(field + ".port");
      } else if (*number < 1 || *number > 65535) {
        errors.Invalid(field + ".port", port["port"], "must be between 1 and 65535, inclusive");
      }
      const std::string protocol = StringOr(port, "protocol", "TCP");
      static const std::vector<std::string_view> kProtocols = {"SCTP", "TCP", "UDP"};
      if (std::find(kProtocols.begin(), kProtocols.end(), protocol) == kProtocols.end()) {
        errors.NotSupported(field + ".protocol", Json(protocol), kProtocols);
      }
      if (number && !port_protocols.insert({*number, protocol}).second) {
        errors.Duplicate(field, Json::object({{"port", *number}, {"protocol", protocol}}));
      }
      if (const auto target = IntField(port, "targetPort")) {
        if (*target < 1 || *target > 65535) {
          errors.Invalid(field + ".targetPort", port["targetPort"],
                         "must be between 1 and 65535, inclusive");
        }
      } else if (const std::string* named = StringField(port, "targetPort")) {
        for (const std::string& message : PortNameErrors(*named)) {
          errors.Invalid(field + ".targetPort", Json(*named), message);
        }
      }
      if (type == "ClusterIP" && IntField(port, "nodePort").value_or(0) != 0) {
        errors.Forbidden(field + ".nodePort", "may not be used when `type` is 'ClusterIP'");
      }
    }
  }
  if (const Json* selector = ObjectField(*spec, "selector")) {
    for (const auto& [key, value] : selector->items()) {
      for (const std::string& message : labels::IsQualifiedName(key)) {
        errors.Invalid("spec.selector", Json(key), message);
      }
      if (!value.is_string()) {
        errors.Invalid("spec.selector", value, "must be a string");
      } else {
        for (const std::string& message :
             labels::IsValidLabelValue(value.get_ref<const std::string&>())) {
          errors.Invalid("spec.selector", value, message);
        }
      }
    }
  }
  const std::string affinity = StringOr(*spec, "sessionAffinity", "None");
  if (affinity != "None" && affinity != "ClientIP") {
    errors.NotSupported("spec.sessionAffinity", Json(affinity), {"ClientIP", "None"});
  }
  const std::string external_policy = StringOr(*spec, "externalTrafficPolicy");
  const bool externally_accessible =
      type == "LoadBalancer" || type == "NodePort" ||
      (type == "ClusterIP" && ArrayField(*spec, "externalIPs") != nullptr &&
       !(*spec)["externalIPs"].empty());
  if (!external_policy.empty() && !externally_accessible) {
    errors.Invalid("spec.externalTrafficPolicy", Json(external_policy),
                   "may only be set for externally-accessible services");
  }
  ValidateClusterIpFields(object, errors);
  if (old != nullptr) {
    ValidateIpUpgradeDowngrade(object, *old, errors);
  }
}

// --- Pod -------------------------------------------------------------------------------------

void DefaultContainers(Json* containers) {
  if (containers == nullptr) {
    return;
  }
  for (Json& container : *containers) {
    if (!container.is_object()) {
      continue;
    }
    if (!container.contains("terminationMessagePath")) {
      container["terminationMessagePath"] = "/dev/termination-log";
    }
    if (!container.contains("terminationMessagePolicy")) {
      container["terminationMessagePolicy"] = "File";
    }
    if (!container.contains("imagePullPolicy")) {
      const std::string image = StringOr(container, "image");
      const std::size_t slash = image.rfind('/');
      const std::string last = slash == std::string::npos ? image : image.substr(slash + 1);
      const bool tagged =
          last.find(':') != std::string::npos || image.find('@') != std::string::npos;
      const bool latest = last.size() >= 7 && last.ends_with(":latest");
      container["imagePullPolicy"] = (!tagged || latest) ? "Always" : "IfNotPresent";
    }
    if (!container.contains("resources")) {
      container["resources"] = Json::object();
    }
    if (Json* ports = ArrayField(container, "ports")) {
      for (Json& port : *ports) {
        if (port.is_object() && !port.contains("protocol")) {
          port["protocol"] = "TCP";
        }
      }
    }
  }
}

// Sets each (key, value) of `defaults` that `object` lacks.
void SetMissing(Json& object, std::span<const std::pair<const char*, Json>> defaults) {
  for (const auto& [key, value] : defaults) {
    if (!object.contains(key)) {
      object[key] = value;
    }
  }
}

// PodSpec defaults, for Pods and for the workloads' pod templates alike.
void DefaultPodSpec(Json* spec) {
  if (spec == nullptr) {
    return;
  }
  const std::pair<const char*, Json> defaults[] = {
      {"restartPolicy", "Always"},
      {"terminationGracePeriodSeconds", 30},
      {"dnsPolicy", "ClusterFirst"},
      {"schedulerName", "default-scheduler"},
      {"securityContext", Json::object()},
      {"enableServiceLinks", true},
      {"priority", 0},
      {"preemptionPolicy", "PreemptLowerPriority"},
  };
  SetMissing(*spec, defaults);
  DefaultContainers(ArrayField(*spec, "containers"));
  DefaultContainers(ArrayField(*spec, "initContainers"));
}

void DefaultPod(Json& object) {
  Json* spec = EnsureObject(object, "spec");
  if (spec == nullptr) {
    return;
  }
  DefaultPodSpec(spec);
  Json* status = EnsureObject(object, "status");
  if (status != nullptr && !status->contains("phase")) {
    (*status)["phase"] = "Pending";
    (*status)["qosClass"] = "BestEffort";
  }
}

void ValidatePod(const Json& object, const Json* old, FieldErrors& errors) {
  const Json* spec = ObjectField(object, "spec");
  if (spec == nullptr) {
    errors.Required("spec");
    return;
  }
  const Json* containers = ArrayField(*spec, "containers");
  if (containers == nullptr || containers->empty()) {
    errors.Required("spec.containers");
  } else {
    std::set<std::string> names;
    for (std::size_t i = 0; i < containers->size(); ++i) {
      const Json& container = (*containers)[i];
      const std::string field = Indexed("spec.containers", i);
      const std::string name = StringOr(container, "name");
      if (name.empty()) {
        errors.Required(field + ".name");
      } else {
        for (const std::string& message : labels::IsDNS1123Label(name)) {
          errors.Invalid(field + ".name", Json(name), message);
        }
        if (!names.insert(name).second) {
          errors.Duplicate(field + ".name", Json(name));
        }
      }
      if (StringOr(container, "image").empty() && old == nullptr) {
        errors.Required(field + ".image");
      }
      if (const Json* ports = ArrayField(container, "ports")) {
        for (std::size_t p = 0; p < ports->size(); ++p) {
          const auto number = IntField((*ports)[p], "containerPort");
          const std::string port_field = Indexed(field + ".ports", p) + ".containerPort";
          if (!number) {
            errors.Required(port_field);
          } else if (*number < 1 || *number > 65535) {
            errors.Invalid(port_field, (*ports)[p]["containerPort"],
                           "must be between 1 and 65535, inclusive");
          }
        }
      }
    }
  }
  if (old != nullptr) {
    // Pod specs are immutable but for the fields upstream lists; images are the one kubectl users
    // change, and nodeName may be set once (binding).
    const Json* old_spec = ObjectField(*old, "spec");
    if (old_spec != nullptr) {
      Json a = *old_spec;
      Json b = *spec;
      for (Json* s : {&a, &b}) {
        for (const char* list : {"containers", "initContainers"}) {
          if (Json* items = ArrayField(*s, list)) {
            for (Json& c : *items) {
              if (c.is_object()) {
                c.erase("image");
              }
            }
          }
        }
        s->erase("activeDeadlineSeconds");
        s->erase("tolerations");
        s->erase("terminationGracePeriodSeconds");
        s->erase("schedulingGates");
      }
      if (StringOr(a, "nodeName").empty()) {
        a.erase("nodeName");
        b.erase("nodeName");
      }
      if (a != b) {
        errors.Forbidden("spec",
                         "pod updates may not change fields other than `spec.containers[*].image`,"
                         "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,"
                         "`spec.tolerations` (only additions to existing tolerations),"
                         "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was "
                         "previously negative)");
      }
    }
  }
}

// --- Deployment, PodDisruptionBudget, RBAC (the deploy/ manifests' kinds) -------------------

// A workload's spec.template gets the PodSpec defaults its pods get.
void DefaultPodTemplate(Json& spec) {
  if (Json* tmpl = EnsureObject(spec, "template")) {
    DefaultPodSpec(EnsureObject(*tmpl, "spec"));
  }
}

// apps/v1 SetDefaults_Deployment and the pod template's PodSpec defaults.
void DefaultDeployment(Json& object) {
  Json* spec = EnsureObject(object, "spec");
  if (spec == nullptr) {
    return;
  }
  const std::pair<const char*, Json> defaults[] = {
      {"replicas", 1},
      {"revisionHistoryLimit", 10},
      {"progressDeadlineSeconds", 600},
  };
  SetMissing(*spec, defaults);
  Json* strategy = EnsureObject(*spec, "strategy");
  if (strategy != nullptr) {
    if (!strategy->contains("type")) {
      (*strategy)["type"] = "RollingUpdate";
    }
    if (StringOr(*strategy, "type") == "RollingUpdate") {
      Json* rolling = EnsureObject(*strategy, "rollingUpdate");
      if (rolling != nullptr) {
        for (const char* key : {"maxUnavailable", "maxSurge"}) {
          if (!rolling->contains(key)) {
            (*rolling)[key] = "25%";
          }
        }
      }
    }
  }
  DefaultPodTemplate(*spec);
}

// apps/v1 SetDefaults_ReplicaSet and the template's PodSpec defaults.
void DefaultReplicaSet(Json& object) {
  Json* spec = EnsureObject(object, "spec");
  if (spec == nullptr) {
    return;
  }
  if (!spec->contains("replicas")) {
    (*spec)["replicas"] = 1;
  }
  DefaultPodTemplate(*spec);
}

// apps/v1 SetDefaults_StatefulSet (v1.32, with StatefulSetAutoDeletePVC on) and the template's
// PodSpec defaults.
void DefaultStatefulSet(Json& object) {
  Json* spec = EnsureObject(object, "spec");
  if (spec == nullptr) {
    return;
  }
  const std::pair<const char*, Json> defaults[] = {
      {"replicas", 1},
      {"revisionHistoryLimit", 10},
      {"podManagementPolicy", "OrderedReady"},
      {"persistentVolumeClaimRetentionPolicy",
       Json{{"whenDeleted", "Retain"}, {"whenScaled", "Retain"}}},
  };
  SetMissing(*spec, defaults);
  if (Json* strategy = EnsureObject(*spec, "updateStrategy")) {
    if (!strategy->contains("type")) {
      (*strategy)["type"] = "RollingUpdate";
    }
    if (StringOr(*strategy, "type") == "RollingUpdate") {
      if (Json* rolling = EnsureObject(*strategy, "rollingUpdate");
          rolling != nullptr && !rolling->contains("partition")) {
        (*rolling)["partition"] = 0;
      }
    }
  }
  DefaultPodTemplate(*spec);
}

// Whether a metav1.LabelSelector selects `labels` (matchLabels and the four operators).
bool SelectorMatches(const Json& selector, const Json* labels) {
  const auto value_of = [labels](const std::string& key) -> const std::string* {
    return labels == nullptr ? nullptr : StringField(*labels, key);
  };
  if (const Json* match_labels = ObjectField(selector, "matchLabels")) {
    for (const auto& [key, want] : match_labels->items()) {
      const std::string* have = value_of(key);
      if (have == nullptr || !want.is_string() || *have != want.get_ref<const std::string&>()) {
        return false;
      }
    }
  }
  if (const Json* expressions = ArrayField(selector, "matchExpressions")) {
    for (const Json& e : *expressions) {
      const std::string* have = value_of(StringOr(e, "key"));
      const std::string op = StringOr(e, "operator");
      bool listed = false;
      if (const Json* values = ArrayField(e, "values"); values != nullptr && have != nullptr) {
        listed = std::find(values->begin(), values->end(), Json(*have)) != values->end();
      }
      if ((op == "In" && !listed) || (op == "NotIn" && listed) ||
          (op == "Exists" && have == nullptr) || (op == "DoesNotExist" && have != nullptr)) {
        return false;
      }
    }
  }
  return true;
}

bool SelectorEmpty(const Json& selector) {
  const Json* match_labels = ObjectField(selector, "matchLabels");
  const Json* expressions = ArrayField(selector, "matchExpressions");
  return (match_labels == nullptr || match_labels->empty()) &&
         (expressions == nullptr || expressions->empty());
}

// apps/v1 ValidateDeploymentSpec, ValidateReplicaSetSpec and ValidateStatefulSetSpec, the parts
// a manifest gets wrong: replicas, the selector and its match with the template's labels, and
// the template's pod spec (validated as a Pod's). `selector_kind` is the word kube's empty
// selector message ends with: "deployment" for Deployments and (upstream's wording) ReplicaSets,
// "statefulset" for StatefulSets.
void ValidateWorkload(const Json& object, std::string_view selector_kind, FieldErrors& errors) {
  const Json* spec = ObjectField(object, "spec");
  if (spec == nullptr) {
    errors.Required("spec");
    return;
  }
  if (const auto replicas = IntField(*spec, "replicas"); replicas && *replicas < 0) {
    errors.Invalid("spec.replicas", (*spec)["replicas"], "must be greater than or equal to 0");
  }
  const Json* tmpl = ObjectField(*spec, "template");
  const Json* tmpl_meta = tmpl == nullptr ? nullptr : ObjectField(*tmpl, "metadata");
  const Json* tmpl_labels = tmpl_meta == nullptr ? nullptr : ObjectField(*tmpl_meta, "labels");
  const Json* selector = ObjectField(*spec, "selector");
  if (selector == nullptr) {
    errors.Required("spec.selector");
  } else if (SelectorEmpty(*selector)) {
    errors.Invalid("spec.selector", *selector,
                   "empty selector is invalid for " + std::string(selector_kind));
  } else if (!SelectorMatches(*selector, tmpl_labels)) {
    errors.Invalid("spec.template.metadata.labels",
                   tmpl_labels == nullptr ? Json::object() : *tmpl_labels,
                   "`selector` does not match template `labels`");
  }
  if (tmpl == nullptr) {
    errors.Required("spec.template");
    return;
  }
  const Json* pod_spec = ObjectField(*tmpl, "spec");
  const std::string restart = pod_spec == nullptr ? "" : StringOr(*pod_spec, "restartPolicy");
  if (!restart.empty() && restart != "Always") {
    errors.NotSupported("spec.template.spec.restartPolicy", Json(restart), {"Always"});
  }
  // The pod validator reports "spec.…"; under a template that is "spec.template.spec.…".
  FieldErrors pod_errors;
  Json pod = Json::object();
  if (pod_spec != nullptr) {
    pod["spec"] = *pod_spec;
  }
  ValidatePod(pod, nullptr, pod_errors);
  errors.AddPrefixed("spec.template.", pod_errors);
}

// policy/v1: minAvailable and maxUnavailable are each a count >= 0 or a percentage, never both.
void ValidatePodDisruptionBudget(const Json& object, FieldErrors& errors) {
  const Json* spec = ObjectField(object, "spec");
  if (spec == nullptr) {
    return;
  }
  for (const char* key : {"minAvailable", "maxUnavailable"}) {
    const std::string field = std::string("spec.") + key;
    const Json* value = spec->contains(key) ? &(*spec)[key] : nullptr;
    if (value == nullptr || value->is_null()) {
      continue;
    }
    if (value->is_number_integer()) {
      if (value->get<std::int64_t>() < 0) {
        errors.Invalid(field, *value, "must be greater than or equal to 0");
      }
    } else if (value->is_string()) {
      const std::string& text = value->get_ref<const std::string&>();
      bool percent = text.size() >= 2 && text.back() == '%';
      std::int64_t number = 0;
      for (std::size_t i = 0; percent && i + 1 < text.size(); ++i) {
        percent = text[i] >= '0' && text[i] <= '9';
        number = std::min<std::int64_t>(number * 10 + (text[i] - '0'), 1000);
      }
      if (!percent) {
        errors.Invalid(field, *value,
                       "a valid percent string must be a numeric string followed by an ending "
                       "'%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')");
      } else if (number > 100) {
        errors.Invalid(field, *value, "must not be greater than 100%");
      }
    } else {
      errors.Invalid(field, *value, "must be an integer or a percentage");
    }
  }
  const auto set = [spec](const char* key) {
    return spec->contains(key) && !(*spec)[key].is_null();
  };
  if (set("minAvailable") && set("maxUnavailable")) {
    errors.Invalid("spec", *spec, "minAvailable and maxUnavailable cannot be both set");
  }
}

// rbac/v1 ValidateRole / ValidateClusterRole: every rule names verbs, and a resource rule names
// API groups; a namespaced Role cannot grant non-resource URLs.
void ValidateRules(const Json& object, bool namespaced, FieldErrors& errors) {
  const Json* rules = ArrayField(object, "rules");
  if (rules == nullptr) {
    return;
  }
  for (std::size_t i = 0; i < rules->size(); ++i) {
    const Json& rule = (*rules)[i];
    const std::string field = Indexed("rules", i);
    const Json* verbs = ArrayField(rule, "verbs");
    if (verbs == nullptr || verbs->empty()) {
      errors.Required(field + ".verbs", "verbs must contain at least one value");
    }
    const Json* urls = ArrayField(rule, "nonResourceURLs");
    const bool has_urls = urls != nullptr && !urls->empty();
    if (has_urls && namespaced) {
      errors.Invalid(field + ".nonResourceURLs", *urls,
                     "namespaced rules cannot apply to non-resource URLs");
    }
    const Json* groups = ArrayField(rule, "apiGroups");
    if (!has_urls && (groups == nullptr || groups->empty())) {
      errors.Required(field + ".apiGroups", "resource rules must supply at least one api group");
    }
  }
}

// rbac/v1 ValidateRoleBinding / ValidateClusterRoleBinding: a complete roleRef that never
// changes, and subjects of the three kinds.
void ValidateBinding(const Json& object, const Json* old, bool namespaced, FieldErrors& errors) {
  const Json* role_ref = ObjectField(object, "roleRef");
  if (role_ref == nullptr) {
    errors.Required("roleRef");
  } else {
    const std::string group = StringOr(*role_ref, "apiGroup");
    if (group != "rbac.authorization.k8s.io") {
      errors.NotSupported("roleRef.apiGroup", Json(group), {"rbac.authorization.k8s.io"});
    }
    const std::string kind = StringOr(*role_ref, "kind");
    if (namespaced && kind != "Role" && kind != "ClusterRole") {
      errors.NotSupported("roleRef.kind", Json(kind), {"ClusterRole", "Role"});
    } else if (!namespaced && kind != "ClusterRole") {
      errors.NotSupported("roleRef.kind", Json(kind), {"ClusterRole"});
    }
    if (StringOr(*role_ref, "name").empty()) {
      errors.Required("roleRef.name");
    }
    if (old != nullptr) {
      const Json* old_ref = ObjectField(*old, "roleRef");
      if (old_ref != nullptr && *old_ref != *role_ref) {
        errors.Invalid("roleRef", *role_ref, "cannot change roleRef");
      }
    }
  }
  const Json* subjects = ArrayField(object, "subjects");
  if (subjects == nullptr) {
    return;
  }
  for (std::size_t i = 0; i < subjects->size(); ++i) {
    const Json& subject = (*subjects)[i];
    const std::string field = Indexed("subjects", i);
    if (StringOr(subject, "name").empty()) {
      errors.Required(field + ".name");
    }
    const std::string kind = StringOr(subject, "kind");
    if (kind == "ServiceAccount") {
      if (!namespaced && StringOr(subject, "namespace").empty()) {
        errors.Required(field + ".namespace");
      }
    } else if (kind != "User" && kind != "Group") {
      errors.NotSupported(field + ".kind", Json(kind), {"ServiceAccount", "User", "Group"});
    }
  }
}

// --- EndpointSlice and Endpoints -------------------------------------------------------------

void ValidateAddress(std::string_view address_type, const Json& address, const std::string& field,
                     FieldErrors& errors) {
  if (!address.is_string()) {
    errors.Invalid(field, address, "must be a string");
    return;
  }
  const auto& text = address.get_ref<const std::string&>();
  if (address_type == "FQDN") {
    for (const std::string& message : labels::IsDNS1123Subdomain(text)) {
      errors.Invalid(field, address, message);
    }
    return;
  }
  const auto ip = net::ParseIpSloppy(text);
  const bool family_ok = ip && ((address_type == "IPv4") == (ip->family == net::IpFamily::kIPv4));
  if (!ip) {
    errors.Invalid(field, address, "must be a valid IP address");
  } else if (!family_ok) {
    errors.Invalid(field, address,
                   address_type == "IPv4" ? "must be an IPv4 address" : "must be an IPv6 address");
  }
}

void ValidateEndpointSlice(const Json& object, const Json* old, FieldErrors& errors) {
  const std::string address_type = StringOr(object, "addressType");
  static const std::vector<std::string_view> kTypes = {"FQDN", "IPv4", "IPv6"};
  if (address_type.empty()) {
    errors.Required("addressType");
  } else if (std::find(kTypes.begin(), kTypes.end(), address_type) == kTypes.end()) {
    errors.NotSupported("addressType", Json(address_type), kTypes);
  }
  if (old != nullptr && StringOr(*old, "addressType") != address_type) {
    errors.Invalid("addressType", Json(address_type), "field is immutable");
  }
  if (const Json* endpoints = ArrayField(object, "endpoints")) {
    if (endpoints->size() > 1000) {
      errors.TooMany("endpoints", endpoints->size(), 1000);
    }
    for (std::size_t i = 0; i < endpoints->size() && i < 1000; ++i) {
      const Json& endpoint = (*endpoints)[i];
      const std::string field = Indexed("endpoints", i);
      const Json* addresses = ArrayField(endpoint, "addresses");
      if (addresses == nullptr || addresses->empty()) {
        errors.Required(field + ".addresses", "must contain at least 1 address");
        continue;
      }
      if (addresses->size() > 100) {
        errors.TooMany(field + ".addresses", addresses->size(), 100);
        continue;
      }
      for (std::size_t a = 0; a < addresses->size(); ++a) {
        ValidateAddress(address_type, (*addresses)[a], Indexed(field + ".addresses", a), errors);
      }
    }
  } else if (object.contains("endpoints") && !object["endpoints"].is_null()) {
    errors.Invalid("endpoints", object["endpoints"], "must be a list");
  }
  if (const Json* ports = ArrayField(object, "ports")) {
    if (ports->size() > 20000) {
      errors.TooMany("ports", ports->size(), 20000);
    }
    std::set<std::string> names;
    for (std::size_t i = 0; i < ports->size() && i < 20000; ++i) {
      const Json& port = (*ports)[i];
      const std::string field = Indexed("ports", i);
      const std::string name = StringOr(port, "name");
      if (!name.empty()) {
        for (const std::string& message : labels::IsDNS1123Label(name)) {
          errors.Invalid(field + ".name", Json(name), message);
        }
      }
      if (!names.insert(name).second) {
        errors.Duplicate(field + ".name", Json(name));
      }
      if (const auto number = IntField(port, "port"); number && (*number < 1 || *number > 65535)) {
        errors.Invalid(field + ".port", port["port"], "must be between 1 and 65535, inclusive");
      }
    }
  }
}

void ValidateEndpoints(const Json& object, FieldErrors& errors) {
  const Json* subsets = ArrayField(object, "subsets");
  if (subsets == nullptr) {
    return;
  }
  for (std::size_t s = 0; s < subsets->size(); ++s) {
    const std::string field = Indexed("subsets", s);
    for (const char* list : {"addresses", "notReadyAddresses"}) {
      const Json* addresses = ArrayField((*subsets)[s], list);
      if (addresses == nullptr) {
        continue;
      }
      for (std::size_t a = 0; a < addresses->size(); ++a) {
        const std::string ip = StringOr((*addresses)[a], "ip");
        if (!net::ParseIpSloppy(ip)) {
          errors.Invalid(Indexed(field + "." + list, a) + ".ip", Json(ip),
                         "must be a valid IP address");
        }
      }
    }
  }
}

// Walks a dotted path ("spec.nodeName", "involvedObject.kind").
const Json* FindPath(const Json& object, std::string_view dotted_path) {
  const Json* at = &object;
  while (!dotted_path.empty()) {
    const std::size_t dot = dotted_path.find('.');
    const std::string_view segment = dotted_path.substr(0, dot);
    if (!at->is_object()) {
      return nullptr;
    }
    auto it = at->find(segment);
    if (it == at->end()) {
      return nullptr;
    }
    at = &*it;
    dotted_path = dot == std::string_view::npos ? std::string_view() : dotted_path.substr(dot + 1);
  }
  return at;
}

}  // namespace

// --- FieldErrors -----------------------------------------------------------------------------

std::string GoValue(const Json& value) {
  if (value.is_string()) {
    return DumpJson(value);  // a JSON string literal reads as Go's %q for ordinary text
  }
  // Any other value as JSON, as apimachinery's field errors render them since 1.33 (1.26 printed
  // a list of strings as Go's %#v, []string{"a"}).
  return DumpJson(value);
}

void FieldErrors::Push(std::string_view reason, std::string_view field, std::string body) {
  errors_.push_back(StatusCause{std::string(reason), std::move(body), std::string(field)});
}

void FieldErrors::Required(std::string_view field, std::string_view detail) {
  std::string body = "Required value";
  if (!detail.empty()) {
    body += ": " + std::string(detail);
  }
  Push("FieldValueRequired", field, std::move(body));
}

void FieldErrors::Invalid(std::string_view field, const Json& value, std::string_view detail) {
  std::string body = "Invalid value: " + GoValue(value);
  if (!detail.empty()) {
    body += ": " + std::string(detail);
  }
  Push("FieldValueInvalid", field, std::move(body));
}

void FieldErrors::Forbidden(std::string_view field, std::string_view detail) {
  Push("FieldValueForbidden", field, "Forbidden: " + std::string(detail));
}

void FieldErrors::NotSupported(std::string_view field, const Json& value,
                               const std::vector<std::string_view>& supported) {
  std::string body = "Unsupported value: " + GoValue(value);
  if (!supported.empty()) {
    body += ": supported values: ";
    for (std::size_t i = 0; i < supported.size(); ++i) {
      body += (i > 0 ? ", \"" : "\"") + std::string(supported[i]) + "\"";
    }
  }
  Push("FieldValueNotSupported", field, std::move(body));
}

void FieldErrors::Duplicate(std::string_view field, const Json& value) {
  Push("FieldValueDuplicate", field, "Duplicate value: " + GoValue(value));
}

void FieldErrors::TooMany(std::string_view field, std::size_t actual, std::size_t max) {
  Push("FieldValueTooMany", field,
       "Too many: " + std::to_string(actual) + ": must have at most " + std::to_string(max) +
           " items");
}

void FieldErrors::TooLong(std::string_view field, std::size_t max_bytes) {
  Push("FieldValueTooLong", field,
       "Too long: must have at most " + std::to_string(max_bytes) + " bytes");
}

void FieldErrors::AddPrefixed(std::string_view prefix, const FieldErrors& other) {
  for (const StatusCause& error : other.errors_) {
    Push(error.reason, std::string(prefix) + error.field, error.message);
  }
}

void FieldErrors::Add(const std::vector<StatusCause>& causes) {
  errors_.insert(errors_.end(), causes.begin(), causes.end());
}

std::vector<std::string> FieldErrors::errors() const {
  std::vector<std::string> rendered;
  rendered.reserve(errors_.size());
  for (const StatusCause& error : errors_) {
    rendered.push_back(error.field + ": " + error.message);
  }
  return rendered;
}

Status FieldErrors::ToStatus(std::string_view kind, std::string_view name) const {
  if (errors_.empty()) {
    return Status::Ok();
  }
  const std::vector<std::string> rendered = errors();
  std::string message = std::string(kind) + " \"" + std::string(name) + "\" is invalid: ";
  if (rendered.size() == 1) {
    message += rendered.front();
  } else {
    message += "[" + Join(rendered, ", ") + "]";
  }
  Status status = InvalidError(std::move(message));
  status.WithCauses(errors_);
  return status;
}

// --- Strategy --------------------------------------------------------------------------------

void ValidateObjectMeta(const ResourceInfo& info, const Json& object, bool is_create,
                        FieldErrors& errors) {
  const Json* metadata = Metadata(object);
  if (metadata == nullptr) {
    errors.Required("metadata");
    return;
  }
  const std::string name = StringOr(*metadata, "name");
  const std::string generate_name = StringOr(*metadata, "generateName");
  if (name.empty() && !(is_create && !generate_name.empty())) {
    errors.Required("metadata.name", "name or generateName is required");
  } else if (!name.empty()) {
    for (const std::string& message : ValidateName(info, name, false)) {
      errors.Invalid("metadata.name", Json(name), message);
    }
  }
  if (name.empty() && !generate_name.empty()) {
    for (const std::string& message : ValidateName(info, generate_name, true)) {
      errors.Invalid("metadata.generateName", Json(generate_name), message);
    }
  }
  ValidateStringMap(*metadata, "labels", true, errors);
  ValidateStringMap(*metadata, "annotations", false, errors);
  if (const Json* finalizers = ArrayField(*metadata, "finalizers")) {
    for (std::size_t i = 0; i < finalizers->size(); ++i) {
      const Json& finalizer = (*finalizers)[i];
      if (!finalizer.is_string()) {
        errors.Invalid(Indexed("metadata.finalizers", i), finalizer, "must be a string");
        continue;
      }
      for (const std::string& message :
           labels::IsQualifiedName(finalizer.get_ref<const std::string&>())) {
        errors.Invalid(Indexed("metadata.finalizers", i), finalizer, message);
      }
    }
  }
}

void ApplyDefaults(const ResourceInfo& info, Json& object) {
  if (IsCore(info, "services")) {
    DefaultService(object);
  } else if (IsCore(info, "pods")) {
    DefaultPod(object);
  } else if (IsCore(info, "namespaces")) {
    Json* metadata = Metadata(object);
    if (metadata != nullptr && metadata->contains("name")) {
      Json* labels = EnsureObject(*metadata, "labels");
      if (labels != nullptr) {
        (*labels)["kubernetes.io/metadata.name"] = (*metadata)["name"];
      }
    }
    Json* spec = EnsureObject(object, "spec");
    if (spec != nullptr && !spec->contains("finalizers")) {
      (*spec)["finalizers"] = Json::array({"kubernetes"});
    }
    Json* status = EnsureObject(object, "status");
    if (status != nullptr && !status->contains("phase")) {
      (*status)["phase"] = "Active";
    }
  } else if (info.group == "apps" && info.resource == "deployments") {
    DefaultDeployment(object);
  } else if (info.group == "apps" && info.resource == "replicasets") {
    DefaultReplicaSet(object);
  } else if (info.group == "apps" && info.resource == "statefulsets") {
    DefaultStatefulSet(object);
  } else if (info.group == "discovery.k8s.io" && info.resource == "endpointslices") {
    if (Json* ports = ArrayField(object, "ports")) {
      for (Json& port : *ports) {
        if (port.is_object() && !port.contains("protocol")) {
          port["protocol"] = "TCP";
        }
      }
    }
  }
}

void ValidateKind(const ResourceInfo& info, const Json& object, const Json* old,
                  FieldErrors& errors) {
  if (IsCore(info, "services")) {
    ValidateService(object, old, errors);
  } else if (IsCore(info, "pods")) {
    ValidatePod(object, old, errors);
  } else if (IsCore(info, "endpoints")) {
    ValidateEndpoints(object, errors);
  } else if (info.group == "discovery.k8s.io" && info.resource == "endpointslices") {
    ValidateEndpointSlice(object, old, errors);
  } else if (info.group == "apps" &&
             (info.resource == "deployments" || info.resource == "replicasets")) {
    ValidateWorkload(object, "deployment", errors);
  } else if (info.group == "apps" && info.resource == "statefulsets") {
    ValidateWorkload(object, "statefulset", errors);
  } else if (info.group == "policy" && info.resource == "poddisruptionbudgets") {
    ValidatePodDisruptionBudget(object, errors);
  } else if (info.group == "rbac.authorization.k8s.io") {
    if (info.resource == "roles" || info.resource == "clusterroles") {
      ValidateRules(object, info.namespaced, errors);
    } else {
      ValidateBinding(object, old, info.namespaced, errors);
    }
  }
}

void ApplyStatusSplit(const ResourceInfo& info, bool status_subresource, const Json& old,
                      Json& updated) {
  if (!info.has_status) {
    return;
  }
  if (status_subresource) {
    Json result = old;
    if (updated.is_object() && updated.contains("status")) {
      result["status"] = updated["status"];
    } else {
      result.erase("status");
    }
    // The client's resourceVersion still guards the write.
    if (const Json* metadata = Metadata(updated)) {
      if (const std::string* rv = StringField(*metadata, "resourceVersion")) {
        result["metadata"]["resourceVersion"] = *rv;
      }
    }
    updated = std::move(result);
    return;
  }
  if (old.contains("status")) {
    updated["status"] = old["status"];
  } else if (updated.is_object()) {
    updated.erase("status");
  }
}

bool TracksGeneration(const ResourceInfo& info) {
  return info.tracks_generation || !info.builtin ||
         (info.group == "discovery.k8s.io" && info.resource == "endpointslices") ||
         (info.group == "apiextensions.k8s.io" && info.resource == "customresourcedefinitions");
}

bool GenerationChanged(const ResourceInfo& info, const Json& old, const Json& updated) {
  if (!old.is_object() || !updated.is_object()) {
    return old != updated;
  }
  for (const auto& [key, value] : updated.items()) {
    if (key == "metadata" || (info.has_status && key == "status")) {
      continue;
    }
    auto it = old.find(key);
    if (it == old.end() || *it != value) {
      return true;
    }
  }
  for (const auto& [key, value] : old.items()) {
    if (key == "metadata" || (info.has_status && key == "status")) {
      continue;
    }
    if (!updated.contains(key)) {
      return true;
    }
  }
  return false;
}

std::string FieldValue(const Json& object, std::string_view dotted_path) {
  const Json* value = FindPath(object, dotted_path);
  if (value == nullptr || value->is_null()) {
    return "";
  }
  if (value->is_string()) {
    return value->get<std::string>();
  }
  return DumpJson(*value);
}

ObjectAttributes ComputeAttributes(const ResourceInfo& info, const Json& object) {
  ObjectAttributes::Builder attributes;
  const Json* metadata = Metadata(object);
  if (metadata != nullptr) {
    if (const Json* labels = ObjectField(*metadata, "labels")) {
      for (const auto& [key, value] : labels->items()) {
        if (const auto* text = value.get_ptr<const std::string*>()) {
          attributes.AddLabel(key, *text);
        }
      }
    }
    attributes.SetUid(StringOr(*metadata, "uid"));
    if (const Json* owners = ArrayField(*metadata, "ownerReferences")) {
      for (const Json& owner : *owners) {
        if (const std::string* uid = StringField(owner, "uid")) {
          attributes.AddOwnerUid(*uid);
        }
      }
    }
  }
  attributes.AddField("metadata.name", metadata ? StringOr(*metadata, "name") : "");
  attributes.AddField("metadata.namespace", metadata ? StringOr(*metadata, "namespace") : "");
  const bool is_event = info.builtin && info.kind == "Event";
  for (const std::string& field : info.selectable_fields) {
    if (is_event && field == "source") {
      // Upstream's Event "source" label is the source component, or the reporting controller
      // when an events.k8s.io client left the deprecated source empty.
      std::string source = FieldValue(object, "source.component");
      attributes.AddField(field,
                          source.empty() ? FieldValue(object, "reportingComponent") : source);
      continue;
    }
    attributes.AddField(field, FieldValue(object, field));
  }
  return attributes.Build();
}

}  // namespace slicewright::apiserver

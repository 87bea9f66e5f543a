// apps/v1 workloads: a simdjson walk for decoding (metadata through json.cc's walker; the
// template and selector kept as compact JSON) and nlohmann for the objects stamped from a
// template, which need the template's JSON edited.
#include "slicewright/codec/apps.h"

#include <cstdint>
#include <exception>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>
#include <simdjson.h>

#include "slicewright/base/status.h"
#include "slicewright/model/time.h"

#include "codec/internal.h"
#include "codec/json_readers.h"

namespace slicewright::codec {
namespace {

using simdjson::dom::element;
using Json = nlohmann::ordered_json;

Status AtKey(Status status, std::string_view key) {
  if (status.ok()) return status;
  status.WithFieldPrefix("." + std::string(key));
  return status;
}

// The field `key` of an object, or a null element when absent.
bool Field(element object, std::string_view key, element& out) {
  return object.is_object() && object.at_key(key).get(out) == simdjson::SUCCESS && !out.is_null();
}

Status ReadString(element object, std::string_view key, std::string& out) {
  element value;
  if (!Field(object, key, value)) return Status();
  std::string_view text;
  if (value.get_string().get(text) != simdjson::SUCCESS) {
    return AtKey(BadRequestError("expected string"), key);
  }
  out = std::string(text);
  return Status();
}

template <typename Int>
Status ReadInt(element object, std::string_view key, Int& out) {
  element value;
  if (!Field(object, key, value)) return Status();
  std::int64_t number = 0;
  if (value.get_int64().get(number) != simdjson::SUCCESS) {
    return AtKey(BadRequestError("expected integer"), key);
  }
  out = static_cast<Int>(number);
  return Status();
}

// An IntOrString budget as text: 1 -> "1", "25%" -> "25%".
Status ReadIntOrString(element object, std::string_view key, std::string& out) {
  element value;
  if (!Field(object, key, value)) return Status();
  std::int64_t number = 0;
  std::string_view text;
  if (value.get_int64().get(number) == simdjson::SUCCESS) {
    out = std::to_string(number);
  } else if (value.get_string().get(text) == simdjson::SUCCESS) {
    out = std::string(text);
  } else {
    return AtKey(BadRequestError("expected integer or string"), key);
  }
  return Status();
}

Status ReadTime(element object, std::string_view key, std::optional<model::Time>& out) {
  std::string text;
  SW_RETURN_IF_ERROR(ReadString(object, key, text));
  if (!text.empty()) out = model::ParseRfc3339(text);
  return Status();
}

Status ReadStatus(element status, model::WorkloadStatus& out) {
  SW_RETURN_IF_ERROR(ReadInt(status, "observedGeneration", out.observed_generation));
  SW_RETURN_IF_ERROR(ReadInt(status, "replicas", out.replicas));
  SW_RETURN_IF_ERROR(ReadInt(status, "readyReplicas", out.ready_replicas));
  SW_RETURN_IF_ERROR(ReadInt(status, "availableReplicas", out.available_replicas));
  SW_RETURN_IF_ERROR(ReadInt(status, "updatedReplicas", out.updated_replicas));
  SW_RETURN_IF_ERROR(ReadInt(status, "unavailableReplicas", out.unavailable_replicas));
  SW_RETURN_IF_ERROR(ReadInt(status, "currentReplicas", out.current_replicas));
  SW_RETURN_IF_ERROR(ReadInt(status, "fullyLabeledReplicas", out.fully_labeled_replicas));
  SW_RETURN_IF_ERROR(ReadString(status, "currentRevision", out.current_revision));
  SW_RETURN_IF_ERROR(ReadString(status, "updateRevision", out.update_revision));
  element conditions;
  if (Field(status, "conditions", conditions)) {
    simdjson::dom::array array;
    if (conditions.get_array().get(array) != simdjson::SUCCESS) {
      return AtKey(BadRequestError("expected array"), "conditions");
    }
    for (element c : array) {
      model::WorkloadCondition condition;
      Status read = ReadString(c, "type", condition.type);
      if (read.ok()) read = ReadString(c, "status", condition.status);
      if (read.ok()) read = ReadString(c, "reason", condition.reason);
      if (read.ok()) read = ReadString(c, "message", condition.message);
      if (read.ok()) read = ReadTime(c, "lastUpdateTime", condition.last_update_time);
      if (read.ok()) read = ReadTime(c, "lastTransitionTime", condition.last_transition_time);
      if (!read.ok()) return AtKey(std::move(read), "conditions");
      out.conditions.push_back(std::move(condition));
    }
  }
  return Status();
}

Status ReadSpec(element spec, model::Workload& out) {
  SW_RETURN_IF_ERROR(ReadInt(spec, "replicas", out.replicas));
  SW_RETURN_IF_ERROR(ReadInt(spec, "minReadySeconds", out.min_ready_seconds));
  SW_RETURN_IF_ERROR(ReadInt(spec, "revisionHistoryLimit", out.revision_history_limit));
  element value;
  if (Field(spec, "paused", value)) {
    bool paused = false;
    if (value.get_bool().get(paused) != simdjson::SUCCESS) {
      return AtKey(BadRequestError("expected boolean"), "paused");
    }
    out.paused = paused;
  }
  if (Field(spec, "selector", value)) out.selector_json = simdjson::to_string(value);
  if (Field(spec, "template", value)) {
    out.template_json = simdjson::to_string(value);
    element labels;
    element metadata;
    if (Field(value, "metadata", metadata) && Field(metadata, "labels", labels)) {
      simdjson::dom::object object;
      if (labels.get_object().get(object) != simdjson::SUCCESS) {
        return AtKey(BadRequestError("expected object"), "template.metadata.labels");
      }
      for (const simdjson::dom::key_value_pair field : object) {
        std::string_view text;
        if (field.value.get_string().get(text) == simdjson::SUCCESS) {
          out.template_labels.emplace(std::string(field.key), std::string(text));
        }
      }
    }
  }
  element strategy;
  if (Field(spec, "strategy", strategy)) {
    SW_RETURN_IF_ERROR(AtKey(ReadString(strategy, "type", out.strategy_type), "strategy"));
    element rolling;
    if (Field(strategy, "rollingUpdate", rolling)) {
      SW_RETURN_IF_ERROR(
          AtKey(ReadIntOrString(rolling, "maxSurge", out.max_surge), "strategy.rollingUpdate"));
      SW_RETURN_IF_ERROR(AtKey(ReadIntOrString(rolling, "maxUnavailable", out.max_unavailable),
                               "strategy.rollingUpdate"));
    }
  }
  SW_RETURN_IF_ERROR(ReadString(spec, "serviceName", out.service_name));
  SW_RETURN_IF_ERROR(ReadString(spec, "podManagementPolicy", out.pod_management_policy));
  element update;
  if (Field(spec, "updateStrategy", update)) {
    SW_RETURN_IF_ERROR(
        AtKey(ReadString(update, "type", out.update_strategy_type), "updateStrategy"));
    element rolling;
    if (Field(update, "rollingUpdate", rolling)) {
      SW_RETURN_IF_ERROR(
          AtKey(ReadInt(rolling, "partition", out.partition), "updateStrategy.rollingUpdate"));
    }
  }
  return Status();
}

Status ReadWorkload(element root, model::Workload& out) {
  if (!root.is_object()) return BadRequestError("expected a JSON object");
  SW_RETURN_IF_ERROR(ReadString(root, "kind", out.kind));
  element value;
  if (Field(root, "metadata", value)) {
    SW_RETURN_IF_ERROR(AtKey(internal::DecodeObjectMetaValue(value, out.metadata), "metadata"));
  }
  if (Field(root, "spec", value)) SW_RETURN_IF_ERROR(AtKey(ReadSpec(value, out), "spec"));
  if (Field(root, "status", value)) {
    SW_RETURN_IF_ERROR(AtKey(ReadStatus(value, out.status), "status"));
  }
  return Status();
}

Status Named(Status status, const model::Workload& workload, std::string_view what) {
  if (status.ok()) return status;
  std::string name = workload.metadata.name.empty()
                         ? std::string(what)
                         : workload.metadata.namespace_ + "/" + workload.metadata.name;
  status.WithObject(name);
  return status;
}

Json OwnerReferenceJson(const model::OwnerReference& owner) {
  return Json{{"apiVersion", owner.api_version},
              {"kind", owner.kind},
              {"name", owner.name},
              {"uid", owner.uid},
              {"controller", true},
              {"blockOwnerDeletion", true}};
}

Result<Json> ParseObject(std::string_view text, std::string_view what) {
  try {
    Json parsed = Json::parse(text);
    if (!parsed.is_object()) return BadRequestError(std::string(what) + ": expected an object");
    return parsed;
  } catch (const std::exception& e) {
    return BadRequestError(std::string(what) + ": " + e.what());
  }
}

void AppendInt(std::string& out, std::string_view key, std::int64_t value, bool& first) {
  if (!first) out += ',';
  first = false;
  out += '"';
  out += key;
  out += "\":";
  out += std::to_string(value);
}

}  // namespace

Result<model::Workload> DecodeWorkload(std::string_view json) {
  simdjson::dom::parser parser;
  element root;
  if (const auto error = parser.parse(json.data(), json.size()).get(root);
      error != simdjson::SUCCESS) {
    return BadRequestError(std::string("malformed JSON: ") + simdjson::error_message(error));
  }
  model::Workload out;
  SW_RETURN_IF_ERROR(Named(ReadWorkload(root, out), out, "workload"));
  return out;
}

Result<ListPage<model::Workload>> DecodeWorkloadList(std::string_view json) {
  simdjson::dom::parser parser;
  element root;
  if (const auto error = parser.parse(json.data(), json.size()).get(root);
      error != simdjson::SUCCESS) {
    return BadRequestError(std::string("malformed JSON: ") + simdjson::error_message(error));
  }
  ListPage<model::Workload> out;
  std::string list_kind;
  SW_RETURN_IF_ERROR(ReadString(root, "kind", list_kind));
  element metadata;
  if (Field(root, "metadata", metadata)) {
    SW_RETURN_IF_ERROR(ReadString(metadata, "resourceVersion", out.resource_version));
    SW_RETURN_IF_ERROR(ReadString(metadata, "continue", out.continue_token));
  }
  // "DeploymentList" -> "Deployment": list items may leave their kind out.
  const std::string item_kind =
      list_kind.size() > 4 ? list_kind.substr(0, list_kind.size() - 4) : std::string();
  element items;
  if (Field(root, "items", items)) {
    simdjson::dom::array array;
    if (items.get_array().get(array) != simdjson::SUCCESS) {
      return AtKey(BadRequestError("expected array"), "items");
    }
    for (element item : array) {
      model::Workload workload;
      workload.kind = item_kind;
      Status status = ReadWorkload(item, workload);
      if (!status.ok()) {
        out.item_errors.push_back(Named(std::move(status), workload, "list item"));
        continue;
      }
      out.items.push_back(std::move(workload));
    }
  }
  return out;
}

Result<WatchEvent<model::Workload>> DecodeWorkloadWatchEvent(std::string_view line) {
  simdjson::dom::parser parser;
  element root;
  if (const auto error = parser.parse(line.data(), line.size()).get(root);
      error != simdjson::SUCCESS) {
    return BadRequestError(std::string("watch event: malformed JSON: ") +
                           simdjson::error_message(error));
  }
  WatchEvent<model::Workload> out;
  std::string type;
  SW_RETURN_IF_ERROR(ReadString(root, "type", type));
  const std::optional<WatchEventType> named = internal::WatchEventTypeFromName(type);
  if (!named) {
    return BadRequestError("watch event: .type: unknown watch event type \"" + type + "\"");
  }
  out.type = *named;
  element object;
  if (!Field(root, "object", object) || !object.is_object()) {
    return BadRequestError("watch event: .object: expected object");
  }
  if (out.type == WatchEventType::kError) {
    std::int64_t code = 500;
    SW_RETURN_IF_ERROR(ReadInt(object, "code", code));
    out.error = DecodeStatusResponse(simdjson::to_string(object), static_cast<int>(code));
    return out;
  }
  SW_RETURN_IF_ERROR(Named(ReadWorkload(object, out.object), out.object, "watch event"));
  return out;
}

Result<std::string> EncodePodFromTemplate(const PodFromTemplate& pod) {
  SW_ASSIGN_OR_RETURN(Json tmpl, ParseObject(pod.template_json, "pod template"));
  Json metadata =
      tmpl.contains("metadata") && tmpl["metadata"].is_object() ? tmpl["metadata"] : Json::object();
  metadata.erase("creationTimestamp");
  metadata["namespace"] = pod.namespace_;
  if (!pod.name.empty()) {
    metadata["name"] = pod.name;
  } else {
    metadata["generateName"] = pod.generate_name;
  }
  for (const auto& [key, value] : pod.extra_labels) metadata["labels"][key] = value;
  metadata["ownerReferences"] = Json::array({OwnerReferenceJson(pod.owner)});
  Json spec = tmpl.contains("spec") && tmpl["spec"].is_object() ? tmpl["spec"] : Json::object();
  if (!pod.hostname.empty()) spec["hostname"] = pod.hostname;
  if (!pod.subdomain.empty()) spec["subdomain"] = pod.subdomain;
  Json out = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", std::move(metadata)},
              {"spec", std::move(spec)}};
  return out.dump();
}

Result<std::string> EncodeReplicaSetFromDeployment(const ReplicaSetFromDeployment& rs) {
  const model::Workload& d = *rs.deployment;
  SW_ASSIGN_OR_RETURN(Json tmpl, ParseObject(d.template_json, "deployment template"));
  Json selector =
      d.selector_json.empty() ? Json::object() : Json::parse(d.selector_json, nullptr, false);
  if (!selector.is_object()) selector = Json::object();
  selector["matchLabels"][std::string(model::kLabelPodTemplateHash)] = rs.hash;
  tmpl["metadata"]["labels"][std::string(model::kLabelPodTemplateHash)] = rs.hash;
  Json labels = tmpl["metadata"]["labels"];
  model::OwnerReference owner{"apps/v1", "Deployment", d.metadata.name, d.metadata.uid, true, true};
  Json metadata = {{"name", d.metadata.name + "-" + rs.hash},
                   {"namespace", d.metadata.namespace_},
                   {"labels", std::move(labels)},
                   {"ownerReferences", Json::array({OwnerReferenceJson(owner)})}};
  if (!rs.revision.empty()) {
    metadata["annotations"][std::string(model::kAnnotationDeploymentRevision)] = rs.revision;
  }
  Json spec = {{"replicas", rs.replicas}, {"selector", std::move(selector)}};
  if (d.min_ready_seconds > 0) spec["minReadySeconds"] = d.min_ready_seconds;
  spec["template"] = std::move(tmpl);
  Json out = {{"apiVersion", "apps/v1"},
              {"kind", "ReplicaSet"},
              {"metadata", std::move(metadata)},
              {"spec", std::move(spec)}};
  return out.dump();
}

std::string EncodeReplicasPatch(std::int32_t replicas, const std::optional<std::string>& revision) {
  std::string out = "{";
  if (revision) {
    out += R"("metadata":{"annotations":{)";
    internal::AppendJsonString(out, model::kAnnotationDeploymentRevision);
    out += ':';
    internal::AppendJsonString(out, *revision);
    out += "}},";
  }
  out += R"("spec":{"replicas":)" + std::to_string(replicas) + "}}";
  return out;
}

std::string EncodeWorkloadStatusPatch(std::string_view kind, const model::WorkloadStatus& status) {
  std::string out = R"({"status":{)";
  bool first = true;
  AppendInt(out, "observedGeneration", status.observed_generation, first);
  AppendInt(out, "replicas", status.replicas, first);
  AppendInt(out, "readyReplicas", status.ready_replicas, first);
  AppendInt(out, "availableReplicas", status.available_replicas, first);
  if (kind == "ReplicaSet") {
    AppendInt(out, "fullyLabeledReplicas", status.fully_labeled_replicas, first);
  } else {
    AppendInt(out, "updatedReplicas", status.updated_replicas, first);
  }
  if (kind == "Deployment") {
    // Merge patches drop a field with null: kube omits unavailableReplicas when 0.
    if (status.unavailable_replicas > 0) {
      AppendInt(out, "unavailableReplicas", status.unavailable_replicas, first);
    } else {
      out += R"(,"unavailableReplicas":null)";
    }
  }
  if (kind == "StatefulSet") {
    AppendInt(out, "currentReplicas", status.current_replicas, first);
    out += R"(,"currentRevision":)";
    internal::AppendJsonString(out, status.current_revision);
    out += R"(,"updateRevision":)";
    internal::AppendJsonString(out, status.update_revision);
  }
  if (kind == "Deployment") {
    out += R"(,"conditions":[)";
    for (std::size_t i = 0; i < status.conditions.size(); ++i) {
      const model::WorkloadCondition& c = status.conditions[i];
      if (i > 0) out += ',';
      out += R"({"type":)";
      internal::AppendJsonString(out, c.type);
      out += R"(,"status":)";
      internal::AppendJsonString(out, c.status);
      if (c.last_update_time) {
        out += R"(,"lastUpdateTime":)";
        internal::AppendJsonString(out, model::FormatRfc3339(*c.last_update_time));
      }
      if (c.last_transition_time) {
        out += R"(,"lastTransitionTime":)";
        internal::AppendJsonString(out, model::FormatRfc3339(*c.last_transition_time));
      }
      out += R"(,"reason":)";
      internal::AppendJsonString(out, c.reason);
      out += R"(,"message":)";
      internal::AppendJsonString(out, c.message);
      out += '}';
    }
    out += ']';
  }
  out += "}}";
  return out;
}

}  // namespace slicewright::codec

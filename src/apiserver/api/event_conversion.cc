// The core/v1 <-> events.k8s.io/v1 Event mapping of upstream's pkg/apis/events/v1/conversion.go,
// over JSON: the renamed fields, the common ones, and the zero values each typed struct would
// print.
#include "apiserver/api/event_conversion.h"

#include <array>
#include <utility>

#include <nlohmann/json.hpp>

namespace slicewright::apiserver {
namespace {

using Json = nlohmann::json;

// {core/v1 name, events.k8s.io/v1 name}; equal names are the fields both versions share.
constexpr std::array<std::pair<std::string_view, std::string_view>, 15> kFields = {{
    {"metadata", "metadata"},
    {"involvedObject", "regarding"},
    {"message", "note"},
    {"reportingComponent", "reportingController"},
    {"reportingInstance", "reportingInstance"},
    {"source", "deprecatedSource"},
    {"firstTimestamp", "deprecatedFirstTimestamp"},
    {"lastTimestamp", "deprecatedLastTimestamp"},
    {"count", "deprecatedCount"},
    {"reason", "reason"},
    {"type", "type"},
    {"action", "action"},
    {"related", "related"},
    {"series", "series"},
    {"eventTime", "eventTime"},
}};

// Copies the fields `from_core` says exist on the source side under the other side's names.
Json Rename(const Json& in, bool from_core) {
  Json out = Json::object();
  if (!in.is_object()) {
    return out;
  }
  for (const auto& [core_name, v1_name] : kFields) {
    const std::string_view from = from_core ? core_name : v1_name;
    const std::string_view to = from_core ? v1_name : core_name;
    if (auto it = in.find(from); it != in.end()) {
      out[std::string(to)] = *it;
    }
  }
  return out;
}

// Upstream serializes typed structs: fields without omitempty, and struct-typed ones (which
// omitempty never omits), appear even when zero. Matching that keeps both views' output what
// kubectl and client libraries see from kube-apiserver.
void Fill(Json& out, std::string_view field, Json zero) {
  if (!out.contains(field)) {
    out[std::string(field)] = std::move(zero);
  }
}

}  // namespace

bool IsEventsV1(const ResourceInfo& info) {
  return info.builtin && info.group == "events.k8s.io" && info.resource == "events";
}

nlohmann::json CoreEventToV1(const nlohmann::json& core) {
  Json out = Rename(core, true);
  out["apiVersion"] = "events.k8s.io/v1";
  out["kind"] = "Event";
  Fill(out, "metadata", Json::object());
  Fill(out, "eventTime", nullptr);
  Fill(out, "regarding", Json::object());
  Fill(out, "deprecatedSource", Json::object());
  Fill(out, "deprecatedFirstTimestamp", nullptr);
  Fill(out, "deprecatedLastTimestamp", nullptr);
  return out;
}

nlohmann::json V1EventToCore(const nlohmann::json& v1) {
  Json out = Rename(v1, false);
  out["apiVersion"] = "v1";
  out["kind"] = "Event";
  Fill(out, "metadata", Json::object());
  Fill(out, "involvedObject", Json::object());
  Fill(out, "source", Json::object());
  Fill(out, "firstTimestamp", nullptr);
  Fill(out, "lastTimestamp", nullptr);
  Fill(out, "eventTime", nullptr);
  Fill(out, "reportingComponent", "");
  Fill(out, "reportingInstance", "");
  return out;
}

std::string V1EventFieldToCore(std::string_view field) {
  if (field.starts_with("regarding.")) {
    return "involvedObject." + std::string(field.substr(10));
  }
  if (field == "reportingController") {
    return "reportingComponent";
  }
  return std::string(field);
}

}  // namespace slicewright::apiserver

// Builders of the pods and workloads the decide-function tests feed in.
#pragma once

#include <cstdint>
#include <string>

#include "slicewright/model/apps.h"
#include "slicewright/model/core.h"

namespace slicewright::controllers::workloads::testing {

inline model::Time Seconds(std::int64_t s) { return model::Time::FromUnixSeconds(s); }

// A pod bound to a node, Running and Ready since `ready_since` (seconds) unless `ready` is false.
inline model::Pod MakePod(std::string name, bool ready = true, std::int64_t ready_since = 100,
                          std::string revision = "") {
  model::Pod pod;
  pod.metadata.name = std::move(name);
  pod.metadata.namespace_ = "default";
  pod.metadata.creation_timestamp = Seconds(ready_since - 1);
  pod.spec.node_name = "sim-node-0";
  pod.status.phase = "Running";
  pod.status.conditions = {{"Ready", ready ? "True" : "False", Seconds(ready_since), "", ""}};
  if (!revision.empty()) {
    pod.metadata.labels[std::string(model::kLabelControllerRevisionHash)] = std::move(revision);
  }
  return pod;
}

inline model::Workload MakeWorkload(std::string kind, std::string name, std::int32_t replicas) {
  model::Workload w;
  w.kind = std::move(kind);
  w.metadata.name = std::move(name);
  w.metadata.namespace_ = "default";
  w.metadata.uid = w.metadata.name + "-uid";
  w.metadata.generation = 1;
  w.replicas = replicas;
  w.template_json = R"({"metadata":{"labels":{"app":"web"}}})";
  return w;
}

}  // namespace slicewright::controllers::workloads::testing

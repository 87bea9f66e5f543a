// apps/v1 Deployment, ReplicaSet and StatefulSet: the fields the dev workload controllers read
// (controllers/workloads), one value type for the three kinds. The pod template and the
// selector stay JSON text: the controllers copy them into the objects they create, never look
// inside but for labels. Copyable aggregate.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "slicewright/model/core.h"
#include "slicewright/model/meta.h"

namespace slicewright::model {

inline constexpr std::string_view kLabelPodTemplateHash = "pod-template-hash";
inline constexpr std::string_view kLabelControllerRevisionHash = "controller-revision-hash";
inline constexpr std::string_view kLabelStatefulSetPodName = "statefulset.kubernetes.io/pod-name";
inline constexpr std::string_view kLabelPodIndex = "apps.kubernetes.io/pod-index";
inline constexpr std::string_view kAnnotationDeploymentRevision =
    "deployment.kubernetes.io/revision";

// DeploymentCondition and the other apps/v1 conditions.
struct WorkloadCondition {
  std::string type;
  std::string status;
  std::optional<Time> last_update_time;  // Deployments only
  std::optional<Time> last_transition_time;
  std::string reason;
  std::string message;
  friend bool operator==(const WorkloadCondition&, const WorkloadCondition&) = default;
};

// The status fields of the three kinds (each uses a subset).
struct WorkloadStatus {
  std::int64_t observed_generation = 0;
  std::int32_t replicas = 0;
  std::int32_t ready_replicas = 0;
  std::int32_t available_replicas = 0;
  std::int32_t updated_replicas = 0;        // Deployment, StatefulSet
  std::int32_t unavailable_replicas = 0;    // Deployment
  std::int32_t current_replicas = 0;        // StatefulSet
  std::int32_t fully_labeled_replicas = 0;  // ReplicaSet
  std::string current_revision;             // StatefulSet
  std::string update_revision;              // StatefulSet
  std::vector<WorkloadCondition> conditions;
  friend bool operator==(const WorkloadStatus&, const WorkloadStatus&) = default;
};

struct Workload {
  std::string kind;  // "Deployment", "ReplicaSet" or "StatefulSet"
  ObjectMeta metadata;
  std::int32_t replicas = 1;
  std::int32_t min_ready_seconds = 0;
  std::string selector_json;  // spec.selector as compact JSON
  std::string template_json;  // spec.template as compact JSON
  StringMap template_labels;  // spec.template.metadata.labels
  // Deployment: spec.strategy; the budgets as written ("25%", "1").
  std::string strategy_type = "RollingUpdate";
  std::string max_surge = "25%";
  std::string max_unavailable = "25%";
  std::int32_t revision_history_limit = 10;
  bool paused = false;
  // StatefulSet.
  std::string service_name;
  std::string pod_management_policy = "OrderedReady";
  std::string update_strategy_type = "RollingUpdate";
  std::int32_t partition = 0;
  WorkloadStatus status;
  friend bool operator==(const Workload&, const Workload&) = default;
};

}  // namespace slicewright::model

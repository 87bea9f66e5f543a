// The Deployment controller's decision, pure: which ReplicaSet to create, how to scale each one
// (a rolling update honouring maxSurge and maxUnavailable over the ReplicaSets' reported
// availability, or Recreate), which old ReplicaSets to prune past revisionHistoryLimit, and the
// status `kubectl rollout status` reads. Pure and reentrant.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "slicewright/model/apps.h"
#include "slicewright/model/meta.h"

namespace slicewright::controllers::workloads {

// The pod-template-hash of a template: FNV-32a of its JSON text, written in kube's
// rand.SafeEncodeString alphabet (no vowels, no look-alikes), as ComputeHash does.
std::string PodTemplateHash(std::string_view template_json);

// An IntOrString budget ("25%" or "1") against `total`: a percentage rounds up for maxSurge and
// down for maxUnavailable, as intstr.GetScaledValueFromIntOrPercent. Malformed text is 0.
std::int32_t ResolveBudget(std::string_view value, std::int32_t total, bool round_up);

struct ReplicaSetScale {
  std::string name;
  std::int32_t replicas = 0;
  friend bool operator==(const ReplicaSetScale&, const ReplicaSetScale&) = default;
};

struct DeploymentPlan {
  // Create "<deployment>-<hash>" with this many replicas and this revision annotation.
  std::optional<std::int32_t> create_replicas;
  std::string new_name;
  std::string new_revision;
  std::vector<ReplicaSetScale> scales;  // existing ReplicaSets whose spec.replicas changes
  std::vector<std::string> deletes;     // old, empty ReplicaSets past revisionHistoryLimit
  model::WorkloadStatus status;
};

// `owned`: the ReplicaSets whose controller is `d`; `hash`: PodTemplateHash(d.template_json).
// The new ReplicaSet is the owned one labelled pod-template-hash=hash. `now` stamps condition
// times that change.
DeploymentPlan PlanDeployment(const model::Workload& d, std::string_view hash,
                              const std::vector<const model::Workload*>& owned, model::Time now);

}  // namespace slicewright::controllers::workloads

// apps/v1 Deployment, ReplicaSet and StatefulSet as model::Workload (decoders for the workload
// controllers' informers), and the writes those controllers make: ReplicaSets and Pods stamped
// from a template, replica and status patches. Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "slicewright/base/result.h"
#include "slicewright/codec/json.h"
#include "slicewright/model/apps.h"

namespace slicewright::codec {

// One object of any of the three kinds (its "kind" says which; kBadRequest naming the field for
// malformed input).
Result<model::Workload> DecodeWorkload(std::string_view json);
Result<ListPage<model::Workload>> DecodeWorkloadList(std::string_view json);
Result<WatchEvent<model::Workload>> DecodeWorkloadWatchEvent(std::string_view line);

// A Pod made from `template_json` (a PodTemplateSpec), as a controller creates it: the template's
// metadata and spec, plus these.
struct PodFromTemplate {
  std::string template_json;
  std::string namespace_;
  std::string name;           // "" to use generate_name
  std::string generate_name;  // "web-5d4f8-"
  model::StringMap extra_labels;
  model::OwnerReference owner;  // the controller: controller and blockOwnerDeletion set true
  std::string hostname;         // spec.hostname when not empty (StatefulSet pods)
  std::string subdomain;        // spec.subdomain when not empty
};
// kBadRequest when the template is not a JSON object.
Result<std::string> EncodePodFromTemplate(const PodFromTemplate& pod);

// The ReplicaSet a Deployment rolls out for its current template: named "<deployment>-<hash>",
// the template and selector extended with pod-template-hash=<hash>, owned by the Deployment.
struct ReplicaSetFromDeployment {
  const model::Workload* deployment = nullptr;
  std::string hash;
  std::int32_t replicas = 0;
  std::string revision;  // deployment.kubernetes.io/revision
};
Result<std::string> EncodeReplicaSetFromDeployment(const ReplicaSetFromDeployment& rs);

// A merge patch of spec.replicas, and of the revision annotation when set.
std::string EncodeReplicasPatch(std::int32_t replicas,
                                const std::optional<std::string>& revision = std::nullopt);

// A merge patch of the status subresource: the kind's status fields, conditions replaced whole.
std::string EncodeWorkloadStatusPatch(std::string_view kind, const model::WorkloadStatus& status);

}  // namespace slicewright::codec

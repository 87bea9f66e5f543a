// apps/v1 workloads: decoding into model::Workload and the objects the workload controllers write.
#include "slicewright/codec/apps.h"

#include <string>

#include <gtest/gtest.h>

namespace slicewright::codec {
namespace {

constexpr std::string_view kDeployment = R"({"apiVersion":"apps/v1","kind":"Deployment",
  "metadata":{"name":"web","namespace":"default","uid":"u1","generation":2},
  "spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"}},
    "strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":1,"maxUnavailable":"0%"}},
    "template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}},
  "status":{"observedGeneration":1,"replicas":3,"readyReplicas":2,"availableReplicas":2,
    "updatedReplicas":3,"conditions":[{"type":"Available","status":"True","reason":"R","message":"M",
    "lastTransitionTime":"2026-12-03T04:00:00Z"}]}})";

// The fields the controllers read, with the template and selector kept as compact JSON.
TEST(AppsCodecTest, DecodesDeployment) {
  Result<model::Workload> d = DecodeWorkload(kDeployment);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->kind, "Deployment");
  EXPECT_EQ(d->metadata.generation, 2);
  EXPECT_EQ(d->replicas, 3);
  EXPECT_EQ(d->max_surge, "1");
  EXPECT_EQ(d->max_unavailable, "0%");
  EXPECT_EQ(d->selector_json, R"({"matchLabels":{"app":"web"}})");
  EXPECT_EQ(
      d->template_json,
      R"({"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}})");
  EXPECT_EQ(d->template_labels, (model::StringMap{{"app", "web"}}));
  EXPECT_EQ(d->status.ready_replicas, 2);
  ASSERT_EQ(d->status.conditions.size(), 1U);
  EXPECT_EQ(d->status.conditions[0].reason, "R");
}

// A wrongly typed field is an error naming the object and the field.
TEST(AppsCodecTest, RejectsMistypedField) {
  Result<model::Workload> d = DecodeWorkload(
      R"({"kind":"StatefulSet","metadata":{"name":"db","namespace":"ns"},"spec":{"replicas":"3"}})");
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), StatusCode::kBadRequest);
  EXPECT_EQ(d.status().ToString(), "ns/db: .spec.replicas: expected integer");
}

// Lists take the item kind from the list kind, and watch events decode their object.
TEST(AppsCodecTest, DecodesListsAndWatchEvents) {
  Result<ListPage<model::Workload>> list = DecodeWorkloadList(
      R"({"kind":"StatefulSetList","metadata":{"resourceVersion":"9"},"items":[
        {"metadata":{"name":"db"},"spec":{"serviceName":"db","podManagementPolicy":"Parallel",
         "updateStrategy":{"type":"RollingUpdate","rollingUpdate":{"partition":1}}}}]})");
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  EXPECT_EQ(list->resource_version, "9");
  ASSERT_EQ(list->items.size(), 1U);
  EXPECT_EQ(list->items[0].kind, "StatefulSet");
  EXPECT_EQ(list->items[0].service_name, "db");
  EXPECT_EQ(list->items[0].pod_management_policy, "Parallel");
  EXPECT_EQ(list->items[0].partition, 1);
  Result<WatchEvent<model::Workload>> event =
      DecodeWorkloadWatchEvent(R"({"type":"MODIFIED","object":)" + std::string(kDeployment) + "}");
  ASSERT_TRUE(event.ok()) << event.status().ToString();
  EXPECT_EQ(event->type, WatchEventType::kModified);
  EXPECT_EQ(event->object.metadata.name, "web");
}

// A pod stamped from a template: its labels plus the extra ones, the controller's
// ownerReference, and a StatefulSet pod's hostname and subdomain.
TEST(AppsCodecTest, EncodesPodFromTemplate) {
  PodFromTemplate pod;
  pod.template_json = R"({"metadata":{"labels":{"app":"db"}},"spec":{"containers":[]}})";
  pod.namespace_ = "default";
  pod.name = "db-0";
  pod.extra_labels = {{"controller-revision-hash", "db-123"}};
  pod.owner = {"apps/v1", "StatefulSet", "db", "u2", true, true};
  pod.hostname = "db-0";
  pod.subdomain = "db";
  Result<std::string> json = EncodePodFromTemplate(pod);
  ASSERT_TRUE(json.ok()) << json.status().ToString();
  EXPECT_EQ(*json, R"({"apiVersion":"v1","kind":"Pod","metadata":{"labels":{"app":"db",)"
                   R"("controller-revision-hash":"db-123"},"namespace":"default","name":"db-0",)"
                   R"("ownerReferences":[{"apiVersion":"apps/v1","kind":"StatefulSet","name":"db",)"
                   R"("uid":"u2","controller":true,"blockOwnerDeletion":true}]},)"
                   R"("spec":{"containers":[],"hostname":"db-0","subdomain":"db"}})");
  pod.template_json = "[]";
  EXPECT_EQ(EncodePodFromTemplate(pod).status().code(), StatusCode::kBadRequest);
}

// The ReplicaSet of a Deployment's template: hash in name, selector and template labels.
TEST(AppsCodecTest, EncodesReplicaSetFromDeployment) {
  Result<model::Workload> d = DecodeWorkload(kDeployment);
  ASSERT_TRUE(d.ok());
  Result<std::string> json = EncodeReplicaSetFromDeployment({&*d, "abc", 2, "3"});
  ASSERT_TRUE(json.ok()) << json.status().ToString();
  EXPECT_EQ(*json,
            R"({"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"web-abc",)"
            R"("namespace":"default","labels":{"app":"web","pod-template-hash":"abc"},)"
            R"("ownerReferences":[{"apiVersion":"apps/v1","kind":"Deployment","name":"web",)"
            R"("uid":"u1","controller":true,"blockOwnerDeletion":true}],)"
            R"("annotations":{"deployment.kubernetes.io/revision":"3"}},"spec":{"replicas":2,)"
            R"("selector":{"matchLabels":{"app":"web","pod-template-hash":"abc"}},)"
            R"("template":{"metadata":{"labels":{"app":"web","pod-template-hash":"abc"}},)"
            R"("spec":{"containers":[{"name":"c","image":"nginx"}]}}}})");
}

// Replica and status patches, byte for byte; each kind writes only its own status fields.
TEST(AppsCodecTest, EncodesPatches) {
  EXPECT_EQ(EncodeReplicasPatch(4), R"({"spec":{"replicas":4}})");
  EXPECT_EQ(EncodeReplicasPatch(0, "2"),
            R"({"metadata":{"annotations":{"deployment.kubernetes.io/revision":"2"}},)"
            R"("spec":{"replicas":0}})");
  model::WorkloadStatus status;
  status.observed_generation = 2;
  status.replicas = 3;
  status.ready_replicas = 3;
  status.available_replicas = 3;
  status.fully_labeled_replicas = 3;
  EXPECT_EQ(EncodeWorkloadStatusPatch("ReplicaSet", status),
            R"({"status":{"observedGeneration":2,"replicas":3,"readyReplicas":3,)"
            R"("availableReplicas":3,"fullyLabeledReplicas":3}})");
  status.current_revision = "db-1";
  status.update_revision = "db-2";
  EXPECT_EQ(EncodeWorkloadStatusPatch("StatefulSet", status),
            R"({"status":{"observedGeneration":2,"replicas":3,"readyReplicas":3,)"
            R"("availableReplicas":3,"updatedReplicas":0,"currentReplicas":0,)"
            R"("currentRevision":"db-1","updateRevision":"db-2"}})");
  status.conditions = {{"Available", "True", std::nullopt, std::nullopt, "R", "M"}};
  EXPECT_EQ(EncodeWorkloadStatusPatch("Deployment", status),
            R"({"status":{"observedGeneration":2,"replicas":3,"readyReplicas":3,)"
            R"("availableReplicas":3,"updatedReplicas":0,"unavailableReplicas":null,)"
            R"("conditions":[{"type":"Available","status":"True","reason":"R","message":"M"}]}})");
}

}  // namespace
}  // namespace slicewright::codec

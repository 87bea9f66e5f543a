// PlanDeployment: the first rollout, plain scaling, rolling updates bounded by maxSurge and
// maxUnavailable over reported availability, history pruning and the conditions kubectl reads.
#include "controllers/workloads/deployment.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "test_util.h"

namespace slicewright::controllers::workloads {
namespace {

using testing::MakeWorkload;
using testing::Seconds;

model::Workload Rs(std::string hash, std::int32_t replicas, std::int32_t available,
                   std::int64_t created) {
  model::Workload rs = MakeWorkload("ReplicaSet", "web-" + hash, replicas);
  rs.metadata.labels[std::string(model::kLabelPodTemplateHash)] = hash;
  rs.metadata.creation_timestamp = Seconds(created);
  rs.status.replicas = replicas;
  rs.status.ready_replicas = available;
  rs.status.available_replicas = available;
  return rs;
}

const model::WorkloadCondition* Find(const model::WorkloadStatus& status, std::string_view type) {
  for (const model::WorkloadCondition& c : status.conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

// Percentages round up for surge and down for unavailable; counts pass through.
TEST(DeploymentPlanTest, ResolvesBudgets) {
  EXPECT_EQ(ResolveBudget("25%", 3, true), 1);
  EXPECT_EQ(ResolveBudget("25%", 3, false), 0);
  EXPECT_EQ(ResolveBudget("50%", 10, false), 5);
  EXPECT_EQ(ResolveBudget("2", 10, true), 2);
  EXPECT_EQ(ResolveBudget("x%", 10, true), 0);
}

// The hash is stable, template-dependent and in kube's safe alphabet.
TEST(DeploymentPlanTest, HashesTemplates) {
  const std::string a = PodTemplateHash(R"({"spec":{}})");
  EXPECT_EQ(a, PodTemplateHash(R"({"spec":{}})"));
  EXPECT_NE(a, PodTemplateHash(R"({"metadata":{"annotations":{"r":"1"}},"spec":{}})"));
  EXPECT_EQ(a.find_first_not_of("bcdfghjklmnpqrstvwxz2456789"), std::string::npos) << a;
}

// No ReplicaSet yet: the new one is created with every replica, revision 1.
TEST(DeploymentPlanTest, FirstRolloutCreatesNewReplicaSet) {
  const model::Workload d = MakeWorkload("Deployment", "web", 3);
  const DeploymentPlan plan = PlanDeployment(d, "abc", {}, Seconds(10));
  ASSERT_TRUE(plan.create_replicas.has_value());
  EXPECT_EQ(*plan.create_replicas, 3);
  EXPECT_EQ(plan.new_name, "web-abc");
  EXPECT_EQ(plan.new_revision, "1");
  const model::WorkloadCondition* progressing = Find(plan.status, "Progressing");
  ASSERT_NE(progressing, nullptr);
  EXPECT_EQ(progressing->reason, "NewReplicaSetCreated");
}

// Only the new ReplicaSet has replicas: a scale is a plain resize.
TEST(DeploymentPlanTest, ScalesWithoutRollout) {
  model::Workload d = MakeWorkload("Deployment", "web", 5);
  const model::Workload current = Rs("abc", 3, 3, 1);
  DeploymentPlan plan = PlanDeployment(d, "abc", {&current}, Seconds(10));
  EXPECT_FALSE(plan.create_replicas.has_value());
  EXPECT_EQ(plan.scales, (std::vector<ReplicaSetScale>{{"web-abc", 5}}));
  d.replicas = 1;
  plan = PlanDeployment(d, "abc", {&current}, Seconds(10));
  EXPECT_EQ(plan.scales, (std::vector<ReplicaSetScale>{{"web-abc", 1}}));
}

// A rolling update of 4 with maxSurge 1 and maxUnavailable 1, step by step: the new
// ReplicaSet grows within 5 pods, the old shrinks only while 3 stay available, and an unready
// new pod holds the old ones.
TEST(DeploymentPlanTest, RollingUpdateHonoursSurgeUnavailableAndReadiness) {
  model::Workload d = MakeWorkload("Deployment", "web", 4);
  d.max_surge = "25%";
  d.max_unavailable = "25%";
  const model::Workload old4 = Rs("old", 4, 4, 1);
  DeploymentPlan plan = PlanDeployment(d, "new", {&old4}, Seconds(10));
  ASSERT_TRUE(plan.create_replicas.has_value());
  EXPECT_EQ(*plan.create_replicas, 1);
  EXPECT_EQ(plan.new_revision, "1");
  EXPECT_EQ(plan.scales, (std::vector<ReplicaSetScale>{{"web-old", 3}}));

  // New pod not ready yet: the new set may grow to the surge, the old must not shrink.
  const model::Workload old3 = Rs("old", 3, 3, 1);
  const model::Workload new1 = Rs("new", 1, 0, 2);
  plan = PlanDeployment(d, "new", {&old3, &new1}, Seconds(11));
  EXPECT_EQ(plan.scales, (std::vector<ReplicaSetScale>{{"web-new", 2}}));

  // Both new pods available: the old set shrinks by what stays above 3 available.
  const model::Workload new2 = Rs("new", 2, 2, 2);
  plan = PlanDeployment(d, "new", {&old3, &new2}, Seconds(12));
  EXPECT_EQ(plan.scales, (std::vector<ReplicaSetScale>{{"web-old", 1}}));
  const model::WorkloadCondition* progressing = Find(plan.status, "Progressing");
  ASSERT_NE(progressing, nullptr);
  EXPECT_EQ(progressing->reason, "ReplicaSetUpdated");
  EXPECT_EQ(plan.status.updated_replicas, 2);
  EXPECT_EQ(plan.status.replicas, 5);
}

// maxUnavailable 0: nothing old goes before a new pod is available.
TEST(DeploymentPlanTest, MaxUnavailableZeroWaitsForAvailability) {
  model::Workload d = MakeWorkload("Deployment", "web", 2);
  d.max_surge = "1";
  d.max_unavailable = "0";
  const model::Workload old2 = Rs("old", 2, 2, 1);
  const model::Workload new1 = Rs("new", 1, 0, 2);
  DeploymentPlan plan = PlanDeployment(d, "new", {&old2, &new1}, Seconds(10));
  EXPECT_TRUE(plan.scales.empty());
  const model::Workload new1_ready = Rs("new", 1, 1, 2);
  plan = PlanDeployment(d, "new", {&old2, &new1_ready}, Seconds(11));
  EXPECT_EQ(plan.scales, (std::vector<ReplicaSetScale>{{"web-old", 1}}));
}

// Done: every replica updated and available; Progressing says NewReplicaSetAvailable, as
// `kubectl rollout status` and `kubectl describe` show it. Condition times stay put when nothing
// changes.
TEST(DeploymentPlanTest, CompleteRolloutReportsNewReplicaSetAvailable) {
  model::Workload d = MakeWorkload("Deployment", "web", 2);
  const model::Workload old0 = Rs("old", 0, 0, 1);
  const model::Workload new2 = Rs("new", 2, 2, 2);
  DeploymentPlan plan = PlanDeployment(d, "new", {&old0, &new2}, Seconds(10));
  EXPECT_TRUE(plan.scales.empty());
  EXPECT_EQ(plan.status.updated_replicas, 2);
  EXPECT_EQ(plan.status.available_replicas, 2);
  EXPECT_EQ(plan.status.unavailable_replicas, 0);
  const model::WorkloadCondition* available = Find(plan.status, "Available");
  ASSERT_NE(available, nullptr);
  EXPECT_EQ(available->status, "True");
  EXPECT_EQ(available->reason, "MinimumReplicasAvailable");
  const model::WorkloadCondition* progressing = Find(plan.status, "Progressing");
  ASSERT_NE(progressing, nullptr);
  EXPECT_EQ(progressing->reason, "NewReplicaSetAvailable");
  EXPECT_EQ(progressing->message, "ReplicaSet \"web-new\" has successfully progressed.");
  d.status = plan.status;
  const DeploymentPlan again = PlanDeployment(d, "new", {&old0, &new2}, Seconds(99));
  EXPECT_EQ(again.status, plan.status);
}

// Recreate: the old pods go first; the new set is scaled only once none is left.
TEST(DeploymentPlanTest, RecreateScalesOldToZeroFirst) {
  model::Workload d = MakeWorkload("Deployment", "web", 2);
  d.strategy_type = "Recreate";
  const model::Workload old2 = Rs("old", 2, 2, 1);
  DeploymentPlan plan = PlanDeployment(d, "new", {&old2}, Seconds(10));
  ASSERT_TRUE(plan.create_replicas.has_value());
  EXPECT_EQ(*plan.create_replicas, 0);
  EXPECT_EQ(plan.scales, (std::vector<ReplicaSetScale>{{"web-old", 0}}));
  const model::Workload old0 = Rs("old", 0, 0, 1);
  const model::Workload new0 = Rs("new", 0, 0, 2);
  plan = PlanDeployment(d, "new", {&old0, &new0}, Seconds(11));
  EXPECT_EQ(plan.scales, (std::vector<ReplicaSetScale>{{"web-new", 2}}));
}

// Old empty ReplicaSets past revisionHistoryLimit are deleted, oldest first.
TEST(DeploymentPlanTest, PrunesHistory) {
  model::Workload d = MakeWorkload("Deployment", "web", 1);
  d.revision_history_limit = 1;
  const model::Workload a = Rs("a", 0, 0, 1);
  const model::Workload b = Rs("b", 0, 0, 2);
  const model::Workload c = Rs("c", 0, 0, 3);
  const model::Workload current = Rs("cur", 1, 1, 4);
  const DeploymentPlan plan = PlanDeployment(d, "cur", {&c, &a, &current, &b}, Seconds(10));
  EXPECT_EQ(plan.deletes, (std::vector<std::string>{"web-a", "web-b"}));
}

}  // namespace
}  // namespace slicewright::controllers::workloads

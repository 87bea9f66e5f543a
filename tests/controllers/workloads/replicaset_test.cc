// PlanReplicaSet: creates and deletes toward spec.replicas, and the status it reports.
#include "controllers/workloads/replicaset.h"

#include <vector>

#include <gtest/gtest.h>

#include "test_util.h"

namespace slicewright::controllers::workloads {
namespace {

using testing::MakePod;
using testing::MakeWorkload;
using testing::Seconds;

// Too few pods: the missing ones are created; the status counts what exists.
TEST(ReplicaSetPlanTest, ScalesUp) {
  const model::Workload rs = MakeWorkload("ReplicaSet", "web-abc", 3);
  const model::Pod a = MakePod("a");
  const ReplicaSetPlan plan = PlanReplicaSet(rs, {&a}, Seconds(200));
  EXPECT_EQ(plan.creates, 2);
  EXPECT_TRUE(plan.deletes.empty());
  EXPECT_EQ(plan.status.replicas, 1);
  EXPECT_EQ(plan.status.ready_replicas, 1);
  EXPECT_EQ(plan.status.available_replicas, 1);
  EXPECT_EQ(plan.status.observed_generation, 1);
}

// Too many: unscheduled, then not ready, then the most recently ready go first.
TEST(ReplicaSetPlanTest, ScalesDownLeastUsefulFirst) {
  const model::Workload rs = MakeWorkload("ReplicaSet", "web-abc", 1);
  model::Pod unscheduled = MakePod("unscheduled", false);
  unscheduled.spec.node_name.clear();
  unscheduled.status.phase = "Pending";
  const model::Pod not_ready = MakePod("not-ready", false);
  const model::Pod old_ready = MakePod("old-ready", true, 100);
  const model::Pod new_ready = MakePod("new-ready", true, 150);
  const ReplicaSetPlan plan =
      PlanReplicaSet(rs, {&old_ready, &new_ready, &not_ready, &unscheduled}, Seconds(200));
  EXPECT_EQ(plan.creates, 0);
  EXPECT_EQ(plan.deletes, (std::vector<std::string>{"unscheduled", "not-ready", "new-ready"}));
}

// Terminating pods count in no total and are replaced.
TEST(ReplicaSetPlanTest, ReplacesTerminatingPods) {
  const model::Workload rs = MakeWorkload("ReplicaSet", "web-abc", 2);
  const model::Pod a = MakePod("a");
  model::Pod b = MakePod("b");
  b.metadata.deletion_timestamp = Seconds(190);
  const ReplicaSetPlan plan = PlanReplicaSet(rs, {&a, &b}, Seconds(200));
  EXPECT_EQ(plan.creates, 1);
  EXPECT_TRUE(plan.deletes.empty());
  EXPECT_EQ(plan.status.replicas, 1);
}

// A pod is available only once it has been ready for minReadySeconds.
TEST(ReplicaSetPlanTest, AvailableAfterMinReadySeconds) {
  model::Workload rs = MakeWorkload("ReplicaSet", "web-abc", 2);
  rs.min_ready_seconds = 30;
  const model::Pod early = MakePod("early", true, 100);
  const model::Pod late = MakePod("late", true, 190);
  const ReplicaSetPlan plan = PlanReplicaSet(rs, {&early, &late}, Seconds(200));
  EXPECT_EQ(plan.status.ready_replicas, 2);
  EXPECT_EQ(plan.status.available_replicas, 1);
}

}  // namespace
}  // namespace slicewright::controllers::workloads

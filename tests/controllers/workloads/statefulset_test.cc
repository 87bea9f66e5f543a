// PlanStatefulSet: ordinal names, OrderedReady start, scale down from the highest ordinal, rolling
// update from the highest ordinal, and the revisions kubectl rollout status compares.
#include "controllers/workloads/statefulset.h"

#include <vector>

#include <gtest/gtest.h>

#include "test_util.h"

namespace slicewright::controllers::workloads {
namespace {

using testing::MakePod;
using testing::MakeWorkload;
using testing::Seconds;

constexpr std::string_view kRev = "db-r2";

// "<set>-<N>" only, without leading zeros.
TEST(StatefulSetPlanTest, ParsesOrdinals) {
  EXPECT_EQ(PodOrdinal("db", "db-0"), 0);
  EXPECT_EQ(PodOrdinal("db", "db-12"), 12);
  EXPECT_EQ(PodOrdinal("db", "db-01"), std::nullopt);
  EXPECT_EQ(PodOrdinal("db", "dbx-1"), std::nullopt);
  EXPECT_EQ(PodOrdinal("db", "db-"), std::nullopt);
  EXPECT_EQ(PodOrdinal("db", "db-1a"), std::nullopt);
}

// OrderedReady: ordinal 0 first, the next only once the previous is Running and Ready.
TEST(StatefulSetPlanTest, OrderedReadyStartsOneAtATime) {
  const model::Workload sts = MakeWorkload("StatefulSet", "db", 3);
  StatefulSetPlan plan = PlanStatefulSet(sts, kRev, {}, Seconds(10));
  EXPECT_EQ(plan.creates, (std::vector<std::int32_t>{0}));
  const model::Pod starting = MakePod("db-0", false, 100, std::string(kRev));
  plan = PlanStatefulSet(sts, kRev, {&starting}, Seconds(10));
  EXPECT_TRUE(plan.creates.empty());
  const model::Pod ready = MakePod("db-0", true, 100, std::string(kRev));
  plan = PlanStatefulSet(sts, kRev, {&ready}, Seconds(10));
  EXPECT_EQ(plan.creates, (std::vector<std::int32_t>{1}));
  EXPECT_EQ(plan.status.replicas, 1);
  EXPECT_EQ(plan.status.ready_replicas, 1);
  EXPECT_EQ(plan.status.current_revision, kRev);  // the first revision is current at once
}

// Parallel: every missing ordinal at once.
TEST(StatefulSetPlanTest, ParallelCreatesAll) {
  model::Workload sts = MakeWorkload("StatefulSet", "db", 3);
  sts.pod_management_policy = "Parallel";
  const model::Pod starting = MakePod("db-1", false, 100, std::string(kRev));
  const StatefulSetPlan plan = PlanStatefulSet(sts, kRev, {&starting}, Seconds(10));
  EXPECT_EQ(plan.creates, (std::vector<std::int32_t>{0, 2}));
}

// Scale down: the highest ordinal goes first, one at a time, waiting for it to be gone.
TEST(StatefulSetPlanTest, ScalesDownFromHighestOrdinal) {
  const model::Workload sts = MakeWorkload("StatefulSet", "db", 1);
  const model::Pod p0 = MakePod("db-0", true, 100, std::string(kRev));
  const model::Pod p1 = MakePod("db-1", true, 100, std::string(kRev));
  model::Pod p2 = MakePod("db-2", true, 100, std::string(kRev));
  StatefulSetPlan plan = PlanStatefulSet(sts, kRev, {&p1, &p0, &p2}, Seconds(10));
  EXPECT_EQ(plan.deletes, (std::vector<std::string>{"db-2"}));
  p2.metadata.deletion_timestamp = Seconds(9);
  plan = PlanStatefulSet(sts, kRev, {&p1, &p0, &p2}, Seconds(10));
  EXPECT_TRUE(plan.deletes.empty());
  plan = PlanStatefulSet(sts, kRev, {&p1, &p0}, Seconds(11));
  EXPECT_EQ(plan.deletes, (std::vector<std::string>{"db-1"}));
}

// Rolling update: pods of the old revision are replaced from the highest ordinal down; the update
// revision becomes current once every replica runs it and is ready.
TEST(StatefulSetPlanTest, RollingUpdateFromHighestOrdinal) {
  model::Workload sts = MakeWorkload("StatefulSet", "db", 2);
  sts.status.current_revision = "db-r1";
  const model::Pod old0 = MakePod("db-0", true, 100, "db-r1");
  const model::Pod old1 = MakePod("db-1", true, 100, "db-r1");
  StatefulSetPlan plan = PlanStatefulSet(sts, kRev, {&old0, &old1}, Seconds(10));
  EXPECT_EQ(plan.deletes, (std::vector<std::string>{"db-1"}));
  EXPECT_EQ(plan.status.current_revision, "db-r1");
  EXPECT_EQ(plan.status.update_revision, kRev);
  EXPECT_EQ(plan.status.current_replicas, 2);
  const model::Pod new1 = MakePod("db-1", true, 100, std::string(kRev));
  plan = PlanStatefulSet(sts, kRev, {&old0, &new1}, Seconds(11));
  EXPECT_EQ(plan.deletes, (std::vector<std::string>{"db-0"}));
  EXPECT_EQ(plan.status.updated_replicas, 1);
  const model::Pod new0 = MakePod("db-0", true, 100, std::string(kRev));
  plan = PlanStatefulSet(sts, kRev, {&new0, &new1}, Seconds(12));
  EXPECT_TRUE(plan.deletes.empty());
  EXPECT_EQ(plan.status.current_revision, kRev);
  EXPECT_EQ(plan.status.current_replicas, 2);
}

// A partition keeps the ordinals below it on the old revision.
TEST(StatefulSetPlanTest, PartitionStopsTheUpdate) {
  model::Workload sts = MakeWorkload("StatefulSet", "db", 2);
  sts.partition = 1;
  const model::Pod old0 = MakePod("db-0", true, 100, "db-r1");
  const model::Pod new1 = MakePod("db-1", true, 100, std::string(kRev));
  const StatefulSetPlan plan = PlanStatefulSet(sts, kRev, {&old0, &new1}, Seconds(10));
  EXPECT_TRUE(plan.deletes.empty());
  EXPECT_TRUE(plan.creates.empty());
}

}  // namespace
}  // namespace slicewright::controllers::workloads

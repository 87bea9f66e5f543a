#include "slicewright/mcs/conditions.h"

#include <vector>

#include <gtest/gtest.h>

// SetCondition keeps lastTransitionTime while the status holds (meta.SetStatusCondition).
namespace slicewright::mcs {
namespace {

model::Condition C(std::string status, std::string reason, std::string message = "m") {
  model::Condition c;
  c.type = "Conflict";
  c.status = std::move(status);
  c.reason = std::move(reason);
  c.message = std::move(message);
  return c;
}

TEST(SetConditionTest, TransitionTimeMovesOnlyWithTheStatus) {
  const model::Time t1 = model::Time::FromUnixSeconds(100);
  const model::Time t2 = model::Time::FromUnixSeconds(200);
  const model::Time t3 = model::Time::FromUnixSeconds(300);
  std::vector<model::Condition> conditions;
  EXPECT_TRUE(SetCondition(conditions, C("False", "NoConflicts"), t1));
  ASSERT_EQ(conditions.size(), 1U);
  EXPECT_EQ(conditions[0].last_transition_time, t1);
  // Same condition again: nothing to write.
  EXPECT_FALSE(SetCondition(conditions, C("False", "NoConflicts"), t2));
  EXPECT_EQ(conditions[0].last_transition_time, t1);
  // A new message with the same status: written, time kept.
  EXPECT_TRUE(SetCondition(conditions, C("False", "NoConflicts", "other"), t2));
  EXPECT_EQ(conditions[0].message, "other");
  EXPECT_EQ(conditions[0].last_transition_time, t1);
  // A status change moves the time.
  EXPECT_TRUE(SetCondition(conditions, C("True", "PortConflict"), t3));
  EXPECT_EQ(conditions[0].reason, "PortConflict");
  EXPECT_EQ(conditions[0].last_transition_time, t3);
  // Another type is appended.
  model::Condition valid = C("True", "Valid");
  valid.type = "Valid";
  EXPECT_TRUE(SetCondition(conditions, valid, t3));
  ASSERT_EQ(conditions.size(), 2U);
  ASSERT_NE(FindCondition(conditions, "Valid"), nullptr);
  EXPECT_EQ(FindCondition(conditions, "Valid")->reason, "Valid");
  EXPECT_EQ(FindCondition(conditions, "Ready"), nullptr);
}

}  // namespace
}  // namespace slicewright::mcs

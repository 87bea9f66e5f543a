#include "slicewright/model/meta.h"

#include <gtest/gtest.h>

#include "slicewright/model/core.h"

namespace slicewright::model {
namespace {

Pod WithConditions(std::vector<PodCondition> conditions) {
  Pod pod;
  pod.status.conditions = std::move(conditions);
  return pod;
}

// Only a condition of type exactly "Ready" with status exactly "True" makes a pod ready; the
// first Ready condition decides, as upstream's GetPodReadyCondition returns the first match.
TEST(PodReadyTest, ExactTypeAndStatusFirstMatchDecides) {
  EXPECT_FALSE(IsPodReady(WithConditions({})));
  EXPECT_TRUE(IsPodReady(WithConditions({{"Ready", "True", {}, "", ""}})));
  EXPECT_FALSE(IsPodReady(WithConditions({{"Ready", "False", {}, "", ""}})));
  EXPECT_FALSE(IsPodReady(WithConditions({{"Ready", "true", {}, "", ""}})));
  EXPECT_FALSE(IsPodReady(WithConditions({{"Ready", "Truer", {}, "", ""}})));
  EXPECT_FALSE(IsPodReady(WithConditions({{"ready", "True", {}, "", ""}})));
  EXPECT_FALSE(IsPodReady(WithConditions({{"ReadyX", "True", {}, "", ""}})));
  EXPECT_FALSE(IsPodReady(WithConditions({{"ContainersReady", "True", {}, "", ""}})));
  EXPECT_TRUE(IsPodReady(
      WithConditions({{"PodScheduled", "True", {}, "", ""}, {"Ready", "True", {}, "", ""}})));
  EXPECT_FALSE(
      IsPodReady(WithConditions({{"Ready", "False", {}, "", ""}, {"Ready", "True", {}, "", ""}})));
}

}  // namespace
}  // namespace slicewright::model

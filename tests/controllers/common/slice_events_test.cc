#include "controllers/common/slice_events.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace slicewright::controllers {
namespace {

using Keys = std::vector<std::string>;
constexpr std::string_view kOurs = "endpointslice-controller.k8s.io";

model::ObjectMeta Slice(const std::string& service, std::string_view manager,
                        std::int64_t generation = 1) {
  model::ObjectMeta slice;
  slice.namespace_ = "ns";
  slice.name = service + "-abc";
  slice.uid = "uid-" + service;
  slice.generation = generation;
  slice.labels = {{"kubernetes.io/service-name", service},
                  {"endpointslice.kubernetes.io/managed-by", std::string(manager)}};
  return slice;
}

TEST(SliceEventsTest, ChangesConcernOurUntrackedWritesAndMoves) {
  reconcile::EndpointSliceTracker tracker;
  const model::ObjectMeta ours = Slice("web", kOurs);
  EXPECT_EQ(KeysForSliceChange(nullptr, ours, kOurs, tracker), Keys{"ns/web"});
  EXPECT_EQ(KeysForSliceChange(nullptr, Slice("web", "x.example"), kOurs, tracker), Keys{});
  tracker.Update(ours);  // our own write: its echo is no news
  EXPECT_EQ(KeysForSliceChange(nullptr, ours, kOurs, tracker), Keys{});
  EXPECT_EQ(KeysForSliceChange(&ours, ours, kOurs, tracker), Keys{});
  const model::ObjectMeta rewritten = Slice("web", kOurs, 2);  // someone else's write
  EXPECT_EQ(KeysForSliceChange(&ours, rewritten, kOurs, tracker), Keys{"ns/web"});
  EXPECT_EQ(KeysForSliceChange(&ours, Slice("api", kOurs), kOurs, tracker),
            (Keys{"ns/web", "ns/api"}));
  EXPECT_EQ(KeysForSliceChange(&ours, Slice("web", "x.example"), kOurs, tracker),
            Keys{"ns/web"});  // no longer ours
}

TEST(SliceEventsTest, DeletionsOthersMadeOfTrackedSlices) {
  reconcile::EndpointSliceTracker tracker;
  const model::ObjectMeta ours = Slice("web", kOurs);
  EXPECT_EQ(KeyForSliceDeletion(ours, kOurs, tracker), "");  // untracked
  tracker.Update(ours);
  EXPECT_EQ(KeyForSliceDeletion(Slice("web", "x.example"), kOurs, tracker), "");
  EXPECT_EQ(KeyForSliceDeletion(ours, kOurs, tracker), "ns/web");  // not deleted by us
  EXPECT_EQ(KeyForSliceDeletion(ours, kOurs, tracker), "");        // forgotten
  tracker.Update(ours);
  tracker.ExpectDeletion(ours);
  EXPECT_EQ(KeyForSliceDeletion(ours, kOurs, tracker), "");  // our own delete
}

}  // namespace
}  // namespace slicewright::controllers

#include "slicewright/reconcile/tracker.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "slicewright/model/core.h"
#include "slicewright/model/discovery.h"
#include "slicewright/model/well_known.h"

namespace slicewright::reconcile {
namespace {

model::EndpointSlice MakeSlice(std::string uid = "original", std::int64_t generation = 1,
                               std::string namespace_ = "ns1", std::string service = "svc1") {
  model::EndpointSlice slice;
  slice.metadata.name = "example-1";
  slice.metadata.namespace_ = std::move(namespace_);
  slice.metadata.uid = std::move(uid);
  slice.metadata.generation = generation;
  slice.metadata.labels = {{std::string(model::kLabelServiceName), std::move(service)}};
  return slice;
}

model::Service MakeService(std::string uid = "") {
  model::Service service;
  service.metadata.namespace_ = "ns1";
  service.metadata.name = "svc1";
  service.metadata.uid = std::move(uid);
  return service;
}

const model::EndpointSlice kSlice = MakeSlice();
const model::EndpointSlice kDifferentNamespace = MakeSlice("diff-ns", 1, "ns2");
const model::EndpointSlice kDifferentService = MakeSlice("diff-svc", 1, "ns1", "svc2");
const model::EndpointSlice kNewerGeneration = MakeSlice("original", 2);

// TestEndpointSliceTrackerUpdate: Has and ShouldSync after Update, keyed by namespace and
// service-name label; only a newer generation is news.
TEST(TrackerTest, Update) {
  struct Case {
    std::string_view name;
    const model::EndpointSlice& check;
    bool want_has;
    bool want_should_sync;
  };
  const Case cases[] = {
      {"same slice", kSlice, true, false},
      {"different namespace", kDifferentNamespace, false, true},
      {"different service", kDifferentService, false, true},
      {"newer generation", kNewerGeneration, true, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EndpointSliceTracker tracker;
    tracker.Update(kSlice);
    EXPECT_EQ(tracker.Has(c.check), c.want_has);
    EXPECT_EQ(tracker.ShouldSync(c.check), c.want_should_sync);
    EXPECT_EQ(tracker.GenerationForTest(kSlice), 1);
  }
}

// Scenario 38 (TestEndpointSliceTrackerStaleSlices).
TEST(TrackerTest, Scenario38_StaleSlices) {
  struct Case {
    std::string_view name;
    std::vector<model::EndpointSlice> tracked;  // recorded with Update
    std::vector<model::EndpointSlice> listed;
    bool expect_deletion;  // then ExpectDeletion of kSlice
    bool want;
  };
  const Case cases[] = {
      {"empty tracker", {}, {}, false, false},
      {"untracked service with listed slices", {}, {kSlice}, false, false},
      {"matching slices", {kSlice}, {kSlice}, false, false},
      {"newer slice in tracker", {kNewerGeneration}, {kSlice}, false, true},
      {"newer slice in params", {kSlice}, {kNewerGeneration}, false, false},
      {"slice in params is expected to be deleted", {kSlice}, {kSlice}, true, true},
      {"slice in tracker but not in params", {kSlice}, {}, false, true},
      {"deleted slice not listed is fine", {kSlice}, {}, true, false},
      {"other service's slice is irrelevant", {kDifferentService}, {}, false, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EndpointSliceTracker tracker;
    for (const model::EndpointSlice& slice : c.tracked) {
      tracker.Update(slice);
    }
    if (c.expect_deletion) {
      tracker.ExpectDeletion(kSlice);
    }
    EXPECT_EQ(tracker.StaleSlices(MakeService(), c.listed), c.want);
    std::vector<const model::EndpointSlice*> pointers;
    for (const model::EndpointSlice& slice : c.listed) {
      pointers.push_back(&slice);
    }
    EXPECT_EQ(tracker.StaleSlices(MakeService(), pointers), c.want);
  }
}

// Scenario 39 (TestEndpointSliceTrackerDeletion): after Update(kSlice) and ExpectDeletion(x),
// Has/ShouldSync on `check`, then HandleDeletion(kSlice) is true only for an expected deletion.
TEST(TrackerTest, Scenario39_Deletion) {
  struct Case {
    std::string_view name;
    const model::EndpointSlice& expect_deletion;
    const model::EndpointSlice& check;
    bool want_has;
    bool want_should_sync;
    bool want_handle_deletion;
  };
  const Case cases[] = {
      {"same slice", kSlice, kSlice, true, true, true},
      {"different namespace", kDifferentNamespace, kDifferentNamespace, true, true, false},
      {"different namespace, check original", kDifferentNamespace, kSlice, true, false, false},
      {"different service", kDifferentService, kDifferentService, true, true, false},
      {"expectDelete different service, check original", kDifferentService, kSlice, true, false,
       false},
      {"different generation", kNewerGeneration, kNewerGeneration, true, true, true},
      {"expectDelete different generation, check original", kNewerGeneration, kSlice, true, true,
       true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EndpointSliceTracker tracker;
    tracker.Update(kSlice);
    tracker.ExpectDeletion(c.expect_deletion);
    EXPECT_EQ(tracker.Has(c.check), c.want_has);
    EXPECT_EQ(tracker.ShouldSync(c.check), c.want_should_sync);
    EXPECT_EQ(tracker.HandleDeletion(kSlice), c.want_handle_deletion);
    EXPECT_FALSE(tracker.Has(kSlice));
  }
}

// upstream "empty slices": a tracked Service whose slices were all deleted, none listed.
TEST(TrackerTest, StaleSlicesTrackedServiceWithoutSlices) {
  EndpointSliceTracker tracker;
  tracker.Update(kSlice);
  EXPECT_FALSE(tracker.HandleDeletion(kSlice));  // not expected: the caller would requeue
  EXPECT_FALSE(tracker.StaleSlices(MakeService(), std::vector<model::EndpointSlice>{}));
}

// Deleting an untracked slice is expected (nothing to requeue for).
TEST(TrackerTest, HandleDeletionOfUntrackedSlice) {
  EndpointSliceTracker tracker;
  EXPECT_TRUE(tracker.HandleDeletion(kSlice));
  tracker.Update(kDifferentService);
  EXPECT_TRUE(tracker.HandleDeletion(MakeSlice("unknown", 1, "ns1", "svc2")));
}

// TestEndpointSliceTrackerDeleteService: only the named Service is forgotten.
TEST(TrackerTest, DeleteService) {
  struct Case {
    std::string_view name;
    std::string ns;
    std::string service;
    bool want_has;
  };
  const Case cases[] = {
      {"same service", "ns1", "svc1", false},
      {"different namespace", "ns2", "svc1", true},
      {"different service", "ns1", "svc2", true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EndpointSliceTracker tracker;
    tracker.Update(kSlice);
    tracker.DeleteService(c.ns, c.service);
    EXPECT_EQ(tracker.Has(kSlice), c.want_has);
    EXPECT_EQ(tracker.ShouldSync(kSlice), !c.want_has);
  }
}

// The order a controller releasing a Service's slices must follow (upstream's
// deleteMirroredSlices): forget the Service, then expect each deletion. A sync that comes back
// before the slice cache has seen the deletes then finds the cache stale; the delete event is
// expected (no requeue), after which the cache is current again. Expecting first and forgetting
// after loses the expectation, and the deleted slice would pass for a current one.
TEST(TrackerTest, ReleasedSlicesStayExpectedUntilTheirDeletesArrive) {
  EndpointSliceTracker tracker;
  tracker.Update(kSlice);
  tracker.DeleteService("ns1", "svc1");
  tracker.ExpectDeletion(kSlice);
  const std::vector<model::EndpointSlice> cache_with_deleted = {kSlice};
  EXPECT_TRUE(tracker.StaleSlices(MakeService(), cache_with_deleted));
  EXPECT_TRUE(tracker.HandleDeletion(kSlice.metadata));  // expected: no requeue
  EXPECT_FALSE(tracker.StaleSlices(MakeService(), std::vector<model::EndpointSlice>{}));

  EndpointSliceTracker wrong_order;
  wrong_order.Update(kSlice);
  wrong_order.ExpectDeletion(kSlice);
  wrong_order.DeleteService("ns1", "svc1");
  EXPECT_FALSE(wrong_order.StaleSlices(MakeService(), cache_with_deleted));
}

// Scenario 40 (controller-level stale check): informer generation 10 against tracked 12 is stale;
// against 10 or 1 it is not.
TEST(TrackerTest, Scenario40_StaleInformerGenerations) {
  struct Case {
    std::int64_t tracked;
    bool want_stale;
  };
  for (const Case& c : {Case{12, true}, Case{10, false}, Case{1, false}}) {
    SCOPED_TRACE(c.tracked);
    EndpointSliceTracker tracker;
    tracker.Update(MakeSlice("uid-1", c.tracked));
    const std::vector<model::EndpointSlice> listed = {MakeSlice("uid-1", 10)};
    EXPECT_EQ(tracker.StaleSlices(MakeService("svc-uid"), listed), c.want_stale);
  }
}

// A Service recreated with a new UID drops what was tracked for the old one (upstream S1).
TEST(TrackerTest, RecreatedServiceClearsObsoleteWrites) {
  EndpointSliceTracker tracker;
  EXPECT_FALSE(tracker.StaleSlices(MakeService("uid-old"), std::vector<model::EndpointSlice>{}));
  tracker.Update(kSlice);
  EXPECT_TRUE(tracker.StaleSlices(MakeService("uid-old"), std::vector<model::EndpointSlice>{}));
  EXPECT_FALSE(tracker.StaleSlices(MakeService("uid-new"), std::vector<model::EndpointSlice>{}));
  EXPECT_FALSE(tracker.Has(kSlice));
  // An unknown (empty) UID never clears.
  tracker.Update(kSlice);
  EXPECT_TRUE(tracker.StaleSlices(MakeService(""), std::vector<model::EndpointSlice>{}));
}

// A slice without the service-name label is tracked under the empty name.
TEST(TrackerTest, SliceWithoutServiceNameLabel) {
  EndpointSliceTracker tracker;
  model::EndpointSlice slice = kSlice;
  slice.metadata.labels.clear();
  tracker.Update(slice);
  EXPECT_TRUE(tracker.Has(slice));
  EXPECT_FALSE(tracker.Has(kSlice));
}

// Concurrent writers and readers are safe (meaningful under the sanitizers).
TEST(TrackerTest, ConcurrentUse) {
  // Two writers record their own slices of one Service while a reader queries and forgets a third
  // slice of it; afterwards every writer's last record for each slice must be there: no update is
  // lost or torn by the others holding the same Service's map.
  constexpr int kRounds = 500;
  constexpr int kSlicesPerWriter = 7;
  EndpointSliceTracker tracker;
  auto write = [&](const std::string& prefix) {
    for (int i = 0; i < kRounds; ++i) {
      const model::EndpointSlice slice =
          MakeSlice(prefix + std::to_string(i % kSlicesPerWriter), i);
      tracker.Update(slice);
      if (i % 3 == 0) tracker.ExpectDeletion(slice);
    }
  };
  std::thread writer_a([&] { write("a-"); });
  std::thread writer_b([&] { write("b-"); });
  std::thread reader([&] {
    for (int i = 0; i < kRounds; ++i) {
      (void)tracker.ShouldSync(kSlice);
      (void)tracker.StaleSlices(MakeService(), std::vector<model::EndpointSlice>{kSlice});
      tracker.Update(MakeSlice("reader", i));
      (void)tracker.HandleDeletion(MakeSlice("reader", i));
    }
  });
  writer_a.join();
  writer_b.join();
  reader.join();
  for (const std::string prefix : {"a-", "b-"}) {
    for (int k = 0; k < kSlicesPerWriter; ++k) {
      // The last round that wrote slice k.
      int last = kRounds - 1;
      while (last % kSlicesPerWriter != k) --last;
      const std::int64_t want =
          last % 3 == 0 ? EndpointSliceTracker::kDeletionExpected : std::int64_t{last};
      SCOPED_TRACE(prefix + std::to_string(k));
      EXPECT_EQ(tracker.GenerationForTest(MakeSlice(prefix + std::to_string(k))), want);
    }
  }
  // The reader forgot its slice every round.
  EXPECT_EQ(tracker.GenerationForTest(MakeSlice("reader")), std::nullopt);
}

}  // namespace
}  // namespace slicewright::reconcile

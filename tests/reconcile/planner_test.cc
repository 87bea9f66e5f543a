#include "slicewright/reconcile/planner.h"

#include <algorithm>
#include <random>

#include <gtest/gtest.h>

#include "slicewright/reconcile/fingerprint.h"
#include "slicewright/reconcile/render.h"

#include "reconcile/planner_test_util.h"

namespace slicewright::reconcile {
namespace {

using testing::ApplyPlan;
using testing::FooDesired;
using testing::FooLabels;
using testing::Lengths;
using testing::PodEndpoint;
using testing::PodEndpoints;
using testing::Port;
using testing::SortedLengths;
using testing::StoredSlice;

PlanOptions DefaultOptions(int max = 100) {
  PlanOptions options;
  options.max_endpoints_per_slice = max;
  return options;
}

std::vector<std::size_t> Sorted(std::vector<std::size_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}

// Scenario 1: a Service without pods gets exactly one placeholder slice.
TEST(PlannerTest, Scenario01_EmptyServiceCreatesPlaceholder) {
  const Plan plan = PlanSlices(FooDesired(0), {}, DefaultOptions());
  ASSERT_EQ(plan.actions.size(), 1U);
  const model::EndpointSlice& slice = plan.actions[0].slice;
  EXPECT_EQ(plan.actions[0].operation, Operation::kCreate);
  EXPECT_EQ(slice.metadata.generate_name, "foo-");
  EXPECT_EQ(slice.metadata.labels.at("kubernetes.io/service-name"), "foo");
  EXPECT_TRUE(slice.ports.empty());
  EXPECT_TRUE(slice.endpoints.empty());
  EXPECT_EQ(slice.address_type, "IPv4");
  ASSERT_EQ(plan.stats.groups.size(), 1U);
  EXPECT_EQ(plan.stats.groups[0], (GroupStats{"IPv4", "", 0, 1}));
}

// Scenario 2: an existing slice equal to a fresh placeholder is left alone.
TEST(PlannerTest, Scenario02_ExistingIdenticalPlaceholderKept) {
  const std::vector<model::EndpointSlice> existing = {StoredSlice("foo-abc", {}, {})};
  const Plan plan = PlanSlices(FooDesired(0), existing, DefaultOptions());
  EXPECT_TRUE(plan.actions.empty()) << Render(plan);
  EXPECT_EQ(plan.unchanged, std::vector<std::string>{"foo-abc"});
}

// Scenario 3: an empty slice with other labels is recycled into the placeholder (one update).
TEST(PlannerTest, Scenario03_ExistingDifferentPlaceholderUpdated) {
  std::vector<model::EndpointSlice> existing = {StoredSlice("foo-abc", {}, {})};
  existing[0].metadata.labels = {{"bar", "baz"}};
  const Plan plan = PlanSlices(FooDesired(0), existing, DefaultOptions());
  ASSERT_EQ(plan.actions.size(), 1U) << Render(plan);
  EXPECT_EQ(plan.actions[0].operation, Operation::kUpdate);
  EXPECT_EQ(plan.actions[0].slice.metadata.name, "foo-abc");
  EXPECT_EQ(plan.actions[0].slice.metadata.labels, FooLabels());
}

// Scenario 4: 250 pods and no slices make three slices of 100, 100 and 50.
TEST(PlannerTest, Scenario04_ManyPodsNoSlices) {
  const Plan plan = PlanSlices(FooDesired(250, 0, {Port("foo", 80)}, 3), {}, DefaultOptions());
  EXPECT_EQ(plan.Count(Operation::kCreate), 3U);
  EXPECT_EQ(plan.actions.size(), 3U);
  EXPECT_EQ(Sorted(Lengths(plan, Operation::kCreate)), (std::vector<std::size_t>{50, 100, 100}));
  EXPECT_EQ(plan.stats.added(), 250);
}

// Scenario 5: with full-match slices of 62 and 61, the remainder fills the fuller one.
TEST(PlannerTest, Scenario05_SomePreexistingSlices) {
  const std::vector<model::EndpointSlice> existing = {StoredSlice("a", PodEndpoints(0, 62)),
                                                      StoredSlice("b", PodEndpoints(62, 61))};
  const Plan plan = PlanSlices(FooDesired(250), existing, DefaultOptions());
  ASSERT_EQ(plan.actions.size(), 2U) << Render(plan);
  EXPECT_EQ(plan.actions[0].operation, Operation::kCreate);
  EXPECT_EQ(plan.actions[0].slice.endpoints.size(), 100U);
  EXPECT_EQ(plan.actions[1].operation, Operation::kUpdate);
  EXPECT_EQ(plan.actions[1].slice.metadata.name, "a");
  EXPECT_EQ(plan.actions[1].slice.endpoints.size(), 89U);
  EXPECT_EQ(plan.stats.added(), 127);
  EXPECT_EQ(plan.unchanged, std::vector<std::string>{"b"});
}

// Scenario 5 with stored hints and desired groups flagged without_hints (as the Service source
// flags its own): the planner skips clearing its creates, yet no written slice keeps a stored
// hint, whether the slice was rebuilt from desired endpoints or copied from a stored one.
TEST(PlannerTest, StoredHintsClearedWhenDesiredGroupsHaveNone) {
  std::vector<model::Endpoint> hinted = PodEndpoints(62, 61);
  for (model::Endpoint& endpoint : hinted) {
    endpoint.hints = model::EndpointHints{{"zone-a"}, {}};
  }
  std::vector<model::EndpointSlice> existing = {StoredSlice("a", PodEndpoints(0, 62)),
                                                StoredSlice("b", hinted)};
  for (const int desired_count : {250, 123 + 30}) {
    DesiredEndpoints desired = FooDesired(desired_count);
    desired.groups[0].without_hints = true;
    const Plan plan = PlanSlices(desired, existing, DefaultOptions());
    EXPECT_EQ(plan.Count(Operation::kUpdate), 2U) << Render(plan);  // "b" only for its hints
    for (const SliceAction& action : plan.actions) {
      for (const model::Endpoint& endpoint : action.slice.endpoints) {
        EXPECT_FALSE(endpoint.hints.has_value()) << action.slice.metadata.name;
      }
    }
  }
}

// Scenario 6: a remainder that fits no unchanged slice gets a new slice.
TEST(PlannerTest, Scenario06_SomePreexistingWorseAllocation) {
  const std::vector<model::EndpointSlice> existing = {StoredSlice("a", PodEndpoints(0, 74)),
                                                      StoredSlice("b", PodEndpoints(74, 74))};
  const Plan plan = PlanSlices(FooDesired(300), existing, DefaultOptions());
  EXPECT_EQ(plan.Count(Operation::kCreate), 2U);
  EXPECT_EQ(plan.Count(Operation::kUpdate), 0U);
  EXPECT_EQ(Sorted(Lengths(plan, Operation::kCreate)), (std::vector<std::size_t>{52, 100}));
  std::vector<model::EndpointSlice> cluster = existing;
  ApplyPlan(plan, cluster);
  EXPECT_EQ(SortedLengths(cluster), (std::vector<std::size_t>{52, 74, 74, 100}));
}

// Scenario 7: a target port change rewrites the three slices in place (creates recycled).
TEST(PlannerTest, Scenario07_PortChangeUpdatesInPlace) {
  std::vector<model::EndpointSlice> cluster;
  ApplyPlan(PlanSlices(FooDesired(250), {}, DefaultOptions()), cluster);
  const Plan plan = PlanSlices(FooDesired(250, 0, {Port("foo", 81)}), cluster, DefaultOptions());
  EXPECT_EQ(plan.Count(Operation::kUpdate), 3U) << Render(plan);
  EXPECT_EQ(plan.Count(Operation::kCreate), 0U);
  EXPECT_EQ(plan.Count(Operation::kDelete), 0U);
  ApplyPlan(plan, cluster);
  EXPECT_EQ(SortedLengths(cluster), (std::vector<std::size_t>{50, 100, 100}));
  for (const auto& slice : cluster) EXPECT_EQ(*slice.ports[0].port, 81);
}

// Scenario 8: ten slices of 30 are left alone, then repacked into three full ones on a port change.
TEST(PlannerTest, Scenario08_RecyclingRepack) {
  std::vector<model::EndpointSlice> cluster;
  for (int s = 0; s < 10; ++s) {
    cluster.push_back(StoredSlice("foo-" + std::to_string(s), PodEndpoints(s * 30, 30)));
  }
  EXPECT_TRUE(PlanSlices(FooDesired(300), cluster, DefaultOptions()).empty());
  const Plan plan = PlanSlices(FooDesired(300, 0, {Port("foo", 81)}), cluster, DefaultOptions());
  EXPECT_EQ(plan.Count(Operation::kCreate), 0U);
  EXPECT_EQ(plan.Count(Operation::kUpdate), 3U);
  EXPECT_EQ(plan.Count(Operation::kDelete), 7U);
  EXPECT_EQ(plan.stats.added(), 300);
  ApplyPlan(plan, cluster);
  EXPECT_EQ(SortedLengths(cluster), (std::vector<std::size_t>{100, 100, 100}));
}

// Scenario 9: when both slices change, new endpoints go to the fuller one first.
TEST(PlannerTest, Scenario09_FillsFullerChangingSliceFirst) {
  const std::vector<model::EndpointSlice> existing = {StoredSlice("a", PodEndpoints(0, 80)),
                                                      StoredSlice("b", PodEndpoints(100, 20))};
  DesiredEndpoints desired = FooDesired(0);
  EndpointGroup group{"IPv4", {Port("foo", 80)}, {}};
  auto add = [&](int i) { group.endpoints.push_back(PodEndpoint(i, i % 10 != 0)); };
  for (int i = 0; i < 80; ++i) add(i);
  for (int i = 100; i < 120; ++i) add(i);
  for (int i = 80; i < 95; ++i) add(i);  // 15 new pods
  desired.groups.push_back(std::move(group));
  const Plan plan = PlanSlices(desired, existing, DefaultOptions());
  EXPECT_EQ(plan.Count(Operation::kUpdate), 2U);
  EXPECT_EQ(plan.actions.size(), 2U);
  EXPECT_EQ(Sorted(Lengths(plan, Operation::kUpdate)), (std::vector<std::size_t>{20, 95}));
  EXPECT_EQ(plan.stats.added(), 15);
}

// Scenario 10: slices of the deprecated "IP" address type are replaced and deleted last.
TEST(PlannerTest, Scenario10_ReplacesDeprecatedAddressType) {
  std::vector<model::EndpointSlice> existing = {StoredSlice("ip-1", PodEndpoints(0, 80)),
                                                StoredSlice("ip-2", PodEndpoints(80, 50))};
  for (auto& slice : existing) slice.address_type = "IP";
  const Plan plan = PlanSlices(FooDesired(130), existing, DefaultOptions());
  ASSERT_EQ(plan.actions.size(), 4U) << Render(plan);
  EXPECT_EQ(Sorted(Lengths(plan, Operation::kCreate)), (std::vector<std::size_t>{30, 100}));
  EXPECT_EQ(plan.actions[2].operation, Operation::kDelete);
  EXPECT_EQ(plan.actions[3].operation, Operation::kDelete);
  EXPECT_EQ(plan.actions[2].slice.address_type, "IP");
}

// Scenario 11: a slice owned by another Service UID is replaced, never recycled.
TEST(PlannerTest, Scenario11_OwnershipEnforced) {
  const std::vector<model::EndpointSlice> owned = {StoredSlice("a", PodEndpoints(0, 1))};
  EXPECT_TRUE(PlanSlices(FooDesired(1), owned, DefaultOptions()).empty());
  const std::vector<model::EndpointSlice> foreign = {
      StoredSlice("a", PodEndpoints(0, 1), {Port("foo", 80)}, "other-uid")};
  const Plan plan = PlanSlices(FooDesired(1), foreign, DefaultOptions());
  ASSERT_EQ(plan.actions.size(), 2U) << Render(plan);
  EXPECT_EQ(plan.actions[0].operation, Operation::kCreate);
  EXPECT_EQ(plan.actions[1].operation, Operation::kDelete);
  EXPECT_EQ(plan.actions[1].slice.metadata.name, "a");
}

// Scenario 13: maxEndpointsPerSlice bounds every slice.
TEST(PlannerTest, Scenario13_MaxEndpointsPerSlice) {
  struct Case {
    int max;
    std::vector<std::size_t> lengths;
  };
  const Case cases[] = {{50, {50, 50, 50, 50, 50}},
                        {80, {10, 80, 80, 80}},
                        {150, {100, 150}},
                        {250, {250}},
                        {500, {250}}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.max);
    const Plan plan = PlanSlices(FooDesired(250), {}, DefaultOptions(c.max));
    EXPECT_EQ(Sorted(Lengths(plan, Operation::kCreate)), c.lengths);
  }
}

// Scenario 15: scaling down rewrites the one slice and counts the removed endpoints.
TEST(PlannerTest, Scenario15_ScaleDown) {
  std::vector<model::EndpointSlice> cluster;
  ApplyPlan(PlanSlices(FooDesired(20), {}, DefaultOptions()), cluster);
  ASSERT_EQ(SortedLengths(cluster), std::vector<std::size_t>{20});
  const Plan plan = PlanSlices(FooDesired(10), cluster, DefaultOptions());
  ASSERT_EQ(plan.actions.size(), 1U);
  EXPECT_EQ(plan.actions[0].operation, Operation::kUpdate);
  EXPECT_EQ(plan.actions[0].slice.endpoints.size(), 10U);
  EXPECT_EQ(plan.stats.removed(), 10);
  EXPECT_EQ(plan.stats.groups[0].endpoints, 10);
}

// Scenario 16: added and removed counts per sync, once per address type.
TEST(PlannerTest, Scenario16_AddedAndRemovedPerSync) {
  const std::vector<model::EndpointSlice> one = {StoredSlice("a", PodEndpoints(1, 1))};
  Plan plan = PlanSlices(FooDesired(2), one, DefaultOptions());
  ASSERT_EQ(plan.stats.per_address_type.size(), 1U);
  EXPECT_EQ(plan.stats.per_address_type[0], (AddressTypeStats{"IPv4", 1, 0}));
  const std::vector<model::EndpointSlice> two = {StoredSlice("a", PodEndpoints(0, 2))};
  plan = PlanSlices(FooDesired(1, 1), two, DefaultOptions());
  EXPECT_EQ(plan.stats.per_address_type[0], (AddressTypeStats{"IPv4", 0, 1}));
}

// Scenario 18: a headless Service without ports is stable when its slice comes back with null
// ports.
TEST(PlannerTest, Scenario18_HeadlessWithoutPortsIsStable) {
  const Plan first = PlanSlices(FooDesired(1, 0, {}), {}, DefaultOptions());
  ASSERT_EQ(first.actions.size(), 1U);
  EXPECT_EQ(first.actions[0].operation, Operation::kCreate);
  std::vector<model::EndpointSlice> cluster;
  ApplyPlan(first, cluster);
  cluster[0].ports.clear();  // "ports": null decodes to an empty list
  EXPECT_TRUE(PlanSlices(FooDesired(1, 0, {}), cluster, DefaultOptions()).empty());
}

// Scenario 19: a label added to the Service is written to every slice.
TEST(PlannerTest, Scenario19_ServiceLabelAddedUpdatesAllSlices) {
  std::vector<model::EndpointSlice> cluster;
  ApplyPlan(PlanSlices(FooDesired(250), {}, DefaultOptions()), cluster);
  DesiredEndpoints desired = FooDesired(250);
  desired.labels["foo"] = "bar";
  const Plan plan = PlanSlices(desired, cluster, DefaultOptions());
  EXPECT_EQ(plan.Count(Operation::kUpdate), 3U);
  EXPECT_EQ(plan.actions.size(), 3U);
  for (const auto& action : plan.actions) EXPECT_EQ(action.slice.metadata.labels.at("foo"), "bar");
}

// Scenario 20 (planner part): differences in reserved labels alone cause no write.
TEST(PlannerTest, Scenario20_ReservedLabelDifferencesCauseNoWrite) {
  std::vector<model::EndpointSlice> existing = {StoredSlice("a", PodEndpoints(0, 3))};
  existing[0].metadata.labels.erase("service.kubernetes.io/headless");
  existing[0].metadata.labels["endpointslice.kubernetes.io/managed-by"] = "actor";
  EXPECT_TRUE(PlanSlices(FooDesired(3), existing, DefaultOptions()).empty());
}

// Scenario 28: a Service being deleted gets no creates, but a recycled create still updates.
TEST(PlannerTest, Scenario28_FinalizeWithServiceBeingDeleted) {
  DesiredEndpoints desired = FooDesired(3);
  desired.owner.being_deleted = true;
  EXPECT_TRUE(PlanSlices(desired, {}, DefaultOptions()).empty());

  // update + create: the update happens, the create is skipped.
  std::vector<model::EndpointSlice> existing = {StoredSlice("to-update", PodEndpoints(0, 100))};
  existing[0].endpoints[0].node_name = "node-2";
  desired = FooDesired(150);
  desired.owner.being_deleted = true;
  Plan plan = PlanSlices(desired, existing, DefaultOptions());
  ASSERT_EQ(plan.actions.size(), 1U) << Render(plan);
  EXPECT_EQ(plan.actions[0].operation, Operation::kUpdate);
  EXPECT_EQ(plan.actions[0].slice.metadata.name, "to-update");

  // create + delete: recycled into an update of the slice being deleted.
  existing = {StoredSlice("to-delete", PodEndpoints(0, 3), {Port("foo", 79)})};
  desired = FooDesired(3);
  desired.owner.being_deleted = true;
  plan = PlanSlices(desired, existing, DefaultOptions());
  ASSERT_EQ(plan.actions.size(), 1U) << Render(plan);
  EXPECT_EQ(plan.actions[0].operation, Operation::kUpdate);
  EXPECT_EQ(plan.actions[0].slice.metadata.name, "to-delete");
  EXPECT_EQ(*plan.actions[0].slice.ports[0].port, 80);
}

// Decision §15.6: a recycled slice carries the resourceVersion of the slice it replaces.
TEST(PlannerTest, RecycledUpdateCarriesBaseResourceVersion) {
  const std::vector<model::EndpointSlice> existing = {
      StoredSlice("old", PodEndpoints(0, 3), {Port("foo", 79)})};
  const Plan plan = PlanSlices(FooDesired(3), existing, DefaultOptions());
  ASSERT_EQ(plan.actions.size(), 1U);
  EXPECT_EQ(plan.actions[0].slice.metadata.name, "old");
  EXPECT_EQ(plan.actions[0].slice.metadata.resource_version, "7");
  EXPECT_EQ(plan.actions[0].slice.metadata.uid, "uid-old");
}

// Decision §15.2: an empty slice owned by an earlier Service UID is not kept as the placeholder.
TEST(PlannerTest, PlaceholderOwnedByOtherUidIsReplaced) {
  const std::vector<model::EndpointSlice> existing = {StoredSlice("stale", {}, {}, "old-uid")};
  const Plan plan = PlanSlices(FooDesired(0), existing, DefaultOptions());
  ASSERT_EQ(plan.actions.size(), 2U) << Render(plan);
  EXPECT_EQ(plan.actions[0].operation, Operation::kCreate);
  EXPECT_EQ(plan.actions[1].operation, Operation::kDelete);
}

// Dual-stack Services get one placeholder per address type.
TEST(PlannerTest, DualStackPlaceholders) {
  DesiredEndpoints desired = FooDesired(0);
  desired.address_types = {"IPv6", "IPv4"};
  const Plan plan = PlanSlices(desired, {}, DefaultOptions());
  ASSERT_EQ(plan.actions.size(), 2U);
  EXPECT_EQ(plan.actions[0].slice.address_type, "IPv4");
  EXPECT_EQ(plan.actions[1].slice.address_type, "IPv6");
}

// A changed node name on one endpoint rewrites only the slice that holds it.
TEST(PlannerTest, EndpointChangeRewritesOnlyItsSlice) {
  std::vector<model::EndpointSlice> cluster;
  ApplyPlan(PlanSlices(FooDesired(1000), {}, DefaultOptions()), cluster);
  ASSERT_EQ(cluster.size(), 10U);
  DesiredEndpoints desired = FooDesired(1000);
  desired.groups[0].endpoints[517].conditions.ready = false;
  const Plan plan = PlanSlices(desired, cluster, DefaultOptions());
  ASSERT_EQ(plan.actions.size(), 1U) << Render(plan);
  EXPECT_EQ(plan.actions[0].operation, Operation::kUpdate);
  EXPECT_EQ(plan.actions[0].slice.endpoints.size(), 100U);
  EXPECT_EQ(plan.unchanged.size(), 9U);
}

// Duplicate endpoints in stored slices are dropped and counted as removed.
TEST(PlannerTest, DuplicateStoredEndpointsDropped) {
  const std::vector<model::EndpointSlice> existing = {StoredSlice("a", PodEndpoints(0, 2)),
                                                      StoredSlice("b", PodEndpoints(1, 2))};
  const Plan plan = PlanSlices(FooDesired(3), existing, DefaultOptions());
  ASSERT_EQ(plan.actions.size(), 1U) << Render(plan);
  EXPECT_EQ(plan.actions[0].slice.metadata.name, "b");
  EXPECT_EQ(plan.actions[0].slice.endpoints.size(), 1U);
  EXPECT_EQ(plan.stats.removed(), 1);
}

// An endpoint held by two slices stays with the first by name, as upstream's name-ordered match
// gives it, although the planner matches slices in the order of their first endpoint ("b"
// first here), with and without fingerprints.
TEST(PlannerTest, ContestedEndpointStaysWithTheFirstSliceByName) {
  const std::vector<model::EndpointSlice> existing = {StoredSlice("a", PodEndpoints(1, 2)),
                                                      StoredSlice("b", PodEndpoints(0, 2))};
  DesiredEndpoints desired = FooDesired(3);
  const Plan plan = PlanSlices(desired, existing, DefaultOptions());
  ASSERT_EQ(plan.actions.size(), 1U) << Render(plan);
  EXPECT_EQ(plan.actions[0].slice.metadata.name, "b");
  EXPECT_EQ(plan.actions[0].slice.endpoints, PodEndpoints(0, 1));
  EXPECT_EQ(plan.stats.removed(), 1);

  desired.groups[0].fingerprints = FingerprintEndpoints(desired.groups[0].endpoints);
  const std::vector<SliceFingerprints> fingerprints = {FingerprintSlice(existing[0]),
                                                       FingerprintSlice(existing[1])};
  PlanOptions options = DefaultOptions();
  options.existing_fingerprints = &fingerprints;
  EXPECT_EQ(Render(PlanSlices(desired, existing, options)), Render(plan));
}

// Stored slices that overlap at random, under random names, plan the same with and without
// fingerprints and whatever order they are listed in.
TEST(PlannerTest, OverlappingStoredSlicesPlanIndependentlyOfListOrder) {
  std::mt19937 rng(11);
  for (int round = 0; round < 40; ++round) {
    SCOPED_TRACE(round);
    const int count = 1 + static_cast<int>(rng() % 300);
    DesiredEndpoints desired = FooDesired(count);
    std::vector<model::EndpointSlice> existing;
    const int slices = 1 + static_cast<int>(rng() % 8);
    for (int s = 0; s < slices; ++s) {
      const int first = static_cast<int>(rng() % static_cast<unsigned>(count + 20));
      const int length = static_cast<int>(rng() % 120);
      std::vector<model::Endpoint> endpoints = PodEndpoints(first, length);
      if (!endpoints.empty() && rng() % 3 == 0) {
        endpoints[rng() % endpoints.size()].conditions.ready = false;
      }
      existing.push_back(StoredSlice("s-" + std::to_string(rng() % 1000) + "-" + std::to_string(s),
                                     std::move(endpoints)));
    }
    const std::string reference = Render(PlanSlices(desired, existing, DefaultOptions()));
    std::vector<model::EndpointSlice> shuffled = existing;
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    EXPECT_EQ(Render(PlanSlices(desired, shuffled, DefaultOptions())), reference);

    desired.groups[0].fingerprints = FingerprintEndpoints(desired.groups[0].endpoints);
    std::vector<SliceFingerprints> fingerprints;
    for (const model::EndpointSlice& slice : shuffled) {
      fingerprints.push_back(FingerprintSlice(slice));
    }
    PlanOptions options = DefaultOptions();
    options.existing_fingerprints = &fingerprints;
    EXPECT_EQ(Render(PlanSlices(desired, shuffled, options)), reference);
  }
}

// Desired endpoints in any order, with duplicates, give the same plan as sorted unique input;
// the later duplicate wins, as EndpointSet.Insert replaces.
TEST(PlannerTest, UnsortedDesiredInputIsNormalised) {
  DesiredEndpoints sorted = FooDesired(300);
  DesiredEndpoints shuffled = sorted;
  std::mt19937 rng(42);
  std::shuffle(shuffled.groups[0].endpoints.begin(), shuffled.groups[0].endpoints.end(), rng);
  model::Endpoint stale = PodEndpoint(5);
  stale.node_name = "stale";
  shuffled.groups[0].endpoints.insert(shuffled.groups[0].endpoints.begin(), stale);
  EXPECT_EQ(Render(PlanSlices(sorted, {}, DefaultOptions())),
            Render(PlanSlices(shuffled, {}, DefaultOptions())));
}

std::string RandomText(std::mt19937& rng) {
  // A tiny alphabet (with bytes above 0x7f) makes shared prefixes, equal texts and every length
  // 0-24 common, so the planner's word-wise comparisons meet all their edge cases.
  static constexpr char kAlphabet[] = {'a', 'b', '0', '\x80', '\xff'};
  std::string text(rng() % 25, 'a');
  for (char& c : text) c = kAlphabet[rng() % sizeof(kAlphabet)];
  return text;
}

// Random texts plan the same in any input order (the later duplicate winning), a stored plan
// is stable, and one changed field makes exactly one write.
TEST(PlannerTest, RandomTextsPlanIndependentlyOfOrder) {
  std::mt19937 rng(7);
  for (int round = 0; round < 30; ++round) {
    SCOPED_TRACE(round);
    DesiredEndpoints desired = FooDesired(0);
    EndpointGroup group{"IPv4", {Port("foo", 80)}, {}};
    const int count = 1 + static_cast<int>(rng() % 400);
    for (int i = 0; i < count; ++i) {
      model::Endpoint endpoint = PodEndpoint(i);
      endpoint.addresses = {RandomText(rng)};
      endpoint.target_ref->name = RandomText(rng);
      endpoint.target_ref->uid = RandomText(rng);
      endpoint.node_name = "node-name-" + RandomText(rng);
      group.endpoints.push_back(std::move(endpoint));
    }
    // The reference normal form: sorted by identity, the last of equal identities kept.
    std::vector<model::Endpoint> normal;
    for (const model::Endpoint& endpoint : group.endpoints) {
      auto same = std::find_if(normal.begin(), normal.end(), [&](const model::Endpoint& e) {
        return CompareEndpointIdentity(e, endpoint) == 0;
      });
      if (same != normal.end()) {
        *same = endpoint;
      } else {
        normal.push_back(endpoint);
      }
    }
    std::sort(normal.begin(), normal.end(), [](const model::Endpoint& a, const model::Endpoint& b) {
      return CompareEndpointIdentity(a, b) < 0;
    });
    DesiredEndpoints sorted = desired;
    sorted.groups.push_back(EndpointGroup{"IPv4", group.ports, normal});
    desired.groups.push_back(std::move(group));

    // Reversed input is the case a wrong "already sorted" verdict would let through.
    DesiredEndpoints reversed = sorted;
    std::reverse(reversed.groups[0].endpoints.begin(), reversed.groups[0].endpoints.end());

    const Plan plan = PlanSlices(desired, {}, DefaultOptions());
    EXPECT_EQ(Render(plan), Render(PlanSlices(sorted, {}, DefaultOptions())));
    EXPECT_EQ(Render(plan), Render(PlanSlices(reversed, {}, DefaultOptions())));
    std::vector<model::EndpointSlice> cluster;
    ApplyPlan(plan, cluster);
    EXPECT_TRUE(PlanSlices(desired, cluster, DefaultOptions()).empty());
    EXPECT_TRUE(PlanSlices(reversed, cluster, DefaultOptions()).empty());
    // Same length, same leading bytes, only the last byte differs.
    const std::size_t changed = rng() % normal.size();
    std::optional<model::InlineString>& node_name = sorted.groups[0].endpoints[changed].node_name;
    std::string node = node_name->str();
    node.back() = node.back() == 'a' ? 'b' : 'a';
    node_name = node;
    const Plan next = PlanSlices(sorted, cluster, DefaultOptions());
    EXPECT_EQ(next.actions.size(), 1U) << Render(next);
  }
}

// Input in reverse identity order, with texts that differ within their first eight bytes, is
// recognised as unsorted (a wrong "already sorted" verdict would break every lookup).
TEST(PlannerTest, ReverseOrderedLongTextsAreSorted) {
  DesiredEndpoints forward = FooDesired(0);
  EndpointGroup group{"IPv4", {Port("foo", 80)}, {}};
  for (int i = 0; i < 300; ++i) {
    model::Endpoint endpoint = PodEndpoint(i);
    std::string number = std::to_string(100000000 + i);  // nine digits, distinct in bytes 6-8
    endpoint.addresses = {number + "-address"};
    group.endpoints.push_back(std::move(endpoint));
  }
  forward.groups.push_back(group);
  DesiredEndpoints reversed = forward;
  std::reverse(reversed.groups[0].endpoints.begin(), reversed.groups[0].endpoints.end());
  const Plan plan = PlanSlices(forward, {}, DefaultOptions());
  EXPECT_EQ(Render(plan), Render(PlanSlices(reversed, {}, DefaultOptions())));
  std::vector<model::EndpointSlice> cluster;
  ApplyPlan(plan, cluster);
  EXPECT_TRUE(PlanSlices(reversed, cluster, DefaultOptions()).empty());
}

// The moving overload plans exactly what the copying one does, and inputs are never modified.
TEST(PlannerTest, MoveOverloadMatchesAndInputsUnchanged) {
  std::vector<model::EndpointSlice> cluster = {StoredSlice("a", PodEndpoints(0, 62)),
                                               StoredSlice("b", PodEndpoints(62, 61))};
  const std::vector<model::EndpointSlice> cluster_before = cluster;
  const DesiredEndpoints desired = FooDesired(250, 0, {Port("foo", 80)}, 7);
  const DesiredEndpoints desired_before = desired;
  const std::string copied = Render(PlanSlices(desired, cluster, DefaultOptions()));
  DesiredEndpoints movable = desired;
  EXPECT_EQ(Render(PlanSlices(std::move(movable), cluster, DefaultOptions())), copied);
  EXPECT_EQ(cluster, cluster_before);
  EXPECT_EQ(desired.groups[0].endpoints, desired_before.groups[0].endpoints);
}

// The trigger time is written on slices that change, and removed when zero.
TEST(PlannerTest, TriggerTimeAnnotation) {
  DesiredEndpoints desired = FooDesired(2);
  desired.trigger_time = model::Time{1546300801500000000};  // 2019-01-01T00:00:01.5Z
  const Plan plan = PlanSlices(desired, {}, DefaultOptions());
  ASSERT_EQ(plan.actions.size(), 1U);
  EXPECT_EQ(plan.actions[0].slice.metadata.annotations.at(
                "endpoints.kubernetes.io/last-change-trigger-time"),
            "2019-01-01T00:00:01.5Z");
  std::vector<model::EndpointSlice> cluster;
  ApplyPlan(plan, cluster);
  // The annotation alone never causes a write...
  EXPECT_TRUE(PlanSlices(FooDesired(2), cluster, DefaultOptions()).empty());
  // ...but a write without a trigger time removes it.
  const Plan next = PlanSlices(FooDesired(3), cluster, DefaultOptions());
  ASSERT_EQ(next.actions.size(), 1U);
  EXPECT_FALSE(next.actions[0].slice.metadata.annotations.contains(
      "endpoints.kubernetes.io/last-change-trigger-time"));
}

// Without ownership enforcement and placeholders (mirroring), foreign slices are reused and
// an empty address type publishes nothing.
TEST(PlannerTest, MirroringStyleOptions) {
  PlanOptions options = DefaultOptions();
  options.ownership_enforced = false;
  options.placeholder_enabled = false;
  EXPECT_TRUE(PlanSlices(FooDesired(0), {}, options).empty());
  const std::vector<model::EndpointSlice> foreign = {
      StoredSlice("a", PodEndpoints(0, 1), {Port("foo", 80)}, "other-uid")};
  EXPECT_TRUE(PlanSlices(FooDesired(1), foreign, options).empty());
}

// Annotation comparison (mirroring): a changed desired annotation rewrites the slice.
TEST(PlannerTest, ComparesAnnotationsWhenAsked) {
  PlanOptions options = DefaultOptions();
  options.compare_annotations = true;
  std::vector<model::EndpointSlice> cluster = {StoredSlice("a", PodEndpoints(0, 2))};
  cluster[0].metadata.annotations["endpoints.kubernetes.io/last-change-trigger-time"] = "x";
  // Our Endpoints controller's mark, copied by kube-controller-manager's mirroring from an
  // Endpoints we wrote, is tolerated too (ours never copies it).
  cluster[0].metadata.annotations["endpoints.slicewright.io/written-subsets"] = "0123456789abcdef";
  EXPECT_TRUE(PlanSlices(FooDesired(2), cluster, options).empty());
  DesiredEndpoints desired = FooDesired(2);
  desired.annotations["team"] = "blue";
  const Plan plan = PlanSlices(desired, cluster, options);
  ASSERT_EQ(plan.actions.size(), 1U);
  EXPECT_EQ(plan.actions[0].slice.metadata.annotations.at("team"), "blue");
}

// Without a topology cache, a requested topology mode still turns trafficDistribution off
// (spec §6.1 useTD = validTD && !hintsEnabled): hints are removed, not set to the zone.
TEST(PlannerTest, RequestedTopologyModeTurnsTrafficDistributionOffWithoutCache) {
  DesiredEndpoints desired = FooDesired(2);
  for (model::Endpoint& endpoint : desired.groups[0].endpoints) {
    endpoint.zone = "zone-a";
  }
  desired.traffic_distribution = "PreferClose";
  const Plan close = PlanSlices(desired, {}, DefaultOptions());
  ASSERT_EQ(close.actions.size(), 1U);
  EXPECT_TRUE(close.actions[0].slice.endpoints[0].hints.has_value());
  EXPECT_EQ(close.stats.traffic_distribution_label, "PreferClose");

  desired.topology_hints_requested = true;
  const Plan plan = PlanSlices(desired, {}, DefaultOptions());
  ASSERT_EQ(plan.actions.size(), 1U);
  EXPECT_FALSE(plan.actions[0].slice.endpoints[0].hints.has_value());
  EXPECT_EQ(plan.stats.traffic_distribution_label, "");
}

// Golden rendering of a small plan.
TEST(PlannerTest, RendersCanonicalText) {
  const Plan plan = PlanSlices(FooDesired(3, 0, {Port("foo", 80)}, 2), {}, DefaultOptions());
  EXPECT_EQ(Render(plan),
            "create foo-* IPv4 ports=[foo/TCP/80/~] endpoints(3)=[1.2.3.4! 1.2.3.5 1.2.3.6!]\n");
}

// Port map keys ignore order and treat nil and empty alike; unset fields differ from set ones.
TEST(PlannerTest, PortMapKeyIsOrderInsensitive) {
  const std::vector<model::EndpointPort> a = {Port("http", 80), Port("https", 443)};
  const std::vector<model::EndpointPort> b = {Port("https", 443), Port("http", 80)};
  EXPECT_EQ(PortMapKey(a), PortMapKey(b));
  EXPECT_EQ(PortMapKey({}), "");
  model::EndpointPort with_app = Port("http", 80);
  with_app.app_protocol = "http";
  EXPECT_NE(PortMapKey(std::vector<model::EndpointPort>{with_app}),
            PortMapKey(std::vector<model::EndpointPort>{Port("http", 80)}));
}

// generateName is "<name>-" when that is a valid prefix.
TEST(PlannerTest, GenerateName) {
  EXPECT_EQ(SliceGenerateName("foo"), "foo-");
  EXPECT_EQ(SliceGenerateName("Foo_Bar"), "Foo_Bar");
}

// A held slice (EndpointGroup::held) is planned without its endpoints being desired again: the
// plan is the one for the endpoints built (here the new pod tops up the held slice, the fullest),
// and it counts them among the group's endpoints.
TEST(PlannerTest, HeldSliceKeptAsIfItsEndpointsWereBuilt) {
  const std::vector<model::EndpointSlice> existing = {StoredSlice("a", PodEndpoints(0, 3)),
                                                      StoredSlice("b", PodEndpoints(3, 2))};
  DesiredEndpoints built = FooDesired(6);
  const Plan want = PlanSlices(built, existing, PlanOptions());
  DesiredEndpoints holding = FooDesired(3, 3);  // pods 3-5; pods 0-2 are in "a", held
  holding.groups[0].held = {&existing[0]};
  const Plan got = PlanSlices(holding, existing, PlanOptions());
  ASSERT_EQ(got.actions.size(), want.actions.size());
  ASSERT_EQ(got.actions.size(), 1U);
  EXPECT_EQ(got.actions[0].operation, Operation::kUpdate);
  EXPECT_EQ(got.actions[0].slice, want.actions[0].slice);
  EXPECT_EQ(got.actions[0].slice.metadata.name, "a");
  EXPECT_EQ(got.unchanged, want.unchanged);
  EXPECT_EQ(got.stats.groups, want.stats.groups);
  EXPECT_EQ(got.stats.per_address_type, want.stats.per_address_type);
}

// A source that hands over a held slice the planner was not given is a bug: its endpoints would
// be lost without a word, so the plan says so.
TEST(PlannerTest, HeldSliceNotAmongTheStoredOnesIsReported) {
  const model::EndpointSlice elsewhere = StoredSlice("elsewhere", PodEndpoints(0, 3));
  const std::vector<model::EndpointSlice> existing = {StoredSlice("b", PodEndpoints(3, 2))};
  DesiredEndpoints holding = FooDesired(2, 3);
  holding.groups[0].held = {&elsewhere};
  const Plan plan = PlanSlices(holding, existing, PlanOptions());
  ASSERT_EQ(plan.diagnostics.size(), 1U);
  EXPECT_EQ(plan.diagnostics[0].reason, "HeldSlicePromiseBroken");
  EXPECT_EQ(plan.diagnostics[0].severity, Diagnostic::Severity::kWarning);
}

}  // namespace
}  // namespace slicewright::reconcile

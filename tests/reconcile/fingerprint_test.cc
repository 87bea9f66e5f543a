#include "slicewright/reconcile/fingerprint.h"

#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "slicewright/model/discovery.h"
#include "slicewright/reconcile/planner.h"

#include "reconcile/planner_test_util.h"

namespace slicewright::reconcile {
namespace {

using testing::FooDesired;
using testing::PodEndpoint;

// Equal fingerprints for planner-equal endpoints; every compared field changes the key, and
// targetRef.resourceVersion and hints (which the planner ignores) do not.
TEST(FingerprintTest, KeyCoversExactlyTheComparedFields) {
  const model::Endpoint base = PodEndpoint(1);
  EXPECT_EQ(FingerprintKey(base), FingerprintKey(PodEndpoint(1)));

  model::Endpoint ignored = base;
  ignored.target_ref->resource_version = "42";
  ignored.hints = model::EndpointHints{{"zone-a"}, {}};
  EXPECT_EQ(FingerprintKey(ignored), FingerprintKey(base));

  std::vector<model::Endpoint> variants(14, base);
  variants[0].addresses = {"1.2.3.99"};
  variants[1].addresses.push_back("1.2.3.5");
  variants[2].hostname = "";
  variants[3].hostname = "h";
  variants[4].conditions.ready = std::nullopt;
  variants[5].conditions.serving = false;
  variants[6].conditions.terminating = true;
  variants[7].target_ref->uid = "other";
  variants[8].target_ref->kind = "Other";
  variants[9].target_ref->api_version = "v1";
  variants[10].target_ref->field_path = "spec";
  variants[11].node_name = std::nullopt;
  variants[12].zone = "";
  variants[13].target_ref = std::nullopt;
  const std::string key = FingerprintKey(base);
  for (std::size_t i = 0; i < variants.size(); ++i) {
    EXPECT_NE(FingerprintKey(variants[i]), key) << i;
  }
}

// Length prefixes keep field boundaries: moving a character from one field to the next changes
// the key.
TEST(FingerprintTest, FieldBoundariesAreUnambiguous) {
  model::Endpoint a = PodEndpoint(1);
  model::Endpoint b = a;
  a.target_ref->namespace_ = "ab";
  a.target_ref->name = "c";
  b.target_ref->namespace_ = "a";
  b.target_ref->name = "bc";
  EXPECT_NE(FingerprintKey(a), FingerprintKey(b));
  model::Endpoint long_name = a;
  long_name.target_ref->name = std::string(300, 'x');
  EXPECT_NE(FingerprintKey(long_name), FingerprintKey(a));
}

// A run keeps its keys back to back through replace (same and other length), insert and erase.
TEST(FingerprintTest, RunEdits) {
  std::vector<model::Endpoint> endpoints = {PodEndpoint(1), PodEndpoint(2), PodEndpoint(3)};
  FingerprintRun run = FingerprintEndpoints(endpoints);
  ASSERT_EQ(run.size(), 3U);
  EXPECT_EQ(run.key(1), FingerprintKey(endpoints[1]));
  endpoints[1].conditions.ready = false;  // same length
  run.Replace(1, endpoints[1]);
  EXPECT_EQ(run, FingerprintEndpoints(endpoints));
  endpoints[0].zone = "zone-with-a-long-name";  // longer
  run.Replace(0, endpoints[0]);
  EXPECT_EQ(run, FingerprintEndpoints(endpoints));
  endpoints[0].zone = std::nullopt;  // shorter
  run.Replace(0, endpoints[0]);
  EXPECT_EQ(run, FingerprintEndpoints(endpoints));
  endpoints.insert(endpoints.begin() + 1, PodEndpoint(7));
  run.Insert(1, endpoints[1]);
  EXPECT_EQ(run, FingerprintEndpoints(endpoints));
  endpoints.erase(endpoints.begin());
  run.Erase(0);
  EXPECT_EQ(run, FingerprintEndpoints(endpoints));
  run.clear();
  EXPECT_TRUE(run.empty());
}

// A slice's fingerprints are used only for the version they were taken of.
TEST(FingerprintTest, DescribesOnlyTheSameVersion) {
  model::EndpointSlice slice;
  slice.metadata.uid = "u1";
  slice.metadata.resource_version = "7";
  slice.endpoints = {PodEndpoint(1), PodEndpoint(2)};
  const SliceFingerprints fingerprints = FingerprintSlice(slice);
  ASSERT_EQ(fingerprints.endpoints.size(), 2U);
  EXPECT_TRUE(FingerprintsDescribe(fingerprints, slice));
  model::EndpointSlice newer = slice;
  newer.metadata.resource_version = "8";
  EXPECT_FALSE(FingerprintsDescribe(fingerprints, newer));
  model::EndpointSlice other = slice;
  other.metadata.uid = "u2";
  EXPECT_FALSE(FingerprintsDescribe(fingerprints, other));
  model::EndpointSlice unversioned = slice;
  unversioned.metadata.resource_version.clear();
  EXPECT_FALSE(FingerprintsDescribe(FingerprintSlice(unversioned), unversioned));
}

// The one slice a plan of `desired` (one group) writes, as the API server stores it (version 1).
model::EndpointSlice StoredAsPlanned(const DesiredEndpoints& desired) {
  model::EndpointSlice slice;
  slice.metadata.name = "foo-1";
  slice.metadata.uid = "u1";
  slice.metadata.resource_version = "1";
  slice.metadata.namespace_ = "test";
  slice.metadata.labels = desired.labels;
  slice.metadata.owner_references = {
      model::OwnerReference{"v1", "Service", "foo", "test-foo", true, true}};
  slice.address_type = "IPv4";
  slice.ports = desired.groups[0].ports;
  slice.endpoints = desired.groups[0].endpoints;
  return slice;
}

// Stale fingerprints (of an older version of a slice) are ignored: the plan still rewrites the
// changed endpoint.
TEST(FingerprintTest, PlannerIgnoresStaleFingerprints) {
  DesiredEndpoints desired = FooDesired(3);
  desired.groups[0].fingerprints = FingerprintEndpoints(desired.groups[0].endpoints);
  const model::EndpointSlice slice = StoredAsPlanned(desired);
  const std::vector<SliceFingerprints> fingerprints = {FingerprintSlice(slice)};
  PlanOptions options;
  options.existing_fingerprints = &fingerprints;
  std::vector<model::EndpointSlice> stored = {slice};
  EXPECT_TRUE(PlanSlices(desired, stored, options).empty());

  // The slice changed behind the fingerprints' back (a newer version).
  stored[0].endpoints[1].conditions.ready = false;
  stored[0].metadata.resource_version = "2";
  const Plan plan = PlanSlices(desired, stored, options);
  ASSERT_EQ(plan.actions.size(), 1U);
  EXPECT_EQ(plan.actions[0].slice.endpoints, desired.groups[0].endpoints);

  // Fingerprints for another number of slices are ignored altogether.
  const std::vector<SliceFingerprints> none;
  options.existing_fingerprints = &none;
  EXPECT_EQ(PlanSlices(desired, stored, options).actions.size(), 1U);
}

// A slice's fingerprints record whether any endpoint has hints, and an unchanged slice with
// hints loses them when the Service asks for none, whether its fingerprints are current or stale.
TEST(FingerprintTest, PlannerRemovesHintsOfFingerprintedSlices) {
  DesiredEndpoints desired = FooDesired(3);
  desired.groups[0].fingerprints = FingerprintEndpoints(desired.groups[0].endpoints);
  const model::EndpointSlice slice = StoredAsPlanned(desired);
  EXPECT_FALSE(FingerprintSlice(slice).any_hints);
  std::vector<model::EndpointSlice> stored = {slice};
  std::vector<SliceFingerprints> fingerprints = {FingerprintSlice(slice)};
  PlanOptions options;
  options.existing_fingerprints = &fingerprints;
  EXPECT_TRUE(PlanSlices(desired, stored, options).empty());

  stored[0].endpoints[2].hints = model::EndpointHints{{"zone-a"}, {}};
  stored[0].metadata.resource_version = "2";
  const std::vector<SliceFingerprints> stale = fingerprints;
  fingerprints = {FingerprintSlice(stored[0])};
  EXPECT_TRUE(fingerprints[0].any_hints);
  for (const std::vector<SliceFingerprints>* usable :
       std::vector<const std::vector<SliceFingerprints>*>{&fingerprints, &stale}) {
    options.existing_fingerprints = usable;
    const Plan plan = PlanSlices(desired, stored, options);
    ASSERT_EQ(plan.actions.size(), 1U);
    EXPECT_EQ(plan.actions[0].operation, Operation::kUpdate);
    EXPECT_EQ(plan.actions[0].slice.endpoints, desired.groups[0].endpoints);
  }
}

// Every key a run's methods write gets a new id; ids move with their keys, copies keep them, and
// run equality looks at the keys alone.
TEST(FingerprintTest, RunIdsFollowTheirKeys) {
  std::vector<model::Endpoint> endpoints = {PodEndpoint(1), PodEndpoint(2), PodEndpoint(3)};
  FingerprintRun run = FingerprintEndpoints(endpoints);
  ASSERT_TRUE(run.has_ids());
  EXPECT_LT(run.ids[0], run.ids[1]);
  EXPECT_LT(run.ids[1], run.ids[2]);
  const std::vector<std::uint64_t> before = run.ids;

  run.Replace(1, endpoints[1]);  // the same key, written again
  EXPECT_GT(run.ids[1], before[2]);
  EXPECT_EQ(run.ids[0], before[0]);
  EXPECT_EQ(run.ids[2], before[2]);
  EXPECT_EQ(run, FingerprintEndpoints(endpoints));  // other ids, equal keys

  run.Insert(0, PodEndpoint(0));
  EXPECT_EQ(run.ids.size(), 4U);
  EXPECT_EQ(run.ids[1], before[0]);
  run.Erase(2);
  EXPECT_EQ(run.ids.size(), 3U);
  EXPECT_EQ(run.ids[2], before[2]);
  const FingerprintRun copy = run;
  EXPECT_EQ(copy.ids, run.ids);

  // A stored slice's fingerprints carry no ids: they vouch for nothing.
  model::EndpointSlice slice;
  slice.endpoints = endpoints;
  EXPECT_TRUE(FingerprintSlice(slice).endpoints.ids.empty());
  EXPECT_FALSE(FingerprintSlice(slice).endpoints.has_ids());
}

// A verified run is trusted only for the version of the slice it was taken from: a slice that
// changed behind an unchanged desired state is compared again.
TEST(FingerprintTest, VerifiedRunsFollowTheStoredVersion) {
  DesiredEndpoints desired = FooDesired(3);
  desired.groups[0].fingerprints = FingerprintEndpoints(desired.groups[0].endpoints);
  std::vector<model::EndpointSlice> stored = {StoredAsPlanned(desired)};
  std::vector<SliceFingerprints> fingerprints = {FingerprintSlice(stored[0])};
  std::vector<VerifiedRun> verified;
  PlanOptions options;
  options.existing_fingerprints = &fingerprints;
  options.verified_runs = &verified;
  EXPECT_TRUE(PlanSlices(desired, stored, options).empty());
  ASSERT_EQ(verified.size(), 1U);
  EXPECT_EQ(verified[0].ids, desired.groups[0].fingerprints.ids);
  EXPECT_TRUE(PlanSlices(desired, stored, options).empty());

  stored[0].endpoints[1].conditions.ready = false;
  stored[0].metadata.resource_version = "2";
  fingerprints = {FingerprintSlice(stored[0])};
  const Plan plan = PlanSlices(desired, stored, options);
  ASSERT_EQ(plan.actions.size(), 1U);
  EXPECT_EQ(plan.actions[0].slice.endpoints, desired.groups[0].endpoints);
  EXPECT_TRUE(verified[0].ids.empty());

  // The desired side changed under an unchanged stored version: a new id, compared again.
  stored = {StoredAsPlanned(desired)};
  fingerprints = {FingerprintSlice(stored[0])};
  EXPECT_TRUE(PlanSlices(desired, stored, options).empty());
  ASSERT_FALSE(verified[0].ids.empty());
  desired.groups[0].endpoints[2].conditions.serving = false;
  desired.groups[0].fingerprints.Replace(2, desired.groups[0].endpoints[2]);
  EXPECT_EQ(PlanSlices(desired, stored, options).actions.size(), 1U);
}

// A verified run is not recorded over an unsorted group: its positions are then identity order,
// not the indexes of the fingerprint ids, and the record would vouch for other endpoints. Here it
// named pod1's id for a slice holding pod0, and once pod0 left, the slice was kept as is.
TEST(FingerprintTest, VerifiedRunsAreNotRecordedOverUnsortedGroups) {
  DesiredEndpoints desired = FooDesired(2);
  std::vector<model::Endpoint>& endpoints = desired.groups[0].endpoints;
  std::swap(endpoints[0], endpoints[1]);  // pod1, pod0
  desired.groups[0].fingerprints = FingerprintEndpoints(endpoints);
  const std::vector<model::EndpointSlice> stored = {
      testing::StoredSlice("a", testing::PodEndpoints(0, 1))};
  const std::vector<SliceFingerprints> fingerprints = {FingerprintSlice(stored[0])};
  std::vector<VerifiedRun> verified;
  PlanOptions options;
  options.existing_fingerprints = &fingerprints;
  options.verified_runs = &verified;
  PlanSlices(desired, stored, options);
  ASSERT_EQ(verified.size(), 1U);
  EXPECT_TRUE(verified[0].ids.empty());

  endpoints.erase(endpoints.begin() + 1);  // pod0 leaves; pod1 keeps its id at index 0
  desired.groups[0].fingerprints.Erase(1);
  const Plan plan = PlanSlices(desired, stored, options);
  ASSERT_EQ(plan.actions.size(), 1U);
  EXPECT_EQ(plan.actions[0].operation, Operation::kUpdate);
  EXPECT_EQ(plan.actions[0].slice.endpoints, testing::PodEndpoints(1, 1));
}

// A flat map reads back its map's entries in key order, empty keys and values included.
TEST(FingerprintTest, FlatStringMapKeepsEntriesInOrder) {
  EXPECT_EQ(FlatStringMap().size(), 0U);
  const FlatStringMap flat(model::StringMap{{"b", ""}, {"a", "x"}, {"", "v"}});
  ASSERT_EQ(flat.size(), 3U);
  EXPECT_EQ(flat.key(0), "");
  EXPECT_EQ(flat.value(0), "v");
  EXPECT_EQ(flat.key(1), "a");
  EXPECT_EQ(flat.value(1), "x");
  EXPECT_EQ(flat.key(2), "b");
  EXPECT_EQ(flat.value(2), "");
  EXPECT_NE(FlatStringMap(model::StringMap{{"ab", ""}}),
            FlatStringMap(model::StringMap{{"a", "b"}}));
}

// The planner compares a fingerprinted slice's labels and annotations through the fingerprints'
// flat copies: a changed label or annotation still rewrites the slice, and an ignored label
// still does not.
TEST(FingerprintTest, PlannerComparesMetadataOfFingerprintedSlices) {
  DesiredEndpoints desired = FooDesired(3);
  desired.groups[0].fingerprints = FingerprintEndpoints(desired.groups[0].endpoints);
  desired.annotations = {{"mirrored", "1"}};
  model::EndpointSlice slice = StoredAsPlanned(desired);
  slice.metadata.annotations = desired.annotations;
  PlanOptions options;
  options.compare_annotations = true;
  const auto plan_with_fingerprints = [&](const model::EndpointSlice& stored) {
    const std::vector<SliceFingerprints> fingerprints = {FingerprintSlice(stored)};
    options.existing_fingerprints = &fingerprints;
    return PlanSlices(desired, std::vector<model::EndpointSlice>{stored}, options);
  };
  EXPECT_TRUE(plan_with_fingerprints(slice).empty());

  model::EndpointSlice relabelled = slice;
  relabelled.metadata.labels["team"] = "a";
  EXPECT_EQ(plan_with_fingerprints(relabelled).actions.size(), 1U);

  model::EndpointSlice reannotated = slice;
  reannotated.metadata.annotations["mirrored"] = "2";
  EXPECT_EQ(plan_with_fingerprints(reannotated).actions.size(), 1U);

  model::EndpointSlice ignored = slice;
  ignored.metadata.labels["kubernetes.io/service-name"] = "other";
  EXPECT_TRUE(plan_with_fingerprints(ignored).empty());
}

}  // namespace
}  // namespace slicewright::reconcile

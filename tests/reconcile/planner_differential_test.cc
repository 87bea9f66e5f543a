// PlanSlices under every combination of its speed-ups (stored and desired fingerprints, verified
// runs kept across plans, runs input, the sorted_unique and without_hints promises, the moving
// overload) against the
// literal ReferencePlan, on random Services and clusters synced over several steps.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "slicewright/model/well_known.h"
#include "slicewright/reconcile/fingerprint.h"
#include "slicewright/reconcile/planner.h"
#include "slicewright/reconcile/render.h"

#include "reconcile/planner_test_util.h"
#include "reconcile/reference_planner.h"

namespace slicewright::reconcile {
namespace {

using model::Endpoint;
using model::EndpointPort;
using model::EndpointSlice;

class Random {
 public:
  explicit Random(std::uint32_t seed) : rng_(seed) {}
  std::size_t Below(std::size_t n) { return rng_() % n; }
  bool OneIn(std::size_t n) { return Below(n) == 0; }
  std::optional<bool> Condition() {
    const std::size_t pick = Below(4);
    return pick == 0 ? std::nullopt : std::optional<bool>(pick != 1);
  }
  std::mt19937& engine() { return rng_; }

 private:
  std::mt19937 rng_;
};

// Port sets: nil/empty, one port, two ports in either order (one key), an unnamed port and one
// differing only by appProtocol.
std::vector<EndpointPort> PortSet(std::size_t pick) {
  using testing::Port;
  switch (pick % 6) {
    case 0:
      return {};
    case 1:
      return {Port("http", 80)};
    case 2:
      return {Port("http", 80), Port("dns", 53, "UDP")};
    case 3:
      return {Port("dns", 53, "UDP"), Port("http", 80)};
    case 4:
      return {EndpointPort{std::nullopt, "TCP", 8080, std::nullopt}};
    default:
      return {EndpointPort{"http", "TCP", 80, "h2"}};
  }
}

// Small pools, so that identities collide across groups, slices and steps.
std::string Address(Random& random, const std::string& type) {
  const std::string n = std::to_string(random.Below(14));
  return type == "IPv6" ? "fd00::" + n : "10.0.0." + n;
}

Endpoint RandomEndpoint(Random& random, const std::string& type) {
  Endpoint endpoint;
  const std::size_t addresses = random.OneIn(12) ? 0 : (random.OneIn(8) ? 2 : 1);
  for (std::size_t i = 0; i < addresses; ++i) {
    endpoint.addresses.push_back(Address(random, type));
  }
  endpoint.conditions = {random.Condition(), random.Condition(), random.Condition()};
  if (random.OneIn(4)) {
    endpoint.hostname = "h" + std::to_string(random.Below(2));
  }
  if (!random.OneIn(6)) {
    const std::string pod = "pod" + std::to_string(random.Below(6));
    model::ObjectReference ref{"Pod", random.OneIn(10) ? "" : "test", pod, "uid-" + pod, "", "",
                               ""};
    if (random.OneIn(4)) {
      ref.uid = "uid-other";
    }
    if (random.OneIn(3)) {
      ref.resource_version = std::to_string(random.Below(3));  // never compared
    }
    endpoint.target_ref = std::move(ref);
  }
  if (!random.OneIn(3)) {
    endpoint.node_name = "node-" + std::to_string(random.Below(3));
  }
  if (!random.OneIn(3)) {
    endpoint.zone = "zone-" + std::to_string(random.Below(2));
  }
  if (random.OneIn(4)) {
    model::EndpointHints hints;
    hints.for_zones.push_back("zone-" + std::to_string(random.Below(2)));
    if (random.OneIn(2)) {
      hints.for_nodes.push_back("node-" + std::to_string(random.Below(3)));
    }
    endpoint.hints = std::move(hints);
  }
  return endpoint;
}

// The same identity with the other fields changed, as a pod's update does.
void ChangeBeyondIdentity(Random& random, Endpoint& endpoint) {
  switch (random.Below(4)) {
    case 0:
      endpoint.conditions.ready = random.Condition();
      break;
    case 1:
      endpoint.conditions.terminating = random.Condition();
      break;
    case 2:
      endpoint.zone = "zone-" + std::to_string(random.Below(3));
      break;
    default:
      endpoint.node_name = "node-" + std::to_string(random.Below(4));
  }
}

bool SortedUnique(const std::vector<Endpoint>& endpoints) {
  for (std::size_t i = 1; i < endpoints.size(); ++i) {
    if (CompareEndpointIdentity(endpoints[i - 1], endpoints[i]) >= 0) {
      return false;
    }
  }
  return true;
}

bool WithoutHints(const std::vector<Endpoint>& endpoints) {
  return std::none_of(endpoints.begin(), endpoints.end(),
                      [](const Endpoint& e) { return e.hints.has_value(); });
}

// One desired group as a source keeps it between syncs: its endpoints and their fingerprints,
// edited together, so unchanged endpoints keep their fingerprint ids (VerifiedRun).
struct SourceGroup {
  std::string address_type;
  std::vector<EndpointPort> ports;
  std::vector<Endpoint> endpoints;
  FingerprintRun fingerprints;
  bool keep_sorted = false;  // this source emits sorted, unique endpoints
};

void Normalise(std::vector<Endpoint>& endpoints) {
  std::vector<Endpoint> unique;
  for (const Endpoint& endpoint : endpoints) {
    auto same = std::find_if(unique.begin(), unique.end(), [&](const Endpoint& e) {
      return CompareEndpointIdentity(e, endpoint) == 0;
    });
    if (same != unique.end()) {
      *same = endpoint;  // the later one wins
    } else {
      unique.push_back(endpoint);
    }
  }
  std::sort(unique.begin(), unique.end(),
            [](const Endpoint& a, const Endpoint& b) { return CompareEndpointIdentity(a, b) < 0; });
  endpoints = std::move(unique);
}

// A few endpoints change, arrive or leave; the fingerprints follow one for one.
void MutateGroup(Random& random, SourceGroup& group) {
  const std::size_t changes = 1 + random.Below(3);
  for (std::size_t c = 0; c < changes; ++c) {
    const std::size_t size = group.endpoints.size();
    const std::size_t kind = size == 0 ? 0 : random.Below(3);
    if (kind == 0) {
      Endpoint endpoint = RandomEndpoint(random, group.address_type);
      std::size_t at = random.Below(size + 1);
      if (group.keep_sorted) {
        const auto it = std::lower_bound(
            group.endpoints.begin(), group.endpoints.end(), endpoint,
            [](const Endpoint& a, const Endpoint& b) { return CompareEndpointIdentity(a, b) < 0; });
        if (it != group.endpoints.end() && CompareEndpointIdentity(*it, endpoint) == 0) {
          continue;
        }
        at = static_cast<std::size_t>(it - group.endpoints.begin());
      }
      group.endpoints.insert(group.endpoints.begin() + static_cast<std::ptrdiff_t>(at), endpoint);
      group.fingerprints.Insert(at, endpoint);
    } else if (kind == 1) {
      const std::size_t at = random.Below(size);
      ChangeBeyondIdentity(random, group.endpoints[at]);
      group.fingerprints.Replace(at, group.endpoints[at]);
    } else {
      const std::size_t at = random.Below(size);
      group.endpoints.erase(group.endpoints.begin() + static_cast<std::ptrdiff_t>(at));
      group.fingerprints.Erase(at);
    }
  }
}

struct Case {
  DesiredEndpoints desired;  // without groups: they are built from `sources` for each plan
  std::vector<SourceGroup> sources;
  PlanOptions options;
  std::vector<EndpointSlice> cluster;
};

EndpointSlice RandomSlice(Random& random, const Case& c, const std::string& name) {
  const std::vector<std::string> types = {"IPv4", "IPv4", "IPv6", "FQDN"};
  const std::string type = types[random.Below(types.size())];
  std::vector<EndpointPort> ports = PortSet(random.Below(6));
  // Partly matching: endpoints of a desired group of this type (some changed), and others.
  std::vector<const SourceGroup*> same_type;
  for (const SourceGroup& group : c.sources) {
    if (group.address_type == type && !group.endpoints.empty()) {
      same_type.push_back(&group);
    }
  }
  const SourceGroup* from = same_type.empty() ? nullptr : same_type[random.Below(same_type.size())];
  if (from != nullptr && !random.OneIn(4)) {
    ports = from->ports;
  }
  std::vector<Endpoint> endpoints;
  const auto max = static_cast<std::size_t>(c.options.max_endpoints_per_slice);
  const std::size_t count = random.OneIn(6) ? 0 : random.Below(max + 3);  // some over-full
  for (std::size_t i = 0; i < count; ++i) {
    if (from != nullptr && !random.OneIn(3)) {
      Endpoint endpoint = from->endpoints[random.Below(from->endpoints.size())];
      if (random.OneIn(4)) {
        ChangeBeyondIdentity(random, endpoint);
      }
      endpoints.push_back(std::move(endpoint));
    } else {
      endpoints.push_back(RandomEndpoint(random, type == "IPv6" ? "IPv6" : "IPv4"));
    }
  }
  std::string owner_uid = "test-foo";
  if (random.OneIn(6)) {
    owner_uid = "other-uid";
  }
  EndpointSlice slice =
      testing::StoredSlice(name, std::move(endpoints), std::move(ports), owner_uid);
  slice.address_type = type;
  if (random.OneIn(10)) {
    slice.metadata.owner_references.clear();
  }
  slice.metadata.labels = c.desired.labels;
  if (random.OneIn(6)) {
    slice.metadata.labels["team"] = "red";  // a user label: changed
  }
  if (random.OneIn(6)) {
    slice.metadata.labels[std::string(model::kLabelManagedBy)] = "someone-else";  // ignored
  }
  if (random.OneIn(4)) {
    slice.metadata.annotations[std::string(model::kAnnotationLastChangeTriggerTime)] = "x";
  }
  if (random.OneIn(4)) {
    slice.metadata.annotations = c.desired.annotations;
  }
  return slice;
}

Case RandomCase(Random& random) {
  Case c;
  c.desired.owner = testing::FooOwner();
  c.desired.owner.being_deleted = random.OneIn(10);
  const std::size_t families = random.Below(10);
  if (families < 5) {
    c.desired.address_types = {"IPv4"};
  } else if (families < 7) {
    c.desired.address_types = {"IPv6"};
  } else if (families < 9) {
    c.desired.address_types = {"IPv6", "IPv4"};
  }
  c.desired.labels = testing::FooLabels(random.OneIn(2));
  if (random.OneIn(3)) {
    c.desired.labels["team"] = "red";
  }
  if (random.OneIn(3)) {
    c.desired.annotations["note"] = "n";
  }
  if (random.OneIn(2)) {
    c.desired.trigger_time = model::Time{1546300801500000000};
  }
  const std::vector<std::optional<std::string>> distributions = {
      std::nullopt, std::nullopt, "PreferClose", "PreferSameZone", "PreferSameNode", "Bogus"};
  c.desired.traffic_distribution = distributions[random.Below(distributions.size())];
  c.desired.topology_hints_requested = random.OneIn(5);

  c.options.max_endpoints_per_slice = 1 + static_cast<int>(random.Below(5));
  c.options.placeholder_enabled = !random.OneIn(5);
  c.options.ownership_enforced = !random.OneIn(5);
  c.options.compare_annotations = random.OneIn(3);
  c.options.prefer_same_traffic_distribution = !random.OneIn(3);

  for (const std::string& type : c.desired.address_types) {
    std::vector<std::size_t> keys = {0, 1, 2, 4, 5};  // 2 and 3 share a key: one of them
    std::shuffle(keys.begin(), keys.end(), random.engine());
    const std::size_t groups = random.Below(3);
    for (std::size_t g = 0; g < groups; ++g) {
      SourceGroup group;
      group.address_type = type;
      group.ports = PortSet(keys[g] == 2 && random.OneIn(2) ? 3 : keys[g]);
      const std::size_t count = random.Below(13);
      for (std::size_t i = 0; i < count; ++i) {
        group.endpoints.push_back(RandomEndpoint(random, type));
      }
      group.keep_sorted = !random.OneIn(3);
      if (group.keep_sorted) {
        Normalise(group.endpoints);
      }
      group.fingerprints = FingerprintEndpoints(group.endpoints);
      c.sources.push_back(std::move(group));
    }
  }
  const std::size_t slices = random.Below(7);
  for (std::size_t s = 0; s < slices; ++s) {
    c.cluster.push_back(
        RandomSlice(random, c, "s" + std::to_string(random.Below(50)) + "-" + std::to_string(s)));
  }
  if (random.OneIn(3) && !c.cluster.empty()) {
    // One endpoint in two slices.
    EndpointSlice& a = c.cluster[random.Below(c.cluster.size())];
    EndpointSlice& b = c.cluster[random.Below(c.cluster.size())];
    if (!a.endpoints.empty()) {
      b.endpoints.push_back(a.endpoints[random.Below(a.endpoints.size())]);
    }
  }
  if (random.OneIn(4)) {
    // A placeholder, equal to the one this owner would write or not.
    EndpointSlice placeholder = testing::StoredSlice("p-0", {}, {});
    placeholder.address_type =
        c.desired.address_types.empty() ? "IPv4" : c.desired.address_types[0];
    placeholder.metadata.labels = c.desired.labels;
    if (random.OneIn(2)) {
      placeholder.metadata.labels["stale"] = "1";
    }
    c.cluster.push_back(std::move(placeholder));
  }
  return c;
}

// How a plan's desired groups are handed over.
enum class Form { kEndpoints, kRunsOfMax, kRunsOfOther };

struct Combination {
  Form form = Form::kEndpoints;
  // The source's promises, each set only when it is true: sorted_unique and without_hints.
  bool promises = false;
  // The stored slices' fingerprints (PlanOptions::existing_fingerprints), and the desired
  // endpoints' (EndpointGroup::fingerprints, endpoints form only).
  bool stored_fingerprints = false;
  bool desired_fingerprints = false;
  bool verified_runs = false;
  bool move = false;
};

std::vector<Combination> AllCombinations() {
  std::vector<Combination> all;
  for (Form form : {Form::kEndpoints, Form::kRunsOfMax, Form::kRunsOfOther}) {
    for (bool promises : {false, true}) {
      // None; stored fingerprints only; both; both and verified runs.
      for (int speed : {0, 1, 2, 3}) {
        for (bool move : {false, true}) {
          all.push_back(Combination{form, promises, speed >= 1, speed >= 2, speed == 3, move});
        }
      }
    }
  }
  return all;
}

DesiredEndpoints DesiredFor(const Case& c, const Combination& combination) {
  DesiredEndpoints desired = c.desired;
  const auto max = static_cast<std::size_t>(c.options.max_endpoints_per_slice);
  for (const SourceGroup& source : c.sources) {
    EndpointGroup group{source.address_type, source.ports, {}};
    group.sorted_unique = combination.promises && SortedUnique(source.endpoints);
    group.without_hints = combination.promises && WithoutHints(source.endpoints);
    if (combination.form == Form::kEndpoints) {
      group.endpoints = source.endpoints;
      if (combination.desired_fingerprints) {
        group.fingerprints = source.fingerprints;
      }
    } else if (!source.endpoints.empty()) {
      group.run_capacity = combination.form == Form::kRunsOfMax ? max : max + 1;
      for (std::size_t i = 0; i < source.endpoints.size(); i += group.run_capacity) {
        const std::size_t end = std::min(source.endpoints.size(), i + group.run_capacity);
        group.runs.emplace_back(source.endpoints.begin() + static_cast<std::ptrdiff_t>(i),
                                source.endpoints.begin() + static_cast<std::ptrdiff_t>(end));
      }
    }
    desired.groups.push_back(std::move(group));
  }
  return desired;
}

// Every field the planner writes, so that a difference Render does not show is still named.
std::string Describe(const Plan& plan) {
  std::string out = Render(plan);
  for (const SliceAction& action : plan.actions) {
    const model::ObjectMeta& meta = action.slice.metadata;
    out += std::string(OperationName(action.operation)) + " " + meta.name +
           " rv=" + meta.resource_version + " uid=" + meta.uid +
           " gen=" + std::to_string(meta.generation) +
           " owners=" + std::to_string(meta.owner_references.size()) + " labels=";
    for (const auto& [key, value] : meta.labels) out += key + "=" + value + ",";
    out += " annotations=";
    for (const auto& [key, value] : meta.annotations) out += key + "=" + value + ",";
    out += "\n";
    for (const Endpoint& e : action.slice.endpoints) {
      out += "  " + (e.addresses.empty() ? std::string("-") : e.addresses[0]) +
             " node=" + (e.node_name ? e.node_name->str() : "nil") +
             " zone=" + e.zone.value_or("nil") + " hints=" +
             (e.hints ? std::to_string((*e.hints).for_zones.size()) + "/" +
                            std::to_string((*e.hints).for_nodes.size())
                      : "nil") +
             "\n";
    }
  }
  out += "unchanged:";
  for (const std::string& name : plan.unchanged) out += " " + name;
  out += "\nstats:";
  for (const AddressTypeStats& s : plan.stats.per_address_type) {
    out += " " + s.address_type + "+" + std::to_string(s.added) + "-" + std::to_string(s.removed);
  }
  for (const GroupStats& s : plan.stats.groups) {
    out += " [" + s.address_type + " " + s.port_key + " " + std::to_string(s.endpoints) + "/" +
           std::to_string(s.slices) + "]";
  }
  out += " td=" + plan.stats.traffic_distribution_label + "\n";
  return out;
}

bool SamePlan(const Plan& a, const Plan& b) {
  if (a.actions.size() != b.actions.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.actions.size(); ++i) {
    if (a.actions[i].operation != b.actions[i].operation ||
        !(a.actions[i].slice == b.actions[i].slice)) {
      return false;
    }
  }
  return a.unchanged == b.unchanged && a.stats.per_address_type == b.stats.per_address_type &&
         a.stats.groups == b.stats.groups &&
         a.stats.traffic_distribution_label == b.stats.traffic_distribution_label &&
         a.stats.topology_label == b.stats.topology_label && a.diagnostics == b.diagnostics;
}

// Applies a plan as the API server would: names for creates, a new resourceVersion per write.
void Apply(const Plan& plan, std::vector<EndpointSlice>& cluster, int& version) {
  for (const SliceAction& action : plan.actions) {
    EndpointSlice slice = action.slice;
    const auto same_name = [&](const EndpointSlice& s) {
      return s.metadata.name == slice.metadata.name;
    };
    slice.metadata.resource_version = std::to_string(++version);
    if (action.operation == Operation::kCreate) {
      slice.metadata.name = slice.metadata.generate_name + "g" + std::to_string(version);
      slice.metadata.uid = "uid-" + slice.metadata.name;
      cluster.push_back(std::move(slice));
    } else if (action.operation == Operation::kUpdate) {
      std::replace_if(cluster.begin(), cluster.end(), same_name, slice);
    } else {
      std::erase_if(cluster, same_name);
    }
  }
  // Listed by name, as the controllers list them, so verified runs mostly stay aligned.
  std::sort(cluster.begin(), cluster.end(), [](const EndpointSlice& a, const EndpointSlice& b) {
    return a.metadata.name < b.metadata.name;
  });
}

// A write by someone else: a condition flips or a user label appears, with a new version.
void DisturbCluster(Random& random, std::vector<EndpointSlice>& cluster, int& version) {
  if (cluster.empty()) {
    return;
  }
  EndpointSlice& slice = cluster[random.Below(cluster.size())];
  if (!slice.endpoints.empty() && random.OneIn(2)) {
    ChangeBeyondIdentity(random, slice.endpoints[random.Below(slice.endpoints.size())]);
  } else {
    slice.metadata.labels["touched"] = "1";
  }
  slice.metadata.resource_version = std::to_string(++version);
}

TEST(PlannerDifferentialTest, EveryOptionCombinationMatchesTheReference) {
  const auto started = std::chrono::steady_clock::now();
  const std::vector<Combination> combinations = AllCombinations();
  constexpr std::uint32_t kCases = 300;
  constexpr int kSteps = 4;
  std::size_t plans = 0;
  std::size_t verified_hits = 0;  // cache entries that described their slice when planning
  for (std::uint32_t seed = 1; seed <= kCases; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Random random(seed);
    Case c = RandomCase(random);
    std::vector<std::vector<VerifiedRun>> caches(combinations.size());
    int version = 100;
    for (int step = 0; step < kSteps; ++step) {
      SCOPED_TRACE("step " + std::to_string(step));
      const Plan reference =
          testing::ReferencePlan(DesiredFor(c, Combination{}), c.cluster, c.options);
      // The informer's fingerprints; some of another version, which the planner must ignore.
      std::vector<SliceFingerprints> fingerprints;
      for (std::size_t i = 0; i < c.cluster.size(); ++i) {
        fingerprints.push_back(FingerprintSlice(c.cluster[i]));
        if ((seed + static_cast<std::uint32_t>(step) * 3 + i) % 7 == 0) {
          fingerprints.back().resource_version = "stale";
        }
      }
      if ((seed + static_cast<std::uint32_t>(step)) % 11 == 0 && !fingerprints.empty()) {
        fingerprints.pop_back();  // not one per slice: all ignored
      }
      const bool any_promise =
          std::any_of(c.sources.begin(), c.sources.end(), [](const SourceGroup& g) {
            return SortedUnique(g.endpoints) || WithoutHints(g.endpoints);
          });
      for (std::size_t k = 0; k < combinations.size(); ++k) {
        const Combination& combination = combinations[k];
        if (combination.promises && !any_promise) {
          continue;  // the same input as without the promises
        }
        SCOPED_TRACE("form " + std::to_string(static_cast<int>(combination.form)) + " promises " +
                     std::to_string(combination.promises) + " fingerprints " +
                     std::to_string(combination.stored_fingerprints) +
                     std::to_string(combination.desired_fingerprints) + " verified_runs " +
                     std::to_string(combination.verified_runs) + " move " +
                     std::to_string(combination.move));
        PlanOptions options = c.options;
        if (combination.stored_fingerprints) {
          options.existing_fingerprints = &fingerprints;
        }
        if (combination.verified_runs) {
          options.verified_runs = &caches[k];
          for (std::size_t i = 0; i < caches[k].size() && i < c.cluster.size(); ++i) {
            verified_hits +=
                !caches[k][i].ids.empty() && caches[k][i].uid == c.cluster[i].metadata.uid &&
                caches[k][i].resource_version == c.cluster[i].metadata.resource_version;
          }
        }
        DesiredEndpoints desired = DesiredFor(c, combination);
        const Plan plan = combination.move ? PlanSlices(std::move(desired), c.cluster, options)
                                           : PlanSlices(desired, c.cluster, options);
        ++plans;
        if (!SamePlan(plan, reference)) {
          ASSERT_EQ(Describe(plan), Describe(reference));
          FAIL() << "the plans differ beyond what Describe prints:\n" << Describe(plan);
        }
      }
      Apply(reference, c.cluster, version);
      // The next sync: nothing changed (a resync), or a few endpoints, or someone else's write.
      const std::size_t next = random.Below(4);
      if (next == 1 || next == 2) {
        for (SourceGroup& group : c.sources) {
          if (random.OneIn(2)) {
            MutateGroup(random, group);
          }
        }
      }
      if (next == 3) {
        DisturbCluster(random, c.cluster, version);
      }
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf("%zu plans (%u cases x %d steps x %zu combinations) in %.2f s, %zu verified hits\n",
              plans, kCases, kSteps, combinations.size(), seconds, verified_hits);
  // The verified-runs path must have been taken, or this test would not cover it.
  EXPECT_GT(verified_hits, 0U);
}

// A source that breaks its sorted_unique promise (reversed endpoints, a duplicate whose later
// copy must win) still gets the reference plan in every build, and a Warning diagnostic per
// broken group says so. The check does not abort debug builds, so this runs in all of them.
TEST(PlannerDifferentialTest, BrokenSortedUniquePromiseStillGetsTheReferencePlan) {
  std::size_t broken_groups = 0;
  for (std::uint32_t seed = 1; seed <= 60; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Random random(seed);
    Case c = RandomCase(random);
    std::size_t broken = 0;
    for (SourceGroup& group : c.sources) {
      if (group.endpoints.size() >= 2) {
        std::reverse(group.endpoints.begin(), group.endpoints.end());
        Endpoint duplicate = group.endpoints.front();
        ChangeBeyondIdentity(random, duplicate);
        group.endpoints.push_back(std::move(duplicate));
        group.fingerprints = FingerprintEndpoints(group.endpoints);
      }
      broken += SortedUnique(group.endpoints) ? 0 : 1;
    }
    broken_groups += broken;
    Plan reference = testing::ReferencePlan(DesiredFor(c, Combination{}), c.cluster, c.options);
    std::vector<SliceFingerprints> fingerprints;
    for (const EndpointSlice& slice : c.cluster) {
      fingerprints.push_back(FingerprintSlice(slice));
    }
    for (const Combination& combination : AllCombinations()) {
      if (combination.promises || combination.verified_runs) {
        continue;
      }
      SCOPED_TRACE("form " + std::to_string(static_cast<int>(combination.form)) + " fingerprints " +
                   std::to_string(combination.stored_fingerprints) +
                   std::to_string(combination.desired_fingerprints) + " move " +
                   std::to_string(combination.move));
      DesiredEndpoints desired = DesiredFor(c, combination);
      for (EndpointGroup& group : desired.groups) {
        group.sorted_unique = true;  // the broken promise
      }
      PlanOptions options = c.options;
      if (combination.stored_fingerprints) {
        options.existing_fingerprints = &fingerprints;
      }
      Plan plan = combination.move ? PlanSlices(std::move(desired), c.cluster, options)
                                   : PlanSlices(desired, c.cluster, options);
      const std::size_t reported = static_cast<std::size_t>(
          std::count_if(plan.diagnostics.begin(), plan.diagnostics.end(), [](const Diagnostic& d) {
            return d.reason == "EndpointOrderPromiseBroken" &&
                   d.severity == Diagnostic::Severity::kWarning && !d.retry;
          }));
      EXPECT_EQ(reported, broken);  // every source group is of a served address type
      std::erase_if(plan.diagnostics,
                    [](const Diagnostic& d) { return d.reason == "EndpointOrderPromiseBroken"; });
      if (!SamePlan(plan, reference)) {
        ASSERT_EQ(Describe(plan), Describe(reference));
        FAIL() << "the plans differ beyond what Describe prints:\n" << Describe(plan);
      }
    }
  }
  EXPECT_GT(broken_groups, 20U);
}

}  // namespace
}  // namespace slicewright::reconcile

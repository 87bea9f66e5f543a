#include "slicewright/reconcile/hints.h"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "slicewright/model/discovery.h"
#include "slicewright/model/well_known.h"

namespace slicewright::reconcile {
namespace {

// One endpoint of a test slice; implicit so table rows read as {"10.0.0.1", "zone-a"}.
struct EndpointSpec {
  EndpointSpec(std::string address_in,  // NOLINT(google-explicit-constructor)
               std::optional<std::string> zone_in = std::nullopt,
               std::optional<bool> ready_in = true,
               std::optional<std::string> node_in = std::nullopt,
               std::optional<model::EndpointHints> hints_in = std::nullopt)
      : address(std::move(address_in)),
        zone(std::move(zone_in)),
        ready(ready_in),
        node(std::move(node_in)),
        hints(std::move(hints_in)) {}
  std::string address;
  std::optional<std::string> zone;
  std::optional<bool> ready;
  std::optional<std::string> node;
  std::optional<model::EndpointHints> hints;
};

model::Endpoint Ep(const EndpointSpec& spec) {
  model::Endpoint endpoint;
  endpoint.addresses = {spec.address};
  endpoint.zone = spec.zone;
  endpoint.conditions.ready = spec.ready;
  endpoint.node_name = spec.node;
  if (spec.hints) endpoint.hints = *spec.hints;
  return endpoint;
}

model::EndpointHints Zones(std::vector<std::string> zones) { return {std::move(zones), {}}; }

model::EndpointSlice Slice(std::string name, const std::vector<EndpointSpec>& endpoints) {
  model::EndpointSlice slice;
  slice.metadata.name = std::move(name);
  slice.address_type = "IPv4";
  for (const EndpointSpec& spec : endpoints) {
    slice.endpoints.push_back(Ep(spec));
  }
  return slice;
}

// The three lists of a hints stage, owning the unchanged slices' storage.
struct Work {
  std::vector<model::EndpointSlice> creates;
  std::vector<model::EndpointSlice> updates;
  std::vector<model::EndpointSlice> stored;  // what unchanged points at
  std::vector<const model::EndpointSlice*> unchanged;

  void SetStored(std::vector<model::EndpointSlice> slices) {
    stored = std::move(slices);
    unchanged.clear();
    for (const model::EndpointSlice& slice : stored) {
      unchanged.push_back(&slice);
    }
  }
  HintsWorkingSet Set() { return HintsWorkingSet{&creates, &updates, &unchanged, {}}; }
};

std::vector<std::optional<model::EndpointHints>> HintsOf(const model::EndpointSlice& slice) {
  std::vector<std::optional<model::EndpointHints>> hints;
  for (const model::Endpoint& endpoint : slice.endpoints) {
    hints.push_back(endpoint.hints ? std::optional(*endpoint.hints) : std::nullopt);
  }
  return hints;
}

std::vector<std::string> UnchangedNames(const Work& work) {
  std::vector<std::string> names;
  for (const model::EndpointSlice* slice : work.unchanged) {
    names.push_back(slice->metadata.name);
  }
  return names;
}

std::vector<std::string> UpdateNames(const Work& work) {
  std::vector<std::string> names;
  for (const model::EndpointSlice& slice : work.updates) {
    names.push_back(slice.metadata.name);
  }
  return names;
}

// ---- §6.1 switches ----

// Scenario 37: the deprecated annotation wins whenever present; only "Auto"/"auto" enable.
TEST(HintsTest, Scenario37_TopologyHintsEnabled) {
  const std::string hints_key(model::kAnnotationTopologyAwareHints);
  const std::string mode_key(model::kAnnotationTopologyMode);
  struct Case {
    std::string_view name;
    model::StringMap annotations;
    bool want;
  };
  const Case cases[] = {
      {"empty", {}, false},
      {"hints Auto", {{hints_key, "Auto"}}, true},
      {"hints auto", {{hints_key, "auto"}}, true},
      {"hints aUto", {{hints_key, "aUto"}}, false},
      {"hints enabled", {{hints_key, "enabled"}}, false},
      {"hints disabled", {{hints_key, "disabled"}}, false},
      {"mode auto", {{mode_key, "auto"}}, true},
      {"mode Auto", {{mode_key, "Auto"}}, true},
      {"mode disabled, hints auto", {{mode_key, "disabled"}, {hints_key, "auto"}}, true},
      {"mode auto, hints disabled", {{mode_key, "auto"}, {hints_key, "disabled"}}, false},
      {"mode auto, hints empty", {{mode_key, "auto"}, {hints_key, ""}}, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(TopologyHintsEnabled(c.annotations), c.want);
  }
  // Before Kubernetes 1.27 only the deprecated key exists.
  EXPECT_FALSE(TopologyHintsEnabled({{mode_key, "Auto"}}, /*topology_mode_annotation=*/false));
  EXPECT_TRUE(TopologyHintsEnabled({{hints_key, "Auto"}}, /*topology_mode_annotation=*/false));
}

// PreferClose is always valid; PreferSameZone/PreferSameNode only with the option.
TEST(HintsTest, IsValidTrafficDistribution) {
  EXPECT_TRUE(IsValidTrafficDistribution("PreferClose", false));
  EXPECT_TRUE(IsValidTrafficDistribution("PreferClose", true));
  EXPECT_FALSE(IsValidTrafficDistribution("PreferSameZone", false));
  EXPECT_TRUE(IsValidTrafficDistribution("PreferSameZone", true));
  EXPECT_FALSE(IsValidTrafficDistribution("PreferSameNode", false));
  EXPECT_TRUE(IsValidTrafficDistribution("PreferSameNode", true));
  EXPECT_FALSE(IsValidTrafficDistribution("", true));
  EXPECT_FALSE(IsValidTrafficDistribution("preferclose", true));
  EXPECT_FALSE(IsValidTrafficDistribution("Unknown", true));
}

// ---- §6.2 trafficDistribution ----

// Scenario 32: PreferClose hints ready endpoints to their zone; endpoints without zone get none.
TEST(HintsTest, Scenario32_PreferCloseHintsOwnZone) {
  Work work;
  work.creates = {Slice("c", {{"10.0.0.1", "zone-a"},
                              {"10.0.0.2", std::nullopt},
                              {"10.0.0.3", "zone-b", true, "node-1"}})};
  ReconcileTrafficDistributionHints("PreferClose", work.Set());
  EXPECT_EQ(HintsOf(work.creates[0]), (std::vector<std::optional<model::EndpointHints>>{
                                          Zones({"zone-a"}), std::nullopt, Zones({"zone-b"})}));
}

// Scenario 32: PreferSameNode adds node hints; without zones only forNodes is set.
TEST(HintsTest, Scenario32_PreferSameNodeWithoutZones) {
  Work work;
  work.creates = {Slice("c", {{"10.0.0.1", std::nullopt, true, "node-1"},
                              {"10.0.0.2", "zone-a", true, "node-2"},
                              {"10.0.0.3", std::nullopt, true, std::nullopt}})};
  ReconcileTrafficDistributionHints("PreferSameNode", work.Set());
  EXPECT_EQ(HintsOf(work.creates[0]),
            (std::vector<std::optional<model::EndpointHints>>{
                model::EndpointHints{{}, {"node-1"}}, model::EndpointHints{{"zone-a"}, {"node-2"}},
                std::nullopt}));
}

// PreferSameZone behaves as PreferClose: no node hints, and stale node hints are dropped.
TEST(HintsTest, PreferSameZoneDropsNodeHints) {
  Work work;
  work.SetStored({Slice("u", {{"10.0.0.1", "zone-a", true, "node-1",
                               model::EndpointHints{{"zone-a"}, {"node-1"}}}})});
  ReconcileTrafficDistributionHints("PreferSameZone", work.Set());
  ASSERT_EQ(UpdateNames(work), std::vector<std::string>{"u"});
  EXPECT_EQ(HintsOf(work.updates[0]),
            (std::vector<std::optional<model::EndpointHints>>{Zones({"zone-a"})}));
  // The stored object is untouched.
  EXPECT_EQ(work.stored[0].endpoints[0].hints, (model::EndpointHints{{"zone-a"}, {"node-1"}}));
}

// Scenario 32: an unchanged slice whose only endpoint is not ready stays unchanged; correct
// hints stay unchanged; a wrong hint moves the slice into updates (a copy).
TEST(HintsTest, Scenario32_UnchangedSlicesNeedingUpdate) {
  Work work;
  work.SetStored({
      Slice("not-ready", {{"10.0.0.1", "zone-a", false}}),
      Slice("correct", {{"10.0.0.2", "zone-a", true, std::nullopt, Zones({"zone-a"})}}),
      Slice("wrong", {{"10.0.0.3", "zone-a", true, std::nullopt, Zones({"zone-b"})}}),
      Slice("missing", {{"10.0.0.4", "zone-b"}}),
      Slice("stale", {{"10.0.0.5", std::nullopt, true, std::nullopt, Zones({"zone-b"})}}),
  });
  const std::vector<model::EndpointSlice> before = work.stored;
  ReconcileTrafficDistributionHints("PreferClose", work.Set());
  EXPECT_EQ(UnchangedNames(work), (std::vector<std::string>{"not-ready", "correct"}));
  EXPECT_EQ(UpdateNames(work), (std::vector<std::string>{"wrong", "missing", "stale"}));
  EXPECT_EQ(work.updates[0].endpoints[0].hints, Zones({"zone-a"}));
  EXPECT_EQ(work.updates[1].endpoints[0].hints, Zones({"zone-b"}));
  EXPECT_EQ(work.updates[2].endpoints[0].hints, std::nullopt);
  EXPECT_EQ(work.stored, before);  // unchanged inputs are never mutated
}

// Non-ready endpoints of written slices keep whatever hints they had (upstream's update skips
// them).
TEST(HintsTest, PreferCloseLeavesNonReadyEndpointsAlone) {
  Work work;
  work.updates = {Slice("u", {{"10.0.0.1", "zone-a", false, std::nullopt, Zones({"zone-x"})}})};
  ReconcileTrafficDistributionHints("PreferClose", work.Set());
  EXPECT_EQ(work.updates[0].endpoints[0].hints, Zones({"zone-x"}));
}

// Scenario 32: an unknown or empty value removes every hint, moving hinted unchanged slices.
TEST(HintsTest, Scenario32_UnknownValueRemovesHints) {
  for (std::string_view value : {"Unknown", ""}) {
    SCOPED_TRACE(value);
    Work work;
    work.creates = {Slice("c", {{"10.0.0.1", "zone-a", true, std::nullopt, Zones({"zone-a"})}})};
    work.SetStored(
        {Slice("hinted", {{"10.0.0.2", "zone-a", false, std::nullopt, Zones({"zone-a"})}}),
         Slice("plain", {{"10.0.0.3", "zone-a"}})});
    ReconcileTrafficDistributionHints(value, work.Set());
    EXPECT_EQ(work.creates[0].endpoints[0].hints, std::nullopt);
    EXPECT_EQ(UnchangedNames(work), std::vector<std::string>{"plain"});
    ASSERT_EQ(UpdateNames(work), std::vector<std::string>{"hinted"});
    EXPECT_EQ(work.updates[0].endpoints[0].hints, std::nullopt);
    EXPECT_EQ(work.stored[0].endpoints[0].hints, Zones({"zone-a"}));
  }
}

// Spec §6.1 step 2: RemoveAllHints clears creates and updates and moves only hinted unchanged
// slices (an empty hints object counts as a hint, as a non-nil pointer does upstream).
TEST(HintsTest, RemoveAllHints) {
  Work work;
  work.creates = {Slice("c", {{"10.0.0.1", "zone-a", true, std::nullopt, Zones({"zone-a"})}})};
  work.updates = {Slice("u", {{"10.0.0.2", "zone-a", true, std::nullopt, Zones({"zone-b"})}})};
  work.SetStored(
      {Slice("empty-hints", {{"10.0.0.3", "zone-a", true, std::nullopt, model::EndpointHints{}}}),
       Slice("plain", {{"10.0.0.4", "zone-a"}})});
  RemoveAllHints(work.Set());
  EXPECT_EQ(work.creates[0].endpoints[0].hints, std::nullopt);
  EXPECT_EQ(UpdateNames(work), (std::vector<std::string>{"u", "empty-hints"}));
  for (const model::EndpointSlice& slice : work.updates) {
    EXPECT_EQ(slice.endpoints[0].hints, std::nullopt);
  }
  EXPECT_EQ(UnchangedNames(work), std::vector<std::string>{"plain"});
}

// A planner whose creates all come from EndpointGroup::without_hints groups says so: creates are
// not read again, updates (which may hold stored, hinted endpoints) and hinted unchanged slices are
// still cleared. The create keeps the hint planted here only because the flag promised there was
// none: that is what shows it was skipped.
TEST(HintsTest, RemoveAllHintsSkipsCreatesWithoutHints) {
  Work work;
  work.creates = {Slice("c", {{"10.0.0.1", "zone-a", true, std::nullopt, Zones({"zone-a"})}})};
  work.updates = {Slice("u", {{"10.0.0.2", "zone-a", true, std::nullopt, Zones({"zone-b"})}})};
  work.SetStored({Slice("hinted", {{"10.0.0.3", "zone-a", true, std::nullopt, Zones({"zone-a"})}}),
                  Slice("plain", {{"10.0.0.4", "zone-a"}})});
  HintsWorkingSet set = work.Set();
  set.creates_without_hints = true;
  RemoveAllHints(set);
  EXPECT_EQ(work.creates[0].endpoints[0].hints, Zones({"zone-a"}));
  EXPECT_EQ(UpdateNames(work), (std::vector<std::string>{"u", "hinted"}));
  for (const model::EndpointSlice& slice : work.updates) {
    EXPECT_EQ(slice.endpoints[0].hints, std::nullopt);
  }
  EXPECT_EQ(UnchangedNames(work), std::vector<std::string>{"plain"});
}

// ---- §6.3 topology-aware hints ----

const std::map<std::string, double> kTwoZones = {{"zone-a", 0.45}, {"zone-b", 0.55}};

// Scenario 34: one ready endpoint per zone, each hinted to its own zone, Enabled event once.
TEST(HintsTest, Scenario34_AddHintsOwnZones) {
  Work work;
  work.creates = {Slice("c", {{"10.1.2.3", "zone-a"}, {"10.1.2.4", "zone-b"}})};
  std::vector<Diagnostic> events;
  const TopologyOutcome outcome = AddTopologyHints(kTwoZones, false, "IPv4", work.Set(), events);
  EXPECT_EQ(HintsOf(work.creates[0]), (std::vector<std::optional<model::EndpointHints>>{
                                          Zones({"zone-a"}), Zones({"zone-b"})}));
  EXPECT_EQ(outcome, (TopologyOutcome{"IPv4", true, {{"zone-a", 1}, {"zone-b", 1}}}));
  EXPECT_EQ(events, (std::vector<Diagnostic>{
                        {Diagnostic::Severity::kNormal, "TopologyAwareHintsEnabled",
                         "Topology Aware Hints has been enabled, addressType: IPv4", false}}));

  // Already populated: no event the second time.
  events.clear();
  AddTopologyHints(kTwoZones, true, "IPv4", work.Set(), events);
  EXPECT_TRUE(events.empty());
}

// Scenario 34 and the other allocation failures: Warning TopologyAwareHintsDisabled with the
// upstream message and ", addressType: <type>", every hint removed, cache entry dropped.
TEST(HintsTest, Scenario34_AddHintsFailures) {
  struct Case {
    std::string_view name;
    std::map<std::string, double> ratios;
    std::vector<EndpointSpec> endpoints;
    std::string want_message;
  };
  const Case cases[] = {
      {"no ratios",
       {},
       {{"10.1.2.3", "zone-a"}},
       "Insufficient Node information: allocatable CPU or zone not specified on one or more "
       "nodes, addressType: IPv6"},
      {"one zone",
       {{"zone-a", 1.0}},
       {{"10.1.2.3", "zone-a"}},
       "Nodes only ready in one zone, addressType: IPv6"},
      {"more zones than endpoints",
       {{"zone-a", 0.3}, {"zone-b", 0.4}, {"zone-c", 0.3}},
       {{"10.1.2.3", "zone-a"}, {"10.1.2.4", "zone-b"}},
       "Insufficient number of endpoints (2 endpoints, 3 zones), addressType: IPv6"},
      {"minimums exceed endpoints",
       {{"zone-a", 0.5}, {"zone-b", 0.5}},
       {{"10.1.2.3", "zone-a"}, {"10.1.2.4", "zone-b"}, {"10.1.2.5", "zone-b"}},
       "Unable to allocate minimum required endpoints to each zone without exceeding overload "
       "threshold (3 endpoints, 2 zones), addressType: IPv6"},
      {"endpoint without zone",
       kTwoZones,
       {{"10.1.2.3", "zone-a"}, {"10.1.2.4", std::nullopt}},
       "One or more endpoints do not have a zone specified, addressType: IPv6"},
      {"endpoint with empty zone",
       kTwoZones,
       {{"10.1.2.3", "zone-a"}, {"10.1.2.4", ""}},
       "One or more endpoints do not have a zone specified, addressType: IPv6"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Work work;
    std::vector<EndpointSpec> hinted = c.endpoints;
    for (EndpointSpec& spec : hinted) {
      spec.hints = Zones({"zone-a"});
    }
    work.creates = {Slice("c", hinted)};
    work.SetStored(
        {Slice("hinted", {{"10.9.9.9", "zone-a", false, std::nullopt, Zones({"zone-a"})}})});
    std::vector<Diagnostic> events;
    const TopologyOutcome outcome = AddTopologyHints(c.ratios, true, "IPv6", work.Set(), events);
    EXPECT_EQ(outcome, (TopologyOutcome{"IPv6", false, {}}));
    EXPECT_EQ(events,
              (std::vector<Diagnostic>{{Diagnostic::Severity::kWarning,
                                        "TopologyAwareHintsDisabled", c.want_message, false}}));
    for (const auto& hints : HintsOf(work.creates[0])) {
      EXPECT_EQ(hints, std::nullopt);
    }
    EXPECT_TRUE(work.unchanged.empty());
    ASSERT_EQ(UpdateNames(work), std::vector<std::string>{"hinted"});
    EXPECT_EQ(work.updates[0].endpoints[0].hints, std::nullopt);
  }
}

// Ready endpoints count; not-ready and unknown-readiness ones get no hint (decision §15.7 also
// clears a stale hint they carry, which upstream means to do but does not).
TEST(HintsTest, NotReadyEndpointsHintsCleared) {
  Work work;
  work.creates = {
      Slice("c", {{"10.1.2.3", "zone-a"},
                  {"10.1.2.4", "zone-b"},
                  {"10.1.2.5", "zone-b", false, std::nullopt, Zones({"zone-b"})},
                  {"10.1.2.6", "zone-b", std::nullopt, std::nullopt, Zones({"zone-a"})}})};
  std::vector<Diagnostic> events;
  const TopologyOutcome outcome = AddTopologyHints(kTwoZones, false, "IPv4", work.Set(), events);
  EXPECT_EQ(outcome.allocation,
            (std::map<std::string, std::int64_t>{{"zone-a", 1}, {"zone-b", 1}}));
  EXPECT_EQ(HintsOf(work.creates[0]),
            (std::vector<std::optional<model::EndpointHints>>{Zones({"zone-a"}), Zones({"zone-b"}),
                                                              std::nullopt, std::nullopt}));
}

// Upstream's "slices to create and update within 3 zone threshold": one zone-a endpoint is
// re-hinted to zone-b so the allocation becomes a:4, b:3, c:3.
TEST(HintsTest, AddHintsRedistributesWithinThreeZones) {
  Work work;
  work.creates = {
      Slice("c1", {{"10.1.2.3", "zone-a"}, {"10.1.2.4", "zone-b"}}),
      Slice("c2", {{"10.1.3.3", "zone-c"}, {"10.1.3.4", "zone-c"}, {"10.1.3.4", "zone-a"}})};
  work.updates = {
      Slice("u1", {{"10.2.2.3", "zone-a"}, {"10.2.2.4", "zone-a"}}),
      Slice("u2", {{"10.2.3.3", "zone-b"}, {"10.2.3.4", "zone-c"}, {"10.2.3.4", "zone-a"}})};
  std::vector<Diagnostic> events;
  const TopologyOutcome outcome = AddTopologyHints(
      {{"zone-a", 0.35}, {"zone-b", 0.35}, {"zone-c", 0.30}}, false, "IPv4", work.Set(), events);
  EXPECT_EQ(outcome.allocation,
            (std::map<std::string, std::int64_t>{{"zone-a", 4}, {"zone-b", 3}, {"zone-c", 3}}));
  using Hints = std::vector<std::optional<model::EndpointHints>>;
  EXPECT_EQ(HintsOf(work.creates[0]), (Hints{Zones({"zone-b"}), Zones({"zone-b"})}));
  EXPECT_EQ(HintsOf(work.creates[1]),
            (Hints{Zones({"zone-c"}), Zones({"zone-c"}), Zones({"zone-a"})}));
  EXPECT_EQ(HintsOf(work.updates[0]), (Hints{Zones({"zone-a"}), Zones({"zone-a"})}));
  EXPECT_EQ(HintsOf(work.updates[1]),
            (Hints{Zones({"zone-b"}), Zones({"zone-c"}), Zones({"zone-a"})}));
  ASSERT_EQ(events.size(), 1U);
  EXPECT_EQ(events[0].reason, "TopologyAwareHintsEnabled");
}

// Step 2: unchanged slices with valid hints stay unchanged and seed the counts; one hinting a zone
// without allocation, or lacking hints, is rewritten (as a copy in updates).
TEST(HintsTest, AddHintsKeepsValidUnchangedSlices) {
  Work work;
  work.SetStored({
      Slice("valid", {{"10.0.0.1", "zone-a", true, std::nullopt, Zones({"zone-a"})},
                      {"10.0.0.9", "zone-a", false}}),
      Slice("unknown-zone", {{"10.0.0.2", "zone-b", true, std::nullopt, Zones({"zone-x"})}}),
      Slice("no-hints", {{"10.0.0.3", "zone-b"}}),
      Slice("no-ready", {{"10.0.0.4", "zone-b", false}}),
  });
  std::vector<Diagnostic> events;
  const TopologyOutcome outcome = AddTopologyHints({{"zone-a", 1.0 / 3}, {"zone-b", 2.0 / 3}},
                                                   false, "IPv4", work.Set(), events);
  EXPECT_EQ(UnchangedNames(work), (std::vector<std::string>{"valid", "no-ready"}));
  EXPECT_EQ(UpdateNames(work), (std::vector<std::string>{"unknown-zone", "no-hints"}));
  EXPECT_EQ(work.updates[0].endpoints[0].hints, Zones({"zone-b"}));
  EXPECT_EQ(work.updates[1].endpoints[0].hints, Zones({"zone-b"}));
  EXPECT_EQ(outcome.allocation,
            (std::map<std::string, std::int64_t>{{"zone-a", 1}, {"zone-b", 2}}));
  EXPECT_EQ(work.stored[1].endpoints[0].hints, Zones({"zone-x"}));  // stored object untouched
}

// An unchanged slice whose hints would push a zone over its maximum is rewritten.
TEST(HintsTest, AddHintsRewritesOverMaximumSlice) {
  // 4 ready endpoints, ratios 1/2 each: desired 2, minimum 2, maximum 2.
  Work work;
  work.SetStored({Slice("over", {{"10.0.0.1", "zone-a", true, std::nullopt, Zones({"zone-a"})},
                                 {"10.0.0.2", "zone-b", true, std::nullopt, Zones({"zone-a"})},
                                 {"10.0.0.3", "zone-b", true, std::nullopt, Zones({"zone-a"})}})});
  work.creates = {Slice("c", {{"10.0.0.4", "zone-a"}})};
  std::vector<Diagnostic> events;
  const TopologyOutcome outcome =
      AddTopologyHints({{"zone-a", 0.5}, {"zone-b", 0.5}}, false, "IPv4", work.Set(), events);
  EXPECT_TRUE(work.unchanged.empty());
  ASSERT_EQ(UpdateNames(work), std::vector<std::string>{"over"});
  EXPECT_EQ(outcome.allocation,
            (std::map<std::string, std::int64_t>{{"zone-a", 2}, {"zone-b", 2}}));
}

}  // namespace
}  // namespace slicewright::reconcile

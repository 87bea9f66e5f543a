#include "slicewright/mcs/aggregate.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "slicewright/model/mcs.h"
#include "slicewright/model/time.h"

// The aggregation of export records into a ServiceImport (spec §5, conformance T1-T16 as far as
// the aggregation decides them) and the endpointSliceObjects transitions of spec §8.4.
namespace slicewright::mcs {
namespace {

using model::EndpointSliceObjects;
using model::McsServicePort;
using model::ServiceExportRecord;

McsServicePort Port(std::string name, std::string protocol, std::int32_t port,
                    std::optional<std::string> app_protocol = std::nullopt) {
  return {std::move(name), std::move(protocol), std::move(app_protocol), port};
}

// The conformance suite's Service `hello` (spec §12.1), exported from `cluster` at `seconds`:
// ports tcp/TCP/42 and udp/UDP/42, ClientIP affinity with timeout 10, ITP Cluster, IPv4.
ServiceExportRecord Hello(std::string cluster, std::int64_t seconds) {
  ServiceExportRecord r;
  r.metadata.name = "hello.ns." + cluster;
  r.spec.cluster = std::move(cluster);
  r.spec.namespace_ = "ns";
  r.spec.name = "hello";
  r.spec.export_creation_timestamp = model::Time::FromUnixSeconds(seconds);
  r.spec.type = "ClusterSetIP";
  r.spec.ports = {Port("tcp", "TCP", 42), Port("udp", "UDP", 42)};
  r.spec.ip_families = {"IPv4"};
  r.spec.session_affinity = "ClientIP";
  r.spec.session_affinity_config = model::SessionAffinityConfig{model::ClientIPConfig{10}};
  r.spec.internal_traffic_policy = "Cluster";
  return r;
}

ServiceExportRecord With(ServiceExportRecord r,
                         const std::function<void(model::ServiceExportRecordSpec&)>& edit) {
  edit(r.spec);
  return r;
}

ImportingCluster Here(std::vector<std::string> families = {"IPv4", "IPv6"},
                      EndpointSliceSyncPolicy policy = EndpointSliceSyncPolicy::kAll) {
  return {"cluster-1", std::move(families), policy};
}

std::string RenderPorts(const std::vector<McsServicePort>& ports) {
  std::vector<std::string> parts;
  for (const McsServicePort& p : ports) {
    std::string s = p.name + "/" + p.protocol + "/" + std::to_string(p.port);
    if (p.app_protocol) s += "/" + *p.app_protocol;
    parts.push_back(s);
  }
  std::sort(parts.begin(), parts.end());  // conformance compares sorted by name
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : " ") + p;
  return out;
}

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ",") + s;
  return out;
}

Aggregation MustAggregate(const std::vector<ServiceExportRecord>& records,
                          const ImportingCluster& here = Here()) {
  std::optional<Aggregation> result = Aggregate(records, here);
  EXPECT_TRUE(result.has_value());
  return result.value_or(Aggregation{});
}

// Every exporting cluster carries the same Conflict condition; returns its "status reason".
std::string ConflictOf(const Aggregation& a) {
  std::string out;
  for (const ExportConflict& c : a.conflicts) {
    const std::string this_one = c.condition.status + " " + c.condition.reason;
    if (out.empty()) out = this_one;
    EXPECT_EQ(this_one, out) << "cluster " << c.cluster;
    EXPECT_EQ(c.condition.type, "Conflict");
    EXPECT_FALSE(c.condition.message.empty());
  }
  return out;
}

// The conformance cases of spec §12.2 that the aggregation decides, one row each: c0 exports
// first, c1 (when present) 1.1 s later, as the suite's two-cluster driver does.
TEST(AggregateTest, ConformanceCases) {
  struct Case {
    std::string_view name;
    std::vector<ServiceExportRecord> records;
    std::string ports;  // sorted name/protocol/port
    std::string type;
    std::string conflict;  // "status reason" on every exporting cluster
    std::string clusters;
  };
  const ServiceExportRecord c0 = Hello("cluster-1", 1000);
  const std::vector<Case> cases = {
      // T4/T9: one ClusterIP export -> ClusterSetIP with the Service's ports; NoConflicts.
      {"T4_T9_single_clusterip",
       {c0},
       "tcp/TCP/42 udp/UDP/42",
       "ClusterSetIP",
       "False NoConflicts",
       "cluster-1"},
      // T1: the same service from two clusters: one import, both clusters listed.
      {"T1_two_identical_exports",
       {c0, Hello("cluster-2", 1001)},
       "tcp/TCP/42 udp/UDP/42",
       "ClusterSetIP",
       "False NoConflicts",
       "cluster-1,cluster-2"},
      // T1 after c0 unexports: the import stays, from c1 alone.
      {"T1_after_oldest_unexports",
       {Hello("cluster-2", 1001)},
       "tcp/TCP/42 udp/UDP/42",
       "ClusterSetIP",
       "False NoConflicts",
       "cluster-2"},
      // T10: {tcp/42, udp/42} + {tcp/42, stcp/SCTP/142}: the union, and a conflict on both.
      {"T10_port_union",
       {c0, With(Hello("cluster-2", 1001),
                 [](auto& s) {
                   s.ports = {Port("tcp", "TCP", 42), Port("stcp", "SCTP", 142)};
                 })},
       "stcp/SCTP/142 tcp/TCP/42 udp/UDP/42",
       "ClusterSetIP",
       "True PortConflict",
       "cluster-1,cluster-2"},
      // T11: the newer "tcp" (43) clashes by name with the older "tcp" (42) and loses.
      {"T11_port_name_clash",
       {c0, With(Hello("cluster-2", 1001), [](auto& s) { s.ports = {Port("tcp", "TCP", 43)}; })},
       "tcp/TCP/42 udp/UDP/42",
       "ClusterSetIP",
       "True PortConflict",
       "cluster-1,cluster-2"},
      // T12: headless -> Headless; T13: no IPs (the row's check below: spec.ips stays empty).
      {"T12_headless",
       {With(c0, [](auto& s) { s.type = "Headless"; })},
       "tcp/TCP/42 udp/UDP/42",
       "Headless",
       "False NoConflicts",
       "cluster-1"},
      // T15: oldest ClusterIP + newer headless -> ClusterSetIP, TypeConflict on both.
      {"T15_headlessness_conflict",
       {c0, With(Hello("cluster-2", 1001), [](auto& s) { s.type = "Headless"; })},
       "tcp/TCP/42 udp/UDP/42",
       "ClusterSetIP",
       "True TypeConflict",
       "cluster-1,cluster-2"},
      // T15 the other way round: the oldest's type wins, whichever it is.
      {"T15_oldest_headless_wins",
       {With(c0, [](auto& s) { s.type = "Headless"; }), Hello("cluster-2", 1001)},
       "tcp/TCP/42 udp/UDP/42",
       "Headless",
       "True TypeConflict",
       "cluster-1,cluster-2"},
      // T3: different exported labels and annotations: the oldest's, both reasons.
      {"T3_labels_annotations",
       {With(c0,
             [](auto& s) {
               s.exported_labels = {{"dummy-label", "true"}};
               s.exported_annotations = {{"dummy-annotation", "true"}};
             }),
        With(Hello("cluster-2", 1001),
             [](auto& s) {
               s.exported_labels = {{"dummy-label2", "true"}};
               s.exported_annotations = {{"dummy-annotation2", "true"}};
             })},
       "tcp/TCP/42 udp/UDP/42",
       "ClusterSetIP",
       "True AnnotationsConflict,LabelsConflict",
       "cluster-1,cluster-2"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Aggregation a = MustAggregate(c.records);
    EXPECT_EQ(RenderPorts(a.spec.ports), c.ports);
    EXPECT_EQ(a.spec.type, c.type);
    EXPECT_EQ(ConflictOf(a), c.conflict);
    EXPECT_EQ(Join(a.clusters), c.clusters);
    EXPECT_EQ(a.conflicts.size(), a.clusters.size());
    EXPECT_EQ(a.ready.status + " " + a.ready.reason, "True Ready");
    EXPECT_TRUE(a.spec.ips.empty());  // the agent fills them from the derived Service
  }
}

// T2/T5/T6/T7: exported labels and annotations (only those), session affinity and its config,
// internal traffic policy and traffic distribution reach the import unchanged.
TEST(AggregateTest, PropagatesTheOldestExportsProperties) {
  const ServiceExportRecord r = With(Hello("cluster-1", 1000), [](auto& s) {
    s.exported_labels = {{"dummy-label", "true"}};
    s.exported_annotations = {{"dummy-annotation", "true"}};
    s.traffic_distribution = "PreferClose";
  });
  const Aggregation a = MustAggregate({r});
  EXPECT_EQ(a.labels, (model::StringMap{{"dummy-label", "true"}}));
  EXPECT_EQ(a.annotations, (model::StringMap{{"dummy-annotation", "true"}}));
  EXPECT_EQ(a.spec.session_affinity, "ClientIP");
  ASSERT_TRUE(a.spec.session_affinity_config.has_value());
  ASSERT_TRUE(a.spec.session_affinity_config->client_ip.has_value());
  EXPECT_EQ(a.spec.session_affinity_config->client_ip->timeout_seconds, 10);
  EXPECT_EQ(a.spec.internal_traffic_policy, "Cluster");
  EXPECT_EQ(a.spec.traffic_distribution, "PreferClose");
  EXPECT_EQ(a.oldest_cluster, "cluster-1");
}

// Every conflict reason of spec §2.5, alone, with its field named in the message and the oldest's
// value kept.
TEST(AggregateTest, EveryConflictReason) {
  struct Case {
    std::string_view reason;
    std::function<void(model::ServiceExportRecordSpec&)> edit;  // applied to the newer export
    std::string_view message_part;
  };
  const std::vector<Case> cases = {
      {"PortConflict", [](auto& s) { s.ports.push_back(Port("http", "TCP", 80)); },
       "Conflicting ports."},
      {"PortConflict", [](auto& s) { s.ports[0].app_protocol = "http"; }, "Conflicting ports."},
      {"TypeConflict", [](auto& s) { s.type = "Headless"; },
       R"(Conflicting type. Using "ClusterSetIP" from oldest service export in "cluster-1". )"
       R"(1/2 clusters disagree.)"},
      {"SessionAffinityConflict", [](auto& s) { s.session_affinity = "None"; },
       R"(Conflicting sessionAffinity. Using "ClientIP" from oldest service export in "cluster-1".)"},
      {"SessionAffinityConfigConflict",
       [](auto& s) { s.session_affinity_config->client_ip->timeout_seconds = 20; },
       R"(Conflicting sessionAffinityConfig. Using "clientIP.timeoutSeconds=10" from oldest)"},
      {"AnnotationsConflict",
       [](auto& s) {
         s.exported_annotations = {{"a", "b"}};
       },
       "Conflicting exportedAnnotations."},
      {"LabelsConflict",
       [](auto& s) {
         s.exported_labels = {{"a", "b"}};
       },
       "Conflicting exportedLabels."},
      {"InternalTrafficPolicyConflict", [](auto& s) { s.internal_traffic_policy = "Local"; },
       R"(Conflicting internalTrafficPolicy. Using "Cluster" from oldest)"},
      {"TrafficDistributionConflict", [](auto& s) { s.traffic_distribution = "PreferClose"; },
       R"(Conflicting trafficDistribution. Using unset from oldest service export in "cluster-1")"},
      {"IPFamilyConflict",
       [](auto& s) {
         s.ip_families = {"IPv4", "IPv6"};
       },
       R"(Conflicting ipFamilies. Using "IPv4", the families every exporting cluster has.)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.reason);
    const ServiceExportRecord oldest = Hello("cluster-1", 1000);
    const Aggregation a = MustAggregate({oldest, With(Hello("cluster-2", 1001), c.edit)});
    ASSERT_EQ(a.conflicts.size(), 2U);
    for (const ExportConflict& conflict : a.conflicts) {
      EXPECT_EQ(conflict.condition.status, "True");
      EXPECT_EQ(conflict.condition.reason, c.reason);
      EXPECT_NE(conflict.condition.message.find(c.message_part), std::string::npos)
          << conflict.condition.message;
    }
    // The oldest's global values stay (ports are a union; families an intersection).
    EXPECT_EQ(a.spec.type, oldest.spec.type);
    EXPECT_EQ(a.spec.session_affinity, oldest.spec.session_affinity);
    EXPECT_EQ(a.spec.session_affinity_config, oldest.spec.session_affinity_config);
    EXPECT_EQ(a.spec.internal_traffic_policy, oldest.spec.internal_traffic_policy);
    EXPECT_EQ(a.spec.traffic_distribution, oldest.spec.traffic_distribution);
    EXPECT_EQ(a.labels, oldest.spec.exported_labels);
    EXPECT_EQ(a.annotations, oldest.spec.exported_annotations);
  }
}

// Several conflicts: the reasons comma-joined in the catalogue's order (a legal metav1 reason), one
// sentence each, in the same order.
TEST(AggregateTest, CommaJoinsEveryReasonInCatalogueOrder) {
  const ServiceExportRecord newer = With(Hello("cluster-2", 1001), [](auto& s) {
    s.ip_families = {"IPv6"};
    s.traffic_distribution = "PreferSameZone";
    s.type = "Headless";
    s.ports = {Port("tcp", "TCP", 43)};
    s.exported_labels = {{"x", "y"}};
  });
  const Aggregation a = MustAggregate({newer, Hello("cluster-1", 1000)});
  EXPECT_EQ(ConflictOf(a),
            "True PortConflict,TypeConflict,LabelsConflict,TrafficDistributionConflict,"
            "IPFamilyConflict");
  const std::string& message = a.conflicts[0].condition.message;
  EXPECT_EQ(message,
            R"(Conflicting ports. Using the union of all exported ports, clashes won by oldest )"
            R"(service export in "cluster-1" (dropped: "tcp" TCP/43 from "cluster-2"). )"
            R"(1/2 clusters disagree. )"
            R"(Conflicting type. Using "ClusterSetIP" from oldest service export in "cluster-1". )"
            R"(1/2 clusters disagree. )"
            R"(Conflicting exportedLabels. Using those from oldest service export in )"
            R"("cluster-1". 1/2 clusters disagree. )"
            R"(Conflicting trafficDistribution. Using unset from oldest service export in )"
            R"("cluster-1". 1/2 clusters disagree. )"
            R"(Conflicting ipFamilies. Using "IPv4" from oldest service export in "cluster-1": )"
            R"(no family is shared by every exporting cluster, so traffic reaches only the )"
            R"(clusters that have it. 1/2 clusters disagree.)");
}

// N/M counts the clusters whose value differs from the oldest's, out of all exporting clusters.
TEST(AggregateTest, CountsDisagreeingClusters) {
  const auto headless = [](auto& s) { s.type = "Headless"; };
  const Aggregation a =
      MustAggregate({Hello("c-1", 1), With(Hello("c-2", 2), headless), Hello("c-3", 3),
                     With(Hello("c-4", 4), headless), Hello("c-5", 5)});
  EXPECT_EQ(a.conflicts[0].condition.message,
            R"(Conflicting type. Using "ClusterSetIP" from oldest service export in "c-1". )"
            R"(2/5 clusters disagree.)");
  EXPECT_EQ(a.conflicts.size(), 5U);
}

// Equal creation timestamps (whole seconds): the smaller cluster id wins, whatever the input order.
TEST(AggregateTest, TiesBreakByClusterId) {
  const ServiceExportRecord a =
      With(Hello("cluster-b", 1000), [](auto& s) { s.type = "Headless"; });
  const ServiceExportRecord b = Hello("cluster-a", 1000);
  for (const auto& records : {std::vector{a, b}, std::vector{b, a}}) {
    const Aggregation result = MustAggregate(records);
    EXPECT_EQ(result.oldest_cluster, "cluster-a");
    EXPECT_EQ(result.spec.type, "ClusterSetIP");
  }
  // An older timestamp beats a smaller id.
  const ServiceExportRecord older =
      With(Hello("cluster-z", 999), [](auto& s) { s.type = "Headless"; });
  EXPECT_EQ(MustAggregate({b, older}).spec.type, "Headless");
}

// The result does not depend on the order the informer lists the records in.
TEST(AggregateTest, IndependentOfInputOrder) {
  std::vector<ServiceExportRecord> records = {
      Hello("c-1", 5),
      With(Hello("c-2", 3),
           [](auto& s) {
             s.ports = {Port("a", "UDP", 1), Port("tcp", "TCP", 9)};
           }),
      With(Hello("c-3", 3),
           [](auto& s) {
             s.ports = {Port("b", "TCP", 42), Port("c", "TCP", 7)};
           }),
      With(Hello("c-4", 9),
           [](auto& s) {
             s.ip_families = {"IPv6", "IPv4"};
           }),
  };
  const Aggregation first = MustAggregate(records);
  EXPECT_EQ(first.oldest_cluster, "c-2");
  std::mt19937 rng(42);
  for (int i = 0; i < 20; ++i) {
    std::shuffle(records.begin(), records.end(), rng);
    const Aggregation again = MustAggregate(records);
    EXPECT_EQ(again.spec, first.spec);
    EXPECT_EQ(again.clusters, first.clusters);
    EXPECT_EQ(again.conflicts[0].condition, first.conflicts[0].condition);
  }
  // c-2 (oldest) gives a/UDP/1 and tcp/TCP/9; c-3 (same second, larger id) adds b/TCP/42 and
  // c/TCP/7; c-1's tcp/TCP/42 clashes by name with c-2's tcp and is dropped, its udp/UDP/42 added.
  EXPECT_EQ(RenderPorts(first.spec.ports), "a/UDP/1 b/TCP/42 c/TCP/7 tcp/TCP/9 udp/UDP/42");
}

// Port merging: by name first, then protocol+port; an identical port is no clash; an unnamed port
// clashes with any other (a Service with several ports names them all); protocol "" is TCP.
TEST(AggregateTest, MergesPortsByNameThenProtocolAndPort) {
  struct Case {
    std::string_view name;
    std::vector<McsServicePort> older;
    std::vector<McsServicePort> newer;
    std::string want;
    bool conflict;
  };
  const std::vector<Case> cases = {
      {"identical", {Port("a", "TCP", 1)}, {Port("a", "TCP", 1)}, "a/TCP/1", false},
      {"order_does_not_matter",
       {Port("a", "TCP", 1), Port("b", "TCP", 2)},
       {Port("b", "TCP", 2), Port("a", "TCP", 1)},
       "a/TCP/1 b/TCP/2",
       false},
      {"same_name_other_port", {Port("a", "TCP", 1)}, {Port("a", "TCP", 2)}, "a/TCP/1", true},
      {"same_protocol_port_other_name",
       {Port("a", "TCP", 1)},
       {Port("b", "TCP", 1)},
       "a/TCP/1",
       true},
      {"same_port_other_protocol",
       {Port("a", "TCP", 1)},
       {Port("b", "UDP", 1)},
       "a/TCP/1 b/UDP/1",
       true},
      {"app_protocol_differs",
       {Port("a", "TCP", 1, "http")},
       {Port("a", "TCP", 1, "grpc")},
       "a/TCP/1/http",
       true},
      {"unnamed_older_keeps_alone",
       {Port("", "TCP", 80)},
       {Port("http", "TCP", 81)},
       "/TCP/80",
       true},
      {"unnamed_newer_dropped",
       {Port("http", "TCP", 81)},
       {Port("", "TCP", 80)},
       "http/TCP/81",
       true},
      {"unnamed_identical", {Port("", "TCP", 80)}, {Port("", "", 80)}, "/TCP/80", false},
      {"empty_newer", {Port("a", "TCP", 1)}, {}, "a/TCP/1", true},
      {"empty_older", {}, {Port("a", "TCP", 1)}, "a/TCP/1", true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Aggregation a =
        MustAggregate({With(Hello("c-1", 1), [&](auto& s) { s.ports = c.older; }),
                       With(Hello("c-2", 2), [&](auto& s) { s.ports = c.newer; })});
    EXPECT_EQ(RenderPorts(a.spec.ports), c.want);
    EXPECT_EQ(ConflictOf(a), c.conflict ? "True PortConflict" : "False NoConflicts");
    // The result obeys Service rules: unique names, unique protocol+port.
    for (std::size_t i = 0; i < a.spec.ports.size(); ++i) {
      for (std::size_t j = 0; j < i; ++j) {
        EXPECT_NE(a.spec.ports[i].name, a.spec.ports[j].name);
        EXPECT_FALSE(a.spec.ports[i].protocol == a.spec.ports[j].protocol &&
                     a.spec.ports[i].port == a.spec.ports[j].port);
      }
    }
  }
}

// "" and None are the same session affinity, "" and Cluster the same internal traffic policy (the
// API server's defaults): no conflict between them.
TEST(AggregateTest, DefaultedValuesDoNotConflict) {
  const Aggregation a = MustAggregate({With(Hello("c-1", 1),
                                            [](auto& s) {
                                              s.session_affinity = "None";
                                              s.session_affinity_config.reset();
                                              s.internal_traffic_policy = "";
                                            }),
                                       With(Hello("c-2", 2), [](auto& s) {
                                         s.session_affinity = "";
                                         s.session_affinity_config.reset();
                                         s.internal_traffic_policy = "Cluster";
                                       })});
  EXPECT_EQ(ConflictOf(a), "False NoConflicts");
}

// IP families (decision: intersection, docs/design.md), then what this cluster supports. T8 and
// T16 read the import's ipFamilies: never empty.
TEST(AggregateTest, IPFamilies) {
  struct Case {
    std::string_view name;
    std::vector<std::string> older;
    std::vector<std::string> newer;
    std::vector<std::string> local;
    std::string want;   // spec.ipFamilies
    std::string ready;  // "status reason"
    bool conflict;
  };
  const std::vector<Case> cases = {
      {"same_single", {"IPv4"}, {"IPv4"}, {"IPv4"}, "IPv4", "True Ready", false},
      {"dual_both",
       {"IPv6", "IPv4"},
       {"IPv4", "IPv6"},
       {"IPv4", "IPv6"},
       "IPv6,IPv4",
       "True Ready",
       false},
      {"intersection", {"IPv4", "IPv6"}, {"IPv6"}, {"IPv4", "IPv6"}, "IPv6", "True Ready", true},
      {"disjoint_falls_back_to_oldest",
       {"IPv6"},
       {"IPv4"},
       {"IPv4", "IPv6"},
       "IPv6",
       "True Ready",
       true},
      {"local_filters", {"IPv4", "IPv6"}, {"IPv4", "IPv6"}, {"IPv4"}, "IPv4", "True Ready", false},
      {"ipv6_into_ipv4_cluster",
       {"IPv6"},
       {"IPv6"},
       {"IPv4"},
       "IPv6",
       "False IPFamilyNotSupported",
       false},
      {"unknown_local_filters_nothing",
       {"IPv6", "IPv4"},
       {"IPv6", "IPv4"},
       {},
       "IPv6,IPv4",
       "True Ready",
       false},
      {"unspecified_record_constrains_nothing",
       {},
       {"IPv6"},
       {"IPv4", "IPv6"},
       "IPv6",
       "True Ready",
       false},
      {"none_specified_primary_family", {}, {}, {"IPv6", "IPv4"}, "IPv6", "True Ready", false},
      {"none_specified_unknown_local", {}, {}, {}, "IPv4", "True Ready", false},
      {"duplicates_ignored", {"IPv4", "IPv4"}, {"IPv4"}, {"IPv4"}, "IPv4", "True Ready", false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Aggregation a =
        MustAggregate({With(Hello("c-1", 1), [&](auto& s) { s.ip_families = c.older; }),
                       With(Hello("c-2", 2), [&](auto& s) { s.ip_families = c.newer; })},
                      Here(c.local));
    EXPECT_EQ(Join(a.spec.ip_families), c.want);
    EXPECT_EQ(a.ready.type, "Ready");
    EXPECT_EQ(a.ready.status + " " + a.ready.reason, c.ready);
    EXPECT_EQ(ConflictOf(a), c.conflict ? "True IPFamilyConflict" : "False NoConflicts");
  }
  // The IPFamilyNotSupported message names both sides.
  const Aggregation a = MustAggregate(
      {With(Hello("c-1", 1), [](auto& s) { s.ip_families = {"IPv6"}; })}, Here({"IPv4"}));
  EXPECT_EQ(a.ready.message,
            R"(The service's IP families (IPv6) are not supported by cluster "cluster-1" (IPv4).)");
  EXPECT_FALSE(a.endpoint_slices);
}

// One cluster's extra records (never written by a correct agent) count once: the oldest.
TEST(AggregateTest, OneVotePerCluster) {
  const Aggregation a =
      MustAggregate({Hello("c-1", 1), With(Hello("c-1", 5), [](auto& s) { s.type = "Headless"; })});
  EXPECT_EQ(a.clusters, std::vector<std::string>{"c-1"});
  EXPECT_EQ(ConflictOf(a), "False NoConflicts");
  EXPECT_EQ(a.spec.type, "ClusterSetIP");
}

TEST(AggregateTest, NoRecordsNoImport) { EXPECT_FALSE(Aggregate({}, Here()).has_value()); }

// The EndpointSlice policy: the flag, overridden by the oldest export's annotation (T16 needs
// slices in every cluster: the default `all`).
TEST(AggregateTest, EndpointSlicePolicy) {
  struct Case {
    std::string_view name;
    EndpointSliceSyncPolicy policy;
    std::string type;
    std::optional<bool> oldest_annotation;
    std::optional<bool> newer_annotation;
    bool want;
    std::string_view reason_part;
  };
  using P = EndpointSliceSyncPolicy;
  const std::vector<Case> cases = {
      {"all_clusterip", P::kAll, "ClusterSetIP", {}, {}, true, "=all"},
      {"all_annotated_false",
       P::kAll,
       "ClusterSetIP",
       false,
       {},
       false,
       R"(endpointslice-sync: "false"; remove the annotation)"},
      {"headless_clusterip",
       P::kHeadless,
       "ClusterSetIP",
       {},
       {},
       false,
       R"(annotate the ServiceExport in "c-1" with mcs.slicewright.io/endpointslice-sync: "true")"},
      {"headless_headless", P::kHeadless, "Headless", {}, {}, true, "=headless"},
      {"headless_annotated_true", P::kHeadless, "ClusterSetIP", true, {}, true, "\"true\""},
      {"headless_headless_annotated_false",
       P::kHeadless,
       "Headless",
       false,
       {},
       false,
       "\"false\""},
      {"annotated_unset", P::kAnnotated, "Headless", {}, {}, false, "=annotated"},
      {"annotated_true", P::kAnnotated, "ClusterSetIP", true, {}, true, "\"true\""},
      {"annotated_only_newer_true", P::kAnnotated, "ClusterSetIP", {}, true, false, "=annotated"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Aggregation a = MustAggregate({With(Hello("c-1", 1),
                                              [&](auto& s) {
                                                s.type = c.type;
                                                s.endpoint_slice_sync = c.oldest_annotation;
                                              }),
                                         With(Hello("c-2", 2),
                                              [&](auto& s) {
                                                s.type = c.type;
                                                s.endpoint_slice_sync = c.newer_annotation;
                                              })},
                                        Here({"IPv4"}, c.policy));
    EXPECT_EQ(a.endpoint_slices, c.want);
    EXPECT_NE(a.endpoint_slices_reason.find(c.reason_part), std::string::npos)
        << a.endpoint_slices_reason;
  }
}

TEST(AggregateTest, ParsesThePolicyFlag) {
  EXPECT_EQ(ParseEndpointSliceSyncPolicy("all").value(), EndpointSliceSyncPolicy::kAll);
  EXPECT_EQ(ParseEndpointSliceSyncPolicy("headless").value(), EndpointSliceSyncPolicy::kHeadless);
  EXPECT_EQ(ParseEndpointSliceSyncPolicy("annotated").value(), EndpointSliceSyncPolicy::kAnnotated);
  const Result<EndpointSliceSyncPolicy> bad = ParseEndpointSliceSyncPolicy("All");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalid);
  EXPECT_EQ(bad.status().message(),
            R"(--mcs-endpointslice-sync: expected all, headless or annotated, got "All")");
  for (const auto policy : {EndpointSliceSyncPolicy::kAll, EndpointSliceSyncPolicy::kHeadless,
                            EndpointSliceSyncPolicy::kAnnotated}) {
    EXPECT_EQ(ParseEndpointSliceSyncPolicy(EndpointSliceSyncPolicyName(policy)).value(), policy);
  }
}

// Every transition of spec §8.4.
// A refused write of the import's objects: IPFamilyNotSupported when the server's refusal names
// the IP family fields (kube-apiserver's 422 for a dual-stack Service on a single-stack cluster),
// else Failed; the message names what and quotes the server.
TEST(ImportRefusedConditionTest, ReasonFollowsTheRefusal) {
  Status not_dual_stack(StatusCode::kInvalid,
                        "Service \"derived-x\" is invalid: spec.ipFamilyPolicy: Invalid value: "
                        "\"RequireDualStack\": this cluster is not configured for dual-stack "
                        "services");
  model::Condition ready = ImportRefusedCondition("the derived Service derived-x", not_dual_stack);
  EXPECT_EQ(ready.type, "Ready");
  EXPECT_EQ(ready.status, "False");
  EXPECT_EQ(ready.reason, "IPFamilyNotSupported");
  EXPECT_NE(ready.message.find("refused the derived Service derived-x: "), std::string::npos)
      << ready.message;
  EXPECT_NE(ready.message.find("not configured for dual-stack"), std::string::npos);
  // The field given as a cause only (IPv6 on an IPv4 cluster).
  Status v6(StatusCode::kInvalid, "Service \"derived-x\" is invalid");
  v6.WithCauses({{"FieldValueInvalid", "Invalid value: \"IPv6\": not configured on this cluster",
                  "spec.ipFamilies[0]"}});
  EXPECT_EQ(ImportRefusedCondition("the derived Service derived-x", v6).reason,
            "IPFamilyNotSupported");
  // Anything else: Failed.
  const Status forbidden(StatusCode::kForbidden,
                         "endpointslices is forbidden: spec.ipFamilies is not the point");
  EXPECT_EQ(ImportRefusedCondition("its MCS EndpointSlices", forbidden).reason, "Failed");
  const Status ports(StatusCode::kInvalid, "spec.ports[0].port: Invalid value: 0");
  EXPECT_EQ(ImportRefusedCondition("the derived Service derived-x", ports).reason, "Failed");
  EXPECT_LE(ImportRefusedCondition("x", Status(StatusCode::kInvalid, std::string(40000, 'a')))
                .message.size(),
            32768U);
}

TEST(DecideEndpointSliceObjectsTest, Transitions) {
  struct Case {
    std::string_view name;
    bool wanted;
    bool synced;
    EndpointSliceObjects current;
    EndpointSliceObjects write;
    bool delete_slices;
  };
  using E = EndpointSliceObjects;
  const std::vector<Case> cases = {
      // First reconcile of a new import: never left unset; Present only once synced.
      {"new_import_not_synced", true, false, E::kUnset, E::kAbsent, false},
      {"new_import_synced", true, true, E::kUnset, E::kPresent, false},
      {"initial_sync_done", true, true, E::kAbsent, E::kPresent, false},
      {"initial_sync_in_progress", true, false, E::kAbsent, E::kAbsent, false},
      // Steady state; zero ready endpoints are still written slices (synced): stays Present.
      {"steady_present", true, true, E::kPresent, E::kPresent, false},
      // A source cluster joins or returns (Lease renewed) and its slices are not written yet.
      {"cluster_joins_keeps_present", true, false, E::kPresent, E::kPresent, false},
      // Policy switched off: flip to Absent first, delete after.
      {"switch_off_flips_first", false, true, E::kPresent, E::kAbsent, false},
      {"switch_off_then_deletes", false, true, E::kAbsent, E::kAbsent, true},
      {"switch_off_unsynced_present", false, false, E::kPresent, E::kAbsent, false},
      {"never_wanted_legacy_unset", false, false, E::kUnset, E::kAbsent, false},
      {"never_wanted_absent", false, false, E::kAbsent, E::kAbsent, true},
      // Policy switched back on: Absent until the slices are written again.
      {"switch_on_not_synced", true, false, E::kAbsent, E::kAbsent, false},
      {"switch_on_synced", true, true, E::kAbsent, E::kPresent, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const EndpointSliceObjectsDecision d =
        DecideEndpointSliceObjects(c.wanted, c.synced, c.current);
    EXPECT_EQ(d.write, c.write);
    EXPECT_EQ(d.delete_slices, c.delete_slices);
    EXPECT_NE(d.write, E::kUnset);
  }
}

}  // namespace
}  // namespace slicewright::mcs

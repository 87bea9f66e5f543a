#include "slicewright/mcs/cluster_families.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "slicewright/mcs/aggregate.h"
#include "slicewright/model/mcs.h"
#include "slicewright/model/time.h"

// The importing cluster's own IP families: --mcs-cluster-ip-families, the dry-run probe Service
// and its answer, and what they decide in Aggregate (spec §4 I6: Ready=False IPFamilyNotSupported).
namespace slicewright::mcs {
namespace {

using Families = std::vector<std::string>;

TEST(ClusterIpFamiliesTest, ParsesTheFlag) {
  struct Case {
    std::string flag;
    Families want;
  };
  const std::vector<Case> cases = {
      {"", {}},
      {"  ", {}},
      {"IPv4", {"IPv4"}},
      {"IPv6", {"IPv6"}},
      {"IPv4,IPv6", {"IPv4", "IPv6"}},
      {"IPv6,IPv4", {"IPv6", "IPv4"}},
      {"IPv4, IPv6", {"IPv4", "IPv6"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.flag);
    const Result<Families> parsed = ParseClusterIpFamilies(c.flag);
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    EXPECT_EQ(*parsed, c.want);
  }
}

TEST(ClusterIpFamiliesTest, RefusesBadValuesNamingTheFlag) {
  struct Case {
    std::string flag;
    std::string problem;
  };
  const std::vector<Case> cases = {
      {"ipv4", R"("ipv4" is not IPv4 or IPv6)"},
      {"IPv4,", R"("" is not IPv4 or IPv6)"},
      {"IPv4,IPv4", "IPv4 twice"},
      {"IPv4,IPv6,IPv4", "more than 2 families"},
      {"dual", R"("dual" is not IPv4 or IPv6)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.flag);
    const Result<Families> parsed = ParseClusterIpFamilies(c.flag);
    ASSERT_FALSE(parsed.ok());
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalid);
    EXPECT_EQ(parsed.status().message(),
              "--mcs-cluster-ip-families: expected IPv4, IPv6, IPv4,IPv6 or IPv6,IPv4 (the "
              "primary family first): " +
                  c.problem);
  }
}

// A ClusterIP Service with a selector (matching no pod), PreferDualStack: the answer carries the
// ClusterIPs the server would allocate, one per family it serves. Never headless without a
// selector: kube-apiserver gives that both families on a single-stack cluster (issue #30). A
// generated name, so it never collides with a Service of the namespace.
TEST(ClusterIpFamiliesTest, ProbeServiceAsksForEveryFamilyTheServerAllocates) {
  const model::Service probe = IpFamilyProbeService("default");
  EXPECT_EQ(probe.metadata.namespace_, "default");
  EXPECT_TRUE(probe.metadata.name.empty());
  EXPECT_FALSE(probe.metadata.generate_name.empty());
  EXPECT_EQ(probe.spec.cluster_ip, "");
  EXPECT_EQ(probe.spec.ip_family_policy, "PreferDualStack");
  EXPECT_TRUE(probe.spec.ip_families.empty());
  ASSERT_TRUE(probe.spec.selector.has_value());
  EXPECT_FALSE(probe.spec.selector->empty());
  ASSERT_EQ(probe.spec.ports.size(), 1U);
  // The fallback allocates nothing, and still has a selector.
  const model::Service headless = IpFamilyProbeService("default", /*headless=*/true);
  EXPECT_EQ(headless.spec.cluster_ip, "None");
  EXPECT_EQ(headless.spec.ip_family_policy, "PreferDualStack");
  ASSERT_TRUE(headless.spec.selector.has_value());
  EXPECT_FALSE(headless.spec.selector->empty());
}

TEST(ClusterIpFamiliesTest, ReadsTheProbesAnswer) {
  model::Service answered = IpFamilyProbeService("default", /*headless=*/true);
  answered.spec.cluster_ip = "None";
  answered.spec.cluster_ips = {"None"};
  for (const Families& families :
       {Families{"IPv4"}, Families{"IPv6"}, Families{"IPv6", "IPv4"}, Families{"IPv4", "IPv6"}}) {
    answered.spec.ip_families = families;
    const Result<Families> read = ClusterIpFamiliesFromProbe(answered);
    ASSERT_TRUE(read.ok()) << read.status().ToString();
    EXPECT_EQ(*read, families);
  }
  for (const Families& families :
       {Families{}, Families{"IPv4", "IPv4"}, Families{"IPv5"}, Families{"IPv4", "IPv6", "IPv4"}}) {
    answered.spec.ip_families = families;
    const Result<Families> read = ClusterIpFamiliesFromProbe(answered);
    EXPECT_EQ(read.status().code(), StatusCode::kInvalid) << families.size();
  }
}

// A ClusterIP answer: the families of the addresses the server allocated, in their order, whatever
// spec.ipFamilies says.
TEST(ClusterIpFamiliesTest, TheAllocatedClusterIpsDecide) {
  model::Service answered = IpFamilyProbeService("default");
  answered.spec.ip_families = {"IPv4", "IPv6"};
  answered.spec.cluster_ip = "10.96.0.10";
  answered.spec.cluster_ips = {"10.96.0.10"};
  Result<Families> read = ClusterIpFamiliesFromProbe(answered);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(*read, Families{"IPv4"});
  answered.spec.cluster_ip = "fd00:10:96::a";
  answered.spec.cluster_ips = {"fd00:10:96::a", "10.96.0.10"};
  read = ClusterIpFamiliesFromProbe(answered);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(*read, (Families{"IPv6", "IPv4"}));
  answered.spec.cluster_ips = {"10.96.0.10", "10.96.0.11"};
  read = ClusterIpFamiliesFromProbe(answered);
  EXPECT_EQ(read.status().code(), StatusCode::kInvalid);
  EXPECT_NE(read.status().ToString().find("spec.clusterIPs"), std::string::npos)
      << read.status().ToString();
}

model::ServiceExportRecord Record(std::string cluster, Families families) {
  model::ServiceExportRecord r;
  r.metadata.name = "web.ns." + cluster;
  r.spec.cluster = std::move(cluster);
  r.spec.namespace_ = "ns";
  r.spec.name = "web";
  r.spec.export_creation_timestamp = model::Time::FromUnixSeconds(100);
  r.spec.type = "ClusterSetIP";
  r.spec.ports = {{"http", "TCP", std::nullopt, 80}};
  r.spec.ip_families = std::move(families);
  return r;
}

// The flag's families decide the import's Ready; the exports' Conflict stays NoConflicts (a family
// this cluster cannot serve is not a disagreement between the exporting clusters).
TEST(ClusterIpFamiliesTest, FlagDecidesReadyNotConflict) {
  const std::vector<model::ServiceExportRecord> v6_only = {Record("b", {"IPv6"}),
                                                           Record("c", {"IPv6"})};
  ImportingCluster here;
  here.cluster_id = "a";
  here.ip_families = ParseClusterIpFamilies("IPv4").value();
  const std::optional<Aggregation> refused = Aggregate(v6_only, here);
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->ready.status, "False");
  EXPECT_EQ(refused->ready.reason, "IPFamilyNotSupported");
  EXPECT_EQ(refused->spec.ip_families, Families{"IPv6"});
  EXPECT_FALSE(refused->endpoint_slices);
  ASSERT_EQ(refused->conflicts.size(), 2U);
  for (const ExportConflict& conflict : refused->conflicts) {
    EXPECT_EQ(conflict.condition.status, "False");
    EXPECT_EQ(conflict.condition.reason, "NoConflicts");
  }

  here.ip_families = ParseClusterIpFamilies("IPv4,IPv6").value();
  const std::optional<Aggregation> served = Aggregate(v6_only, here);
  ASSERT_TRUE(served.has_value());
  EXPECT_EQ(served->ready.status, "True");
  EXPECT_EQ(served->spec.ip_families, Families{"IPv6"});

  // A dual-stack service into an IPv6-only cluster: Ready, with the family it can serve.
  here.ip_families = ParseClusterIpFamilies("IPv6").value();
  const std::vector<model::ServiceExportRecord> dual = {Record("b", {"IPv4", "IPv6"})};
  const std::optional<Aggregation> narrowed = Aggregate(dual, here);
  ASSERT_TRUE(narrowed.has_value());
  EXPECT_EQ(narrowed->ready.status, "True");
  EXPECT_EQ(narrowed->spec.ip_families, Families{"IPv6"});
}

}  // namespace
}  // namespace slicewright::mcs

#include "slicewright/mcs/identity.h"

#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "slicewright/model/mcs.h"

// Cluster ids (spec §10), the derived Service name (spec §11) and the broker record name.
namespace slicewright::mcs {
namespace {

// The test vectors of spec §11 (the mcs-api reference controller's, Cilium's and CoreDNS's name).
TEST(DerivedServiceNameTest, SpecVectors) {
  EXPECT_EQ(DerivedServiceName("default", "foo"), "derived-ihu8utvv70");
  EXPECT_EQ(DerivedServiceName("demo", "serve"), "derived-ovtkn0laet");
  EXPECT_EQ(DerivedServiceName("my-ns", "my-svc"), "derived-a2v4k9sqn6");
  EXPECT_EQ(DerivedServiceName("default", "rebel-base-mcsapi"), "derived-k5pqnfq741");
  // A valid DNS label whatever the input: 8 + 10 characters of [0-9a-v].
  const std::string name = DerivedServiceName("x", "y");
  EXPECT_EQ(name.size(), 18U);
  EXPECT_EQ(name.find_first_not_of("0123456789abcdefghijklmnopqrstuv", 8), std::string::npos);
}

TEST(ClusterIdTest, Validation) {
  struct Case {
    std::string id;
    std::string want;  // "" when valid, else the message
  };
  const std::vector<Case> cases = {
      {"cluster-1", ""},
      {"cluster-1.example", ""},
      {std::string(63, 'a') + "." + std::string(63, 'b'), ""},  // 127 characters
      {"", "cluster id is empty"},
      {std::string(63, 'a') + "." + std::string(64, 'b'),
       "cluster id \"" + std::string(63, 'a') + "." + std::string(64, 'b') +
           "\": must be no more than 127 characters"},
      {"Cluster-1",
       "cluster id \"Cluster-1\": a lowercase RFC 1123 subdomain must consist of lower case "
       "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric "
       "character (e.g. 'example.com', regex used for validation is "
       "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.id);
    const Status status = ValidateClusterId(c.id);
    if (c.want.empty()) {
      EXPECT_TRUE(status.ok()) << status.ToString();
    } else {
      EXPECT_EQ(status.code(), StatusCode::kInvalid);
      EXPECT_EQ(status.message(), c.want);
    }
  }
}

model::ClusterProperty Property(std::string name, std::string value) {
  model::ClusterProperty p;
  p.metadata.name = std::move(name);
  p.value = std::move(value);
  return p;
}

// id.k8s.io, else cluster.clusterset.k8s.io, else the flag; validated; none at all is an error.
TEST(ClusterIdTest, Resolution) {
  const std::vector<model::ClusterProperty> both = {
      Property("cluster.clusterset.k8s.io", "from-clusterset"), Property("id.k8s.io", "from-id"),
      Property("clusterset.k8s.io", "the-set")};
  EXPECT_EQ(ResolveClusterId(both, "from-flag").value(), "from-id");
  const std::vector<model::ClusterProperty> old_name = {
      Property("cluster.clusterset.k8s.io", "from-clusterset")};
  EXPECT_EQ(ResolveClusterId(old_name, "from-flag").value(), "from-clusterset");
  EXPECT_EQ(ResolveClusterId({}, "from-flag").value(), "from-flag");

  const std::vector<model::ClusterProperty> bad = {Property("id.k8s.io", "Bad_Id")};
  const Result<std::string> from_bad = ResolveClusterId(bad, "from-flag");
  ASSERT_FALSE(from_bad.ok());
  EXPECT_EQ(from_bad.status().code(), StatusCode::kInvalid);
  EXPECT_TRUE(from_bad.status().message().starts_with(
      "ClusterProperty id.k8s.io: cluster id \"Bad_Id\": a lowercase RFC 1123 subdomain"))
      << from_bad.status().message();
  const Result<std::string> bad_flag = ResolveClusterId({}, "UPPER");
  ASSERT_FALSE(bad_flag.ok());
  EXPECT_TRUE(bad_flag.status().message().starts_with("--cluster-id: cluster id \"UPPER\""));
  const Result<std::string> none = ResolveClusterId({}, "");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().message(),
            "no cluster id: set the ClusterProperty id.k8s.io (or cluster.clusterset.k8s.io) or "
            "--cluster-id");
}

TEST(ExportRecordNameTest, ServiceNamespaceCluster) {
  EXPECT_EQ(ExportRecordName("demo", "serve", "cluster-1.east"), "serve.demo.cluster-1.east");
}

}  // namespace
}  // namespace slicewright::mcs

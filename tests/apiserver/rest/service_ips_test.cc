// Tests for kube-apiserver's Service IP-family rules (service_ips.h): every combination of
// policy, given families, headless or not and selector or not, on a single- and a dual-stack
// cluster, as tests/realcluster/apiserver_diff_test.py saw kube-apiserver 1.34 answer them; the
// update rules (keep, upgrade, downgrade, type changes).
#include "apiserver/rest/service_ips.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace slicewright::apiserver {
namespace {

Json Service(const std::string& spec) {
  return Json{{"metadata", {{"name", "s"}}}, {"spec", Json::parse(spec)}};
}

const ServiceIpFamilies kSingle{"IPv4", false};
const ServiceIpFamilies kDual{"IPv4", true};

// (policy, families) after NormalizeClusterIps and InitIpFamilyFields (as a create runs them), or
// the error message.
std::string Families(const ServiceIpFamilies& cluster, const std::string& spec) {
  Json service = Service(spec);
  NormalizeClusterIps(service, nullptr);
  Status status = InitIpFamilyFields(cluster, service, nullptr);
  if (!status.ok()) {
    return std::string(status.message());
  }
  return service["spec"].value("ipFamilyPolicy", "") + " " +
         service["spec"].value("ipFamilies", Json::array()).dump();
}

// The issue #30 probe: a selector-less headless PreferDualStack Service gets both families on
// any cluster; with a selector it gets what the cluster serves.
TEST(ServiceIpsTest, HeadlessSelectorlessGetsBothFamiliesOnAnyCluster) {
  const std::string probe = R"({"clusterIP":"None","ipFamilyPolicy":"PreferDualStack"})";
  EXPECT_EQ(Families(kSingle, probe), R"(PreferDualStack ["IPv4","IPv6"])");
  EXPECT_EQ(Families(kDual, probe), R"(PreferDualStack ["IPv4","IPv6"])");
  const std::string with_selector =
      R"({"clusterIP":"None","ipFamilyPolicy":"PreferDualStack","selector":{"a":"b"}})";
  EXPECT_EQ(Families(kSingle, with_selector), R"(PreferDualStack ["IPv4"])");
  EXPECT_EQ(Families(kDual, with_selector), R"(PreferDualStack ["IPv4","IPv6"])");
  // Without a policy: RequireDualStack, even where one family is served.
  EXPECT_EQ(Families(kSingle, R"({"clusterIP":"None"})"), R"(RequireDualStack ["IPv4","IPv6"])");
  EXPECT_EQ(Families(kSingle, R"({"clusterIP":"None","ipFamilyPolicy":"SingleStack"})"),
            R"(SingleStack ["IPv4"])");
  EXPECT_EQ(Families(kSingle, R"({"clusterIP":"None","ipFamilies":["IPv6"]})"),
            R"(RequireDualStack ["IPv6","IPv4"])");
  EXPECT_EQ(Families(kSingle, R"({"clusterIP":"None","selector":{"a":"b"}})"),
            R"(SingleStack ["IPv4"])");
}

TEST(ServiceIpsTest, ClusterIpServicesFollowTheCluster) {
  struct Case {
    std::string spec;
    std::string single;
    std::string dual;
  };
  const std::string not_dual =
      "Service \"s\" is invalid: spec.ipFamilyPolicy: Invalid value: \"RequireDualStack\": this "
      "cluster is not configured for dual-stack services";
  const std::vector<Case> cases = {
      {R"({})", R"(SingleStack ["IPv4"])", R"(SingleStack ["IPv4"])"},
      {R"({"ipFamilyPolicy":"PreferDualStack"})", R"(PreferDualStack ["IPv4"])",
       R"(PreferDualStack ["IPv4","IPv6"])"},
      {R"({"ipFamilyPolicy":"RequireDualStack"})", not_dual, R"(RequireDualStack ["IPv4","IPv6"])"},
      {R"({"ipFamilies":["IPv6"]})",
       "Service \"s\" is invalid: spec.ipFamilies[0]: Invalid value: \"IPv6\": not configured on "
       "this cluster",
       R"(SingleStack ["IPv6"])"},
      {R"({"ipFamilies":["IPv6","IPv4"],"ipFamilyPolicy":"PreferDualStack"})",
       "Service \"s\" is invalid: spec.ipFamilies[0]: Invalid value: \"IPv6\": not configured on "
       "this cluster",
       R"(PreferDualStack ["IPv6","IPv4"])"},
      {R"({"ipFamilies":["IPv4","IPv6"]})",
       "Service \"s\" is invalid: spec.ipFamilyPolicy: Invalid value: \"SingleStack\": must be "
       "'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified",
       "Service \"s\" is invalid: spec.ipFamilyPolicy: Invalid value: \"SingleStack\": must be "
       "'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified"},
      {R"({"clusterIP":"fd00::1","clusterIPs":["fd00::1"]})",
       "Service \"s\" is invalid: spec.clusterIPs[0]: Invalid value: [\"fd00::1\"]: IPv6 is not "
       "configured on this cluster",
       R"(SingleStack ["IPv6"])"},
      {R"({"clusterIPs":["10.0.0.1"]})",
       "Service \"s\" is invalid: spec.clusterIPs: Invalid value: [\"10.0.0.1\"]: must be empty "
       "when `clusterIP` is not specified",
       "Service \"s\" is invalid: spec.clusterIPs: Invalid value: [\"10.0.0.1\"]: must be empty "
       "when `clusterIP` is not specified"},
      {R"({"ipFamilies":["IPv5"]})",
       "Service \"s\" is invalid: spec.ipFamilies[0]: Unsupported value: \"IPv5\": supported "
       "values: \"IPv4\", \"IPv6\"",
       "Service \"s\" is invalid: spec.ipFamilies[0]: Unsupported value: \"IPv5\": supported "
       "values: \"IPv4\", \"IPv6\""},
      // ExternalName: nothing defaulted.
      {R"({"type":"ExternalName"})", R"( [])", R"( [])"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.spec);
    EXPECT_EQ(Families(kSingle, c.spec), c.single);
    EXPECT_EQ(Families(kDual, c.spec), c.dual);
  }
}

TEST(ServiceIpsTest, NormalizeClusterIpsKeepsTheTwoFieldsInStep) {
  Json created = Service(R"({"clusterIP":"10.0.0.1"})");
  NormalizeClusterIps(created, nullptr);
  EXPECT_EQ(created["spec"]["clusterIPs"], Json::parse(R"(["10.0.0.1"])"));
  const Json old = Service(R"({"clusterIP":"10.0.0.1","clusterIPs":["10.0.0.1","fd00::1"]})");
  Json omitted = Service(R"({"clusterIP":"10.0.0.1"})");
  NormalizeClusterIps(omitted, &old);
  EXPECT_EQ(omitted["spec"]["clusterIPs"], old["spec"]["clusterIPs"]);
  Json changed = Service(R"({"clusterIP":"10.0.0.2","clusterIPs":["10.0.0.1","fd00::1"]})");
  NormalizeClusterIps(changed, &old);
  EXPECT_EQ(changed["spec"]["clusterIPs"], Json::parse(R"(["10.0.0.2"])"));
  Json cleared = Service(R"({"clusterIPs":["10.0.0.1","fd00::1"]})");
  NormalizeClusterIps(cleared, &old);
  EXPECT_FALSE(cleared["spec"].contains("clusterIPs"));
}

TEST(ServiceIpsTest, UpdatesKeepUpgradeAndDowngrade) {
  const Json dual_stored = Service(
      R"({"clusterIP":"10.0.0.1","clusterIPs":["10.0.0.1","fd00::1"],
          "ipFamilies":["IPv4","IPv6"],"ipFamilyPolicy":"RequireDualStack"})");
  // SingleStack with the IPs and families left as they were drops the secondary.
  Json down = dual_stored;
  down["spec"]["ipFamilyPolicy"] = "SingleStack";
  ASSERT_TRUE(InitIpFamilyFields(kDual, down, &dual_stored).ok());
  EXPECT_EQ(down["spec"]["clusterIPs"], Json::parse(R"(["10.0.0.1"])"));
  EXPECT_EQ(down["spec"]["ipFamilies"], Json::parse(R"(["IPv4"])"));
  // Dropping a family without SingleStack is refused.
  Json reduced = dual_stored;
  reduced["spec"]["ipFamilies"] = Json::parse(R"(["IPv4"])");
  EXPECT_EQ(InitIpFamilyFields(kDual, reduced, &dual_stored).message(),
            "Service \"s\" is invalid: spec.ipFamilyPolicy: Invalid value: \"RequireDualStack\": "
            "must be 'SingleStack' to release the secondary IP family");
  // An update without a policy keeps the stored one; PreferDualStack upgrades.
  const Json single_stored = Service(
      R"({"clusterIP":"10.0.0.1","clusterIPs":["10.0.0.1"],"ipFamilies":["IPv4"],
          "ipFamilyPolicy":"SingleStack"})");
  Json kept = Service(R"({"clusterIP":"10.0.0.1","clusterIPs":["10.0.0.1"]})");
  ASSERT_TRUE(InitIpFamilyFields(kDual, kept, &single_stored).ok());
  EXPECT_EQ(kept["spec"]["ipFamilyPolicy"], "SingleStack");
  Json up = single_stored;
  up["spec"]["ipFamilyPolicy"] = "PreferDualStack";
  ASSERT_TRUE(InitIpFamilyFields(kDual, up, &single_stored).ok());
  EXPECT_EQ(up["spec"]["ipFamilies"], Json::parse(R"(["IPv4","IPv6"])"));
  // A PreferDualStack Service that keeps its IPs and families is not upgraded by a cluster that
  // became dual-stack.
  const Json prefer_stored = Service(
      R"({"clusterIP":"10.0.0.1","clusterIPs":["10.0.0.1"],"ipFamilies":["IPv4"],
          "ipFamilyPolicy":"PreferDualStack"})");
  Json touched = prefer_stored;
  touched["spec"]["selector"] = Json{{"a", "b"}};
  EXPECT_TRUE(IsUnchangedPreferDualStack(touched, prefer_stored));
  ASSERT_TRUE(InitIpFamilyFields(kDual, touched, &prefer_stored).ok());
  EXPECT_EQ(touched["spec"]["ipFamilies"], Json::parse(R"(["IPv4"])"));
  // The primary IP and family may not change.
  Json moved = single_stored;
  moved["spec"]["clusterIP"] = "10.0.0.9";
  moved["spec"]["clusterIPs"] = Json::parse(R"(["10.0.0.9"])");
  FieldErrors errors;
  ValidateIpUpgradeDowngrade(moved, single_stored, errors);
  EXPECT_EQ(errors.errors(),
            std::vector<std::string>{"spec.clusterIPs[0]: Invalid value: [\"10.0.0.9\"]: may not "
                                     "change once set"});
}

TEST(ServiceIpsTest, PatchAllocatedValuesAndTypeChanges) {
  const Json stored = Service(
      R"({"type":"NodePort","clusterIP":"10.0.0.1","clusterIPs":["10.0.0.1"],
          "ports":[{"name":"http","port":80,"nodePort":30080},{"name":"x","port":81,"nodePort":30081}]})");
  // A re-applied manifest without the allocated values gets them back, node ports by port name.
  Json reapplied = Service(
      R"({"type":"NodePort","ports":[{"name":"x","port":8081},{"name":"http","port":80}]})");
  PatchAllocatedValues(reapplied, stored);
  EXPECT_EQ(reapplied["spec"]["clusterIP"], "10.0.0.1");
  EXPECT_EQ(reapplied["spec"]["ports"][0]["nodePort"], 30081);
  EXPECT_EQ(reapplied["spec"]["ports"][1]["nodePort"], 30080);
  // To ClusterIP with the node ports as they were: they go; to ExternalName: the IPs go.
  Json to_cluster_ip = stored;
  to_cluster_ip["spec"]["type"] = "ClusterIP";
  DropTypeDependentFields(to_cluster_ip, stored);
  EXPECT_FALSE(to_cluster_ip["spec"]["ports"][0].contains("nodePort"));
  Json to_external = stored;
  to_external["spec"]["type"] = "ExternalName";
  DropTypeDependentFields(to_external, stored);
  EXPECT_FALSE(to_external["spec"].contains("clusterIP"));
  EXPECT_FALSE(to_external["spec"].contains("clusterIPs"));
}

}  // namespace
}  // namespace slicewright::apiserver

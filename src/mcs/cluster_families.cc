#include "slicewright/mcs/cluster_families.h"

#include <algorithm>
#include <utility>

#include "slicewright/model/mcs.h"

namespace slicewright::mcs {
namespace {

bool IsFamily(std::string_view family) {
  return family == model::kIPFamilyIPv4 || family == model::kIPFamilyIPv6;
}

std::string_view Trim(std::string_view text) {
  const std::size_t first = text.find_first_not_of(' ');
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(' ') - first + 1);
}

// 1 or 2 distinct families, else a message saying what is wrong.
std::string CheckFamilies(const std::vector<std::string>& families) {
  if (families.empty()) return "no family";
  if (families.size() > 2) return "more than 2 families";
  for (const std::string& family : families) {
    if (!IsFamily(family)) return "\"" + family + "\" is not IPv4 or IPv6";
  }
  if (families.size() == 2 && families[0] == families[1]) return families[0] + " twice";
  return {};
}

}  // namespace

Result<std::vector<std::string>> ParseClusterIpFamilies(std::string_view flag) {
  std::vector<std::string> families;
  if (Trim(flag).empty()) return families;
  while (true) {
    const std::size_t comma = flag.find(',');
    families.emplace_back(Trim(flag.substr(0, comma)));
    if (comma == std::string_view::npos) break;
    flag.remove_prefix(comma + 1);
  }
  if (const std::string problem = CheckFamilies(families); !problem.empty()) {
    return InvalidError("--mcs-cluster-ip-families: expected IPv4, IPv6, IPv4,IPv6 or IPv6,IPv4 " +
                        std::string("(the primary family first): ") + problem);
  }
  return families;
}

model::Service IpFamilyProbeService(std::string_view namespace_, bool headless) {
  model::Service probe;
  probe.metadata.namespace_ = std::string(namespace_);
  probe.metadata.generate_name = "slicewright-mcs-ip-family-probe-";
  if (headless) probe.spec.cluster_ip = "None";
  probe.spec.ip_family_policy = "PreferDualStack";
  probe.spec.selector = model::StringMap{{"mcs.slicewright.io/ip-family-probe", "true"}};
  model::ServicePort& port = probe.spec.ports.emplace_back();
  port.name = "probe";
  port.port = 80;
  return probe;
}

Result<std::vector<std::string>> ClusterIpFamiliesFromProbe(const model::Service& answered) {
  std::vector<std::string> allocated;
  for (const std::string& ip : answered.spec.cluster_ips) {
    if (ip.empty() || ip == "None") continue;
    allocated.emplace_back(ip.find(':') == std::string::npos ? model::kIPFamilyIPv4
                                                             : model::kIPFamilyIPv6);
  }
  const bool from_ips = !allocated.empty();
  const std::vector<std::string>& families = from_ips ? allocated : answered.spec.ip_families;
  if (const std::string problem = CheckFamilies(families); !problem.empty()) {
    return InvalidError("the API server's answer to the IP family probe has " + problem +
                        (from_ips ? " in spec.clusterIPs" : " in spec.ipFamilies"));
  }
  return families;
}

}  // namespace slicewright::mcs

// kube-apiserver's rules for a Service's cluster IP fields before its addresses are allocated
// (pkg/registry/core/service/storage: patchAllocatedValues, normalizeClusterIPs and
// initIPFamilyFields with validation's ValidateServiceClusterIPsRelatedFields), the fields an
// update drops when the type no longer needs them (the strategy's dropTypeDependentFields), and
// the update checks of upgrading and downgrading between single- and dual-stack. Pure functions
// over the Service as JSON; thread-safe. Messages are kube-apiserver 1.34's.
#pragma once

#include <string>
#include <string_view>

#include "slicewright/base/status.h"

#include "apiserver/rest/json_util.h"
#include "apiserver/rest/objects.h"

namespace slicewright::apiserver {

// The families the cluster serves (--service-cluster-ip-range): the primary one, what a Service
// without ipFamilies gets, and whether the other one is served too.
struct ServiceIpFamilies {
  std::string primary = "IPv4";
  bool dual_stack = false;

  bool Serves(std::string_view family) const;
  // The other family of "IPv4"/"IPv6".
  static std::string Other(std::string_view family);
};

// "IPv4" or "IPv6" for an address, "unknown" for anything else.
std::string IpFamilyOf(std::string_view ip);

// An update that leaves out values the server allocated keeps them: clusterIP(s) while both
// versions need one, node ports by port name while both need them, healthCheckNodePort.
void PatchAllocatedValues(Json& service, const Json& old);

// clusterIP and clusterIPs in step: a create with clusterIP alone gets clusterIPs from it; an
// update that omits clusterIPs keeps them while clusterIP is unchanged, and one that changes or
// clears clusterIP alone changes clusterIPs with it.
void NormalizeClusterIps(Json& service, const Json* old);

// Defaults ipFamilyPolicy and ipFamilies for the cluster and checks them (on create, `old` null,
// and update): an unset policy is the old one, else RequireDualStack for a headless Service
// without selector, else SingleStack; a headless selector-less Service gets both families
// whatever the cluster serves (unless SingleStack); any other gets the primary family, plus the
// other one when it is not SingleStack and the cluster is dual-stack; RequireDualStack on a
// single-stack cluster and a family the cluster does not serve are refused. An update of a
// PreferDualStack Service that keeps its IPs and families is left as it is (no upgrade or
// downgrade follows a change of the cluster). kInvalid with kube's field errors.
Status InitIpFamilyFields(const ServiceIpFamilies& cluster, Json& service, const Json* old);

// Whether an update is a PreferDualStack Service keeping its type, IPs and families
// (isMatchingPreferDualStackClusterIPFields): then nothing is allocated or released.
bool IsUnchangedPreferDualStack(const Json& service, const Json& old);

// On update, after allocation: the type changed to one that does not use these fields, and the
// client did not change them: clusterIP(s), ipFamilies and ipFamilyPolicy (to ExternalName), node
// ports (to ClusterIP or ExternalName), allocateLoadBalancerNodePorts and loadBalancerClass (away
// from LoadBalancer), externalTrafficPolicy (to ClusterIP), the load balancer status.
void DropTypeDependentFields(Json& service, const Json& old);

// ValidateServiceClusterIPsRelatedFields: clusterIP(s) in step, valid and at most one per family,
// known families and policy, and each clusterIP of its ipFamilies entry.
void ValidateClusterIpFields(const Json& service, FieldErrors& errors);

// On update: a clusterIP or family may not change once set, and releasing the secondary one needs
// ipFamilyPolicy SingleStack (validateUpgradeDowngradeClusterIPs and ...IPFamilies).
void ValidateIpUpgradeDowngrade(const Json& service, const Json& old, FieldErrors& errors);

}  // namespace slicewright::apiserver

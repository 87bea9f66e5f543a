// The settings of a Manager (controllers/manager/manager.h): which controllers run, each
// controller's options (bound to its flags by its descriptor in table.cc), leader election and the
// HTTP endpoint. Plain values.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "controllers/endpoints/options.h"
#include "controllers/endpointslice/options.h"
#include "controllers/mcs/options.h"
#include "controllers/mirroring/options.h"

namespace slicewright::controllers {

struct ManagerOptions {
  // --controllers: "*" is every controller enabled by default, "name" adds one, "-name" removes
  // one (kube-controller-manager's rules).
  std::vector<std::string> controllers = {"*"};
  std::string feature_gates;  // --feature-gates

  // Each controller's options; its descriptor binds its flags to them.
  endpointslice::Options endpointslice;
  endpoints::Options endpoints;
  mirroring::Options mirroring;
  mcs::Options mcs;

  // On by default, as kube-controller-manager's --leader-elect.
  bool leader_elect = true;                            // --leader-elect
  std::string leader_elect_namespace = "kube-system";  // --leader-elect-resource-namespace
  // "": DefaultLeaseName(the controllers run) (manager.h): slicewright-mcs-agent for the MCS agent
  // alone, else slicewright-controller-manager.
  std::string leader_elect_name;                     // --leader-elect-resource-name
  std::chrono::milliseconds lease_duration{15'000};  // --leader-elect-lease-duration
  std::chrono::milliseconds renew_deadline{10'000};  // --leader-elect-renew-deadline
  std::chrono::milliseconds retry_period{2'000};     // --leader-elect-retry-period
  std::string identity;                              // "" = hostname + random suffix

  // /metrics, /healthz, /livez, /readyz; port -1 serves nothing, 0 picks a free port.
  std::string bind_address = "0.0.0.0";  // --bind-address
  int port = 10252;                      // --port
  std::chrono::milliseconds cache_sync_timeout{120'000};
};

}  // namespace slicewright::controllers

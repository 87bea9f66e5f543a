// Manager runs the selected endpoint controllers as one kube-controller-manager-like process:
// shared informers, leader election on a Lease, /metrics and the probes, and a graceful stop
// (drain the syncs in flight, release the Lease). `slicewright controller-manager` and
// `slicewright dev` both run one. Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "slicewright/base/clock.h"
#include "slicewright/base/result.h"
#include "slicewright/client/rest_client.h"
#include "slicewright/runtime/metrics.h"

#include "controllers/endpoints/options.h"
#include "controllers/endpointslice/options.h"
#include "controllers/mirroring/options.h"

namespace slicewright::controllers {

// The controllers a Manager can run, by their --controllers names.
std::vector<std::string> KnownControllers();

// kube-controller-manager's --controllers rules: "*" is every controller, "name" adds one,
// "-name" removes one; kInvalid names an unknown controller. The result is sorted.
Result<std::vector<std::string>> SelectControllers(const std::vector<std::string>& flags);

// --feature-gates "A=true,B=false" over the gates slicewright knows (ExternalEndpointController,
// default true). kInvalid for an unknown gate or a value other than true/false.
Result<std::map<std::string, bool>> ParseFeatureGates(std::string_view flag);

struct ManagerOptions {
  std::vector<std::string> controllers = {"*"};  // --controllers
  std::string feature_gates;                     // --feature-gates
  endpointslice::Options endpointslice;
  endpoints::Options endpoints;
  mirroring::Options mirroring;

  bool leader_elect = true;                            // --leader-elect
  std::string leader_elect_namespace = "kube-system";  // --leader-elect-resource-namespace
  std::string leader_elect_name = "slicewright-controller-manager";  // --leader-elect-resource-name
  std::chrono::milliseconds lease_duration{15'000};  // --leader-elect-lease-duration
  std::chrono::milliseconds renew_deadline{10'000};  // --leader-elect-renew-deadline
  std::chrono::milliseconds retry_period{2'000};     // --leader-elect-retry-period
  std::string identity;                              // "" = hostname + random suffix

  // /metrics, /healthz, /livez, /readyz; port -1 serves nothing, 0 picks a free port.
  std::string bind_address = "0.0.0.0";  // --bind-address
  int port = 10252;                      // --port
  std::chrono::milliseconds cache_sync_timeout{120'000};
};

class Manager final {
 public:
  // Validates everything (controllers, gates, each controller's options, the elector's timings)
  // and binds the HTTP endpoint. `client` must outlive the manager.
  static Result<std::unique_ptr<Manager>> Create(ManagerOptions options,
                                                 client::RestClient& client);
  ~Manager();
  Manager(const Manager&) = delete;
  Manager& operator=(const Manager&) = delete;

  // Campaigns for the Lease (or not, without leader election), runs the controllers while leading,
  // and returns when `stop` is requested (OK, after draining and releasing the Lease) or when
  // leadership is lost (kUnavailable: the process should exit, as kube-controller-manager does).
  Status Run(const std::stop_token& stop);

  // The HTTP endpoint's port (0 when it serves nothing).
  std::uint16_t port() const;
  runtime::Registry& metrics();
  // True while this process leads and its controllers' caches have synced.
  bool Ready() const;

 private:
  struct Impl;
  explicit Manager(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace slicewright::controllers

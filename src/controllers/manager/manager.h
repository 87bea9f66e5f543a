// Manager runs the selected controllers of the table (table.h) as one kube-controller-manager-like
// process: shared informers per cluster, leader election on a Lease, /metrics and the probes, and
// a graceful stop (drain the syncs in flight, release the Lease). `slicewright controller-manager`
// and `slicewright dev` both run one. Thread-safe.
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

#include "controllers/manager/options.h"
#include "controllers/manager/table.h"

namespace slicewright::controllers {

// The names of `table`'s controllers, in table order.
std::vector<std::string> KnownControllers(const ControllerTable& table = BuiltinControllers());

// kube-controller-manager's --controllers rules: "*" is every controller enabled by default,
// "name" adds one, "-name" removes one; kInvalid names an unknown controller. The result is sorted.
Result<std::vector<std::string>> SelectControllers(
    const std::vector<std::string>& flags, const ControllerTable& table = BuiltinControllers());

// The Lease a manager running `controllers` (SelectControllers' answer) campaigns for when
// --leader-elect-resource-name is not given: the Lease guards the controllers that must not run
// twice at once, so two managers that run different ones must not share it (one would stand by
// for good while its controllers run nowhere). The MCS agent alone ("mcs", deploy/mcs/member):
// kLeaseMcsAgent; anything with an endpoint controller (deploy/'s "*"): kLeaseControllerManager,
// so that two managers never run those at once.
inline constexpr std::string_view kLeaseControllerManager = "slicewright-controller-manager";
inline constexpr std::string_view kLeaseMcsAgent = "slicewright-mcs-agent";
std::string DefaultLeaseName(const std::vector<std::string>& controllers);

// --feature-gates "A=true,B=false" over the gates slicewright knows (ExternalEndpointController,
// default true). kInvalid for an unknown gate or a value other than true/false.
Result<std::map<std::string, bool>> ParseFeatureGates(std::string_view flag);

// What a replica serves whatever the election (a descriptor's every_replica), as bound.
struct ReplicaServing {
  std::string name;     // its readiness check: /readyz/<name>
  std::string what;     // "clusterset.local DNS (UDP and TCP)"
  std::string address;  // "127.0.0.1:5353"
};

// Clients of other clusters the caller already holds, by the names descriptors ask for
// ("broker"); each must outlive the manager.
using RemoteClients = std::map<std::string, client::RestClient*, std::less<>>;

class Manager final {
 public:
  // Validates everything (controllers, gates, the elector's timings), connects the other clusters
  // the selected controllers need (from `remotes`, else from their kubeconfig), binds the HTTP
  // endpoint and builds what every replica serves (binding its ports: the MCS DNS). `client` (the
  // manager's own cluster: its Lease, its controllers) must outlive the manager. `table` is
  // BuiltinControllers() but in tests.
  static Result<std::unique_ptr<Manager>> Create(
      ManagerOptions options, client::RestClient& client, RemoteClients remotes = {},
      const ControllerTable& table = BuiltinControllers());
  ~Manager();
  Manager(const Manager&) = delete;
  Manager& operator=(const Manager&) = delete;

  // Starts what every replica serves (its informers now, the services once those synced, not
  // waiting for them), campaigns for the Lease (or not, without leader election), runs the
  // controllers while leading, and returns when `stop` is requested (OK, after draining and
  // releasing the Lease) or when leadership is lost (kUnavailable: the process should exit, as
  // kube-controller-manager does).
  Status Run(const std::stop_token& stop);

  // The HTTP endpoint's port (0 when it serves nothing).
  std::uint16_t port() const;
  runtime::Registry& metrics();
  // True while this process leads and its controllers' caches have synced.
  bool Ready() const;
  // What this replica serves whatever the election, in controller order.
  std::vector<ReplicaServing> ServedByEveryReplica() const;

 private:
  struct Impl;
  explicit Manager(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace slicewright::controllers

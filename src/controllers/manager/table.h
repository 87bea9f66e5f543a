// The controllers a Manager can run, in one table: each one's --controllers name, the component
// its Events carry, its flags, the other clusters it talks to, the RBAC rules it needs and how to
// build it. A new controller is its own folder plus one descriptor in table.cc; an unknown name
// is an error everywhere (--controllers, FindController).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "slicewright/base/flag.h"
#include "slicewright/base/result.h"
#include "slicewright/cache/informer_factory.h"
#include "slicewright/client/rest_client.h"
#include "slicewright/runtime/events.h"
#include "slicewright/runtime/metrics.h"

#include "controllers/manager/options.h"

namespace slicewright::controllers {

// One RBAC policy rule (rbac.authorization.k8s.io/v1 PolicyRule without resourceNames).
struct RbacRule {
  std::vector<std::string> api_groups;  // "" is the core group
  std::vector<std::string> resources;   // "services", "endpoints/restricted"
  std::vector<std::string> verbs;
};

// A cluster other than the manager's own that a controller talks to (the MCS agent's broker):
// the manager connects it from this kubeconfig and context unless its caller passed a client of
// that name (`slicewright dev` does, for its in-process clusters).
struct RemoteClusterConfig {
  std::string name;          // "broker"
  std::string kubeconfig{};  // "" = $KUBECONFIG, ~/.kube/config, in-cluster
  std::string context{};     // "" = the kubeconfig's current context
  // The client's rate limit (client-go's defaults unless the controller's flags say otherwise).
  double qps = 20;
  int burst = 30;
};

// A cluster as a controller sees it: its client and the shared informers on it (started, synced
// and stopped by the manager with the local ones).
struct ClusterAccess {
  client::RestClient* client = nullptr;
  cache::InformerFactory* informers = nullptr;
};

// What a descriptor's `create` gets.
struct ControllerContext {
  const ManagerOptions& options;
  // KEP-4770's ExternalEndpointController gate, resolved from --feature-gates.
  bool external_endpoint_controller = true;
  ClusterAccess local;
  // The clusters named by the descriptor's `remotes`, by name.
  std::map<std::string, ClusterAccess, std::less<>> remotes;
  runtime::EventRecorder* events = nullptr;
  runtime::Registry* metrics = nullptr;
  // What the local cluster's GET /version said when this leadership term began (nullopt when it
  // did not answer): controllers that write as kube-controller-manager of that version does.
  std::optional<client::ServerVersion> server_version;
  // Requested when the manager stops (or loses the Lease): a constructor that waits (the MCS
  // agent waiting out its previous run's Lease) returns early on it.
  std::stop_token stop{};
};

// A built controller, started once the caches synced and stopped (draining) by the manager.
struct RunningController {
  std::shared_ptr<void> controller;
  std::function<void()> start;
  std::function<void()> stop;
};

// Wraps any controller with Start() and Stop().
template <typename C>
RunningController Hold(std::unique_ptr<C> controller) {
  C* raw = controller.get();
  return RunningController{std::shared_ptr<C>(std::move(controller)), [raw] { raw->Start(); },
                           [raw] { raw->Stop(); }};
}

// What a controller serves from every replica, leader or not (the MCS agent's clusterset.local
// DNS): built when the manager is created, on informers of this cluster of its own (started
// before the election, never the leader's), started once they synced, stopped when Run returns.
// It must write nothing: a standby is read-only.
struct ReplicaService {
  std::shared_ptr<void> service;  // null: nothing to serve with these options
  std::string name;               // its readiness check: /readyz/<name>
  std::string what;               // for the logs and the command's banner: "clusterset.local DNS"
  std::string address;            // where, as bound: "127.0.0.1:5353"
  std::function<void()> start;    // its caches synced
  std::function<void()> stop;
  std::function<Status()> ready;  // OK once it answers right; the reason otherwise
};

// What a descriptor's `every_replica` gets: no client, only informers to read through.
struct ReplicaContext {
  const ManagerOptions& options;
  cache::InformerFactory* informers = nullptr;  // this cluster's, for the replica services alone
  runtime::Registry* metrics = nullptr;
};

struct ControllerDescriptor {
  std::string name;       // its --controllers name: "endpointslice"
  std::string component;  // its Events' source component: "endpoint-slice-controller"
  // Part of "*". A controller that needs settings without defaults (the MCS agent's broker) is
  // not, as kube-controller-manager's disabled-by-default controllers.
  bool enabled_by_default = true;
  // Its flags, bound to its fields of `options` (none: shares another controller's).
  std::function<std::vector<FlagSpec>(ManagerOptions& options)> flags;
  // Checks its options when the manager is created, so a bad flag fails the process at once
  // (nullptr: its constructor checks them).
  std::function<Status(const ManagerOptions& options)> validate;
  // The other clusters it needs, from its options (none by default).
  std::function<std::vector<RemoteClusterConfig>(const ManagerOptions& options)> remotes;
  std::function<Result<RunningController>(const ControllerContext& context)> create;
  // What it serves from every replica (see ReplicaService); nullptr: nothing.
  std::function<Result<ReplicaService>(const ReplicaContext& context)> every_replica;
  // What it reads and writes in its own cluster (Events are the manager's: ManagerRbacRules()).
  std::vector<RbacRule> rbac;
};

using ControllerTable = std::vector<ControllerDescriptor>;

// Every controller slicewright offers, by name.
const ControllerTable& BuiltinControllers();
// The descriptor named `name` in `table`; kInvalid listing the known names otherwise.
Result<const ControllerDescriptor*> FindController(const ControllerTable& table,
                                                   std::string_view name);
// Every controller's flags, in table order, each flag once.
std::vector<FlagSpec> ControllerFlags(const ControllerTable& table, ManagerOptions& options);
// What every manager needs whatever it runs: its controllers' Events.
std::vector<RbacRule> ManagerRbacRules();

}  // namespace slicewright::controllers

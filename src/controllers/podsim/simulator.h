// PodSimulator stands in for a scheduler and the kubelets of simulated nodes in `slicewright dev`
// (as KWOK does): it registers nodes with zones, binds new pods to the least-loaded node, gives
// them IPv4/IPv6 addresses and Multus network-status, marks them Running and Ready after a delay,
// and finishes graceful deletions (not ready halfway, then deleted with grace 0). A controller:
// informer handlers enqueue pod keys, workers run a level-based, idempotent sync per key.
// Thread-safe.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "slicewright/base/clock.h"
#include "slicewright/base/mutex.h"
#include "slicewright/base/result.h"
#include "slicewright/cache/informer.h"
#include "slicewright/client/rest_client.h"
#include "slicewright/client/typed_client.h"
#include "slicewright/model/core.h"
#include "slicewright/runtime/controller.h"
#include "slicewright/runtime/events.h"
#include "slicewright/runtime/work_queue.h"

#include "controllers/podsim/ip_allocator.h"
#include "controllers/podsim/options.h"

namespace slicewright::controllers::podsim {

// One simulated node.
struct SimulatedNode {
  std::string name;
  std::string zone;
  std::string internal_ip;
};

class PodSimulator final {
 public:
  // kInvalid for unusable options (a malformed CIDR, no nodes or zones, more nodes than node_cidr
  // holds). Contacts nothing until Start(). `client` and `clock` must outlive the simulator.
  // `clock` times the ready delay, the termination delay, the work queue's retries and Events; the
  // pod cache's reflector backs off on the system clock.
  static Result<std::unique_ptr<PodSimulator>> Create(PodSimulatorOptions options,
                                                      client::RestClient& client, Clock& clock);
  PodSimulator(const PodSimulator&) = delete;
  PodSimulator& operator=(const PodSimulator&) = delete;
  // Stop().
  ~PodSimulator();

  // Registers the simulated nodes that do not exist yet, fills the pod cache, rebuilds the
  // address allocations from the pods in it (so no address in use is handed out again), then
  // starts the workers. Once only. Errors: a node write's Status; kTimeout when the pod cache does
  // not sync within options.sync_timeout.
  Status Start();
  // Stops the pod cache, lets the syncs in flight finish (delayed work is dropped) and flushes
  // Events. Idempotent.
  void Stop();

  const std::vector<SimulatedNode>& nodes() const { return nodes_; }

 private:
  // What the simulator remembers about the pod behind one key.
  struct Tracked {
    std::string uid;
    std::string node;  // "" until bound to a simulated node
    Clock::TimePoint ready_at;
    std::optional<model::Time> started_at;    // when its containers first ran (wall time)
    std::optional<Clock::TimePoint> stop_at;  // terminating: its containers have stopped
    std::optional<Clock::TimePoint> delete_at;
    // (network "ns/name", allocation owner) of each secondary attachment.
    std::vector<std::pair<std::string, std::string>> attachments;
    bool warned = false;  // one Warning Event per pod for a bad networks annotation or no address
  };

  PodSimulator(PodSimulatorOptions options, client::RestClient& client, Clock& clock,
               std::vector<SimulatedNode> nodes, AddressPool pod_addresses);

  Status RegisterNodes();
  // Records what the pods already in the cache hold (addresses, nodes) before any sync runs.
  void RebuildFromCache();
  Status Sync(const std::string& key);
  Status SyncPod(const std::string& key, model::Pod pod);
  Result<model::Pod> Bind(const std::string& key, const model::Pod& pod);
  // Marks a terminating pod not ready halfway through min(its grace left, the cap), and deletes
  // it for good (grace 0) once all of it has passed.
  Status Terminate(const std::string& key, const model::Pod& pod, const SimulatedNode& node);
  // The pod's addresses, allocated when it has none; nullopt when the pod CIDR is full.
  std::optional<std::vector<std::string>> PodAddresses(const std::string& key,
                                                       const model::Pod& pod);
  // Writes network-status for a pod that asks for networks; the pod as written (or unchanged).
  Result<model::Pod> AttachNetworks(const std::string& key, const model::Pod& pod,
                                    const std::vector<std::string>& addresses);
  Status WriteStatus(const model::Pod& pod, const SimulatedNode& node,
                     const std::vector<std::string>& addresses, bool ready,
                     std::string_view not_ready_message);
  // Releases what the key's pod held; wakes pods that wait for an address.
  void Forget(const std::string& key);
  // Releases a tracked pod's addresses (mu_ held); true when any were held.
  bool ReleaseLocked(const Tracked& tracked) SW_REQUIRES(mu_);
  void WakeWaiting(const std::string& except);
  // A warning in the log and a Warning Event on the pod, once per pod.
  void WarnOnce(const std::string& key, const model::Pod& pod, std::string_view reason,
                const std::string& message);

  const SimulatedNode* FindNode(std::string_view name) const;
  model::Time WallNow() const;

  const PodSimulatorOptions options_;
  client::RestClient& client_;
  Clock& clock_;
  client::TypedClient<model::Pod> pods_;
  const std::vector<SimulatedNode> nodes_;
  const Clock::TimePoint steady_origin_;
  const model::Time wall_origin_;

  std::unique_ptr<runtime::WorkQueue> queue_;
  std::unique_ptr<runtime::EventRecorder> recorder_;
  std::unique_ptr<cache::Informer<model::Pod>> informer_;
  std::unique_ptr<runtime::Controller> controller_;

  Mutex run_mu_;  // serialises Start() and Stop()
  bool started_ SW_GUARDED_BY(run_mu_) = false;
  bool stopped_ SW_GUARDED_BY(run_mu_) = false;
  Mutex mu_;  // never held while calling out
  std::unordered_map<std::string, Tracked> tracked_ SW_GUARDED_BY(mu_);  // by pod key
  AddressPool pod_addresses_ SW_GUARDED_BY(mu_);                         // owners: pod UIDs
  // By "ns/name"; owners "uid/interface".
  std::map<std::string, AddressPool> network_addresses_ SW_GUARDED_BY(mu_);
  // Keys of pods the pod CIDR could not fit.
  std::set<std::string> waiting_for_addresses_ SW_GUARDED_BY(mu_);
};

}  // namespace slicewright::controllers::podsim

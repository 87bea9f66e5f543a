// The workload controllers of `slicewright dev`: Deployment -> ReplicaSet -> Pods and
// StatefulSet -> Pods, as kube-controller-manager runs them, so that rollouts and scaling cause
// the pod churn the endpoint controllers see. Each is the house controller shape: informer
// handlers enqueue keys; a sync reads the caches, guards with expectations (its own writes not yet
// seen), decides with a pure function (deployment.h, replicaset.h, statefulset.h), acts, and
// records Events. Pods and ReplicaSets belong to their controller by ownerReference only (no
// adoption of orphans by selector). Thread-safe.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "slicewright/base/clock.h"
#include "slicewright/base/mutex.h"
#include "slicewright/base/result.h"
#include "slicewright/cache/informer.h"
#include "slicewright/client/rest_client.h"
#include "slicewright/model/apps.h"
#include "slicewright/model/core.h"
#include "slicewright/runtime/controller.h"
#include "slicewright/runtime/events.h"
#include "slicewright/runtime/work_queue.h"

namespace slicewright::controllers::workloads {

struct WorkloadControllersOptions {
  int workers = 2;  // per controller (--concurrent-deployment-syncs is 5 upstream)
  std::chrono::milliseconds sync_timeout{30'000};
  // How long a sync waits for the creates and deletes it made to show in the pod cache before it
  // decides again regardless (upstream's ExpectationsTimeout is 5 minutes).
  std::chrono::milliseconds expectations_timeout{60'000};
  std::string component = "slicewright-workload-controllers";
};

class WorkloadControllers final {
 public:
  // `client` and `clock` must outlive the controllers. Contacts nothing until Start().
  static Result<std::unique_ptr<WorkloadControllers>> Create(WorkloadControllersOptions options,
                                                             client::RestClient& client,
                                                             Clock& clock);
  WorkloadControllers(const WorkloadControllers&) = delete;
  WorkloadControllers& operator=(const WorkloadControllers&) = delete;
  ~WorkloadControllers();

  // Starts the caches, waits for them (kTimeout after options.sync_timeout), starts the workers.
  Status Start();
  // Stops the caches and drains the workers. Idempotent.
  void Stop();

 private:
  // Writes a sync made that the caches have not shown yet.
  struct Expectation {
    int adds = 0;
    std::set<std::string> deletes;  // pod names
    Clock::TimePoint set_at;
  };

  WorkloadControllers(WorkloadControllersOptions options, client::RestClient& client, Clock& clock);
  void AddHandlers();
  Status SyncDeployment(const std::string& key);
  Status SyncReplicaSet(const std::string& key);
  Status SyncStatefulSet(const std::string& key);
  Status WriteStatus(const client::ResourceRef& resource, const model::Workload& object,
                     const model::WorkloadStatus& status);
  // Pod informer events: satisfy expectations, enqueue the owner.
  void OnPod(const model::Pod& pod, bool added, bool deleted);
  bool Satisfied(const std::string& key);
  void ExpectLocked(const std::string& key, int adds, const std::vector<std::string>& deletes)
      SW_REQUIRES(mu_);
  void CreationFailed(const std::string& key);
  model::Time WallNow() const;

  const WorkloadControllersOptions options_;
  client::RestClient& client_;
  Clock& clock_;
  const Clock::TimePoint steady_origin_;
  const model::Time wall_origin_;

  std::unique_ptr<cache::Informer<model::Pod>> pods_;
  std::unique_ptr<cache::Informer<model::Workload>> deployments_;
  std::unique_ptr<cache::Informer<model::Workload>> replicasets_;
  std::unique_ptr<cache::Informer<model::Workload>> statefulsets_;
  std::unique_ptr<runtime::WorkQueue> deployment_queue_;
  std::unique_ptr<runtime::WorkQueue> replicaset_queue_;
  std::unique_ptr<runtime::WorkQueue> statefulset_queue_;
  std::unique_ptr<runtime::EventRecorder> recorder_;
  std::unique_ptr<runtime::Controller> deployment_controller_;
  std::unique_ptr<runtime::Controller> replicaset_controller_;
  std::unique_ptr<runtime::Controller> statefulset_controller_;

  Mutex run_mu_;
  bool started_ SW_GUARDED_BY(run_mu_) = false;
  bool stopped_ SW_GUARDED_BY(run_mu_) = false;

  Mutex mu_;  // never held while calling out
  // By "replicasets/ns/name" or "statefulsets/…".
  std::map<std::string, Expectation> expectations_ SW_GUARDED_BY(mu_);
};

}  // namespace slicewright::controllers::workloads

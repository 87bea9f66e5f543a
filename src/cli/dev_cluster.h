// One cluster of `slicewright dev`: its embedded API server, the client its in-process components
// share, and (for a member cluster) its controllers, pod simulator and workload controllers. `dev`
// runs one, or N members and a broker for Multi-Cluster Services (`--clusters N`).
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <stop_token>
#include <string>
#include <thread>

#include "slicewright/base/result.h"
#include "slicewright/client/rest_client.h"

#include "apiserver/rest/serve.h"
#include "controllers/manager/manager.h"
#include "controllers/podsim/simulator.h"
#include "controllers/workloads/controllers.h"

namespace slicewright::cli {

struct DevClusterOptions {
  std::string name;      // "cluster-1", "broker"; the kubeconfig context's name
  std::string data_dir;  // state.db and tls/
  // Before the names of the cluster's threads ("c2-" makes "c2-api-0"; base/thread_name.h).
  std::string thread_marker;
  std::string listen = "127.0.0.1:0";
  bool insecure_http = false;
  // A broker holds only what members publish: no controllers, no pods.
  bool member = true;
  int nodes = 3;
  std::chrono::milliseconds ready_delay{1000};
  std::string pod_cidr_v4 = "10.244.0.0/16";
  std::string pod_cidr_v6 = "fd00:10:244::/64";
  controllers::ManagerOptions manager;
};

class DevCluster final {
 public:
  // Starts the API server and, for a member, the pod simulator and workload controllers; the
  // controllers start with Run(). Errors name the cluster.
  static Result<std::unique_ptr<DevCluster>> Start(DevClusterOptions options);
  ~DevCluster();
  DevCluster(const DevCluster&) = delete;
  DevCluster& operator=(const DevCluster&) = delete;

  // Runs the member's controllers on a thread of their own until Stop() (a broker has none).
  // Idempotent.
  void RunControllers(controllers::RemoteClients remotes);
  // True when the controllers stopped by themselves (an error, logged).
  bool ControllersEnded() const { return controllers_ended_; }
  // Stops the controllers (draining), the simulator, the workload controllers, then the server.
  void Stop();

  const std::string& name() const { return options_.name; }
  client::RestClient& client() { return *client_; }
  apiserver::RunningApiServer& server() { return *server_; }

 private:
  explicit DevCluster(DevClusterOptions options) : options_(std::move(options)) {}

  DevClusterOptions options_;
  std::unique_ptr<apiserver::RunningApiServer> server_;
  std::unique_ptr<client::RestClient> client_;
  std::unique_ptr<controllers::podsim::PodSimulator> simulator_;
  std::unique_ptr<controllers::workloads::WorkloadControllers> workloads_;
  std::unique_ptr<controllers::Manager> manager_;
  std::stop_source stop_;
  std::thread controllers_thread_;
  std::atomic<bool> controllers_ended_{false};
  bool stopped_ = false;
};

}  // namespace slicewright::cli

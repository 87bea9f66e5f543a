// `slicewright dev`: everything on one machine for development and demos: the embedded API server
// (SQLite under --data-dir), every endpoint controller (no leader election), and the pod simulator
// that schedules pods onto simulated Nodes, gives them IPs and makes them Ready. Serves HTTPS with
// a CA kept in DIR/tls, writes DIR/kubeconfig (carrying that CA) and prints the kubectl command to
// use; runs until SIGTERM or SIGINT.
#pragma once

#include <iosfwd>
#include <string>

namespace slicewright::cli {

// Enough for any demo of a ClusterSet on one machine; each cluster is an API server and its
// controllers.
inline constexpr int kMaxDevClusters = 8;

struct DevCommandOptions {
  std::string data_dir = "./.slicewright";  // --data-dir
  int port = 6443;                          // --port (0 picks a free one)
  int clusters = 1;                         // --clusters (1..kMaxDevClusters)
  int nodes = 3;                            // --nodes
  std::string ready_delay = "1s";           // --pod-ready-delay (Go duration)
  bool insecure_http = false;               // --insecure-http (else HTTPS, DATA_DIR/tls)
  int verbosity = 0;                        // -v
};

int RunDevCommand(const DevCommandOptions& options, std::ostream& out, std::ostream& err);

}  // namespace slicewright::cli

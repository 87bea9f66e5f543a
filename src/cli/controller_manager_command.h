// `slicewright controller-manager`: the endpoint controllers against a real cluster (or the
// embedded API server) through a kubeconfig, leader-elected, with /metrics and the probes, until
// SIGTERM or SIGINT (drain, release the Lease, exit 0) or a lost Lease (exit 1).
#pragma once

#include <chrono>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "slicewright/base/result.h"

#include "controllers/manager/manager.h"

namespace slicewright::cli {

struct ControllerManagerCommandOptions {
  std::string kubeconfig;  // --kubeconfig
  std::string context;     // --context
  double kube_api_qps = 20;
  int kube_api_burst = 30;
  int verbosity = 0;                    // -v
  std::string logging_format = "text";  // --logging-format text|json
  controllers::ManagerOptions manager;
};

int RunControllerManagerCommand(ControllerManagerCommandOptions options, std::ostream& out,
                                std::ostream& err);

}  // namespace slicewright::cli

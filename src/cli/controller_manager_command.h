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
  // Duration flags as text, in Go's syntax ("15s", "1m30s", "500ms").
  std::string lease_duration = "15s";
  std::string renew_deadline = "10s";
  std::string retry_period = "2s";
  std::string batch_period = "0s";            // --endpointslice-updates-batch-period
  std::string endpoints_batch_period = "0s";  // --endpoint-updates-batch-period
  std::string mirroring_batch_period = "0s";  // --mirroring-endpointslice-updates-batch-period
  int verbosity = 0;                          // -v
  std::string logging_format = "text";        // --logging-format text|json
  controllers::ManagerOptions manager;
};

// Go's time.ParseDuration for the units a flag needs (ns, us, µs, ms, s, m, h; fractions and
// sequences such as "1h30m"). kInvalid otherwise.
Result<std::chrono::milliseconds> ParseGoDuration(std::string_view text);

int RunControllerManagerCommand(ControllerManagerCommandOptions options, std::ostream& out,
                                std::ostream& err);

}  // namespace slicewright::cli

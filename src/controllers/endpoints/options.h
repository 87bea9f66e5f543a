// The Endpoints controller's settings, named after kube-controller-manager's flags.
#pragma once

#include <chrono>

namespace slicewright::controllers::endpoints {

struct Options {
  int concurrent_syncs = 5;                   // --concurrent-endpoint-syncs (>= 1)
  std::chrono::milliseconds batch_period{0};  // --endpoint-updates-batch-period
  // KEP-4770's ExternalEndpointController feature gate (on in slicewright, as for the
  // EndpointSlice controller): Services labelled service.kubernetes.io/endpoint-controller-name
  // belong to another controller.
  bool external_endpoint_controller = true;
  int max_retries = 15;  // upstream maxRetries
};

}  // namespace slicewright::controllers::endpoints

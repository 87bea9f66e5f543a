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
  // Label what we write endpoints.kubernetes.io/managed-by: endpoint-controller and rewrite a
  // stored Endpoints without it, as kube-controller-manager 1.33+ does; off, as before 1.33
  // (reconcile::EndpointsBuildOptions::managed_by_label). The manager sets it from the API
  // server's version (WritesManagedByLabel), so that either version's controller and ours hand
  // the Endpoints over without rewriting them.
  bool managed_by_label = true;
};

// Whether kube-controller-manager of Kubernetes major.minor labels its Endpoints (1.33+).
constexpr bool WritesManagedByLabel(int major, int minor) {
  return major > 1 || (major == 1 && minor >= 33);
}

}  // namespace slicewright::controllers::endpoints

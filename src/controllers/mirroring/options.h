// The EndpointSlice Mirroring controller's settings, named after kube-controller-manager's flags.
#pragma once

#include <chrono>
#include <string>

#include "slicewright/model/well_known.h"

namespace slicewright::controllers::mirroring {

struct Options {
  int concurrent_syncs = 5;  // --mirroring-concurrent-service-endpoint-syncs (1..50)
  // --mirroring-max-endpoints-per-subset (1..1000). Upstream's flag help says 100; its defaults
  // code, which is what runs, says 1000 (spec §12).
  int max_endpoints_per_subset = 1000;
  std::chrono::milliseconds batch_period{0};  // --mirroring-endpointslice-updates-batch-period
  // The endpointslice.kubernetes.io/managed-by value: upstream's, so slices kube-controller-manager
  // mirrored are taken over without being rewritten.
  std::string managed_by = std::string(model::kManagedByMirroringController);
  // KEP-4770's ExternalEndpointController feature gate (on in slicewright): Endpoints of Services
  // labelled service.kubernetes.io/endpoint-controller-name are not mirrored.
  bool external_endpoint_controller = true;
  int max_retries = 15;  // upstream maxRetries
};

}  // namespace slicewright::controllers::mirroring

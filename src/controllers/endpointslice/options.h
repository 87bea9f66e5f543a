// The EndpointSlice controller's settings, named after kube-controller-manager's flags.
#pragma once

#include <chrono>
#include <string>

#include "slicewright/model/well_known.h"

namespace slicewright::controllers::endpointslice {

struct Options {
  int concurrent_syncs = 5;                   // --concurrent-service-endpoint-syncs (1..50)
  int max_endpoints_per_slice = 100;          // --max-endpoints-per-slice (1..1000)
  std::chrono::milliseconds batch_period{0};  // --endpointslice-updates-batch-period
  // The endpointslice.kubernetes.io/managed-by value: upstream's, so slices kube-controller-manager
  // wrote are taken over without being rewritten (--controller-name).
  std::string managed_by = std::string(model::kManagedByEndpointSliceController);
  // KEP-4770's ExternalEndpointController feature gate (on in slicewright): Services labelled
  // service.kubernetes.io/endpoint-controller-name belong to another controller.
  bool external_endpoint_controller = true;
  int max_retries = 15;  // upstream maxRetries
  // service.kubernetes.io/topology-mode requests topology hints, as in Kubernetes 1.27+; off, as
  // before 1.27, only the deprecated topology-aware-hints annotation does. The manager sets it
  // from the API server's version (TopologyModeAnnotationKnown).
  bool topology_mode_annotation = true;
  // Services selecting at least this many pods keep their derived endpoints and their slices'
  // fingerprints between syncs, so a sync re-derives only the pods that changed (about 1.5 KB of
  // memory per pod; smaller Services are cheap to derive again). 0 keeps no state. Not used with
  // a plugin that rewrites pods.
  int incremental_min_pods = 500;
  // The work queue's name (the workqueue_* metrics' name label) and the controller's in logs.
  std::string name = "endpoint_slice";
  // Its workers' thread names' prefix ("eps-w0"; runtime::ControllerOptions::thread_name).
  std::string thread_name = "eps";
  // Register upstream's endpoint_slice_controller_* metrics (only one controller of a process
  // can: the series would mix).
  bool upstream_metrics = true;
};

// Whether kube-controller-manager of Kubernetes major.minor reads
// service.kubernetes.io/topology-mode (1.27+).
constexpr bool TopologyModeAnnotationKnown(int major, int minor) {
  return major > 1 || (major == 1 && minor >= 27);
}

}  // namespace slicewright::controllers::endpointslice

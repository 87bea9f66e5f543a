// `slicewright explain service NS/NAME` (also `kubectl slicewright explain ...`): reads a
// Service, its pods, their Nodes, its slices and Endpoints from the API server and prints who
// manages its endpoints, what they hold, and which pods are left out and why.
// `slicewright explain serviceimport NS/NAME`: reads a ServiceImport, its MCS EndpointSlices and
// the local ServiceExport and says whether a consumer can route it through EndpointSlices here.
#pragma once

#include <iosfwd>
#include <string>

namespace slicewright::cli {

struct ExplainCommandOptions {
  std::string kind;        // "service" (or "svc", "services"), "serviceimport" (or "svcim", ...)
  std::string target;      // NAME or NAMESPACE/NAME
  std::string namespace_;  // -n; "" means "default" unless target names one
  std::string kubeconfig;
  std::string context;
  // The settings of the controllers being explained (as given to controller-manager).
  std::string feature_gates;
  std::string controller_name = "endpointslice-controller.k8s.io";
  int max_endpoints_per_slice = 100;
  std::string endpointslice_sync = "all";  // the MCS agents' --mcs-endpointslice-sync
  std::string output = "text";             // text or json
};

// 0 with the explanation on `out`; 1 with the error on `err` (bad flags, the object not found,
// the API server unreachable).
int RunExplainCommand(const ExplainCommandOptions& options, std::ostream& out, std::ostream& err);

}  // namespace slicewright::cli

// `slicewright plan`: runs the EndpointSlice reconciler on cluster state read from files and prints
// what the controller would write. Reentrant; reads only the files it is given.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace slicewright::cli {

struct PlanCommandOptions {
  std::vector<std::string> files;  // "-" reads standard input
  int max_endpoints_per_slice = 100;
  std::string controller_name = "endpointslice-controller.k8s.io";
  std::string output = "table";  // json, yaml or table
  // Run the reconcile step this many extra times and report its timing on `err` (0: off).
  int repeat = 0;
};

// Returns the process exit code: 0 with the plan on `out` (tolerated problems with single
// objects are warnings on `err`), 1 on malformed input or bad options with the error on `err`
// and nothing on `out`.
int RunPlanCommand(const PlanCommandOptions& options, std::istream& in, std::ostream& out,
                   std::ostream& err);

}  // namespace slicewright::cli

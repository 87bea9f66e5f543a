// The slicewright command line: one subcommand per job, flags parsed by CLI11 (the one adapter
// for its exceptions is CLI11's own parse/exit pair).
#include <exception>
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/plan_command.h"

int main(int argc, char** argv) {
  try {
    CLI::App app{"slicewright: a control plane for Kubernetes EndpointSlices"};
    app.require_subcommand(1);
    app.set_version_flag("--version", "slicewright 0.1.0");

    slicewright::cli::PlanCommandOptions plan;
    CLI::App* plan_cmd = app.add_subcommand(
        "plan", "Print what the EndpointSlice controller would write for the given cluster state");
    plan_cmd
        ->add_option("-f,--filename", plan.files,
                     "Services, Pods, Nodes and EndpointSlices as `kubectl get -o json|yaml` "
                     "prints them; - reads standard input")
        ->required();
    plan_cmd
        ->add_option("--max-endpoints-per-slice", plan.max_endpoints_per_slice,
                     "The maximum number of endpoints added to an EndpointSlice (1-1000)")
        ->capture_default_str();
    plan_cmd
        ->add_option("--controller-name", plan.controller_name,
                     "The endpointslice.kubernetes.io/managed-by value of our slices")
        ->capture_default_str();
    plan_cmd->add_option("-o,--output", plan.output, "Output format: json, yaml or table")
        ->capture_default_str();
    plan_cmd->add_option("--repeat", plan.repeat,
                         "Also run the reconcile step N times and print its timing to stderr");

    CLI11_PARSE(app, argc, argv);
    if (plan_cmd->parsed()) {
      return slicewright::cli::RunPlanCommand(plan, std::cin, std::cout, std::cerr);
    }
    return 1;
  } catch (const std::exception& e) {
    // Last resort: our code returns Status; this only catches a library's surprise.
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}

// The slicewright command line: one subcommand per job, flags parsed by CLI11 (the one adapter
// for its exceptions is CLI11's own parse/exit pair).
#include <exception>
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/apiserver_command.h"
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

    slicewright::cli::ApiServerCommandOptions apiserver;
    CLI::App* apiserver_cmd = app.add_subcommand(
        "apiserver", "Run the embedded, SQLite-backed development API server (kubectl-compatible)");
    apiserver_cmd->add_option("--listen", apiserver.listen, "Address to serve on, HOST:PORT")
        ->capture_default_str();
    apiserver_cmd->add_option("--data-dir", apiserver.data_dir, "Directory holding state.db")
        ->capture_default_str();
    apiserver_cmd->add_option("--token", apiserver.token,
                              "Require this bearer token on every request (needed off loopback)");
    apiserver_cmd->add_option(
        "--tls-cert-dir", apiserver.tls_cert_dir,
        "Serve HTTPS with a CA and serving certificate kept in this directory");
    apiserver_cmd->add_option("--write-kubeconfig", apiserver.write_kubeconfig,
                              "Write a kubeconfig for this server to FILE");
    apiserver_cmd
        ->add_option("--history-events", apiserver.history_events,
                     "Watch history kept for resuming watches (events)")
        ->capture_default_str();

    CLI11_PARSE(app, argc, argv);
    if (plan_cmd->parsed()) {
      return slicewright::cli::RunPlanCommand(plan, std::cin, std::cout, std::cerr);
    }
    if (apiserver_cmd->parsed()) {
      return slicewright::cli::RunApiServerCommand(apiserver, std::cout, std::cerr);
    }
    return 1;
  } catch (const std::exception& e) {
    // Last resort: our code returns Status; this only catches a library's surprise.
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}

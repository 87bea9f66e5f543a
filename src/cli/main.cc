// The slicewright command line: one subcommand per job, flags parsed by CLI11 (the one adapter
// for its exceptions is CLI11's own parse/exit pair).
#include <exception>
#include <iostream>

#include <CLI/CLI.hpp>

#include "slicewright/base/allocator.h"

#include "cli/apiserver_command.h"
#include "cli/controller_manager_command.h"
#include "cli/dev_command.h"
#include "cli/explain_command.h"
#include "cli/plan_command.h"

int main(int argc, char** argv) {
  // Every subcommand runs reconcile loops or serves their objects; `plan --repeat` must time the
  // same heap the controllers run on.
  slicewright::ConfigureAllocatorForReconcileLoops();
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
        "Keep the CA and serving certificate of HTTPS here (default: DATA_DIR/tls)");
    apiserver_cmd->add_flag("--insecure-http", apiserver.insecure_http,
                            "Serve plain HTTP instead of HTTPS (loopback addresses only)");
    apiserver_cmd->add_option("--write-kubeconfig", apiserver.write_kubeconfig,
                              "Write a kubeconfig for this server to FILE");
    apiserver_cmd
        ->add_option("--history-events", apiserver.history_events,
                     "Watch history kept for resuming watches (events)")
        ->capture_default_str();
    apiserver_cmd
        ->add_option("--io-threads", apiserver.io_threads,
                     "Threads serving connections (0: one per core, at least 2)")
        ->check(CLI::NonNegativeNumber)
        ->capture_default_str();

    slicewright::cli::ControllerManagerCommandOptions manager;
    CLI::App* manager_cmd = app.add_subcommand(
        "controller-manager",
        "Run the endpoint controllers (KEP-4770-aware replacements of kube-controller-manager's)");
    manager_cmd->add_option("--kubeconfig", manager.kubeconfig,
                            "Path to a kubeconfig (else $KUBECONFIG, ~/.kube/config, in-cluster)");
    manager_cmd->add_option("--context", manager.context, "The kubeconfig context to use");
    manager_cmd
        ->add_option("--controllers", manager.manager.controllers,
                     "Controllers to run: '*' for all, 'name' to add, '-name' to remove")
        ->delimiter(',')
        ->capture_default_str();
    manager_cmd->add_option("--feature-gates", manager.manager.feature_gates,
                            "key=value pairs; known: ExternalEndpointController=true|false "
                            "(default true)");
    manager_cmd
        ->add_option("--concurrent-service-endpoint-syncs",
                     manager.manager.endpointslice.concurrent_syncs,
                     "Services synced at once by the EndpointSlice controller (1-50)")
        ->capture_default_str();
    manager_cmd
        ->add_option("--max-endpoints-per-slice",
                     manager.manager.endpointslice.max_endpoints_per_slice,
                     "The maximum number of endpoints added to an EndpointSlice (1-1000)")
        ->capture_default_str();
    manager_cmd
        ->add_option("--endpointslice-updates-batch-period", manager.batch_period,
                     "How long pod changes are batched before a Service sync (Go duration)")
        ->capture_default_str();
    manager_cmd
        ->add_option("--endpointslice-incremental-min-pods",
                     manager.manager.endpointslice.incremental_min_pods,
                     "slicewright: Services with at least this many pods keep their derived "
                     "endpoints between syncs (about 1.6 KB per pod), so a pod event re-derives "
                     "one pod; 0: off")
        ->capture_default_str();
    manager_cmd
        ->add_option("--concurrent-endpoint-syncs", manager.manager.endpoints.concurrent_syncs,
                     "Services synced at once by the Endpoints controller")
        ->capture_default_str();
    manager_cmd
        ->add_option("--endpoint-updates-batch-period", manager.endpoints_batch_period,
                     "How long pod changes are batched before an Endpoints sync (Go duration)")
        ->capture_default_str();
    manager_cmd
        ->add_option("--mirroring-concurrent-service-endpoint-syncs",
                     manager.manager.mirroring.concurrent_syncs,
                     "Services synced at once by the EndpointSlice mirroring controller (1-50)")
        ->capture_default_str();
    manager_cmd
        ->add_option("--mirroring-max-endpoints-per-subset",
                     manager.manager.mirroring.max_endpoints_per_subset,
                     "The maximum number of endpoints mirrored per Endpoints subset (1-1000)")
        ->capture_default_str();
    manager_cmd
        ->add_option("--mirroring-endpointslice-updates-batch-period",
                     manager.mirroring_batch_period,
                     "How long Endpoints changes are batched before mirroring (Go duration)")
        ->capture_default_str();
    manager_cmd
        ->add_option("--controller-name", manager.manager.endpointslice.managed_by,
                     "The endpointslice.kubernetes.io/managed-by value of our slices")
        ->capture_default_str();
    manager_cmd->add_option("--kube-api-qps", manager.kube_api_qps, "QPS to the API server")
        ->capture_default_str();
    manager_cmd->add_option("--kube-api-burst", manager.kube_api_burst, "Burst to the API server")
        ->capture_default_str();
    manager_cmd
        ->add_flag("--leader-elect", manager.manager.leader_elect,
                   "Elect a leader on a Lease before running the controllers")
        ->capture_default_str();
    manager_cmd->add_option("--leader-elect-lease-duration", manager.lease_duration)
        ->capture_default_str();
    manager_cmd->add_option("--leader-elect-renew-deadline", manager.renew_deadline)
        ->capture_default_str();
    manager_cmd->add_option("--leader-elect-retry-period", manager.retry_period)
        ->capture_default_str();
    manager_cmd
        ->add_option("--leader-elect-resource-namespace", manager.manager.leader_elect_namespace)
        ->capture_default_str();
    manager_cmd->add_option("--leader-elect-resource-name", manager.manager.leader_elect_name)
        ->capture_default_str();
    manager_cmd
        ->add_option("--bind-address", manager.manager.bind_address,
                     "Address of /metrics, /healthz, /livez and /readyz")
        ->capture_default_str();
    manager_cmd->add_option("--port", manager.manager.port, "Their port; -1 serves nothing")
        ->capture_default_str();
    manager_cmd->add_option("-v,--v", manager.verbosity, "Log verbosity (klog levels)")
        ->capture_default_str();
    manager_cmd->add_option("--logging-format", manager.logging_format, "text or json")
        ->capture_default_str();

    slicewright::cli::DevCommandOptions dev;
    CLI::App* dev_cmd = app.add_subcommand(
        "dev",
        "Run the embedded API server, every endpoint controller and a pod simulator in one "
        "process (for kubectl on this machine)");
    dev_cmd->add_option("--data-dir", dev.data_dir, "Directory for state.db and the kubeconfig")
        ->capture_default_str();
    dev_cmd->add_option("--port", dev.port, "API server port on 127.0.0.1 (0: any free port)")
        ->capture_default_str();
    dev_cmd->add_option("--nodes", dev.nodes, "Simulated Nodes (zones a, b, c in turn)")
        ->capture_default_str();
    dev_cmd
        ->add_option("--pod-ready-delay", dev.ready_delay,
                     "How long a new pod takes to become Ready (Go duration)")
        ->capture_default_str();
    dev_cmd->add_flag("--insecure-http", dev.insecure_http,
                      "Serve plain HTTP, not HTTPS with a CA kept in DATA_DIR/tls");
    dev_cmd->add_option("-v,--v", dev.verbosity, "Log verbosity (klog levels)")
        ->capture_default_str();

    slicewright::cli::ExplainCommandOptions explain;
    CLI::App* explain_cmd = app.add_subcommand(
        "explain",
        "Say who manages a Service's endpoints and why, and which pods are left out and why "
        "(also `kubectl slicewright explain service NS/NAME`)");
    explain_cmd->add_option("kind", explain.kind, "service")->required();
    explain_cmd->add_option("name", explain.target, "NAME or NAMESPACE/NAME")->required();
    explain_cmd->add_option("-n,--namespace", explain.namespace_,
                            "The Service's namespace (default: default)");
    explain_cmd->add_option("--kubeconfig", explain.kubeconfig,
                            "Path to a kubeconfig (else $KUBECONFIG, ~/.kube/config, in-cluster)");
    explain_cmd->add_option("--context", explain.context, "The kubeconfig context to use");
    explain_cmd->add_option("--feature-gates", explain.feature_gates,
                            "The controllers' --feature-gates (ExternalEndpointController "
                            "defaults to true)");
    explain_cmd
        ->add_option("--controller-name", explain.controller_name,
                     "The controllers' --controller-name (managed-by value)")
        ->capture_default_str();
    explain_cmd
        ->add_option("--max-endpoints-per-slice", explain.max_endpoints_per_slice,
                     "The controllers' --max-endpoints-per-slice")
        ->capture_default_str();
    explain_cmd->add_option("-o,--output", explain.output, "text or json")->capture_default_str();

    CLI11_PARSE(app, argc, argv);
    if (explain_cmd->parsed()) {
      return slicewright::cli::RunExplainCommand(explain, std::cout, std::cerr);
    }
    if (plan_cmd->parsed()) {
      return slicewright::cli::RunPlanCommand(plan, std::cin, std::cout, std::cerr);
    }
    if (apiserver_cmd->parsed()) {
      return slicewright::cli::RunApiServerCommand(apiserver, std::cout, std::cerr);
    }
    if (dev_cmd->parsed()) {
      return slicewright::cli::RunDevCommand(dev, std::cout, std::cerr);
    }
    if (manager_cmd->parsed()) {
      return slicewright::cli::RunControllerManagerCommand(manager, std::cout, std::cerr);
    }
    return 1;
  } catch (const std::exception& e) {
    // Last resort: our code returns Status; this only catches a library's surprise.
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}

#include "cli/explain_command.h"

#include <map>
#include <memory>
#include <ostream>
#include <set>
#include <utility>

#include "slicewright/client/rest_client.h"
#include "slicewright/client/rest_config.h"
#include "slicewright/client/transport.h"
#include "slicewright/client/typed_client.h"
#include "slicewright/labels/selector.h"
#include "slicewright/model/mcs.h"
#include "slicewright/model/well_known.h"

#include "cli/command.h"
#include "controllers/explain/explain.h"
#include "controllers/explain/serviceimport.h"
#include "controllers/manager/manager.h"
#include "controllers/mcs/kinds.h"

namespace slicewright::cli {
namespace {

constexpr std::string_view kFeatureExternalEndpointController = "ExternalEndpointController";

Result<std::unique_ptr<client::RestClient>> Connect(const ExplainCommandOptions& options) {
  client::LoadOptions load;
  load.kubeconfig = options.kubeconfig;
  load.context = options.context;
  Result<client::RestConfig> config = client::LoadRestConfig(load);
  if (!config.ok()) return config.status();
  client::TransportOptions transport_options;
  transport_options.user_agent = "slicewright-explain";
  Result<std::unique_ptr<client::Transport>> transport =
      client::Transport::Create(*config, transport_options);
  if (!transport.ok()) return transport.status();
  client::RestClientOptions client_options;
  client_options.request_timeout = std::chrono::seconds(30);
  return client::RestClient::Create(
      std::shared_ptr<client::Transport>(std::move(transport).value()), client_options);
}

// Everything Explain needs, read from the server. Reads after the Service are best effort only
// where the object may legitimately be absent (an Endpoints, a Node).
Result<controllers::explain::Input> Fetch(client::RestClient& rest, const std::string& namespace_,
                                          const std::string& name) {
  controllers::explain::Input input;
  client::TypedClient<model::Service> services(rest, client::ServiceCodec());
  Result<model::Service> service = services.Get(namespace_, name);
  if (!service.ok()) return service.status();
  input.service = std::move(service).value();

  if (input.service.spec.selector.has_value()) {
    client::ListOptions pod_options;
    pod_options.label_selector = labels::Selector::FromMap(*input.service.spec.selector).String();
    client::TypedClient<model::Pod> pods(rest, client::PodCodec());
    Result<codec::ListPage<model::Pod>> page = pods.ListAll(namespace_, pod_options);
    if (!page.ok()) return page.status();
    input.pods = std::move(page->items);
  }
  std::set<std::string> node_names;
  for (const model::Pod& pod : input.pods) {
    if (!pod.spec.node_name.empty()) node_names.insert(pod.spec.node_name);
  }
  client::TypedClient<model::Node> nodes(rest, client::NodeCodec());
  for (const std::string& node_name : node_names) {
    Result<model::Node> node = nodes.Get("", node_name);
    if (node.ok()) {
      input.nodes.push_back(std::move(node).value());
    } else if (node.status().code() != StatusCode::kNotFound) {
      return node.status();
    }
  }

  client::ListOptions slice_options;
  slice_options.label_selector = std::string(model::kLabelServiceName) + "=" + name;
  client::TypedClient<model::EndpointSlice> slices(rest, client::EndpointSliceCodec());
  Result<codec::ListPage<model::EndpointSlice>> slice_page =
      slices.ListAll(namespace_, slice_options);
  if (!slice_page.ok()) return slice_page.status();
  input.slices = std::move(slice_page->items);

  client::TypedClient<model::Endpoints> endpoints(rest, client::EndpointsCodec());
  Result<model::Endpoints> found = endpoints.Get(namespace_, name);
  if (found.ok()) {
    input.endpoints = std::move(found).value();
  } else if (found.status().code() != StatusCode::kNotFound) {
    return found.status();
  }
  return input;
}

// A ServiceImport, the MCS EndpointSlices of its namespace and name, and this cluster's
// ServiceExport of the same name (absent when it does not export it).
Result<controllers::explain::ServiceImportInput> FetchServiceImport(client::RestClient& rest,
                                                                    const std::string& namespace_,
                                                                    const std::string& name) {
  controllers::explain::ServiceImportInput input;
  client::TypedClient<model::ServiceImport> imports(rest, controllers::mcs::ServiceImportCodec());
  Result<model::ServiceImport> service_import = imports.Get(namespace_, name);
  if (!service_import.ok()) return service_import.status();
  input.service_import = std::move(service_import).value();

  client::ListOptions slice_options;
  slice_options.label_selector = std::string(model::kLabelMcsServiceName) + "=" + name;
  client::TypedClient<model::EndpointSlice> slices(rest, client::EndpointSliceCodec());
  Result<codec::ListPage<model::EndpointSlice>> slice_page =
      slices.ListAll(namespace_, slice_options);
  if (!slice_page.ok()) return slice_page.status();
  input.slices = std::move(slice_page->items);

  client::TypedClient<model::ServiceExport> exports(rest, controllers::mcs::ServiceExportCodec());
  Result<model::ServiceExport> found = exports.Get(namespace_, name);
  if (found.ok()) {
    input.service_export = std::move(found).value();
  } else if (found.status().code() != StatusCode::kNotFound) {
    return found.status();
  }
  return input;
}

bool IsServiceImportKind(const std::string& kind) {
  return kind == "serviceimport" || kind == "serviceimports" || kind == "svcim" ||
         kind == "svcimport";
}

}  // namespace

int RunExplainCommand(const ExplainCommandOptions& options, std::ostream& out, std::ostream& err) {
  const auto fail = [&err](const std::string& message) {
    err << "slicewright explain: " << message << "\n";
    return 1;
  };
  const bool service_import = IsServiceImportKind(options.kind);
  if (options.kind != "service" && options.kind != "services" && options.kind != "svc" &&
      !service_import) {
    return fail("unknown kind \"" + options.kind + "\": service and serviceimport are explained");
  }
  if (options.endpointslice_sync != "all" && options.endpointslice_sync != "headless" &&
      options.endpointslice_sync != "annotated") {
    return fail("--mcs-endpointslice-sync: want all, headless or annotated, got " +
                options.endpointslice_sync);
  }
  if (options.output != "text" && options.output != "json") {
    return fail("-o/--output: want text or json, got " + options.output);
  }
  if (options.max_endpoints_per_slice < 1 || options.max_endpoints_per_slice > 1000) {
    return fail("--max-endpoints-per-slice: want 1-1000");
  }
  std::string namespace_ = options.namespace_.empty() ? "default" : options.namespace_;
  std::string name = options.target;
  if (const std::size_t slash = name.find('/'); slash != std::string::npos) {
    if (!options.namespace_.empty() && options.namespace_ != name.substr(0, slash)) {
      return fail("the namespace of " + name + " contradicts -n " + options.namespace_);
    }
    namespace_ = name.substr(0, slash);
    name = name.substr(slash + 1);
  }
  if (namespace_.empty() || name.empty() || name.find('/') != std::string::npos) {
    return fail("want NAME or NAMESPACE/NAME, got \"" + options.target + "\"");
  }
  Result<std::map<std::string, bool>> gates = controllers::ParseFeatureGates(options.feature_gates);
  if (!gates.ok()) return fail("--feature-gates: " + gates.status().ToString());

  Result<std::unique_ptr<client::RestClient>> rest = Connect(options);
  if (!rest.ok()) return fail(rest.status().ToString());
  if (service_import) {
    Result<controllers::explain::ServiceImportInput> mcs_input =
        FetchServiceImport(**rest, namespace_, name);
    if (!mcs_input.ok()) {
      if (mcs_input.status().code() == StatusCode::kNotFound) {
        return fail("serviceimport " + namespace_ + "/" + name +
                    " not found (no cluster exports it, or the MCS CRDs are not installed)");
      }
      return fail(mcs_input.status().ToString());
    }
    mcs_input->endpointslice_sync = options.endpointslice_sync;
    const controllers::explain::ServiceImportExplanation explanation =
        controllers::explain::ExplainServiceImport(*mcs_input);
    if (options.output == "json") {
      out << controllers::explain::EncodeServiceImportJson(explanation) << "\n";
    } else {
      out << controllers::explain::RenderServiceImportText(explanation);
    }
    return 0;
  }
  Result<controllers::explain::Input> input = Fetch(**rest, namespace_, name);
  if (!input.ok()) {
    if (input.status().code() == StatusCode::kNotFound) {
      return fail("service " + namespace_ + "/" + name + " not found");
    }
    return fail(input.status().ToString());
  }
  auto gate = gates->find(std::string(kFeatureExternalEndpointController));
  input->external_endpoint_controller = gate == gates->end() || gate->second;
  input->managed_by = options.controller_name;
  input->max_endpoints_per_slice = options.max_endpoints_per_slice;

  const controllers::explain::Explanation explanation = controllers::explain::Explain(*input);
  if (options.output == "json") {
    out << controllers::explain::EncodeJson(explanation) << "\n";
  } else {
    out << controllers::explain::RenderText(explanation);
  }
  return 0;
}

namespace {

CommandSpec ExplainCommand() {
  auto options = std::make_shared<ExplainCommandOptions>();
  CommandSpec spec;
  spec.name = "explain";
  spec.description =
      "Say who manages a Service's endpoints and why, and which pods are left out and why; "
      "or whether a ServiceImport can be routed through EndpointSlices here "
      "(also `kubectl slicewright explain service|serviceimport NS/NAME`)";
  spec.flags = {
      {.names = "kind",
       .help = "service or serviceimport",
       .target = &options->kind,
       .required = true},
      {.names = "name",
       .help = "NAME or NAMESPACE/NAME",
       .target = &options->target,
       .required = true},
      {.names = "-n,--namespace",
       .help = "The object's namespace (default: default)",
       .target = &options->namespace_,
       .show_default = false},
      {.names = "--kubeconfig",
       .help = "Path to a kubeconfig (else $KUBECONFIG, ~/.kube/config, in-cluster)",
       .target = &options->kubeconfig,
       .show_default = false},
      {.names = "--context",
       .help = "The kubeconfig context to use",
       .target = &options->context,
       .show_default = false},
      {.names = "--feature-gates",
       .help = "The controllers' --feature-gates (ExternalEndpointController defaults to true)",
       .target = &options->feature_gates,
       .show_default = false},
      {.names = "--controller-name",
       .help = "The controllers' --controller-name (managed-by value)",
       .target = &options->controller_name},
      {.names = "--max-endpoints-per-slice",
       .help = "The controllers' --max-endpoints-per-slice",
       .target = &options->max_endpoints_per_slice},
      {.names = "--mcs-endpointslice-sync",
       .help = "serviceimport: the MCS agents' --mcs-endpointslice-sync (all, headless, annotated)",
       .target = &options->endpointslice_sync},
      {.names = "-o,--output", .help = "text or json", .target = &options->output},
  };
  spec.run = [options](const CommandContext& io) {
    return RunExplainCommand(*options, io.out, io.err);
  };
  return spec;
}
SW_REGISTER_COMMAND(ExplainCommand);

}  // namespace

}  // namespace slicewright::cli

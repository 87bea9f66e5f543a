#include "cli/plan_command.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "slicewright/base/result.h"
#include "slicewright/codec/json.h"
#include "slicewright/labels/selector.h"
#include "slicewright/model/compact_pod.h"
#include "slicewright/model/well_known.h"
#include "slicewright/reconcile/planner.h"
#include "slicewright/reconcile/pod_source.h"
#include "slicewright/reconcile/render.h"
#include "slicewright/reconcile/topology_cache.h"

#include "cli/command.h"

namespace slicewright::cli {
namespace {

Result<std::string> ReadInput(const std::string& path, std::istream& in) {
  std::ostringstream buffer;
  if (path == "-") {
    buffer << in.rdbuf();
    return buffer.str();
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) return NotFoundError("cannot open " + path);
  buffer << file.rdbuf();
  if (file.bad()) return DataLossError("cannot read " + path);
  return buffer.str();
}

// The parsed cluster state, kept and indexed the way the controller's informers and listers keep
// it (pods as the Pod cache's CompactPods), so that `--repeat` times the controller's own sync of
// a Service without kept state.
struct ClusterState {
  codec::ObjectSet objects;
  std::unordered_map<std::string, const model::Node*> nodes;
  model::PodInterners interners;
  std::vector<model::CompactPod> pods;  // objects.pods, compacted, in input order
  std::unordered_map<std::string, std::vector<const model::CompactPod*>> pods_by_namespace;
  // "namespace/service-name" -> that Service's slices managed by the controller, in input order.
  std::unordered_map<std::string, std::vector<model::EndpointSlice>> slices_by_service;
  std::vector<const model::Service*> services;  // with a selector, not ExternalName, sorted
};

void IndexState(ClusterState& state, std::string_view controller_name) {
  for (const model::Node& node : state.objects.nodes) state.nodes[node.metadata.name] = &node;
  state.pods.reserve(state.objects.pods.size());
  for (const model::Pod& pod : state.objects.pods) {
    state.pods.push_back(model::CompactPod::FromPod(pod, state.interners));
  }
  for (const model::CompactPod& pod : state.pods) {
    state.pods_by_namespace[pod.namespace_()].push_back(&pod);
  }
  for (const model::EndpointSlice& slice : state.objects.endpoint_slices) {
    // The controller lists service-name=<svc>,managed-by=<us> and skips slices being deleted.
    auto service = slice.metadata.labels.find(model::kLabelServiceName);
    auto managed_by = slice.metadata.labels.find(model::kLabelManagedBy);
    if (service == slice.metadata.labels.end() || managed_by == slice.metadata.labels.end() ||
        managed_by->second != controller_name || slice.metadata.deletion_timestamp) {
      continue;
    }
    state.slices_by_service[model::NamespacedName(slice.metadata.namespace_, service->second)]
        .push_back(slice);
  }
  for (const model::Service& service : state.objects.services) {
    if (!service.spec.selector || service.spec.type == "ExternalName") continue;
    state.services.push_back(&service);
  }
  std::sort(state.services.begin(), state.services.end(),
            [](const model::Service* a, const model::Service* b) {
              return std::tie(a->metadata.namespace_, a->metadata.name) <
                     std::tie(b->metadata.namespace_, b->metadata.name);
            });
}

struct ServicePlan {
  std::string service;  // "namespace/name"
  reconcile::Plan plan;
};

// One full controller pass over every Service: select pods, derive, plan. This is the step
// `--repeat` times, so it does no I/O and no decoding.
std::vector<ServicePlan> PlanAll(const ClusterState& state, const PlanCommandOptions& options,
                                 const reconcile::TopologyCache& topology) {
  std::vector<ServicePlan> plans;
  plans.reserve(state.services.size());
  static const std::vector<const model::CompactPod*> kNoPods;
  static const std::vector<model::EndpointSlice> kNoSlices;
  std::vector<const model::CompactPod*> selected;
  for (const model::Service* service : state.services) {
    const std::string key = model::NamespacedName(service->metadata);
    auto pods_it = state.pods_by_namespace.find(service->metadata.namespace_);
    const auto& candidates = pods_it == state.pods_by_namespace.end() ? kNoPods : pods_it->second;
    selected.clear();
    // A workload's pods share one interned label set (CompactPod): the selector is matched once
    // per run of pods with the same set, not once per pod.
    const model::StringMap* last_labels = nullptr;
    bool last_matched = false;
    for (const model::CompactPod* pod : candidates) {
      if (&pod->labels() != last_labels) {
        last_labels = &pod->labels();
        last_matched = labels::SelectorMatchesMap(*service->spec.selector, *last_labels);
      }
      if (last_matched) {
        selected.push_back(pod);
      }
    }
    reconcile::ServiceSourceOptions source_options;
    source_options.managed_by = options.controller_name;
    // A freshly started controller's trigger-time tracker has not seen the Service yet, so it
    // reports the Service's creation time (spec §8).
    source_options.trigger_time = service->metadata.creation_timestamp.value_or(model::Time{});
    source_options.slice_capacity = static_cast<std::size_t>(options.max_endpoints_per_slice);
    auto node_lookup = [&](std::string_view name) -> const model::Node* {
      auto it = state.nodes.find(std::string(name));
      return it == state.nodes.end() ? nullptr : it->second;
    };
    auto slices_it = state.slices_by_service.find(key);
    const auto& slices = slices_it == state.slices_by_service.end() ? kNoSlices : slices_it->second;
    // As the controller derives: slices that already hold endpoints unchanged are not rebuilt.
    source_options.stored_slices = slices;
    reconcile::DesiredEndpoints desired =
        reconcile::DesiredFromService(*service, selected, node_lookup, source_options);

    const reconcile::TopologyInput topology_input = topology.Snapshot(key);
    reconcile::PlanOptions plan_options;
    plan_options.max_endpoints_per_slice = options.max_endpoints_per_slice;
    plan_options.managed_by = options.controller_name;
    plan_options.topology = &topology_input;
    plans.push_back(
        ServicePlan{key, reconcile::PlanSlices(std::move(desired), slices, plan_options)});
  }
  return plans;
}

std::string EncodePlanJson(const std::vector<ServicePlan>& plans) {
  std::string out = R"({"apiVersion":"slicewright.io/v1alpha1","kind":"Plan","items":[)";
  for (std::size_t i = 0; i < plans.size(); ++i) {
    if (i > 0) out += ',';
    // Service keys are DNS names and slashes: nothing in them needs JSON escaping.
    out += R"({"service":")" + plans[i].service + R"(","actions":[)";
    const auto& actions = plans[i].plan.actions;
    for (std::size_t a = 0; a < actions.size(); ++a) {
      if (a > 0) out += ',';
      out += R"({"operation":")";
      out += reconcile::OperationName(actions[a].operation);
      out += R"(","endpointSlice":)";
      out += codec::EncodeEndpointSlice(actions[a].slice);
      out += '}';
    }
    out += "]}";
  }
  out += "]}";
  return out;
}

std::string RenderTable(const std::vector<ServicePlan>& plans) {
  std::string out;
  for (const ServicePlan& item : plans) {
    const reconcile::Plan& plan = item.plan;
    out += item.service + ": " + std::to_string(plan.Count(reconcile::Operation::kCreate)) +
           " create, " + std::to_string(plan.Count(reconcile::Operation::kUpdate)) + " update, " +
           std::to_string(plan.Count(reconcile::Operation::kDelete)) + " delete, " +
           std::to_string(plan.unchanged.size()) + " unchanged\n";
    std::istringstream lines(reconcile::Render(plan));
    for (std::string line; std::getline(lines, line);) out += "  " + line + "\n";
  }
  return out;
}

void ReportDiagnostics(const std::vector<ServicePlan>& plans, std::ostream& err) {
  for (const ServicePlan& item : plans) {
    for (const reconcile::Diagnostic& diagnostic : item.plan.diagnostics) {
      const bool warning = diagnostic.severity == reconcile::Diagnostic::Severity::kWarning;
      err << (warning ? "warning: " : "info: ") << item.service << ": " << diagnostic.reason << ": "
          << diagnostic.message << "\n";
    }
  }
}

void ReportTiming(const ClusterState& state, const PlanCommandOptions& options,
                  const reconcile::TopologyCache& topology, std::ostream& err) {
  std::vector<std::int64_t> samples;
  samples.reserve(static_cast<std::size_t>(options.repeat));
  // The writes of one run (every run plans the same), so that a timing compared with another
  // implementation's can be checked to have made the same writes.
  std::size_t writes[3] = {0, 0, 0};
  for (int run = 0; run < options.repeat; ++run) {
    // A run is timed up to and including the destruction of its plans, as a sync's is: a full
    // build's endpoints end in the plan's new slices and die with it, while a resync's desired
    // endpoints die inside PlanSlices. Stopping the clock before the plans die charged the
    // resync for freeing its endpoints and not the full build.
    const auto start = std::chrono::steady_clock::now();
    {
      const std::vector<ServicePlan> plans = PlanAll(state, options, topology);
      if (run == 0) {
        for (const ServicePlan& item : plans) {
          writes[0] += item.plan.Count(reconcile::Operation::kCreate);
          writes[1] += item.plan.Count(reconcile::Operation::kUpdate);
          writes[2] += item.plan.Count(reconcile::Operation::kDelete);
        }
      }
    }
    const auto stop = std::chrono::steady_clock::now();
    samples.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(stop - start).count());
  }
  std::sort(samples.begin(), samples.end());
  err << "reconcile: median_ns=" << samples[samples.size() / 2] << " min_ns=" << samples.front()
      << " runs=" << options.repeat << " writes=" << writes[0] << "/" << writes[1] << "/"
      << writes[2] << "\n";
}

}  // namespace

int RunPlanCommand(const PlanCommandOptions& options, std::istream& in, std::ostream& out,
                   std::ostream& err) {
  if (options.files.empty()) {
    err << "error: no input: give at least one -f FILE (or -f - for standard input)\n";
    return 1;
  }
  if (options.max_endpoints_per_slice < 1 || options.max_endpoints_per_slice > 1000) {
    err << "error: --max-endpoints-per-slice must be between 1 and 1000, got "
        << options.max_endpoints_per_slice << "\n";
    return 1;
  }
  if (options.output != "json" && options.output != "yaml" && options.output != "table") {
    err << "error: -o must be json, yaml or table, got \"" << options.output << "\"\n";
    return 1;
  }
  if (options.repeat < 0) {
    err << "error: --repeat must not be negative\n";
    return 1;
  }

  ClusterState state;
  for (const std::string& path : options.files) {
    Result<std::string> text = ReadInput(path, in);
    if (!text.ok()) {
      err << "error: " << text.status().ToString() << "\n";
      return 1;
    }
    const std::string name = path == "-" ? "<stdin>" : path;
    Result<codec::ObjectSet> objects = codec::DecodeDocuments(*text, name);
    if (!objects.ok()) {
      err << "error: " << objects.status().ToString() << "\n";
      return 1;
    }
    state.objects.Append(std::move(*objects));
  }
  IndexState(state, options.controller_name);

  // kube-controller-manager always runs the topology cache, fed with every Node.
  reconcile::TopologyCache topology;
  topology.SetNodes(state.objects.nodes);

  const std::vector<ServicePlan> plans = PlanAll(state, options, topology);
  ReportDiagnostics(plans, err);
  if (options.repeat > 0) ReportTiming(state, options, topology, err);

  if (options.output == "table") {
    out << RenderTable(plans);
    return 0;
  }
  const std::string json = EncodePlanJson(plans);
  if (options.output == "json") {
    out << json << "\n";
    return 0;
  }
  Result<std::string> yaml = codec::JsonToYaml(json);
  if (!yaml.ok()) {
    err << "error: " << yaml.status().ToString() << "\n";
    return 1;
  }
  out << *yaml;
  return 0;
}

namespace {

CommandSpec PlanCommand() {
  auto options = std::make_shared<PlanCommandOptions>();
  CommandSpec spec;
  spec.name = "plan";
  spec.description =
      "Print what the EndpointSlice controller would write for the given cluster state";
  spec.flags = {
      {.names = "-f,--filename",
       .help = "Services, Pods, Nodes and EndpointSlices as `kubectl get -o json|yaml` prints "
               "them; - reads standard input",
       .target = &options->files,
       .required = true,
       .show_default = false},
      {.names = "--max-endpoints-per-slice",
       .help = "The maximum number of endpoints added to an EndpointSlice (1-1000)",
       .target = &options->max_endpoints_per_slice},
      {.names = "--controller-name",
       .help = "The endpointslice.kubernetes.io/managed-by value of our slices",
       .target = &options->controller_name},
      {.names = "-o,--output",
       .help = "Output format: json, yaml or table",
       .target = &options->output},
      {.names = "--repeat",
       .help = "Also run the reconcile step N times and print its timing to stderr",
       .target = &options->repeat,
       .show_default = false},
  };
  spec.run = [options](const CommandContext& io) {
    return RunPlanCommand(*options, io.in, io.out, io.err);
  };
  return spec;
}
SW_REGISTER_COMMAND(PlanCommand);

}  // namespace

}  // namespace slicewright::cli

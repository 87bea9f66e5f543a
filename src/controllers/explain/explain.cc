#include "controllers/explain/explain.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "slicewright/codec/json.h"
#include "slicewright/labels/selector.h"
#include "slicewright/model/endpoint_controller.h"
#include "slicewright/model/network_status.h"
#include "slicewright/model/well_known.h"
#include "slicewright/reconcile/planner.h"
#include "slicewright/reconcile/pod_source.h"

#include "controllers/multinetwork/multinetwork.h"

namespace slicewright::controllers::explain {
namespace {

constexpr std::string_view kMirroringController = "endpointslice-mirroring";

// Which controller writes the Service's endpoints, and why (spec §10-§12, KEP-4770).
void DecideController(const Input& input, Explanation& out) {
  const model::Service& service = input.service;
  const std::optional<std::string_view> label = model::EndpointControllerName(service);
  const bool labelled = label.has_value();
  const std::string label_text =
      labelled ? fmt::format("{}={}", model::kLabelEndpointControllerName, *label) : "";

  if (model::LabelledForController(service, multinetwork::kControllerName)) {
    const std::string network = multinetwork::ServiceNetwork(service);
    if (network.empty()) {
      out.reason = fmt::format(
          "labelled {} but without the {} annotation: the multi-network controller skips it "
          "and the built-in controllers leave it alone, so nothing writes its endpoints",
          label_text, model::kAnnotationServiceNetwork);
      return;
    }
    out.controller = "multinetwork";
    out.managed_by = std::string(multinetwork::kControllerName);
    out.reason = fmt::format(
        "labelled {}: the multi-network controller publishes the pods' IPs on network {}",
        label_text, network);
    return;
  }
  if (model::LeftToAnotherController(service, input.external_endpoint_controller)) {
    out.reason = fmt::format(
        "labelled {} (KEP-4770, feature gate ExternalEndpointController=true): the built-in "
        "EndpointSlice, mirroring and Endpoints controllers leave it to \"{}\"",
        label_text, *label);
    return;
  }
  const std::string gate_note = labelled ? fmt::format(
                                               " (its label {} is ignored: feature gate "
                                               "ExternalEndpointController=false)",
                                               label_text)
                                         : "";
  if (service.spec.type == "ExternalName") {
    out.reason = "type ExternalName: no controller publishes endpoints for it" + gate_note;
    return;
  }
  if (!service.spec.selector.has_value()) {
    out.controller = std::string(kMirroringController);
    out.managed_by = std::string(model::kManagedByMirroringController);
    out.reason = "no selector: the EndpointSlice mirroring controller mirrors the Endpoints " +
                 service.metadata.name + gate_note;
    if (!input.endpoints.has_value()) {
      out.notes.push_back("there is no Endpoints " + service.metadata.name +
                          ": nothing to mirror until someone writes it");
    } else if (input.endpoints->metadata.labels.contains(model::kLabelSkipMirror)) {
      out.notes.push_back(
          fmt::format("the Endpoints carries {}: it is not mirrored", model::kLabelSkipMirror));
    }
    return;
  }
  out.controller = "endpointslice";
  out.managed_by = input.managed_by;
  out.reason = "it has a selector and no " + std::string(model::kLabelEndpointControllerName) +
               " label: the EndpointSlice controller publishes the pods it selects" + gate_note;
}

std::string FamilyOf(std::string_view ip) {
  return ip.find(':') == std::string_view::npos ? "IPv4" : "IPv6";
}

std::string JoinIPs(const std::vector<std::string>& ips) {
  return ips.empty() ? "none" : fmt::format("{}", fmt::join(ips, ", "));
}

struct PodOutcome {
  PodReport report;
  std::optional<model::Pod> published;  // the pod as the controller sees it, when published
};

PodOutcome JudgePod(const Input& input, const Explanation& out, const model::Pod& pod,
                    const std::map<std::string, const model::Node*, std::less<>>& nodes) {
  const model::Service& service = input.service;
  PodOutcome outcome;
  PodReport& report = outcome.report;
  report.name = pod.metadata.name;
  if (pod.status.phase == "Succeeded" || pod.status.phase == "Failed") {
    report.verdict = PodVerdict::kPodFinished;
    report.detail = "phase " + pod.status.phase;
    return outcome;
  }
  model::Pod seen = pod;
  if (out.controller == "multinetwork") {
    const std::string network = multinetwork::ServiceNetwork(service);
    Result<std::optional<model::Pod>> adapted = multinetwork::PodOnNetwork(pod, network);
    if (!adapted.ok()) {
      report.verdict = PodVerdict::kBadNetworkStatus;
      report.detail = adapted.status().ToString();
      return outcome;
    }
    if (!adapted->has_value()) {
      report.verdict = PodVerdict::kNotOnNetwork;
      report.detail = "its " + std::string(model::kAnnotationNetworkStatus) +
                      " lists no IP on network " + network;
      return outcome;
    }
    seen = std::move(**adapted);
  }
  if (!reconcile::ShouldPodBeInEndpoints(seen, /*include_terminating=*/true)) {
    report.verdict = PodVerdict::kNoPodIP;
    report.detail = seen.spec.node_name.empty()
                        ? "not scheduled to a Node yet"
                        : "scheduled to " + seen.spec.node_name + " but has no status.podIPs yet";
    return outcome;
  }
  const model::Node* node = nullptr;
  if (auto it = nodes.find(seen.spec.node_name); it != nodes.end()) node = it->second;
  if (node == nullptr && !service.spec.publish_not_ready_addresses) {
    report.verdict = PodVerdict::kNodeNotFound;
    report.detail = seen.spec.node_name.empty()
                        ? "it has no spec.nodeName"
                        : "Node " + seen.spec.node_name + " not found (the controller retries)";
    return outcome;
  }
  std::optional<model::Endpoint> endpoint;
  std::vector<std::string> families;
  for (const std::string& address_type : reconcile::SupportedAddressTypes(service)) {
    families.push_back(address_type);
    model::Endpoint candidate = reconcile::PodToEndpoint(seen, node, service, address_type);
    if (!candidate.addresses.empty() && !endpoint.has_value()) endpoint = std::move(candidate);
  }
  if (!endpoint.has_value()) {
    std::vector<std::string> pod_families;
    for (const std::string& ip : seen.status.pod_ips) pod_families.push_back(FamilyOf(ip));
    report.verdict = PodVerdict::kNoIPForFamily;
    report.detail = fmt::format("the Service serves {}; the pod's IPs: {}",
                                fmt::join(families, " and "), JoinIPs(seen.status.pod_ips));
    return outcome;
  }
  for (const model::ServicePort& port : service.spec.ports) {
    if (!reconcile::FindPort(seen, port).has_value()) {
      report.unresolved_ports.push_back(port.name.empty() ? std::to_string(port.port) : port.name);
    }
  }
  if (endpoint->conditions.terminating.value_or(false)) {
    report.verdict = PodVerdict::kTerminating;
    report.detail = endpoint->conditions.serving.value_or(false) ? "being deleted, still serving"
                                                                 : "being deleted, not serving";
  } else if (endpoint->conditions.ready.value_or(true)) {
    report.verdict = PodVerdict::kReady;
  } else {
    report.verdict = PodVerdict::kNotReady;
    report.detail = "its Ready condition is not True";
  }
  outcome.published = std::move(seen);
  return outcome;
}

bool UsesTopologyCache(const model::Service& service) {
  auto mode = service.metadata.annotations.find(model::kAnnotationTopologyMode);
  auto hints = service.metadata.annotations.find(model::kAnnotationTopologyAwareHints);
  const auto set = [&](auto it) {
    return it != service.metadata.annotations.end() && !it->second.empty() &&
           it->second != "Disabled" && it->second != "disabled";
  };
  return set(mode) || set(hints);
}

}  // namespace

SliceReport SummariseSlice(const model::EndpointSlice& slice) {
  SliceReport report;
  report.name = slice.metadata.name;
  auto managed_by = slice.metadata.labels.find(model::kLabelManagedBy);
  if (managed_by != slice.metadata.labels.end()) report.managed_by = managed_by->second;
  report.address_type = slice.address_type;
  for (const model::Endpoint& endpoint : slice.endpoints) {
    ++report.endpoints;
    // Unset conditions: ready and serving mean true, terminating false (discovery/v1).
    if (endpoint.conditions.ready.value_or(true)) ++report.ready;
    if (endpoint.conditions.serving.value_or(endpoint.conditions.ready.value_or(true))) {
      ++report.serving;
    }
    if (endpoint.conditions.terminating.value_or(false)) ++report.terminating;
  }
  return report;
}

std::string_view PodVerdictName(PodVerdict verdict) {
  switch (verdict) {
    case PodVerdict::kReady:
      return "Ready";
    case PodVerdict::kNotReady:
      return "NotReady";
    case PodVerdict::kTerminating:
      return "Terminating";
    case PodVerdict::kPodFinished:
      return "PodFinished";
    case PodVerdict::kNoPodIP:
      return "NoPodIP";
    case PodVerdict::kNoIPForFamily:
      return "NoIPForFamily";
    case PodVerdict::kNodeNotFound:
      return "NodeNotFound";
    case PodVerdict::kNotOnNetwork:
      return "NotOnNetwork";
    case PodVerdict::kBadNetworkStatus:
      return "BadNetworkStatus";
  }
  return "Unknown";
}

bool IsLeftOut(PodVerdict verdict) {
  return verdict != PodVerdict::kReady && verdict != PodVerdict::kNotReady &&
         verdict != PodVerdict::kTerminating;
}

Explanation Explain(const Input& input) {
  const model::Service& service = input.service;
  Explanation out;
  out.service = model::NamespacedName(service.metadata);
  DecideController(input, out);

  for (const model::EndpointSlice& slice : input.slices) {
    SliceReport report = SummariseSlice(slice);
    if (!out.managed_by.empty() && report.managed_by == out.managed_by) {
      out.ready += report.ready;
      out.serving += report.serving;
      out.terminating += report.terminating;
      out.slices.push_back(std::move(report));
    } else {
      out.other_slices.push_back(std::move(report));
    }
  }
  const auto by_name = [](const SliceReport& a, const SliceReport& b) { return a.name < b.name; };
  std::sort(out.slices.begin(), out.slices.end(), by_name);
  std::sort(out.other_slices.begin(), out.other_slices.end(), by_name);
  if (out.controller.empty() && !out.other_slices.empty()) {
    out.notes.push_back(
        "slices of other managers exist; slicewright's controllers never touch "
        "them");
  }

  // Pods are judged for the pod-driven controllers only: mirroring follows the Endpoints.
  const bool pod_driven = out.controller == "endpointslice" || out.controller == "multinetwork";
  if (!pod_driven || !service.spec.selector.has_value()) return out;

  std::map<std::string, const model::Node*, std::less<>> nodes;
  for (const model::Node& node : input.nodes) nodes.emplace(node.metadata.name, &node);
  std::vector<model::Pod> published;
  for (const model::Pod& pod : input.pods) {
    if (pod.metadata.namespace_ != service.metadata.namespace_ ||
        !labels::SelectorMatchesMap(*service.spec.selector, pod.metadata.labels)) {
      continue;
    }
    ++out.selected_pods;
    PodOutcome outcome = JudgePod(input, out, pod, nodes);
    if (outcome.published.has_value()) published.push_back(std::move(*outcome.published));
    out.pods.push_back(std::move(outcome.report));
  }
  std::sort(out.pods.begin(), out.pods.end(),
            [](const PodReport& a, const PodReport& b) { return a.name < b.name; });
  if (out.selected_pods == 0) {
    out.notes.push_back(
        service.spec.selector->empty()
            ? "its selector is empty, so it selects every pod of the namespace, and there are none"
            : fmt::format("its selector {} matches no pod in namespace {}",
                          labels::Selector::FromMap(*service.spec.selector).String(),
                          service.metadata.namespace_));
  }

  if (UsesTopologyCache(service)) {
    out.notes.push_back(
        "topology-aware hints depend on every Node's CPU, so whether the slices "
        "are up to date is not computed here");
    return out;
  }
  std::vector<const model::Pod*> pod_ptrs;
  for (const model::Pod& pod : published) pod_ptrs.push_back(&pod);
  const auto find_node = [&nodes](std::string_view name) -> const model::Node* {
    auto it = nodes.find(name);
    return it == nodes.end() ? nullptr : it->second;
  };
  reconcile::ServiceSourceOptions source;
  source.managed_by = out.managed_by;
  source.slice_capacity = static_cast<std::size_t>(input.max_endpoints_per_slice);
  reconcile::DesiredEndpoints desired =
      reconcile::DesiredFromService(service, pod_ptrs, find_node, source);
  std::vector<model::EndpointSlice> ours;
  for (const model::EndpointSlice& slice : input.slices) {
    auto managed_by = slice.metadata.labels.find(model::kLabelManagedBy);
    if (managed_by != slice.metadata.labels.end() && managed_by->second == out.managed_by &&
        !slice.metadata.deletion_timestamp.has_value()) {
      ours.push_back(slice);
    }
  }
  reconcile::PlanOptions plan_options;
  plan_options.max_endpoints_per_slice = input.max_endpoints_per_slice;
  plan_options.managed_by = out.managed_by;
  const reconcile::Plan plan = reconcile::PlanSlices(std::move(desired), ours, plan_options);
  out.in_sync = plan.empty();
  if (!plan.empty()) {
    out.pending_writes = fmt::format(
        "{} create, {} update, {} delete", plan.Count(reconcile::Operation::kCreate),
        plan.Count(reconcile::Operation::kUpdate), plan.Count(reconcile::Operation::kDelete));
  }
  return out;
}

std::string RenderText(const Explanation& e) {
  std::string text = fmt::format("Service {}\n", e.service);
  if (e.controller.empty()) {
    text += "Managed by:  nobody in slicewright\n";
  } else {
    text += fmt::format("Managed by:  {} controller (managed-by {})\n", e.controller, e.managed_by);
  }
  text += fmt::format("Why:         {}\n", e.reason);
  if (!e.controller.empty()) {
    text += fmt::format("Endpoints:   {} ready, {} serving, {} terminating in {} slice(s)\n",
                        e.ready, e.serving, e.terminating, e.slices.size());
    for (const SliceReport& s : e.slices) {
      text += fmt::format("  {} {}: {} endpoints ({} ready, {} serving, {} terminating)\n", s.name,
                          s.address_type, s.endpoints, s.ready, s.serving, s.terminating);
    }
  }
  if (!e.other_slices.empty()) {
    text += "Other managers' slices:\n";
    for (const SliceReport& s : e.other_slices) {
      text +=
          fmt::format("  {} {} (managed-by {}): {} endpoints, {} ready\n", s.name, s.address_type,
                      s.managed_by.empty() ? "<none>" : s.managed_by, s.endpoints, s.ready);
    }
  }
  if (e.controller == "endpointslice" || e.controller == "multinetwork") {
    std::int64_t counts[4] = {0, 0, 0, 0};  // ready, not ready (no traffic), terminating, left out
    for (const PodReport& p : e.pods) {
      const int index = p.verdict == PodVerdict::kReady         ? 0
                        : p.verdict == PodVerdict::kNotReady    ? 1
                        : p.verdict == PodVerdict::kTerminating ? 2
                                                                : 3;
      ++counts[index];
    }
    text += fmt::format(
        "Pods:        {} selected: {} ready, {} not ready (no traffic), {} terminating, {} left "
        "out\n",
        e.selected_pods, counts[0], counts[1], counts[2], counts[3]);
    for (const PodReport& p : e.pods) {
      text += fmt::format("  {:<14} {}{}{}\n", PodVerdictName(p.verdict), p.name,
                          p.detail.empty() ? "" : ": ", p.detail);
      if (!p.unresolved_ports.empty()) {
        text += fmt::format(
            "  {:<14} {}: port(s) {} not found on the pod (published without "
            "them)\n",
            "", p.name, fmt::join(p.unresolved_ports, ", "));
      }
    }
  }
  if (e.in_sync.has_value()) {
    text += *e.in_sync ? "In sync:     yes\n"
                       : fmt::format(
                             "In sync:     no: {} pending (the controller may be behind, "
                             "or failing: see its Events on the Service)\n",
                             e.pending_writes);
  }
  for (const std::string& note : e.notes) text += "Note:        " + note + "\n";
  return text;
}

std::string EncodeJson(const Explanation& e) {
  using codec::QuoteJsonString;
  const auto strings = [](const std::vector<std::string>& list) {
    std::vector<std::string> quoted;
    for (const std::string& item : list) quoted.push_back(QuoteJsonString(item));
    return fmt::format("[{}]", fmt::join(quoted, ","));
  };
  const auto slices = [](const std::vector<SliceReport>& list) {
    std::vector<std::string> items;
    for (const SliceReport& s : list) {
      items.push_back(fmt::format(
          R"({{"name":{},"managedBy":{},"addressType":{},"endpoints":{},"ready":{},)"
          R"("serving":{},"terminating":{}}})",
          QuoteJsonString(s.name), QuoteJsonString(s.managed_by), QuoteJsonString(s.address_type),
          s.endpoints, s.ready, s.serving, s.terminating));
    }
    return fmt::format("[{}]", fmt::join(items, ","));
  };
  std::vector<std::string> pods;
  for (const PodReport& p : e.pods) {
    pods.push_back(
        fmt::format(R"({{"name":{},"verdict":"{}","leftOut":{},"detail":{},"unresolvedPorts":{}}})",
                    QuoteJsonString(p.name), PodVerdictName(p.verdict), IsLeftOut(p.verdict),
                    QuoteJsonString(p.detail), strings(p.unresolved_ports)));
  }
  std::string out = fmt::format(
      R"({{"service":{},"controller":{},"managedBy":{},"reason":{},"ready":{},"serving":{},)"
      R"("terminating":{},"slices":{},"otherSlices":{},"selectedPods":{},"pods":[{}],"notes":{})",
      QuoteJsonString(e.service), QuoteJsonString(e.controller), QuoteJsonString(e.managed_by),
      QuoteJsonString(e.reason), e.ready, e.serving, e.terminating, slices(e.slices),
      slices(e.other_slices), e.selected_pods, fmt::join(pods, ","), strings(e.notes));
  if (e.in_sync.has_value()) {
    out += fmt::format(R"(,"inSync":{},"pendingWrites":{})", *e.in_sync,
                       QuoteJsonString(e.pending_writes));
  }
  out += "}";
  return out;
}

}  // namespace slicewright::controllers::explain

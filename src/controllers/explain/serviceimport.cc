#include "controllers/explain/serviceimport.h"

#include <algorithm>
#include <map>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "slicewright/codec/json.h"
#include "slicewright/model/well_known.h"

#include "dns/zone.h"

namespace slicewright::controllers::explain {
namespace {

ConditionReport FindCondition(const std::vector<model::Condition>& conditions,
                              std::string_view type) {
  for (const model::Condition& condition : conditions) {
    if (condition.type == type) return {condition.status, condition.reason, condition.message};
  }
  return {};
}

std::string LabelOf(const model::ObjectMeta& meta, std::string_view key) {
  auto it = meta.labels.find(key);
  return it == meta.labels.end() ? std::string() : it->second;
}

// The import is not Ready here because this cluster serves none of its IP families (the agent
// then writes neither a derived Service, so no spec.ips, nor slices).
bool FamilyNotSupported(const ServiceImportExplanation& e) {
  return e.ready.status == model::kConditionFalse &&
         e.ready.reason == model::kReasonIPFamilyNotSupported;
}

// What a consumer can do without EndpointSlices: the VIP for ClusterSetIP, nothing for Headless.
std::string Fallback(const ServiceImportExplanation& e) {
  if (FamilyNotSupported(e)) {
    return "nothing to route to in this cluster: export the Service with a family this cluster "
           "has as well (e.g. ipFamilyPolicy: PreferDualStack in a dual-stack exporting cluster), "
           "or, if this cluster does have the family, run its MCS agent with "
           "--mcs-cluster-ip-families";
  }
  if (e.type == model::kServiceImportHeadless) {
    return "a Headless import has no ClusterSetIP: without EndpointSlices a consumer has no "
           "backends to route to";
  }
  if (e.ips.empty()) {
    return "spec.ips is empty as well (the ClusterSetIP is not allocated yet): nothing to route "
           "to yet";
  }
  std::string text = fmt::format("route to spec.ips ({})", fmt::join(e.ips, ", "));
  if (!e.derived_service.empty()) text += " or the derived Service " + e.derived_service;
  return text + " instead";
}

// Why the agents keep no slices for this import, from their policy and the local export.
std::string WhyAbsent(const ServiceImportInput& input, const ServiceImportExplanation& e) {
  if (FamilyNotSupported(e)) {
    return "the import is not Ready here (IPFamilyNotSupported): " +
           (e.ready.message.empty() ? std::string("this cluster serves none of its IP families")
                                    : e.ready.message);
  }
  const std::string annotation = std::string(model::kAnnotationEndpointSliceSync);
  std::optional<std::string> local;
  if (input.service_export.has_value()) {
    auto it = input.service_export->metadata.annotations.find(annotation);
    if (it != input.service_export->metadata.annotations.end()) local = it->second;
  }
  if (local.has_value() && *local == "false") {
    return fmt::format(
        "this cluster's ServiceExport is annotated {}: \"false\" (the oldest export's annotation "
        "decides); remove it or set \"true\" to get slices",
        annotation);
  }
  if (input.endpointslice_sync == "headless") {
    return fmt::format(
        "the export's sync policy is headless-only (--mcs-endpointslice-sync=headless) and this "
        "import is {}; annotate the ServiceExport with {}: \"true\" (on the oldest export) or run "
        "the agents with --mcs-endpointslice-sync=all to get slices",
        e.type.empty() ? "not Headless" : e.type, annotation);
  }
  if (input.endpointslice_sync == "annotated") {
    return fmt::format(
        "the export's sync policy is annotated-only (--mcs-endpointslice-sync=annotated) and the "
        "oldest export does not say \"true\"; annotate the ServiceExport with {}: \"true\" to get "
        "slices",
        annotation);
  }
  return fmt::format(
      "with --mcs-endpointslice-sync={} that means the oldest export is annotated {}: \"false\", "
      "or the agents keep no slices for it yet (an agent without EndpointSlice support, or one "
      "still syncing); remove the annotation or set it to \"true\" to get slices (if the agents "
      "run with another policy, pass it here with --mcs-endpointslice-sync)",
      input.endpointslice_sync, annotation);
}

void Decide(const ServiceImportInput& input, ServiceImportExplanation& e) {
  const std::string selector =
      fmt::format("{}={}", model::kLabelMcsServiceName, input.service_import.metadata.name);
  const bool any_slices = !input.slices.empty();
  switch (input.service_import.status.endpoint_slice_objects) {
    case model::EndpointSliceObjects::kPresent:
      if (any_slices) {
        e.endpointslices_routable = true;
        e.verdict = fmt::format(
            "endpointSliceObjects is Present: consume the EndpointSlices labelled {} in "
            "namespace {}",
            selector, input.service_import.metadata.namespace_);
        if (e.ready_endpoints == 0) {
          e.advice =
              "no endpoint is ready right now: the backends are down or starting; keep routing "
              "through the slices (Present is kept with zero endpoints; do not fall back to "
              "spec.ips for that)";
        }
      } else {
        e.verdict = fmt::format(
            "endpointSliceObjects is Present but no EndpointSlice labelled {} exists here",
            selector);
        e.advice =
            "the implementation said it maintains slices but none is visible: it may be "
            "behind, or something deleted them; check the MCS agent of this cluster (its logs "
            "and Events) and retry";
      }
      return;
    case model::EndpointSliceObjects::kAbsent:
      e.verdict =
          "endpointSliceObjects is Absent: the implementation keeps no MCS EndpointSlices for "
          "this import in this cluster; " +
          WhyAbsent(input, e);
      e.advice = Fallback(e);
      if (any_slices) {
        e.notes.push_back(fmt::format(
            "{} slice(s) labelled {} still exist: slices are deleted after the field flips to "
            "Absent; do not consume them",
            input.slices.size(), selector));
      }
      return;
    case model::EndpointSliceObjects::kUnset:
      e.verdict =
          "endpointSliceObjects is not set: a legacy implementation that predates the field "
          "(slicewright's agent sets it on its first reconcile)";
      e.advice = fmt::format("probe for EndpointSlices labelled {} ({} found here) or {}", selector,
                             input.slices.size(),
                             e.type == model::kServiceImportHeadless || e.ips.empty()
                                 ? std::string("treat it as Absent")
                                 : fmt::format("use spec.ips ({})", fmt::join(e.ips, ", ")));
      return;
  }
}

void AddSourceClusters(const ServiceImportInput& input, ServiceImportExplanation& e) {
  std::map<std::string, SourceClusterReport> clusters;
  for (const std::string& cluster : input.service_import.status.clusters) {
    SourceClusterReport& report = clusters[cluster];
    report.cluster = cluster;
    report.listed = true;
  }
  bool foreign = false;
  std::string derived_label;
  for (const model::EndpointSlice& slice : input.slices) {
    const std::string cluster = LabelOf(slice.metadata, model::kLabelMcsSourceCluster);
    SourceClusterReport& report = clusters[cluster];
    report.cluster = cluster;
    SliceReport summary = SummariseSlice(slice);
    if (summary.managed_by != model::kManagedByMcs) foreign = true;
    report.endpoints += summary.endpoints;
    report.ready += summary.ready;
    report.serving += summary.serving;
    e.endpoints += summary.endpoints;
    e.ready_endpoints += summary.ready;
    report.slices.push_back(std::move(summary));
    const std::string service_name = LabelOf(slice.metadata, model::kLabelServiceName);
    if (!service_name.empty()) derived_label = service_name;
  }
  for (auto& [cluster, report] : clusters) {
    std::sort(report.slices.begin(), report.slices.end(),
              [](const SliceReport& a, const SliceReport& b) { return a.name < b.name; });
    if (cluster.empty()) {
      e.notes.push_back(fmt::format(
          "{} slice(s) have no {} label: not a conformant MCS slice (each must name its source "
          "cluster)",
          report.slices.size(), model::kLabelMcsSourceCluster));
    } else if (!report.listed) {
      e.notes.push_back(fmt::format(
          "cluster {} has slices here but is not in status.clusters: it stopped exporting or its "
          "Lease in the broker expired; the agent deletes its slices",
          cluster));
    }
    e.clusters.push_back(std::move(report));
  }
  if (foreign) {
    e.notes.push_back(fmt::format(
        "some slices are not managed by {}: another implementation (or a person) wrote them",
        model::kManagedByMcs));
  }
  if (!derived_label.empty()) {
    e.notes.push_back(fmt::format(
        "the slices also carry {}={} (the derived Service, so kube-proxy routes the "
        "ClusterSetIP): a consumer that files a slice under {} first must select ServiceImport "
        "backends by {}",
        model::kLabelServiceName, derived_label, model::kLabelServiceName,
        model::kLabelMcsServiceName));
  }
}

std::string ConditionText(const ConditionReport& c) {
  if (c.status.empty()) return "not set";
  std::string text = c.status;
  if (!c.reason.empty()) text += " (" + c.reason + ")";
  if (!c.message.empty()) text += ": " + c.message;
  return text;
}

}  // namespace

namespace {

// The DNS view of the import (spec §9), as the agent's resolver builds it.
void AddDnsNames(const ServiceImportInput& input, ServiceImportExplanation& e) {
  const model::ServiceImport& si = input.service_import;
  std::vector<model::EndpointSlice> mcs_slices;
  for (const model::EndpointSlice& slice : input.slices) {
    auto managed = slice.metadata.labels.find(model::kLabelManagedBy);
    if (managed != slice.metadata.labels.end() && managed->second == model::kManagedByMcs) {
      mcs_slices.push_back(slice);
    }
  }
  const auto live = [&si](std::string_view cluster) {
    return std::find(si.status.clusters.begin(), si.status.clusters.end(), cluster) !=
           si.status.clusters.end();
  };
  const dns::ServiceView view = dns::BuildServiceView(si, mcs_slices, live, dns::ZoneOptions{});
  const std::string service_name =
      fmt::format("{}.{}.svc.{}", si.metadata.name, si.metadata.namespace_, dns::kZoneName);
  for (const auto& [prefix, records] : view.names) {
    ServiceImportExplanation::DnsName name;
    name.name = prefix.empty() ? service_name : fmt::format("{}.{}", prefix, service_name);
    for (const dns::Record& record : records) name.records.push_back(dns::RecordText(record));
    e.dns.push_back(std::move(name));
  }
  if (view.names.empty()) {
    e.notes.push_back(fmt::format("DNS: {} is NXDOMAIN: no ready endpoint in a live source cluster",
                                  service_name));
  }
}

}  // namespace

ServiceImportExplanation ExplainServiceImport(const ServiceImportInput& input) {
  const model::ServiceImport& si = input.service_import;
  ServiceImportExplanation e;
  e.service_import = model::NamespacedName(si.metadata);
  e.type = si.spec.type;
  e.ips = si.spec.ips;
  e.ip_families = si.spec.ip_families;
  if (auto it = si.metadata.annotations.find(model::kAnnotationDerivedService);
      it != si.metadata.annotations.end()) {
    e.derived_service = it->second;
  }
  e.endpoint_slice_objects =
      std::string(model::EndpointSliceObjectsName(si.status.endpoint_slice_objects));
  e.ready = FindCondition(si.status.conditions, model::kConditionReady);
  if (input.service_export.has_value()) {
    e.exported_here = true;
    e.conflict = FindCondition(input.service_export->status.conditions, model::kConditionConflict);
  }
  AddSourceClusters(input, e);
  Decide(input, e);
  AddDnsNames(input, e);
  if (si.status.clusters.empty()) {
    e.notes.push_back("status.clusters is empty: no cluster exports this Service right now");
  }
  if (e.type == model::kServiceImportClusterSetIP && e.ips.empty() && !FamilyNotSupported(e)) {
    e.notes.push_back("a ClusterSetIP import without spec.ips: its IPs are not allocated yet");
  }
  if (!e.exported_here) {
    e.notes.push_back(
        "this cluster does not export the Service: conflicts show on the exporting clusters' "
        "ServiceExports (kubectl get serviceexport -o yaml there)");
  }
  return e;
}

std::string RenderServiceImportText(const ServiceImportExplanation& e) {
  std::string text = fmt::format("ServiceImport {}\n", e.service_import);
  text += fmt::format("Type:          {}\n", e.type.empty() ? "<unset>" : e.type);
  if (e.type != model::kServiceImportHeadless) {
    text += fmt::format(
        "ClusterSetIP:  {}{}\n", e.ips.empty() ? "none" : fmt::format("{}", fmt::join(e.ips, ", ")),
        e.ip_families.empty() ? "" : fmt::format(" ({})", fmt::join(e.ip_families, ", ")));
    text += fmt::format("Derived:       {}\n",
                        e.derived_service.empty() ? "none" : "Service " + e.derived_service);
  }
  text += fmt::format("Ready:         {}\n", ConditionText(e.ready));
  text += fmt::format("EndpointSliceObjects: {}\n",
                      e.endpoint_slice_objects.empty() ? "<unset>" : e.endpoint_slice_objects);
  text +=
      fmt::format("Routable via EndpointSlices: {}\n", e.endpointslices_routable ? "yes" : "no");
  text += fmt::format("Why:           {}\n", e.verdict);
  if (!e.advice.empty()) text += fmt::format("What to do:    {}\n", e.advice);
  text += fmt::format("Source clusters: {} ({} endpoints, {} ready)\n", e.clusters.size(),
                      e.endpoints, e.ready_endpoints);
  for (const SourceClusterReport& c : e.clusters) {
    text += fmt::format("  {} {}: {} slice(s), {} endpoints ({} ready, {} serving)\n",
                        c.cluster.empty() ? "<no source-cluster label>" : c.cluster,
                        c.listed ? "live" : "not in status.clusters", c.slices.size(), c.endpoints,
                        c.ready, c.serving);
    for (const SliceReport& s : c.slices) {
      text +=
          fmt::format("    {} {} (managed-by {}): {} endpoints, {} ready\n", s.name, s.address_type,
                      s.managed_by.empty() ? "<none>" : s.managed_by, s.endpoints, s.ready);
    }
  }
  if (e.exported_here) text += fmt::format("Conflict:      {}\n", ConditionText(e.conflict));
  if (!e.dns.empty()) {
    constexpr std::size_t kMaxDnsNamesShown = 20;
    text += fmt::format("DNS (clusterset.local, TTL 5 s by default): {} name(s)\n", e.dns.size());
    for (std::size_t i = 0; i < e.dns.size() && i < kMaxDnsNamesShown; ++i) {
      text += fmt::format("  {}: {}\n", e.dns[i].name,
                          e.dns[i].records.empty()
                              ? std::string("<no records yet>")
                              : fmt::format("{}", fmt::join(e.dns[i].records, ", ")));
    }
    if (e.dns.size() > kMaxDnsNamesShown) {
      text +=
          fmt::format("  ... and {} more (-o json lists all)\n", e.dns.size() - kMaxDnsNamesShown);
    }
  }
  for (const std::string& note : e.notes) text += "Note:          " + note + "\n";
  return text;
}

std::string EncodeServiceImportJson(const ServiceImportExplanation& e) {
  using codec::QuoteJsonString;
  const auto strings = [](const std::vector<std::string>& list) {
    std::vector<std::string> quoted;
    for (const std::string& item : list) quoted.push_back(QuoteJsonString(item));
    return fmt::format("[{}]", fmt::join(quoted, ","));
  };
  const auto condition = [](const ConditionReport& c) {
    return fmt::format(R"({{"status":{},"reason":{},"message":{}}})", QuoteJsonString(c.status),
                       QuoteJsonString(c.reason), QuoteJsonString(c.message));
  };
  std::vector<std::string> clusters;
  for (const SourceClusterReport& c : e.clusters) {
    std::vector<std::string> slices;
    for (const SliceReport& s : c.slices) {
      slices.push_back(fmt::format(
          R"({{"name":{},"managedBy":{},"addressType":{},"endpoints":{},"ready":{},)"
          R"("serving":{},"terminating":{}}})",
          QuoteJsonString(s.name), QuoteJsonString(s.managed_by), QuoteJsonString(s.address_type),
          s.endpoints, s.ready, s.serving, s.terminating));
    }
    clusters.push_back(fmt::format(
        R"({{"cluster":{},"listed":{},"endpoints":{},"ready":{},"serving":{},"slices":[{}]}})",
        QuoteJsonString(c.cluster), c.listed, c.endpoints, c.ready, c.serving,
        fmt::join(slices, ",")));
  }
  std::string out = fmt::format(
      R"({{"serviceImport":{},"type":{},"ips":{},"ipFamilies":{},"derivedService":{},)"
      R"("endpointSliceObjects":{},"endpointSlicesRoutable":{},"verdict":{},"advice":{},)"
      R"("ready":{},"exportedHere":{},)",
      QuoteJsonString(e.service_import), QuoteJsonString(e.type), strings(e.ips),
      strings(e.ip_families), QuoteJsonString(e.derived_service),
      QuoteJsonString(e.endpoint_slice_objects), e.endpointslices_routable,
      QuoteJsonString(e.verdict), QuoteJsonString(e.advice), condition(e.ready), e.exported_here);
  if (e.exported_here) out += fmt::format(R"("conflict":{},)", condition(e.conflict));
  std::vector<std::string> names;
  for (const ServiceImportExplanation::DnsName& name : e.dns) {
    names.push_back(fmt::format(R"({{"name":{},"records":{}}})", QuoteJsonString(name.name),
                                strings(name.records)));
  }
  out += fmt::format(
      R"("endpoints":{},"readyEndpoints":{},"clusters":[{}],"dns":[{}],"notes":{}}})", e.endpoints,
      e.ready_endpoints, fmt::join(clusters, ","), fmt::join(names, ","), strings(e.notes));
  return out;
}

}  // namespace slicewright::controllers::explain

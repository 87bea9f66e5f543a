#include "slicewright/mcs/aggregate.h"

#include <algorithm>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "slicewright/base/status.h"

namespace slicewright::mcs {
namespace {

using model::McsServicePort;
using model::ServiceExportRecordSpec;

// metav1.Condition's limit on message.
constexpr std::size_t kMaxConditionMessage = 32768;
// Dropped ports named in a PortConflict message; the rest are counted.
constexpr std::size_t kMaxDroppedPortsNamed = 8;

std::string Quoted(std::string_view text) { return "\"" + std::string(text) + "\""; }

std::string Normalized(std::string_view protocol) {
  return protocol.empty() ? std::string("TCP") : std::string(protocol);
}

// "" and None mean the same affinity, as "" and Cluster the same internal traffic policy (the API
// server's defaults): clusters that differ only so do not conflict.
std::string_view AffinityValue(std::string_view affinity) {
  return affinity.empty() ? model::kSessionAffinityNone : affinity;
}
std::string_view TrafficPolicyValue(std::string_view policy) {
  return policy.empty() ? std::string_view("Cluster") : policy;
}

std::vector<McsServicePort> SortedPorts(const std::vector<McsServicePort>& ports) {
  std::vector<McsServicePort> out = ports;
  for (McsServicePort& port : out) port.protocol = Normalized(port.protocol);
  std::sort(out.begin(), out.end(), [](const McsServicePort& a, const McsServicePort& b) {
    return std::tie(a.name, a.protocol, a.port, a.app_protocol) <
           std::tie(b.name, b.protocol, b.port, b.app_protocol);
  });
  return out;
}

// The families of a record, duplicates dropped (the KEP forbids them; a record should not have
// any after ValidateExportRecord).
std::vector<std::string> Families(const std::vector<std::string>& families) {
  std::vector<std::string> out;
  for (const std::string& family : families) {
    if (std::find(out.begin(), out.end(), family) == out.end()) out.push_back(family);
  }
  return out;
}

bool SameSet(std::vector<std::string> a, std::vector<std::string> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return a == b;
}

std::string JoinFamilies(const std::vector<std::string>& families) {
  std::string out;
  for (const std::string& family : families) {
    if (!out.empty()) out += ',';
    out += family;
  }
  return out.empty() ? std::string("none") : out;
}

std::string RenderOptional(std::string_view value) {
  return value.empty() ? std::string("unset") : Quoted(value);
}

std::string RenderAffinityConfig(const std::optional<model::SessionAffinityConfig>& config) {
  if (!config.has_value()) return "unset";
  if (!config->client_ip.has_value()) return Quoted("{}");
  if (!config->client_ip->timeout_seconds.has_value()) return Quoted("clientIP");
  return Quoted("clientIP.timeoutSeconds=" + std::to_string(*config->client_ip->timeout_seconds));
}

std::string RenderPort(const McsServicePort& port) {
  std::string out = port.name.empty() ? std::string("(unnamed)") : Quoted(port.name);
  out += ' ';
  out += Normalized(port.protocol);
  out += '/';
  out += std::to_string(port.port);
  if (port.app_protocol.has_value()) out += " appProtocol " + Quoted(*port.app_protocol);
  return out;
}

// Cuts `text` to metav1.Condition's limit, on a UTF-8 character boundary.
void CapMessage(std::string& text) {
  if (text.size() <= kMaxConditionMessage) return;
  std::size_t end = kMaxConditionMessage - 3;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0U) == 0x80U) --end;
  text.resize(end);
  text += "...";
}

struct Conflict {
  std::string_view reason;
  std::string sentence;
};

// The KEP's message style: `Conflicting type. Using "ClusterSetIP" from oldest service export in
// "cluster-1". 1/2 clusters disagree.`
std::string Sentence(std::string_view field, std::string_view using_what, std::string_view oldest,
                     std::size_t disagree, std::size_t total) {
  return "Conflicting " + std::string(field) + ". Using " + std::string(using_what) +
         " from oldest service export in " + Quoted(oldest) + ". " + std::to_string(disagree) +
         "/" + std::to_string(total) + " clusters disagree.";
}

// Counts the records whose `value(record)` differs from the oldest's, and adds a conflict if any.
template <typename Value, typename Render>
void CheckProperty(std::span<const ServiceExportRecordSpec* const> sorted, std::string_view field,
                   std::string_view reason, Value&& value, Render&& render,
                   std::vector<Conflict>& out) {
  const auto& winner = value(*sorted.front());
  std::size_t disagree = 0;
  for (const ServiceExportRecordSpec* record : sorted) {
    if (!(value(*record) == winner)) ++disagree;
  }
  if (disagree == 0) return;
  out.push_back(
      {reason, Sentence(field, render(winner), sorted.front()->cluster, disagree, sorted.size())});
}

// Ports (spec §5.2, KEP commit 012e81d71): the union, merged first by name, then by protocol and
// port, the oldest export winning every clash. An unnamed port clashes with every other port: a
// Service with several ports must name them all.
std::vector<McsServicePort> MergePorts(std::span<const ServiceExportRecordSpec* const> sorted,
                                       std::vector<std::string>& dropped) {
  std::vector<McsServicePort> merged;
  for (const ServiceExportRecordSpec* record : sorted) {
    for (McsServicePort port : record->ports) {
      port.protocol = Normalized(port.protocol);
      if (std::find(merged.begin(), merged.end(), port) != merged.end()) continue;
      const bool clash = std::any_of(merged.begin(), merged.end(), [&](const McsServicePort& m) {
        return m.name == port.name || (m.protocol == port.protocol && m.port == port.port) ||
               m.name.empty() || port.name.empty();
      });
      if (clash) {
        dropped.push_back(RenderPort(port) + " from " + Quoted(record->cluster));
      } else {
        merged.push_back(std::move(port));
      }
    }
  }
  return merged;
}

void CheckPorts(std::span<const ServiceExportRecordSpec* const> sorted,
                const std::vector<std::string>& dropped, std::vector<Conflict>& out) {
  const std::vector<McsServicePort> oldest = SortedPorts(sorted.front()->ports);
  std::size_t disagree = 0;
  for (const ServiceExportRecordSpec* record : sorted) {
    if (SortedPorts(record->ports) != oldest) ++disagree;
  }
  if (disagree == 0) return;
  std::string sentence =
      "Conflicting ports. Using the union of all exported ports, clashes won by " +
      std::string("oldest service export in ") + Quoted(sorted.front()->cluster);
  if (!dropped.empty()) {
    sentence += " (dropped: ";
    for (std::size_t i = 0; i < dropped.size() && i < kMaxDroppedPortsNamed; ++i) {
      if (i > 0) sentence += ", ";
      sentence += dropped[i];
    }
    if (dropped.size() > kMaxDroppedPortsNamed) {
      sentence += " and " + std::to_string(dropped.size() - kMaxDroppedPortsNamed) + " more";
    }
    sentence += ')';
  }
  sentence +=
      ". " + std::to_string(disagree) + "/" + std::to_string(sorted.size()) + " clusters disagree.";
  out.push_back({model::kReasonPortConflict, std::move(sentence)});
}

// IP families (spec §3 E8, §13; decision in docs/design.md): the intersection of the families the
// exporting clusters' Services have, in the oldest's order, so that every family of the import
// reaches the backends of every exporting cluster. A record without families (a Service that
// does not say) constrains nothing. An empty intersection falls back to the oldest's families
// (traffic then reaches only the clusters that have them). Any difference is an IPFamilyConflict.
std::vector<std::string> AggregateFamilies(std::span<const ServiceExportRecordSpec* const> sorted,
                                           const std::vector<std::string>& local,
                                           std::vector<Conflict>& out) {
  const ServiceExportRecordSpec* first = nullptr;
  for (const ServiceExportRecordSpec* record : sorted) {
    if (!record->ip_families.empty()) {
      first = record;
      break;
    }
  }
  if (first == nullptr) {
    // No exporting Service says: a single-stack import of this cluster's primary family, as a
    // Service without ipFamilies gets.
    return {local.empty() ? std::string(model::kIPFamilyIPv4) : local.front()};
  }
  std::vector<std::string> oldest = Families(first->ip_families);
  std::vector<std::string> shared = oldest;
  std::size_t disagree = 0;
  for (const ServiceExportRecordSpec* record : sorted) {
    if (record->ip_families.empty()) continue;
    const std::vector<std::string> families = Families(record->ip_families);
    if (!SameSet(families, oldest)) ++disagree;
    std::erase_if(shared, [&](const std::string& family) {
      return std::find(families.begin(), families.end(), family) == families.end();
    });
  }
  if (disagree == 0) return oldest;
  const std::string tail =
      ". " + std::to_string(disagree) + "/" + std::to_string(sorted.size()) + " clusters disagree.";
  if (!shared.empty()) {
    out.push_back({model::kReasonIPFamilyConflict,
                   "Conflicting ipFamilies. Using " + Quoted(JoinFamilies(shared)) +
                       ", the families every exporting cluster has" + tail});
    return shared;
  }
  out.push_back({model::kReasonIPFamilyConflict,
                 "Conflicting ipFamilies. Using " + Quoted(JoinFamilies(oldest)) +
                     " from oldest service export in " + Quoted(first->cluster) +
                     ": no family is shared by every exporting cluster, so traffic reaches only "
                     "the clusters that have it" +
                     tail});
  return oldest;
}

// Whether this import gets MCS EndpointSlices here, and why.
std::pair<bool, std::string> SliceDecision(const ServiceExportRecordSpec& oldest, bool ready,
                                           EndpointSliceSyncPolicy policy) {
  const std::string annotation = std::string(model::kAnnotationEndpointSliceSync);
  if (!ready) {
    return {false,
            "the import is not Ready in this cluster (IPFamilyNotSupported): no family to "
            "write EndpointSlices for"};
  }
  if (oldest.endpoint_slice_sync.has_value()) {
    if (*oldest.endpoint_slice_sync) {
      return {true, "the oldest ServiceExport (in " + Quoted(oldest.cluster) + ") is annotated " +
                        annotation + ": \"true\""};
    }
    return {false, "the oldest ServiceExport (in " + Quoted(oldest.cluster) + ") is annotated " +
                       annotation +
                       ": \"false\"; remove the annotation or set it to \"true\" to "
                       "get EndpointSlices"};
  }
  switch (policy) {
    case EndpointSliceSyncPolicy::kAll:
      return {true, "the agent's --mcs-endpointslice-sync=all syncs every import"};
    case EndpointSliceSyncPolicy::kHeadless:
      if (oldest.type == model::kServiceImportHeadless) {
        return {true, "the agent's --mcs-endpointslice-sync=headless syncs Headless imports"};
      }
      return {false,
              "the agent's --mcs-endpointslice-sync=headless syncs only Headless imports; "
              "annotate the ServiceExport in " +
                  Quoted(oldest.cluster) + " with " + annotation +
                  ": \"true\" to get EndpointSlices for this ClusterSetIP import"};
    case EndpointSliceSyncPolicy::kAnnotated:
      break;
  }
  return {false,
          "the agent's --mcs-endpointslice-sync=annotated syncs only imports whose oldest "
          "ServiceExport is annotated " +
              annotation + ": \"true\"; annotate the ServiceExport in " + Quoted(oldest.cluster)};
}

}  // namespace

Result<EndpointSliceSyncPolicy> ParseEndpointSliceSyncPolicy(std::string_view flag) {
  if (flag == "all") return EndpointSliceSyncPolicy::kAll;
  if (flag == "headless") return EndpointSliceSyncPolicy::kHeadless;
  if (flag == "annotated") return EndpointSliceSyncPolicy::kAnnotated;
  return InvalidError("--mcs-endpointslice-sync: expected all, headless or annotated, got " +
                      Quoted(flag));
}

std::string_view EndpointSliceSyncPolicyName(EndpointSliceSyncPolicy policy) {
  switch (policy) {
    case EndpointSliceSyncPolicy::kAll:
      return "all";
    case EndpointSliceSyncPolicy::kHeadless:
      return "headless";
    case EndpointSliceSyncPolicy::kAnnotated:
      break;
  }
  return "annotated";
}

std::optional<Aggregation> Aggregate(std::span<const model::ServiceExportRecord> records,
                                     const ImportingCluster& here) {
  if (records.empty()) return std::nullopt;
  // Oldest first; ties broken by cluster id (as Cilium does), then by record name so that even a
  // cluster's duplicate records order the same way every time.
  std::vector<const model::ServiceExportRecord*> by_age;
  by_age.reserve(records.size());
  for (const model::ServiceExportRecord& record : records) by_age.push_back(&record);
  std::sort(by_age.begin(), by_age.end(),
            [](const model::ServiceExportRecord* a, const model::ServiceExportRecord* b) {
              return std::tie(a->spec.export_creation_timestamp, a->spec.cluster,
                              a->metadata.name) <
                     std::tie(b->spec.export_creation_timestamp, b->spec.cluster, b->metadata.name);
            });
  std::vector<const ServiceExportRecordSpec*> sorted;
  for (const model::ServiceExportRecord* record : by_age) {
    const bool seen = std::any_of(sorted.begin(), sorted.end(), [&](const auto* s) {
      return s->cluster == record->spec.cluster;
    });
    if (!seen) sorted.push_back(&record->spec);
  }
  const ServiceExportRecordSpec& oldest = *sorted.front();

  Aggregation out;
  out.oldest_cluster = oldest.cluster;
  std::vector<Conflict> conflicts;

  // Ports, then every global property by the oldest export, in the reason catalogue's order.
  std::vector<std::string> dropped;
  out.spec.ports = MergePorts(sorted, dropped);
  CheckPorts(sorted, dropped, conflicts);
  out.spec.type = oldest.type;
  CheckProperty(
      sorted, "type", model::kReasonTypeConflict,
      [](const ServiceExportRecordSpec& r) -> const std::string& { return r.type; },
      [](const std::string& v) { return Quoted(v); }, conflicts);
  out.spec.session_affinity = oldest.session_affinity;
  CheckProperty(
      sorted, "sessionAffinity", model::kReasonSessionAffinityConflict,
      [](const ServiceExportRecordSpec& r) { return AffinityValue(r.session_affinity); },
      [](std::string_view v) { return Quoted(v); }, conflicts);
  out.spec.session_affinity_config = oldest.session_affinity_config;
  CheckProperty(
      sorted, "sessionAffinityConfig", model::kReasonSessionAffinityConfigConflict,
      [](const ServiceExportRecordSpec& r) -> const auto& { return r.session_affinity_config; },
      RenderAffinityConfig, conflicts);
  out.annotations = oldest.exported_annotations;
  CheckProperty(
      sorted, "exportedAnnotations", model::kReasonAnnotationsConflict,
      [](const ServiceExportRecordSpec& r) -> const auto& { return r.exported_annotations; },
      [](const model::StringMap&) { return std::string("those"); }, conflicts);
  out.labels = oldest.exported_labels;
  CheckProperty(
      sorted, "exportedLabels", model::kReasonLabelsConflict,
      [](const ServiceExportRecordSpec& r) -> const auto& { return r.exported_labels; },
      [](const model::StringMap&) { return std::string("those"); }, conflicts);
  out.spec.internal_traffic_policy = oldest.internal_traffic_policy;
  CheckProperty(
      sorted, "internalTrafficPolicy", model::kReasonInternalTrafficPolicyConflict,
      [](const ServiceExportRecordSpec& r) {
        return TrafficPolicyValue(r.internal_traffic_policy);
      },
      [](std::string_view v) { return Quoted(v); }, conflicts);
  out.spec.traffic_distribution = oldest.traffic_distribution;
  CheckProperty(
      sorted, "trafficDistribution", model::kReasonTrafficDistributionConflict,
      [](const ServiceExportRecordSpec& r) -> const std::string& { return r.traffic_distribution; },
      RenderOptional, conflicts);
  const std::vector<std::string> families = AggregateFamilies(sorted, here.ip_families, conflicts);

  // The families usable here, in the import's order.
  std::vector<std::string> usable = families;
  if (!here.ip_families.empty()) {
    std::erase_if(usable, [&](const std::string& family) {
      return std::find(here.ip_families.begin(), here.ip_families.end(), family) ==
             here.ip_families.end();
    });
  }
  out.ready.type = std::string(model::kConditionReady);
  if (usable.empty()) {
    // Keep the service's families in the spec, so that the reason is visible on the import.
    out.spec.ip_families = families;
    out.ready.status = std::string(model::kConditionFalse);
    out.ready.reason = std::string(model::kReasonIPFamilyNotSupported);
    out.ready.message = "The service's IP families (" + JoinFamilies(families) +
                        ") are not supported by cluster " + Quoted(here.cluster_id) + " (" +
                        JoinFamilies(here.ip_families) + ").";
  } else {
    out.spec.ip_families = std::move(usable);
    out.ready.status = std::string(model::kConditionTrue);
    out.ready.reason = std::string(model::kReasonReady);
    out.ready.message = "Imported from " + std::to_string(sorted.size()) +
                        (sorted.size() == 1 ? " cluster." : " clusters.");
  }

  for (const ServiceExportRecordSpec* record : sorted) out.clusters.push_back(record->cluster);
  std::sort(out.clusters.begin(), out.clusters.end());

  model::Condition conflict;
  conflict.type = std::string(model::kConditionConflict);
  if (conflicts.empty()) {
    conflict.status = std::string(model::kConditionFalse);
    conflict.reason = std::string(model::kReasonNoConflicts);
    conflict.message =
        sorted.size() == 1
            ? "No conflicts: " + Quoted(oldest.cluster) + " is the only exporting cluster."
            : "No conflicts among the " + std::to_string(sorted.size()) + " exporting clusters.";
  } else {
    conflict.status = std::string(model::kConditionTrue);
    for (const Conflict& c : conflicts) {
      if (!conflict.reason.empty()) conflict.reason += ',';
      conflict.reason += c.reason;
      if (!conflict.message.empty()) conflict.message += ' ';
      conflict.message += c.sentence;
    }
    CapMessage(conflict.message);
  }
  for (const std::string& cluster : out.clusters) out.conflicts.push_back({cluster, conflict});

  std::tie(out.endpoint_slices, out.endpoint_slices_reason) =
      SliceDecision(oldest, out.ready.status == model::kConditionTrue, here.policy);
  return out;
}

EndpointSliceObjectsDecision DecideEndpointSliceObjects(bool wanted, bool synced,
                                                        model::EndpointSliceObjects current) {
  using model::EndpointSliceObjects;
  if (wanted) {
    // Present only after the first full sync, so a consumer that switches to EndpointSlices never
    // sees a set that is empty only because of write order; once Present it stays Present (zero
    // ready endpoints included: the consumer must not fall back to the VIP because backends are
    // down).
    const bool present = synced || current == EndpointSliceObjects::kPresent;
    return {present ? EndpointSliceObjects::kPresent : EndpointSliceObjects::kAbsent, false};
  }
  // Flip first, delete after: the slices go only once Absent is what the import already says, so
  // a consumer has switched to the IPs before its endpoints disappear.
  return {EndpointSliceObjects::kAbsent, current == EndpointSliceObjects::kAbsent};
}

model::Condition ImportRefusedCondition(std::string_view what, const Status& refusal) {
  const auto about_families = [](std::string_view text) {
    return text.find("spec.ipFamilies") != std::string_view::npos ||
           text.find("spec.ipFamilyPolicy") != std::string_view::npos;
  };
  bool families = refusal.code() == StatusCode::kInvalid &&
                  (about_families(refusal.field()) || about_families(refusal.message()));
  for (const StatusCause& cause : refusal.causes()) {
    if (refusal.code() == StatusCode::kInvalid && about_families(cause.field)) families = true;
  }
  model::Condition ready;
  ready.type = std::string(model::kConditionReady);
  ready.status = std::string(model::kConditionFalse);
  ready.reason = std::string(families ? model::kReasonIPFamilyNotSupported : model::kReasonFailed);
  ready.message = "This cluster's API server refused " + std::string(what) + ": " +
                  refusal.ToString() + ". Retried with backoff.";
  constexpr std::size_t kMaxMessage = 32768;  // metav1.Condition's limit
  if (ready.message.size() > kMaxMessage) ready.message.resize(kMaxMessage);
  return ready;
}

}  // namespace slicewright::mcs

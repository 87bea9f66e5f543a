// `slicewright explain serviceimport`: the consumer check of issue #23 §3 for Gateway and mesh
// authors. Can this ServiceImport be routed through EndpointSlices in this cluster, and if not,
// why and what to do; per source cluster its slices and ready endpoints; conflicts; the
// ClusterSetIP(s) and derived Service. Pure: the caller fetches the objects.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "slicewright/model/discovery.h"
#include "slicewright/model/mcs.h"

#include "controllers/explain/explain.h"

namespace slicewright::controllers::explain {

struct ServiceImportInput {
  model::ServiceImport service_import;
  // EndpointSlices of the import's namespace labelled
  // multicluster.kubernetes.io/service-name=<name>.
  std::vector<model::EndpointSlice> slices;
  // This cluster's ServiceExport of the same name, if it exports the Service too.
  std::optional<model::ServiceExport> service_export;
  // The agents' --mcs-endpointslice-sync (all, headless or annotated), to say why slices are
  // absent.
  std::string endpointslice_sync = "all";
};

// One exporting cluster as this importing cluster sees it.
struct SourceClusterReport {
  std::string cluster;              // "" for slices without the source-cluster label
  bool listed = false;              // in status.clusters: the agent counts it as live and exporting
  std::vector<SliceReport> slices;  // by name
  std::int64_t endpoints = 0;
  std::int64_t ready = 0;
  std::int64_t serving = 0;
};

// A condition as reported ("" status: the condition is not there).
struct ConditionReport {
  std::string status;
  std::string reason;
  std::string message;
};

struct ServiceImportExplanation {
  std::string service_import;  // namespace/name
  std::string type;            // ClusterSetIP, Headless
  std::vector<std::string> ips;
  std::vector<std::string> ip_families;
  std::string derived_service;         // the multicluster.kubernetes.io/derived-service annotation
  std::string endpoint_slice_objects;  // Present, Absent or "" (unset)
  // The answer: a consumer can use this import's EndpointSlices here (Present, and slices exist).
  bool endpointslices_routable = false;
  std::string verdict;       // one sentence: why
  std::string advice;        // what to do instead or next ("" when nothing is needed)
  ConditionReport ready;     // the import's Ready condition
  ConditionReport conflict;  // this cluster's ServiceExport's Conflict condition
  bool exported_here = false;
  std::vector<SourceClusterReport> clusters;  // by cluster id
  std::int64_t endpoints = 0;
  std::int64_t ready_endpoints = 0;
  // The clusterset.local names this import answers to (spec §9) and their records now, built as
  // the agent's resolver builds them (src/dns), from these objects, with the clusters of
  // status.clusters as the live ones. Empty for a headless import without ready endpoints
  // (NXDOMAIN; a note says so).
  struct DnsName {
    std::string name;
    std::vector<std::string> records;  // "A 10.96.0.10", "SRV 0 100 42 <target>"
  };
  std::vector<DnsName> dns;
  std::vector<std::string> notes;
};

ServiceImportExplanation ExplainServiceImport(const ServiceImportInput& input);

// Human-readable text (the default output) and compact JSON (-o json; field names in camelCase).
std::string RenderServiceImportText(const ServiceImportExplanation& explanation);
std::string EncodeServiceImportJson(const ServiceImportExplanation& explanation);

}  // namespace slicewright::controllers::explain

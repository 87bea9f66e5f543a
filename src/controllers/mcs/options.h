// The MCS agent's settings, named after its flags (--cluster-id, --broker-*, --mcs-*).
#pragma once

#include <chrono>
#include <string>

#include "slicewright/model/mcs.h"
#include "slicewright/runtime/controller.h"

namespace slicewright::controllers::mcs {

struct Options {
  // Used when the cluster has neither ClusterProperty id.k8s.io nor cluster.clusterset.k8s.io.
  std::string cluster_id;         // --cluster-id
  std::string broker_kubeconfig;  // --broker-kubeconfig
  std::string broker_context;     // --broker-context
  std::string broker_namespace = std::string(model::kDefaultBrokerNamespace);  // --broker-namespace
  // The broker client's rate limit. Not client-go's 20/30: a member joining a ClusterSet writes
  // three broker objects per export (record, slice, published mark), and at 20/s its 1,000
  // exports took 150 s, every import of its own endpoints waiting on them (fleet_sim,
  // docs/performance.md "A ClusterSet of fleet size").
  double broker_api_qps = 100;             // --broker-api-qps
  int broker_api_burst = 200;              // --broker-api-burst
  std::string endpointslice_sync = "all";  // --mcs-endpointslice-sync all|headless|annotated
  // The IP families this cluster gives Services, primary first ("IPv4", "IPv6", "IPv4,IPv6",
  // "IPv6,IPv4"); "" learns them from the API server (a dry-run probe Service, agent.cc).
  std::string cluster_ip_families;  // --mcs-cluster-ip-families
  int concurrent_syncs = 5;         // --mcs-concurrent-syncs
  // This cluster's Lease in the broker (liveness.h); renewed every third of it.
  std::chrono::milliseconds lease_duration{30'000};  // --mcs-lease-duration
  int max_retries = 15;
  // A key whose write the server refused (a terminal error: the ServiceImport's or
  // ServiceExport's Ready says why), or that failed max_retries times, is synced again after this
  // backoff (30 s, doubled up to 10 min), never dropped: no later event may come for it, and a
  // fixed cluster must heal.
  runtime::SlowRetry slow_retry{};
  // The clusterset.local DNS responder (src/dns): UDP and TCP on this address ("host:port"; ""
  // serves no DNS). In a pod, ":53" behind a Service the cluster's CoreDNS forwards the zone to.
  std::string dns_address = "127.0.0.1:5353";  // --mcs-dns-address
  int dns_ttl = 5;                             // --mcs-dns-ttl, seconds (0-3600)
};

}  // namespace slicewright::controllers::mcs

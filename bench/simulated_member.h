// A simulated member of a ClusterSet (issue #31 §1): writes to the broker exactly what a member's
// MCS agent writes there for its exports and its liveness, with no API server or agent of its own.
// Each write is made by the agent's own pure functions (mcs::ValidateExport, DesiredBrokerSlices,
// PlanSlices, LivenessLease) and sent through our codec, in the agent's order: the record, its
// broker EndpointSlices, the record marked published; the Lease renewed over the version last
// written. tests/controllers/mcs/simulated_member_test.cc checks the objects against a real
// agent's. Export and Publish may run on several threads at once for different exports (each
// SimulatedExport is its caller's); RenewLease on one thread at a time.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "slicewright/base/result.h"
#include "slicewright/client/rest_client.h"
#include "slicewright/client/typed_client.h"
#include "slicewright/codec/coordination.h"
#include "slicewright/mcs/export.h"
#include "slicewright/model/coordination.h"
#include "slicewright/model/mcs.h"
#include "slicewright/model/well_known.h"
#include "slicewright/reconcile/mcs_source.h"
#include "slicewright/reconcile/planner.h"

#include "controllers/mcs/agent.h"
#include "controllers/mcs/kinds.h"
#include "controllers/mcs/liveness.h"

namespace slicewright::bench {

// One exported Service of a simulated member: its own EndpointSlice (what the member's endpoint
// controller would have written; the caller changes it to churn) and what the broker holds of it.
struct SimulatedExport {
  model::ServiceExportRecord record;         // as the broker answered the last write
  std::vector<model::EndpointSlice> slices;  // its broker slices as last written, by name
  model::EndpointSlice own;                  // the member's own slice of the Service
};

// The Service a simulated member exports, as its API server holds it: ClusterIP, IPv4, port 80
// named "http" to 8080.
inline model::Service SimulatedService(const std::string& ns, const std::string& name) {
  model::Service service;
  service.metadata.namespace_ = ns;
  service.metadata.name = name;
  service.spec.selector = model::StringMap{{"app", name}};
  service.spec.ip_families = {std::string(model::kIPFamilyIPv4)};
  service.spec.ip_family_policy = "SingleStack";
  // What an API server defaults (a record carries them, and a real agent reads them defaulted).
  service.spec.type = "ClusterIP";
  service.spec.session_affinity = "None";
  service.spec.internal_traffic_policy = "Cluster";
  model::ServicePort& port = service.spec.ports.emplace_back();
  port.name = "http";
  port.protocol = "TCP";
  port.port = 80;
  port.target_port = model::IntOrString::FromInt(8080);
  return service;
}

// The Service's own EndpointSlice in its member, as the EndpointSlice controller writes it: one
// ready endpoint per address, on `node` in `zone`, port "http" 8080.
inline model::EndpointSlice SimulatedOwnSlice(const std::string& ns, const std::string& name,
                                              const std::vector<std::string>& ips) {
  model::EndpointSlice slice;
  slice.metadata.namespace_ = ns;
  slice.metadata.name = name + "-own";
  slice.metadata.labels[std::string(model::kLabelServiceName)] = name;
  slice.metadata.labels[std::string(model::kLabelManagedBy)] = "endpointslice-controller.k8s.io";
  slice.address_type = std::string(model::kAddressTypeIPv4);
  for (const std::string& ip : ips) {
    model::Endpoint& endpoint = slice.endpoints.emplace_back();
    endpoint.addresses = {ip};
    endpoint.conditions.ready = true;
    endpoint.conditions.serving = true;
    endpoint.conditions.terminating = false;
    endpoint.node_name = model::InlineString("node-a");
    endpoint.zone = "zone-a";
  }
  model::EndpointPort& port = slice.ports.emplace_back();
  port.name = "http";
  port.protocol = "TCP";
  port.port = 8080;
  return slice;
}

class SimulatedMember final {
 public:
  // `broker` outlives this object. `identity` is the Lease's holderIdentity (an agent's is
  // "<host>_<uuid>").
  SimulatedMember(std::string cluster_id, client::RestClient& broker, std::string broker_namespace,
                  std::chrono::seconds lease_duration, std::string identity)
      : cluster_id_(std::move(cluster_id)),
        broker_(broker),
        broker_namespace_(std::move(broker_namespace)),
        lease_duration_(lease_duration),
        identity_(std::move(identity)),
        records_(broker, controllers::mcs::ServiceExportRecordCodec()),
        slices_(broker, client::EndpointSliceCodec()) {}

  const std::string& cluster_id() const { return cluster_id_; }
  // Broker writes made so far (each create, update or delete sent and answered 2xx).
  std::int64_t writes() const { return writes_.load(); }

  // Exports `service` with its own slice `own` (a ServiceExport created at `export_created`), as
  // the agent's SyncExport does: the record, then its broker slices, then the record annotated
  // with how many slices it published. Three writes for a Service of up to 100 endpoints.
  Result<SimulatedExport> Export(const model::Service& service, model::EndpointSlice own,
                                 model::Time export_created) {
    model::ServiceExport service_export;
    service_export.metadata.namespace_ = service.metadata.namespace_;
    service_export.metadata.name = service.metadata.name;
    service_export.metadata.creation_timestamp = export_created;
    service_export.metadata.generation = 1;
    ::slicewright::mcs::ExportValidation validation = ::slicewright::mcs::ValidateExport(
        service_export, &service, cluster_id_, broker_namespace_);
    if (!validation.record.has_value()) {
      return Status(StatusCode::kInvalid, "simulated export " + service.metadata.namespace_ + "/" +
                                              service.metadata.name +
                                              " is not valid: " + validation.valid.message);
    }
    SimulatedExport out;
    out.own = std::move(own);
    SW_ASSIGN_OR_RETURN(out.record, records_.Create(*validation.record));
    ++writes_;
    SW_RETURN_IF_ERROR(Publish(out).status());
    model::ServiceExportRecord marked = out.record;
    marked.metadata.annotations[std::string(controllers::mcs::kAnnotationSlicesPublished)] =
        std::to_string(out.slices.size());
    SW_ASSIGN_OR_RETURN(out.record, records_.Update(marked));
    ++writes_;
    return out;
  }

  // Writes the broker slices `exported.own` now gives (after the caller changed it), as the agent's
  // SyncBrokerSlices does: one plan against the slices last written. Returns the writes made: 1
  // for a one-endpoint change of a Service of up to 100 endpoints.
  Result<std::size_t> Publish(SimulatedExport& exported) {
    const model::EndpointSlice own[] = {exported.own};
    const reconcile::Plan plan =
        reconcile::PlanSlices(reconcile::DesiredBrokerSlices(exported.record, own), exported.slices,
                              reconcile::McsPlanOptions());
    for (const reconcile::SliceAction& action : plan.actions) {
      switch (action.operation) {
        case reconcile::Operation::kCreate: {
          SW_ASSIGN_OR_RETURN(model::EndpointSlice created, slices_.Create(action.slice));
          exported.slices.push_back(std::move(created));
          break;
        }
        case reconcile::Operation::kUpdate: {
          SW_ASSIGN_OR_RETURN(model::EndpointSlice updated, slices_.Update(action.slice));
          for (model::EndpointSlice& slice : exported.slices) {
            if (slice.metadata.name == updated.metadata.name) slice = std::move(updated);
          }
          break;
        }
        case reconcile::Operation::kDelete: {
          SW_RETURN_IF_ERROR(
              slices_.Delete(action.slice.metadata.namespace_, action.slice.metadata.name));
          std::erase_if(exported.slices, [&](const model::EndpointSlice& slice) {
            return slice.metadata.name == action.slice.metadata.name;
          });
          break;
        }
      }
      ++writes_;
    }
    std::sort(exported.slices.begin(), exported.slices.end(),
              [](const auto& a, const auto& b) { return a.metadata.name < b.metadata.name; });
    return plan.actions.size();
  }

  // Creates or renews this member's Lease mcs-<cluster id>, as ClusterLiveness does: an update over
  // the version last written, a create the first time.
  Status RenewLease() {
    const client::ResourceRef resource = client::LeasesResource();
    const model::Time now{std::chrono::duration_cast<std::chrono::nanoseconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count()};
    const model::Lease next = controllers::mcs::LivenessLease(
        lease_, cluster_id_, broker_namespace_, identity_, lease_duration_, now);
    Result<std::string> answer =
        lease_.metadata.resource_version.empty()
            ? broker_.Create(resource, broker_namespace_, codec::EncodeLease(next))
            : broker_.Update(resource, broker_namespace_, next.metadata.name,
                             codec::EncodeLease(next));
    SW_RETURN_IF_ERROR(answer.status());
    SW_ASSIGN_OR_RETURN(lease_, codec::DecodeLease(*answer));
    ++writes_;
    return Status();
  }

 private:
  std::string cluster_id_;
  client::RestClient& broker_;
  std::string broker_namespace_;
  std::chrono::seconds lease_duration_;
  std::string identity_;
  client::TypedClient<model::ServiceExportRecord> records_;
  client::TypedClient<model::EndpointSlice> slices_;
  model::Lease lease_;  // as last written
  std::atomic<std::int64_t> writes_{0};
};

}  // namespace slicewright::bench

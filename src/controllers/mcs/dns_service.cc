#include "controllers/mcs/dns_service.h"

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "slicewright/base/log.h"
#include "slicewright/model/well_known.h"

#include "controllers/mcs/kinds.h"
#include "dns/responder.h"

namespace slicewright::controllers::mcs {
namespace {

// The replica's MCS slices by multicluster.kubernetes.io/service-name ("namespace/name").
constexpr std::string_view kSlicesByImport = "mcs-import";

}  // namespace

Result<std::unique_ptr<DnsService>> DnsService::Create(const Options& options,
                                                       cache::InformerFactory& informers) {
  if (options.dns_address.empty()) return std::unique_ptr<DnsService>();
  if (const Status address = dns::CheckAddress(options.dns_address); !address.ok()) {
    return Status(StatusCode::kInvalid, "--mcs-dns-address: " + address.ToString());
  }
  if (options.dns_ttl < 0 || options.dns_ttl > 3600) {
    return Status(StatusCode::kInvalid, "--mcs-dns-ttl must be between 0 and 3600");
  }
  // Only the slices the agent derives (a small share of the cluster's): the leader's informers
  // of every slice are not shared, so a standby keeps no more than it answers from.
  cache::Informer<cache::CompactEndpointSlice>& slices = informers.EndpointSlices(
      cache::InformerFilter{.namespace_ = {},
                            .label_selector = std::string(model::kLabelManagedBy) + "=" +
                                              std::string(model::kManagedByMcs),
                            .field_selector = {}});
  slices.AddIndex(std::string(kSlicesByImport), cache::LabelValueIndex<cache::CompactEndpointSlice>(
                                                    std::string(model::kLabelMcsServiceName)));
  dns::FeedDeps feed_deps;
  feed_deps.imports = &informers.For(ServiceImportKind());
  feed_deps.slices = &slices;
  feed_deps.slices_by_import = std::string(kSlicesByImport);
  // is_live left null: a source cluster counts while the import's status.clusters lists it, as
  // the leader's agent judged, so every replica answers the same.
  dns::ZoneOptions zone_options;
  zone_options.ttl = static_cast<std::uint32_t>(options.dns_ttl);
  SW_ASSIGN_OR_RETURN(std::unique_ptr<dns::ZoneFeed> feed,
                      dns::ZoneFeed::Create(zone_options, std::move(feed_deps)));

  auto ready = std::make_shared<std::atomic<bool>>(false);
  dns::ResponderOptions responder_options;
  responder_options.zone = zone_options;
  auto responder = std::make_shared<dns::Responder>(feed->zone(), responder_options);
  dns::ServerOptions server_options;
  server_options.address = options.dns_address;
  Result<std::unique_ptr<dns::Server>> server = dns::Server::Create(
      std::move(server_options), [responder, ready](std::span<const std::uint8_t> message, bool tcp,
                                                    std::vector<std::uint8_t>& response) {
        if (!ready->load(std::memory_order_acquire)) {
          response = dns::RespondNotReady(message);
        } else {
          responder->Respond(message, tcp, response);
        }
      });
  if (!server.ok()) {
    return Status(server.status().code(), "--mcs-dns-address: " + server.status().ToString());
  }
  std::unique_ptr<DnsService> service(new DnsService(std::move(feed), std::move(ready)));
  service->server_ = std::move(server).value();
  if (const Status started = service->server_->Start(); !started.ok()) {
    return Status(started.code(), "--mcs-dns-address: " + started.ToString());
  }
  SW_LOG(kInfo,
         "mcs dns: clusterset.local on {} (UDP and TCP), SERVFAIL until the caches have synced",
         service->server_->address());
  return service;
}

DnsService::DnsService(std::unique_ptr<dns::ZoneFeed> feed,
                       std::shared_ptr<std::atomic<bool>> ready)
    : feed_(std::move(feed)), ready_(std::move(ready)) {}

DnsService::~DnsService() { Stop(); }

void DnsService::Start() {
  // The feed's handlers ran for every cached object as it arrived; rebuilding once more after
  // the sync makes the first answer a right one whatever the order of the two caches' events.
  feed_->RebuildAll();
  ready_->store(true, std::memory_order_release);
  SW_LOG(kInfo, "mcs dns: caches synced; answering clusterset.local on {}", server_->address());
}

void DnsService::Stop() {
  ready_->store(false, std::memory_order_release);
  if (server_ != nullptr) server_->Stop();
}

Status DnsService::Ready() const {
  if (ready_->load(std::memory_order_acquire)) return Status();
  return Status(StatusCode::kUnavailable,
                "clusterset.local not built yet: ServiceImport and EndpointSlice caches not "
                "synced");
}

}  // namespace slicewright::controllers::mcs

// The clusterset.local DNS responder (spec §9) as every controller-manager replica runs it, leader
// or not, as CoreDNS does: read-only informers of this cluster (its ServiceImports and MCS
// EndpointSlices), the zone feed and the UDP/TCP server. It answers SERVFAIL until its caches
// synced and the zone is built (Start()); Ready() says which. It writes nothing. Thread-safe.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "slicewright/base/result.h"
#include "slicewright/cache/informer_factory.h"

#include "controllers/mcs/options.h"
#include "dns/feed.h"
#include "dns/server.h"

namespace slicewright::controllers::mcs {

class DnsService final {
 public:
  // Adds its informers to `informers` (this cluster's, used for nothing else; the caller starts
  // them and calls Start() once they synced; the factory must outlive the service), binds
  // --mcs-dns-address and answers SERVFAIL from now on. Null when the address is "" (no DNS);
  // kInvalid or kUnavailable naming --mcs-dns-address when it cannot be bound.
  static Result<std::unique_ptr<DnsService>> Create(const Options& options,
                                                    cache::InformerFactory& informers);
  ~DnsService();  // Stop()s
  DnsService(const DnsService&) = delete;
  DnsService& operator=(const DnsService&) = delete;

  // The caches synced: builds every import's records and answers from the zone from now on.
  void Start();
  // Closes the sockets; nothing is answered after it returns. Idempotent.
  void Stop();

  // OK once Start() built the zone; kUnavailable before (what /readyz/mcs-dns shows).
  Status Ready() const;
  // "127.0.0.1:PORT" as bound.
  std::string address() const { return server_->address(); }
  const dns::Zone& zone() const { return *feed_->zone(); }

 private:
  DnsService(std::unique_ptr<dns::ZoneFeed> feed, std::shared_ptr<std::atomic<bool>> ready);

  const std::unique_ptr<dns::ZoneFeed> feed_;
  // Read by the server's handler on its I/O threads.
  const std::shared_ptr<std::atomic<bool>> ready_;
  std::unique_ptr<dns::Server> server_;
};

}  // namespace slicewright::controllers::mcs

// Keeps a Zone current from the MCS agent's informer caches: every change of a ServiceImport or of
// one of its MCS EndpointSlices rebuilds that import's records (BuildServiceView) on the
// informer's thread, right after the cache changed, so an answer is never older than the cache.
// Which source clusters count is the import's status.clusters (what the leader's agent judged live
// and wrote), so every replica answers alike from the API alone; a caller with its own liveness
// passes is_live and calls RebuildAll when it changes. Thread-safe; rebuilds are serialised, so
// the last one always reads the newest cache state.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "slicewright/cache/compact_slice.h"
#include "slicewright/cache/informer.h"
#include "slicewright/model/mcs.h"

#include "dns/zone.h"

namespace slicewright::dns {

struct FeedDeps {
  cache::Informer<model::ServiceImport>* imports = nullptr;  // required
  // This cluster's EndpointSlices, required, with an index named `slices_by_import` filing each
  // under "namespace/<multicluster.kubernetes.io/service-name>".
  cache::Informer<cache::CompactEndpointSlice>* slices = nullptr;
  std::string slices_by_import;
  // Whether a source cluster's endpoints count (its Lease is current). Null: while the import's
  // status.clusters lists it.
  std::function<bool(std::string_view cluster_id)> is_live;
};

class ZoneFeed final {
 public:
  // Registers the handlers (existing objects are replayed at once). kInvalid without a dep.
  static Result<std::unique_ptr<ZoneFeed>> Create(ZoneOptions options, FeedDeps deps);
  // Handlers that fire later find nobody and do nothing.
  ~ZoneFeed();
  ZoneFeed(const ZoneFeed&) = delete;
  ZoneFeed& operator=(const ZoneFeed&) = delete;

  // Rebuilds "namespace/name" from the caches (removes it when the import is gone).
  void Rebuild(const std::string& key);
  void RebuildAll();

  const std::shared_ptr<Zone>& zone() const { return zone_; }
  const ZoneOptions& options() const { return options_; }

  struct Core;

 private:
  ZoneFeed(ZoneOptions options, std::shared_ptr<Zone> zone, std::shared_ptr<Core> core);

  const ZoneOptions options_;
  const std::shared_ptr<Zone> zone_;
  const std::shared_ptr<Core> core_;
};

}  // namespace slicewright::dns

#include "dns/feed.h"

#include <algorithm>
#include <set>
#include <utility>
#include <vector>

#include "slicewright/base/mutex.h"
#include "slicewright/model/well_known.h"

namespace slicewright::dns {

// What the informers' handlers reach: alive until the feed is destroyed (the informers, and so
// their handlers, may outlive it).
struct ZoneFeed::Core {
  Mutex mu;
  bool alive SW_GUARDED_BY(mu) = true;
  ZoneOptions options;
  FeedDeps deps;
  std::shared_ptr<Zone> zone;

  void Rebuild(const std::string& key) SW_REQUIRES(mu) {
    const std::size_t slash = key.find('/');
    if (slash == std::string::npos) return;
    const std::string_view ns = std::string_view(key).substr(0, slash);
    const std::string_view name = std::string_view(key).substr(slash + 1);
    const auto service_import = deps.imports->store().Get(ns, name);
    if (service_import == nullptr) {
      zone->Remove(ns, name);
      return;
    }
    std::vector<model::EndpointSlice> slices;
    if (service_import->spec.type == model::kServiceImportHeadless) {
      deps.slices->store().ForEachByIndex(deps.slices_by_import, key, [&](const auto& slice) {
        const auto managed = slice->metadata.labels.find(model::kLabelManagedBy);
        if (managed != slice->metadata.labels.end() && managed->second == model::kManagedByMcs) {
          slices.push_back(slice->ToSlice());
        }
      });
    }
    if (deps.is_live) {
      zone->Put(std::make_shared<const ServiceView>(
          BuildServiceView(*service_import, slices, deps.is_live, options)));
      return;
    }
    // The clusters the leader's agent judged live: the zone reads lower case, ids are lower case.
    const auto listed = [&](std::string_view cluster) {
      return std::ranges::find(service_import->status.clusters, cluster) !=
             service_import->status.clusters.end();
    };
    zone->Put(std::make_shared<const ServiceView>(
        BuildServiceView(*service_import, slices, listed, options)));
  }
};

Result<std::unique_ptr<ZoneFeed>> ZoneFeed::Create(ZoneOptions options, FeedDeps deps) {
  if (deps.imports == nullptr || deps.slices == nullptr || deps.slices_by_import.empty()) {
    return Status(StatusCode::kInvalid, "dns feed: the import and slice informers are required");
  }
  auto core = std::make_shared<Core>();
  core->options = options;
  core->deps = std::move(deps);
  core->zone = std::make_shared<Zone>();
  std::unique_ptr<ZoneFeed> feed(new ZoneFeed(options, core->zone, core));

  std::weak_ptr<Core> weak = core;
  const auto rebuild = [weak](const std::string& key) {
    const std::shared_ptr<Core> target = weak.lock();
    if (target == nullptr) return;
    MutexLock lock(target->mu);
    if (target->alive) target->Rebuild(key);
  };
  cache::EventHandler<model::ServiceImport> imports;
  imports.on_add = [rebuild](const auto& i, bool) { rebuild(cache::KeyOf(*i)); };
  imports.on_update = [rebuild](const auto&, const auto& i) { rebuild(cache::KeyOf(*i)); };
  imports.on_delete = [rebuild](const auto& i, bool) { rebuild(cache::KeyOf(*i)); };
  core->deps.imports->AddEventHandler(std::move(imports));

  // The import an MCS slice belongs to ("namespace/name"), "" for any other slice.
  const auto import_of = [](const model::ObjectMeta& meta) -> std::string {
    const auto service = meta.labels.find(model::kLabelMcsServiceName);
    const auto managed = meta.labels.find(model::kLabelManagedBy);
    if (service == meta.labels.end() || managed == meta.labels.end() ||
        managed->second != model::kManagedByMcs) {
      return {};
    }
    return meta.namespace_ + "/" + service->second;
  };
  const auto slice_changed = [rebuild, import_of](const model::ObjectMeta& meta) {
    if (const std::string key = import_of(meta); !key.empty()) rebuild(key);
  };
  cache::EventHandler<cache::CompactEndpointSlice> slices;
  slices.on_add = [slice_changed](const auto& s, bool) { slice_changed(s->metadata); };
  slices.on_update = [slice_changed, import_of](const auto& old_slice, const auto& s) {
    slice_changed(s->metadata);
    // A slice relabelled away from an import (the agent never does it) changes that one too.
    if (import_of(old_slice->metadata) != import_of(s->metadata)) {
      slice_changed(old_slice->metadata);
    }
  };
  slices.on_delete = [slice_changed](const auto& s, bool) { slice_changed(s->metadata); };
  core->deps.slices->AddEventHandler(std::move(slices));
  return feed;
}

ZoneFeed::ZoneFeed(ZoneOptions options, std::shared_ptr<Zone> zone, std::shared_ptr<Core> core)
    : options_(options), zone_(std::move(zone)), core_(std::move(core)) {}

ZoneFeed::~ZoneFeed() {
  MutexLock lock(core_->mu);
  core_->alive = false;
}

void ZoneFeed::Rebuild(const std::string& key) {
  MutexLock lock(core_->mu);
  if (core_->alive) core_->Rebuild(key);
}

void ZoneFeed::RebuildAll() {
  MutexLock lock(core_->mu);
  if (!core_->alive) return;
  for (const auto& service_import : core_->deps.imports->store().List()) {
    core_->Rebuild(cache::KeyOf(*service_import));
  }
}

}  // namespace slicewright::dns

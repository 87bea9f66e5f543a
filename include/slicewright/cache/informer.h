// Informer<T>: a shared, indexed cache of one resource kept current by a Reflector, with event
// handlers, as client-go's SharedIndexInformer. Handlers run on the informer's thread in the order
// the server's changes arrived; they should only enqueue keys. A delete the informer missed (seen
// at a relist) reaches on_delete with final_state_unknown set and the last state it knew, as
// client-go's DeletedFinalStateUnknown tombstone. Thread-safe.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "slicewright/base/clock.h"
#include "slicewright/base/log.h"
#include "slicewright/base/mutex.h"
#include "slicewright/base/result.h"
#include "slicewright/base/thread_name.h"
#include "slicewright/cache/compact_slice.h"
#include "slicewright/cache/reflector.h"
#include "slicewright/cache/store.h"
#include "slicewright/client/rest_client.h"
#include "slicewright/codec/apps.h"
#include "slicewright/codec/json.h"
#include "slicewright/model/apps.h"
#include "slicewright/model/compact_pod.h"
#include "slicewright/model/core.h"
#include "slicewright/model/discovery.h"

namespace slicewright::cache {

// One decoded watch event as the informer needs it.
template <typename T>
struct DecodedEvent {
  codec::WatchEventType type = codec::WatchEventType::kAdded;
  T object;
  Status error;                     // kError
  bool initial_events_end = false;  // a bookmark annotated k8s.io/initial-events-end
  std::string resource_version;     // the object's or bookmark's
};

// What an informer needs to know about the type it caches: where it lives and how to decode it.
template <typename T>
struct Kind {
  client::ResourceRef resource;
  std::function<Result<codec::ListPage<T>>(std::string_view json)> decode_list;
  std::function<Result<DecodedEvent<T>>(std::string_view line)> decode_event;
};

// The kind of a model type T whose codec decodes lists and watch events (any kind, custom resources
// included): e.g. MakeKind(resource, codec::DecodeServiceList, codec::DecodeServiceWatchEvent).
template <typename T>
Kind<T> MakeKind(client::ResourceRef resource,
                 Result<codec::ListPage<T>> (*decode_list)(std::string_view),
                 Result<codec::WatchEvent<T>> (*decode_event)(std::string_view)) {
  return Kind<T>{std::move(resource), decode_list,
                 [decode_event](std::string_view line) -> Result<DecodedEvent<T>> {
                   Result<codec::WatchEvent<T>> decoded = decode_event(line);
                   if (!decoded.ok()) return decoded.status();
                   DecodedEvent<T> out;
                   out.type = decoded->type;
                   out.error = std::move(decoded->error);
                   const model::ObjectMeta& meta = decoded->object.metadata;
                   out.resource_version = meta.resource_version;
                   if (out.type == codec::WatchEventType::kBookmark) {
                     auto it = meta.annotations.find("k8s.io/initial-events-end");
                     out.initial_events_end = it != meta.annotations.end() && it->second == "true";
                   }
                   out.object = std::move(decoded->object);
                   return out;
                 }};
}

Kind<model::Service> ServiceKind();
Kind<model::Pod> PodKind();
Kind<model::Node> NodeKind();
Kind<model::Namespace> NamespaceKind();
Kind<model::Endpoints> EndpointsKind();
Kind<model::EndpointSlice> EndpointSliceKind();
// apps/v1 "deployments", "replicasets" or "statefulsets" as model::Workload.
Kind<model::Workload> WorkloadKind(std::string resource);
// Pods as CompactPod, interned into `interners` (shared by the informer and its readers).
Kind<model::CompactPod> CompactPodKind(const std::shared_ptr<model::PodInterners>& interners,
                                       std::vector<std::string> kept_annotations = {});
// EndpointSlices as CompactEndpointSlice, interned into `interners`.
Kind<CompactEndpointSlice> CompactEndpointSliceKind(
    const std::shared_ptr<SliceInterners>& interners);

template <typename T>
struct EventHandler {
  using Ptr = std::shared_ptr<const T>;
  // `in_initial_list`: part of the first sync (or of the replay to a handler added later).
  std::function<void(const Ptr& object, bool in_initial_list)> on_add;
  std::function<void(const Ptr& old_object, const Ptr& new_object)> on_update;
  std::function<void(const Ptr& object, bool final_state_unknown)> on_delete;
};

template <typename T>
class Informer final : private ReflectorTarget {
 public:
  using Ptr = std::shared_ptr<const T>;

  Informer(client::RestClient& client, Kind<T> kind, ReflectorOptions options)
      : kind_(std::move(kind)),
        options_(std::move(options)),
        clock_(options_.clock != nullptr ? *options_.clock : SystemClock::Get()),
        reflector_(client, kind_.resource, *this, ReflectorOptionsWithName(options_, kind_)) {}
  Informer(const Informer&) = delete;
  Informer& operator=(const Informer&) = delete;
  ~Informer() override { Stop(); }

  // Before or after Start(): the objects already cached are indexed too.
  void AddIndex(std::string name, typename Store<T>::IndexFunc index) {
    store_.AddIndex(std::move(name), std::move(index));
  }

  // Registers `handler`. Objects already cached are replayed to it as adds (in_initial_list true)
  // before it sees any later change, on the calling thread.
  void AddEventHandler(EventHandler<T> handler) {
    MutexLock lock(dispatch_mu_);
    if (handler.on_add) {
      for (const Ptr& object : store_.List()) handler.on_add(object, true);
    }
    handlers_.push_back(std::move(handler));
  }

  void Start() {
    MutexLock lock(run_mu_);
    if (thread_.joinable() || stopped_.load(std::memory_order_acquire)) return;
    // "i-pods", "c2-i-endpointsl": the resource's plural, cut to what fits.
    thread_ = std::thread([this, name = ThreadName("i-" + kind_.resource.resource)] {
      name.Apply();
      reflector_.Run();
    });
  }

  // Stops the reflector and waits for its thread; handlers are not called after it returns.
  void Stop() {
    {
      MutexLock sync_lock(sync_mu_);
      stopped_.store(true, std::memory_order_release);
      sync_cv_.NotifyAll();
    }
    MutexLock lock(run_mu_);
    reflector_.Stop();
    if (thread_.joinable()) thread_.join();
  }

  // True once the first LIST (or WatchList) is in the store and its handlers have run.
  bool HasSynced() const { return synced_.load(std::memory_order_acquire); }

  // Waits for HasSynced() until `timeout` on the informer's clock; false on timeout or Stop().
  bool WaitForSync(Clock::Duration timeout) {
    const Clock::TimePoint deadline = clock_.Now() + timeout;
    MutexLock lock(sync_mu_);
    while (!HasSynced() && !stopped_.load(std::memory_order_acquire) && clock_.Now() < deadline) {
      clock_.WaitUntil(sync_cv_, sync_mu_, deadline);
    }
    return HasSynced();
  }

  const Store<T>& store() const { return store_; }
  ReflectorStats Stats() const { return reflector_.Stats(); }
  // List items and watch events that could not be decoded (reported in the log, left out).
  std::int64_t DecodeErrors() const { return decode_errors_.load(std::memory_order_relaxed); }

 private:
  static ReflectorOptions ReflectorOptionsWithName(ReflectorOptions options, const Kind<T>& kind) {
    if (options.name.empty()) options.name = kind.resource.resource;
    return options;
  }

  Result<ListPageMeta> StageListPage(std::string_view json) override {
    Result<codec::ListPage<T>> page = kind_.decode_list(json);
    if (!page.ok()) return page.status();
    for (const Status& error : page->item_errors) {
      decode_errors_.fetch_add(1, std::memory_order_relaxed);
      SW_LOG(kError, "informer {}: left out of the cache: {}",
             options_.name.empty() ? kind_.resource.resource : options_.name, error.ToString());
    }
    staged_.reserve(staged_.size() + page->items.size());
    for (T& item : page->items) staged_.push_back(std::make_shared<const T>(std::move(item)));
    return ListPageMeta{std::move(page->resource_version), std::move(page->continue_token)};
  }

  void CommitStaged(std::string_view /*resource_version*/) override {
    typename Store<T>::ReplaceResult changes = store_.Replace(std::move(staged_));
    staged_.clear();
    const bool initial = !synced_.load(std::memory_order_acquire);
    {
      MutexLock lock(dispatch_mu_);
      for (const Ptr& object : changes.deleted) {
        for (const EventHandler<T>& handler : handlers_) {
          if (handler.on_delete) handler.on_delete(object, true);
        }
      }
      for (const Ptr& object : changes.added) {
        for (const EventHandler<T>& handler : handlers_) {
          if (handler.on_add) handler.on_add(object, initial);
        }
      }
      for (const auto& [old_object, new_object] : changes.updated) {
        for (const EventHandler<T>& handler : handlers_) {
          if (handler.on_update) handler.on_update(old_object, new_object);
        }
      }
    }
    MutexLock lock(sync_mu_);
    synced_.store(true, std::memory_order_release);
    sync_cv_.NotifyAll();
  }

  void DiscardStaged() override { staged_.clear(); }

  Result<WatchLineOutcome> ApplyWatchLine(std::string_view line, bool staging) override {
    Result<DecodedEvent<T>> decoded = kind_.decode_event(line);
    if (!decoded.ok()) {
      decode_errors_.fetch_add(1, std::memory_order_relaxed);
      return decoded.status();
    }
    DecodedEvent<T>& event = *decoded;
    WatchLineOutcome outcome;
    outcome.resource_version = event.resource_version;
    switch (event.type) {
      case codec::WatchEventType::kError:
        outcome.kind = WatchLineOutcome::Kind::kError;
        outcome.error = std::move(event.error);
        return outcome;
      case codec::WatchEventType::kBookmark:
        outcome.kind = WatchLineOutcome::Kind::kBookmark;
        outcome.initial_events_end = event.initial_events_end;
        return outcome;
      case codec::WatchEventType::kAdded:
      case codec::WatchEventType::kModified:
        if (staging) {
          staged_.push_back(std::make_shared<const T>(std::move(event.object)));
        } else {
          Upserted(std::make_shared<const T>(std::move(event.object)));
        }
        return outcome;
      case codec::WatchEventType::kDeleted:
        if (staging) {
          // Initial events are only ADDED; a delete among them undoes a staged add.
          std::erase_if(staged_, [&](const Ptr& staged) {
            return ObjectAccess<T>::Namespace(*staged) ==
                       ObjectAccess<T>::Namespace(event.object) &&
                   ObjectAccess<T>::Name(*staged) == ObjectAccess<T>::Name(event.object);
          });
        } else {
          Deleted(std::make_shared<const T>(std::move(event.object)));
        }
        return outcome;
    }
    return outcome;
  }

  void Upserted(Ptr object) {
    const Ptr old = store_.Upsert(object);
    if (old != nullptr &&
        ObjectAccess<T>::ResourceVersion(*old) == ObjectAccess<T>::ResourceVersion(*object)) {
      return;  // the same state again (a resumed watch may repeat its first event)
    }
    MutexLock lock(dispatch_mu_);
    for (const EventHandler<T>& handler : handlers_) {
      if (old == nullptr) {
        if (handler.on_add) handler.on_add(object, false);
      } else if (handler.on_update) {
        handler.on_update(old, object);
      }
    }
  }

  void Deleted(Ptr object) {
    store_.Remove(ObjectAccess<T>::Namespace(*object), ObjectAccess<T>::Name(*object));
    MutexLock lock(dispatch_mu_);
    for (const EventHandler<T>& handler : handlers_) {
      if (handler.on_delete) handler.on_delete(object, false);
    }
  }

  const Kind<T> kind_;
  const ReflectorOptions options_;
  Clock& clock_;
  Store<T> store_;
  Reflector reflector_;

  Mutex dispatch_mu_;  // serialises handler calls with AddEventHandler's replay
  std::vector<EventHandler<T>> handlers_ SW_GUARDED_BY(dispatch_mu_);
  std::vector<Ptr> staged_;  // the reflector's thread only
  std::atomic<bool> synced_{false};
  std::atomic<std::int64_t> decode_errors_{0};
  // Orders synced_ and stopped_ (atomics, read without it too) with WaitForSync()'s wait.
  Mutex sync_mu_;
  CondVar sync_cv_;
  std::atomic<bool> stopped_{false};
  Mutex run_mu_;
  std::thread thread_ SW_GUARDED_BY(run_mu_);
};

extern template class Informer<model::Service>;
extern template class Informer<model::Pod>;
extern template class Informer<model::Node>;
extern template class Informer<model::Namespace>;
extern template class Informer<model::Endpoints>;
extern template class Informer<model::EndpointSlice>;
extern template class Informer<model::CompactPod>;
extern template class Informer<CompactEndpointSlice>;

}  // namespace slicewright::cache

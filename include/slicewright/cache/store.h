// Store<T>: an informer's cache of one resource, as client-go's thread-safe indexer: objects by
// namespace and name, held as shared immutable snapshots (readers never copy an object and never
// see one change), with indexes from a value (a label's value, a node name) to the objects
// carrying it. Only the informer writes; any thread reads. Thread-safe.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "slicewright/base/check.h"
#include "slicewright/base/mutex.h"
#include "slicewright/model/compact_pod.h"
#include "slicewright/model/meta.h"

namespace slicewright::cache {

// How the cache reads an object's identity. Model types read their ObjectMeta; other cached types
// (model::CompactPod) specialise it.
template <typename T>
struct ObjectAccess {
  static std::string_view Name(const T& object) { return object.metadata.name; }
  static const std::string& Namespace(const T& object) { return object.metadata.namespace_; }
  static std::string ResourceVersion(const T& object) { return object.metadata.resource_version; }
  static const model::StringMap& Labels(const T& object) { return object.metadata.labels; }
};

template <>
struct ObjectAccess<model::CompactPod> {
  static std::string_view Name(const model::CompactPod& pod) { return pod.name(); }
  static const std::string& Namespace(const model::CompactPod& pod) { return pod.namespace_(); }
  static std::string ResourceVersion(const model::CompactPod& pod) {
    return pod.resource_version();
  }
  static const model::StringMap& Labels(const model::CompactPod& pod) { return pod.labels(); }
};

// "namespace/name", or "name" for a cluster-scoped object: the work queues' key.
template <typename T>
std::string KeyOf(const T& object) {
  return model::NamespacedName(ObjectAccess<T>::Namespace(object), ObjectAccess<T>::Name(object));
}

template <typename T>
class Store final {
 public:
  using Ptr = std::shared_ptr<const T>;
  // The values an object is filed under in one index (several, or none).
  using IndexFunc = std::function<std::vector<std::string>(const T&)>;

  // What Replace() changed, for the informer's handlers.
  struct ReplaceResult {
    std::vector<Ptr> added;
    std::vector<std::pair<Ptr, Ptr>> updated;  // (old, new)
    std::vector<Ptr> deleted;                  // the last state known
  };

  Store() = default;
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Adds an index, over the objects already stored too (as client-go's AddIndexers on a started
  // informer): a controller built after its shared informer started, e.g. the MCS agent, which
  // the manager builds after the local controllers run, indexes a filled cache. A name already
  // added keeps its first function.
  void AddIndex(std::string name, IndexFunc index) {
    WriterMutexLock lock(mu_);
    auto [it, added] = indexes_.emplace(std::move(name), Index{std::move(index), {}});
    if (!added) return;
    Index& fresh = it->second;
    for (const auto& [ns, bucket] : buckets_) {
      for (const Ptr& object : bucket) {
        for (std::string& value : fresh.values_of(*object)) {
          fresh.entries[std::move(value)].insert(object);
        }
      }
    }
  }

  Ptr Get(std::string_view namespace_, std::string_view name) const {
    ReaderMutexLock lock(mu_);
    const Bucket* bucket = FindBucket(namespace_);
    if (bucket == nullptr) return nullptr;
    auto it = bucket->find(name);
    return it == bucket->end() ? nullptr : *it;
  }

  // By "namespace/name" (or "name").
  Ptr GetByKey(std::string_view key) const {
    const std::size_t slash = key.find('/');
    if (slash == std::string_view::npos) return Get({}, key);
    return Get(key.substr(0, slash), key.substr(slash + 1));
  }

  std::vector<Ptr> List() const {
    ReaderMutexLock lock(mu_);
    std::vector<Ptr> out;
    out.reserve(size_);
    for (const auto& [ns, bucket] : buckets_) out.insert(out.end(), bucket.begin(), bucket.end());
    return out;
  }

  std::vector<Ptr> ListNamespace(std::string_view namespace_) const {
    ReaderMutexLock lock(mu_);
    const Bucket* bucket = FindBucket(namespace_);
    if (bucket == nullptr) return {};
    return std::vector<Ptr>(bucket->begin(), bucket->end());
  }

  // The objects of `namespace_` for which `match(object)` is true.
  template <typename Match>
  std::vector<Ptr> ListNamespace(std::string_view namespace_, Match&& match) const {
    ReaderMutexLock lock(mu_);
    std::vector<Ptr> out;
    if (const Bucket* bucket = FindBucket(namespace_)) {
      for (const Ptr& object : *bucket) {
        if (match(*object)) out.push_back(object);
      }
    }
    return out;
  }

  // Calls visit(const Ptr&) for each object filed under `value` in index `index`, under the read
  // lock, for a caller that copies only some of them: a Ptr copy is an atomic increment on the
  // object's control block, a cache miss of its own. `visit` must not call into the store.
  template <typename Visit>
  void ForEachByIndex(std::string_view index, std::string_view value, Visit&& visit) const {
    ReaderMutexLock lock(mu_);
    auto it = indexes_.find(index);
    if (it == indexes_.end()) return;
    auto entry = it->second.entries.find(value);
    if (entry == it->second.entries.end()) return;
    for (const Ptr& object : entry->second) visit(object);
  }

  // The objects filed under `value` in index `index`; empty for an unknown index.
  std::vector<Ptr> ByIndex(std::string_view index, std::string_view value) const {
    std::vector<Ptr> out;
    ForEachByIndex(index, value, [&out](const Ptr& object) { out.push_back(object); });
    return out;
  }

  std::size_t size() const {
    ReaderMutexLock lock(mu_);
    return size_;
  }

  // Adds or replaces the object with `object`'s namespace and name; returns the one replaced.
  Ptr Upsert(Ptr object) {
    WriterMutexLock lock(mu_);
    return UpsertLocked(std::move(object));
  }

  // Removes the object; returns it (nullptr if absent).
  Ptr Remove(std::string_view namespace_, std::string_view name) {
    WriterMutexLock lock(mu_);
    return RemoveLocked(namespace_, name);
  }

  // Makes the store hold exactly `objects` (a relist), reporting the difference. An object whose
  // resourceVersion did not change is neither updated nor reported.
  ReplaceResult Replace(std::vector<Ptr> objects) {
    WriterMutexLock lock(mu_);
    ReplaceResult result;
    std::unordered_map<std::string_view, std::unordered_set<std::string_view>> listed;
    for (const Ptr& object : objects) {
      listed[ObjectAccess<T>::Namespace(*object)].insert(ObjectAccess<T>::Name(*object));
    }
    std::vector<std::pair<std::string, std::string>> gone;
    for (const auto& [ns, bucket] : buckets_) {
      auto names = listed.find(ns);
      for (const Ptr& object : bucket) {
        const std::string_view name = ObjectAccess<T>::Name(*object);
        if (names == listed.end() || !names->second.contains(name)) gone.emplace_back(ns, name);
      }
    }
    for (const auto& [ns, name] : gone) result.deleted.push_back(RemoveLocked(ns, name));
    for (Ptr& object : objects) {
      const Ptr old =
          FindLocked(ObjectAccess<T>::Namespace(*object), ObjectAccess<T>::Name(*object));
      if (old != nullptr &&
          ObjectAccess<T>::ResourceVersion(*old) == ObjectAccess<T>::ResourceVersion(*object)) {
        continue;
      }
      Ptr added = object;
      UpsertLocked(std::move(object));
      if (old == nullptr) {
        result.added.push_back(std::move(added));
      } else {
        result.updated.emplace_back(old, std::move(added));
      }
    }
    return result;
  }

 private:
  struct NameHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view name) const {
      return std::hash<std::string_view>{}(name);
    }
    std::size_t operator()(const Ptr& object) const {
      return std::hash<std::string_view>{}(ObjectAccess<T>::Name(*object));
    }
  };
  struct NameEqual {
    using is_transparent = void;
    static std::string_view NameOf(std::string_view name) { return name; }
    static std::string_view NameOf(const Ptr& object) { return ObjectAccess<T>::Name(*object); }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return NameOf(a) == NameOf(b);
    }
  };
  // The objects of one namespace, keyed by their own name (no key string is stored).
  using Bucket = std::unordered_set<Ptr, NameHash, NameEqual>;

  struct StringHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view text) const {
      return std::hash<std::string_view>{}(text);
    }
  };
  using PtrSet = std::unordered_set<Ptr>;
  struct Index {
    IndexFunc values_of;
    std::unordered_map<std::string, PtrSet, StringHash, std::equal_to<>> entries;
  };

  const Bucket* FindBucket(std::string_view namespace_) const SW_REQUIRES_SHARED(mu_) {
    auto it = buckets_.find(namespace_);
    return it == buckets_.end() ? nullptr : &it->second;
  }

  Ptr FindLocked(std::string_view namespace_, std::string_view name) const SW_REQUIRES_SHARED(mu_) {
    const Bucket* bucket = FindBucket(namespace_);
    if (bucket == nullptr) return nullptr;
    auto it = bucket->find(name);
    return it == bucket->end() ? nullptr : *it;
  }

  Ptr UpsertLocked(Ptr object) SW_REQUIRES(mu_) {
    const std::string& ns = ObjectAccess<T>::Namespace(*object);
    auto bucket_it = buckets_.find(std::string_view(ns));
    if (bucket_it == buckets_.end()) bucket_it = buckets_.emplace(ns, Bucket()).first;
    Bucket& bucket = bucket_it->second;
    Ptr old;
    auto it = bucket.find(std::string_view(ObjectAccess<T>::Name(*object)));
    if (it != bucket.end()) {
      // Reuses the node: no allocation for an update.
      auto node = bucket.extract(it);
      old = std::move(node.value());
      node.value() = object;
      bucket.insert(std::move(node));
      Unindex(old);
    } else {
      bucket.insert(object);
      ++size_;
    }
    IndexObject(object);
    return old;
  }

  Ptr RemoveLocked(std::string_view namespace_, std::string_view name) SW_REQUIRES(mu_) {
    auto bucket_it = buckets_.find(namespace_);
    if (bucket_it == buckets_.end()) return nullptr;
    Bucket& bucket = bucket_it->second;
    auto it = bucket.find(name);
    if (it == bucket.end()) return nullptr;
    Ptr old = *it;
    bucket.erase(it);
    --size_;
    if (bucket.empty()) buckets_.erase(bucket_it);
    Unindex(old);
    return old;
  }

  void IndexObject(const Ptr& object) SW_REQUIRES(mu_) {
    for (auto& [name, index] : indexes_) {
      for (std::string& value : index.values_of(*object)) {
        index.entries[std::move(value)].insert(object);
      }
    }
  }

  void Unindex(const Ptr& object) SW_REQUIRES(mu_) {
    for (auto& [name, index] : indexes_) {
      for (const std::string& value : index.values_of(*object)) {
        auto entry = index.entries.find(value);
        if (entry == index.entries.end()) continue;
        entry->second.erase(object);
        if (entry->second.empty()) index.entries.erase(entry);
      }
    }
  }

  mutable SharedMutex mu_;
  std::unordered_map<std::string, Bucket, StringHash, std::equal_to<>> buckets_ SW_GUARDED_BY(mu_);
  std::unordered_map<std::string, Index, StringHash, std::equal_to<>> indexes_ SW_GUARDED_BY(mu_);
  std::size_t size_ SW_GUARDED_BY(mu_) = 0;
};

}  // namespace slicewright::cache

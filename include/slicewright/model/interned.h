// Interning for the informer caches: an Interned<T> is an 8-byte handle to an immutable value that
// every holder of an equal value shares (a namespace, a node name, a ReplicaSet's label set, a pod
// template's ports), so a cache of 150k pods keeps each distinct value once. Thread-safe.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <unordered_set>
#include <utility>

#include "slicewright/base/mutex.h"

namespace slicewright::model {

template <typename T, typename Hash, typename Equal>
class Interner;

namespace internal {

// One interned value and its reference count (the pool's own reference included).
template <typename T>
struct InternNode {
  explicit InternNode(T v) : value(std::move(v)) {}
  std::atomic<std::uint32_t> references{1};
  const T value;
};

}  // namespace internal

// A shared, immutable value. An empty handle reads as a default-constructed T, so an absent
// node name and an empty one look alike, as they do in the API. Equality compares values: handles
// from one Interner are equal exactly when they point at the same node. Handles may outlive their
// Interner.
template <typename T>
class Interned final {
 public:
  Interned() = default;
  Interned(const Interned& other) noexcept : node_(other.node_) { Ref(); }
  Interned(Interned&& other) noexcept : node_(std::exchange(other.node_, nullptr)) {}
  Interned& operator=(Interned other) noexcept {
    std::swap(node_, other.node_);
    return *this;
  }
  ~Interned() { Unref(); }

  const T& get() const { return node_ != nullptr ? node_->value : Empty(); }
  const T& operator*() const { return get(); }
  const T* operator->() const { return &get(); }
  bool empty() const { return node_ == nullptr; }

  friend bool operator==(const Interned& a, const Interned& b) {
    return a.node_ == b.node_ || a.get() == b.get();
  }

 private:
  template <typename, typename, typename>
  friend class Interner;
  using Node = internal::InternNode<T>;

  // Takes a new reference on `node`.
  explicit Interned(Node* node) : node_(node) { Ref(); }

  static const T& Empty() {
    static const T empty{};
    return empty;
  }
  void Ref() const {
    if (node_ != nullptr) node_->references.fetch_add(1, std::memory_order_relaxed);
  }
  void Unref() {
    // Reaches zero only after the pool gave its reference up (the pool was destroyed).
    if (node_ != nullptr && node_->references.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      delete node_;
    }
  }

  Node* node_ = nullptr;
};

// The pool of one kind of value. Values nobody holds any more are freed in sweeps that run when
// the pool has doubled since the last sweep, so a pool costs amortised O(1) per Intern() and never
// holds more than about twice the live values.
template <typename T, typename Hash = std::hash<T>, typename Equal = std::equal_to<T>>
class Interner final {
 public:
  Interner() = default;
  Interner(const Interner&) = delete;
  Interner& operator=(const Interner&) = delete;
  ~Interner() {
    for (Node* node : nodes_) Release(node);
  }

  // The shared handle for `value`. A default-constructed value gives an empty handle (no node).
  template <typename U>
  Interned<T> Intern(U&& value) {
    if (value == Empty()) return Interned<T>();
    MutexLock lock(mu_);
    auto it = nodes_.find(value);
    if (it != nodes_.end()) return Interned<T>(*it);
    if (nodes_.size() >= sweep_at_) SweepLocked();
    Node* node = new Node(T(std::forward<U>(value)));
    nodes_.insert(node);
    return Interned<T>(node);
  }

  // Distinct values in the pool, including ones not yet swept.
  std::size_t size() const {
    MutexLock lock(mu_);
    return nodes_.size();
  }

  // Frees every value no handle holds any more.
  void Sweep() {
    MutexLock lock(mu_);
    SweepLocked();
  }

 private:
  using Node = internal::InternNode<T>;
  static constexpr std::size_t kMinSweep = 1024;

  void SweepLocked() SW_REQUIRES(mu_) {
    for (auto it = nodes_.begin(); it != nodes_.end();) {
      // Only the pool holds it. Nobody can take a new reference concurrently: new handles come
      // from existing ones (count >= 2) or from Intern(), which holds mu_.
      if ((*it)->references.load(std::memory_order_acquire) == 1) {
        Release(*it);
        it = nodes_.erase(it);
      } else {
        ++it;
      }
    }
    sweep_at_ = std::max<std::size_t>(kMinSweep, 2 * nodes_.size());
  }

  struct NodeHash {
    using is_transparent = void;
    std::size_t operator()(const Node* node) const { return Hash{}(node->value); }
    std::size_t operator()(const T& value) const { return Hash{}(value); }
  };
  struct NodeEqual {
    using is_transparent = void;
    bool operator()(const Node* a, const Node* b) const { return Equal{}(a->value, b->value); }
    bool operator()(const T& a, const Node* b) const { return Equal{}(a, b->value); }
    bool operator()(const Node* a, const T& b) const { return Equal{}(a->value, b); }
  };

  static const T& Empty() {
    static const T empty{};
    return empty;
  }
  static void Release(Node* node) {
    if (node->references.fetch_sub(1, std::memory_order_acq_rel) == 1) delete node;
  }

  mutable Mutex mu_;
  std::unordered_set<Node*, NodeHash, NodeEqual> nodes_ SW_GUARDED_BY(mu_);
  std::size_t sweep_at_ SW_GUARDED_BY(mu_) = kMinSweep;
};

}  // namespace slicewright::model

// Storage is the embedded API server's durable key-value store with one global, strictly increasing
// revision (etcd's model, as kine gives it to k3s). Values are immutable records holding the
// serialized object and the attributes that selectors read, so LIST and watch never re-parse JSON.
// Implementations are thread-safe; records cross threads as shared_ptr<const>.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "slicewright/base/result.h"

#include "apiserver/storage/object_attributes.h"

namespace slicewright::apiserver {

// One stored version of an object. `json` is the complete serialized object, already carrying
// metadata.resourceVersion equal to the revision that wrote it (for a delete: the delete's
// revision), so it is sent to clients byte for byte.
struct ObjectRecord {
  std::string json;
  ObjectAttributes attributes;
};
using RecordPtr = std::shared_ptr<const ObjectRecord>;

struct StoredObject {
  RecordPtr record;
  std::int64_t create_revision = 0;
  std::int64_t mod_revision = 0;
};

enum class EventType { kAdded, kModified, kDeleted };

// A committed change. `record` is the new version (for kDeleted: the final version, rendered with
// the delete's revision); `prev` is the version it replaced (null for kAdded).
struct StorageEvent {
  EventType type = EventType::kAdded;
  std::int64_t revision = 0;
  std::string key;
  RecordPtr record;
  RecordPtr prev;
};
using EventPtr = std::shared_ptr<const StorageEvent>;

struct ListOptions {
  // Only keys that start with this prefix ("/registry/pods/" or "/registry/pods/ns1/").
  std::string prefix;
  // Start strictly after this key (pagination's continue point); "" starts at the prefix.
  std::string start_after;
  // At most this many items; 0 means no limit.
  std::int64_t limit = 0;
  // Read the state as of this revision (a paginated list's snapshot); 0 means the current one.
  // A revision older than CompactedRevision() fails with kExpired; a future one with kTimeout
  // ("Too large resource version").
  std::int64_t revision = 0;
};

struct ListResult {
  std::vector<StoredObject> items;  // in key order
  std::int64_t revision = 0;        // the revision the list reflects
  bool more = false;                // more keys follow the last item (at `revision`)
};

// Receives committed events in revision order. Called from the writing thread while the store
// keeps its order lock, so it must not block or call back into the Storage: queue and return.
class WatchSink {
 public:
  virtual ~WatchSink() = default;
  virtual void OnEvent(const EventPtr& event) = 0;
  // One key of a watch's initial state (WatchOptions::initial_state), in key order, before any
  // later change. Same rules as OnEvent. The default hands it to OnEvent as a kAdded event at the
  // object's mod revision; a sink that keeps no events (an index) takes the object as it is and
  // spares the store an allocation per key.
  virtual void OnInitialObject(std::string_view key, const StoredObject& object) {
    auto event = std::make_shared<StorageEvent>();
    event->type = EventType::kAdded;
    event->revision = object.mod_revision;
    event->key = std::string(key);
    event->record = object.record;
    OnEvent(event);
  }
};

struct WatchOptions {
  std::string prefix;
  // Deliver every event with revision > after_revision. Older than CompactedRevision() fails
  // with kExpired ("too old resource version: X (Y)").
  std::int64_t after_revision = 0;
  // When set, `after_revision` is ignored: the current state of every key under the prefix is
  // delivered first as kAdded events (each with its own mod revision, in key order), then every
  // later change. Watch's resourceVersion "" / "0" and sendInitialEvents=true use this.
  bool initial_state = false;
};

// Registration handle: destroying it unregisters the sink (after which OnEvent is never called).
class WatchRegistration {
 public:
  virtual ~WatchRegistration() = default;
  // The revision the watch started from: the last initial or backlog event's revision, at least
  // the store's revision when it was registered. Used for the initial-events-end bookmark.
  virtual std::int64_t start_revision() const = 0;
};

class Storage {
 public:
  Storage() = default;
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  virtual ~Storage() = default;

  // Builds the record to store once the write's revision is known. Called exactly once per
  // successful precondition check, under the write lock; it must not call back into the Storage.
  // An error from it aborts the write and is returned unchanged.
  using Render = std::function<Result<RecordPtr>(std::int64_t revision)>;

  // A write returns once it is committed and visible to Get and List. Its event may reach the
  // watch sinks just after that: a reader that must see every write up to a revision in a sink's
  // view waits until the sink has seen it (the API server's owner index does).
  // Fails with kAlreadyExists if the key exists. Returns the new revision.
  virtual Result<std::int64_t> Create(std::string_view key, const Render& render) = 0;
  // Replaces an existing key. expected_mod_revision 0 = unconditional; otherwise it must equal the
  // key's mod revision or the write fails with kConflict. kNotFound if the key does not exist.
  virtual Result<std::int64_t> Update(std::string_view key, std::int64_t expected_mod_revision,
                                      const Render& render) = 0;
  // Removes a key; `render` gives the final version carried by the delete event.
  // Same preconditions and errors as Update.
  virtual Result<std::int64_t> Delete(std::string_view key, std::int64_t expected_mod_revision,
                                      const Render& render) = 0;

  // kNotFound if absent.
  virtual Result<StoredObject> Get(std::string_view key) const = 0;
  virtual Result<ListResult> List(const ListOptions& options) const = 0;
  // Counts keys under a prefix at the current revision.
  virtual std::int64_t Count(std::string_view prefix) const = 0;

  // Registers `sink` atomically with its backlog: no event is lost or delivered twice between the
  // backlog and the live stream. Backlog and initial events are delivered to the sink before
  // Watch returns, on the calling thread.
  virtual Result<std::unique_ptr<WatchRegistration>> Watch(const WatchOptions& options,
                                                           std::shared_ptr<WatchSink> sink) = 0;

  // The revision of the last committed write (0 for an empty new store).
  virtual std::int64_t CurrentRevision() const = 0;
  // Every event at or below this revision has been handed to the sinks registered at the time
  // (their OnEvent has returned); CurrentRevision() may be ahead of it by a batch being fanned
  // out. A watch's bookmark may carry it (kube-apiserver's carry the watch cache's revision, not
  // that of the watched resource's last write), so a watch of a resource nobody writes resumes
  // from a recent revision instead of falling out of the history.
  virtual std::int64_t DeliveredRevision() const = 0;
  // Events at or below this revision are gone; watching or listing from there is kExpired.
  virtual std::int64_t CompactedRevision() const = 0;
};

}  // namespace slicewright::apiserver

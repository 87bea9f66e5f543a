// SqliteStorage is the durable Storage of the embedded API server (kine's role for k3s): objects
// and a bounded event history live in SQLite (WAL mode) and are mirrored in memory, so reads never
// touch the database. Thread-safe: writes are serialized, reads share a lock and copy shared_ptrs
// only.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "slicewright/base/mutex.h"
#include "slicewright/base/result.h"

#include "apiserver/storage/storage.h"

namespace slicewright::apiserver {

struct SqliteStorageOptions {
  // The database file, e.g. DATA_DIR/state.db. Its directory must exist; the file is created.
  std::string path;
  // Events kept for watch resume and snapshot lists; at least 1. Older ones are compacted away in
  // batches, so between compactions up to 10% more (at most 1,000 more) are kept.
  std::int64_t history_events = 100000;
  // Recomputes a record's attributes from its JSON when Open loads it from disk (records written
  // through the API arrive with theirs). An error fails Open with kDataLoss. Null: no attributes.
  std::function<Result<ObjectAttributes>(std::string_view key, std::string_view json)> attributes;
  // false: PRAGMA synchronous=NORMAL. In WAL mode every acknowledged write then survives the
  // process dying (kill -9, crash), which is the durability we promise; an OS crash or power loss
  // may still lose the last writes. true: synchronous=FULL, an fsync per commit, so those survive
  // power loss as well, at the cost of far fewer writes per second.
  bool synchronous_full = false;
};

namespace internal {
class SqliteDb;
class WatchHub;

// One kept event, plus what a snapshot list needs to undo it: the key's create revision and the
// mod revision of `event->prev` (0 for kAdded).
struct HistoryEntry {
  EventPtr event;
  std::int64_t create_revision = 0;
  std::int64_t prev_mod_revision = 0;
};
}  // namespace internal

class SqliteStorage final : public Storage {
  struct PassKey {
    explicit PassKey() = default;
  };

 public:
  // Opens (or creates) the database and loads the objects and the kept events into memory. Only one
  // SqliteStorage may have a database open at a time; the file stays locked until destruction.
  // Errors: kInvalid for bad options or a missing data directory; kUnavailable when another process
  // or SqliteStorage holds the database; kDataLoss for a file that is not a SQLite database, a
  // corrupt one, or a row that fails to load (the message names the key and revision); kInternal
  // for other SQLite errors (the message names the path).
  static Result<std::unique_ptr<SqliteStorage>> Open(SqliteStorageOptions options);

  // For Open only: PassKey is private.
  SqliteStorage(PassKey key, std::int64_t history_events);
  // Registrations may outlive the storage; no event reaches them afterwards.
  ~SqliteStorage() override;

  // Writes are acknowledged only once committed to SQLite. A SQLite failure returns kInternal
  // (kUnavailable if the database is busy) and leaves the store as it was; the revision the failed
  // write would have had is given to the next write.
  Result<std::int64_t> Create(std::string_view key, const Render& render) override;
  Result<std::int64_t> Update(std::string_view key, std::int64_t expected_mod_revision,
                              const Render& render) override;
  Result<std::int64_t> Delete(std::string_view key, std::int64_t expected_mod_revision,
                              const Render& render) override;

  Result<StoredObject> Get(std::string_view key) const override;
  // A past `revision` is rebuilt from the current state and the history in O(events since then +
  // page size). kBadRequest for a negative revision.
  Result<ListResult> List(const ListOptions& options) const override;
  std::int64_t Count(std::string_view prefix) const override;

  // Sinks are indexed by the longest '/'-terminated part of their prefix, so a write only visits
  // the sinks whose bucket is a '/'-terminated prefix of its key. A future `after_revision` is
  // accepted: events up to it are skipped. kBadRequest for a negative after_revision. A sink must
  // not destroy its own registration from OnEvent: unregistering waits for the order lock.
  Result<std::unique_ptr<WatchRegistration>> Watch(const WatchOptions& options,
                                                   std::shared_ptr<WatchSink> sink) override;

  std::int64_t CurrentRevision() const override;
  std::int64_t DeliveredRevision() const override;
  std::int64_t CompactedRevision() const override;

 private:
  enum class WriteKind { kCreate, kUpdate, kDelete };

  // A write staged in the open batch; lives on its writer's stack until `done`.
  struct PendingWrite {
    WriteKind kind = WriteKind::kCreate;
    internal::HistoryEntry entry;
    Status status;      // the batch's outcome, set with done
    bool done = false;  // guarded by write_mu_
  };
  // A batch commits at the latest once it holds this many writes.
  static constexpr std::size_t kMaxBatchWrites = 256;

  // Runs in Open(), before the storage is shared.
  Status Load(internal::SqliteDb& db, const SqliteStorageOptions& options);
  Result<std::int64_t> Write(WriteKind kind, std::string_view key,
                             std::int64_t expected_mod_revision, const Render& render);
  // Checks preconditions, renders and stages one write in the open batch.
  Status Stage(WriteKind kind, std::string_view key, std::int64_t expected_mod_revision,
               const Render& render, PendingWrite& pending) SW_REQUIRES(write_mu_);
  // Whether the open batch commits now: it holds writes and no other writer is on its way to join
  // it (or it is full).
  bool ShouldCommitLocked() const SW_REQUIRES(write_mu_);
  // Commits the open batch to SQLite; false when it is empty or failed (every write in it then
  // fails). On true the caller takes the hub's order lock and calls ApplyBatchLocked().
  bool CommitBatchLocked() SW_REQUIRES(write_mu_);
  // Applies the committed batch to memory, completes its writes and returns its events, which
  // the caller delivers to the watchers under the hub's order lock (held during this call).
  std::vector<EventPtr> ApplyBatchLocked() SW_REQUIRES(write_mu_);
  void FailBatchLocked(const Status& status) SW_REQUIRES(write_mu_);
  // Holding write_mu_ excludes every writer of the in-memory state (a writer takes state_mu_
  // exclusively only while holding write_mu_), so its holder may read that state as if it held
  // state_mu_ shared. Tells the analysis so.
  void AssertStateReadable() const SW_REQUIRES(write_mu_) SW_ASSERT_SHARED_CAPABILITY(state_mu_) {}

  const std::int64_t history_events_;
  // How far the history may grow past history_events_ before a compaction batch runs.
  const std::int64_t compaction_slack_;

  // Lock order: write_mu_, then the hub's order lock, then state_mu_. A committer keeps the order
  // lock after releasing write_mu_ while it delivers its batch, so the next batch can stage.
  // Serializes writers. A writer reads objects_ and history_ without state_mu_: it is the only
  // thread that mutates them.
  Mutex write_mu_;
  std::unique_ptr<internal::SqliteDb> db_ SW_PT_GUARDED_BY(write_mu_);  // set by Open()
  // The open batch, in revision order, its keys, the revision it compacts the history to (0:
  // none), and how many writers hold write_mu_ or wait for it to stage.
  std::vector<PendingWrite*> batch_ SW_GUARDED_BY(write_mu_);
  std::set<std::string, std::less<>> staged_keys_ SW_GUARDED_BY(write_mu_);
  std::int64_t batch_compact_to_ SW_GUARDED_BY(write_mu_) = 0;
  std::atomic<int> arriving_{0};
  CondVar batch_done_;
  std::shared_ptr<internal::WatchHub> hub_;

  mutable SharedMutex state_mu_;
  std::map<std::string, StoredObject, std::less<>> objects_ SW_GUARDED_BY(state_mu_);
  // Every event with compacted_revision_ < revision <= current_revision_, oldest first.
  std::deque<internal::HistoryEntry> history_ SW_GUARDED_BY(state_mu_);
  std::int64_t current_revision_ SW_GUARDED_BY(state_mu_) = 0;
  std::int64_t compacted_revision_ SW_GUARDED_BY(state_mu_) = 0;
};

}  // namespace slicewright::apiserver

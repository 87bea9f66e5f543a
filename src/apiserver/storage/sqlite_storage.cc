#include "apiserver/storage/sqlite_storage.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sqlite3.h>
#include <unistd.h>

namespace slicewright::apiserver {
namespace internal {
namespace {

constexpr std::int64_t kSchemaVersion = 2;

// The on-disk format. events.type is EventType's value (0 added, 1 modified, 2 deleted);
// create_rev and prev_mod_rev let a snapshot list undo an event whose predecessors are compacted.
// attrs and prev_attrs hold the selector attributes of value and prev_value
// (ObjectAttributes::encoded()), so Open need not parse every stored object again; version 1 lacked
// them (NULL: computed on load). The current revision is not stored: compaction always keeps the
// newest event, and when nothing is kept the compacted revision is the newest one.

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS meta(
  name TEXT PRIMARY KEY,
  value INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS objects(
  key TEXT PRIMARY KEY,
  create_rev INTEGER NOT NULL,
  mod_rev INTEGER NOT NULL,
  value BLOB NOT NULL,
  attrs BLOB
);
CREATE TABLE IF NOT EXISTS events(
  rev INTEGER PRIMARY KEY,
  key TEXT NOT NULL,
  type INTEGER NOT NULL,
  create_rev INTEGER NOT NULL,
  prev_mod_rev INTEGER NOT NULL,
  value BLOB NOT NULL,
  prev_value BLOB,
  attrs BLOB,
  prev_attrs BLOB
);
INSERT OR IGNORE INTO meta(name, value) VALUES ('schema_version', 2), ('compacted_revision', 0);
)sql";

// Version 1 to 2: the attribute columns. Old rows keep NULL and are computed when loaded.
constexpr const char* kUpgradeFrom1 = R"sql(
ALTER TABLE objects ADD COLUMN attrs BLOB;
ALTER TABLE events ADD COLUMN attrs BLOB;
ALTER TABLE events ADD COLUMN prev_attrs BLOB;
UPDATE meta SET value = 2 WHERE name = 'schema_version';
)sql";

// Open's scans. A version that a kept event (rev > the compacted revision, ?1) also holds is
// left out as NULL; kLoadEventPrev and kLoadObjectValue read one left out after all.
constexpr const char* kLoadEvents =
    "SELECT rev, key, type, create_rev, prev_mod_rev, value, "
    "CASE WHEN prev_mod_rev > ?1 THEN NULL ELSE prev_value END, attrs, "
    "CASE WHEN prev_mod_rev > ?1 THEN NULL ELSE prev_attrs END, "
    "prev_value IS NULL FROM events WHERE rev > ?1 ORDER BY rev";
constexpr const char* kLoadEventPrev = "SELECT prev_value, prev_attrs FROM events WHERE rev = ?";
constexpr const char* kLoadObjects =
    "SELECT key, create_rev, mod_rev, CASE WHEN mod_rev > ?1 THEN NULL ELSE value END, "
    "CASE WHEN mod_rev > ?1 THEN NULL ELSE attrs END FROM objects";
constexpr const char* kLoadObjectValue = "SELECT value, attrs FROM objects WHERE key = ?";

struct StmtDeleter {
  void operator()(sqlite3_stmt* stmt) const { sqlite3_finalize(stmt); }
};
using Stmt = std::unique_ptr<sqlite3_stmt, StmtDeleter>;

Status SqliteStatus(sqlite3* db, int rc, std::string_view what) {
  std::string message(what);
  message += ": ";
  message += db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  const int primary = rc & 0xff;
  if (primary == SQLITE_CANTOPEN && db != nullptr && sqlite3_system_errno(db) != 0) {
    message += " (" + std::generic_category().message(sqlite3_system_errno(db)) + ")";
  }
  switch (primary) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return UnavailableError(std::move(message));
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
      return DataLossError(std::move(message));
    default:
      return InternalError(std::move(message));
  }
}

// SQLITE_STATIC is an old-style cast of 0; nullptr is the same destructor and compiles cleanly.
void BindText(sqlite3_stmt* stmt, int index, std::string_view text) {
  sqlite3_bind_text(stmt, index, text.data(), static_cast<int>(text.size()), nullptr);
}
void BindBlob(sqlite3_stmt* stmt, int index, std::string_view blob) {
  // data() of a std::string is never null, so an empty value binds as an empty blob, not NULL.
  sqlite3_bind_blob(stmt, index, blob.data(), static_cast<int>(blob.size()), nullptr);
}
std::string ColumnString(sqlite3_stmt* stmt, int index) {
  const void* data = sqlite3_column_blob(stmt, index);
  const int size = sqlite3_column_bytes(stmt, index);
  if (data == nullptr || size <= 0) return {};
  return {static_cast<const char*>(data), static_cast<std::size_t>(size)};
}

std::string RevisionText(std::int64_t revision) { return std::to_string(revision); }

}  // namespace

// Owns the connection and the prepared statements of the write path. Not thread-safe: the storage
// uses it from Open and then under its write lock only.
class SqliteDb {
 public:
  SqliteDb() = default;
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;
  ~SqliteDb() {
    // Statements first: sqlite3_close refuses to close a connection with live statements.
    for (Stmt* stmt :
         {&begin_, &commit_, &rollback_, &savepoint_, &release_, &rollback_to_, &insert_object_,
          &update_object_, &delete_object_, &insert_event_, &delete_events_, &set_compacted_}) {
      stmt->reset();
    }
    sqlite3_close_v2(db_);
  }

  static Result<std::unique_ptr<SqliteDb>> Open(const std::string& path, bool synchronous_full) {
    auto db = std::make_unique<SqliteDb>();
    db->path_ = path;
    // NOMUTEX: the storage already serializes every use of the connection.
    const int rc =
        sqlite3_open_v2(path.c_str(), &db->db_,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
    const std::string what = "opening database " + path;
    if (rc != SQLITE_OK) return SqliteStatus(db->db_, rc, what);
    sqlite3_extended_result_codes(db->db_, 1);
    if (sqlite3_db_readonly(db->db_, "main") == 1) {
      return InternalError(what + ": the file is read-only");
    }
    // EXCLUSIVE keeps a second process (or a second SqliteStorage) from writing behind our
    // in-memory copy, and lets WAL mode skip its shared-memory index.
    SW_RETURN_IF_ERROR(db->Exec("PRAGMA locking_mode=EXCLUSIVE", what));
    SW_ASSIGN_OR_RETURN(std::string mode, db->QueryText("PRAGMA journal_mode=WAL", what));
    if (mode != "wal") {
      return InternalError(what + ": journal mode is " + mode + ", WAL could not be enabled");
    }
    SW_RETURN_IF_ERROR(
        db->Exec(synchronous_full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL", what));
    // Checkpoint every 10,000 WAL pages (~40 MB) instead of SQLite's 1,000: each checkpoint copies
    // every page changed since the last one and syncs twice, and the hot pages (the objects
    // table's leaves, interior pages, the events table's tail) change in nearly every commit, so
    // rarer checkpoints copy each of them once instead of ten times. Durability is the WAL's and
    // does not depend on it; the WAL file stays at its largest size (up to ~40 MB).
    SW_RETURN_IF_ERROR(db->Exec("PRAGMA wal_autocheckpoint=10000", what));
    SW_RETURN_IF_ERROR(db->CreateSchema(what));
    return db;
  }

  const std::string& path() const { return path_; }

  // "<what>: <SQLite's message>", coded as SqliteStatus does.
  Status Error(int rc, std::string_view what) const { return SqliteStatus(db_, rc, what); }

  Status Exec(const char* sql, std::string_view what) {
    const int rc = sqlite3_exec(db_, sql, nullptr, nullptr, nullptr);
    if (rc != SQLITE_OK) return Error(rc, what);
    return Status::Ok();
  }

  Result<Stmt> Prepare(const char* sql, std::string_view what) {
    sqlite3_stmt* raw = nullptr;
    const int rc = sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &raw, nullptr);
    Stmt stmt(raw);
    if (rc != SQLITE_OK) return Error(rc, what);
    return stmt;
  }

  // The first column of the first row of a one-row query, as an integer.
  Result<std::int64_t> QueryInt64(const char* sql, std::string_view what) {
    SW_ASSIGN_OR_RETURN(Stmt stmt, Prepare(sql, what));
    const int rc = sqlite3_step(stmt.get());
    if (rc != SQLITE_ROW) return Error(rc == SQLITE_DONE ? SQLITE_CORRUPT : rc, what);
    if (sqlite3_column_type(stmt.get(), 0) != SQLITE_INTEGER) {
      return DataLossError(std::string(what) + ": the value is not an integer");
    }
    return static_cast<std::int64_t>(sqlite3_column_int64(stmt.get(), 0));
  }

  // The first column of the first row of a one-row query, as text.
  Result<std::string> QueryText(const char* sql, std::string_view what) {
    SW_ASSIGN_OR_RETURN(Stmt stmt, Prepare(sql, what));
    const int rc = sqlite3_step(stmt.get());
    if (rc != SQLITE_ROW) return Error(rc, what);
    return ColumnString(stmt.get(), 0);
  }

  // Runs a statement that returns no rows, then resets it for reuse.
  Status Run(sqlite3_stmt* stmt, std::string_view what) {
    const int rc = sqlite3_step(stmt);
    Status status = rc == SQLITE_DONE ? Status::Ok() : Error(rc, what);
    sqlite3_reset(stmt);
    sqlite3_clear_bindings(stmt);
    return status;
  }

  // Runs a schema upgrade script in one transaction.
  Status Upgrade(const char* script, const std::string& what) {
    SW_RETURN_IF_ERROR(Exec("BEGIN", what));
    Status status = Exec(script, what);
    if (status.ok()) status = Exec("COMMIT", what);
    if (!status.ok() && sqlite3_get_autocommit(db_) == 0) {
      static_cast<void>(Exec("ROLLBACK", what));
    }
    return status;
  }

  Status CreateSchema(const std::string& what) {
    SW_RETURN_IF_ERROR(Exec("BEGIN", what));
    Status status = Exec(kSchema, what);
    if (status.ok()) status = Exec("COMMIT", what);
    if (!status.ok() && sqlite3_get_autocommit(db_) == 0) {
      static_cast<void>(Exec("ROLLBACK", what));
    }
    return status;
  }

  Status PrepareWriteStatements() {
    struct Entry {
      Stmt* stmt;
      const char* sql;
    };
    const std::array<Entry, 12> entries = {{
        {&begin_, "BEGIN"},
        {&commit_, "COMMIT"},
        {&rollback_, "ROLLBACK"},
        {&savepoint_, "SAVEPOINT write"},
        {&release_, "RELEASE write"},
        {&rollback_to_, "ROLLBACK TO write"},
        {&insert_object_,
         "INSERT INTO objects(key, create_rev, mod_rev, value, attrs) VALUES (?, ?, ?, ?, ?)"},
        {&update_object_, "UPDATE objects SET mod_rev = ?, value = ?, attrs = ? WHERE key = ?"},
        {&delete_object_, "DELETE FROM objects WHERE key = ?"},
        {&insert_event_,
         "INSERT INTO events(rev, key, type, create_rev, prev_mod_rev, value, prev_value, attrs, "
         "prev_attrs) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"},
        {&delete_events_, "DELETE FROM events WHERE rev <= ?"},
        {&set_compacted_, "UPDATE meta SET value = ? WHERE name = 'compacted_revision'"},
    }};
    for (const Entry& entry : entries) {
      SW_ASSIGN_OR_RETURN(*entry.stmt, Prepare(entry.sql, "preparing statements for " + path_));
    }
    return Status::Ok();
  }

  // Adds one write, and a compaction up to `compact_to` when it is not 0, to the open batch
  // transaction (beginning one if needed) inside a savepoint: on failure only this write is undone
  // and the batch's other writes stay. Nothing is durable before CommitBatch.
  Status StageWrite(const HistoryEntry& entry, std::int64_t compact_to) {
    if (!broken_.ok()) return broken_;
    const StorageEvent& event = *entry.event;
    const std::string what =
        "writing revision " + RevisionText(event.revision) + " of " + event.key + " in " + path_;
    if (!in_transaction_) {
      SW_RETURN_IF_ERROR(Run(begin_.get(), what));
      in_transaction_ = true;
    }
    Status status = Run(savepoint_.get(), what);
    if (!status.ok()) return status;
    const std::string_view attrs = event.record->attributes.encoded();
    switch (event.type) {
      case EventType::kAdded: {
        sqlite3_stmt* stmt = insert_object_.get();
        BindText(stmt, 1, event.key);
        sqlite3_bind_int64(stmt, 2, event.revision);
        sqlite3_bind_int64(stmt, 3, event.revision);
        BindBlob(stmt, 4, event.record->json);
        BindBlob(stmt, 5, attrs);
        status = Run(stmt, what);
        break;
      }
      case EventType::kModified: {
        sqlite3_stmt* stmt = update_object_.get();
        sqlite3_bind_int64(stmt, 1, event.revision);
        BindBlob(stmt, 2, event.record->json);
        BindBlob(stmt, 3, attrs);
        BindText(stmt, 4, event.key);
        status = Run(stmt, what);
        break;
      }
      case EventType::kDeleted: {
        sqlite3_stmt* stmt = delete_object_.get();
        BindText(stmt, 1, event.key);
        status = Run(stmt, what);
        break;
      }
    }
    // The memory map said the key was there (or absent); a disagreeing table is corruption.
    if (status.ok() && sqlite3_changes(db_) != 1) {
      status = DataLossError(what + ": the objects table disagrees with memory");
    }
    if (status.ok()) {
      sqlite3_stmt* stmt = insert_event_.get();
      sqlite3_bind_int64(stmt, 1, event.revision);
      BindText(stmt, 2, event.key);
      sqlite3_bind_int(stmt, 3, static_cast<int>(event.type));
      sqlite3_bind_int64(stmt, 4, entry.create_revision);
      sqlite3_bind_int64(stmt, 5, entry.prev_mod_revision);
      BindBlob(stmt, 6, event.record->json);
      if (event.prev != nullptr) {
        BindBlob(stmt, 7, event.prev->json);
        BindBlob(stmt, 9, event.prev->attributes.encoded());
      } else {
        sqlite3_bind_null(stmt, 7);
        sqlite3_bind_null(stmt, 9);
      }
      BindBlob(stmt, 8, attrs);
      status = Run(stmt, what);
    }
    if (status.ok() && compact_to != 0) {
      sqlite3_bind_int64(delete_events_.get(), 1, compact_to);
      status = Run(delete_events_.get(), what);
      if (status.ok()) {
        sqlite3_bind_int64(set_compacted_.get(), 1, compact_to);
        status = Run(set_compacted_.get(), what);
      }
    }
    if (status.ok()) return Run(release_.get(), what);
    if (sqlite3_get_autocommit(db_) != 0) {
      // SQLite rolled the whole transaction back by itself (e.g. an I/O error): the batch's
      // earlier writes are gone too, which the caller learns from in_transaction().
      in_transaction_ = false;
      return status;
    }
    Status undone = Run(rollback_to_.get(), what);
    if (undone.ok()) undone = Run(release_.get(), what);
    if (!undone.ok()) Abandon(what);
    return status;
  }

  // Commits the open batch transaction. On failure everything staged since BEGIN is rolled back.
  Status CommitBatch(std::string_view what) {
    if (!in_transaction_)
      return broken_.ok() ? InternalError(std::string(what) + ": no batch") : broken_;
    in_transaction_ = false;
    Status status = Run(commit_.get(), what);
    if (!status.ok() && sqlite3_get_autocommit(db_) == 0) Abandon(what);
    return status;
  }

  // Whether a batch transaction is open (false after SQLite rolled one back by itself).
  bool in_transaction() const { return in_transaction_ && sqlite3_get_autocommit(db_) == 0; }

 private:
  // Rolls the open transaction back; if even that fails, memory and disk may now disagree, so
  // every later write is refused rather than diverge.
  void Abandon(std::string_view what) {
    in_transaction_ = false;
    if (sqlite3_get_autocommit(db_) != 0) return;
    Status rollback = Run(rollback_.get(), what);
    if (!rollback.ok()) {
      broken_ = InternalError("the store refuses writes after a failed rollback: " +
                              std::string(rollback.message()));
    }
  }

  sqlite3* db_ = nullptr;
  std::string path_;
  Status broken_;
  bool in_transaction_ = false;
  Stmt begin_, commit_, rollback_, savepoint_, release_, rollback_to_, insert_object_,
      update_object_, delete_object_, insert_event_, delete_events_, set_compacted_;
};

// The watchers and the order lock. Shared by the storage and its registrations, so a registration
// may outlive the storage. `mu` is held while a write is appended to memory and delivered, and
// while a watch is registered with its backlog, which is what makes registration gapless.
class WatchHub {
 public:
  struct Watcher {
    std::uint64_t id = 0;
    std::string prefix;
    std::int64_t min_revision = 0;  // live events at or below it are skipped
    std::shared_ptr<WatchSink> sink;
  };

  // The bucket of a prefix: its longest '/'-terminated part ("" if it has no '/').
  static std::string_view BucketOf(std::string_view prefix) {
    const std::size_t slash = prefix.rfind('/');
    return slash == std::string_view::npos ? std::string_view() : prefix.substr(0, slash + 1);
  }

  Mutex mu;

  std::uint64_t AddLocked(std::string prefix, std::int64_t min_revision,
                          std::shared_ptr<WatchSink> sink) SW_REQUIRES(mu) {
    const std::uint64_t id = next_id_++;
    std::string bucket(BucketOf(prefix));
    buckets_[std::move(bucket)].push_back(
        Watcher{id, std::move(prefix), min_revision, std::move(sink)});
    return id;
  }

  void Remove(std::string_view bucket, std::uint64_t id) {
    std::shared_ptr<WatchSink>
        sink;  // released after the lock: its destructor is the caller's code
    MutexLock lock(mu);
    auto it = buckets_.find(bucket);
    if (it == buckets_.end()) return;
    std::vector<Watcher>& watchers = it->second;
    auto found = std::find_if(watchers.begin(), watchers.end(),
                              [id](const Watcher& watcher) { return watcher.id == id; });
    if (found == watchers.end()) return;
    sink = std::move(found->sink);
    watchers.erase(found);
    if (watchers.empty()) buckets_.erase(it);
  }

  // Visits only the buckets that are '/'-terminated prefixes of the key (and "").
  void DeliverLocked(const EventPtr& event) SW_REQUIRES(mu) {
    DeliverToSinksLocked(event);
    // After the sinks: a reader of `delivered` sees their OnEvent calls done (release/acquire).
    delivered.store(event->revision, std::memory_order_release);
  }

  // The last event revision handed to every sink (SqliteStorage::DeliveredRevision).
  std::atomic<std::int64_t> delivered{0};

 private:
  void DeliverToSinksLocked(const EventPtr& event) SW_REQUIRES(mu) {
    if (buckets_.empty()) return;
    const std::string_view key = event->key;
    auto deliver = [&](std::string_view bucket) SW_REQUIRES(mu) {
      auto it = buckets_.find(bucket);
      if (it == buckets_.end()) return;
      for (const Watcher& watcher : it->second) {
        if (event->revision > watcher.min_revision && key.starts_with(watcher.prefix)) {
          watcher.sink->OnEvent(event);
        }
      }
    };
    deliver({});
    for (std::size_t slash = key.find('/'); slash != std::string_view::npos;
         slash = key.find('/', slash + 1)) {
      deliver(key.substr(0, slash + 1));
    }
  }

  std::uint64_t next_id_ SW_GUARDED_BY(mu) = 1;
  std::map<std::string, std::vector<Watcher>, std::less<>> buckets_ SW_GUARDED_BY(mu);
};

}  // namespace internal

namespace {

using internal::HistoryEntry;
using internal::Stmt;

class SqliteWatchRegistration final : public WatchRegistration {
 public:
  SqliteWatchRegistration(std::shared_ptr<internal::WatchHub> hub, std::string bucket,
                          std::uint64_t id, std::int64_t start_revision)
      : hub_(std::move(hub)),
        bucket_(std::move(bucket)),
        id_(id),
        start_revision_(start_revision) {}
  SqliteWatchRegistration(const SqliteWatchRegistration&) = delete;
  SqliteWatchRegistration& operator=(const SqliteWatchRegistration&) = delete;
  ~SqliteWatchRegistration() override { hub_->Remove(bucket_, id_); }

  std::int64_t start_revision() const override { return start_revision_; }

 private:
  std::shared_ptr<internal::WatchHub> hub_;
  std::string bucket_;
  std::uint64_t id_;
  std::int64_t start_revision_;
};

using AttributesFn = std::function<Result<ObjectAttributes>(std::string_view, std::string_view)>;

// A stored version: its attributes come from their column when the row has them (written by
// schema 2), else from the callback.
Result<RecordPtr> LoadRecord(const AttributesFn& attributes, const std::string& key,
                             std::int64_t revision, std::string json, sqlite3_stmt* row,
                             int attrs_column) {
  auto record = std::make_shared<ObjectRecord>();
  record->json = std::move(json);
  if (sqlite3_column_type(row, attrs_column) != SQLITE_NULL) {
    const void* data = sqlite3_column_blob(row, attrs_column);
    const int size = sqlite3_column_bytes(row, attrs_column);
    const std::string_view stored =
        data == nullptr ? std::string_view()
                        : std::string_view(static_cast<const char*>(data),
                                           static_cast<std::size_t>(std::max(size, 0)));
    std::optional<ObjectAttributes> decoded = ObjectAttributes::Decode(stored);
    if (!decoded.has_value()) {
      return DataLossError("loading " + key + " at revision " + internal::RevisionText(revision) +
                           ": malformed attributes column");
    }
    record->attributes = std::move(*decoded);
  } else if (attributes) {
    Result<ObjectAttributes> computed = attributes(key, record->json);
    if (!computed.ok()) {
      return DataLossError("loading " + key + " at revision " + internal::RevisionText(revision) +
                           ": " + std::string(computed.status().message()));
    }
    record->attributes = std::move(computed).value();
  }
  return RecordPtr(std::move(record));
}

Status RowError(const std::string& key, std::int64_t revision, std::string_view problem) {
  return DataLossError("loading " + key + " at revision " + internal::RevisionText(revision) +
                       ": " + std::string(problem));
}

// Whether a key is past a list's continue point.
bool StartsAfter(std::string_view key, const ListOptions& options) {
  return options.start_after.empty() || key > options.start_after;
}

}  // namespace

SqliteStorage::SqliteStorage(PassKey /*key*/, std::int64_t history_events)
    : history_events_(history_events),
      compaction_slack_(std::clamp<std::int64_t>(history_events / 10, 1, 1000)),
      hub_(std::make_shared<internal::WatchHub>()) {}

SqliteStorage::~SqliteStorage() = default;

// Options by value, as every factory here takes them (house style 6.4).
// NOLINTNEXTLINE(performance-unnecessary-value-param)
Result<std::unique_ptr<SqliteStorage>> SqliteStorage::Open(SqliteStorageOptions options) {
  if (options.path.empty()) return InvalidError("the storage path is empty");
  if (options.history_events < 1) {
    return InvalidError("history_events must be at least 1, got " +
                        internal::RevisionText(options.history_events));
  }
  std::filesystem::path dir = std::filesystem::path(options.path).parent_path();
  if (dir.empty()) dir = ".";
  std::error_code error;
  const std::filesystem::file_status dir_status = std::filesystem::status(dir, error);
  if (!std::filesystem::exists(dir_status)) {
    return InvalidError("the data directory " + dir.string() + " of " + options.path +
                        " does not exist");
  }
  if (!std::filesystem::is_directory(dir_status)) {
    return InvalidError("the data directory " + dir.string() + " of " + options.path +
                        " is not a directory");
  }

  // Create the file ourselves: when SQLite cannot, it retries read-only and reports that attempt's
  // errno (ENOENT), hiding the real reason (EACCES, EROFS, ...).
  const int fd = ::open(options.path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd >= 0) {
    ::close(fd);
  } else if (errno != EEXIST) {
    return InternalError("cannot create database " + options.path + ": " +
                         std::generic_category().message(errno));
  }

  SW_ASSIGN_OR_RETURN(std::unique_ptr<internal::SqliteDb> db,
                      internal::SqliteDb::Open(options.path, options.synchronous_full));
  auto storage = std::make_unique<SqliteStorage>(PassKey{}, options.history_events);
  // Load reads the whole file once: mapping it saves a pread copy per page. Writes then go back to
  // plain I/O, so the mapped pages do not stay in the server's resident set.
  SW_RETURN_IF_ERROR(db->Exec("PRAGMA mmap_size=1073741824", "loading database " + options.path));
  SW_RETURN_IF_ERROR(storage->Load(*db, options));
  SW_RETURN_IF_ERROR(db->Exec("PRAGMA mmap_size=0", "loading database " + options.path));
  SW_RETURN_IF_ERROR(db->PrepareWriteStatements());
  storage->db_ = std::move(db);
  storage->hub_->delivered.store(storage->CurrentRevision(), std::memory_order_release);
  return storage;
}

Status SqliteStorage::Load(internal::SqliteDb& db, const SqliteStorageOptions& options) {
  const std::string what = "loading database " + db.path();
  WriterMutexLock state_lock(state_mu_);  // uncontended: nothing else has the storage yet
  SW_ASSIGN_OR_RETURN(std::int64_t version,
                      db.QueryInt64("SELECT value FROM meta WHERE name = 'schema_version'", what));
  if (version == 1) {
    SW_RETURN_IF_ERROR(db.Upgrade(internal::kUpgradeFrom1, "upgrading " + what));
    version = 2;
  }
  if (version != internal::kSchemaVersion) {
    return DataLossError("database " + db.path() + " has schema version " +
                         std::to_string(version) + ", this build reads version " +
                         std::to_string(internal::kSchemaVersion));
  }
  SW_ASSIGN_OR_RETURN(
      compacted_revision_,
      db.QueryInt64("SELECT value FROM meta WHERE name = 'compacted_revision'", what));
  current_revision_ = compacted_revision_;

  // The record a kept event wrote at `revision` for `key`, if any, so an event's prev and an object
  // share it instead of decoding the same row again. The history holds every revision after the
  // compacted one, one event each, so the revision is an index; the key check keeps an
  // inconsistent file from sharing a wrong record.
  const auto kept_record = [this](std::string_view key, std::int64_t revision)
                               SW_REQUIRES(state_mu_) -> RecordPtr {
    if (history_.empty() || revision < history_.front().event->revision) return nullptr;
    const auto index = static_cast<std::size_t>(revision - history_.front().event->revision);
    if (index >= history_.size()) return nullptr;
    const StorageEvent& event = *history_[index].event;
    if (event.revision != revision || event.key != key) return nullptr;
    return event.record;
  };

  // A version whose revision is kept is shared from its event, so the scans leave its value out
  // (SQLite then never copies it out of the file); should the event not match after all, the
  // version is read from its own row.
  SW_ASSIGN_OR_RETURN(Stmt events, db.Prepare(internal::kLoadEvents, what));
  SW_ASSIGN_OR_RETURN(Stmt event_prev, db.Prepare(internal::kLoadEventPrev, what));
  SW_ASSIGN_OR_RETURN(Stmt objects, db.Prepare(internal::kLoadObjects, what));
  SW_ASSIGN_OR_RETURN(Stmt object_value, db.Prepare(internal::kLoadObjectValue, what));
  // A version no kept event shares: from the scanned row's value and attrs columns, or when the
  // scan left them out, from `own_row` (its parameter bound), which selects just those two.
  const auto load_version = [&](const std::string& key, std::int64_t revision, sqlite3_stmt* row,
                                int value_column, int attrs_column,
                                sqlite3_stmt* own_row) -> Result<RecordPtr> {
    if (sqlite3_column_type(row, value_column) != SQLITE_NULL) {
      return LoadRecord(options.attributes, key, revision,
                        internal::ColumnString(row, value_column), row, attrs_column);
    }
    const int own_rc = sqlite3_step(own_row);
    if (own_rc == SQLITE_DONE) return RowError(key, revision, "its row vanished while loading");
    if (own_rc != SQLITE_ROW) return db.Error(own_rc, what);
    Result<RecordPtr> record = LoadRecord(options.attributes, key, revision,
                                          internal::ColumnString(own_row, 0), own_row, 1);
    sqlite3_reset(own_row);
    return record;
  };

  sqlite3_bind_int64(events.get(), 1, compacted_revision_);
  int rc = SQLITE_OK;
  while ((rc = sqlite3_step(events.get())) == SQLITE_ROW) {
    sqlite3_stmt* row = events.get();
    const std::int64_t revision = sqlite3_column_int64(row, 0);
    std::string key = internal::ColumnString(row, 1);
    const int type = sqlite3_column_int(row, 2);
    HistoryEntry entry;
    entry.create_revision = sqlite3_column_int64(row, 3);
    entry.prev_mod_revision = sqlite3_column_int64(row, 4);
    if (type < static_cast<int>(EventType::kAdded) ||
        type > static_cast<int>(EventType::kDeleted)) {
      return RowError(key, revision, "unknown event type " + std::to_string(type));
    }
    auto event = std::make_shared<StorageEvent>();
    event->type = static_cast<EventType>(type);
    event->revision = revision;
    if (event->type != EventType::kAdded) {
      if (sqlite3_column_int(row, 9) != 0) {
        return RowError(key, revision, "the event has no previous value");
      }
      event->prev = kept_record(key, entry.prev_mod_revision);
      if (event->prev == nullptr) {
        sqlite3_bind_int64(event_prev.get(), 1, revision);
        SW_ASSIGN_OR_RETURN(
            event->prev, load_version(key, entry.prev_mod_revision, row, 6, 8, event_prev.get()));
      }
    }
    SW_ASSIGN_OR_RETURN(event->record, LoadRecord(options.attributes, key, revision,
                                                  internal::ColumnString(row, 5), row, 7));
    event->key = std::move(key);
    current_revision_ = revision;
    entry.event = std::move(event);
    history_.push_back(std::move(entry));
  }
  if (rc != SQLITE_DONE) return db.Error(rc, what);

  sqlite3_bind_int64(objects.get(), 1, compacted_revision_);
  while ((rc = sqlite3_step(objects.get())) == SQLITE_ROW) {
    sqlite3_stmt* row = objects.get();
    std::string key = internal::ColumnString(row, 0);
    StoredObject object;
    object.create_revision = sqlite3_column_int64(row, 1);
    object.mod_revision = sqlite3_column_int64(row, 2);
    if (object.mod_revision > current_revision_ || object.create_revision > object.mod_revision) {
      return RowError(key, object.mod_revision,
                      "revisions out of range (created " +
                          internal::RevisionText(object.create_revision) + ", newest revision " +
                          internal::RevisionText(current_revision_) + ")");
    }
    object.record = kept_record(key, object.mod_revision);
    if (object.record == nullptr) {
      internal::BindText(object_value.get(), 1, key);
      SW_ASSIGN_OR_RETURN(object.record,
                          load_version(key, object.mod_revision, row, 3, 4, object_value.get()));
    }
    objects_.emplace(std::move(key), std::move(object));
  }
  if (rc != SQLITE_DONE) return db.Error(rc, what);
  return Status::Ok();
}

Result<std::int64_t> SqliteStorage::Create(std::string_view key, const Render& render) {
  return Write(WriteKind::kCreate, key, 0, render);
}

Result<std::int64_t> SqliteStorage::Update(std::string_view key, std::int64_t expected_mod_revision,
                                           const Render& render) {
  return Write(WriteKind::kUpdate, key, expected_mod_revision, render);
}

Result<std::int64_t> SqliteStorage::Delete(std::string_view key, std::int64_t expected_mod_revision,
                                           const Render& render) {
  return Write(WriteKind::kDelete, key, expected_mod_revision, render);
}

// Group commit: a writer stages its write in the open SQLite transaction, and the last writer
// to arrive commits the whole batch (kine and etcd batch their commits the same way). Writers
// that arrive while the batch is open join it, so under concurrent load one COMMIT and one set of
// WAL frames serve many writes. Readers and watchers see a batch only once it is committed.
Result<std::int64_t> SqliteStorage::Write(WriteKind kind, std::string_view key,
                                          std::int64_t expected_mod_revision,
                                          const Render& render) {
  if (!render) return InternalError("writing " + std::string(key) + ": no render function");
  // Counted before taking the lock, so the writer holding it knows this one will join the batch.
  arriving_.fetch_add(1, std::memory_order_relaxed);
  MutexLock write_lock(write_mu_);
  PendingWrite pending;
  Status staged = Stage(kind, key, expected_mod_revision, render, pending);
  arriving_.fetch_sub(1, std::memory_order_relaxed);
  std::vector<EventPtr> events;
  if (ShouldCommitLocked() && CommitBatchLocked()) {
    // Fan the batch out to the watchers without blocking the next batch's writers: the order
    // lock, taken before write_mu_ is released, keeps the batches' events in revision order.
    {
      MutexLock order_lock(hub_->mu);
      events = ApplyBatchLocked();
      write_lock.Unlock();
      for (const EventPtr& event : events) hub_->DeliverLocked(event);
    }
    write_lock.Lock();
  }
  if (!staged.ok()) return staged;
  while (!pending.done) batch_done_.Wait(write_mu_);
  if (!pending.status.ok()) return std::move(pending.status);
  return pending.entry.event->revision;
}

Status SqliteStorage::Stage(WriteKind kind, std::string_view key,
                            std::int64_t expected_mod_revision, const Render& render,
                            PendingWrite& pending) {
  // A second write to a key in the open batch commits the batch first, so its preconditions are
  // checked against committed state (and a retry after a conflict sees the write it lost to).
  if (staged_keys_.contains(key) && CommitBatchLocked()) {
    MutexLock order_lock(hub_->mu);
    for (const EventPtr& event : ApplyBatchLocked()) hub_->DeliverLocked(event);
  }
  AssertStateReadable();
  auto it = objects_.find(key);
  const StoredObject* existing = it == objects_.end() ? nullptr : &it->second;
  if (kind == WriteKind::kCreate) {
    if (existing != nullptr)
      return AlreadyExistsError("key " + std::string(key) + " already exists");
  } else {
    if (existing == nullptr) return NotFoundError("key " + std::string(key) + " not found");
    if (expected_mod_revision != 0 && expected_mod_revision != existing->mod_revision) {
      return ConflictError("key " + std::string(key) + " has mod revision " +
                           internal::RevisionText(existing->mod_revision) + ", not the expected " +
                           internal::RevisionText(expected_mod_revision));
    }
  }

  const std::int64_t revision = current_revision_ + static_cast<std::int64_t>(batch_.size()) + 1;
  SW_ASSIGN_OR_RETURN(RecordPtr record, render(revision));
  if (record == nullptr) {
    return InternalError("rendering " + std::string(key) + " at revision " +
                         internal::RevisionText(revision) + " returned no record");
  }

  auto event = std::make_shared<StorageEvent>();
  event->revision = revision;
  event->key = std::string(key);
  event->record = std::move(record);
  HistoryEntry& entry = pending.entry;
  switch (kind) {
    case WriteKind::kCreate:
      event->type = EventType::kAdded;
      entry.create_revision = revision;
      break;
    case WriteKind::kUpdate:
    case WriteKind::kDelete:
      event->type = kind == WriteKind::kUpdate ? EventType::kModified : EventType::kDeleted;
      event->prev = existing->record;
      entry.create_revision = existing->create_revision;
      entry.prev_mod_revision = existing->mod_revision;
      break;
  }
  entry.event = std::move(event);
  pending.kind = kind;

  // Compact in batches: once the history is compaction_slack_ past its bound, trim it to the bound.
  // The history seen here is the committed one minus what the open batch already compacts, plus
  // the batch's own events; only committed events are compacted.
  const auto first_kept = std::partition_point(
      history_.begin(), history_.end(), [&](const HistoryEntry& kept) SW_REQUIRES(write_mu_) {
        return kept.event->revision <= batch_compact_to_;
      });
  const auto committed_kept = static_cast<std::int64_t>(history_.end() - first_kept);
  const std::int64_t kept_after = committed_kept + static_cast<std::int64_t>(batch_.size()) + 1;
  std::int64_t compact_to = 0;
  if (kept_after - compaction_slack_ > history_events_ && committed_kept > 0) {
    const std::int64_t drop = std::min(kept_after - history_events_, committed_kept);
    compact_to = (first_kept + (drop - 1))->event->revision;
  }

  const bool was_open = db_->in_transaction();
  Status status = db_->StageWrite(entry, compact_to);
  if (!status.ok()) {
    if (was_open && !db_->in_transaction()) {
      // SQLite dropped the whole transaction: the batch's other writes are gone with it.
      FailBatchLocked(status);
    }
    return status;
  }
  if (compact_to != 0) batch_compact_to_ = compact_to;
  staged_keys_.insert(entry.event->key);
  batch_.push_back(&pending);
  return Status::Ok();
}

bool SqliteStorage::ShouldCommitLocked() const {
  if (batch_.empty()) return false;
  // A writer on its way commits.
  return arriving_.load(std::memory_order_relaxed) == 0 || batch_.size() >= kMaxBatchWrites;
}

void SqliteStorage::FailBatchLocked(const Status& status) {
  for (PendingWrite* pending : batch_) {
    pending->status = status;
    pending->done = true;
  }
  batch_.clear();
  staged_keys_.clear();
  batch_compact_to_ = 0;
  batch_done_.NotifyAll();
}

bool SqliteStorage::CommitBatchLocked() {
  if (batch_.empty()) return false;
  const StorageEvent& last = *batch_.back()->entry.event;
  const std::string what =
      "committing revisions " + internal::RevisionText(batch_.front()->entry.event->revision) +
      "-" + internal::RevisionText(last.revision) + " (last: " + last.key + ") in " + db_->path();
  Status status = db_->CommitBatch(what);
  if (!status.ok()) {
    FailBatchLocked(status);
    return false;
  }
  return true;
}

std::vector<EventPtr> SqliteStorage::ApplyBatchLocked() {
  std::vector<EventPtr> events;
  events.reserve(batch_.size());
  std::vector<HistoryEntry> dropped;  // freed after the state lock is released
  {
    WriterMutexLock state_lock(state_mu_);
    for (PendingWrite* pending : batch_) {
      const HistoryEntry& entry = pending->entry;
      const StorageEvent& event = *entry.event;
      switch (pending->kind) {
        case WriteKind::kCreate:
          objects_.emplace(event.key, StoredObject{event.record, event.revision, event.revision});
          break;
        case WriteKind::kUpdate: {
          StoredObject& object = objects_.find(event.key)->second;
          object.record = event.record;
          object.mod_revision = event.revision;
          break;
        }
        case WriteKind::kDelete:
          objects_.erase(objects_.find(event.key));
          break;
      }
      history_.push_back(entry);
      current_revision_ = event.revision;
      events.push_back(entry.event);
    }
    if (batch_compact_to_ != 0) {
      while (!history_.empty() && history_.front().event->revision <= batch_compact_to_) {
        dropped.push_back(std::move(history_.front()));
        history_.pop_front();
      }
      compacted_revision_ = batch_compact_to_;
    }
  }
  // Writers learn of success once the batch is durable and readable; their events may still be
  // on their way to the watchers (Storage allows it, as kube-apiserver's watch cache does).
  for (PendingWrite* pending : batch_) pending->done = true;
  batch_.clear();
  staged_keys_.clear();
  batch_compact_to_ = 0;
  batch_done_.NotifyAll();
  return events;
}

Result<StoredObject> SqliteStorage::Get(std::string_view key) const {
  ReaderMutexLock lock(state_mu_);
  auto it = objects_.find(key);
  if (it == objects_.end()) return NotFoundError("key " + std::string(key) + " not found");
  return it->second;
}

Result<ListResult> SqliteStorage::List(const ListOptions& options) const {
  if (options.revision < 0) {
    return BadRequestError("invalid resource version " + internal::RevisionText(options.revision));
  }
  const std::string_view prefix = options.prefix;
  ListResult result;
  // Adds one item; false once the page is full, after noting that more follow.
  auto take = [&](const StoredObject& object) {
    if (options.limit > 0 && static_cast<std::int64_t>(result.items.size()) >= options.limit) {
      result.more = true;
      return false;
    }
    result.items.push_back(object);
    return true;
  };

  ReaderMutexLock lock(state_mu_);
  const bool past = options.revision != 0 && options.revision != current_revision_;
  if (past && options.revision <= compacted_revision_) {
    return Status(StatusCode::kExpired, "The resourceVersion for the provided list is too old.");
  }
  if (past && options.revision > current_revision_) {
    return Status(StatusCode::kTimeout,
                  "Too large resource version: " + internal::RevisionText(options.revision) +
                      ", current: " + internal::RevisionText(current_revision_));
  }
  result.revision = past ? options.revision : current_revision_;

  auto it = !options.start_after.empty() && options.start_after >= prefix
                ? objects_.upper_bound(options.start_after)
                : objects_.lower_bound(prefix);
  const auto in_range = [&](decltype(it) at) SW_REQUIRES_SHARED(state_mu_) {
    return at != objects_.end() && at->first.starts_with(prefix);
  };
  if (!past) {
    for (; in_range(it); ++it) {
      if (!take(it->second)) break;
    }
    return result;
  }

  // The state at `revision` differs from now only in the keys written since. For each such key in
  // the range, the oldest later event's previous version (or absence, for kAdded) is what it was.
  std::map<std::string_view, std::optional<StoredObject>> then;
  const auto first_later = std::partition_point(
      history_.begin(), history_.end(),
      [&](const HistoryEntry& entry) { return entry.event->revision <= options.revision; });
  for (auto later = first_later; later != history_.end(); ++later) {
    const StorageEvent& event = *later->event;
    if (!event.key.starts_with(prefix) || !StartsAfter(event.key, options)) {
      continue;
    }
    if (event.type == EventType::kAdded) {
      then.try_emplace(event.key, std::nullopt);
    } else {
      then.try_emplace(event.key,
                       StoredObject{event.prev, later->create_revision, later->prev_mod_revision});
    }
  }
  auto changed = then.begin();
  while (in_range(it) || changed != then.end()) {
    const StoredObject* object = nullptr;
    if (changed == then.end() || (in_range(it) && it->first < changed->first)) {
      object = &it->second;
      ++it;
    } else {
      if (in_range(it) && it->first == changed->first) ++it;
      if (changed->second.has_value()) object = &*changed->second;
      ++changed;
    }
    if (object != nullptr && !take(*object)) break;
  }
  return result;
}

std::int64_t SqliteStorage::Count(std::string_view prefix) const {
  ReaderMutexLock lock(state_mu_);
  std::int64_t count = 0;
  for (auto it = objects_.lower_bound(prefix);
       it != objects_.end() && it->first.starts_with(prefix); ++it) {
    ++count;
  }
  return count;
}

Result<std::unique_ptr<WatchRegistration>> SqliteStorage::Watch(const WatchOptions& options,
                                                                std::shared_ptr<WatchSink> sink) {
  if (sink == nullptr) return InternalError("watching " + options.prefix + ": no sink");
  if (!options.initial_state && options.after_revision < 0) {
    return BadRequestError("invalid resource version " +
                           internal::RevisionText(options.after_revision));
  }
  const std::string_view prefix = options.prefix;
  std::vector<EventPtr> backlog;
  std::int64_t start_revision = 0;
  // The order lock keeps writers from appending or delivering until the sink is registered, so
  // the backlog and the live stream meet without a gap or an overlap.
  MutexLock order_lock(hub_->mu);
  {
    ReaderMutexLock state_lock(state_mu_);
    start_revision = current_revision_;
    if (options.initial_state) {
      // Delivered under the shared state lock, so nothing is copied: writers cannot be waiting for
      // it, since they apply a batch only while holding the order lock, and sinks never call back.
      for (auto it = objects_.lower_bound(prefix);
           it != objects_.end() && it->first.starts_with(prefix); ++it) {
        sink->OnInitialObject(it->first, it->second);
      }
    } else {
      if (options.after_revision < compacted_revision_) {
        return Status(
            StatusCode::kExpired,
            "too old resource version: " + internal::RevisionText(options.after_revision) + " (" +
                internal::RevisionText(compacted_revision_ + 1) + ")");
      }
      const auto first_later =
          std::partition_point(history_.begin(), history_.end(), [&](const HistoryEntry& entry) {
            return entry.event->revision <= options.after_revision;
          });
      for (auto it = first_later; it != history_.end(); ++it) {
        if (it->event->key.starts_with(prefix)) backlog.push_back(it->event);
      }
    }
  }
  for (const EventPtr& event : backlog) sink->OnEvent(event);
  const std::int64_t min_revision =
      options.initial_state ? start_revision : std::max(start_revision, options.after_revision);
  std::string bucket(internal::WatchHub::BucketOf(prefix));
  const std::uint64_t id = hub_->AddLocked(options.prefix, min_revision, std::move(sink));
  return std::unique_ptr<WatchRegistration>(
      std::make_unique<SqliteWatchRegistration>(hub_, std::move(bucket), id, start_revision));
}

std::int64_t SqliteStorage::CurrentRevision() const {
  ReaderMutexLock lock(state_mu_);
  return current_revision_;
}

std::int64_t SqliteStorage::DeliveredRevision() const {
  return hub_->delivered.load(std::memory_order_acquire);
}

std::int64_t SqliteStorage::CompactedRevision() const {
  ReaderMutexLock lock(state_mu_);
  return compacted_revision_;
}

}  // namespace slicewright::apiserver

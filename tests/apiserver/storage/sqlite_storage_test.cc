#include "apiserver/storage/sqlite_storage.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

namespace slicewright::apiserver {
namespace {

// A fresh directory per test, removed afterwards.
class TempDir {
 public:
  TempDir() {
    std::string templ = "/tmp/sw-storage-XXXXXX";
    char* made = mkdtemp(templ.data());
    if (made != nullptr) path_ = made;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// {"key":K,"rv":REV,"data":D}: carries its key (for continue points) and its revision, as the
// real records carry metadata.resourceVersion.
std::string Json(std::string_view key, std::int64_t revision, std::string_view data) {
  return std::string(R"({"key":")") + std::string(key) + R"(","rv":)" + std::to_string(revision) +
         R"(,"data":")" + std::string(data) + R"("})";
}

std::string KeyOf(const StoredObject& object) {
  const std::string& json = object.record->json;
  const std::size_t start = json.find(R"("key":")") + 7;
  return json.substr(start, json.find('"', start) - start);
}

using Pairs = std::vector<std::pair<std::string_view, std::string_view>>;

// Records written through the API carry the label written=api; Open's callback sets loaded=disk.
Storage::Render RenderJson(std::string key, std::string data = "x", int* calls = nullptr) {
  return [key = std::move(key), data = std::move(data), calls](std::int64_t revision) {
    if (calls != nullptr) ++*calls;
    auto record = std::make_shared<ObjectRecord>();
    record->json = Json(key, revision, data);
    record->attributes = ObjectAttributes::Builder()
                             .AddLabel("written", "api")
                             .AddField("metadata.name", key)
                             .Build();
    return Result<RecordPtr>(RecordPtr(std::move(record)));
  };
}

Result<ObjectAttributes> LoadAttributes(std::string_view key, std::string_view /*json*/) {
  return ObjectAttributes::Builder()
      .AddLabel("loaded", "disk")
      .AddField("metadata.name", key)
      .Build();
}

// Queues every event; delivery is synchronous, so a write has reached it once the write returns.
class RecordingSink final : public WatchSink {
 public:
  void OnEvent(const EventPtr& event) override {
    std::lock_guard lock(mu_);
    events_.push_back(event);
  }
  std::vector<EventPtr> events() const {
    std::lock_guard lock(mu_);
    return events_;
  }
  std::vector<std::int64_t> revisions() const {
    std::lock_guard lock(mu_);
    std::vector<std::int64_t> revisions;
    for (const EventPtr& event : events_) revisions.push_back(event->revision);
    return revisions;
  }

 private:
  mutable std::mutex mu_;
  std::vector<EventPtr> events_;
};

std::vector<std::int64_t> Range(std::int64_t first, std::int64_t last) {
  std::vector<std::int64_t> revisions;
  for (std::int64_t revision = first; revision <= last; ++revision) revisions.push_back(revision);
  return revisions;
}

// Option builders: designated initializers that skip fields trip -Wmissing-field-initializers.
ListOptions Listing(std::string prefix, std::int64_t revision = 0, std::string start_after = "",
                    std::int64_t limit = 0) {
  ListOptions options;
  options.prefix = std::move(prefix);
  options.revision = revision;
  options.start_after = std::move(start_after);
  options.limit = limit;
  return options;
}

WatchOptions Watching(std::string prefix, std::int64_t after_revision = 0,
                      bool initial_state = false) {
  WatchOptions options;
  options.prefix = std::move(prefix);
  options.after_revision = after_revision;
  options.initial_state = initial_state;
  return options;
}

class SqliteStorageTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_FALSE(temp_dir.path().empty()); }

  std::string DbPath() const { return temp_dir.path() + "/state.db"; }

  SqliteStorageOptions Options(std::int64_t history_events = 100000) const {
    SqliteStorageOptions options;
    options.path = DbPath();
    options.history_events = history_events;
    options.attributes = LoadAttributes;
    return options;
  }

  std::unique_ptr<SqliteStorage> OpenStore(std::int64_t history_events = 100000) {
    Result<std::unique_ptr<SqliteStorage>> opened = SqliteStorage::Open(Options(history_events));
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    return opened.ok() ? std::move(opened).value() : nullptr;
  }

  // Runs SQL on the closed database file, as a test fixture would tamper with it.
  void RunSql(const std::string& sql) const {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(DbPath().c_str(), &db), SQLITE_OK);
    char* error = nullptr;
    const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error);
    EXPECT_EQ(rc, SQLITE_OK) << (error != nullptr ? error : "");
    sqlite3_free(error);
    sqlite3_close(db);
  }

  std::int64_t QueryInt(const std::string& sql) const {
    sqlite3* db = nullptr;
    std::int64_t value = -1;
    if (sqlite3_open(DbPath().c_str(), &db) == SQLITE_OK) {
      sqlite3_stmt* stmt = nullptr;
      if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK &&
          sqlite3_step(stmt) == SQLITE_ROW) {
        value = sqlite3_column_int64(stmt, 0);
      }
      sqlite3_finalize(stmt);
    }
    sqlite3_close(db);
    return value;
  }

  TempDir temp_dir;
};

constexpr std::string_view kPods = "/registry/core/pods/";

std::string Pod(std::string_view name) { return std::string(kPods) + "ns/" + std::string(name); }

// Create, Get, Update and Delete keep create and mod revisions, and each write takes the next
// revision.
TEST_F(SqliteStorageTest, CrudAssignsIncreasingRevisions) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->CurrentRevision(), 0);

  ASSERT_EQ(store->Create(Pod("a"), RenderJson(Pod("a"))).value_or(-1), 1);
  ASSERT_EQ(store->Create(Pod("b"), RenderJson(Pod("b"))).value_or(-1), 2);
  ASSERT_EQ(store->Update(Pod("a"), 1, RenderJson(Pod("a"), "v2")).value_or(-1), 3);
  Result<StoredObject> a = store->Get(Pod("a"));
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->create_revision, 1);
  EXPECT_EQ(a->mod_revision, 3);
  EXPECT_EQ(a->record->json, Json(Pod("a"), 3, "v2"));
  EXPECT_EQ(a->record->attributes.Label("written"), "api");

  ASSERT_EQ(store->Update(Pod("a"), 0, RenderJson(Pod("a"), "v3")).value_or(-1), 4);
  ASSERT_EQ(store->Delete(Pod("a"), 4, RenderJson(Pod("a"), "final")).value_or(-1), 5);
  Result<StoredObject> gone = store->Get(Pod("a"));
  EXPECT_EQ(gone.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(gone.status().message(), "key /registry/core/pods/ns/a not found");
  EXPECT_EQ(store->CurrentRevision(), 5);
  // One writer: each write was fanned out to the (no) sinks before it returned.
  EXPECT_EQ(store->DeliveredRevision(), 5);
  EXPECT_EQ(store->CompactedRevision(), 0);
}

// Failed preconditions return AlreadyExists, NotFound or Conflict without rendering or writing.
TEST_F(SqliteStorageTest, FailedPreconditionsWriteNothing) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Create(Pod("a"), RenderJson(Pod("a"))).ok());
  int renders = 0;

  Result<std::int64_t> exists = store->Create(Pod("a"), RenderJson(Pod("a"), "x", &renders));
  EXPECT_EQ(exists.status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(exists.status().message(), "key /registry/core/pods/ns/a already exists");

  for (bool update : {true, false}) {
    SCOPED_TRACE(update ? "update" : "delete");
    Result<std::int64_t> missing =
        update ? store->Update(Pod("zz"), 0, RenderJson(Pod("zz"), "x", &renders))
               : store->Delete(Pod("zz"), 0, RenderJson(Pod("zz"), "x", &renders));
    EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
    EXPECT_EQ(missing.status().message(), "key /registry/core/pods/ns/zz not found");

    Result<std::int64_t> conflict =
        update ? store->Update(Pod("a"), 7, RenderJson(Pod("a"), "x", &renders))
               : store->Delete(Pod("a"), 7, RenderJson(Pod("a"), "x", &renders));
    EXPECT_EQ(conflict.status().code(), StatusCode::kConflict);
    EXPECT_EQ(conflict.status().message(),
              "key /registry/core/pods/ns/a has mod revision 1, not the expected 7");
  }
  EXPECT_EQ(renders, 0);
  EXPECT_EQ(store->CurrentRevision(), 1);
  EXPECT_EQ(store->Get(Pod("a"))->record->json, Json(Pod("a"), 1, "x"));
}

// Render sees the revision the write gets; its error is returned unchanged and nothing is
// written, so the next write gets that revision.
TEST_F(SqliteStorageTest, RenderErrorAbortsTheWrite) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  auto sink = std::make_shared<RecordingSink>();
  auto watch = store->Watch(Watching("/"), sink);
  ASSERT_TRUE(watch.ok());

  std::int64_t seen = 0;
  Result<std::int64_t> failed =
      store->Create(Pod("a"), [&seen](std::int64_t revision) -> Result<RecordPtr> {
        seen = revision;
        return InvalidError("metadata.name: Required value");
      });
  EXPECT_EQ(seen, 1);
  EXPECT_EQ(failed.status().code(), StatusCode::kInvalid);
  EXPECT_EQ(failed.status().message(), "metadata.name: Required value");
  EXPECT_EQ(store->CurrentRevision(), 0);
  EXPECT_EQ(store->Get(Pod("a")).status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(sink->events().empty());

  Result<std::int64_t> null_record =
      store->Create(Pod("a"), [](std::int64_t) { return Result<RecordPtr>(RecordPtr()); });
  EXPECT_EQ(null_record.status().code(), StatusCode::kInternal);
  EXPECT_EQ(null_record.status().message(),
            "rendering /registry/core/pods/ns/a at revision 1 returned no record");

  EXPECT_EQ(store->Create(Pod("a"), RenderJson(Pod("a"))).value_or(-1), 1);
  EXPECT_EQ(sink->revisions(), std::vector<std::int64_t>{1});
}

// List honours the prefix, start_after and limit, and sets `more` only when keys follow.
TEST_F(SqliteStorageTest, ListFiltersByPrefixAndPaginates) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  for (const char* name : {"e", "b", "d", "a", "c"}) {
    ASSERT_TRUE(store->Create(Pod(name), RenderJson(Pod(name))).ok());
  }
  ASSERT_TRUE(store->Create("/registry/core/pods2/x", RenderJson("/registry/core/pods2/x")).ok());
  ASSERT_TRUE(store->Create("/registry/core/aaa/x", RenderJson("/registry/core/aaa/x")).ok());

  auto keys = [](const ListResult& list) {
    std::vector<std::string> listed;
    for (const StoredObject& item : list.items) listed.push_back(KeyOf(item));
    return listed;
  };
  Result<ListResult> all = store->List(Listing(std::string(kPods), 0));
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(keys(*all),
            (std::vector<std::string>{Pod("a"), Pod("b"), Pod("c"), Pod("d"), Pod("e")}));
  EXPECT_FALSE(all->more);
  EXPECT_EQ(all->revision, 7);

  Result<ListResult> first = store->List(Listing(std::string(kPods), 0, "", 2));
  EXPECT_EQ(keys(*first), (std::vector<std::string>{Pod("a"), Pod("b")}));
  EXPECT_TRUE(first->more);
  Result<ListResult> second = store->List(Listing(std::string(kPods), 0, Pod("b"), 3));
  EXPECT_EQ(keys(*second), (std::vector<std::string>{Pod("c"), Pod("d"), Pod("e")}));
  EXPECT_FALSE(second->more);
  Result<ListResult> past_end = store->List(Listing(std::string(kPods), 0, Pod("e"), 3));
  EXPECT_TRUE(past_end->items.empty());
  EXPECT_FALSE(past_end->more);
  // A continue point before the prefix starts at the prefix.
  Result<ListResult> before = store->List(Listing(std::string(kPods), 0, "/a", 0));
  EXPECT_EQ(before->items.size(), 5U);
  Result<ListResult> everything = store->List(Listing(""));
  EXPECT_EQ(everything->items.size(), 7U);
}

// Count counts the keys under a prefix only.
TEST_F(SqliteStorageTest, CountsKeysUnderPrefix) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  for (const char* name : {"a", "b", "c"}) {
    ASSERT_TRUE(store->Create(Pod(name), RenderJson(Pod(name))).ok());
  }
  ASSERT_TRUE(store->Create("/registry/core/pods2/x", RenderJson("/registry/core/pods2/x")).ok());
  ASSERT_TRUE(store->Delete(Pod("b"), 0, RenderJson(Pod("b"))).ok());
  EXPECT_EQ(store->Count(kPods), 2);
  EXPECT_EQ(store->Count("/registry/core/pods"), 3);
  EXPECT_EQ(store->Count("/registry/none/"), 0);
  EXPECT_EQ(store->Count(""), 3);
}

struct Expected {
  std::string json;
  std::int64_t create_revision = 0;
  std::int64_t mod_revision = 0;
  bool operator==(const Expected&) const = default;
};
using State = std::map<std::string, Expected>;

// A list at any kept past revision equals the state at that revision (keys, bytes, revisions),
// whole and page by page, including after compaction; older revisions are expired.
TEST_F(SqliteStorageTest, ListAtPastRevisionRebuildsThatState) {
  const std::uint32_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  auto store = OpenStore(/*history_events=*/150);
  ASSERT_NE(store, nullptr);
  const std::string prefix = "/registry/g/a/";
  std::map<std::int64_t, State> states;  // revision -> state under `prefix`
  State state;
  for (int i = 0; i < 400; ++i) {
    const bool in_prefix = rng() % 4 != 0;
    const std::string key =
        (in_prefix ? prefix : std::string("/registry/g/b/")) + "k" + std::to_string(rng() % 15);
    const std::string data = "d" + std::to_string(i);
    Result<StoredObject> current = store->Get(key);
    Result<std::int64_t> revision = -1;
    if (!current.ok()) {
      revision = store->Create(key, RenderJson(key, data));
    } else if (rng() % 3 == 0) {
      revision = store->Delete(key, 0, RenderJson(key, data));
    } else {
      revision = store->Update(key, current->mod_revision, RenderJson(key, data));
    }
    ASSERT_TRUE(revision.ok()) << revision.status().ToString();
    if (in_prefix) {
      if (!current.ok()) {
        state[key] = {Json(key, *revision, data), *revision, *revision};
      } else if (store->Get(key).ok()) {
        state[key] = {Json(key, *revision, data), current->create_revision, *revision};
      } else {
        state.erase(key);
      }
    }
    states[*revision] = state;
  }
  const std::int64_t compacted = store->CompactedRevision();
  ASSERT_GT(compacted, 0);

  auto to_state = [](const std::vector<StoredObject>& items) {
    State listed;
    for (const StoredObject& item : items) {
      listed[KeyOf(item)] = {item.record->json, item.create_revision, item.mod_revision};
    }
    return listed;
  };
  for (std::int64_t revision = compacted + 1; revision <= store->CurrentRevision(); ++revision) {
    SCOPED_TRACE("revision " + std::to_string(revision));
    Result<ListResult> whole = store->List(Listing(prefix, revision));
    ASSERT_TRUE(whole.ok()) << whole.status().ToString();
    EXPECT_EQ(whole->revision, revision);
    EXPECT_EQ(to_state(whole->items), states[revision]);
    EXPECT_FALSE(whole->more);

    std::vector<StoredObject> paged;
    std::string start_after;
    for (int page = 0; page < 20; ++page) {
      Result<ListResult> part = store->List(Listing(prefix, revision, start_after, 4));
      ASSERT_TRUE(part.ok());
      paged.insert(paged.end(), part->items.begin(), part->items.end());
      if (!part->more) break;
      ASSERT_EQ(part->items.size(), 4U);
      start_after = KeyOf(part->items.back());
    }
    EXPECT_EQ(to_state(paged), states[revision]);
  }

  Result<ListResult> expired = store->List(Listing(prefix, compacted));
  EXPECT_EQ(expired.status().code(), StatusCode::kExpired);
  EXPECT_EQ(expired.status().message(), "The resourceVersion for the provided list is too old.");
}

// A future list revision times out as "Too large resource version"; a negative one is bad input.
TEST_F(SqliteStorageTest, ListAtFutureRevisionFails) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Create(Pod("a"), RenderJson(Pod("a"))).ok());
  Result<ListResult> future = store->List(Listing("/", 5));
  EXPECT_EQ(future.status().code(), StatusCode::kTimeout);
  EXPECT_EQ(future.status().message(), "Too large resource version: 5, current: 1");
  Result<ListResult> negative = store->List(Listing("/", -2));
  EXPECT_EQ(negative.status().code(), StatusCode::kBadRequest);
  EXPECT_EQ(negative.status().message(), "invalid resource version -2");
  EXPECT_EQ(store->List(Listing("/", 1))->items.size(), 1U);
}

// A watch gets the backlog after its revision under its prefix, then live events, with the
// previous version on updates and deletes.
TEST_F(SqliteStorageTest, WatchDeliversBacklogThenLiveEvents) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Create(Pod("a"), RenderJson(Pod("a"))).ok());                    // 1
  ASSERT_TRUE(store->Create("/registry/x/y/z", RenderJson("/registry/x/y/z")).ok());  // 2
  ASSERT_TRUE(store->Update(Pod("a"), 0, RenderJson(Pod("a"), "v2")).ok());           // 3
  auto sink = std::make_shared<RecordingSink>();
  auto watch = store->Watch(Watching(std::string(kPods), 1), sink);
  ASSERT_TRUE(watch.ok());
  EXPECT_EQ((*watch)->start_revision(), 3);
  EXPECT_EQ(sink->revisions(), std::vector<std::int64_t>{3});

  ASSERT_TRUE(store->Create("/registry/x/y/w", RenderJson("/registry/x/y/w")).ok());  // 4
  ASSERT_TRUE(store->Delete(Pod("a"), 3, RenderJson(Pod("a"), "bye")).ok());          // 5
  std::vector<EventPtr> events = sink->events();
  ASSERT_EQ(events.size(), 2U);
  EXPECT_EQ(events[0]->type, EventType::kModified);
  EXPECT_EQ(events[0]->record->json, Json(Pod("a"), 3, "v2"));
  EXPECT_EQ(events[0]->prev->json, Json(Pod("a"), 1, "x"));
  EXPECT_EQ(events[1]->type, EventType::kDeleted);
  EXPECT_EQ(events[1]->revision, 5);
  EXPECT_EQ(events[1]->key, Pod("a"));
  EXPECT_EQ(events[1]->record->json, Json(Pod("a"), 5, "bye"));
  EXPECT_EQ(events[1]->prev->json, Json(Pod("a"), 3, "v2"));

  // A future revision skips events up to it.
  auto future_sink = std::make_shared<RecordingSink>();
  auto future = store->Watch(Watching("/", 6), future_sink);
  ASSERT_TRUE(future.ok());
  ASSERT_TRUE(store->Create(Pod("b"), RenderJson(Pod("b"))).ok());  // 6
  ASSERT_TRUE(store->Create(Pod("c"), RenderJson(Pod("c"))).ok());  // 7
  EXPECT_EQ(future_sink->revisions(), std::vector<std::int64_t>{7});
}

// initial_state sends the current objects under the prefix as kAdded in key order with their
// own mod revisions, then live events; start_revision is the store's revision.
TEST_F(SqliteStorageTest, WatchWithInitialStateSendsCurrentObjectsFirst) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Create(Pod("b"), RenderJson(Pod("b"))).ok());                    // 1
  ASSERT_TRUE(store->Create(Pod("a"), RenderJson(Pod("a"))).ok());                    // 2
  ASSERT_TRUE(store->Create("/registry/x/y/z", RenderJson("/registry/x/y/z")).ok());  // 3
  ASSERT_TRUE(store->Update(Pod("b"), 0, RenderJson(Pod("b"), "v2")).ok());           // 4
  ASSERT_TRUE(store->Create(Pod("c"), RenderJson(Pod("c"))).ok());                    // 5
  ASSERT_TRUE(store->Delete(Pod("c"), 0, RenderJson(Pod("c"))).ok());                 // 6
  auto sink = std::make_shared<RecordingSink>();
  auto watch = store->Watch(Watching(std::string(kPods), 0, true), sink);
  ASSERT_TRUE(watch.ok());
  EXPECT_EQ((*watch)->start_revision(), 6);
  std::vector<EventPtr> events = sink->events();
  ASSERT_EQ(events.size(), 2U);
  EXPECT_EQ(events[0]->key, Pod("a"));
  EXPECT_EQ(events[0]->revision, 2);
  EXPECT_EQ(events[0]->type, EventType::kAdded);
  EXPECT_EQ(events[1]->key, Pod("b"));
  EXPECT_EQ(events[1]->revision, 4);
  EXPECT_EQ(events[1]->record->json, Json(Pod("b"), 4, "v2"));
  EXPECT_EQ(events[1]->prev, nullptr);

  ASSERT_TRUE(store->Create(Pod("d"), RenderJson(Pod("d"))).ok());  // 7
  EXPECT_EQ(sink->revisions(), (std::vector<std::int64_t>{2, 4, 7}));
}

// Dropping the registration unregisters the sink: later writes do not reach it.
TEST_F(SqliteStorageTest, DroppingRegistrationStopsDelivery) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  auto sink = std::make_shared<RecordingSink>();
  auto other = std::make_shared<RecordingSink>();
  auto watch = store->Watch(Watching(std::string(kPods)), sink);
  auto kept = store->Watch(Watching(std::string(kPods)), other);
  ASSERT_TRUE(watch.ok() && kept.ok());
  ASSERT_TRUE(store->Create(Pod("a"), RenderJson(Pod("a"))).ok());
  watch->reset();
  ASSERT_TRUE(store->Create(Pod("b"), RenderJson(Pod("b"))).ok());
  EXPECT_EQ(sink->revisions(), std::vector<std::int64_t>{1});
  EXPECT_EQ(other->revisions(), (std::vector<std::int64_t>{1, 2}));
  EXPECT_EQ(sink.use_count(), 1);  // the store let go of it
}

// Sinks see exactly the keys under their prefix, whatever its shape (bucketed by the last '/').
TEST_F(SqliteStorageTest, WatchPrefixesOfEveryShapeMatchExactly) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const std::vector<std::string> prefixes = {"",
                                             "/",
                                             "/registry/core/",
                                             "/registry/core/pods/",
                                             "/registry/core/pods/ns/a",
                                             "/registry/core/pods/ns/",
                                             "/registry/core/po",
                                             "/registry/apps/deployments/",
                                             "zzz"};
  std::vector<std::shared_ptr<RecordingSink>> sinks;
  std::vector<std::unique_ptr<WatchRegistration>> watches;
  for (const std::string& prefix : prefixes) {
    sinks.push_back(std::make_shared<RecordingSink>());
    auto watch = store->Watch(Watching(prefix), sinks.back());
    ASSERT_TRUE(watch.ok());
    watches.push_back(std::move(watch).value());
  }
  const std::vector<std::string> keys = {Pod("a"),
                                         Pod("ab"),
                                         Pod("b"),
                                         "/registry/core/pods2/x",
                                         "/registry/apps/deployments/ns/d",
                                         "/registry/core/x"};
  for (const std::string& key : keys) ASSERT_TRUE(store->Create(key, RenderJson(key)).ok());
  for (std::size_t i = 0; i < prefixes.size(); ++i) {
    SCOPED_TRACE("prefix \"" + prefixes[i] + "\"");
    std::vector<std::string> got;
    for (const EventPtr& event : sinks[i]->events()) got.push_back(event->key);
    std::vector<std::string> want;
    for (const std::string& key : keys) {
      if (key.starts_with(prefixes[i])) want.push_back(key);
    }
    EXPECT_EQ(got, want);
  }
}

// Watching from before the compacted revision is expired and names the oldest revision left;
// watching from exactly the compacted revision gets every kept event.
TEST_F(SqliteStorageTest, WatchFromCompactedRevisionIsExpired) {
  auto store = OpenStore(/*history_events=*/10);
  ASSERT_NE(store, nullptr);
  for (int i = 0; i < 30; ++i) {
    const std::string key = Pod("k" + std::to_string(i));
    ASSERT_TRUE(store->Create(key, RenderJson(key)).ok());
  }
  const std::int64_t compacted = store->CompactedRevision();
  ASSERT_GT(compacted, 1);
  auto sink = std::make_shared<RecordingSink>();
  Result<std::unique_ptr<WatchRegistration>> expired =
      store->Watch(Watching("/", compacted - 1), sink);
  EXPECT_EQ(expired.status().code(), StatusCode::kExpired);
  EXPECT_EQ(expired.status().message(),
            "too old resource version: " + std::to_string(compacted - 1) + " (" +
                std::to_string(compacted + 1) + ")");
  EXPECT_TRUE(sink->events().empty());

  auto watch = store->Watch(Watching("/", compacted), sink);
  ASSERT_TRUE(watch.ok());
  EXPECT_EQ(sink->revisions(), Range(compacted + 1, 30));

  Result<std::unique_ptr<WatchRegistration>> negative = store->Watch(Watching("/", -1), sink);
  EXPECT_EQ(negative.status().code(), StatusCode::kBadRequest);
  EXPECT_EQ(negative.status().message(), "invalid resource version -1");
}

// Compaction keeps the history between history_events and the slack above it, in memory and on
// disk, and raises CompactedRevision to the newest dropped revision.
TEST_F(SqliteStorageTest, CompactionBoundsHistory) {
  {
    auto store = OpenStore(/*history_events=*/20);  // slack: 2
    ASSERT_NE(store, nullptr);
    std::int64_t last_compacted = 0;
    int raises = 0;
    for (int i = 0; i < 200; ++i) {
      ASSERT_TRUE(store->Create(Pod("k" + std::to_string(i)), RenderJson("k")).ok());
      const std::int64_t kept = store->CurrentRevision() - store->CompactedRevision();
      EXPECT_LE(kept, 22);
      if (store->CurrentRevision() > 22) {
        EXPECT_GE(kept, 20);
      }
      if (store->CompactedRevision() != last_compacted) ++raises;
      last_compacted = store->CompactedRevision();
    }
    EXPECT_EQ(store->CompactedRevision(), 200 - 20 - (200 - 20) % 3);
    EXPECT_LT(raises, 70);  // in batches, not on every write
  }
  EXPECT_EQ(QueryInt("SELECT count(*) FROM events"), 20 + (200 - 20) % 3);
  EXPECT_EQ(QueryInt("SELECT value FROM meta WHERE name = 'compacted_revision'"),
            200 - 20 - (200 - 20) % 3);
}

// Closing and reopening restores the objects (with attributes recomputed by the callback), both
// revisions and the history: a watch resumed from before the restart gets exactly the later events.
TEST_F(SqliteStorageTest, ReopenRestoresStateAndHistory) {
  std::vector<EventPtr> before_restart;
  std::int64_t current = 0;
  std::int64_t compacted = 0;
  {
    auto store = OpenStore(/*history_events=*/30);
    ASSERT_NE(store, nullptr);
    auto sink = std::make_shared<RecordingSink>();
    auto watch = store->Watch(Watching("/"), sink);
    for (int i = 0; i < 50; ++i) {
      const std::string key = Pod("k" + std::to_string(i % 7));
      if (!store->Get(key).ok()) {
        ASSERT_TRUE(store->Create(key, RenderJson(key, "c" + std::to_string(i))).ok());
      } else if (i % 5 == 0) {
        ASSERT_TRUE(store->Delete(key, 0, RenderJson(key, "d" + std::to_string(i))).ok());
      } else {
        ASSERT_TRUE(store->Update(key, 0, RenderJson(key, "u" + std::to_string(i))).ok());
      }
    }
    before_restart = sink->events();
    current = store->CurrentRevision();
    compacted = store->CompactedRevision();
    ASSERT_GT(compacted, 0);
  }
  auto store = OpenStore(/*history_events=*/30);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->CurrentRevision(), current);
  EXPECT_EQ(store->DeliveredRevision(), current);  // nothing is left to fan out after a restart
  EXPECT_EQ(store->CompactedRevision(), compacted);

  // Replaying every event gives the objects the reopened store must hold.
  State want;
  for (const EventPtr& event : before_restart) {
    if (event->type == EventType::kDeleted) {
      want.erase(event->key);
    } else {
      const std::int64_t created =
          event->type == EventType::kAdded ? event->revision : want[event->key].create_revision;
      want[event->key] = {event->record->json, created, event->revision};
    }
  }
  Result<ListResult> list = store->List(Listing("/", 0));
  ASSERT_TRUE(list.ok());
  State got;
  for (const StoredObject& item : list->items) {
    got[KeyOf(item)] = {item.record->json, item.create_revision, item.mod_revision};
    // The attributes written with the object come back from disk; Open parses nothing.
    EXPECT_EQ(item.record->attributes.Labels(), (Pairs{{"written", "api"}}));
    EXPECT_EQ(item.record->attributes.Fields(), (Pairs{{"metadata.name", KeyOf(item)}}));
  }
  EXPECT_EQ(got, want);

  const std::int64_t resume = compacted + 3;
  auto sink = std::make_shared<RecordingSink>();
  auto watch = store->Watch(Watching("/", resume), sink);
  ASSERT_TRUE(watch.ok());
  std::vector<EventPtr> resumed = sink->events();
  std::vector<EventPtr> later;
  for (const EventPtr& event : before_restart) {
    if (event->revision > resume) later.push_back(event);
  }
  ASSERT_EQ(resumed.size(), later.size());
  for (std::size_t i = 0; i < later.size(); ++i) {
    SCOPED_TRACE("revision " + std::to_string(later[i]->revision));
    EXPECT_EQ(resumed[i]->revision, later[i]->revision);
    EXPECT_EQ(resumed[i]->type, later[i]->type);
    EXPECT_EQ(resumed[i]->key, later[i]->key);
    EXPECT_EQ(resumed[i]->record->json, later[i]->record->json);
    EXPECT_EQ(resumed[i]->record->attributes, later[i]->record->attributes);
    ASSERT_EQ(resumed[i]->prev == nullptr, later[i]->prev == nullptr);
    if (later[i]->prev != nullptr) {
      EXPECT_EQ(resumed[i]->prev->json, later[i]->prev->json);
      EXPECT_EQ(resumed[i]->prev->attributes, later[i]->prev->attributes);
    }
  }
  // The snapshot list still works across the restart.
  EXPECT_TRUE(store->List(Listing("/", compacted + 1)).ok());
  EXPECT_EQ(store->Create(Pod("new"), RenderJson(Pod("new"))).value_or(-1), current + 1);
}

// Deleting the newest key and restarting does not hand its revision out again, even when the
// history is compacted down to one event.
TEST_F(SqliteStorageTest, RevisionIsNotReusedAfterRestart) {
  for (std::int64_t history : {1, 100}) {
    SCOPED_TRACE("history_events " + std::to_string(history));
    {
      auto store = OpenStore(history);
      ASSERT_NE(store, nullptr);
      const std::int64_t base = store->CurrentRevision();
      ASSERT_EQ(store->Create(Pod("a"), RenderJson(Pod("a"))).value_or(-1), base + 1);
      ASSERT_EQ(store->Create(Pod("b"), RenderJson(Pod("b"))).value_or(-1), base + 2);
      ASSERT_EQ(store->Delete(Pod("b"), 0, RenderJson(Pod("b"))).value_or(-1), base + 3);
      ASSERT_EQ(store->Delete(Pod("a"), 0, RenderJson(Pod("a"))).value_or(-1), base + 4);
    }
    auto store = OpenStore(history);
    ASSERT_NE(store, nullptr);
    const std::int64_t current = store->CurrentRevision();
    EXPECT_EQ(store->Count("/"), 0);
    EXPECT_EQ(store->Create(Pod("c"), RenderJson(Pod("c"))).value_or(-1), current + 1);
    ASSERT_TRUE(store->Delete(Pod("c"), 0, RenderJson(Pod("c"))).ok());
  }
}

// Writers on several threads and watchers registered mid-stream: every watcher gets every
// matching revision after its start exactly once, in order.
TEST_F(SqliteStorageTest, ConcurrentWritersAndWatchersSeeEveryRevisionOnce) {
  auto store = OpenStore(/*history_events=*/100000);
  ASSERT_NE(store, nullptr);
  auto all = std::make_shared<RecordingSink>();
  auto all_watch = store->Watch(Watching("/"), all);
  ASSERT_TRUE(all_watch.ok());

  constexpr int kWriters = 4;
  constexpr int kWritesPerWriter = 300;
  std::atomic<int> running = kWriters;
  std::vector<std::thread> writers;
  writers.reserve(kWriters);
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      for (int i = 0; i < kWritesPerWriter; ++i) {
        const std::string key = std::string(w % 2 == 0 ? "/registry/g/a/" : "/registry/g/b/") +
                                "w" + std::to_string(w) + "-" + std::to_string(i % 10);
        Result<std::int64_t> written = store->Get(key).ok() ? store->Update(key, 0, RenderJson(key))
                                                            : store->Create(key, RenderJson(key));
        EXPECT_TRUE(written.ok()) << written.status().ToString();
      }
      --running;
    });
  }
  struct Watcher {
    std::string prefix;
    std::int64_t after = 0;
    bool initial_state = false;
    std::shared_ptr<RecordingSink> sink;
    std::unique_ptr<WatchRegistration> registration;
  };
  std::vector<Watcher> watchers;
  // Registers while the writers run (at least 4, at most 200 watchers).
  for (int i = 0; (running > 0 && i < 200) || i < 4; ++i) {
    Watcher watcher;
    watcher.prefix = i % 3 == 0 ? "/registry/g/" : "/registry/g/a/";
    watcher.initial_state = i % 4 == 3;
    watcher.after = std::max<std::int64_t>(0, store->CurrentRevision() - i % 5);
    watcher.sink = std::make_shared<RecordingSink>();
    auto registered =
        store->Watch(Watching(watcher.prefix, watcher.after, watcher.initial_state), watcher.sink);
    ASSERT_TRUE(registered.ok());
    watcher.registration = std::move(registered).value();
    watchers.push_back(std::move(watcher));
    std::this_thread::yield();
  }
  for (std::thread& writer : writers) writer.join();

  const std::vector<EventPtr> history = all->events();
  ASSERT_EQ(all->revisions(), Range(1, std::int64_t{kWriters} * kWritesPerWriter));
  for (const Watcher& watcher : watchers) {
    const std::vector<EventPtr> got = watcher.sink->events();
    std::size_t skip = 0;
    std::int64_t after = watcher.after;
    if (watcher.initial_state) {
      // The initial objects: one per key in key order, then live events after start_revision.
      after = watcher.registration->start_revision();
      std::map<std::string, std::int64_t> state;
      for (const EventPtr& event : history) {
        if (event->revision <= after && event->key.starts_with(watcher.prefix)) {
          state[event->key] = event->revision;
        }
      }
      ASSERT_GE(got.size(), state.size());
      for (const auto& [key, revision] : state) {
        EXPECT_EQ(got[skip]->key, key);
        EXPECT_EQ(got[skip]->revision, revision);
        ++skip;
      }
    }
    std::vector<std::int64_t> want;
    for (const EventPtr& event : history) {
      if (event->revision > after && event->key.starts_with(watcher.prefix)) {
        want.push_back(event->revision);
      }
    }
    std::vector<std::int64_t> live;
    for (std::size_t i = skip; i < got.size(); ++i) live.push_back(got[i]->revision);
    EXPECT_EQ(live, want) << "watcher " << watcher.prefix << " after " << watcher.after;
  }
}

// Every write the child acknowledged before kill -9 is there after reopening, with its revision.
TEST_F(SqliteStorageTest, AcknowledgedWritesSurviveKill9) {
  std::array<int, 2> fds{};
  ASSERT_EQ(pipe(fds.data()), 0);
  const std::string payload(1500, 'p');
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  // Kills and reaps the child if an assertion returns early, so no writer outlives the test.
  struct Reaper {
    pid_t pid;
    ~Reaper() {
      if (pid > 0) {
        kill(pid, SIGKILL);
        waitpid(pid, nullptr, 0);
      }
    }
  } reaper{pid};
  if (pid == 0) {
    close(fds[0]);
    Result<std::unique_ptr<SqliteStorage>> child = SqliteStorage::Open(Options());
    if (!child.ok()) _exit(2);
    for (int i = 0; i < 1000000; ++i) {
      const std::string key = Pod("k" + std::to_string(i));
      Result<std::int64_t> revision = (*child)->Create(key, RenderJson(key, payload));
      if (!revision.ok()) _exit(3);
      const std::string line = std::to_string(*revision) + " " + key + "\n";
      std::size_t sent = 0;
      while (sent < line.size()) {
        const ssize_t n = write(fds[1], line.data() + sent, line.size() - sent);
        if (n <= 0) _exit(4);
        sent += static_cast<std::size_t>(n);
      }
    }
    _exit(0);
  }
  close(fds[1]);
  std::string received;
  std::size_t lines = 0;
  bool killed = false;
  std::array<char, 4096> buffer{};
  for (;;) {
    const ssize_t n = read(fds[0], buffer.data(), buffer.size());
    if (n <= 0) break;
    received.append(buffer.data(), static_cast<std::size_t>(n));
    lines = static_cast<std::size_t>(std::count(received.begin(), received.end(), '\n'));
    if (!killed && lines >= 500) {
      ASSERT_EQ(kill(pid, SIGKILL), 0);
      killed = true;
    }
  }
  close(fds[0]);
  int wait_status = 0;
  ASSERT_EQ(waitpid(pid, &wait_status, 0), pid);
  reaper.pid = 0;
  ASSERT_TRUE(WIFSIGNALED(wait_status)) << "child exit status " << WEXITSTATUS(wait_status);
  EXPECT_EQ(WTERMSIG(wait_status), SIGKILL);

  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  std::int64_t last = 0;
  std::size_t checked = 0;
  std::size_t start = 0;
  for (std::size_t end = received.find('\n'); end != std::string::npos;
       start = end + 1, end = received.find('\n', start)) {
    const std::string line = received.substr(start, end - start);
    const std::size_t space = line.find(' ');
    const std::int64_t revision = std::stoll(line.substr(0, space));
    const std::string key = line.substr(space + 1);
    EXPECT_EQ(revision, last + 1);
    last = revision;
    Result<StoredObject> object = store->Get(key);
    ASSERT_TRUE(object.ok()) << key << " acknowledged at revision " << revision << " is lost";
    EXPECT_EQ(object->mod_revision, revision);
    EXPECT_EQ(object->record->json, Json(key, revision, payload));
    ++checked;
  }
  EXPECT_GE(checked, 500U);
  EXPECT_GE(store->CurrentRevision(), last);
  std::printf("kill -9 after %zu acknowledged writes; %lld committed\n", checked,
              static_cast<long long>(store->CurrentRevision()));
}

// A write whose SQLite transaction fails returns kInternal with SQLite's message and leaves
// memory, disk and watchers as they were.
TEST_F(SqliteStorageTest, FailedCommitLeavesStoreUntouched) {
  {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
  }
  RunSql(
      "CREATE TRIGGER poison BEFORE INSERT ON events WHEN CAST(NEW.value AS TEXT) LIKE '%poison%' "
      "BEGIN SELECT RAISE(ABORT, 'injected failure'); END;");
  {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    auto sink = std::make_shared<RecordingSink>();
    auto watch = store->Watch(Watching("/"), sink);
    ASSERT_EQ(store->Create(Pod("a"), RenderJson(Pod("a"), "good")).value_or(-1), 1);

    Result<std::int64_t> created = store->Create(Pod("b"), RenderJson(Pod("b"), "poison"));
    EXPECT_EQ(created.status().code(), StatusCode::kInternal);
    EXPECT_EQ(created.status().message(), "writing revision 2 of /registry/core/pods/ns/b in " +
                                              DbPath() + ": injected failure");
    Result<std::int64_t> updated = store->Update(Pod("a"), 1, RenderJson(Pod("a"), "poison"));
    EXPECT_EQ(updated.status().code(), StatusCode::kInternal);
    Result<std::int64_t> deleted = store->Delete(Pod("a"), 1, RenderJson(Pod("a"), "poison"));
    EXPECT_EQ(deleted.status().code(), StatusCode::kInternal);

    EXPECT_EQ(store->CurrentRevision(), 1);
    EXPECT_EQ(store->Get(Pod("b")).status().code(), StatusCode::kNotFound);
    EXPECT_EQ(store->Get(Pod("a"))->record->json, Json(Pod("a"), 1, "good"));
    EXPECT_EQ(store->Get(Pod("a"))->mod_revision, 1);
    EXPECT_EQ(sink->revisions(), std::vector<std::int64_t>{1});
    EXPECT_EQ(store->Create(Pod("c"), RenderJson(Pod("c"), "fine")).value_or(-1), 2);
  }
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->CurrentRevision(), 2);
  EXPECT_EQ(store->Get(Pod("b")).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store->Get(Pod("a"))->record->json, Json(Pod("a"), 1, "good"));
}

// Group commit: concurrent writers share transactions. A write that fails inside a shared batch
// fails alone: every other write is acknowledged, revisions stay contiguous (a failed write's
// revision goes to the next one), watchers see exactly the acknowledged writes in order, and the
// reopened database holds exactly them.
TEST_F(SqliteStorageTest, ConcurrentBatchedWritesFailAlone) {
  {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
  }
  RunSql(
      "CREATE TRIGGER poison BEFORE INSERT ON events WHEN CAST(NEW.value AS TEXT) LIKE '%poison%' "
      "BEGIN SELECT RAISE(ABORT, 'injected failure'); END;");
  constexpr int kWriters = 8;
  constexpr int kWritesPerWriter = 120;
  std::map<std::string, std::int64_t> acknowledged;  // key -> revision
  int failed = 0;
  {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    auto sink = std::make_shared<RecordingSink>();
    auto watch = store->Watch(Watching("/"), sink);
    ASSERT_TRUE(watch.ok());
    std::mutex results_mu;
    std::vector<std::thread> writers;
    writers.reserve(kWriters);
    for (int w = 0; w < kWriters; ++w) {
      writers.emplace_back([&, w] {
        for (int i = 0; i < kWritesPerWriter; ++i) {
          const std::string key = Pod("w" + std::to_string(w) + "-" + std::to_string(i));
          const bool poisoned = (w * kWritesPerWriter + i) % 7 == 3;
          Result<std::int64_t> created =
              store->Create(key, RenderJson(key, poisoned ? "poison" : "fine"));
          std::lock_guard lock(results_mu);
          if (poisoned) {
            EXPECT_EQ(created.status().code(), StatusCode::kInternal) << key;
            ++failed;
          } else if (created.ok()) {
            acknowledged[key] = *created;
          } else {
            ADD_FAILURE() << key << ": " << created.status().ToString();
          }
        }
      });
    }
    for (std::thread& writer : writers) writer.join();

    std::vector<std::int64_t> revisions;
    for (const auto& [key, revision] : acknowledged) revisions.push_back(revision);
    std::sort(revisions.begin(), revisions.end());
    ASSERT_EQ(revisions, Range(1, static_cast<std::int64_t>(acknowledged.size())));
    EXPECT_EQ(store->CurrentRevision(), static_cast<std::int64_t>(acknowledged.size()));
    EXPECT_EQ(sink->revisions(), revisions);
    for (const EventPtr& event : sink->events()) {
      EXPECT_EQ(acknowledged.at(event->key), event->revision);
    }
  }
  int poisoned = 0;
  for (int n = 0; n < kWriters * kWritesPerWriter; ++n) poisoned += n % 7 == 3 ? 1 : 0;
  EXPECT_EQ(failed, poisoned);
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  Result<ListResult> listed = store->List(Listing(std::string(kPods)));
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->items.size(), acknowledged.size());
  for (const StoredObject& object : listed->items) {
    const std::string key = KeyOf(object);
    ASSERT_TRUE(acknowledged.contains(key)) << key;
    EXPECT_EQ(object.mod_revision, acknowledged.at(key));
    EXPECT_EQ(object.record->json, Json(key, acknowledged.at(key), "fine"));
  }
}

// Read-modify-write on one key from many threads, retrying on conflict as the API server does:
// no increment is lost even though the writers' batches overlap.
TEST_F(SqliteStorageTest, ConcurrentCompareAndSwapOnOneKeyLosesNothing) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const std::string key = Pod("counter");
  ASSERT_TRUE(store->Create(key, RenderJson(key, "0")).ok());
  constexpr int kWriters = 6;
  constexpr int kIncrements = 60;
  std::vector<std::thread> writers;
  writers.reserve(kWriters);
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      // Other keys too, so batches hold more than the counter.
      const std::string own = Pod("own-" + std::to_string(w));
      ASSERT_TRUE(store->Create(own, RenderJson(own)).ok());
      for (int i = 0; i < kIncrements; ++i) {
        for (;;) {
          Result<StoredObject> current = store->Get(key);
          ASSERT_TRUE(current.ok());
          const std::string& json = current->record->json;
          const std::size_t at = json.find(R"("data":")") + 8;
          const int value = std::stoi(json.substr(at, json.find('"', at) - at));
          Result<std::int64_t> written =
              store->Update(key, current->mod_revision, RenderJson(key, std::to_string(value + 1)));
          if (written.ok()) break;
          ASSERT_EQ(written.status().code(), StatusCode::kConflict);
        }
        ASSERT_TRUE(store->Update(own, 0, RenderJson(own)).ok());
      }
    });
  }
  for (std::thread& writer : writers) writer.join();
  Result<StoredObject> counter = store->Get(key);
  ASSERT_TRUE(counter.ok());
  EXPECT_EQ(counter->record->json,
            Json(key, counter->mod_revision, std::to_string(kWriters * kIncrements)));
  EXPECT_EQ(store->CurrentRevision(), 1 + kWriters + 2 * kWriters * kIncrements);
}

// A record the attributes callback rejects fails Open with kDataLoss naming key and revision.
TEST_F(SqliteStorageTest, UnloadableRowFailsOpenWithDataLoss) {
  {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->Create(Pod("a"), RenderJson(Pod("a"))).ok());
    ASSERT_TRUE(store->Create(Pod("bad"), RenderJson(Pod("bad"))).ok());
  }
  // Rows without stored attributes (as schema 1 wrote them) get theirs from the callback.
  RunSql("UPDATE objects SET attrs = NULL; UPDATE events SET attrs = NULL, prev_attrs = NULL");
  SqliteStorageOptions options = Options();
  options.attributes = [](std::string_view key, std::string_view json) {
    if (key.ends_with("/bad")) return Result<ObjectAttributes>(InvalidError("unexpected token"));
    return LoadAttributes(key, json);
  };
  Result<std::unique_ptr<SqliteStorage>> opened = SqliteStorage::Open(options);
  EXPECT_EQ(opened.status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(opened.status().message(),
            "loading /registry/core/pods/ns/bad at revision 2: unexpected token");
}

// Options that cannot work are rejected before touching the disk.
TEST_F(SqliteStorageTest, BadOptionsAreInvalid) {
  SqliteStorageOptions options = Options(/*history_events=*/0);
  Result<std::unique_ptr<SqliteStorage>> zero = SqliteStorage::Open(options);
  EXPECT_EQ(zero.status().code(), StatusCode::kInvalid);
  EXPECT_EQ(zero.status().message(), "history_events must be at least 1, got 0");
  options = Options();
  options.path.clear();
  Result<std::unique_ptr<SqliteStorage>> empty = SqliteStorage::Open(options);
  EXPECT_EQ(empty.status().code(), StatusCode::kInvalid);
  EXPECT_EQ(empty.status().message(), "the storage path is empty");
  EXPECT_FALSE(std::filesystem::exists(DbPath()));
}

// A missing data directory, or one that is a file, is named in the error.
TEST_F(SqliteStorageTest, MissingDataDirectoryIsNamed) {
  SqliteStorageOptions options = Options();
  options.path = temp_dir.path() + "/missing/state.db";
  Result<std::unique_ptr<SqliteStorage>> missing = SqliteStorage::Open(options);
  EXPECT_EQ(missing.status().code(), StatusCode::kInvalid);
  EXPECT_EQ(missing.status().message(), "the data directory " + temp_dir.path() + "/missing of " +
                                            options.path + " does not exist");

  RunSql("CREATE TABLE t(x)");  // makes DbPath() a regular file
  options.path = DbPath() + "/state.db";
  Result<std::unique_ptr<SqliteStorage>> file = SqliteStorage::Open(options);
  EXPECT_EQ(file.status().code(), StatusCode::kInvalid);
  EXPECT_EQ(file.status().message(),
            "the data directory " + DbPath() + " of " + options.path + " is not a directory");
}

// A directory the process cannot create files in fails with the path and the OS reason.
TEST_F(SqliteStorageTest, UnwritableDirectoryIsNamed) {
  // Root ignores permission bits; sysfs refuses new files even to root.
  const std::string dir = geteuid() == 0 ? "/sys" : temp_dir.path() + "/ro";
  if (geteuid() != 0) {
    ASSERT_TRUE(std::filesystem::create_directory(dir));
    std::filesystem::permissions(
        dir, std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
  }
  SqliteStorageOptions options = Options();
  options.path = dir + "/state.db";
  Result<std::unique_ptr<SqliteStorage>> opened = SqliteStorage::Open(options);
  EXPECT_EQ(opened.status().code(), StatusCode::kInternal);
  EXPECT_EQ(opened.status().message(),
            "cannot create database " + options.path + ": Permission denied");
}

// A file that is not a SQLite database fails Open with kDataLoss, and the file is left alone.
TEST_F(SqliteStorageTest, FileThatIsNotADatabaseIsDataLoss) {
  const std::string garbage =
      "this is not a database, just text that is long enough. " + std::string(2000, 'z');
  {
    std::FILE* file = std::fopen(DbPath().c_str(), "wb");
    ASSERT_NE(file, nullptr);
    ASSERT_EQ(std::fwrite(garbage.data(), 1, garbage.size(), file), garbage.size());
    std::fclose(file);
  }
  Result<std::unique_ptr<SqliteStorage>> opened = SqliteStorage::Open(Options());
  EXPECT_EQ(opened.status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(opened.status().message(), "opening database " + DbPath() + ": file is not a database");
  EXPECT_EQ(std::filesystem::file_size(DbPath()), garbage.size());
}

// A second store on the same database is refused while the first has it open.
TEST_F(SqliteStorageTest, SecondOpenOfSameDatabaseIsUnavailable) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Create(Pod("a"), RenderJson(Pod("a"))).ok());
  Result<std::unique_ptr<SqliteStorage>> second = SqliteStorage::Open(Options());
  EXPECT_EQ(second.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(second.status().message(), "opening database " + DbPath() + ": database is locked");
  store.reset();
  EXPECT_TRUE(SqliteStorage::Open(Options()).ok());
}

// A database written by a newer schema is refused rather than misread.
// A damaged attributes column is named, not trusted.
TEST_F(SqliteStorageTest, MalformedAttributesFailOpenWithDataLoss) {
  {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->Create(Pod("a"), RenderJson(Pod("a"))).ok());
  }
  // A label count far larger than the bytes that follow; then a truncated string.
  for (const char* attrs : {"x'7f'", "x'01056c6162'"}) {
    SCOPED_TRACE(attrs);
    RunSql(std::string("UPDATE events SET attrs = ") + attrs);
    Result<std::unique_ptr<SqliteStorage>> opened = SqliteStorage::Open(Options());
    EXPECT_EQ(opened.status().code(), StatusCode::kDataLoss);
    EXPECT_EQ(opened.status().message(),
              "loading /registry/core/pods/ns/a at revision 1: malformed attributes column");
  }
}

// Open shares a version with the kept event that wrote it instead of reading its row again. An
// event at that revision that names another key (an inconsistent file) is not trusted: the object,
// and an event's previous version, are then read from their own rows.
TEST_F(SqliteStorageTest, OpenSharesKeptVersionsAndRereadsMismatchedOnes) {
  {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    ASSERT_EQ(store->Create(Pod("a"), RenderJson(Pod("a"), "v1")).value_or(-1), 1);
    ASSERT_EQ(store->Update(Pod("a"), 0, RenderJson(Pod("a"), "v2")).value_or(-1), 2);
    ASSERT_EQ(store->Create(Pod("b"), RenderJson(Pod("b"), "b1")).value_or(-1), 3);
    ASSERT_EQ(store->Create(Pod("c"), RenderJson(Pod("c"), "c1")).value_or(-1), 4);
  }
  {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    auto sink = std::make_shared<RecordingSink>();
    auto watch = store->Watch(Watching("/", 0), sink);
    ASSERT_TRUE(watch.ok());
    const std::vector<EventPtr> events = sink->events();
    ASSERT_EQ(events.size(), 4U);
    EXPECT_EQ(events[1]->prev, events[0]->record);  // a's update shares its create's version
    EXPECT_EQ(store->Get(Pod("a"))->record, events[1]->record);
    EXPECT_EQ(store->Get(Pod("c"))->record, events[3]->record);
  }
  // The events at revisions 1 and 3 now name a key that is not theirs.
  RunSql("UPDATE events SET key = '" + Pod("zz") + "' WHERE rev IN (1, 3)");
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->Get(Pod("a"))->record->json, Json(Pod("a"), 2, "v2"));
  EXPECT_EQ(store->Get(Pod("b"))->record->json, Json(Pod("b"), 3, "b1"));
  EXPECT_EQ(store->Get(Pod("b"))->record->attributes.Labels(), (Pairs{{"written", "api"}}));
  EXPECT_EQ(store->Get(Pod("c"))->record->json, Json(Pod("c"), 4, "c1"));
  auto sink = std::make_shared<RecordingSink>();
  auto watch = store->Watch(Watching("/", 0), sink);
  ASSERT_TRUE(watch.ok());
  const std::vector<EventPtr> events = sink->events();
  ASSERT_EQ(events.size(), 4U);
  ASSERT_NE(events[1]->prev, nullptr);
  EXPECT_EQ(events[1]->prev->json, Json(Pod("a"), 1, "v1"));
  EXPECT_NE(events[1]->prev, events[0]->record);
  EXPECT_NE(store->Get(Pod("b"))->record, events[2]->record);
}

// A schema 1 database (no attribute columns) is upgraded in place: its rows load through the
// callback once, and later writes store their attributes.
TEST_F(SqliteStorageTest, SchemaOneDatabaseIsUpgraded) {
  {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->Create(Pod("a"), RenderJson(Pod("a"))).ok());
    ASSERT_TRUE(store->Update(Pod("a"), 0, RenderJson(Pod("a"), "v2")).ok());
  }
  RunSql(
      "ALTER TABLE objects DROP COLUMN attrs; ALTER TABLE events DROP COLUMN attrs; "
      "ALTER TABLE events DROP COLUMN prev_attrs; "
      "UPDATE meta SET value = 1 WHERE name = 'schema_version'");
  {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    Result<StoredObject> a = store->Get(Pod("a"));
    ASSERT_TRUE(a.ok());
    EXPECT_EQ(a->record->json, Json(Pod("a"), 2, "v2"));
    EXPECT_EQ(a->record->attributes.Labels(), (Pairs{{"loaded", "disk"}}));
    ASSERT_TRUE(store->Create(Pod("b"), RenderJson(Pod("b"))).ok());
  }
  EXPECT_EQ(QueryInt("SELECT value FROM meta WHERE name = 'schema_version'"), 2);
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->Get(Pod("a"))->record->attributes.Labels(), (Pairs{{"loaded", "disk"}}));
  EXPECT_EQ(store->Get(Pod("b"))->record->attributes.Labels(), (Pairs{{"written", "api"}}));
}

TEST_F(SqliteStorageTest, UnknownSchemaVersionIsRefused) {
  { ASSERT_NE(OpenStore(), nullptr); }
  RunSql("UPDATE meta SET value = 9 WHERE name = 'schema_version'");
  Result<std::unique_ptr<SqliteStorage>> opened = SqliteStorage::Open(Options());
  EXPECT_EQ(opened.status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(opened.status().message(),
            "database " + DbPath() + " has schema version 9, this build reads version 2");
}

}  // namespace
}  // namespace slicewright::apiserver

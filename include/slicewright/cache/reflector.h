// Reflector keeps a cache in step with one resource on an API server, as client-go's reflector:
// a paginated LIST (or a WatchList stream with sendInitialEvents) then a WATCH from the list's
// resourceVersion with bookmarks; after a dropped or timed-out watch it resumes from the last
// resourceVersion seen; after 410 Gone it relists; failures back off with jitter. It knows nothing
// of the object type: a ReflectorTarget (the informer) decodes and applies what it receives.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>

#include "slicewright/base/clock.h"
#include "slicewright/base/mutex.h"
#include "slicewright/base/result.h"
#include "slicewright/client/rest_client.h"

namespace slicewright::cache {

// What a watch line held, once the target has applied it.
struct WatchLineOutcome {
  enum class Kind { kObject, kBookmark, kError };
  Kind kind = Kind::kObject;
  std::string resource_version;     // of the object or bookmark ("" if none)
  bool initial_events_end = false;  // a bookmark annotated k8s.io/initial-events-end
  Status error;                     // kError: the server's Status (kExpired: relist)
};

// The list metadata of one LIST page.
struct ListPageMeta {
  std::string resource_version;
  std::string continue_token;
};

// Implemented by the informer: decoding and applying is type-specific, the protocol is not.
// Called from the reflector's thread only.
class ReflectorTarget {
 public:
  virtual ~ReflectorTarget() = default;
  // Decodes a LIST page and stages its items for the next CommitStaged(). Items that do not decode
  // are reported by the target and left out; only an undecodable page is an error.
  virtual Result<ListPageMeta> StageListPage(std::string_view json) = 0;
  // Makes the cache equal to everything staged since the last commit or discard.
  virtual void CommitStaged(std::string_view resource_version) = 0;
  virtual void DiscardStaged() = 0;
  // Decodes one watch line and applies it to the cache, or when `staging` (a WatchList's initial
  // events) stages its object instead.
  virtual Result<WatchLineOutcome> ApplyWatchLine(std::string_view line, bool staging) = 0;
};

struct ReflectorOptions {
  std::string namespace_;  // "" for every namespace (and for cluster-scoped resources)
  std::string label_selector;
  std::string field_selector;
  std::int64_t page_size = 500;  // LIST limit, as client-go's pager
  // Try WatchList (sendInitialEvents=true) first; a server that refuses it, or that three times in
  // a row ends a WatchList stream before its initial-events-end bookmark or answers it with a
  // 500, gets paginated LISTs instead until `watch_list_retry_interval` has passed, after which
  // the next relist tries WatchList again (the server may have been upgraded, or its proxy
  // fixed). client-go tries again at every relist, which 0 does too.
  bool use_watch_list = false;
  std::chrono::milliseconds watch_list_retry_interval{600'000};
  // Each watch asks the server to end it after a random time in [min, 2 min), so watches spread
  // out and none lives forever (client-go: 5 minutes).
  std::chrono::seconds min_watch_timeout{300};
  // Backoff after a failure: exponential from initial to max, jittered by up to 100%, back to
  // initial after a watch that lasted `backoff_reset` (client-go: 800 ms, 30 s, 2 min).
  std::chrono::milliseconds initial_backoff{800};
  std::chrono::milliseconds max_backoff{30'000};
  std::chrono::milliseconds backoff_reset{120'000};
  std::string name;        // for logs: "pods", "services (!label)"
  Clock* clock = nullptr;  // null: SystemClock
};

// Counters for tests and metrics; read with Stats().
struct ReflectorStats {
  std::int64_t lists = 0;  // completed LISTs (or WatchList initial syncs)
  std::int64_t list_failures = 0;
  std::int64_t watches = 0;  // watch requests opened
  std::int64_t watch_failures = 0;
  std::int64_t expired = 0;        // 410 Gone answers and ERROR events
  std::int64_t skipped_lines = 0;  // watch lines that could not be decoded even after a resume
  bool watch_list_supported = false;
  std::string last_resource_version;
};

class Reflector final {
 public:
  Reflector(client::RestClient& client, client::ResourceRef resource, ReflectorTarget& target,
            ReflectorOptions options);
  Reflector(const Reflector&) = delete;
  Reflector& operator=(const Reflector&) = delete;

  // Lists and watches until Stop(); call on a thread of its own. Never fails: errors are logged,
  // counted and retried.
  void Run();
  // Ends Run() soon: cancels an open watch and any backoff wait. An in-flight LIST request ends at
  // its transport deadline. Thread-safe; idempotent.
  void Stop();

  ReflectorStats Stats() const;

 private:
  // One LIST (all pages) or WatchList initial sync, then watches until something forces a relist.
  // Returns why it stopped.
  Status ListAndWatch();
  // Run()'s thread only; mirrors the flag into the stats.
  void SetWatchListSupported(bool supported);
  Status List();
  // Watches from last_resource_version_ until a relist is needed (its Status) or Stop().
  Status WatchLoop(bool initial_sync);
  // One watch request. `initial_sync`: a WatchList stream whose initial events are staged until
  // the initial-events-end bookmark. Sets `received_lines` when the stream delivered any line.
  Status WatchOnce(bool initial_sync, bool& synced, bool& received_lines);
  // Waits out the current backoff (or until Stop()); false when stopped.
  bool Backoff();
  bool Stopped() const;
  std::chrono::seconds WatchTimeout();

  client::RestClient& client_;
  const client::ResourceRef resource_;
  ReflectorTarget& target_;
  const ReflectorOptions options_;
  Clock& clock_;

  mutable Mutex mu_;
  CondVar wake_;
  bool stopped_ SW_GUARDED_BY(mu_) = false;
  client::StreamCanceller* canceller_ SW_GUARDED_BY(mu_) = nullptr;  // the open watch's
  ReflectorStats stats_ SW_GUARDED_BY(mu_);

  // Run()'s thread only.
  std::string last_resource_version_;
  bool watch_list_supported_;
  // WatchList streams in a row that the server accepted but that ended before their initial
  // events did; reset by a completed initial sync.
  int watch_list_early_ends_ = 0;
  // After a fallback to LIST: when WatchList is worth another try.
  Clock::TimePoint watch_list_retry_at_{};
  Clock::Duration backoff_{};
  // The resourceVersion at which a watch line last failed to decode (see WatchOnce).
  std::optional<std::string> skip_next_bad_line_at_;
  std::mt19937_64 random_;
};

}  // namespace slicewright::cache

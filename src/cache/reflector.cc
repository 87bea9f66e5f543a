#include "slicewright/cache/reflector.h"

#include <algorithm>
#include <utility>

#include "slicewright/base/log.h"

namespace slicewright::cache {
namespace {

// A server without WatchList refuses sendInitialEvents (kube-apiserver answers 422 Invalid while
// the feature gate is off); older ones reject the parameter outright.
bool WatchListRefused(const Status& status) {
  return status.code() == StatusCode::kInvalid || status.code() == StatusCode::kBadRequest ||
         status.code() == StatusCode::kForbidden || status.code() == StatusCode::kMethodNotAllowed;
}

// A server (or a proxy in front of it) that accepts WatchList requests but keeps ending them
// before the initial-events-end bookmark would hold the informer unsynced forever; after this
// many such ends in a row it gets paginated LISTs instead, as client-go falls back to
// LIST+WATCH when a WatchList fails.
constexpr int kWatchListEarlyEndLimit = 3;

// Failures after which the watch resumes from the last resourceVersion instead of relisting: the
// connection, not the data, was the problem.
bool ResumableWatchFailure(const Status& status) {
  switch (status.code()) {
    case StatusCode::kUnavailable:
    case StatusCode::kTimeout:
    case StatusCode::kTooManyRequests:
    case StatusCode::kInternal:
      return true;
    default:
      return false;
  }
}

}  // namespace

Reflector::Reflector(client::RestClient& client, client::ResourceRef resource,
                     ReflectorTarget& target, ReflectorOptions options)
    : client_(client),
      resource_(std::move(resource)),
      target_(target),
      options_(std::move(options)),
      clock_(options_.clock != nullptr ? *options_.clock : SystemClock::Get()),
      watch_list_supported_(options_.use_watch_list),
      backoff_(options_.initial_backoff),
      random_(std::random_device{}()) {
  stats_.watch_list_supported = watch_list_supported_;
}

bool Reflector::Stopped() const {
  MutexLock lock(mu_);
  return stopped_;
}

void Reflector::Stop() {
  MutexLock lock(mu_);
  stopped_ = true;
  if (canceller_ != nullptr) canceller_->Cancel();
  wake_.NotifyAll();
}

ReflectorStats Reflector::Stats() const {
  MutexLock lock(mu_);
  return stats_;
}

void Reflector::Run() {
  while (!Stopped()) {
    const Clock::TimePoint started = clock_.Now();
    const Status status = ListAndWatch();
    if (Stopped()) break;
    // A long healthy run means the last failure is history: start the backoff over.
    if (clock_.Now() - started >= options_.backoff_reset) backoff_ = options_.initial_backoff;
    if (!status.ok()) {
      SW_LOG(kWarning, "reflector {}: {}; relisting after a backoff", options_.name,
             status.ToString());
    }
    if (!Backoff()) break;
  }
}

bool Reflector::Backoff() {
  // Full jitter on top of the base delay, as client-go's wait.Jitter(d, 1.0).
  std::uniform_real_distribution<double> jitter(1.0, 2.0);
  const auto delay = std::chrono::duration_cast<Clock::Duration>(backoff_ * jitter(random_));
  backoff_ = std::min<Clock::Duration>(backoff_ * 2, options_.max_backoff);
  const Clock::TimePoint deadline = clock_.Now() + delay;
  MutexLock lock(mu_);
  while (!stopped_ && clock_.Now() < deadline) clock_.WaitUntil(wake_, mu_, deadline);
  return !stopped_;
}

std::chrono::seconds Reflector::WatchTimeout() {
  const std::int64_t min = std::max<std::int64_t>(1, options_.min_watch_timeout.count());
  std::uniform_int_distribution<std::int64_t> pick(min, 2 * min - 1);
  return std::chrono::seconds(pick(random_));
}

Status Reflector::ListAndWatch() {
  if (options_.use_watch_list && !watch_list_supported_ && clock_.Now() >= watch_list_retry_at_) {
    SW_LOG(kInfo, "reflector {}: trying WatchList again", options_.name);
    SetWatchListSupported(true);
    watch_list_early_ends_ = 0;
  }
  if (watch_list_supported_) {
    last_resource_version_.clear();
    Status status = WatchLoop(/*initial_sync=*/true);
    if (WatchListRefused(status)) {
      SW_LOG(kInfo, "reflector {}: the server refused a WatchList ({}); using LIST for now",
             options_.name, status.ToString());
    } else if (watch_list_early_ends_ >= kWatchListEarlyEndLimit) {
      SW_LOG(kWarning,
             "reflector {}: {} WatchList streams in a row ended before their initial events did "
             "(last: {}); using LIST for now",
             options_.name, watch_list_early_ends_, status.ToString());
    } else {
      return status;
    }
    SetWatchListSupported(false);
    watch_list_retry_at_ = clock_.Now() + options_.watch_list_retry_interval;
  }
  SW_RETURN_IF_ERROR(List());
  return WatchLoop(/*initial_sync=*/false);
}

void Reflector::SetWatchListSupported(bool supported) {
  watch_list_supported_ = supported;
  MutexLock lock(mu_);
  stats_.watch_list_supported = supported;
}

Status Reflector::List() {
  client::ListOptions options;
  options.label_selector = options_.label_selector;
  options.field_selector = options_.field_selector;
  options.limit = options_.page_size;
  // A consistent read (resourceVersion unset): the cache starts no older than the server, which
  // a controller deciding to delete slices depends on.
  target_.DiscardStaged();
  std::string resource_version;
  int pages = 0;
  while (!Stopped()) {
    Result<std::string> body = client_.List(resource_, options_.namespace_, options);
    if (!body.ok() && body.status().code() == StatusCode::kExpired && pages > 0) {
      // The continue token expired between pages (the server compacted): start over in one
      // unpaginated LIST, as client-go's pager falls back to.
      SW_LOG(kInfo, "reflector {}: the list's continue token expired; listing again in full",
             options_.name);
      target_.DiscardStaged();
      options.continue_token.clear();
      options.limit = 0;
      pages = 0;
      continue;
    }
    if (!body.ok()) {
      target_.DiscardStaged();
      MutexLock lock(mu_);
      ++stats_.list_failures;
      return std::move(body).status().WithContext("list");
    }
    Result<ListPageMeta> meta = target_.StageListPage(*body);
    if (!meta.ok()) {
      target_.DiscardStaged();
      MutexLock lock(mu_);
      ++stats_.list_failures;
      return meta.status();  // the codec's message already reads "list: ..."
    }
    ++pages;
    resource_version = meta->resource_version;
    if (meta->continue_token.empty()) break;
    options.continue_token = meta->continue_token;
  }
  if (Stopped()) {
    target_.DiscardStaged();
    return Status(StatusCode::kCancelled, "stopped");
  }
  // Stats first: the commit makes the informer synced, and whoever waited for that may read them.
  last_resource_version_ = resource_version;
  {
    MutexLock lock(mu_);
    ++stats_.lists;
    stats_.last_resource_version = resource_version;
  }
  target_.CommitStaged(resource_version);
  return Status();
}

Status Reflector::WatchLoop(bool initial_sync) {
  bool synced = !initial_sync;
  while (!Stopped()) {
    const Clock::TimePoint started = clock_.Now();
    bool received_lines = false;
    Status status = WatchOnce(!synced, synced, received_lines);
    if (Stopped()) return Status(StatusCode::kCancelled, "stopped");
    if (initial_sync && synced) watch_list_early_ends_ = 0;
    if (!synced) {
      // A WatchList that ended before its initial events did: nothing was committed, so the
      // next attempt starts over. Only a stream the server accepted, or a 500 it answered (an
      // aggregated or watch-cache-less server whose storage lacks WatchList says so with a plain
      // error), counts towards giving up on WatchList; a server that cannot be reached is no
      // evidence against it.
      target_.DiscardStaged();
      if (status.ok() || received_lines || status.code() == StatusCode::kInternal) {
        ++watch_list_early_ends_;
      }
      if (status.ok()) status = Status(StatusCode::kUnavailable, "the WatchList ended early");
      return status;
    }
    if (status.ok()) {
      // The server's timeout ended the watch: resume at once.
      if (clock_.Now() - started >= options_.backoff_reset) backoff_ = options_.initial_backoff;
      continue;
    }
    if (status.code() == StatusCode::kExpired) {
      MutexLock lock(mu_);
      ++stats_.expired;
      return status;
    }
    if (!ResumableWatchFailure(status)) return status;
    SW_VLOG(1, "reflector {}: watch ended ({}); resuming from resourceVersion {}", options_.name,
            status.ToString(), last_resource_version_);
    if (!Backoff()) return Status(StatusCode::kCancelled, "stopped");
  }
  return Status(StatusCode::kCancelled, "stopped");
}

Status Reflector::WatchOnce(bool initial_sync, bool& synced, bool& received_lines) {
  client::ListOptions options;
  options.label_selector = options_.label_selector;
  options.field_selector = options_.field_selector;
  options.allow_watch_bookmarks = true;
  options.timeout_seconds = WatchTimeout().count();
  if (initial_sync) {
    options.send_initial_events = true;
    options.resource_version_match = "NotOlderThan";
    options.resource_version = "";
    target_.DiscardStaged();
  } else {
    options.resource_version = last_resource_version_;
  }

  client::StreamCanceller canceller;
  {
    MutexLock lock(mu_);
    if (stopped_) return Status(StatusCode::kCancelled, "stopped");
    canceller_ = &canceller;
    ++stats_.watches;
  }
  Status failure;
  // A line that does not decode may be a damaged stream: the first time, the watch restarts from
  // the last good resourceVersion (the server sends the event again); if the same line fails again
  // with no progress in between, the object itself is bad and is skipped.
  Status status = client_.Watch(
      resource_, options_.namespace_, options,
      [&](std::string_view line) {
        received_lines = true;
        Result<WatchLineOutcome> outcome = target_.ApplyWatchLine(line, initial_sync && !synced);
        if (!outcome.ok()) {
          if (skip_next_bad_line_at_ == last_resource_version_) {
            SW_LOG(kError, "reflector {}: skipping an undecodable watch event: {}", options_.name,
                   outcome.status().ToString());
            MutexLock lock(mu_);
            ++stats_.skipped_lines;
            return true;
          }
          skip_next_bad_line_at_ = last_resource_version_;
          failure = std::move(outcome).status().WithContext("watch event");
          failure = Status(StatusCode::kUnavailable, failure.ToString());
          return false;
        }
        switch (outcome->kind) {
          case WatchLineOutcome::Kind::kError:
            failure = outcome->error;
            if (failure.ok()) failure = Status(StatusCode::kInternal, "an ERROR watch event");
            return false;
          case WatchLineOutcome::Kind::kBookmark:
            if (initial_sync && !synced && outcome->initial_events_end) {
              {
                MutexLock lock(mu_);
                ++stats_.lists;
                stats_.last_resource_version = outcome->resource_version;
              }
              target_.CommitStaged(outcome->resource_version);
              synced = true;
            }
            break;
          case WatchLineOutcome::Kind::kObject:
            break;
        }
        if (!outcome->resource_version.empty()) {
          last_resource_version_ = outcome->resource_version;
          MutexLock lock(mu_);
          stats_.last_resource_version = last_resource_version_;
        }
        return true;
      },
      &canceller);
  {
    MutexLock lock(mu_);
    canceller_ = nullptr;
    if (!status.ok() || !failure.ok()) ++stats_.watch_failures;
  }
  if (!failure.ok()) return failure;
  return status;
}

}  // namespace slicewright::cache

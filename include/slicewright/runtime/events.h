// Recording core/v1 Events about objects, as client-go's tools/record does: the caller never waits
// (events go to a bounded queue, one sink thread writes them), and an EventCorrelator keeps a
// misbehaving controller from flooding the API: identical events become a PATCH of the first
// one's count, many similar events are combined into one, and a token bucket per source and
// object drops the excess. Writing Events is best effort: failures are retried a few times, then
// dropped and counted.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include "slicewright/base/clock.h"
#include "slicewright/base/mutex.h"
#include "slicewright/base/result.h"
#include "slicewright/client/rest_client.h"
#include "slicewright/model/core.h"
#include "slicewright/runtime/metrics.h"

namespace slicewright::runtime {

enum class EventType { kNormal, kWarning };
// "Normal" or "Warning", as written to Event.type.
std::string_view EventTypeName(EventType type);

// Where correlated events are written: the seam between the recorder and the API (style §6.4).
// Implementations must be thread-compatible; the recorder calls them from its sink thread only.
class EventSink {
 public:
  EventSink() = default;
  EventSink(const EventSink&) = delete;
  EventSink& operator=(const EventSink&) = delete;
  virtual ~EventSink() = default;

  // Creates `event` in its namespace; the server's copy on success.
  virtual Result<model::Event> Create(const model::Event& event) = 0;
  // Applies `patch` (a strategic merge patch) to the existing event named by `event`'s metadata.
  virtual Result<model::Event> Patch(const model::Event& event, std::string_view patch) = 0;
};

// An EventSink writing core/v1 events through `client`, which must outlive it.
std::unique_ptr<EventSink> NewRestEventSink(client::RestClient& client);

// client-go's defaults (tools/record/events_cache.go).
struct EventCorrelatorOptions {
  // Entries kept by each of the three caches (least recently used evicted first).
  std::size_t cache_entries = 4096;
  // Once this many events of one source, object, type and reason with different messages are seen
  // with no gap longer than `aggregate_interval`, further ones are combined into one event.
  int aggregate_max_events = 10;
  Clock::Duration aggregate_interval = std::chrono::minutes(10);
  // The spam filter: a token bucket per source and involved object, refilled with `spam_qps`
  // (one token every 5 minutes) up to `spam_burst`.
  double spam_qps = 1.0 / 300.0;
  int spam_burst = 25;
};

// What to do with one event.
struct CorrelatedEvent {
  model::Event event;
  // Non-empty: a repeat of an event already written; PATCH `event.metadata.name` with this (its
  // count and lastTimestamp) instead of creating a new object.
  std::string patch;
  // Dropped by the spam filter: write nothing.
  bool skip = false;
};

// The three steps of client-go's EventCorrelator, in its order: aggregate similar events, count
// repeats of identical ones, filter spam. Decisions depend only on the events and the Clock.
// Thread-compatible: the recorder's sink thread owns it.
class EventCorrelator final {
 public:
  explicit EventCorrelator(Clock& clock, EventCorrelatorOptions options = {});
  EventCorrelator(const EventCorrelator&) = delete;
  EventCorrelator& operator=(const EventCorrelator&) = delete;
  ~EventCorrelator();

  CorrelatedEvent Correlate(model::Event event);
  // Remembers an event the server accepted (its name, count and resourceVersion), so the next
  // identical one patches it.
  void UpdateState(const model::Event& written);

 private:
  struct Caches;
  std::unique_ptr<Caches> caches_;
};

struct EventRecorderOptions {
  // Source.component and reportingComponent, e.g. "endpointslice-controller". Required.
  std::string component;
  // Source.host and reportingInstance; "" means this host's name.
  std::string host;
  // Events waiting for the sink thread; more are dropped (client-go's maxQueuedEvents).
  std::size_t queue_capacity = 1000;
  // Attempts per event before it is dropped, and the wait between them; the first retry waits a
  // random part of it so that recorders do not retry in step (client-go's maxTriesPerEvent and
  // sleepDuration).
  int max_attempts = 12;
  Clock::Duration retry_interval = std::chrono::seconds(10);
  EventCorrelatorOptions correlator;
  // Timestamps, the spam filter's refill and retry waits; nullptr means SystemClock::Get().
  Clock* clock = nullptr;
  // Where slicewright_events_written_total{operation} and slicewright_events_dropped_total{reason}
  // go; nullptr: no metrics.
  Registry* metrics = nullptr;
  // Why events were dropped, until the base layer has a logger; nullptr: silent. Called from the
  // sink thread.
  std::function<void(std::string_view message)> log;
  // Seeds the first retry's random wait; 0 draws a seed from std::random_device.
  std::uint64_t random_seed = 0;
};

// Counts since creation (the metrics, readable without a registry).
struct EventRecorderStats {
  std::uint64_t created = 0;
  std::uint64_t patched = 0;
  std::uint64_t dropped_queue_full = 0;
  std::uint64_t dropped_spam = 0;
  std::uint64_t dropped_write_failed = 0;
};

// Thread-safe. The sink (and what it uses), the Clock and the Registry must outlive the recorder.
class EventRecorder final {
 public:
  // kInvalid without a component, with a zero queue capacity or fewer than one attempt;
  // kAlreadyExists if the registry holds another metric under one of the names. Starts the sink
  // thread.
  static Result<std::unique_ptr<EventRecorder>> Create(std::unique_ptr<EventSink> sink,
                                                       EventRecorderOptions options);
  EventRecorder(const EventRecorder&) = delete;
  EventRecorder& operator=(const EventRecorder&) = delete;
  // ShutDown().
  ~EventRecorder();

  // Records that `reason` (UpperCamelCase, e.g. "FailedToUpdateEndpointSlices") happened to
  // `object`, with a human-readable message. Never blocks: the event is queued, or dropped and
  // counted when the queue is full or the recorder is shut down. The event is named
  // "<object.name>.<hex timestamp>" in the object's namespace ("default" for cluster-scoped
  // objects), with count 1 and first and last timestamps now.
  void Event(const model::ObjectReference& object, EventType type, std::string_view reason,
             std::string_view message);

  // Blocks until every event queued before the call has been written or dropped. Waits on
  // retries, so with a FakeClock the test must move time.
  void Flush();
  // Stops accepting events; those queued are still tried once each, without retry waits; then
  // joins the sink thread. Idempotent.
  void ShutDown();

  EventRecorderStats stats() const;

 private:
  struct Metrics {
    Counter* created = nullptr;
    Counter* patched = nullptr;
    Counter* queue_full = nullptr;
    Counter* spam = nullptr;
    Counter* write_failed = nullptr;
  };

  EventRecorder(std::unique_ptr<EventSink> sink, EventRecorderOptions options, Clock& clock,
                Metrics metrics);

  void SinkLoop();
  // Correlates and writes one event, with retries.
  void Process(model::Event event);
  // One write: PATCH or CREATE (CREATE also when the event to patch is gone).
  Result<model::Event> Write(model::Event& event, const std::string& patch, bool& patched);
  // Waits on the clock for `delay`; false if the recorder shuts down first.
  bool WaitForRetry(Clock::Duration delay);
  void Count(std::atomic<std::uint64_t>& stat, Counter* metric);
  void Log(std::string_view message) const;

  const std::unique_ptr<EventSink> sink_;
  const EventRecorderOptions options_;
  Clock& clock_;
  const Metrics metrics_;
  const Clock::TimePoint steady_origin_;
  const model::Time wall_origin_;
  EventCorrelator correlator_;  // sink thread only
  std::mt19937_64 random_;      // sink thread only

  mutable Mutex mu_;
  CondVar queue_cv_;  // the sink thread waits for events or shutdown
  CondVar done_cv_;   // Flush() waits for done_seq_
  CondVar retry_cv_;  // a retry wait; ShutDown() notifies it
  // (sequence number, event)
  std::deque<std::pair<std::uint64_t, model::Event>> queue_ SW_GUARDED_BY(mu_);
  std::uint64_t last_seq_ SW_GUARDED_BY(mu_) = 0;  // of the last event queued
  // Every event up to this one is written or dropped.
  std::uint64_t done_seq_ SW_GUARDED_BY(mu_) = 0;
  // Keeps generated names unique under a coarse clock.
  std::int64_t last_name_nanos_ SW_GUARDED_BY(mu_) = 0;
  bool shutting_down_ SW_GUARDED_BY(mu_) = false;
  Mutex join_mu_;  // one ShutDown() joins, a concurrent one waits for it

  std::atomic<std::uint64_t> created_{0};
  std::atomic<std::uint64_t> patched_{0};
  std::atomic<std::uint64_t> dropped_queue_full_{0};
  std::atomic<std::uint64_t> dropped_spam_{0};
  std::atomic<std::uint64_t> dropped_write_failed_{0};

  std::thread sink_thread_ SW_GUARDED_BY(join_mu_);
};

}  // namespace slicewright::runtime

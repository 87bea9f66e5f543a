#include "slicewright/runtime/events.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <initializer_list>
#include <list>
#include <optional>
#include <set>
#include <unordered_map>
#include <utility>

#include <unistd.h>

#include "slicewright/base/thread_name.h"
#include "slicewright/codec/json.h"
#include "slicewright/codec/patch.h"

#include "runtime/wall_time.h"

namespace slicewright::runtime {
namespace {

constexpr std::string_view kCombinedPrefix = "(combined from similar events): ";

// A map that forgets its least recently used entry beyond `capacity` (groupcache's lru.Cache, as
// client-go's caches use it), so a controller touching many objects has bounded memory.
template <typename V>
class LruCache final {
 public:
  explicit LruCache(std::size_t capacity) : capacity_(std::max<std::size_t>(capacity, 1)) {}

  // The entry for `key`, now the most recently used; nullptr if absent.
  V* Get(const std::string& key) {
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    items_.splice(items_.begin(), items_, it->second);
    return &it->second->second;
  }

  void Put(const std::string& key, V value) {
    if (V* existing = Get(key)) {
      *existing = std::move(value);
      return;
    }
    items_.emplace_front(key, std::move(value));
    index_.emplace(key, items_.begin());
    if (items_.size() > capacity_) {
      index_.erase(items_.back().first);
      items_.pop_back();
    }
  }

 private:
  const std::size_t capacity_;
  std::list<std::pair<std::string, V>> items_;  // most recently used first
  std::unordered_map<std::string, typename std::list<std::pair<std::string, V>>::iterator> index_;
};

// Joins key fields with a separator no Kubernetes name or reason contains (upstream joins them
// with nothing, so "ab"+"c" and "a"+"bc" collide there).
std::string JoinKey(std::initializer_list<std::string_view> parts) {
  std::string key;
  for (const std::string_view part : parts) {
    key += part;
    key += '\x1f';
  }
  return key;
}

// Same source, object, type and reason: events that differ only in their message.
std::string AggregateKey(const model::Event& e) {
  const model::ObjectReference& o = e.involved_object;
  return JoinKey({e.source_component, e.source_host, o.kind, o.namespace_, o.name, o.uid,
                  o.api_version, e.type, e.reason, e.reporting_component, e.reporting_instance});
}

// Identical events (all but the timestamps).
std::string EventKey(const model::Event& e) {
  const model::ObjectReference& o = e.involved_object;
  return JoinKey({e.source_component, e.source_host, o.kind, o.namespace_, o.name, o.field_path,
                  o.uid, o.api_version, e.type, e.reason, e.message});
}

// One spam budget per source and involved object.
std::string SpamKey(const model::Event& e) {
  const model::ObjectReference& o = e.involved_object;
  return JoinKey(
      {e.source_component, e.source_host, o.kind, o.namespace_, o.name, o.uid, o.api_version});
}

std::string Hex(std::int64_t value) {
  char buffer[24];
  const int n =
      std::snprintf(buffer, sizeof buffer, "%llx", static_cast<unsigned long long>(value));
  return std::string(buffer, static_cast<std::size_t>(n));
}

std::string HostName() {
  std::array<char, 256> host{};
  if (::gethostname(host.data(), host.size() - 1) != 0) return "";
  return std::string(host.data());
}

}  // namespace

std::string_view EventTypeName(EventType type) {
  return type == EventType::kWarning ? "Warning" : "Normal";
}

// ---- EventCorrelator ----

struct EventCorrelator::Caches {
  // The messages recently seen for one aggregate key.
  struct Similar {
    std::set<std::string> messages;
    Clock::TimePoint last;
  };
  // What was last written (or is being written) for one event key.
  struct Observed {
    std::int32_t count = 0;
    std::optional<model::Time> first_timestamp;
    std::string name;
    std::string resource_version;
  };
  // A passive token bucket (TryAccept never waits, unlike base's TokenBucket).
  struct Budget {
    double tokens = 0;
    Clock::TimePoint last;
  };

  Caches(Clock& c, EventCorrelatorOptions o)
      : clock(c),
        options(o),
        similar(o.cache_entries),
        observed(o.cache_entries),
        budgets(o.cache_entries),
        steady_origin(c.Now()),
        wall_origin(internal::SystemWallTime()) {}

  Clock& clock;
  const EventCorrelatorOptions options;
  LruCache<Similar> similar;
  LruCache<Observed> observed;
  LruCache<Budget> budgets;
  const Clock::TimePoint steady_origin;
  const model::Time wall_origin;
};

EventCorrelator::EventCorrelator(Clock& clock, EventCorrelatorOptions options)
    : caches_(std::make_unique<Caches>(clock, options)) {}

EventCorrelator::~EventCorrelator() = default;

CorrelatedEvent EventCorrelator::Correlate(model::Event event) {
  Caches& c = *caches_;
  const Clock::TimePoint now = c.clock.Now();

  // 1. Aggregation: remember this message among the similar ones; once there are enough, the
  //    event is replaced by one combined event per aggregate key.
  const std::string aggregate_key = AggregateKey(event);
  Caches::Similar similar;
  if (const Caches::Similar* seen = c.similar.Get(aggregate_key);
      seen != nullptr && now - seen->last <= c.options.aggregate_interval) {
    similar = *seen;
  }
  similar.messages.insert(event.message);
  similar.last = now;
  std::string key = EventKey(event);
  if (static_cast<int>(similar.messages.size()) >= c.options.aggregate_max_events) {
    // Forget one message so the set stays bounded; upstream pops an arbitrary one.
    similar.messages.erase(similar.messages.begin());
    const model::Time wall_now = internal::WallTimeAt(now, c.steady_origin, c.wall_origin);
    model::Event combined;
    // The name the recorder generated for the event being replaced is unique and now unused;
    // a fresh timestamp (upstream's choice) could repeat that of an event written a moment ago
    // under a coarse or fake clock.
    combined.metadata.name = !event.metadata.name.empty()
                                 ? event.metadata.name
                                 : event.involved_object.name + "." + Hex(wall_now.unix_nanos);
    combined.metadata.namespace_ = event.metadata.namespace_;
    combined.involved_object = event.involved_object;
    combined.reason = event.reason;
    combined.message = std::string(kCombinedPrefix) + event.message;
    combined.type = event.type;
    combined.source_component = event.source_component;
    combined.source_host = event.source_host;
    combined.first_timestamp = wall_now;
    combined.last_timestamp = wall_now;
    combined.count = 1;
    combined.reporting_component = event.reporting_component;
    combined.reporting_instance = event.reporting_instance;
    event = std::move(combined);
    key = aggregate_key;
  }
  c.similar.Put(aggregate_key, std::move(similar));

  // 2. Deduplication: a repeat takes over the first one's name and counts on.
  CorrelatedEvent out;
  if (const Caches::Observed* last = c.observed.Get(key)) {
    event.count = last->count + 1;
    event.first_timestamp = last->first_timestamp;
    event.metadata.name = last->name;
    event.metadata.resource_version = last->resource_version;
    out.patch = codec::EncodeEventCountPatch(
        event.count, event.last_timestamp.value_or(model::Time{}), event.message);
  }
  c.observed.Put(key, {event.count, event.first_timestamp, event.metadata.name,
                       event.metadata.resource_version});

  // 3. Spam filter, last as upstream: the caches above learn even from events it drops.
  const std::string spam_key = SpamKey(event);
  Caches::Budget budget{static_cast<double>(c.options.spam_burst), now};
  if (const Caches::Budget* existing = c.budgets.Get(spam_key)) {
    budget = *existing;
    const double elapsed = std::chrono::duration<double>(now - budget.last).count();
    budget.tokens = std::min(static_cast<double>(c.options.spam_burst),
                             budget.tokens + elapsed * c.options.spam_qps);
    budget.last = now;
  }
  if (budget.tokens >= 1.0) {
    budget.tokens -= 1.0;
  } else {
    out.skip = true;
  }
  c.budgets.Put(spam_key, budget);

  out.event = std::move(event);
  return out;
}

void EventCorrelator::UpdateState(const model::Event& written) {
  caches_->observed.Put(EventKey(written),
                        {written.count, written.first_timestamp, written.metadata.name,
                         written.metadata.resource_version});
}

// ---- RestEventSink ----

namespace {

class RestEventSink final : public EventSink {
 public:
  explicit RestEventSink(client::RestClient& client) : client_(client) {}

  Result<model::Event> Create(const model::Event& event) override {
    SW_ASSIGN_OR_RETURN(std::string json,
                        client_.Create(client::EventsResource(), event.metadata.namespace_,
                                       codec::EncodeEvent(event)));
    return codec::DecodeEvent(json);
  }

  Result<model::Event> Patch(const model::Event& event, std::string_view patch) override {
    SW_ASSIGN_OR_RETURN(
        std::string json,
        client_.Patch(client::EventsResource(), event.metadata.namespace_, event.metadata.name,
                      client::PatchType::kStrategicMergePatch, std::string(patch)));
    return codec::DecodeEvent(json);
  }

 private:
  client::RestClient& client_;
};

}  // namespace

std::unique_ptr<EventSink> NewRestEventSink(client::RestClient& client) {
  return std::make_unique<RestEventSink>(client);
}

// ---- EventRecorder ----

Result<std::unique_ptr<EventRecorder>> EventRecorder::Create(std::unique_ptr<EventSink> sink,
                                                             EventRecorderOptions options) {
  if (sink == nullptr) return InvalidError("event recorder: a sink is required");
  if (options.component.empty()) return InvalidError("event recorder: component is required");
  if (options.queue_capacity == 0) {
    return InvalidError("event recorder: queue capacity must be at least 1");
  }
  if (options.max_attempts < 1) {
    return InvalidError("event recorder: max attempts must be at least 1");
  }
  if (options.host.empty()) options.host = HostName();
  Clock& clock = options.clock != nullptr ? *options.clock : SystemClock::Get();

  Metrics metrics;
  if (options.metrics != nullptr) {
    SW_ASSIGN_OR_RETURN(
        CounterFamily * written,
        options.metrics->AddCounterFamily(
            "slicewright_events_written_total",
            "Events written to the API server, by operation (create or patch).", {"operation"}));
    SW_ASSIGN_OR_RETURN(metrics.created, written->WithLabelValues({"create"}));
    SW_ASSIGN_OR_RETURN(metrics.patched, written->WithLabelValues({"patch"}));
    SW_ASSIGN_OR_RETURN(
        CounterFamily * dropped,
        options.metrics->AddCounterFamily(
            "slicewright_events_dropped_total",
            "Events not written, by reason: queue_full (or recorded after shutdown), "
            "spam_filter, write_failed.",
            {"reason"}));
    SW_ASSIGN_OR_RETURN(metrics.queue_full, dropped->WithLabelValues({"queue_full"}));
    SW_ASSIGN_OR_RETURN(metrics.spam, dropped->WithLabelValues({"spam_filter"}));
    SW_ASSIGN_OR_RETURN(metrics.write_failed, dropped->WithLabelValues({"write_failed"}));
  }
  std::unique_ptr<EventRecorder> recorder(
      new EventRecorder(std::move(sink), std::move(options), clock, metrics));
  {
    MutexLock join(recorder->join_mu_);
    recorder->sink_thread_ = std::thread([r = recorder.get(), name = ThreadName("events")] {
      name.Apply();
      r->SinkLoop();
    });
  }
  return recorder;
}

EventRecorder::EventRecorder(std::unique_ptr<EventSink> sink, EventRecorderOptions options,
                             Clock& clock, Metrics metrics)
    : sink_(std::move(sink)),
      options_(std::move(options)),
      clock_(clock),
      metrics_(metrics),
      steady_origin_(clock.Now()),
      wall_origin_(internal::SystemWallTime()),
      correlator_(clock, options_.correlator),
      random_(options_.random_seed != 0 ? options_.random_seed : std::random_device{}()) {}

EventRecorder::~EventRecorder() { ShutDown(); }

void EventRecorder::Count(std::atomic<std::uint64_t>& stat, Counter* metric) {
  stat.fetch_add(1, std::memory_order_relaxed);
  if (metric != nullptr) metric->Inc();
}

void EventRecorder::Log(std::string_view message) const {
  if (options_.log) options_.log(message);
}

void EventRecorder::Event(const model::ObjectReference& object, EventType type,
                          std::string_view reason, std::string_view message) {
  const model::Time now = internal::WallTimeAt(clock_.Now(), steady_origin_, wall_origin_);
  model::Event event;
  event.metadata.namespace_ = object.namespace_.empty() ? "default" : object.namespace_;
  event.involved_object = object;
  event.reason = reason;
  event.message = message;
  event.type = EventTypeName(type);
  event.source_component = options_.component;
  event.source_host = options_.host;
  event.first_timestamp = now;
  event.last_timestamp = now;
  event.count = 1;
  event.reporting_component = options_.component;
  event.reporting_instance = options_.host;
  {
    MutexLock lock(mu_);
    if (!shutting_down_ && queue_.size() < options_.queue_capacity) {
      // The timestamp makes the name unique, as upstream's "%x" of UnixNano; two events within
      // one tick of a coarse (or fake) clock take the next nanosecond.
      last_name_nanos_ = std::max(now.unix_nanos, last_name_nanos_ + 1);
      event.metadata.name = object.name + "." + Hex(last_name_nanos_);
      queue_.emplace_back(++last_seq_, std::move(event));
      queue_cv_.NotifyOne();
      return;
    }
  }
  Count(dropped_queue_full_, metrics_.queue_full);
}

void EventRecorder::SinkLoop() {
  while (true) {
    std::pair<std::uint64_t, model::Event> item;
    {
      MutexLock lock(mu_);
      while (queue_.empty() && !shutting_down_) queue_cv_.Wait(mu_);
      if (queue_.empty()) return;  // shutting down and drained
      item = std::move(queue_.front());
      queue_.pop_front();
    }
    Process(std::move(item.second));
    MutexLock lock(mu_);
    done_seq_ = item.first;
    done_cv_.NotifyAll();
  }
}

Result<model::Event> EventRecorder::Write(model::Event& event, const std::string& patch,
                                          bool& patched) {
  patched = !patch.empty();
  if (patched) {
    Result<model::Event> written = sink_->Patch(event, patch);
    // The event may have expired (the API server's --event-ttl) or been deleted: create it anew.
    if (written.ok() || written.status().code() != StatusCode::kNotFound) return written;
    patched = false;
  }
  event.metadata.resource_version.clear();
  return sink_->Create(event);
}

bool EventRecorder::WaitForRetry(Clock::Duration delay) {
  const Clock::TimePoint deadline = clock_.Now() + delay;
  MutexLock lock(mu_);
  while (!shutting_down_ && clock_.Now() < deadline) clock_.WaitUntil(retry_cv_, mu_, deadline);
  return !shutting_down_;
}

void EventRecorder::Process(model::Event event) {
  CorrelatedEvent correlated = correlator_.Correlate(std::move(event));
  if (correlated.skip) {
    Count(dropped_spam_, metrics_.spam);
    return;
  }
  Status last_error;
  for (int attempt = 1; attempt <= options_.max_attempts; ++attempt) {
    bool patched = false;
    Result<model::Event> written = Write(correlated.event, correlated.patch, patched);
    if (written.ok()) {
      correlator_.UpdateState(*written);
      if (patched) {
        Count(patched_, metrics_.patched);
      } else {
        Count(created_, metrics_.created);
      }
      return;
    }
    last_error = written.status();
    // The project's retry policy (design.md): the server refusing the event (AlreadyExists,
    // Invalid, Forbidden, a terminating namespace...) will refuse it again.
    if (!IsRetryable(last_error) || attempt == options_.max_attempts) break;
    // The first retry waits a random part of the interval, so recorders that failed together
    // do not retry together.
    std::uniform_real_distribution<double> fraction(0.0, 1.0);
    const Clock::Duration delay = attempt == 1 ? std::chrono::duration_cast<Clock::Duration>(
                                                     options_.retry_interval * fraction(random_))
                                               : options_.retry_interval;
    if (!WaitForRetry(delay)) break;
  }
  Count(dropped_write_failed_, metrics_.write_failed);
  Log("dropping event " + correlated.event.metadata.namespace_ + "/" +
      correlated.event.metadata.name + " (" + correlated.event.reason +
      "): " + last_error.ToString());
}

void EventRecorder::Flush() {
  MutexLock lock(mu_);
  const std::uint64_t target = last_seq_;
  // Also ends after ShutDown(): the sink thread tries every queued event before it exits.
  while (done_seq_ < target) done_cv_.Wait(mu_);
}

void EventRecorder::ShutDown() {
  {
    MutexLock lock(mu_);
    shutting_down_ = true;
    queue_cv_.NotifyAll();
    retry_cv_.NotifyAll();
  }
  MutexLock join(join_mu_);
  if (sink_thread_.joinable()) sink_thread_.join();
}

EventRecorderStats EventRecorder::stats() const {
  EventRecorderStats out;
  out.created = created_.load(std::memory_order_relaxed);
  out.patched = patched_.load(std::memory_order_relaxed);
  out.dropped_queue_full = dropped_queue_full_.load(std::memory_order_relaxed);
  out.dropped_spam = dropped_spam_.load(std::memory_order_relaxed);
  out.dropped_write_failed = dropped_write_failed_.load(std::memory_order_relaxed);
  return out;
}

}  // namespace slicewright::runtime

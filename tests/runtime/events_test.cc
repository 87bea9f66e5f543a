#include "slicewright/runtime/events.h"

#include <algorithm>
#include <chrono>
#include <deque>
#include <memory>
#include <mutex>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "slicewright/base/clock.h"
#include "slicewright/client/rest_client.h"
#include "slicewright/client/transport.h"
#include "slicewright/codec/json.h"
#include "slicewright/model/meta.h"
#include "slicewright/runtime/metrics.h"

#include "apiserver/rest/serve.h"
#include "client/client_test_util.h"
#include "runtime/stepped_clock.h"

// EventRecorder against the real embedded API server (create, count patches, aggregation, spam
// filter, a dead server), and against a scripted sink for the retry policy.
namespace slicewright::runtime {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;

model::ObjectReference PodRef(std::string name) {
  model::ObjectReference ref;
  ref.kind = "Pod";
  ref.namespace_ = "default";
  ref.name = std::move(name);
  ref.uid = "uid-" + ref.name;
  ref.api_version = "v1";
  return ref;
}

class EventsApiServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    apiserver::ServeOptions options;
    options.listen = "127.0.0.1:0";
    options.data_dir = dir.Path("");
    auto started = apiserver::RunningApiServer::Start(options);
    ASSERT_TRUE(started.ok()) << started.status().ToString();
    server = std::move(started).value();

    client::RestConfig config;
    config.server.scheme = "http";
    config.server.host = "127.0.0.1";
    config.server.port = server->port();
    auto transport = client::Transport::Create(config, {});
    ASSERT_TRUE(transport.ok()) << transport.status().ToString();
    client::RestClientOptions client_options;
    client_options.max_retries = 0;  // a dead server fails each attempt at once
    client_options.qps = 1000;
    client_options.burst = 1000;
    auto made = client::RestClient::Create(
        std::shared_ptr<client::Transport>(std::move(transport).value()), client_options);
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    client = std::move(made).value();
  }

  std::unique_ptr<EventRecorder> Recorder(EventRecorderOptions options = {}) {
    options.component = "endpointslice-controller";
    options.host = "node-a";
    options.clock = &clock;
    options.metrics = &registry;
    options.random_seed = 7;
    auto recorder = EventRecorder::Create(NewRestEventSink(*client), std::move(options));
    EXPECT_TRUE(recorder.ok()) << recorder.status().ToString();
    return recorder.ok() ? std::move(recorder).value() : nullptr;
  }

  // Every event in `default`, by name.
  std::vector<model::Event> Events() {
    Result<std::string> json = client->List(client::EventsResource(), "default", {});
    EXPECT_TRUE(json.ok()) << json.status().ToString();
    if (!json.ok()) return {};
    Result<codec::ObjectSet> set = codec::DecodeJsonDocument(*json, "events");
    EXPECT_TRUE(set.ok()) << set.status().ToString();
    if (!set.ok()) return {};
    std::vector<model::Event> events = std::move(set->events);
    std::sort(events.begin(), events.end(), [](const model::Event& a, const model::Event& b) {
      return a.metadata.name < b.metadata.name;
    });
    return events;
  }

  client::testing::TempDir dir;
  std::unique_ptr<apiserver::RunningApiServer> server;
  std::unique_ptr<client::RestClient> client;
  testing::SteppedClock clock;
  Registry registry;
};

TEST_F(EventsApiServerTest, RecordsOneEventWithUpstreamFields) {
  auto recorder = Recorder();
  recorder->Event(PodRef("web-1"), EventType::kWarning, "FailedToUpdateEndpointSlices",
                  "Error updating Endpoint Slices for Service default/web: quota exceeded");
  model::ObjectReference node;
  node.kind = "Node";
  node.name = "node-1";
  recorder->Event(node, EventType::kNormal, "Ready", "node is ready");
  recorder->Flush();

  const std::vector<model::Event> events = Events();
  ASSERT_EQ(events.size(), 2U);
  const model::Event& e = events[1];  // "web-1." sorts after "node-1."
  EXPECT_TRUE(std::regex_match(e.metadata.name, std::regex(R"(web-1\.[0-9a-f]+)")))
      << e.metadata.name;
  EXPECT_EQ(e.metadata.namespace_, "default");
  EXPECT_EQ(e.involved_object, PodRef("web-1"));
  EXPECT_EQ(e.type, "Warning");
  EXPECT_EQ(e.reason, "FailedToUpdateEndpointSlices");
  EXPECT_EQ(e.message, "Error updating Endpoint Slices for Service default/web: quota exceeded");
  EXPECT_EQ(e.source_component, "endpointslice-controller");
  EXPECT_EQ(e.source_host, "node-a");
  EXPECT_EQ(e.reporting_component, "endpointslice-controller");
  EXPECT_EQ(e.reporting_instance, "node-a");
  EXPECT_EQ(e.count, 1);
  ASSERT_TRUE(e.first_timestamp.has_value());
  EXPECT_EQ(e.first_timestamp, e.last_timestamp);
  // A cluster-scoped object's events go to "default".
  EXPECT_EQ(events[0].involved_object.name, "node-1");
  EXPECT_EQ(events[0].type, "Normal");
  EXPECT_EQ(recorder->stats().created, 2U);
  EXPECT_NE(registry.Expose().find("slicewright_events_written_total{operation=\"create\"} 2"),
            std::string::npos);
}

TEST_F(EventsApiServerTest, IdenticalEventsPatchTheCountOfTheFirst) {
  auto recorder = Recorder();
  for (int i = 0; i < 3; ++i) {
    recorder->Event(PodRef("web-1"), EventType::kNormal, "Synced", "slices are up to date");
    recorder->Flush();
    clock.Advance(seconds(2));
  }
  const std::vector<model::Event> events = Events();
  ASSERT_EQ(events.size(), 1U);
  EXPECT_EQ(events[0].count, 3);
  EXPECT_EQ(events[0].last_timestamp->unix_nanos / 1'000'000'000 -
                events[0].first_timestamp->unix_nanos / 1'000'000'000,
            4);
  EXPECT_EQ(recorder->stats().created, 1U);
  EXPECT_EQ(recorder->stats().patched, 2U);

  // A different message is a different event (until aggregation starts).
  recorder->Event(PodRef("web-1"), EventType::kNormal, "Synced", "something else");
  recorder->Flush();
  EXPECT_EQ(Events().size(), 2U);
}

TEST_F(EventsApiServerTest, SimilarEventsAreCombinedFromTheTenth) {
  auto recorder = Recorder();
  for (int i = 1; i <= 12; ++i) {
    recorder->Event(PodRef("web-1"), EventType::kWarning, "FailedToUpdateEndpointSlices",
                    "attempt " + std::to_string(i));
    // Well inside the 10 minute window. Every second event comes in the same clock tick.
    if (i % 2 == 0) clock.Advance(seconds(1));
  }
  recorder->Flush();
  const std::vector<model::Event> events = Events();
  // Nine messages on their own; from the tenth different message on, one combined event whose
  // message is the latest and whose count counts them.
  ASSERT_EQ(events.size(), 10U);
  int combined = 0;
  for (const model::Event& e : events) {
    if (e.message.starts_with("(combined from similar events): ")) {
      ++combined;
      EXPECT_EQ(e.message, "(combined from similar events): attempt 12");
      EXPECT_EQ(e.count, 3);
    } else {
      EXPECT_EQ(e.count, 1);
    }
  }
  EXPECT_EQ(combined, 1);
  EXPECT_EQ(recorder->stats().created, 10U);
  EXPECT_EQ(recorder->stats().patched, 2U);

  // After 10 quiet minutes the window starts over: a new message stands alone again.
  clock.Advance(minutes(11));
  recorder->Event(PodRef("web-1"), EventType::kWarning, "FailedToUpdateEndpointSlices",
                  "attempt 13");
  recorder->Flush();
  EXPECT_EQ(Events().size(), 11U);
}

TEST_F(EventsApiServerTest, SpamFilterDropsOverBudgetAndRefills) {
  auto recorder = Recorder();
  auto burst = [&](int n) {
    for (int i = 0; i < n; ++i) {
      recorder->Event(PodRef("web-1"), EventType::kNormal, "Synced", "same");
    }
    recorder->Flush();
  };
  burst(30);
  std::vector<model::Event> events = Events();
  ASSERT_EQ(events.size(), 1U);
  EXPECT_EQ(events[0].count, 25);  // the burst
  EXPECT_EQ(recorder->stats().dropped_spam, 5U);
  EXPECT_NE(registry.Expose().find("slicewright_events_dropped_total{reason=\"spam_filter\"} 5"),
            std::string::npos);

  // Another object has its own budget.
  recorder->Event(PodRef("web-2"), EventType::kNormal, "Synced", "same");
  recorder->Flush();
  EXPECT_EQ(Events().size(), 2U);

  // One token every 5 minutes. As upstream, the count counts every occurrence, including the
  // ones the filter kept from the server.
  clock.Advance(minutes(4));
  burst(1);  // 0.8 tokens
  EXPECT_EQ(recorder->stats().dropped_spam, 6U);
  clock.Advance(minutes(2));
  burst(2);  // 1.2 tokens: one passes
  EXPECT_EQ(recorder->stats().dropped_spam, 7U);
  events = Events();
  EXPECT_EQ(events[0].count, 32);  // 30 + the one dropped after 4 minutes + the one that passed
}

TEST_F(EventsApiServerTest, ConcurrentRecordingNeverBlocksOnADeadServer) {
  EventRecorderOptions options;
  options.queue_capacity = 10;
  options.max_attempts = 3;
  std::vector<std::string> logged;
  std::mutex log_mu;
  options.log = [&](std::string_view message) {
    std::lock_guard<std::mutex> lock(log_mu);
    logged.emplace_back(message);
  };
  auto recorder = Recorder(std::move(options));
  server->Stop();

  // The sink thread takes the first event and waits (on the fake clock) to retry it.
  recorder->Event(PodRef("web-0"), EventType::kWarning, "Failed", "first");
  ASSERT_TRUE(clock.WaitSettled(1));
  // Callers go on at once: ten more fit in the queue, the rest are dropped and counted.
  for (int i = 1; i <= 15; ++i) {
    recorder->Event(PodRef("web-" + std::to_string(i)), EventType::kWarning, "Failed", "more");
  }
  EXPECT_EQ(recorder->stats().dropped_queue_full, 5U);

  // Three attempts, then the first event is dropped; the sink thread moves on to the next.
  ASSERT_TRUE(clock.AdvanceUntil([&] { return recorder->stats().dropped_write_failed == 1; }, 1,
                                 seconds(1)));
  // Shutting down tries each queued event once, without waiting, and returns.
  recorder->ShutDown();
  EXPECT_EQ(recorder->stats().dropped_write_failed, 11U);
  recorder->Event(PodRef("late"), EventType::kNormal, "Late", "after shutdown");
  EXPECT_EQ(recorder->stats().dropped_queue_full, 6U);
  recorder->Flush();  // returns: nothing is pending
  std::lock_guard<std::mutex> lock(log_mu);
  ASSERT_EQ(logged.size(), 11U);
  EXPECT_NE(logged[0].find("dropping event default/web-0."), std::string::npos) << logged[0];
}

// A sink answering from a script, recording the fake time of each call.
class ScriptedSink final : public EventSink {
 public:
  struct Call {
    std::string verb;  // "create" or "patch"
    model::Event event;
    Clock::TimePoint at;
  };

  ScriptedSink(Clock& clock, std::deque<Status> answers)
      : clock_(clock), answers_(std::move(answers)) {}

  Result<model::Event> Create(const model::Event& event) override {
    return Answer("create", event);
  }
  Result<model::Event> Patch(const model::Event& event, std::string_view) override {
    return Answer("patch", event);
  }

  std::vector<Call> calls() {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_;
  }

 private:
  Result<model::Event> Answer(const char* verb, const model::Event& event) {
    std::lock_guard<std::mutex> lock(mu_);
    calls_.push_back({verb, event, clock_.Now()});
    Status answer;
    if (!answers_.empty()) {
      answer = answers_.front();
      answers_.pop_front();
    }
    if (!answer.ok()) return answer;
    model::Event written = event;
    written.metadata.resource_version = std::to_string(calls_.size());
    return written;
  }

  Clock& clock_;
  std::mutex mu_;
  std::deque<Status> answers_;
  std::vector<Call> calls_;
};

struct ScriptedRecorder {
  ScriptedRecorder(testing::SteppedClock& clock, std::deque<Status> answers) {
    auto owned = std::make_unique<ScriptedSink>(clock, std::move(answers));
    sink = owned.get();
    EventRecorderOptions options;
    options.component = "c";
    options.host = "h";
    options.clock = &clock;
    options.random_seed = 1;
    recorder = EventRecorder::Create(std::move(owned), std::move(options)).value();
  }
  ScriptedSink* sink = nullptr;
  std::unique_ptr<EventRecorder> recorder;
};

TEST(EventRecorderTest, ConcurrentRetriesTransientFailuresWithBackoff) {
  testing::SteppedClock clock;
  ScriptedRecorder r(clock, {UnavailableError("down"), UnavailableError("still down")});
  r.recorder->Event(PodRef("web-1"), EventType::kNormal, "Synced", "ok");
  ASSERT_TRUE(clock.AdvanceUntil([&] { return r.recorder->stats().created == 1; }, 1,
                                 std::chrono::milliseconds(100)));
  const std::vector<ScriptedSink::Call> calls = r.sink->calls();
  ASSERT_EQ(calls.size(), 3U);
  // The first retry waits a random part of the 10 s interval, the next ones all of it.
  EXPECT_LT(calls[1].at - calls[0].at, seconds(10));
  EXPECT_GE(calls[2].at - calls[1].at, seconds(10));
  EXPECT_LT(calls[2].at - calls[1].at, seconds(10) + std::chrono::milliseconds(100));
}

TEST(EventRecorderTest, ServerRefusalsAreNotRetried) {
  testing::SteppedClock clock;
  ScriptedRecorder r(clock, {InvalidError("reason: Required value")});
  r.recorder->Event(PodRef("web-1"), EventType::kNormal, "", "no reason");
  r.recorder->Flush();  // no clock movement needed: there is no retry
  EXPECT_EQ(r.sink->calls().size(), 1U);
  EXPECT_EQ(r.recorder->stats().dropped_write_failed, 1U);
}

TEST(EventRecorderTest, PatchOfAVanishedEventCreatesItAgain) {
  testing::SteppedClock clock;
  ScriptedRecorder r(clock, {Status(), NotFoundError("events \"web-1.x\" not found")});
  r.recorder->Event(PodRef("web-1"), EventType::kNormal, "Synced", "ok");
  r.recorder->Event(PodRef("web-1"), EventType::kNormal, "Synced", "ok");
  r.recorder->Flush();
  const std::vector<ScriptedSink::Call> calls = r.sink->calls();
  ASSERT_EQ(calls.size(), 3U);
  EXPECT_EQ(calls[0].verb, "create");
  EXPECT_EQ(calls[1].verb, "patch");
  EXPECT_EQ(calls[2].verb, "create");
  EXPECT_EQ(calls[2].event.metadata.name, calls[0].event.metadata.name);
  EXPECT_EQ(calls[2].event.count, 2);
  EXPECT_TRUE(calls[2].event.metadata.resource_version.empty());
  EXPECT_EQ(r.recorder->stats().created, 2U);
}

TEST(EventRecorderTest, RejectsBadOptions) {
  FakeClock clock;
  EventRecorderOptions options;
  options.clock = &clock;
  EXPECT_EQ(
      EventRecorder::Create(std::make_unique<ScriptedSink>(clock, std::deque<Status>{}), options)
          .status()
          .code(),
      StatusCode::kInvalid);  // no component
  options.component = "c";
  options.queue_capacity = 0;
  EXPECT_EQ(
      EventRecorder::Create(std::make_unique<ScriptedSink>(clock, std::deque<Status>{}), options)
          .status()
          .code(),
      StatusCode::kInvalid);
}

}  // namespace
}  // namespace slicewright::runtime

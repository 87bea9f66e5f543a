#include "slicewright/runtime/controller.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "slicewright/base/thread_name.h"
#include "slicewright/runtime/rate_limiter.h"

namespace slicewright::runtime {
namespace {

using namespace std::chrono_literals;

std::unique_ptr<WorkQueue> FastQueue() {
  WorkQueueOptions options;
  // Real time, 1 ms backoff: the retries run at once.
  options.rate_limiter = std::make_unique<ItemExponentialRateLimiter>(1ms, 5ms);
  auto queue = WorkQueue::Create(std::move(options));
  EXPECT_TRUE(queue.ok());
  return std::move(queue).value();
}

struct Outcomes {
  std::mutex mu;
  std::map<std::string, std::vector<SyncOutcome>> by_key;
  Controller::OutcomeFn Fn() {
    return [this](const std::string& key, SyncOutcome outcome, const Status&) {
      std::lock_guard lock(mu);
      by_key[key].push_back(outcome);
    };
  }
  std::vector<SyncOutcome> Of(const std::string& key) {
    std::lock_guard lock(mu);
    return by_key[key];
  }
};

TEST(ControllerTest, RetriesRetryableFailuresThenDrops) {
  auto queue = FastQueue();
  Outcomes outcomes;
  std::atomic<int> flaky_calls{0};
  Controller controller(
      {"test", 2, 3}, *queue,
      [&](const std::string& key) -> Status {
        if (key == "ok") return Status();
        if (key == "flaky") {
          return ++flaky_calls < 3 ? Status(StatusCode::kConflict, "stale") : Status();
        }
        if (key == "invalid") return Status(StatusCode::kInvalid, "bad object");
        return Status(StatusCode::kUnavailable, "server down");
      },
      outcomes.Fn());
  controller.Start();
  for (const char* key : {"ok", "flaky", "invalid", "down"}) queue->Add(key);
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (outcomes.Of("down").size() < 4 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(5ms);
  }
  controller.Stop();
  EXPECT_EQ(outcomes.Of("ok"), std::vector<SyncOutcome>{SyncOutcome::kSuccess});
  EXPECT_EQ(outcomes.Of("flaky"),
            (std::vector<SyncOutcome>{SyncOutcome::kRetried, SyncOutcome::kRetried,
                                      SyncOutcome::kSuccess}));
  EXPECT_EQ(outcomes.Of("invalid"), std::vector<SyncOutcome>{SyncOutcome::kTerminal});
  // max_retries 3: three requeues, then the fourth failure drops the key.
  EXPECT_EQ(outcomes.Of("down"),
            (std::vector<SyncOutcome>{SyncOutcome::kRetried, SyncOutcome::kRetried,
                                      SyncOutcome::kRetried, SyncOutcome::kDropped}));
  EXPECT_EQ(queue->NumRequeues("down"), 0);
}

// slow_retry: a terminal failure, and a key past max_retries, come back after a slow backoff
// (base, doubled, capped) instead of being given up; a success resets it. Without it, the
// test above: given up.
TEST(ControllerTest, SlowRetryBringsBackWhatWouldBeGivenUp) {
  auto queue = FastQueue();
  std::mutex mu;
  std::map<std::string, std::vector<std::chrono::steady_clock::time_point>> calls;
  std::vector<SyncOutcome> refused_outcomes;
  ControllerOptions options{"test", 2, 1};
  options.slow_retry = SlowRetry{40ms, 80ms};
  Controller controller(
      std::move(options), *queue,
      [&](const std::string& key) -> Status {
        std::lock_guard lock(mu);
        calls[key].push_back(std::chrono::steady_clock::now());
        if (key == "refused") {
          // Refused three times (a 422), then the cause is fixed.
          return calls[key].size() <= 3 ? Status(StatusCode::kInvalid, "refused") : Status();
        }
        return Status(StatusCode::kUnavailable, "server down");
      },
      [&](const std::string& key, SyncOutcome outcome, const Status&) {
        std::lock_guard lock(mu);
        if (key == "refused") refused_outcomes.push_back(outcome);
      });
  controller.Start();
  queue->Add("refused");
  queue->Add("down");
  const auto count = [&](const std::string& key) {
    std::lock_guard lock(mu);
    return calls[key].size();
  };
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while ((count("refused") < 4 || count("down") < 6) &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(5ms);
  }
  std::this_thread::sleep_for(200ms);  // a success is not retried again
  controller.Stop();
  std::lock_guard lock(mu);
  EXPECT_EQ(refused_outcomes,
            (std::vector<SyncOutcome>{SyncOutcome::kTerminal, SyncOutcome::kTerminal,
                                      SyncOutcome::kTerminal, SyncOutcome::kSuccess}));
  const auto& refused = calls["refused"];
  ASSERT_EQ(refused.size(), 4U);
  EXPECT_GE(refused[1] - refused[0], 40ms);
  EXPECT_GE(refused[2] - refused[1], 80ms);  // doubled
  EXPECT_GE(refused[3] - refused[2], 80ms);  // capped
  // max_retries 1: a fast retry, then the slow one, and so on: never dropped for good.
  EXPECT_GE(calls["down"].size(), 6U);
}

// With a registry, every sync is counted under controller-runtime's metric names: successes and
// errors per controller, and terminal errors apart.
TEST(ControllerTest, CountsSyncsUnderControllerRuntimeNames) {
  auto queue = FastQueue();
  Registry registry;
  Outcomes outcomes;
  ControllerOptions options{"test", 2, 1};
  options.metrics = &registry;
  Controller controller(
      std::move(options), *queue,
      [&](const std::string& key) -> Status {
        if (key == "invalid") return Status(StatusCode::kInvalid, "bad object");
        if (key == "down") return Status(StatusCode::kUnavailable, "server down");
        return Status();
      },
      outcomes.Fn());
  controller.Start();
  for (const char* key : {"ok", "other", "invalid", "down"}) queue->Add(key);
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  // max_retries 1: "down" fails twice (retried, then dropped).
  while ((outcomes.Of("down").size() < 2 || outcomes.Of("invalid").empty() ||
          outcomes.Of("ok").empty() || outcomes.Of("other").empty()) &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(5ms);
  }
  controller.Stop();
  const std::string exposed = registry.Expose();
  for (const char* line :
       {"controller_runtime_reconcile_total{controller=\"test\",result=\"success\"} 2\n",
        "controller_runtime_reconcile_total{controller=\"test\",result=\"error\"} 3\n",
        "controller_runtime_reconcile_errors_total{controller=\"test\"} 3\n",
        "controller_runtime_terminal_reconcile_errors_total{controller=\"test\"} 1\n"}) {
    EXPECT_NE(exposed.find(line), std::string::npos) << line << "\nin:\n" << exposed;
  }
}

// The workers are named "<thread_name>-w<i>" after the marker of the thread that started them
// (`top -H`, perf): two syncs held in flight at once, so each worker reports its own name.
TEST(ControllerTest, WorkersAreNamedWithMarkerPrefixAndIndex) {
  auto queue = FastQueue();
  std::mutex mu;
  std::condition_variable both_in_flight;
  std::set<std::string> names;
  int in_flight = 0;
  ControllerOptions options{"endpointslice", 2, 1};
  options.thread_name = "eps";
  Controller controller(std::move(options), *queue, [&](const std::string&) -> Status {
    std::unique_lock lock(mu);
    names.insert(CurrentThreadName());
    ++in_flight;
    both_in_flight.notify_all();
    both_in_flight.wait_for(lock, 10s, [&] { return in_flight >= 2; });
    return Status();
  });
  {
    const ScopedThreadNameMarker marker("c2-");
    controller.Start();
  }
  queue->Add("a");
  queue->Add("b");
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(both_in_flight.wait_for(lock, 10s, [&] { return in_flight >= 2; }));
  }
  controller.Stop();
  EXPECT_EQ(names, (std::set<std::string>{"c2-eps-w0", "c2-eps-w1"}));
}

// Without a thread_name the workers take the controller's name.
TEST(ControllerTest, WorkersTakeTheNameWithoutThreadName) {
  auto queue = FastQueue();
  std::mutex mu;
  std::string name;
  std::atomic<bool> synced{false};
  Controller controller({"podsim", 1, 1}, *queue, [&](const std::string&) -> Status {
    std::lock_guard lock(mu);
    name = CurrentThreadName();
    synced = true;
    return Status();
  });
  controller.Start();
  queue->Add("a");
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!synced && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
  controller.Stop();
  std::lock_guard lock(mu);
  EXPECT_EQ(name, "podsim-w0");
}

// Many workers, many keys re-added while in flight: a key is never synced by two workers at once,
// and Stop() lets the syncs in flight finish.
TEST(ControllerTest, ConcurrentWorkersNeverShareAKey) {
  auto queue = FastQueue();
  std::mutex mu;
  std::map<std::string, int> in_flight;
  std::atomic<int> overlaps{0};
  std::atomic<int> finished{0};
  Controller controller({"test", 5, 15}, *queue, [&](const std::string& key) -> Status {
    {
      std::lock_guard lock(mu);
      if (in_flight[key]++ > 0) ++overlaps;
    }
    std::this_thread::sleep_for(200us);
    {
      std::lock_guard lock(mu);
      --in_flight[key];
    }
    ++finished;
    return Status();
  });
  controller.Start();
  std::vector<std::thread> producers;
  for (int p = 0; p < 3; ++p) {
    producers.emplace_back([&queue] {
      for (int i = 0; i < 2000; ++i) queue->Add("key-" + std::to_string(i % 7));
    });
  }
  for (std::thread& producer : producers) producer.join();
  controller.Stop();
  EXPECT_EQ(overlaps, 0);
  EXPECT_GT(finished, 0);
  std::lock_guard lock(mu);
  for (const auto& [key, count] : in_flight) EXPECT_EQ(count, 0) << key;
}

}  // namespace
}  // namespace slicewright::runtime

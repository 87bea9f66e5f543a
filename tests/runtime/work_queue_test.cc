#include "slicewright/runtime/work_queue.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace slicewright::runtime {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

std::unique_ptr<WorkQueue> NewQueue(FakeClock& clock, Registry* registry = nullptr,
                                    std::unique_ptr<RateLimiter> limiter = nullptr) {
  WorkQueueOptions options;
  options.name = "test";
  options.clock = &clock;
  options.metrics = registry;
  options.rate_limiter = std::move(limiter);
  auto queue = WorkQueue::Create(std::move(options));
  EXPECT_TRUE(queue.ok()) << queue.status().ToString();
  return std::move(queue).value();
}

// A key added while it is queued is queued once; keys come out in the order they went in.
TEST(WorkQueueTest, DeduplicatesQueuedKeys) {
  FakeClock clock;
  auto queue = NewQueue(clock);
  queue->Add("a");
  queue->Add("b");
  queue->Add("a");
  EXPECT_EQ(queue->Len(), 2U);
  EXPECT_EQ(queue->Get(), "a");
  EXPECT_EQ(queue->Get(), "b");
  EXPECT_EQ(queue->Len(), 0U);
}

// client-go's TestAddWhileProcessing scenario: a key added while a worker holds it is not handed
// out again (another key is), and is queued once more when the worker calls Done.
TEST(WorkQueueTest, ReAddDuringProcessingRequeuesOnDone) {
  FakeClock clock;
  auto queue = NewQueue(clock);
  queue->Add("a");
  ASSERT_EQ(queue->Get(), "a");
  queue->Add("a");
  queue->Add("a");
  EXPECT_EQ(queue->Len(), 0U);  // held by a worker: waits for Done
  queue->Add("b");
  EXPECT_EQ(queue->Get(), "b");  // the next Get skips the held key
  queue->Done("a");
  EXPECT_EQ(queue->Len(), 1U);
  EXPECT_EQ(queue->Get(), "a");
  queue->Done("a");
  queue->Done("b");
  EXPECT_EQ(queue->Len(), 0U);
  queue->Done("never-handed-out");  // harmless
  EXPECT_EQ(queue->Len(), 0U);
}

// After ShutDown, new keys are ignored but queued ones are still handed out; then Get returns
// nullopt.
TEST(WorkQueueTest, ShutDownHandsOutQueuedKeysThenStops) {
  FakeClock clock;
  auto queue = NewQueue(clock);
  queue->Add("a");
  queue->ShutDown();
  EXPECT_TRUE(queue->ShuttingDown());
  queue->Add("b");
  queue->AddAfter("c", Clock::Duration::zero());
  EXPECT_EQ(queue->Get(), "a");
  EXPECT_EQ(queue->Get(), std::nullopt);
}

// Several workers blocked in Get all return when the queue shuts down.
TEST(WorkQueueTest, ConcurrentShutDownUnblocksGet) {
  FakeClock clock;
  auto queue = NewQueue(clock);
  std::atomic<int> stopped{0};
  std::vector<std::thread> workers;
  for (int i = 0; i < 3; ++i) {
    workers.emplace_back([&] {
      if (!queue->Get().has_value()) {
        stopped.fetch_add(1);
      }
    });
  }
  queue->ShutDown();
  for (auto& worker : workers) {
    worker.join();
  }
  EXPECT_EQ(stopped.load(), 3);
}

// ShutDownWithDrain returns only after the key being processed is Done.
TEST(WorkQueueTest, ConcurrentShutDownWithDrainWaitsForInFlightWork) {
  FakeClock clock;
  auto queue = NewQueue(clock);
  queue->Add("a");
  ASSERT_EQ(queue->Get(), "a");
  std::atomic<bool> drained{false};
  std::thread stopper([&] {
    queue->ShutDownWithDrain();
    drained.store(true);
  });
  while (!queue->ShuttingDown()) {
    std::this_thread::yield();
  }
  for (int i = 0; i < 1000; ++i) {
    std::this_thread::yield();  // give a wrong implementation every chance to return early
  }
  EXPECT_FALSE(drained.load());
  queue->Done("a");
  stopper.join();
  EXPECT_TRUE(drained.load());
  EXPECT_EQ(queue->Get(), std::nullopt);
}

// Many workers pulling keys that producers keep re-adding never hold one key at the same time,
// and every key added is processed at least once after its last Add.
TEST(WorkQueueTest, ConcurrentWorkersNeverShareAKey) {
  FakeClock clock;
  auto queue = NewQueue(clock);
  std::mutex mu;
  std::set<std::string> in_flight;
  std::atomic<int> overlaps{0};
  std::atomic<int> processed{0};
  std::vector<std::thread> workers;
  for (int w = 0; w < 4; ++w) {
    workers.emplace_back([&] {
      while (auto key = queue->Get()) {
        {
          std::lock_guard<std::mutex> guard(mu);
          if (!in_flight.insert(*key).second) {
            overlaps.fetch_add(1);
          }
        }
        std::this_thread::yield();  // widen the window in which a second worker could get it
        {
          std::lock_guard<std::mutex> guard(mu);
          in_flight.erase(*key);
        }
        processed.fetch_add(1);
        queue->Done(*key);
      }
    });
  }
  std::vector<std::thread> producers;
  for (int p = 0; p < 2; ++p) {
    producers.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) {
        queue->Add("key-" + std::to_string(i % 7));
      }
    });
  }
  for (auto& producer : producers) {
    producer.join();
  }
  queue->ShutDownWithDrain();
  // Drain waits for in-flight keys only; the workers still empty the queue before they stop.
  for (auto& worker : workers) {
    worker.join();
  }
  EXPECT_EQ(overlaps.load(), 0);
  EXPECT_GE(processed.load(), 7);
  EXPECT_EQ(queue->Len(), 0U);
}

// Delayed keys become ready in deadline order as the fake clock passes each deadline; a key
// already waiting keeps its earlier deadline; a zero delay adds at once.
TEST(WorkQueueTest, AddAfterOrdersByDeadline) {
  FakeClock clock;
  auto queue = NewQueue(clock);
  queue->AddAfter("a", seconds(3));
  queue->AddAfter("b", seconds(1));
  queue->AddAfter("c", seconds(2));
  queue->AddAfter("c", seconds(10));  // later: ignored
  queue->AddAfter("d", seconds(10));
  queue->AddAfter("d", seconds(2));  // earlier: moves d up
  EXPECT_EQ(queue->Len(), 0U);
  clock.Advance(milliseconds(999));
  EXPECT_EQ(queue->Len(), 0U);
  clock.Advance(milliseconds(1));
  EXPECT_EQ(queue->Len(), 1U);
  EXPECT_EQ(queue->Get(), "b");
  clock.Advance(seconds(1));
  EXPECT_EQ(queue->Get(), "c");
  EXPECT_EQ(queue->Get(), "d");
  clock.Advance(seconds(1));
  EXPECT_EQ(queue->Get(), "a");
  clock.Advance(seconds(100));
  EXPECT_EQ(queue->Len(), 0U);  // the dropped later deadlines do not fire again

  queue->AddAfter("now", Clock::Duration::zero());
  EXPECT_EQ(queue->Len(), 1U);
}

// The delaying thread, waiting on the fake clock, wakes a worker blocked in Get once the clock
// passes the deadline (no reader call needed to move the key).
TEST(WorkQueueTest, ConcurrentDelayedKeyWakesBlockedWorker) {
  FakeClock clock;
  auto queue = NewQueue(clock);
  std::optional<std::string> got;
  std::thread worker([&] { got = queue->Get(); });
  queue->AddAfter("a", seconds(5));
  queue->AddAfter("b", seconds(1));
  clock.Advance(seconds(1));
  worker.join();
  EXPECT_EQ(got, "b");
}

// AddRateLimited backs a failing key off exponentially from 1 s (the default limiter);
// NumRequeues counts the failures and Forget resets them.
TEST(WorkQueueTest, AddRateLimitedBacksOffUntilForget) {
  FakeClock clock;
  auto queue = NewQueue(clock);
  const Clock::Duration waits[] = {seconds(1), seconds(2), seconds(4)};
  for (Clock::Duration wait : waits) {
    queue->AddRateLimited("k");
    clock.Advance(wait - milliseconds(1));
    EXPECT_EQ(queue->Len(), 0U);
    clock.Advance(milliseconds(1));
    ASSERT_EQ(queue->Get(), "k");
    queue->Done("k");
  }
  EXPECT_EQ(queue->NumRequeues("k"), 3);
  queue->Forget("k");
  EXPECT_EQ(queue->NumRequeues("k"), 0);
  queue->AddRateLimited("k");
  clock.Advance(seconds(1));
  EXPECT_EQ(queue->Get(), "k");
}

// The overall token bucket spaces retries of different keys once its burst is spent.
TEST(WorkQueueTest, TokenBucketLimitsRetries) {
  FakeClock clock;
  auto bucket = BucketRateLimiter::Create(clock, 10, 2);
  ASSERT_TRUE(bucket.ok());
  auto queue = NewQueue(clock, nullptr, std::move(bucket).value());
  queue->AddRateLimited("a");
  queue->AddRateLimited("b");
  queue->AddRateLimited("c");
  queue->AddRateLimited("d");
  EXPECT_EQ(queue->Len(), 2U);
  clock.Advance(milliseconds(100));
  EXPECT_EQ(queue->Len(), 3U);
  clock.Advance(milliseconds(100));
  EXPECT_EQ(queue->Len(), 4U);
}

// A metrics registry without a queue name, or with a clashing definition, fails Create.
TEST(WorkQueueTest, CreateRejectsBadMetricsSetup) {
  FakeClock clock;
  Registry registry;
  WorkQueueOptions unnamed;
  unnamed.clock = &clock;
  unnamed.metrics = &registry;
  Status status = WorkQueue::Create(std::move(unnamed)).status();
  EXPECT_EQ(status.code(), StatusCode::kInvalid);
  EXPECT_EQ(status.ToString(), "a work queue that reports metrics needs a name");

  ASSERT_TRUE(registry.AddCounter("workqueue_depth", "taken").ok());
  WorkQueueOptions clash;
  clash.name = "q";
  clash.clock = &clock;
  clash.metrics = &registry;
  EXPECT_EQ(WorkQueue::Create(std::move(clash)).status().code(), StatusCode::kAlreadyExists);
}

// After a scripted sequence on a fake clock, every workqueue_* series has the value client-go's
// metrics would have: depth counts dirty keys, queue and work durations are observed on Get and
// Done, retries count AddAfter calls, and the in-flight gauges are computed at scrape time.
TEST(WorkQueueTest, MetricsAfterScriptedSequence) {
  FakeClock clock;
  Registry registry;
  auto queue = NewQueue(clock, &registry);
  queue->Add("a");
  queue->Add("b");
  queue->Add("a");  // deduplicated: not an add
  clock.Advance(seconds(1));
  ASSERT_EQ(queue->Get(), "a");  // waited 1 s
  queue->Add("a");               // while processing: counts as an add and in depth
  clock.Advance(seconds(2));
  queue->AddAfter("c", Clock::Duration::zero());  // a retry, added at once
  queue->AddRateLimited("d");                     // a retry, waiting 1 s (not yet in depth)
  const std::string in_flight = registry.Expose();
  EXPECT_NE(in_flight.find("workqueue_unfinished_work_seconds{name=\"test\"} 2\n"),
            std::string::npos)
      << in_flight;
  EXPECT_NE(in_flight.find("workqueue_longest_running_processor_seconds{name=\"test\"} 2\n"),
            std::string::npos);
  EXPECT_NE(in_flight.find("workqueue_depth{name=\"test\"} 3\n"), std::string::npos);

  queue->Done("a");              // worked 2 s; "a" is queued again
  ASSERT_EQ(queue->Get(), "b");  // waited 3 s
  clock.Advance(milliseconds(500));
  queue->Done("b");  // worked 0.5 s

  EXPECT_EQ(registry.Expose(),
            "# HELP workqueue_adds_total Total number of adds handled by workqueue\n"
            "# TYPE workqueue_adds_total counter\n"
            "workqueue_adds_total{name=\"test\"} 4\n"
            "# HELP workqueue_depth Current depth of workqueue\n"
            "# TYPE workqueue_depth gauge\n"
            "workqueue_depth{name=\"test\"} 2\n"
            "# HELP workqueue_longest_running_processor_seconds How many seconds has the longest "
            "running processor for workqueue been running.\n"
            "# TYPE workqueue_longest_running_processor_seconds gauge\n"
            "workqueue_longest_running_processor_seconds{name=\"test\"} 0\n"
            "# HELP workqueue_queue_duration_seconds How long in seconds an item stays in "
            "workqueue before being requested.\n"
            "# TYPE workqueue_queue_duration_seconds histogram\n"
            "workqueue_queue_duration_seconds_bucket{name=\"test\",le=\"1e-08\"} 0\n"
            "workqueue_queue_duration_seconds_bucket{name=\"test\",le=\"1e-07\"} 0\n"
            "workqueue_queue_duration_seconds_bucket{name=\"test\",le=\"1e-06\"} 0\n"
            "workqueue_queue_duration_seconds_bucket{name=\"test\",le=\"9.999999999999999e-06\"} "
            "0\n"
            "workqueue_queue_duration_seconds_bucket{name=\"test\",le=\"9.999999999999999e-05\"} "
            "0\n"
            "workqueue_queue_duration_seconds_bucket{name=\"test\",le=\"0.001\"} 0\n"
            "workqueue_queue_duration_seconds_bucket{name=\"test\",le=\"0.01\"} 0\n"
            "workqueue_queue_duration_seconds_bucket{name=\"test\",le=\"0.1\"} 0\n"
            "workqueue_queue_duration_seconds_bucket{name=\"test\",le=\"1\"} 1\n"
            "workqueue_queue_duration_seconds_bucket{name=\"test\",le=\"10\"} 2\n"
            "workqueue_queue_duration_seconds_bucket{name=\"test\",le=\"+Inf\"} 2\n"
            "workqueue_queue_duration_seconds_sum{name=\"test\"} 4\n"
            "workqueue_queue_duration_seconds_count{name=\"test\"} 2\n"
            "# HELP workqueue_retries_total Total number of retries handled by workqueue\n"
            "# TYPE workqueue_retries_total counter\n"
            "workqueue_retries_total{name=\"test\"} 2\n"
            "# HELP workqueue_unfinished_work_seconds How many seconds of work has done that is "
            "in progress and hasn't been observed by work_duration. Large values indicate stuck "
            "threads. One can deduce the number of stuck threads by observing the rate at which "
            "this increases.\n"
            "# TYPE workqueue_unfinished_work_seconds gauge\n"
            "workqueue_unfinished_work_seconds{name=\"test\"} 0\n"
            "# HELP workqueue_work_duration_seconds How long in seconds processing an item from "
            "workqueue takes.\n"
            "# TYPE workqueue_work_duration_seconds histogram\n"
            "workqueue_work_duration_seconds_bucket{name=\"test\",le=\"1e-08\"} 0\n"
            "workqueue_work_duration_seconds_bucket{name=\"test\",le=\"1e-07\"} 0\n"
            "workqueue_work_duration_seconds_bucket{name=\"test\",le=\"1e-06\"} 0\n"
            "workqueue_work_duration_seconds_bucket{name=\"test\",le=\"9.999999999999999e-06\"} "
            "0\n"
            "workqueue_work_duration_seconds_bucket{name=\"test\",le=\"9.999999999999999e-05\"} "
            "0\n"
            "workqueue_work_duration_seconds_bucket{name=\"test\",le=\"0.001\"} 0\n"
            "workqueue_work_duration_seconds_bucket{name=\"test\",le=\"0.01\"} 0\n"
            "workqueue_work_duration_seconds_bucket{name=\"test\",le=\"0.1\"} 0\n"
            "workqueue_work_duration_seconds_bucket{name=\"test\",le=\"1\"} 1\n"
            "workqueue_work_duration_seconds_bucket{name=\"test\",le=\"10\"} 2\n"
            "workqueue_work_duration_seconds_bucket{name=\"test\",le=\"+Inf\"} 2\n"
            "workqueue_work_duration_seconds_sum{name=\"test\"} 2.5\n"
            "workqueue_work_duration_seconds_count{name=\"test\"} 2\n");
}

// Scrapes running while workers process keys, and while the queue is destroyed, neither race
// nor touch a destroyed queue (the collect hook is removed first).
TEST(WorkQueueTest, ConcurrentScrapesWhileWorkingAndDestroying) {
  FakeClock clock;
  Registry registry;
  auto queue = NewQueue(clock, &registry);
  std::atomic<bool> stop_scraping{false};
  std::atomic<int> scrapes{0};
  std::thread scraper([&] {
    while (!stop_scraping.load()) {
      EXPECT_NE(registry.Expose().find("workqueue_depth"), std::string::npos);
      scrapes.fetch_add(1);
    }
  });
  std::vector<std::thread> workers;
  for (int w = 0; w < 2; ++w) {
    workers.emplace_back([&] {
      while (auto key = queue->Get()) {
        queue->Done(*key);
      }
    });
  }
  for (int i = 0; i < 500; ++i) {
    queue->Add("k" + std::to_string(i % 13));
    if (i % 50 == 0) {
      clock.Advance(milliseconds(1));
    }
  }
  queue->ShutDownWithDrain();
  for (auto& worker : workers) {
    worker.join();
  }
  while (scrapes.load() < 3) {
    std::this_thread::yield();
  }
  queue.reset();  // while the scraper still runs
  stop_scraping.store(true);
  scraper.join();
  EXPECT_NE(registry.Expose().find("workqueue_adds_total{name=\"test\"}"), std::string::npos);
}

// The duration buckets are client-go's, value for value: its le labels include
// "9.999999999999999e-06", so queries written against kube-controller-manager match ours.
TEST(WorkQueueTest, DurationBucketsMatchClientGo) {
  std::vector<std::string> labels;
  for (double bound : WorkQueueDurationBuckets()) {
    labels.push_back(FormatValue(bound));
  }
  EXPECT_EQ(labels,
            (std::vector<std::string>{"1e-08", "1e-07", "1e-06", "9.999999999999999e-06",
                                      "9.999999999999999e-05", "0.001", "0.01", "0.1", "1", "10"}));
}

// Two queues on one registry share the families and keep their own series; destroying a queue
// stops its scrape-time updates.
TEST(WorkQueueTest, QueuesShareFamiliesBySeries) {
  FakeClock clock;
  Registry registry;
  {
    WorkQueueOptions first;
    first.name = "endpointslice";
    first.clock = &clock;
    first.metrics = &registry;
    auto one = WorkQueue::Create(std::move(first));
    ASSERT_TRUE(one.ok());
    WorkQueueOptions second;
    second.name = "mirroring";
    second.clock = &clock;
    second.metrics = &registry;
    auto two = WorkQueue::Create(std::move(second));
    ASSERT_TRUE(two.ok());
    (*one)->Add("x");
    (*two)->Add("x");
    (*two)->Add("y");
    const std::string text = registry.Expose();
    EXPECT_NE(text.find("workqueue_depth{name=\"endpointslice\"} 1\n"
                        "workqueue_depth{name=\"mirroring\"} 2\n"),
              std::string::npos)
        << text;
  }
  EXPECT_NE(registry.Expose().find("workqueue_adds_total{name=\"mirroring\"} 2\n"),
            std::string::npos);
}

}  // namespace
}  // namespace slicewright::runtime

#include "controllers/common/sync_loop.h"

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "slicewright/base/clock.h"
#include "slicewright/runtime/metrics.h"

#include "controllers/common/slice_labels.h"
#include "controllers/handled_barrier.h"

namespace slicewright::controllers {
namespace {

using namespace std::chrono_literals;

std::unique_ptr<SyncLoop> MakeLoop(Clock* clock = nullptr, runtime::Registry* metrics = nullptr) {
  runtime::WorkQueueOptions options;
  options.name = "test";
  options.clock = clock;
  options.metrics = metrics;
  Result<std::unique_ptr<SyncLoop>> loop = SyncLoop::Create(std::move(options));
  EXPECT_TRUE(loop.ok()) << loop.status().ToString();
  return loop.ok() ? std::move(loop).value() : nullptr;
}

TEST(SyncLoopTest, EnqueueNowLaterOrNotAtAll) {
  FakeClock clock;
  runtime::Registry registry;
  std::unique_ptr<SyncLoop> loop = MakeLoop(&clock, &registry);
  ASSERT_NE(loop, nullptr);
  loop->Enqueue("", 0s);  // names no Service: dropped
  loop->Enqueue("ns/now", 0s);
  loop->Enqueue("ns/negative", -1s);
  loop->Enqueue("ns/later", 1s);
  EXPECT_EQ(loop->queue().Len(), 2U);
  // Only the real delay is a retry, as client-go's AddAfter counts it.
  EXPECT_NE(registry.Expose().find("workqueue_retries_total{name=\"test\"} 1"), std::string::npos)
      << registry.Expose();
  clock.Advance(1s);
  for (int i = 0; i < 1000 && loop->queue().Len() < 3; ++i) std::this_thread::sleep_for(1ms);
  EXPECT_EQ(loop->queue().Len(), 3U);
  loop->Stop();  // without Start(): shuts the queue down
  EXPECT_TRUE(loop->queue().ShuttingDown());
}

TEST(SyncLoopTest, WorkersSyncEveryKeyUntilStopped) {
  std::unique_ptr<SyncLoop> loop = MakeLoop();
  ASSERT_NE(loop, nullptr);
  std::mutex mu;
  std::set<std::string> synced;
  runtime::ControllerOptions options;
  options.name = "test";
  options.workers = 2;
  loop->Start(options, [&](const std::string& key) {
    std::lock_guard lock(mu);
    synced.insert(key);
    return Status();
  });
  loop->Start(options, [](const std::string&) { return Status(StatusCode::kInternal, "x"); });
  loop->Enqueue("ns/a", 0s);
  loop->Enqueue("ns/b", 0s);
  for (int i = 0; i < 2000; ++i) {
    {
      std::lock_guard lock(mu);
      if (synced.size() == 2) break;
    }
    std::this_thread::sleep_for(1ms);
  }
  loop->Stop();
  loop->Stop();  // idempotent
  std::lock_guard lock(mu);
  EXPECT_EQ(synced, (std::set<std::string>{"ns/a", "ns/b"}));
}

TEST(SyncLoopTest, CheckFlagRangeWordsAsUpstream) {
  EXPECT_TRUE(CheckFlagRange("--x", 1, 1, 50).ok());
  EXPECT_TRUE(CheckFlagRange("--x", 50, 1, 50).ok());
  const Status low = CheckFlagRange("--concurrent-service-endpoint-syncs", 0, 1, 50);
  EXPECT_EQ(low.code(), StatusCode::kInvalid);
  EXPECT_EQ(low.message(), "--concurrent-service-endpoint-syncs must be between 1 and 50, got 0");
  EXPECT_FALSE(CheckFlagRange("--x", 51, 1, 50).ok());
}

TEST(SliceLabelsTest, ManagerAndService) {
  model::ObjectMeta slice;
  slice.namespace_ = "shop";
  EXPECT_FALSE(ManagedBy(slice, "endpointslice-controller.k8s.io"));
  EXPECT_EQ(ServiceKeyOfSlice(slice), "");
  slice.labels = {{"endpointslice.kubernetes.io/managed-by", "endpointslice-controller.k8s.io"},
                  {"kubernetes.io/service-name", ""}};
  EXPECT_TRUE(ManagedBy(slice, "endpointslice-controller.k8s.io"));
  EXPECT_FALSE(ManagedBy(slice, "other"));
  EXPECT_EQ(ServiceKeyOfSlice(slice), "");  // an empty name names no Service
  slice.labels["kubernetes.io/service-name"] = "web";
  EXPECT_EQ(ServiceKeyOfSlice(slice), "shop/web");
}

// What the controllers' kept state relies on: a key is never synced by two workers at once, and a
// key re-added while it syncs is synced again after, so the last sync of every key began after
// its last Enqueue. Two threads re-add a few keys while four workers sync them.
TEST(SyncLoopTest, ConcurrentWorkersNeverSyncOneKeyTwiceAtOnce) {
  std::unique_ptr<SyncLoop> loop = MakeLoop();
  ASSERT_NE(loop, nullptr);
  const std::vector<std::string> keys = {"ns/a", "ns/b", "ns/c"};
  std::mutex mu;
  std::set<std::string> in_flight;         // guarded by mu
  std::map<std::string, int> enqueued;     // the last generation enqueued, guarded by mu
  std::map<std::string, int> synced_from;  // the generation the last sync began at, guarded by mu
  int overlaps = 0;                        // guarded by mu
  runtime::ControllerOptions options;
  options.name = "test";
  options.workers = 4;
  loop->Start(options, [&](const std::string& key) {
    {
      std::lock_guard lock(mu);
      if (!in_flight.insert(key).second) ++overlaps;
      synced_from[key] = enqueued[key];
    }
    std::this_thread::yield();
    std::lock_guard lock(mu);
    in_flight.erase(key);
    return Status();
  });
  std::vector<std::thread> writers;
  for (int writer = 0; writer < 2; ++writer) {
    writers.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) {
        const std::string& key = keys[static_cast<std::size_t>(i) % keys.size()];
        {
          std::lock_guard lock(mu);
          ++enqueued[key];
        }
        loop->Enqueue(key, 0s);
      }
    });
  }
  for (std::thread& writer : writers) writer.join();
  EXPECT_TRUE(testing::WaitIdle(loop->queue()));
  loop->Stop();
  std::lock_guard lock(mu);
  EXPECT_EQ(overlaps, 0);
  EXPECT_EQ(synced_from, enqueued);
}

}  // namespace
}  // namespace slicewright::controllers

#include "controllers/common/sync_loop.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "slicewright/base/clock.h"
#include "slicewright/runtime/metrics.h"

#include "controllers/common/slice_labels.h"

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

}  // namespace
}  // namespace slicewright::controllers

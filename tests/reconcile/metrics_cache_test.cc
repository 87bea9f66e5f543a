#include "slicewright/reconcile/metrics_cache.h"

#include <map>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "slicewright/reconcile/plan.h"

namespace slicewright::reconcile {
namespace {

GroupStats Stats(std::string key, std::int64_t endpoints, std::int64_t slices,
                 std::string address_type = "IPv4") {
  return GroupStats{std::move(address_type), std::move(key), endpoints, slices};
}

// Scenario 42 (TestNumEndpointsAndSlices): totals over port keys with max 10 per slice.
TEST(MetricsCacheTest, Scenario42_NumEndpointsAndSlices) {
  MetricsCache cache({.max_endpoints_per_slice = 10});
  const std::vector<GroupStats> groups = {Stats("80", 12, 5), Stats("80,443", 18, 8)};
  cache.UpdateServicePortCache("ns/svc1", "IPv4", groups);
  EXPECT_EQ(cache.Totals(), (MetricsTotals{30, 13, 4}));
  cache.UpdateServicePortCache("ns/svc2", "IPv4", groups);
  EXPECT_EQ(cache.Totals(), (MetricsTotals{60, 26, 8}));
  cache.DeleteService("ns/svc1");
  EXPECT_EQ(cache.Totals(), (MetricsTotals{30, 13, 4}));
}

// Scenario 42 with the spec's max of 100: desired 2, actual 13, endpoints 30.
TEST(MetricsCacheTest, Scenario42_DefaultMax) {
  MetricsCache cache({});
  const std::vector<GroupStats> groups = {Stats("80", 12, 5), Stats("80,443", 18, 8)};
  cache.UpdateServicePortCache("ns/svc", "IPv4", groups);
  EXPECT_EQ(cache.Totals(), (MetricsTotals{30, 13, 2}));
}

// Scenario 42 (TestPlaceHolderSlice): empty keys still desire one slice per Service entry, unless
// placeholders are disabled (mirroring).
TEST(MetricsCacheTest, Scenario42_PlaceholderMinimum) {
  const std::vector<GroupStats> groups = {Stats("80", 0, 1), Stats("443", 0, 1)};
  MetricsCache with_placeholder({});
  with_placeholder.UpdateServicePortCache("ns/svc", "IPv4", groups);
  EXPECT_EQ(with_placeholder.Totals(), (MetricsTotals{0, 2, 1}));
  MetricsCache without_placeholder({.placeholder_enabled = false});
  without_placeholder.UpdateServicePortCache("ns/svc", "IPv4", groups);
  EXPECT_EQ(without_placeholder.Totals(), (MetricsTotals{0, 2, 0}));
}

// Decision §15.3: a dual-stack Service counts both families (upstream keeps only the last), each
// with its own placeholder minimum; updating one family replaces only that family.
TEST(MetricsCacheTest, DualStackSumsAddressTypes) {
  MetricsCache cache({});
  cache.UpdateServicePortCache("ns/svc", "IPv4", std::vector<GroupStats>{Stats("80", 1, 1)});
  cache.UpdateServicePortCache("ns/svc", "IPv6",
                               std::vector<GroupStats>{Stats("80", 0, 0), Stats("", 0, 1)});
  EXPECT_EQ(cache.Totals(), (MetricsTotals{1, 2, 2}));
  cache.UpdateServicePortCache("ns/svc", "IPv4", std::vector<GroupStats>{Stats("80", 150, 2)});
  EXPECT_EQ(cache.Totals(), (MetricsTotals{150, 3, 3}));
  cache.DeleteService("ns/svc");
  EXPECT_EQ(cache.Totals(), (MetricsTotals{0, 0, 0}));
}

// UpdateService replaces every family at once and drops families no longer reported.
TEST(MetricsCacheTest, UpdateServiceReplacesAllFamilies) {
  MetricsCache cache({});
  cache.UpdateService(
      "ns/svc", std::vector<GroupStats>{Stats("80", 3, 1, "IPv4"), Stats("80", 2, 1, "IPv6")});
  EXPECT_EQ(cache.Totals(), (MetricsTotals{5, 2, 2}));
  cache.UpdateService(
      "ns/svc", std::vector<GroupStats>{Stats("80", 4, 1, "IPv4"), Stats("443", 1, 1, "IPv4")});
  EXPECT_EQ(cache.Totals(), (MetricsTotals{5, 2, 2}));
  cache.UpdateService("ns/svc", {});
  EXPECT_EQ(cache.Totals(), (MetricsTotals{0, 0, 0}));
}

// A repeated port key in one update replaces the earlier one (ServicePortCache.Set).
TEST(MetricsCacheTest, RepeatedPortKeyReplaces) {
  MetricsCache cache({});
  cache.UpdateServicePortCache("ns/svc", "IPv4",
                               std::vector<GroupStats>{Stats("80", 5, 1), Stats("80", 7, 2)});
  EXPECT_EQ(cache.Totals(), (MetricsTotals{7, 2, 1}));
}

// Deleting an unknown Service changes nothing.
TEST(MetricsCacheTest, DeleteUnknownService) {
  MetricsCache cache({});
  cache.UpdateServicePortCache("ns/svc", "IPv4", std::vector<GroupStats>{Stats("80", 5, 1)});
  cache.DeleteService("ns/other");
  EXPECT_EQ(cache.Totals(), (MetricsTotals{5, 1, 1}));
}

// services_count_by_traffic_distribution: PreferClose as is, other values as
// ImplementationSpecific, unset removes; a used label stays with 0.
TEST(MetricsCacheTest, ServicesByTrafficDistribution) {
  MetricsCache cache({});
  cache.UpdateTrafficDistribution("ns/svc1", "PreferClose");
  cache.UpdateTrafficDistribution("ns/svc2", "PreferClose");
  cache.UpdateTrafficDistribution("ns/svc3", "InvalidValue");
  cache.UpdateTrafficDistribution("ns/svc4", std::nullopt);
  EXPECT_EQ(
      cache.ServicesByTrafficDistribution(),
      (std::map<std::string, std::int64_t>{{"ImplementationSpecific", 1}, {"PreferClose", 2}}));
  cache.UpdateTrafficDistribution("ns/svc1", "");
  cache.UpdateTrafficDistribution("ns/svc3", "PreferClose");
  cache.DeleteService("ns/svc2");
  EXPECT_EQ(
      cache.ServicesByTrafficDistribution(),
      (std::map<std::string, std::int64_t>{{"ImplementationSpecific", 0}, {"PreferClose", 1}}));
}

// Concurrent updates keep the totals consistent.
TEST(MetricsCacheTest, ConcurrentUpdates) {
  MetricsCache cache({});
  const auto work = [&](const std::string& prefix) {
    for (int i = 0; i < 200; ++i) {
      const std::string key = prefix + std::to_string(i % 10);
      cache.UpdateServicePortCache(key, "IPv4", std::vector<GroupStats>{Stats("80", i % 5, 1)});
      cache.UpdateTrafficDistribution(key, "PreferClose");
    }
  };
  std::thread a(work, "a/");
  std::thread b(work, "b/");
  a.join();
  b.join();
  // Each of the 20 Services ends at its last update: i in 190..199 gives i % 5 endpoints.
  EXPECT_EQ(cache.Totals(), (MetricsTotals{40, 20, 20}));
  EXPECT_EQ(cache.ServicesByTrafficDistribution().at("PreferClose"), 20);
}

}  // namespace
}  // namespace slicewright::reconcile

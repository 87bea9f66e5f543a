#include "slicewright/runtime/metrics.h"

#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace slicewright::runtime {
namespace {

// Counters, gauges and labelled children print sorted by family name, then by label values,
// each family with its HELP and TYPE lines.
TEST(RegistryTest, ExposesSortedGoldenText) {
  Registry registry;
  auto requests =
      registry.AddCounterFamily("http_requests_total", "Requests served.", {"code", "method"});
  ASSERT_TRUE(requests.ok()) << requests.status().ToString();
  (*requests)->WithLabelValues({"500", "GET"}).value()->Inc();
  (*requests)->WithLabelValues({"200", "POST"}).value()->Add(2);
  (*requests)->WithLabelValues({"200", "GET"}).value()->Add(3);
  auto temperature = registry.AddGauge("a_temperature_celsius", "Current temperature.");
  ASSERT_TRUE(temperature.ok());
  (*temperature)->Set(-1.5);
  auto up = registry.AddGauge("up", "");
  ASSERT_TRUE(up.ok());
  (*up)->Inc();

  EXPECT_EQ(registry.Expose(),
            "# HELP a_temperature_celsius Current temperature.\n"
            "# TYPE a_temperature_celsius gauge\n"
            "a_temperature_celsius -1.5\n"
            "# HELP http_requests_total Requests served.\n"
            "# TYPE http_requests_total counter\n"
            "http_requests_total{code=\"200\",method=\"GET\"} 3\n"
            "http_requests_total{code=\"200\",method=\"POST\"} 2\n"
            "http_requests_total{code=\"500\",method=\"GET\"} 1\n"
            "# TYPE up gauge\n"
            "up 1\n");
}

// A histogram prints cumulative _bucket lines with le labels up to +Inf, then _sum and _count;
// a value equal to a bound counts in that bound's bucket.
TEST(RegistryTest, ExposesHistogram) {
  Registry registry;
  auto latency = registry.AddHistogramFamily("rpc_seconds", "RPC latency.", {"op"},
                                             {0.1, 1, 10, std::numeric_limits<double>::infinity()});
  ASSERT_TRUE(latency.ok()) << latency.status().ToString();
  Histogram* get = (*latency)->WithLabelValues({"get"}).value();
  get->Observe(0.05);
  get->Observe(0.1);
  get->Observe(5);
  get->Observe(100);
  EXPECT_EQ(registry.Expose(),
            "# HELP rpc_seconds RPC latency.\n"
            "# TYPE rpc_seconds histogram\n"
            "rpc_seconds_bucket{op=\"get\",le=\"0.1\"} 2\n"
            "rpc_seconds_bucket{op=\"get\",le=\"1\"} 2\n"
            "rpc_seconds_bucket{op=\"get\",le=\"10\"} 3\n"
            "rpc_seconds_bucket{op=\"get\",le=\"+Inf\"} 4\n"
            "rpc_seconds_sum{op=\"get\"} 105.15\n"
            "rpc_seconds_count{op=\"get\"} 4\n");

  Registry plain;
  auto bare = plain.AddHistogram("size_bytes", "Sizes.", {1024});
  ASSERT_TRUE(bare.ok());
  (*bare)->Observe(2048);
  EXPECT_EQ(plain.Expose(),
            "# HELP size_bytes Sizes.\n"
            "# TYPE size_bytes histogram\n"
            "size_bytes_bucket{le=\"1024\"} 0\n"
            "size_bytes_bucket{le=\"+Inf\"} 1\n"
            "size_bytes_sum 2048\n"
            "size_bytes_count 1\n");
}

// A NaN observation counts only in the +Inf bucket (it is less than or equal to no bound).
TEST(HistogramTest, NanGoesToInf) {
  Histogram histogram({1, 2});
  histogram.Observe(std::nan(""));
  histogram.Observe(-5);
  const Histogram::Snapshot snapshot = histogram.Read();
  EXPECT_EQ(snapshot.buckets, (std::vector<std::uint64_t>{1, 0, 1}));
  EXPECT_EQ(snapshot.count, 2U);
  EXPECT_TRUE(std::isnan(snapshot.sum));
}

// Label values escape backslash, double quote and newline; HELP escapes backslash and newline
// but not the quote (exposition format 0.0.4).
TEST(RegistryTest, EscapesLabelValuesAndHelp) {
  Registry registry;
  auto family = registry.AddCounterFamily("escaped_total", "a \"quoted\" \\ help\nline", {"path"});
  ASSERT_TRUE(family.ok());
  (*family)->WithLabelValues({"C:\\dir\n\"x\""}).value()->Inc();
  EXPECT_EQ(registry.Expose(),
            "# HELP escaped_total a \"quoted\" \\\\ help\\nline\n"
            "# TYPE escaped_total counter\n"
            "escaped_total{path=\"C:\\\\dir\\n\\\"x\\\"\"} 1\n");
}

// A family with no children yet prints nothing, not even HELP and TYPE.
TEST(RegistryTest, EmptyFamilyPrintsNothing) {
  Registry registry;
  ASSERT_TRUE(registry.AddGaugeFamily("idle", "Idle.", {"name"}).ok());
  EXPECT_EQ(registry.Expose(), "");
}

// Bad metric and label names, reserved and duplicate labels and bad bounds are kInvalid errors
// with a message naming the problem.
TEST(RegistryTest, RejectsInvalidDefinitions) {
  Registry registry;
  struct Case {
    std::string_view name;
    Status status;
    std::string_view message;
  };
  const Case cases[] = {
      {"empty metric name", registry.AddCounter("", "").status(), "metric name is empty"},
      {"leading digit", registry.AddCounter("1abc", "").status(),
       "invalid metric name \"1abc\": must match [a-zA-Z_:][a-zA-Z0-9_:]*"},
      {"dash", registry.AddGauge("a-b", "").status(),
       "invalid metric name \"a-b\": must match [a-zA-Z_:][a-zA-Z0-9_:]*"},
      {"label with colon", registry.AddCounterFamily("ok", "", {"a:b"}).status(),
       "metric ok: invalid label name \"a:b\": must match [a-zA-Z_][a-zA-Z0-9_]*"},
      {"reserved label", registry.AddCounterFamily("ok", "", {"__name"}).status(),
       "metric ok: invalid label name \"__name\": names starting with __ are reserved"},
      {"duplicate label", registry.AddCounterFamily("ok", "", {"a", "a"}).status(),
       "metric ok: duplicate label name \"a\""},
      {"le on a histogram", registry.AddHistogramFamily("h", "", {"le"}, {1}).status(),
       "metric h: a histogram may not use the label name \"le\""},
      {"unsorted bounds", registry.AddHistogram("h", "", {2, 1}).status(),
       "metric h: histogram bucket bounds must be strictly increasing, got 2 then 1"},
      {"NaN bound", registry.AddHistogram("h", "", {std::nan("")}).status(),
       "metric h: histogram bucket bound NaN is not finite"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(c.status.code(), StatusCode::kInvalid);
    EXPECT_EQ(c.status.ToString(), c.message);
  }
  EXPECT_EQ(registry.Expose(), "");
}

// The same definition registered twice shares one family; a different one under a taken name is
// kAlreadyExists. Wrong label value counts are kInvalid.
TEST(RegistryTest, SharesIdenticalFamiliesOnly) {
  Registry registry;
  auto first = registry.AddCounterFamily("jobs_total", "Jobs.", {"queue"});
  auto second = registry.AddCounterFamily("jobs_total", "Jobs.", {"queue"});
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(*first, *second);

  Status other_type = registry.AddGaugeFamily("jobs_total", "Jobs.", {"queue"}).status();
  EXPECT_EQ(other_type.code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(other_type.ToString(),
            "metric jobs_total is already registered with a different definition");
  EXPECT_EQ(registry.AddCounterFamily("jobs_total", "Other.", {"queue"}).status().code(),
            StatusCode::kAlreadyExists);
  EXPECT_EQ(registry.AddCounterFamily("jobs_total", "Jobs.", {}).status().code(),
            StatusCode::kAlreadyExists);
  ASSERT_TRUE(registry.AddHistogram("h", "", {1, 2}).ok());
  EXPECT_EQ(registry.AddHistogram("h", "", {1, 3}).status().code(), StatusCode::kAlreadyExists);

  Status arity = (*first)->WithLabelValues({"a", "b"}).status();
  EXPECT_EQ(arity.code(), StatusCode::kInvalid);
  EXPECT_EQ(arity.ToString(), "metric jobs_total has 1 label(s), got 2 value(s)");
  EXPECT_EQ((*first)->WithLabelValues({"a"}).value(), (*first)->WithLabelValues({"a"}).value());
}

// Counters ignore negative and NaN increments; gauges go both ways.
TEST(RegistryTest, CounterOnlyGoesUp) {
  Registry registry;
  Counter* counter = registry.AddCounter("c_total", "").value();
  counter->Add(2);
  counter->Add(-1);
  counter->Add(std::nan(""));
  EXPECT_EQ(counter->Value(), 2);
  Gauge* gauge = registry.AddGauge("g", "").value();
  gauge->Inc();
  gauge->Add(2.5);
  gauge->Dec();
  EXPECT_EQ(gauge->Value(), 2.5);
}

// Values print as Go's FormatFloat(v, 'g', -1, 64), as Prometheus' own clients do.
TEST(FormatValueTest, MatchesGoShortestG) {
  struct Case {
    double value;
    std::string_view text;
  };
  const Case cases[] = {
      {0, "0"},
      {1, "1"},
      {-2, "-2"},
      {0.5, "0.5"},
      {105.15, "105.15"},
      {1e-8, "1e-08"},
      {0.0001, "0.0001"},
      {0.00001, "1e-05"},
      {123456, "123456"},
      {1e6, "1e+06"},
      {1234567, "1.234567e+06"},
      {std::numeric_limits<double>::infinity(), "+Inf"},
      {-std::numeric_limits<double>::infinity(), "-Inf"},
      {std::nan(""), "NaN"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(FormatValue(c.value), c.text);
  }
}

// Exponential buckets multiply from the start; bad parameters are kInvalid.
TEST(ExponentialBucketsTest, MultipliesFromStart) {
  auto buckets = ExponentialBuckets(1, 2, 4);
  ASSERT_TRUE(buckets.ok());
  EXPECT_EQ(*buckets, (std::vector<double>{1, 2, 4, 8}));
  EXPECT_EQ(ExponentialBuckets(0, 2, 4).status().code(), StatusCode::kInvalid);
  EXPECT_EQ(ExponentialBuckets(1, 1, 4).status().code(), StatusCode::kInvalid);
  EXPECT_EQ(ExponentialBuckets(1, 2, 0).status().code(), StatusCode::kInvalid);
}

// Collect hooks run at each Expose() until their handle is destroyed.
TEST(RegistryTest, CollectHooksRunUntilReleased) {
  Registry registry;
  Gauge* gauge = registry.AddGauge("scrapes", "").value();
  {
    Registry::CollectHook hook = registry.OnCollect([gauge] { gauge->Inc(); });
    EXPECT_EQ(registry.Expose(), "# TYPE scrapes gauge\nscrapes 1\n");
    Registry::CollectHook moved = std::move(hook);
    EXPECT_EQ(registry.Expose(), "# TYPE scrapes gauge\nscrapes 2\n");
  }
  EXPECT_EQ(registry.Expose(), "# TYPE scrapes gauge\nscrapes 2\n");
}

// Updates from many threads are neither lost nor torn, while another thread scrapes.
TEST(RegistryTest, ConcurrentUpdatesAreNotLost) {
  Registry registry;
  CounterFamily* family = registry.AddCounterFamily("ops_total", "", {"worker"}).value();
  Histogram* histogram = registry.AddHistogram("op_seconds", "", {0.5}).value();
  constexpr int kThreads = 4;
  constexpr int kOps = 10000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Counter* mine = family->WithLabelValues({std::to_string(t % 2)}).value();
      for (int i = 0; i < kOps; ++i) {
        mine->Inc();
        histogram->Observe(1);
      }
    });
  }
  std::thread scraper([&] {
    for (int i = 0; i < 50; ++i) {
      EXPECT_FALSE(registry.Expose().empty());
    }
  });
  for (auto& thread : threads) {
    thread.join();
  }
  scraper.join();
  EXPECT_EQ(family->WithLabelValues({"0"}).value()->Value(), 2 * kOps);
  EXPECT_EQ(family->WithLabelValues({"1"}).value()->Value(), 2 * kOps);
  const Histogram::Snapshot snapshot = histogram->Read();
  EXPECT_EQ(snapshot.count, static_cast<std::uint64_t>(kThreads * kOps));
  EXPECT_EQ(snapshot.sum, kThreads * kOps);
}

}  // namespace
}  // namespace slicewright::runtime

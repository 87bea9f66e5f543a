// A Prometheus metrics registry: counters, gauges and histograms, each either a single series or a
// family of children keyed by label values, written in the text exposition format 0.0.4.
// Thread-safe. Updating a child is a few relaxed atomic operations; looking a child up by label
// values takes the family's mutex, so hot paths look a child up once and keep the pointer. The
// registry owns every metric: pointers it hands out live as long as the registry.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "slicewright/base/mutex.h"
#include "slicewright/base/result.h"
#include "slicewright/base/status.h"

namespace slicewright::runtime {

// A value that only goes up (Prometheus counter).
class Counter final {
 public:
  Counter() = default;
  Counter(const Counter&) = delete;
  Counter& operator=(const Counter&) = delete;

  void Inc() { Add(1.0); }
  // Adds `delta`; a negative or NaN delta is ignored, since a counter never goes down.
  void Add(double delta);
  double Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

// A value that goes up and down (Prometheus gauge).
class Gauge final {
 public:
  Gauge() = default;
  Gauge(const Gauge&) = delete;
  Gauge& operator=(const Gauge&) = delete;

  void Set(double value) { value_.store(value, std::memory_order_relaxed); }
  void Inc() { Add(1.0); }
  void Dec() { Add(-1.0); }
  void Add(double delta) { value_.fetch_add(delta, std::memory_order_relaxed); }
  double Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

// Observations counted into buckets with inclusive upper bounds (Prometheus histogram). The
// bounds are fixed at registration; +Inf is implicit.
class Histogram final {
 public:
  // `bounds` must be strictly increasing and finite (Registry validates them).
  explicit Histogram(std::vector<double> bounds);
  Histogram(const Histogram&) = delete;
  Histogram& operator=(const Histogram&) = delete;

  // Counts `value` in the first bucket whose bound is >= value (NaN goes only to +Inf).
  void Observe(double value);

  // A consistent-enough copy for exposition: per-bucket (not cumulative) counts, the last one for
  // +Inf. The count is the sum of the buckets, so the +Inf line always equals _count; the sum
  // may lag a concurrent Observe() by one value.
  struct Snapshot {
    std::vector<std::uint64_t> buckets;
    double sum = 0;
    std::uint64_t count = 0;
  };
  Snapshot Read() const;
  const std::vector<double>& bounds() const { return bounds_; }

 private:
  std::vector<double> bounds_;
  std::vector<std::atomic<std::uint64_t>> counts_;  // bounds_.size() + 1 (the last is +Inf)
  std::atomic<double> sum_{0.0};
};

namespace internal {

enum class MetricType { kCounter, kGauge, kHistogram };

// What every family shares: its name, help, type and label names; children by label values.
class FamilyBase {
 public:
  FamilyBase(std::string name, std::string help, MetricType type,
             std::vector<std::string> label_names);
  FamilyBase(const FamilyBase&) = delete;
  FamilyBase& operator=(const FamilyBase&) = delete;
  virtual ~FamilyBase() = default;

  const std::string& name() const { return name_; }
  const std::string& help() const { return help_; }
  MetricType type() const { return type_; }
  const std::vector<std::string>& label_names() const { return label_names_; }

  // Appends HELP, TYPE and one line per sample, children sorted by label values. A family with no
  // children writes nothing (as client_golang does).
  void Write(std::string& out) const;

 protected:
  // Validates the count of `values` and returns the child, creating it on first use.
  Result<void*> ChildFor(std::span<const std::string_view> values);
  virtual std::shared_ptr<void> NewChild() const = 0;
  virtual void WriteChild(std::string& out, const std::string& labels, const void* child) const = 0;

 private:
  std::string name_;
  std::string help_;
  MetricType type_;
  std::vector<std::string> label_names_;
  mutable Mutex mu_;
  std::map<std::vector<std::string>, std::shared_ptr<void>> children_ SW_GUARDED_BY(mu_);
};

}  // namespace internal

// A counter family: one Counter per distinct tuple of label values.
class CounterFamily final : public internal::FamilyBase {
 public:
  CounterFamily(std::string name, std::string help, std::vector<std::string> label_names);
  // The child for these label values (as many as there are label names, else kInvalid).
  Result<Counter*> WithLabelValues(std::span<const std::string_view> values);
  Result<Counter*> WithLabelValues(std::initializer_list<std::string_view> values) {
    return WithLabelValues(std::span<const std::string_view>(values.begin(), values.size()));
  }

 private:
  std::shared_ptr<void> NewChild() const override;
  void WriteChild(std::string& out, const std::string& labels, const void* child) const override;
};

class GaugeFamily final : public internal::FamilyBase {
 public:
  GaugeFamily(std::string name, std::string help, std::vector<std::string> label_names);
  Result<Gauge*> WithLabelValues(std::span<const std::string_view> values);
  Result<Gauge*> WithLabelValues(std::initializer_list<std::string_view> values) {
    return WithLabelValues(std::span<const std::string_view>(values.begin(), values.size()));
  }

 private:
  std::shared_ptr<void> NewChild() const override;
  void WriteChild(std::string& out, const std::string& labels, const void* child) const override;
};

class HistogramFamily final : public internal::FamilyBase {
 public:
  HistogramFamily(std::string name, std::string help, std::vector<std::string> label_names,
                  std::vector<double> bounds);
  Result<Histogram*> WithLabelValues(std::span<const std::string_view> values);
  Result<Histogram*> WithLabelValues(std::initializer_list<std::string_view> values) {
    return WithLabelValues(std::span<const std::string_view>(values.begin(), values.size()));
  }
  const std::vector<double>& bounds() const { return bounds_; }

 private:
  std::shared_ptr<void> NewChild() const override;
  void WriteChild(std::string& out, const std::string& labels, const void* child) const override;

  std::vector<double> bounds_;
};

// `count` bounds: start, start*factor, start*factor^2, ... (prometheus.ExponentialBuckets).
// Requires start > 0, factor > 1 and count >= 1, else kInvalid.
Result<std::vector<double>> ExponentialBuckets(double start, double factor, int count);

// Checks a metric name against [a-zA-Z_:][a-zA-Z0-9_:]*; kInvalid naming the problem otherwise.
Status ValidateMetricName(std::string_view name);
// Checks a label name against [a-zA-Z_][a-zA-Z0-9_]*, not starting with "__" (reserved).
Status ValidateLabelName(std::string_view name);

// Formats a sample value as Go's strconv.FormatFloat(v, 'g', -1, 64), which Prometheus' own
// clients print: "1", "0.5", "1e-08", "1.5e+06", "+Inf", "-Inf", "NaN".
std::string FormatValue(double value);

// Owns metric families by name and writes them all, sorted by name.
class Registry final {
 public:
  Registry() = default;
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;
  ~Registry();

  // Each Add* validates the names (kInvalid), and returns the existing family when one of the same
  // name, type, help, label names (and bounds) exists, so independent users can share a family;
  // a different definition under a taken name is kAlreadyExists.
  Result<CounterFamily*> AddCounterFamily(std::string name, std::string help,
                                          std::vector<std::string> label_names);
  Result<GaugeFamily*> AddGaugeFamily(std::string name, std::string help,
                                      std::vector<std::string> label_names);
  // `bounds` must be strictly increasing, not NaN; a trailing +Inf is dropped (it is implicit).
  Result<HistogramFamily*> AddHistogramFamily(std::string name, std::string help,
                                              std::vector<std::string> label_names,
                                              std::vector<double> bounds);

  // A single series: a family without labels, and its only child.
  Result<Counter*> AddCounter(std::string name, std::string help);
  Result<Gauge*> AddGauge(std::string name, std::string help);
  Result<Histogram*> AddHistogram(std::string name, std::string help, std::vector<double> bounds);

  // A callback run at the start of every Expose(), to set gauges that are cheaper to compute on
  // scrape than to maintain (such as the age of the oldest in-flight item). The returned handle
  // removes the callback when destroyed, waiting for a running Expose() to finish with it; it
  // must be destroyed before the registry. Callbacks must not call back into the registry.
  class CollectHook final {
   public:
    CollectHook() = default;
    CollectHook(CollectHook&& other) noexcept;
    CollectHook& operator=(CollectHook&& other) noexcept;
    CollectHook(const CollectHook&) = delete;
    CollectHook& operator=(const CollectHook&) = delete;
    ~CollectHook();

   private:
    friend class Registry;
    CollectHook(Registry* registry, std::uint64_t id) : registry_(registry), id_(id) {}
    void Reset();
    Registry* registry_ = nullptr;
    std::uint64_t id_ = 0;
  };
  [[nodiscard]] CollectHook OnCollect(std::function<void()> callback);

  // Every family in the text exposition format 0.0.4 (Content-Type
  // "text/plain; version=0.0.4; charset=utf-8"), sorted by family name, then label values.
  std::string Expose() const;

 private:
  template <typename Family, typename... Args>
  Result<Family*> AddFamily(std::string name, std::string help,
                            std::vector<std::string> label_names, Args&&... args);

  mutable Mutex mu_;
  std::map<std::string, std::unique_ptr<internal::FamilyBase>, std::less<>> families_
      SW_GUARDED_BY(mu_);

  mutable Mutex hooks_mu_;
  std::uint64_t next_hook_id_ SW_GUARDED_BY(hooks_mu_) = 1;
  std::map<std::uint64_t, std::function<void()>> hooks_ SW_GUARDED_BY(hooks_mu_);
};

}  // namespace slicewright::runtime

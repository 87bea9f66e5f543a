#include "slicewright/runtime/metrics.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <set>
#include <utility>

namespace slicewright::runtime {
namespace {

using internal::MetricType;

bool IsNameStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

std::string_view TypeName(MetricType type) {
  switch (type) {
    case MetricType::kCounter:
      return "counter";
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kHistogram:
      return "histogram";
  }
  return "untyped";
}

// HELP text escapes backslash and newline; label values also escape the double quote.
void AppendEscaped(std::string& out, std::string_view text, bool quote) {
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (quote && c == '"') {
      out += "\\\"";
    } else {
      out += c;
    }
  }
}

// `{a="x",b="y"` without the closing brace, so a histogram can append `,le="…"`; "" if no labels.
std::string LabelPrefix(const std::vector<std::string>& names,
                        const std::vector<std::string>& values) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    out += i == 0 ? "{" : ",";
    out += names[i];
    out += "=\"";
    AppendEscaped(out, values[i], /*quote=*/true);
    out += '"';
  }
  return out;
}

void AppendSample(std::string& out, std::string_view name, std::string_view suffix,
                  const std::string& labels, double value) {
  out += name;
  out += suffix;
  if (!labels.empty()) {
    out += labels;
    out += '}';
  }
  out += ' ';
  out += FormatValue(value);
  out += '\n';
}

Status ValidateBounds(std::vector<double>& bounds) {
  if (!bounds.empty() && bounds.back() == std::numeric_limits<double>::infinity()) {
    bounds.pop_back();
  }
  for (size_t i = 0; i < bounds.size(); ++i) {
    if (!std::isfinite(bounds[i])) {
      return InvalidError("histogram bucket bound " + FormatValue(bounds[i]) + " is not finite");
    }
    if (i > 0 && bounds[i] <= bounds[i - 1]) {
      return InvalidError("histogram bucket bounds must be strictly increasing, got " +
                          FormatValue(bounds[i - 1]) + " then " + FormatValue(bounds[i]));
    }
  }
  return Status::Ok();
}

}  // namespace

void Counter::Add(double delta) {
  if (!(delta > 0)) {  // also rejects NaN
    return;
  }
  value_.fetch_add(delta, std::memory_order_relaxed);
}

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), counts_(bounds_.size() + 1) {}

void Histogram::Observe(double value) {
  // Buckets are inclusive upper bounds, so the first bound >= value. NaN is >= no bound, so it
  // belongs in +Inf (as in client_golang); lower_bound alone would put it in the first bucket.
  size_t index = bounds_.size();
  if (!std::isnan(value)) {
    index = static_cast<size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), value) -
                                bounds_.begin());
  }
  counts_[index].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(value, std::memory_order_relaxed);
}

Histogram::Snapshot Histogram::Read() const {
  Snapshot snapshot;
  snapshot.buckets.resize(bounds_.size() + 1);
  for (size_t i = 0; i < snapshot.buckets.size(); ++i) {
    snapshot.buckets[i] = counts_[i].load(std::memory_order_relaxed);
    snapshot.count += snapshot.buckets[i];
  }
  snapshot.sum = sum_.load(std::memory_order_relaxed);
  return snapshot;
}

namespace internal {

FamilyBase::FamilyBase(std::string name, std::string help, MetricType type,
                       std::vector<std::string> label_names)
    : name_(std::move(name)),
      help_(std::move(help)),
      type_(type),
      label_names_(std::move(label_names)) {}

Result<void*> FamilyBase::ChildFor(std::span<const std::string_view> values) {
  if (values.size() != label_names_.size()) {
    return InvalidError("metric " + name_ + " has " + std::to_string(label_names_.size()) +
                        " label(s), got " + std::to_string(values.size()) + " value(s)");
  }
  std::vector<std::string> key(values.begin(), values.end());
  MutexLock guard(mu_);
  auto it = children_.find(key);
  if (it == children_.end()) {
    it = children_.emplace(std::move(key), NewChild()).first;
  }
  return it->second.get();
}

void FamilyBase::Write(std::string& out) const {
  MutexLock guard(mu_);
  if (children_.empty()) {
    return;
  }
  if (!help_.empty()) {
    out += "# HELP ";
    out += name_;
    out += ' ';
    AppendEscaped(out, help_, /*quote=*/false);
    out += '\n';
  }
  out += "# TYPE ";
  out += name_;
  out += ' ';
  out += TypeName(type_);
  out += '\n';
  for (const auto& [values, child] : children_) {
    WriteChild(out, LabelPrefix(label_names_, values), child.get());
  }
}

}  // namespace internal

CounterFamily::CounterFamily(std::string name, std::string help,
                             std::vector<std::string> label_names)
    : FamilyBase(std::move(name), std::move(help), MetricType::kCounter, std::move(label_names)) {}

Result<Counter*> CounterFamily::WithLabelValues(std::span<const std::string_view> values) {
  SW_ASSIGN_OR_RETURN(void* child, ChildFor(values));
  return static_cast<Counter*>(child);
}

std::shared_ptr<void> CounterFamily::NewChild() const { return std::make_shared<Counter>(); }

void CounterFamily::WriteChild(std::string& out, const std::string& labels,
                               const void* child) const {
  AppendSample(out, name(), "", labels, static_cast<const Counter*>(child)->Value());
}

GaugeFamily::GaugeFamily(std::string name, std::string help, std::vector<std::string> label_names)
    : FamilyBase(std::move(name), std::move(help), MetricType::kGauge, std::move(label_names)) {}

Result<Gauge*> GaugeFamily::WithLabelValues(std::span<const std::string_view> values) {
  SW_ASSIGN_OR_RETURN(void* child, ChildFor(values));
  return static_cast<Gauge*>(child);
}

std::shared_ptr<void> GaugeFamily::NewChild() const { return std::make_shared<Gauge>(); }

void GaugeFamily::WriteChild(std::string& out, const std::string& labels, const void* child) const {
  AppendSample(out, name(), "", labels, static_cast<const Gauge*>(child)->Value());
}

HistogramFamily::HistogramFamily(std::string name, std::string help,
                                 std::vector<std::string> label_names, std::vector<double> bounds)
    : FamilyBase(std::move(name), std::move(help), MetricType::kHistogram, std::move(label_names)),
      bounds_(std::move(bounds)) {}

Result<Histogram*> HistogramFamily::WithLabelValues(std::span<const std::string_view> values) {
  SW_ASSIGN_OR_RETURN(void* child, ChildFor(values));
  return static_cast<Histogram*>(child);
}

std::shared_ptr<void> HistogramFamily::NewChild() const {
  return std::make_shared<Histogram>(bounds_);
}

void HistogramFamily::WriteChild(std::string& out, const std::string& labels,
                                 const void* child) const {
  const Histogram::Snapshot snapshot = static_cast<const Histogram*>(child)->Read();
  const std::string bucket_prefix = labels.empty() ? "{" : labels + ",";
  std::uint64_t cumulative = 0;
  for (size_t i = 0; i < snapshot.buckets.size(); ++i) {
    cumulative += snapshot.buckets[i];
    const std::string le = i < bounds_.size() ? FormatValue(bounds_[i]) : "+Inf";
    out += name();
    out += "_bucket";
    out += bucket_prefix;
    out += "le=\"";
    out += le;
    out += "\"} ";
    out += FormatValue(static_cast<double>(cumulative));
    out += '\n';
  }
  AppendSample(out, name(), "_sum", labels, snapshot.sum);
  AppendSample(out, name(), "_count", labels, static_cast<double>(snapshot.count));
}

Result<std::vector<double>> ExponentialBuckets(double start, double factor, int count) {
  if (!(start > 0) || !(factor > 1) || count < 1) {
    return InvalidError("exponential buckets need start > 0, factor > 1 and count >= 1");
  }
  std::vector<double> bounds;
  bounds.reserve(static_cast<size_t>(count));
  double bound = start;
  for (int i = 0; i < count; ++i) {
    bounds.push_back(bound);
    bound *= factor;
  }
  return bounds;
}

Status ValidateMetricName(std::string_view name) {
  if (name.empty()) {
    return InvalidError("metric name is empty");
  }
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (!(IsNameStart(c) || c == ':' || (i > 0 && IsDigit(c)))) {
      return InvalidError("invalid metric name \"" + std::string(name) +
                          "\": must match [a-zA-Z_:][a-zA-Z0-9_:]*");
    }
  }
  return Status::Ok();
}

Status ValidateLabelName(std::string_view name) {
  if (name.empty()) {
    return InvalidError("label name is empty");
  }
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (!(IsNameStart(c) || (i > 0 && IsDigit(c)))) {
      return InvalidError("invalid label name \"" + std::string(name) +
                          "\": must match [a-zA-Z_][a-zA-Z0-9_]*");
    }
  }
  if (name.starts_with("__")) {
    return InvalidError("invalid label name \"" + std::string(name) +
                        "\": names starting with __ are reserved");
  }
  return Status::Ok();
}

std::string FormatValue(double value) {
  if (std::isnan(value)) {
    return "NaN";
  }
  if (std::isinf(value)) {
    return value > 0 ? "+Inf" : "-Inf";
  }
  // Go's 'g' with the shortest precision: the shortest round-trip digits, in exponent form when
  // the decimal exponent is below -4 or at least 6 (Go fixes the threshold at 6 for shortest).
  std::array<char, 64> buf{};
  char* const begin = buf.data();
  char* const end = buf.data() + buf.size();
  auto sci = std::to_chars(begin, end, value, std::chars_format::scientific);
  const std::string_view text(begin, static_cast<size_t>(sci.ptr - begin));
  const size_t e = text.find('e');
  int exponent = 0;
  std::from_chars(text.data() + e + 1 + (text[e + 1] == '+' ? 1 : 0), text.data() + text.size(),
                  exponent);
  if (exponent < -4 || exponent >= 6) {
    return std::string(text);
  }
  auto fixed = std::to_chars(begin, end, value, std::chars_format::fixed);
  return {begin, static_cast<size_t>(fixed.ptr - begin)};
}

Registry::~Registry() = default;

template <typename Family, typename... Args>
Result<Family*> Registry::AddFamily(std::string name, std::string help,
                                    std::vector<std::string> label_names, Args&&... args) {
  SW_RETURN_IF_ERROR(ValidateMetricName(name));
  std::set<std::string_view> seen;
  for (const std::string& label : label_names) {
    SW_RETURN_IF_ERROR(ValidateLabelName(label).WithContext("metric " + name));
    if (!seen.insert(label).second) {
      std::string message = "metric " + name;
      message += ": duplicate label name \"";
      message += label;
      message += '"';
      return InvalidError(std::move(message));
    }
  }
  auto family = std::make_unique<Family>(std::move(name), std::move(help), std::move(label_names),
                                         std::forward<Args>(args)...);
  MutexLock guard(mu_);
  auto it = families_.find(family->name());
  if (it != families_.end()) {
    auto* existing = dynamic_cast<Family*>(it->second.get());
    bool same = existing != nullptr && existing->help() == family->help() &&
                existing->label_names() == family->label_names();
    if constexpr (std::is_same_v<Family, HistogramFamily>) {
      same = same && existing->bounds() == family->bounds();
    }
    if (!same) {
      return AlreadyExistsError("metric " + family->name() +
                                " is already registered with a different definition");
    }
    return existing;
  }
  Family* result = family.get();
  const std::string& key = family->name();
  families_.emplace(key, std::move(family));
  return result;
}

Result<CounterFamily*> Registry::AddCounterFamily(std::string name, std::string help,
                                                  std::vector<std::string> label_names) {
  return AddFamily<CounterFamily>(std::move(name), std::move(help), std::move(label_names));
}

Result<GaugeFamily*> Registry::AddGaugeFamily(std::string name, std::string help,
                                              std::vector<std::string> label_names) {
  return AddFamily<GaugeFamily>(std::move(name), std::move(help), std::move(label_names));
}

Result<HistogramFamily*> Registry::AddHistogramFamily(std::string name, std::string help,
                                                      std::vector<std::string> label_names,
                                                      std::vector<double> bounds) {
  SW_RETURN_IF_ERROR(ValidateBounds(bounds).WithContext("metric " + name));
  for (const std::string& label : label_names) {
    if (label == "le") {
      return InvalidError("metric " + name + ": a histogram may not use the label name \"le\"");
    }
  }
  return AddFamily<HistogramFamily>(std::move(name), std::move(help), std::move(label_names),
                                    std::move(bounds));
}

Result<Counter*> Registry::AddCounter(std::string name, std::string help) {
  SW_ASSIGN_OR_RETURN(CounterFamily * family,
                      AddCounterFamily(std::move(name), std::move(help), {}));
  return family->WithLabelValues(std::span<const std::string_view>());
}

Result<Gauge*> Registry::AddGauge(std::string name, std::string help) {
  SW_ASSIGN_OR_RETURN(GaugeFamily * family, AddGaugeFamily(std::move(name), std::move(help), {}));
  return family->WithLabelValues(std::span<const std::string_view>());
}

Result<Histogram*> Registry::AddHistogram(std::string name, std::string help,
                                          std::vector<double> bounds) {
  SW_ASSIGN_OR_RETURN(HistogramFamily * family,
                      AddHistogramFamily(std::move(name), std::move(help), {}, std::move(bounds)));
  return family->WithLabelValues(std::span<const std::string_view>());
}

Registry::CollectHook::CollectHook(CollectHook&& other) noexcept
    : registry_(std::exchange(other.registry_, nullptr)), id_(other.id_) {}

Registry::CollectHook& Registry::CollectHook::operator=(CollectHook&& other) noexcept {
  if (this != &other) {
    Reset();
    registry_ = std::exchange(other.registry_, nullptr);
    id_ = other.id_;
  }
  return *this;
}

Registry::CollectHook::~CollectHook() { Reset(); }

void Registry::CollectHook::Reset() {
  if (registry_ == nullptr) {
    return;
  }
  MutexLock guard(registry_->hooks_mu_);
  registry_->hooks_.erase(id_);
  registry_ = nullptr;
}

Registry::CollectHook Registry::OnCollect(std::function<void()> callback) {
  MutexLock guard(hooks_mu_);
  const std::uint64_t id = next_hook_id_++;
  hooks_.emplace(id, std::move(callback));
  return {this, id};
}

std::string Registry::Expose() const {
  {
    // Held while the callbacks run, so a hook's owner cannot go away under it (~CollectHook
    // waits here).
    MutexLock guard(hooks_mu_);
    for (const auto& [id, callback] : hooks_) {
      callback();
    }
  }
  std::string out;
  MutexLock guard(mu_);
  for (const auto& [name, family] : families_) {
    family->Write(out);
  }
  return out;
}

}  // namespace slicewright::runtime

#include "slicewright/model/time.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <limits>

namespace slicewright::model {
namespace {

constexpr std::int64_t kNanosPerSecond = 1'000'000'000;
constexpr std::int64_t kSecondsPerDay = 86'400;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Reads exactly text[pos, pos + width) as decimal digits into `out`.
bool ReadFixed(std::string_view text, std::size_t pos, std::size_t width, int& out) {
  if (pos + width > text.size()) {
    return false;
  }
  int value = 0;
  for (std::size_t i = pos; i < pos + width; ++i) {
    if (!IsDigit(text[i])) {
      return false;
    }
    value = value * 10 + (text[i] - '0');
  }
  out = value;
  return true;
}

// Splits nanoseconds since the epoch into whole seconds (floored, so times before 1970 keep a
// non-negative fraction as Go's time.Time does) and the fraction in [0, 1e9).
void SplitNanos(std::int64_t unix_nanos, std::int64_t& seconds, std::int64_t& nanos) {
  seconds = unix_nanos / kNanosPerSecond;
  nanos = unix_nanos % kNanosPerSecond;
  if (nanos < 0) {
    nanos += kNanosPerSecond;
    --seconds;
  }
}

// "YYYY-MM-DDTHH:MM:SS" in UTC. Every int64 nanosecond count falls in years 1677..2262, so the
// year always has four digits.
std::string FormatSeconds(std::int64_t seconds) {
  std::int64_t days = seconds / kSecondsPerDay;
  std::int64_t rest = seconds % kSecondsPerDay;
  if (rest < 0) {
    rest += kSecondsPerDay;
    --days;
  }
  const std::chrono::year_month_day date{
      std::chrono::sys_days{std::chrono::days{static_cast<int>(days)}}};
  char buffer[32];
  const int n = std::snprintf(buffer, sizeof buffer, "%04d-%02u-%02uT%02d:%02d:%02d",
                              static_cast<int>(date.year()), static_cast<unsigned>(date.month()),
                              static_cast<unsigned>(date.day()), static_cast<int>(rest / 3600),
                              static_cast<int>(rest / 60 % 60), static_cast<int>(rest % 60));
  return std::string(buffer, static_cast<std::size_t>(n));
}

// Appends `digits` fractional digits of `nanos` (truncated, as Go's Format does).
void AppendFraction(std::string& out, std::int64_t nanos, int digits) {
  char buffer[10];
  std::snprintf(buffer, sizeof buffer, "%09lld", static_cast<long long>(nanos));
  out += '.';
  out.append(buffer, static_cast<std::size_t>(digits));
}

}  // namespace

// The grammar is RFC 3339 §5.6 as Go's time.Parse(time.RFC3339, ...) accepts it on its strict path
// (what metav1.Time.UnmarshalJSON sees from any API server): upper-case 'T' and 'Z' only (Go
// rejects "t" and "z" although the RFC allows them), two-digit fields, '.' before the fraction.
// Like Go, a fraction longer than nine digits is accepted and truncated to nanoseconds. Leap
// seconds (":60") are rejected, as Go does.
std::optional<Time> ParseRfc3339(std::string_view text) {
  int year = 0;
  int month = 0;
  int day = 0;
  int hour = 0;
  int minute = 0;
  int second = 0;
  if (text.size() < 20 || !ReadFixed(text, 0, 4, year) || text[4] != '-' ||
      !ReadFixed(text, 5, 2, month) || text[7] != '-' || !ReadFixed(text, 8, 2, day) ||
      text[10] != 'T' || !ReadFixed(text, 11, 2, hour) || text[13] != ':' ||
      !ReadFixed(text, 14, 2, minute) || text[16] != ':' || !ReadFixed(text, 17, 2, second)) {
    return std::nullopt;
  }
  if (hour > 23 || minute > 59 || second > 59) {
    return std::nullopt;
  }
  const std::chrono::year_month_day date{std::chrono::year{year},
                                         std::chrono::month{static_cast<unsigned>(month)},
                                         std::chrono::day{static_cast<unsigned>(day)}};
  if (!date.ok()) {
    return std::nullopt;  // month 13, Feb 30, Feb 29 outside leap years
  }

  std::size_t pos = 19;
  std::int64_t nanos = 0;
  if (text[pos] == '.') {
    ++pos;
    const std::size_t first = pos;
    std::int64_t scale = kNanosPerSecond;
    while (pos < text.size() && IsDigit(text[pos])) {
      if (scale > 1) {
        scale /= 10;
        nanos += (text[pos] - '0') * scale;
      }
      ++pos;
    }
    if (pos == first) {
      return std::nullopt;  // "05." without digits
    }
  }

  std::int64_t offset_seconds = 0;
  const std::string_view zone = text.substr(pos);
  if (zone != "Z") {
    int offset_hours = 0;
    int offset_minutes = 0;
    if (zone.size() != 6 || (zone[0] != '+' && zone[0] != '-') ||
        !ReadFixed(zone, 1, 2, offset_hours) || zone[3] != ':' ||
        !ReadFixed(zone, 4, 2, offset_minutes) || offset_hours > 23 || offset_minutes > 59) {
      return std::nullopt;
    }
    offset_seconds = (std::int64_t{offset_hours} * 60 + offset_minutes) * 60;
    if (zone[0] == '-') {
      offset_seconds = -offset_seconds;
    }
  }

  // Years 0000..9999 are about ±3.2e11 seconds: no overflow until the multiplication by 1e9,
  // which is checked, so dates outside int64 nanoseconds (before 1677, after 2262) are rejected.
  const std::int64_t days = std::chrono::sys_days{date}.time_since_epoch().count();
  const std::int64_t seconds = days * kSecondsPerDay + std::int64_t{hour} * 3600 +
                               std::int64_t{minute} * 60 + second - offset_seconds;
  std::int64_t whole = seconds;
  if (whole < 0 && nanos > 0) {
    // Borrow a second so the product stays in range at the very bottom of int64 (1677-09-21).
    ++whole;
    nanos -= kNanosPerSecond;
  }
  std::int64_t unix_nanos = 0;
  if (__builtin_mul_overflow(whole, kNanosPerSecond, &unix_nanos) ||
      __builtin_add_overflow(unix_nanos, nanos, &unix_nanos)) {
    return std::nullopt;
  }
  return Time{unix_nanos};
}

std::string FormatRfc3339(Time time) {
  std::int64_t seconds = 0;
  std::int64_t nanos = 0;
  SplitNanos(time.unix_nanos, seconds, nanos);
  std::string out = FormatSeconds(seconds);
  out += 'Z';
  return out;
}

std::string FormatRfc3339Nano(Time time) {
  std::int64_t seconds = 0;
  std::int64_t nanos = 0;
  SplitNanos(time.unix_nanos, seconds, nanos);
  std::string out = FormatSeconds(seconds);
  if (nanos != 0) {
    int digits = 9;
    std::int64_t rest = nanos;
    while (rest % 10 == 0) {
      rest /= 10;
      --digits;
    }
    AppendFraction(out, nanos, digits);
  }
  out += 'Z';
  return out;
}

std::string FormatRfc3339Micro(Time time) {
  std::int64_t seconds = 0;
  std::int64_t nanos = 0;
  SplitNanos(time.unix_nanos, seconds, nanos);
  std::string out = FormatSeconds(seconds);
  AppendFraction(out, nanos, 6);
  out += 'Z';
  return out;
}

}  // namespace slicewright::model

// Kubernetes timestamps (metav1.Time and MicroTime) as nanoseconds since the Unix epoch, with
// RFC 3339 parsing and Go-compatible formatting. Pure value type, thread-compatible.
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace slicewright::model {

struct Time {
  std::int64_t unix_nanos = 0;

  bool IsZero() const { return unix_nanos == 0; }
  static Time FromUnixSeconds(std::int64_t seconds) { return Time{seconds * 1'000'000'000}; }
  friend auto operator<=>(const Time&, const Time&) = default;
};

// Parses "2024-01-02T03:04:05Z", "2024-01-02T03:04:05.5Z" and numeric offsets ("+02:00"), as
// Go's time.Parse(time.RFC3339, ...) does: upper-case 'T' and 'Z' only, a fraction of any length
// (digits past nanoseconds truncated), no leap second. nullopt when the text is not RFC 3339, names
// an impossible date or time (Feb 30, 24:00), or lies outside int64 nanoseconds (1677..2262).
std::optional<Time> ParseRfc3339(std::string_view text);

// Go's time.RFC3339 in UTC: "2024-01-02T03:04:05Z" (fraction dropped), as metav1.Time marshals.
std::string FormatRfc3339(Time time);

// Go's time.RFC3339Nano in UTC: fractional seconds with trailing zeros trimmed
// ("2019-01-01T00:00:01.5Z", "2019-01-01T00:00:01Z"), as the trigger-time annotation uses.
std::string FormatRfc3339Nano(Time time);

// metav1.MicroTime: always six fractional digits ("2024-01-02T03:04:05.000000Z").
std::string FormatRfc3339Micro(Time time);

}  // namespace slicewright::model

#include "slicewright/base/duration.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>

#include <fmt/format.h>

namespace slicewright {

Result<std::chrono::milliseconds> ParseGoDuration(std::string_view text) {
  const std::string original(text);
  const auto invalid = [&original] {
    return Status(StatusCode::kInvalid, "invalid duration \"" + original + "\"");
  };
  if (text == "0") return std::chrono::milliseconds(0);
  if (text.empty()) return invalid();
  double total_ns = 0;
  while (!text.empty()) {
    std::size_t digits = 0;
    while (digits < text.size() &&
           ((text[digits] >= '0' && text[digits] <= '9') || text[digits] == '.')) {
      ++digits;
    }
    if (digits == 0) return invalid();
    const std::string number(text.substr(0, digits));
    if (number == "." || std::count(number.begin(), number.end(), '.') > 1) return invalid();
    const double value = std::strtod(number.c_str(), nullptr);
    text.remove_prefix(digits);
    std::size_t unit_length = 0;
    while (unit_length < text.size() &&
           !((text[unit_length] >= '0' && text[unit_length] <= '9') || text[unit_length] == '.')) {
      ++unit_length;
    }
    const std::string_view unit = text.substr(0, unit_length);
    text.remove_prefix(unit_length);
    double scale = 0;
    if (unit == "ns") {
      scale = 1;
    } else if (unit == "us" || unit == "\xC2\xB5s" || unit == "\xCE\xBCs") {
      scale = 1e3;
    } else if (unit == "ms") {
      scale = 1e6;
    } else if (unit == "s") {
      scale = 1e9;
    } else if (unit == "m") {
      scale = 60e9;
    } else if (unit == "h") {
      scale = 3600e9;
    } else {
      return invalid();
    }
    total_ns += value * scale;
  }
  if (!std::isfinite(total_ns) || total_ns > 1e18) return invalid();
  // Floating error may leave 1.001s a hair under 1001 ms: allow up to a nanosecond of it.
  return std::chrono::milliseconds(static_cast<std::int64_t>(total_ns / 1e6 + 1e-6));
}

std::string FormatGoDuration(std::chrono::milliseconds duration) {
  std::int64_t ms = duration.count();
  if (ms == 0) return "0s";
  std::string out;
  if (ms < 0) {
    out += '-';
    ms = -ms;
  }
  if (ms < 1000) return out + fmt::format("{}ms", ms);
  const std::int64_t hours = ms / 3'600'000;
  const std::int64_t minutes = ms / 60'000 % 60;
  const std::int64_t seconds = ms / 1000 % 60;
  const std::int64_t millis = ms % 1000;
  if (hours > 0) out += fmt::format("{}h", hours);
  if (hours > 0 || minutes > 0) out += fmt::format("{}m", minutes);
  out += fmt::to_string(seconds);
  if (millis > 0) {
    std::string fraction = fmt::format("{:03}", millis);
    while (fraction.back() == '0') fraction.pop_back();
    out += '.' + fraction;
  }
  out += 's';
  return out;
}

}  // namespace slicewright

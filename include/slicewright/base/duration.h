// Durations as Go's flag package reads and prints them ("15s", "1m30s", "500ms"), so that
// duration flags take the values kube-controller-manager's do.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "slicewright/base/result.h"

namespace slicewright {

// Go's time.ParseDuration for the units a flag needs (ns, us, µs, ms, s, m, h; fractions and
// sequences such as "1h30m"), to whole milliseconds. kInvalid otherwise.
Result<std::chrono::milliseconds> ParseGoDuration(std::string_view text);

// Go's Duration.String() for whole milliseconds: "0s", "500ms", "15s", "1m30s", "1h0m0s".
std::string FormatGoDuration(std::chrono::milliseconds duration);

}  // namespace slicewright

// Wall-clock timestamps (for fields written to the API: renewTime, lastTimestamp) derived from the
// injected steady Clock, so a FakeClock moves them too and tests stay deterministic. Pure
// functions; thread-safe.
#pragma once

#include <chrono>
#include <cstdint>

#include "slicewright/base/clock.h"
#include "slicewright/model/time.h"

namespace slicewright::runtime::internal {

// The system's real time now.
inline model::Time SystemWallTime() {
  const auto since_epoch = std::chrono::system_clock::now().time_since_epoch();
  return model::Time{std::chrono::duration_cast<std::chrono::nanoseconds>(since_epoch).count()};
}

// The wall time at `now`, given that the steady clock read `steady_origin` at wall time
// `wall_origin`.
inline model::Time WallTimeAt(Clock::TimePoint now, Clock::TimePoint steady_origin,
                              model::Time wall_origin) {
  const auto elapsed = std::chrono::duration_cast<std::chrono::nanoseconds>(now - steady_origin);
  return model::Time{wall_origin.unix_nanos + static_cast<std::int64_t>(elapsed.count())};
}

}  // namespace slicewright::runtime::internal

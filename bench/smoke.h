// The benchmarks' `--smoke` switch (set by main in planner_bench.cc): each case runs once at a
// tiny size, so CI proves the benchmarks work without paying for them.
#pragma once

namespace slicewright::bench {

inline bool& SmokeMode() {
  static bool smoke = false;
  return smoke;
}

}  // namespace slicewright::bench

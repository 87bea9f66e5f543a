// Counts the process's heap allocations, for tests that pin the no-allocation contract of hot
// paths and for the benchmarks' allocations-per-endpoint figures. Linking allocation_counter.cc
// replaces the global operator new/delete family of that binary. Single-threaded callers only
// need no synchronisation; the counter itself is atomic.
#pragma once

#include <cstdint>

namespace slicewright::fakes {

// Allocations made through operator new since the process started.
std::int64_t AllocationCount();

}  // namespace slicewright::fakes

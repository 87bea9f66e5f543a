// Counts heap allocations of the benchmark process (global operator new is replaced in
// alloc_counter.cc, a translation unit of its own so the compiler never inlines the pair).
#pragma once

#include <cstdint>

namespace slicewright::bench {

// Allocations made by operator new since the process started. Thread-safe.
std::int64_t AllocationCount();

}  // namespace slicewright::bench

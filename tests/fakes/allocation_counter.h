// Counts each thread's heap allocations, for tests that pin the no-allocation contract of hot
// paths and for the benchmarks' allocations-per-endpoint figures. Linking allocation_counter.cc
// replaces the global operator new/delete family of that binary.
#pragma once

#include <cstdint>

namespace slicewright::fakes {

// Allocations the calling thread made through operator new since it started. Per thread, so the
// count is a plain increment: an atomic one is a locked instruction, a full barrier that makes
// every allocation wait for the stores before it and so slows what a benchmark measures.
std::int64_t AllocationCount();

}  // namespace slicewright::fakes

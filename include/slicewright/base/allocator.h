// Process-wide heap settings for long-running reconcile loops: a sync of a big Service allocates
// and frees tens of MiB, and glibc's defaults hand that memory back to the kernel each time.
#pragma once

namespace slicewright {

// Keeps freed memory for reuse instead of returning it to the kernel after every large sync:
// allocations up to 32 MiB come from the heap (not a fresh mmap each time), and up to 128 MiB
// free at the top of the heap is kept. Without this, a full sync of a 100k-endpoint Service
// page-faults its ~50 MiB in again on every run (a third of its time, docs/performance.md); the
// price is RSS that may stay up to 128 MiB above the live heap after such a sync.
// An operator's own glibc.malloc.* settings in GLIBC_TUNABLES win: then nothing is changed.
// Returns whether the thresholds were set. Call once, early in main, before threads start.
bool ConfigureAllocatorForReconcileLoops();

}  // namespace slicewright

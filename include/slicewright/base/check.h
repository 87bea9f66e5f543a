// Invariant checks, Envoy's three levels. Never use them on data from the API, a file, a flag or
// the network: those get a Status. Thread-safe.
#pragma once

#include <cstdint>

namespace slicewright::internal {

[[noreturn]] void CheckFailed(const char* file, int line, const char* condition);
void ReportBug(const char* file, int line, const char* message);

}  // namespace slicewright::internal

namespace slicewright {

// How many SW_BUG sites have fired in this process (exported as slicewright_internal_bugs_total).
std::uint64_t InternalBugCount();

}  // namespace slicewright

// Always aborts when `cond` is false.
#define SW_CHECK(cond) \
  ((cond) ? static_cast<void>(0) : ::slicewright::internal::CheckFailed(__FILE__, __LINE__, #cond))

// Aborts in debug builds only.
#ifdef NDEBUG
#define SW_DCHECK(cond) static_cast<void>(0)
#else
#define SW_DCHECK(cond) SW_CHECK(cond)
#endif

// An impossible state that should not take the process down in production: logs and counts in
// release builds, aborts in debug builds.
#define SW_BUG(message) ::slicewright::internal::ReportBug(__FILE__, __LINE__, message)

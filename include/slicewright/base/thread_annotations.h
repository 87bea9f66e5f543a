// Clang's thread-safety annotations, checked by the clang preset's -Wthread-safety; empty under
// g++. libstdc++'s std::mutex is no capability, so state guarded this way uses slicewright::Mutex
// and MutexLock (base/mutex.h), which are.
#pragma once

#if defined(__clang__)
#define SW_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define SW_THREAD_ANNOTATION(x)
#endif

// On a lock type.
#define SW_CAPABILITY(name) SW_THREAD_ANNOTATION(capability(name))
// On an RAII guard that holds a capability for its lifetime.
#define SW_SCOPED_CAPABILITY SW_THREAD_ANNOTATION(scoped_lockable)
// On a member: read and written only with `mu` held.
#define SW_GUARDED_BY(mu) SW_THREAD_ANNOTATION(guarded_by(mu))
// On a pointer member: what it points to is read and written only with `mu` held.
#define SW_PT_GUARDED_BY(mu) SW_THREAD_ANNOTATION(pt_guarded_by(mu))
// On a function: the caller must hold (or must not hold) the capabilities.
#define SW_REQUIRES(...) SW_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define SW_EXCLUDES(...) SW_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
// On a function that takes or gives back a capability.
#define SW_ACQUIRE(...) SW_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define SW_RELEASE(...) SW_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define SW_TRY_ACQUIRE(...) SW_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
// Turns the analysis off for one function; say why next to it.
#define SW_NO_THREAD_SAFETY_ANALYSIS SW_THREAD_ANNOTATION(no_thread_safety_analysis)

// Clang's thread-safety annotations, checked by the clang preset's -Wthread-safety; empty under
// g++. libstdc++'s std::mutex is no capability, so state guarded this way uses slicewright::Mutex,
// SharedMutex, MutexLock and CondVar (base/mutex.h), which are.
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
// On a member: read and written only with `mu` held (read with it held at least shared).
#define SW_GUARDED_BY(mu) SW_THREAD_ANNOTATION(guarded_by(mu))
// On a pointer member: what it points to is read and written only with `mu` held.
#define SW_PT_GUARDED_BY(mu) SW_THREAD_ANNOTATION(pt_guarded_by(mu))
// On a mutex member: it is taken after (or before) the named ones, never the other way round.
#define SW_ACQUIRED_AFTER(...) SW_THREAD_ANNOTATION(acquired_after(__VA_ARGS__))
#define SW_ACQUIRED_BEFORE(...) SW_THREAD_ANNOTATION(acquired_before(__VA_ARGS__))
// On a function: the caller must hold (or must not hold) the capabilities.
#define SW_REQUIRES(...) SW_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define SW_REQUIRES_SHARED(...) SW_THREAD_ANNOTATION(requires_shared_capability(__VA_ARGS__))
#define SW_EXCLUDES(...) SW_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
// On a function that takes or gives back a capability.
#define SW_ACQUIRE(...) SW_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define SW_ACQUIRE_SHARED(...) SW_THREAD_ANNOTATION(acquire_shared_capability(__VA_ARGS__))
#define SW_RELEASE(...) SW_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define SW_RELEASE_SHARED(...) SW_THREAD_ANNOTATION(release_shared_capability(__VA_ARGS__))
#define SW_RELEASE_GENERIC(...) SW_THREAD_ANNOTATION(release_generic_capability(__VA_ARGS__))
#define SW_TRY_ACQUIRE(...) SW_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
// On a function that checks (or states) at run time that the capability is held, so the analysis
// may assume it from there on.
#define SW_ASSERT_CAPABILITY(x) SW_THREAD_ANNOTATION(assert_capability(x))
#define SW_ASSERT_SHARED_CAPABILITY(x) SW_THREAD_ANNOTATION(assert_shared_capability(x))
// Turns the analysis off for one function; say why next to it.
#define SW_NO_THREAD_SAFETY_ANALYSIS SW_THREAD_ANNOTATION(no_thread_safety_analysis)

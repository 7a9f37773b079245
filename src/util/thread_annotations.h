// Clang thread-safety annotations. They say which mutex guards which member and which lock a
// function expects, and clang++ checks them at compile time with -Wthread-safety (the clang build
// of CI turns the warnings into errors). g++ ignores them: there they are documentation only.
//
// The annotated lock types are util::Mutex and util::MutexLock (util/mutex.h): std::mutex carries
// no capability attribute, so members guarded by one cannot be checked. Each macro is the clang
// attribute of (nearly) the same name with an NVMLX_ prefix.
#ifndef NVML_EXPORTER_UTIL_THREAD_ANNOTATIONS_H_
#define NVML_EXPORTER_UTIL_THREAD_ANNOTATIONS_H_

#if defined(__clang__)
#define NVMLX_THREAD_ANNOTATION_(x) __attribute__((x))
#else
#define NVMLX_THREAD_ANNOTATION_(x)
#endif

// A type that is a lock (a "capability"); `x` names the kind in messages, e.g. "mutex".
#define NVMLX_CAPABILITY(x) NVMLX_THREAD_ANNOTATION_(capability(x))
// An RAII type that holds a capability for its lifetime (MutexLock).
#define NVMLX_SCOPED_CAPABILITY NVMLX_THREAD_ANNOTATION_(scoped_lockable)

// A member that may be read or written only with `x` held.
#define NVMLX_GUARDED_BY(x) NVMLX_THREAD_ANNOTATION_(guarded_by(x))
// A pointer member whose pointee may be touched only with `x` held (the pointer itself is free).
#define NVMLX_PT_GUARDED_BY(x) NVMLX_THREAD_ANNOTATION_(pt_guarded_by(x))

// Lock order: this mutex is taken before / after the named ones.
#define NVMLX_ACQUIRED_BEFORE(...) NVMLX_THREAD_ANNOTATION_(acquired_before(__VA_ARGS__))
#define NVMLX_ACQUIRED_AFTER(...) NVMLX_THREAD_ANNOTATION_(acquired_after(__VA_ARGS__))

// The caller must hold the capabilities (exclusively / shared) when calling the function.
#define NVMLX_REQUIRES(...) NVMLX_THREAD_ANNOTATION_(requires_capability(__VA_ARGS__))
#define NVMLX_REQUIRES_SHARED(...) NVMLX_THREAD_ANNOTATION_(requires_shared_capability(__VA_ARGS__))

// The function acquires / releases the capabilities (no argument: `this`).
#define NVMLX_ACQUIRE(...) NVMLX_THREAD_ANNOTATION_(acquire_capability(__VA_ARGS__))
#define NVMLX_ACQUIRE_SHARED(...) NVMLX_THREAD_ANNOTATION_(acquire_shared_capability(__VA_ARGS__))
#define NVMLX_RELEASE(...) NVMLX_THREAD_ANNOTATION_(release_capability(__VA_ARGS__))
#define NVMLX_RELEASE_SHARED(...) NVMLX_THREAD_ANNOTATION_(release_shared_capability(__VA_ARGS__))
#define NVMLX_RELEASE_GENERIC(...) NVMLX_THREAD_ANNOTATION_(release_generic_capability(__VA_ARGS__))
// The function tries to acquire; its return value equal to the first argument means it did.
#define NVMLX_TRY_ACQUIRE(...) NVMLX_THREAD_ANNOTATION_(try_acquire_capability(__VA_ARGS__))
#define NVMLX_TRY_ACQUIRE_SHARED(...) \
  NVMLX_THREAD_ANNOTATION_(try_acquire_shared_capability(__VA_ARGS__))

// The caller must NOT hold the capabilities (the function takes them itself: no self-deadlock).
#define NVMLX_EXCLUDES(...) NVMLX_THREAD_ANNOTATION_(locks_excluded(__VA_ARGS__))

// Tells the analysis that the capability is held from here on (checked at run time, if at all).
#define NVMLX_ASSERT_CAPABILITY(x) NVMLX_THREAD_ANNOTATION_(assert_capability(x))
#define NVMLX_ASSERT_SHARED_CAPABILITY(x) NVMLX_THREAD_ANNOTATION_(assert_shared_capability(x))

// The function returns a reference to the capability `x` (a mutex accessor).
#define NVMLX_RETURN_CAPABILITY(x) NVMLX_THREAD_ANNOTATION_(lock_returned(x))

// Turns the analysis off for one function: for code whose locking the analysis cannot follow.
// Every use says why in a comment.
#define NVMLX_NO_THREAD_SAFETY_ANALYSIS NVMLX_THREAD_ANNOTATION_(no_thread_safety_analysis)

#endif  // NVML_EXPORTER_UTIL_THREAD_ANNOTATIONS_H_

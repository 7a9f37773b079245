// Clang thread-safety annotations (-Wthread-safety). They document which mutex guards which
// member; g++ ignores them, clang-tidy and clang builds check them.
#ifndef NVML_EXPORTER_UTIL_THREAD_ANNOTATIONS_H_
#define NVML_EXPORTER_UTIL_THREAD_ANNOTATIONS_H_

#if defined(__clang__)
#define NVMLX_GUARDED_BY(x) __attribute__((guarded_by(x)))
#define NVMLX_PT_GUARDED_BY(x) __attribute__((pt_guarded_by(x)))
#else
#define NVMLX_GUARDED_BY(x)
#define NVMLX_PT_GUARDED_BY(x)
#endif

#endif  // NVML_EXPORTER_UTIL_THREAD_ANNOTATIONS_H_

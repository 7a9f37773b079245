// Names the calling thread for the kernel (/proc/PID/task/TID/comm), so that `top -H`, `ps -L`
// and a per-thread CPU profile of the daemon (bench/thread_cpu.py) say which part a thread is:
// "gpu 0 fast reads", "xid watcher", "http io". Linux keeps 15 bytes: longer names are cut.
//
// Thread-safety: names only the calling thread; call from any thread.
#ifndef NVML_EXPORTER_UTIL_THREAD_NAME_H_
#define NVML_EXPORTER_UTIL_THREAD_NAME_H_

#include <pthread.h>

#include <string>
#include <string_view>

namespace nvmlx::util {

inline void NameThisThread(std::string_view name) {
  constexpr size_t kKernelMax = 15;  // TASK_COMM_LEN less the terminating NUL
  const std::string cut(name.substr(0, kKernelMax));
  (void)pthread_setname_np(pthread_self(), cut.c_str());  // a failure only loses the name
}

}  // namespace nvmlx::util

#endif  // NVML_EXPORTER_UTIL_THREAD_NAME_H_

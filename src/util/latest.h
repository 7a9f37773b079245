// util::Latest<T>: the latest published immutable value of a background source (a refresher's
// attribution, a watcher's metadata), read by other threads without copying it.
//
// The publishing thread builds a new T and Publish()es it; readers Get() a shared_ptr to it and
// may keep using that after the next Publish (the old value lives as long as someone holds it).
// Null until the first Publish.
//
// Thread-safety: Publish and Get may be called from any thread; the mutex is held only for the
// shared_ptr copy.
#ifndef NVML_EXPORTER_UTIL_LATEST_H_
#define NVML_EXPORTER_UTIL_LATEST_H_

#include <memory>
#include <utility>

#include "util/mutex.h"
#include "util/thread_annotations.h"

namespace nvmlx::util {

template <typename T>
class Latest {
 public:
  Latest() = default;
  Latest(const Latest&) = delete;
  Latest& operator=(const Latest&) = delete;

  void Publish(std::shared_ptr<const T> value) NVMLX_EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    value_.swap(value);
    // The previous value (now in `value`) is released after the unlock: destroying a large T
    // never holds readers up.
  }
  std::shared_ptr<const T> Get() const NVMLX_EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return value_;
  }

 private:
  mutable Mutex mu_;
  std::shared_ptr<const T> value_ NVMLX_GUARDED_BY(mu_);
};

}  // namespace nvmlx::util

#endif  // NVML_EXPORTER_UTIL_LATEST_H_

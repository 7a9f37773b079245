// History: the last N minutes of a few series per GPU, for the live page's sparklines
// (docs/live-page.md). A fixed-size ring of points per device, filled from each published
// Snapshot on the collector's thread, read by the HTTP threads.
//
// Why here: the history is made of snapshots and nothing else, and only the live page's JSON
// reads it. It sits in live/, one layer above collect/ and attribute/ (it reads model/ only)
// and below serve/ (which never sees it: app/ hands the server a provider of answers).
//
// Memory is bounded up front: each device's ring holds Capacity() points of kPointBytes, and at
// most max_devices rings exist (a device not seen for a whole window is dropped, so MIG
// reconfigurations do not accumulate rings). BytesPerDevice() is what one GPU costs; the ring
// storage is allocated once, when the device is first seen, and never grows.
//
// Thread-safety: all methods may be called concurrently; Add and Query take the mutex for a copy
// of at most one window, and JSON is built by the caller outside it.
#ifndef NVML_EXPORTER_LIVE_HISTORY_H_
#define NVML_EXPORTER_LIVE_HISTORY_H_

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "model/snapshot.h"
#include "util/mutex.h"
#include "util/thread_annotations.h"

namespace nvmlx::live {

// One kept series: its JSON name and the DCGM field it is read from.
struct HistorySeries {
  std::string_view name;  // the key in /api/v1/history ("gpu_util", ...)
  int field_id;           // DCGM field id of the sample
  std::string_view unit;
};
// The kept series, in this order in every point (docs/live-page.md).
inline constexpr std::array<HistorySeries, 6> kHistorySeries = {{
    {"gpu_util", 203, "%"},            // DCGM_FI_DEV_GPU_UTIL
    {"tensor_active", 1004, "ratio"},  // DCGM_FI_PROF_PIPE_TENSOR_ACTIVE
    {"dram_active", 1005, "ratio"},    // DCGM_FI_PROF_DRAM_ACTIVE
    {"fb_used_mib", 252, "MiB"},       // DCGM_FI_DEV_FB_USED
    {"power_w", 155, "W"},             // DCGM_FI_DEV_POWER_USAGE
    {"temp_c", 150, "C"},              // DCGM_FI_DEV_GPU_TEMP
}};
inline constexpr std::size_t kHistorySeriesCount = kHistorySeries.size();

// One instant of one device: NaN where the sample was absent (field off, read failed, GPU lost
// or stale). Floats: the page draws them, 7 significant digits are plenty.
struct HistoryPoint {
  int64_t time_ms = 0;  // Unix milliseconds of the collection
  std::array<float, kHistorySeriesCount> values{};
};

struct HistoryOptions {
  int minutes = 15;                           // the window kept; 0: nothing kept
  std::chrono::milliseconds interval{30000};  // the collect interval: points per window
  std::size_t max_devices = 64;               // GPUs and MIG instances kept at most
};

// One device's points, oldest first, as copied out by Query.
struct DeviceHistory {
  std::string key;  // model::DeviceIdentity::DeviceKey()
  unsigned index = 0;
  std::vector<HistoryPoint> points;
};

class History {
 public:
  static constexpr std::size_t kPointBytes = sizeof(HistoryPoint);

  explicit History(HistoryOptions options);
  History(const History&) = delete;
  History& operator=(const History&) = delete;

  // Points per device ring: one per interval over the window, plus one (both ends).
  std::size_t Capacity() const { return capacity_; }
  // Bytes of ring storage one device costs (Capacity() * kPointBytes).
  std::size_t BytesPerDevice() const { return capacity_ * kPointBytes; }
  // Bytes of ring storage held now (for the benchmark and the bound test).
  std::size_t BytesHeld() const NVMLX_EXCLUDES(mu_);
  int minutes() const { return options_.minutes; }

  // Appends one point per device of `snap` (collector thread). A snapshot older than the newest
  // point (a clock step back) is still appended: the ring is ordered by arrival.
  void Add(const model::Snapshot& snap) NVMLX_EXCLUDES(mu_);

  // The points of the last `minutes` (counted back from the newest point), per device in device
  // index order. `minutes` above the kept window gives the whole window. With `after_ms`, only
  // the points newer than it (a page that polls asks for what it has not seen).
  std::vector<DeviceHistory> Query(int minutes,
                                   int64_t after_ms = std::numeric_limits<int64_t>::min()) const
      NVMLX_EXCLUDES(mu_);

 private:
  struct Ring {
    unsigned index = 0;
    std::vector<HistoryPoint> slots;  // Capacity() long, allocated once
    std::size_t next = 0;             // where the next point goes
    std::size_t size = 0;             // points held, <= slots.size()
    int64_t last_ms = 0;              // time of the newest point
  };

  const HistoryOptions options_;
  const std::size_t capacity_;
  mutable util::Mutex mu_;
  std::map<std::string, Ring, std::less<>> rings_ NVMLX_GUARDED_BY(mu_);
  int64_t newest_ms_ NVMLX_GUARDED_BY(mu_) = 0;
};

// The value a history point keeps for one sample (NaN for a string value).
float PointValue(const model::Value& v);

}  // namespace nvmlx::live

#endif  // NVML_EXPORTER_LIVE_HISTORY_H_

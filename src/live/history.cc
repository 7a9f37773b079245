#include "live/history.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <variant>

namespace nvmlx::live {
namespace {

std::size_t CapacityFor(const HistoryOptions& o) {
  if (o.minutes <= 0) return 0;
  const int64_t interval_ms = std::max<int64_t>(1, o.interval.count());
  const int64_t window_ms = static_cast<int64_t>(o.minutes) * 60000;
  // One point per interval over the window, both ends included.
  return static_cast<std::size_t>((window_ms + interval_ms - 1) / interval_ms + 1);
}

}  // namespace

float PointValue(const model::Value& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) return static_cast<float>(*i);
  if (const auto* d = std::get_if<double>(&v)) return static_cast<float>(*d);
  return std::numeric_limits<float>::quiet_NaN();
}

History::History(HistoryOptions options) : options_(options), capacity_(CapacityFor(options)) {}

std::size_t History::BytesHeld() const {
  util::MutexLock lock(&mu_);
  std::size_t bytes = 0;
  for (const auto& [key, ring] : rings_) bytes += ring.slots.capacity() * kPointBytes;
  return bytes;
}

void History::Add(const model::Snapshot& snap) {
  if (capacity_ == 0) return;
  const int64_t now_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(snap.time.time_since_epoch()).count();
  // Build the points outside the lock: the samples are sorted by field id, a few dozen each.
  struct Pending {
    const std::string* key;
    unsigned index;
    HistoryPoint point;
  };
  std::vector<Pending> pending;
  pending.reserve(snap.devices.size());
  for (const model::DeviceSnapshot& d : snap.devices) {
    if (d.identity == nullptr) continue;
    Pending p{&d.identity->DeviceKey(), d.identity->index, {}};
    p.point.time_ms = now_ms;
    p.point.values.fill(std::numeric_limits<float>::quiet_NaN());
    for (std::size_t s = 0; s < kHistorySeriesCount; ++s) {
      auto it = std::lower_bound(d.samples.begin(), d.samples.end(), kHistorySeries[s].field_id,
                                 [](const model::Sample& x, int id) { return x.field_id < id; });
      if (it != d.samples.end() && it->field_id == kHistorySeries[s].field_id) {
        p.point.values[s] = PointValue(it->value);
      }
    }
    pending.push_back(std::move(p));
  }

  util::MutexLock lock(&mu_);
  newest_ms_ = now_ms;
  // Forget devices not seen for a whole window (MIG layouts change; the bound must hold).
  const int64_t window_ms = static_cast<int64_t>(options_.minutes) * 60000;
  for (auto it = rings_.begin(); it != rings_.end();) {
    it = now_ms - it->second.last_ms > window_ms ? rings_.erase(it) : std::next(it);
  }
  for (Pending& p : pending) {
    auto it = rings_.find(*p.key);
    if (it == rings_.end()) {
      if (rings_.size() >= options_.max_devices) continue;  // the bound: never more rings
      it = rings_.emplace(*p.key, Ring{}).first;
      it->second.slots.resize(capacity_);
    }
    Ring& r = it->second;
    r.index = p.index;
    r.slots[r.next] = p.point;
    r.next = (r.next + 1) % capacity_;
    r.size = std::min(r.size + 1, capacity_);
    r.last_ms = now_ms;
  }
}

std::vector<DeviceHistory> History::Query(int minutes, int64_t after_ms) const {
  std::vector<DeviceHistory> out;
  if (minutes <= 0) return out;
  util::MutexLock lock(&mu_);
  const int64_t from_ms = newest_ms_ - static_cast<int64_t>(minutes) * 60000;
  out.reserve(rings_.size());
  for (const auto& [key, r] : rings_) {
    DeviceHistory h;
    h.key = key;
    h.index = r.index;
    const std::size_t oldest = (r.next + capacity_ - r.size) % capacity_;
    // Newest first until a point is too old: a poll for the last few points reads only those.
    std::size_t first = r.size;
    while (first > 0) {
      const HistoryPoint& p = r.slots[(oldest + first - 1) % capacity_];
      if (p.time_ms < from_ms || p.time_ms <= after_ms) break;
      --first;
    }
    h.points.reserve(r.size - first);
    for (std::size_t i = first; i < r.size; ++i) {
      const HistoryPoint& p = r.slots[(oldest + i) % capacity_];
      if (p.time_ms >= from_ms && p.time_ms > after_ms) h.points.push_back(p);
    }
    out.push_back(std::move(h));
  }
  std::stable_sort(out.begin(), out.end(), [](const DeviceHistory& a, const DeviceHistory& b) {
    return a.index < b.index;
  });
  return out;
}

}  // namespace nvmlx::live

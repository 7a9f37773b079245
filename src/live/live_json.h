// The live page's JSON: /api/v1/snapshot and /api/v1/history (docs/live-page.md documents both
// formats; they are stable, for scripts as much as for the page).
//
// The snapshot document is rendered once per collection from the immutable Snapshot
// (RenderSnapshotPrefix, collector thread) and finished per request with its age
// (FinishSnapshot: one copy and a few bytes). The history document is built per request from a
// bounded copy of the ring (History::Query), at most one window of points per device.
//
// Thread-safety: free functions over values the caller owns; no shared state.
#ifndef NVML_EXPORTER_LIVE_LIVE_JSON_H_
#define NVML_EXPORTER_LIVE_LIVE_JSON_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "live/history.h"
#include "model/snapshot.h"
#include "util/status.h"

namespace nvmlx::live {

inline constexpr int kJsonVersion = 1;

struct SnapshotJsonOptions {
  std::string hostname;                       // the node, as in the host label
  std::chrono::milliseconds interval{30000};  // the collect interval
  std::string version;                        // the exporter's version
  bool kubernetes = false;  // pod attribution configured (-k or --kubernetes-process-metrics)
};

// The snapshot document without its closing brace: FinishSnapshot appends the per-request
// members (age_seconds, stale) and closes it.
std::string RenderSnapshotPrefix(const model::Snapshot& snap, const SnapshotJsonOptions& options);
// `prefix` + ,"age_seconds":A,"stale":S}.
std::string FinishSnapshot(std::string_view prefix, double age_seconds, bool stale);
// The whole document when no collection has been published yet (the page says so).
std::string EmptySnapshot(const SnapshotJsonOptions& options, double age_seconds);

// The history query string ("minutes=15&since=1700000000000"; "" for the defaults): `minutes`
// from 1 to `kept`, default min(15, kept); `since`, Unix milliseconds, only points newer than
// that (default: all). Errors name the parameter and what was expected (the server answers them
// with 400).
struct HistoryQuery {
  int minutes = 0;
  std::optional<int64_t> since_ms;
};
Result<HistoryQuery> ParseHistoryQuery(std::string_view query, int kept);

struct HistoryJsonInfo {
  int minutes = 0;  // the window answered
  std::optional<int64_t> since_ms;
  int minutes_kept = 0;  // --live-history-minutes
  std::chrono::milliseconds interval{0};
  std::size_t bytes_per_gpu = 0;  // History::BytesPerDevice()
};
std::string RenderHistory(const std::vector<DeviceHistory>& devices, const HistoryJsonInfo& info);

}  // namespace nvmlx::live

#endif  // NVML_EXPORTER_LIVE_LIVE_JSON_H_

// LivePage: the exporter's own page at / and its JSON API (/api/v1/snapshot, /api/v1/history),
// docs/live-page.md. It joins live/ (history, JSON, the compiled-in files) with the server's
// ResourceProvider, so that serve/ knows none of it.
//
// Everything a request reads is made beforehand: the files are byte arrays in the binary (made
// into shared strings once, here), the snapshot document is rendered once per collection on the
// collector's thread (OnSnapshot); per request only its age is appended, and the history answer
// copies at most one window of points (History::Query) and writes them out. No request calls
// NVML, the kubelet or anything that blocks.
//
// Thread-safety: OnSnapshot from the collector's thread, Answer from any number of HTTP threads
// at once; the latest document is swapped under mu_ (a shared_ptr copy), the history has its own
// lock.
#ifndef NVML_EXPORTER_APP_LIVE_PAGE_H_
#define NVML_EXPORTER_APP_LIVE_PAGE_H_

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "live/history.h"
#include "live/live_json.h"
#include "model/snapshot.h"
#include "serve/http_server.h"
#include "util/mutex.h"
#include "util/thread_annotations.h"

namespace nvmlx::app {

class LivePage {
 public:
  using Clock = std::chrono::steady_clock;
  struct Options {
    int history_minutes = 15;                   // --live-history-minutes
    std::chrono::milliseconds interval{30000};  // the collect interval
    std::string hostname;
    std::string version;
    bool kubernetes = false;  // pod attribution configured
    // /api/v1/snapshot says "stale" once the newest collection is older than this: three
    // intervals, at least 3 s (StaleAfter).
    std::chrono::milliseconds stale_after{90000};
  };
  static std::chrono::milliseconds StaleAfter(std::chrono::milliseconds interval);

  explicit LivePage(Options options, Clock::time_point start = Clock::now());
  LivePage(const LivePage&) = delete;
  LivePage& operator=(const LivePage&) = delete;

  // Collector thread: one more point per GPU in the history, and the new snapshot document.
  void OnSnapshot(const model::Snapshot& snap, Clock::time_point at = Clock::now())
      NVMLX_EXCLUDES(mu_);
  // HTTP threads: "/", "/live/<file>", "/api/v1/snapshot", "/api/v1/history"; nullopt for any
  // other path. A bad query answers 400 with the reason.
  std::optional<serve::Resource> Answer(std::string_view path, std::string_view query,
                                        Clock::time_point now = Clock::now()) const
      NVMLX_EXCLUDES(mu_);

  const live::History& history() const { return history_; }

 private:
  const Options options_;
  const Clock::time_point start_;
  live::History history_;
  live::SnapshotJsonOptions json_options_;
  // Path -> the compiled-in file, made into shared strings once.
  std::unordered_map<std::string, serve::Resource> files_;
  mutable util::Mutex mu_;
  std::shared_ptr<const std::string> prefix_ NVMLX_GUARDED_BY(mu_);  // null before the first
  Clock::time_point published_at_ NVMLX_GUARDED_BY(mu_);
};

}  // namespace nvmlx::app

#endif  // NVML_EXPORTER_APP_LIVE_PAGE_H_

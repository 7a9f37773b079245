#include "app/live_page.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "live/page_assets.h"

namespace nvmlx::app {
namespace {

constexpr std::string_view kJson = "application/json";
constexpr std::string_view kText = "text/plain; charset=utf-8";

serve::Resource Make(int status, std::string_view type, std::string body, bool no_store) {
  return serve::Resource{status, std::string(type),
                         std::make_shared<const std::string>(std::move(body)), no_store, ""};
}

double Seconds(LivePage::Clock::duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

std::chrono::milliseconds LivePage::StaleAfter(std::chrono::milliseconds interval) {
  return std::max<std::chrono::milliseconds>(3 * interval, std::chrono::seconds(3));
}

LivePage::LivePage(Options options, Clock::time_point start)
    : options_(std::move(options)),
      start_(start),
      history_(
          live::HistoryOptions{.minutes = options_.history_minutes, .interval = options_.interval}),
      json_options_{options_.hostname, options_.interval, options_.version, options_.kubernetes} {
  for (const live::PageAsset& a : live::PageAssets()) {
    const std::string path = a.name == "index.html" ? "/" : "/live/" + std::string(a.name);
    files_.emplace(path, Make(200, a.content_type, std::string(a.body), false));
  }
}

void LivePage::OnSnapshot(const model::Snapshot& snap, Clock::time_point at) {
  history_.Add(snap);
  auto prefix =
      std::make_shared<const std::string>(live::RenderSnapshotPrefix(snap, json_options_));
  util::MutexLock lock(&mu_);
  prefix_.swap(prefix);  // the previous one is freed with `prefix`, after the lock
  published_at_ = at;
}

std::optional<serve::Resource> LivePage::Answer(std::string_view path, std::string_view query,
                                                Clock::time_point now) const {
  if (path == "/api/v1/snapshot") {
    std::shared_ptr<const std::string> prefix;
    Clock::time_point at;
    {
      util::MutexLock lock(&mu_);
      prefix = prefix_;
      at = published_at_;
    }
    if (prefix == nullptr) {
      return Make(200, kJson, live::EmptySnapshot(json_options_, Seconds(now - start_)), true);
    }
    const bool stale = now - at > options_.stale_after;
    return Make(200, kJson, live::FinishSnapshot(*prefix, Seconds(now - at), stale), true);
  }
  if (path == "/api/v1/history") {
    Result<live::HistoryQuery> q = live::ParseHistoryQuery(query, options_.history_minutes);
    if (!q.ok()) return Make(400, kText, "bad request: " + q.status().message() + "\n", true);
    live::HistoryJsonInfo info{q->minutes, q->since_ms, options_.history_minutes, options_.interval,
                               history_.BytesPerDevice()};
    const int64_t after = q->since_ms.value_or(std::numeric_limits<int64_t>::min());
    return Make(200, kJson, live::RenderHistory(history_.Query(q->minutes, after), info), true);
  }
  auto it = files_.find(std::string(path));
  if (it == files_.end()) return std::nullopt;
  return it->second;  // shares the body
}

}  // namespace nvmlx::app

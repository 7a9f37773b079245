#include "attribute/pod_watcher.h"

#include <algorithm>

#include "util/log.h"
#include "util/thread_name.h"

namespace nvmlx::attribute {
namespace {

const LabelFilter& NoLabels() {
  static const std::shared_ptr<const LabelFilter>* f =
      new std::shared_ptr<const LabelFilter>(LabelFilter::Create(false, {}));
  return **f;
}

}  // namespace

std::shared_ptr<const model::PodMetadata> BuildPodMetadata(
    const std::map<std::string, PodRecord>& pods) {
  auto md = std::make_shared<model::PodMetadata>();
  for (const auto& [uid, rec] : pods) {
    md->by_uid[uid] = rec.meta;
    md->uid_by_name[rec.meta.namespace_name + "/" + rec.meta.pod] = uid;
    if (!rec.mirror_uid.empty() && pods.count(rec.mirror_uid) == 0) {
      md->by_uid[rec.mirror_uid] = rec.meta;
    }
  }
  return md;
}

PodWatcher::PodWatcher(PodWatcherOptions options)
    : options_(std::move(options)),
      clock_(options_.clock != nullptr ? options_.clock : util::Clock::Real()),
      client_(options_.api),
      backoff_(options_.backoff_initial),
      streak_("apiserver", options_.errors) {}

PodWatcher::~PodWatcher() { Stop(); }

std::shared_ptr<const model::PodMetadata> PodWatcher::Latest() const { return latest_.Get(); }

void PodWatcher::Start() {
  if (options_.node_name.empty()) {
    log::Warn("NODE_NAME is not set: watching every pod of the cluster for pod metadata");
  }
  log::Info("watching pods on the API server",
            {{"server", options_.api.host + ":" + options_.api.port},
             {"node", options_.node_name.empty() ? "(all)" : options_.node_name}});
  thread_ = std::thread([this] { Loop(); });
}

void PodWatcher::Stop() {
  {
    util::MutexLock lock(&mu_);
    stopping_ = true;
  }
  cv_.SignalAll();
  client_.Stop();
  if (thread_.joinable()) thread_.join();
}

bool PodWatcher::Backoff() {
  const util::Clock::TimePoint deadline = util::AddSaturating(clock_->Now(), backoff_);
  bool stop = false;
  {
    util::MutexLock lock(&mu_);
    while (!stopping_ && !clock_->WaitUntil(&cv_, &mu_, deadline)) {
    }
    stop = stopping_;
  }
  backoff_ = std::min(backoff_ * 2, options_.backoff_max);
  return !stop;
}

void PodWatcher::Publish() { latest_.Publish(BuildPodMetadata(pods_)); }

Status PodWatcher::List() {
  const LabelFilter& filter = options_.labels ? *options_.labels : NoLabels();
  std::map<std::string, PodRecord> pods;
  std::string continue_token;
  std::string rv;
  do {
    std::string target = "/api/v1/pods?limit=500";
    if (!options_.node_name.empty()) {
      target += "&fieldSelector=" + QueryEscape("spec.nodeName=" + options_.node_name);
    }
    if (!continue_token.empty()) target += "&continue=" + QueryEscape(continue_token);
    Result<HttpResponse> r = client_.Get(target, options_.request_timeout);
    if (!r.ok()) return r.status();
    if (r->status != 200) {
      return Unavailable("list pods: HTTP " + std::to_string(r->status) + ": " +
                         BodyExcerpt(r->body));
    }
    Result<PodList> list = ParsePodList(r->body, filter);
    if (!list.ok()) return list.status();
    for (PodRecord& p : list->pods) pods[p.meta.uid] = std::move(p);
    continue_token = list->continue_token;
    rv = list->resource_version;
  } while (!continue_token.empty());
  pods_ = std::move(pods);
  resource_version_ = rv;
  Publish();
  return Status::Ok();
}

PodWatcher::WatchEnd PodWatcher::Watch() {
  const LabelFilter& filter = options_.labels ? *options_.labels : NoLabels();
  std::string target = "/api/v1/pods?watch=1&allowWatchBookmarks=true&timeoutSeconds=" +
                       std::to_string(options_.watch_timeout.count()) +
                       "&resourceVersion=" + QueryEscape(resource_version_);
  if (!options_.node_name.empty()) {
    target += "&fieldSelector=" + QueryEscape("spec.nodeName=" + options_.node_name);
  }
  WatchEnd end = WatchEnd::kRenew;
  Status bad;
  int events = 0;
  Result<HttpResponse> r = client_.Stream(target, options_.watch_idle, [&](std::string_view line) {
    Result<WatchEvent> ev = ParseWatchEvent(line, filter);
    if (!ev.ok()) {
      bad = ev.status();
      end = WatchEnd::kFailed;
      return false;
    }
    switch (ev->type) {
      case WatchEventType::kError:
        if (ev->error_code == 410) {
          end = WatchEnd::kRelist;
        } else {
          bad = Unavailable("watch pods: ERROR event " + std::to_string(ev->error_code) + ": " +
                            ev->error_message);
          end = WatchEnd::kFailed;
        }
        return false;
      case WatchEventType::kBookmark:
        break;
      case WatchEventType::kAdded:
      case WatchEventType::kModified:
        pods_[ev->pod->meta.uid] = std::move(*ev->pod);
        Publish();
        break;
      case WatchEventType::kDeleted:
        pods_.erase(ev->pod->meta.uid);
        Publish();
        break;
    }
    if (!ev->resource_version.empty()) resource_version_ = ev->resource_version;
    ++events;
    streak_.Succeed();
    backoff_ = options_.backoff_initial;
    return true;
  });
  if (!r.ok()) {
    if (!client_.stopped()) streak_.Fail("watch pods", r.status().ToString());
    return WatchEnd::kFailed;
  }
  if (r->status == 410) return WatchEnd::kRelist;
  if (r->status != 200) {
    streak_.Fail("watch pods", "HTTP " + std::to_string(r->status) + ": " + BodyExcerpt(r->body));
    return WatchEnd::kFailed;
  }
  if (end == WatchEnd::kFailed) {
    streak_.Fail("watch pods", bad.ToString());
    return WatchEnd::kRelist;  // our view may have missed an event: start over
  }
  // A server that ends every watch at once must not make us spin: wait before the next one.
  if (end == WatchEnd::kRenew && events == 0) return WatchEnd::kIdle;
  return end;
}

void PodWatcher::Loop() {
  util::NameThisThread("pod watcher");
  for (;;) {
    if (client_.stopped()) return;
    Status st = List();
    if (!st.ok()) {
      if (client_.stopped()) return;
      streak_.Fail("list pods", st.ToString());
      if (!Backoff()) return;
      continue;
    }
    streak_.Succeed();
    backoff_ = options_.backoff_initial;
    for (;;) {
      const WatchEnd end = Watch();
      if (client_.stopped()) return;
      if (end == WatchEnd::kRenew) continue;
      if (end == WatchEnd::kIdle) {
        if (!Backoff()) return;
        continue;
      }
      if (end == WatchEnd::kRelist) {
        // A bad event is counted already; back off so a server answering garbage is not
        // hammered with lists.
        if (streak_.failing() && !Backoff()) return;
        break;
      }
      if (!Backoff()) return;  // kFailed: resume the watch from resource_version_
    }
  }
}

}  // namespace nvmlx::attribute

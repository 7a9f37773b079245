#include "attribute/node_fault_reporter.h"

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>

#include "fields/gpu_faults.h"
#include "util/json_members.h"
#include "util/log.h"

namespace nvmlx::attribute {
namespace {

namespace json = util::json;
using Json = json::Json;
constexpr char kComponent[] = "nvml-exporter";
constexpr char kStrategicMerge[] = "application/strategic-merge-patch+json";

// "2026-12-05T07:00:00Z": the seconds-precision UTC time Kubernetes' metav1.Time uses.
std::string Rfc3339(WallTime t) {
  const time_t secs = std::chrono::system_clock::to_time_t(t);
  tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::optional<WallTime> ParseRfc3339(const std::string& text) {
  tm tm{};
  const char* end = strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (end == nullptr) return std::nullopt;
  return std::chrono::system_clock::from_time_t(timegm(&tm));
}

bool Ok(const Result<HttpResponse>& r) { return r.ok() && r->status >= 200 && r->status < 300; }

std::string Describe(const Result<HttpResponse>& r) {
  if (!r.ok()) return r.status().ToString();
  return "HTTP " + std::to_string(r->status) + ": " + BodyExcerpt(r->body);
}

// Our conditions (fields/gpu_faults.h's types) among a Node's status.conditions. Read leniently:
// the Node is the API server's, and a malformed entry (not an object, a type that is not a
// string) is skipped with one warning; a string member of another type reads as empty (an
// unknown status differs from every status we write, so the next write corrects it). Their
// lastTransitionTime go to *transitions.
std::vector<FoundCondition> FoundConditions(std::string_view body,
                                            std::map<std::string, WallTime>* transitions) {
  std::vector<FoundCondition> found;
  Result<Json> node = json::Parse(body);
  const Json* conditions =
      node.ok() ? json::Array(json::Member(json::Member(*node, "status"), "conditions")) : nullptr;
  if (conditions == nullptr) {
    log::Warn("this node's Node object has no status.conditions array: no GPU condition adopted",
              {{"err", node.ok() ? "no such array" : node.status().message()}});
    return found;
  }
  size_t malformed = 0;
  for (const Json& c : *conditions) {
    const std::string* type = json::StringPtr(json::Member(c, "type"));
    if (type == nullptr) {
      ++malformed;
      continue;
    }
    if (*type != fields::kConditionGpuHealthy && *type != fields::kConditionGpuXidCritical &&
        *type != fields::kConditionGpuLost) {
      continue;  // not ours
    }
    FoundCondition f;
    f.type = *type;
    f.status = json::StringMember(c, "status");
    f.reason = json::StringMember(c, "reason");
    f.message = json::StringMember(c, "message");
    f.last_heartbeat = ParseRfc3339(json::StringMember(c, "lastHeartbeatTime"))
                           .value_or(std::chrono::system_clock::time_point{});
    if (auto t = ParseRfc3339(json::StringMember(c, "lastTransitionTime"))) {
      (*transitions)[f.type] = *t;
    }
    found.push_back(std::move(f));
  }
  if (malformed > 0) {
    log::Warn(
        "skipped malformed entries of this node's status.conditions (not an object, or a "
        "type that is not a string)",
        {{"skipped", std::to_string(malformed)}});
  }
  return found;
}

}  // namespace

NodeFaultReporter::NodeFaultReporter(NodeFaultReporterOptions options)
    : options_(std::move(options)),
      client_(options_.call ? nullptr : std::make_unique<KubeApiClient>(options_.api)),
      tracker_(options_.hold),
      tokens_(options_.event_burst),
      worker_({.name = "node fault reporter", .period = std::chrono::seconds(1)},
              [this] { RunOnce(); }) {}

NodeFaultReporter::~NodeFaultReporter() { Stop(); }

void NodeFaultReporter::Start() {
  worker_.RunSoon();  // the Node read first, at once
  worker_.Start();
}

void NodeFaultReporter::Offer(std::shared_ptr<const model::Snapshot> snap) {
  if (snap == nullptr) return;
  const WallTime now = Now();
  util::MutexLock lock(&mu_);
  NodeFaultTracker::Outcome outcome = tracker_.Observe(*snap, now);
  decided_ = std::move(outcome.conditions);
  for (NodeEvent& e : outcome.events) {
    auto same = std::find_if(pending_events_.begin(), pending_events_.end(),
                             [&](const NodeEvent& p) { return p.key == e.key; });
    if (same == pending_events_.end()) {
      pending_events_.push_back(std::move(e));
    } else {  // not written yet: one Event, its count added (bounded by the keys)
      same->count += e.count;
      same->message = std::move(e.message);
    }
  }
}

void NodeFaultReporter::Stop() {
  if (client_ != nullptr) client_->Stop();
  worker_.Stop();
}

NodeFaultReporter::Stats NodeFaultReporter::stats() const {
  util::MutexLock lock(&stats_mu_);
  return stats_;
}

WallTime NodeFaultReporter::Now() const {
  return options_.now ? options_.now() : std::chrono::system_clock::now();
}

Result<HttpResponse> NodeFaultReporter::Send(const KubeApiCall& call) {
  if (options_.call) return options_.call(call, options_.request_timeout);
  return client_->Call(call, options_.request_timeout);
}

void NodeFaultReporter::RunOnce() {
  const WallTime now = Now();
  if (!adopted_) AdoptNode();
  if (!adopted_) return;  // the conditions wait for the Node's (a restart must not flap them)
  std::vector<NodeEvent> events;
  {
    util::MutexLock lock(&mu_);
    events.swap(pending_events_);
    if (!decided_.empty()) wanted_ = decided_;
  }
  RecordEvents(events, now);
  // Written when changed, and again for a heartbeat or a retry when due.
  if (!wanted_.empty()) SyncConditions(wanted_, now);
  FlushEvents(now);
}

void NodeFaultReporter::AdoptNode() {
  Result<HttpResponse> r =
      Send(KubeApiCall{.target = "/api/v1/nodes/" + QueryEscape(options_.node_name)});
  if (!Ok(r)) {
    NoteFailure("node",
                "cannot read this node's Node object (its GPU conditions are written once "
                "it can be read): " +
                    Describe(r));
    return;
  }
  NoteSuccess("node");
  const std::vector<FoundCondition> found = FoundConditions(r->body, &transitions_);
  {
    util::MutexLock lock(&mu_);
    tracker_.Adopt(found);
    decided_.clear();  // decided before the adoption: the next collection decides again
  }
  for (const FoundCondition& f : found) written_.push_back({f.type, f.status, f.reason, f.message});
  adopted_ = true;
  log::Info("node fault watch on: GPU faults go to this node's conditions and Events",
            {{"node", options_.node_name}, {"conditions_found", std::to_string(found.size())}});
}

void NodeFaultReporter::SyncConditions(const std::vector<NodeCondition>& want, WallTime now) {
  const bool changed = want != written_;
  const bool heartbeat_due = !written_at_ || now - *written_at_ >= options_.heartbeat;
  const bool retry_due = retry_at_ && now >= *retry_at_;
  if (retry_at_ && !retry_due) return;
  if (!changed && !heartbeat_due && !retry_due) return;
  Json conditions = Json::array();
  for (const NodeCondition& c : want) {
    auto before = std::find_if(written_.begin(), written_.end(),
                               [&](const NodeCondition& w) { return w.type == c.type; });
    if (before == written_.end() || before->status != c.status) transitions_[c.type] = now;
    conditions.push_back({{"type", c.type},
                          {"status", c.status},
                          {"reason", c.reason},
                          {"message", c.message},
                          {"lastHeartbeatTime", Rfc3339(now)},
                          {"lastTransitionTime", Rfc3339(transitions_[c.type])}});
  }
  const Json patch = {{"status", {{"conditions", conditions}}}};
  Result<HttpResponse> r =
      Send(KubeApiCall{.method = "PATCH",
                       .target = "/api/v1/nodes/" + QueryEscape(options_.node_name) + "/status",
                       .body = json::Dump(patch),
                       .content_type = kStrategicMerge});
  const bool ok = Ok(r);
  {
    // The counters only: the log lines below may block on stderr, and stats() is read by the
    // collection thread's publish step.
    util::MutexLock lock(&stats_mu_);
    stats_.problems.clear();
    for (const NodeCondition& c : want) stats_.problems.emplace_back(c.type, c.Problem());
    ++(ok ? stats_.condition_writes : stats_.condition_failures);
  }
  if (!ok) {
    retry_at_ = now + options_.retry;
    NoteFailure("conditions",
                "cannot write this node's GPU conditions (nodes/status patch; see "
                "docs/faults.md for the RBAC): " +
                    Describe(r));
    return;
  }
  retry_at_.reset();
  written_ = want;
  written_at_ = now;
  NoteSuccess("conditions");
}

bool NodeFaultReporter::TakeToken(WallTime now) {
  if (tokens_at_) {
    const double refill = std::chrono::duration<double>(now - *tokens_at_).count() /
                          std::chrono::duration<double>(options_.event_refill).count();
    tokens_ = std::min<double>(options_.event_burst, tokens_ + refill);
  }
  tokens_at_ = now;
  if (tokens_ < 1) return false;
  tokens_ -= 1;
  return true;
}

void NodeFaultReporter::RecordEvents(const std::vector<NodeEvent>& events, WallTime now) {
  for (const NodeEvent& e : events) {
    auto it = events_.find(e.key);
    if (it != events_.end() && now - it->second.first < options_.aggregate) {
      it->second.count += e.count;  // a repeat: sent with the next count PATCH (FlushEvents)
      it->second.last = now;
      it->second.message = e.message;
      continue;
    }
    if (!TakeToken(now)) {
      util::MutexLock lock(&stats_mu_);
      ++stats_.events_rate_limited;
      continue;
    }
    char name[96];
    std::snprintf(
        name, sizeof(name), ".%llx",
        static_cast<unsigned long long>(
            std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count()) +
            events_.size());
    PostedEvent posted{options_.node_name + name, now, now, e.count, 0, now, e.reason, e.message};
    const Json event = {{"apiVersion", "v1"},
                        {"kind", "Event"},
                        {"metadata", {{"name", posted.name}, {"namespace", "default"}}},
                        {"involvedObject",
                         {{"apiVersion", "v1"},
                          {"kind", "Node"},
                          {"name", options_.node_name},
                          {"uid", options_.node_name}}},
                        {"reason", e.reason},
                        {"message", e.message},
                        {"type", "Warning"},
                        {"count", e.count},
                        {"firstTimestamp", Rfc3339(now)},
                        {"lastTimestamp", Rfc3339(now)},
                        {"source", {{"component", kComponent}, {"host", options_.node_name}}},
                        {"reportingComponent", kComponent},
                        {"reportingInstance", options_.node_name}};
    Result<HttpResponse> r = Send(KubeApiCall{.method = "POST",
                                              .target = "/api/v1/namespaces/default/events",
                                              .body = json::Dump(event)});
    const bool ok = Ok(r);
    {
      util::MutexLock lock(&stats_mu_);  // the counter only, not the log line
      ++(ok ? stats_.events_created : stats_.events_failed);
    }
    if (!ok) {
      NoteFailure("events",
                  "cannot post a GPU fault Event (events create; see docs/faults.md "
                  "for the RBAC): " +
                      Describe(r));
      continue;
    }
    NoteSuccess("events");
    posted.sent_count = e.count;
    events_[e.key] = std::move(posted);
  }
}

void NodeFaultReporter::FlushEvents(WallTime now) {
  for (auto it = events_.begin(); it != events_.end();) {
    PostedEvent& p = it->second;
    if (p.count > p.sent_count && now - p.patched >= options_.repeat_patch) {
      const Json patch = {
          {"count", p.count}, {"lastTimestamp", Rfc3339(p.last)}, {"message", p.message}};
      Result<HttpResponse> r =
          Send(KubeApiCall{.method = "PATCH",
                           .target = "/api/v1/namespaces/default/events/" + QueryEscape(p.name),
                           .body = json::Dump(patch),
                           .content_type = kStrategicMerge});
      p.patched = now;
      const bool ok = Ok(r);
      {
        util::MutexLock lock(&stats_mu_);  // the counter only, not the log line
        ++(ok ? stats_.events_updated : stats_.events_failed);
      }
      if (ok) {
        p.sent_count = p.count;
      } else {
        NoteFailure("events", "cannot update a GPU fault Event's count: " + Describe(r));
      }
    }
    // Forgotten once its aggregation window is over and nothing is left to send.
    if (now - p.first >= options_.aggregate && p.count == p.sent_count) {
      it = events_.erase(it);
    } else {
      ++it;
    }
  }
}

void NodeFaultReporter::NoteFailure(const std::string& kind, const std::string& what) {
  bool& failing = failing_[kind];
  if (failing) return;
  failing = true;
  log::Error(what + " (logged once until it works again)", {{"node", options_.node_name}});
}

void NodeFaultReporter::NoteSuccess(const std::string& kind) {
  bool& failing = failing_[kind];
  if (!failing) return;
  failing = false;
  log::Info("node fault watch: writes work again", {{"node", options_.node_name}, {"kind", kind}});
}

}  // namespace nvmlx::attribute

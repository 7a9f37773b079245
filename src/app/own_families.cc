#include "app/own_families.h"

#include <cstdint>
#include <string_view>

#include "render/series.h"

namespace nvmlx::app {
namespace {

using render::LabelView;

// One family with one point per (label value, value) under `label`, or one unlabelled point.
struct Point {
  std::string_view label_value;
  int64_t value;
};
void Add(render::SeriesModel* model, std::string_view name, std::string_view type,
         std::string_view help, std::string_view label, std::initializer_list<Point> points) {
  render::SeriesFamily& f = render::AddOwnFamily(model, name, type, help);
  for (const Point& p : points) {
    const LabelView l[] = {{label, p.label_value}};
    render::AddOwnPoint(model, &f, label.empty() ? std::span<const LabelView>() : l, p.value);
  }
}

int64_t I(uint64_t v) { return static_cast<int64_t>(v); }

}  // namespace

void AddServerFamilies(const serve::ServerStats& s, bool web_config, render::SeriesModel* model) {
  Add(model, "nvml_exporter_http_connections_total", "counter",
      "HTTP connections by outcome: accepted; refused (503 at the connection limit or out of file "
      "descriptors); refused_per_source (one source address at a quarter of the limit); evicted "
      "(waiting connections closed to make room: never-completed requests first, then idle "
      "keep-alive).",
      "outcome",
      {{"accepted", I(s.connections_accepted)},
       {"refused", I(s.connections_refused)},
       {"refused_per_source", I(s.connections_refused_per_peer)},
       {"evicted", I(s.connections_evicted)}});
  Add(model, "nvml_exporter_http_open_connections", "gauge", "HTTP connections open.", "",
      {{"", I(s.connections_open)}});
  Add(model, "nvml_exporter_http_accept_errors_total", "counter",
      "accept() failures (EMFILE: out of file descriptors, ...).", "", {{"", I(s.accept_errors)}});
  Add(model, "nvml_exporter_http_scrapes_refused_total", "counter",
      "/metrics requests answered 503 because --max-concurrent-scrapes responses were being "
      "written.",
      "", {{"", I(s.scrapes_refused)}});
  if (!web_config) return;
  const int64_t limited = I(s.auth_rate_limited);
  Add(model, "nvml_exporter_http_auth_failures_total", "counter",
      "Requests answered 401: missing or wrong basic-auth credentials (reason=\"wrong\"), or "
      "refused without a bcrypt check while failures are rate-limited (reason=\"rate_limited\").",
      "reason", {{"wrong", I(s.auth_failures) - limited}, {"rate_limited", limited}});
  Add(model, "nvml_exporter_http_bcrypt_checks_total", "counter",
      "bcrypt verifications computed (cached credentials need none).", "",
      {{"", I(s.bcrypt_runs)}});
  render::SeriesFamily& cpu = render::AddOwnFamily(
      model, "nvml_exporter_http_bcrypt_failed_cpu_seconds_total", "counter",
      "CPU time of the bcrypt verifications that failed (wrong passwords), budgeted per source "
      "address and in total (docs/web.md).");
  cpu.points.push_back(render::SeriesPoint::Double(
      model->AddLabelSet({}), static_cast<double>(s.bcrypt_failure_cpu_ns.load()) / 1e9,
      render::kToPrometheus));
  Add(model, "nvml_exporter_http_tls_handshake_errors_total", "counter",
      "TLS handshakes that failed (bad client certificate, protocol or cipher mismatch).", "",
      {{"", I(s.tls_handshake_errors)}});
  Add(model, "nvml_exporter_web_config_reloads_total", "counter",
      "Reloads of the web config file or its certificate files after a change: ok, or failed (the "
      "previous configuration stays in use).",
      "result", {{"ok", I(s.config_reloads_ok)}, {"failed", I(s.config_reloads_failed)}});
  Add(model, "nvml_exporter_web_config_last_reload_success", "gauge",
      "1 when the web config in use is the files' current content, 0 after a rejected reload.", "",
      {{"", I(s.config_last_reload_ok)}});
}

void AddSinkFamilies(const sinks::SinkSet& sinks, render::SeriesModel* model) {
  struct Counter {
    std::string_view name, type, help;
    uint64_t (*value)(const sinks::Sink&);
  };
  static constexpr Counter kCounters[] = {
      {"nvml_exporter_emf_sent_total", "counter",
       "EMF documents sent, per --emf-output (over TCP: acknowledged by the receiver).",
       [](const sinks::Sink& s) -> uint64_t { return s.sent(); }},
      {"nvml_exporter_emf_dropped_total", "counter",
       "EMF documents dropped (queue full, unsendable, lost with a connection to a stuck "
       "receiver, or left at shutdown), per --emf-output.",
       [](const sinks::Sink& s) -> uint64_t { return s.dropped(); }},
      {"nvml_exporter_emf_queue_length", "gauge",
       "EMF documents waiting to be sent, per --emf-output.",
       [](const sinks::Sink& s) -> uint64_t { return s.queued(); }},
      {"nvml_exporter_emf_receiver_stalled", "gauge",
       "1 while the receiver takes nothing (a send timed out waiting for it, or documents written "
       "stay unacknowledged), per --emf-output.",
       [](const sinks::Sink& s) -> uint64_t { return s.stalled() ? 1 : 0; }},
  };
  for (const Counter& c : kCounters) {
    render::SeriesFamily& f = render::AddOwnFamily(model, c.name, c.type, c.help);
    for (const auto& sink : sinks.sinks()) {
      const LabelView l[] = {{"sink", sink->name()}};
      render::AddOwnPoint(model, &f, l, I(c.value(*sink)));
    }
  }
}

void AddNodeFaultFamilies(const attribute::NodeFaultReporter::Stats& s,
                          render::SeriesModel* model) {
  render::SeriesFamily& f = render::AddOwnFamily(
      model, "nvml_exporter_node_fault_condition", "gauge",
      "1 while this node's GPU condition is in its problem state (GpuHealthy False, GpuXidCritical "
      "or GpuLost True), as last decided (--kubernetes-node-conditions).");
  for (const auto& [type, problem] : s.problems) {
    const LabelView l[] = {{"condition", type}};
    render::AddOwnPoint(model, &f, l, problem ? 1 : 0);
  }
  Add(model, "nvml_exporter_node_fault_condition_writes_total", "counter",
      "PATCHes of this node's GPU conditions, by result (failed: refused or unreachable; see the "
      "log).",
      "result", {{"ok", I(s.condition_writes)}, {"failed", I(s.condition_failures)}});
  Add(model, "nvml_exporter_node_fault_events_total", "counter",
      "GPU fault Events: created, updated (a repeat's count), failed, and rate_limited (new "
      "Events the token bucket dropped).",
      "result",
      {{"created", I(s.events_created)},
       {"updated", I(s.events_updated)},
       {"failed", I(s.events_failed)},
       {"rate_limited", I(s.events_rate_limited)}});
}

}  // namespace nvmlx::app

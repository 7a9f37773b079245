// The exporter's own state as families of the page, beside the collection's: the HTTP server's
// counters (serve::ServerStats: connections accepted, refused, evicted and open, accept errors,
// scrapes refused at --max-concurrent-scrapes, auth failures, bcrypt runs, TLS handshake
// failures, web config reloads) and the EMF sinks' (sent, dropped, queued per --emf-output).
// These are always on (our released pages have them); --enable-exporter-metrics adds the
// process_* families (app/process_metrics.h). They are added to the collection's series model
// (Prometheus only) through the one builder, render::AddOwnFamily, from their entries in the
// registry of our families (render/own_metrics.h: name, HELP and TYPE), and written by the one
// Prometheus writer. Built here,
// in app/, so that serve/ and sinks/ stay free of render/. Values are as of the collection that
// made the page (one interval old at most).
//
// Thread-safety: reads atomics and writes only the caller's model; call from any thread.
#ifndef NVML_EXPORTER_APP_OWN_FAMILIES_H_
#define NVML_EXPORTER_APP_OWN_FAMILIES_H_

#include "attribute/node_fault_reporter.h"
#include "render/series_model.h"
#include "serve/http_server.h"
#include "sinks/sink_set.h"

namespace nvmlx::app {

// `web_config`: whether a web config is in use (the auth, TLS and reload families appear only
// then).
void AddServerFamilies(const serve::ServerStats& s, bool web_config, render::SeriesModel* model);

// nvml_exporter_emf_sent_total, _dropped_total and _queue_length, one series per sink.
void AddSinkFamilies(const sinks::SinkSet& sinks, render::SeriesModel* model);

// --kubernetes-node-conditions: nvml_exporter_node_fault_condition{condition} (1 in its problem
// state), _condition_writes_total{result} and _events_total{result}.
void AddNodeFaultFamilies(const attribute::NodeFaultReporter::Stats& s, render::SeriesModel* model);

}  // namespace nvmlx::app

#endif  // NVML_EXPORTER_APP_OWN_FAMILIES_H_

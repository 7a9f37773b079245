// The HTTP server's own counters (serve::ServerStats) as Prometheus text, appended to each page
// after the collection's series: connections accepted, refused, evicted and open, accept errors,
// auth failures, bcrypt runs, TLS handshake failures, web config reloads. Rendered here, in
// app/, so that serve/ stays free of render/. Values are as of the collection that made the
// page (one interval old at most).
//
// Thread-safety: reads atomics; call from any thread.
#ifndef NVML_EXPORTER_APP_SERVER_METRICS_H_
#define NVML_EXPORTER_APP_SERVER_METRICS_H_

#include <string>

#include "serve/http_server.h"

namespace nvmlx::app {

// `web_config`: whether a web config is in use (the auth, TLS and reload families appear only
// then).
void AppendServerMetrics(const serve::ServerStats& s, bool web_config, std::string* out);

}  // namespace nvmlx::app

#endif  // NVML_EXPORTER_APP_SERVER_METRICS_H_

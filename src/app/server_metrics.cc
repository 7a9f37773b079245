#include "app/server_metrics.h"

#include <string_view>

namespace nvmlx::app {
namespace {

void Family(std::string* out, std::string_view name, std::string_view type, std::string_view help) {
  out->append("# HELP ").append(name).append(" ").append(help).append("\n");
  out->append("# TYPE ").append(name).append(" ").append(type).append("\n");
}

void Sample(std::string* out, std::string_view name, std::string_view labels, long long v) {
  out->append(name).append(labels).append(" ").append(std::to_string(v)).append("\n");
}

}  // namespace

void AppendServerMetrics(const serve::ServerStats& s, bool web_config, std::string* out) {
  constexpr std::string_view kConn = "nvml_exporter_http_connections_total";
  Family(out, kConn, "counter",
         "HTTP connections by outcome: accepted; refused (503 at the connection limit or out of "
         "file descriptors); evicted (idle keep-alive connections closed to make room).");
  Sample(out, kConn, "{outcome=\"accepted\"}", static_cast<long long>(s.connections_accepted));
  Sample(out, kConn, "{outcome=\"refused\"}", static_cast<long long>(s.connections_refused));
  Sample(out, kConn, "{outcome=\"evicted\"}", static_cast<long long>(s.connections_evicted));
  Family(out, "nvml_exporter_http_open_connections", "gauge", "HTTP connections open.");
  Sample(out, "nvml_exporter_http_open_connections", "",
         static_cast<long long>(s.connections_open));
  Family(out, "nvml_exporter_http_accept_errors_total", "counter",
         "accept() failures (EMFILE: out of file descriptors, ...).");
  Sample(out, "nvml_exporter_http_accept_errors_total", "",
         static_cast<long long>(s.accept_errors));
  if (!web_config) return;
  constexpr std::string_view kAuth = "nvml_exporter_http_auth_failures_total";
  Family(out, kAuth, "counter",
         "Requests answered 401: missing or wrong basic-auth credentials (reason=\"wrong\"), or "
         "refused without a bcrypt check while failures are rate-limited "
         "(reason=\"rate_limited\").");
  const long long limited = static_cast<long long>(s.auth_rate_limited);
  Sample(out, kAuth, "{reason=\"wrong\"}", static_cast<long long>(s.auth_failures) - limited);
  Sample(out, kAuth, "{reason=\"rate_limited\"}", limited);
  Family(out, "nvml_exporter_http_bcrypt_checks_total", "counter",
         "bcrypt verifications computed (cached credentials need none).");
  Sample(out, "nvml_exporter_http_bcrypt_checks_total", "", static_cast<long long>(s.bcrypt_runs));
  Family(out, "nvml_exporter_http_tls_handshake_errors_total", "counter",
         "TLS handshakes that failed (bad client certificate, protocol or cipher mismatch).");
  Sample(out, "nvml_exporter_http_tls_handshake_errors_total", "",
         static_cast<long long>(s.tls_handshake_errors));
  constexpr std::string_view kReload = "nvml_exporter_web_config_reloads_total";
  Family(out, kReload, "counter",
         "Reloads of the web config file or its certificate files after a change: ok, or failed "
         "(the previous configuration stays in use).");
  Sample(out, kReload, "{result=\"ok\"}", static_cast<long long>(s.config_reloads_ok));
  Sample(out, kReload, "{result=\"failed\"}", static_cast<long long>(s.config_reloads_failed));
  Family(out, "nvml_exporter_web_config_last_reload_success", "gauge",
         "1 when the web config in use is the files' current content, 0 after a rejected reload.");
  Sample(out, "nvml_exporter_web_config_last_reload_success", "",
         static_cast<long long>(s.config_last_reload_ok));
}

}  // namespace nvmlx::app

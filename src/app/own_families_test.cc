#include "app/own_families.h"

#include <gtest/gtest.h>

#include <string>

#include "render/prometheus.h"

namespace nvmlx::app {
namespace {

std::string Page(const render::SeriesModel& model) {
  std::string out;
  render::RenderPrometheus(model, &out);
  return out;
}

// The server's families keep the exact text they had when they were written by hand beside the
// page (same names, HELP, TYPE, labels and values), now through the one Prometheus writer.
TEST(OwnFamiliesTest, ServerFamiliesText) {
  serve::ServerStats s;
  s.connections_accepted = 12;
  s.connections_refused = 3;
  s.connections_evicted = 1;
  s.connections_refused_per_peer = 6;
  s.connections_open = 4;
  s.accept_errors = 2;
  s.scrapes_refused = 5;
  render::SeriesModel model;
  AddServerFamilies(s, /*web_config=*/false, &model);
  EXPECT_EQ(Page(model),
            "# HELP nvml_exporter_http_connections_total HTTP connections by outcome: accepted; "
            "refused (503 at the connection limit or out of file descriptors); refused_per_source "
            "(one source address at a quarter of the limit); evicted (waiting connections closed "
            "to make room: never-completed requests first, then idle keep-alive).\n"
            "# TYPE nvml_exporter_http_connections_total counter\n"
            "nvml_exporter_http_connections_total{outcome=\"accepted\"} 12\n"
            "nvml_exporter_http_connections_total{outcome=\"refused\"} 3\n"
            "nvml_exporter_http_connections_total{outcome=\"refused_per_source\"} 6\n"
            "nvml_exporter_http_connections_total{outcome=\"evicted\"} 1\n"
            "# HELP nvml_exporter_http_open_connections HTTP connections open.\n"
            "# TYPE nvml_exporter_http_open_connections gauge\n"
            "nvml_exporter_http_open_connections 4\n"
            "# HELP nvml_exporter_http_accept_errors_total accept() failures (EMFILE: out of file "
            "descriptors, ...).\n"
            "# TYPE nvml_exporter_http_accept_errors_total counter\n"
            "nvml_exporter_http_accept_errors_total 2\n"
            "# HELP nvml_exporter_http_scrapes_refused_total /metrics requests answered 503 "
            "because --max-concurrent-scrapes responses were being written.\n"
            "# TYPE nvml_exporter_http_scrapes_refused_total counter\n"
            "nvml_exporter_http_scrapes_refused_total 5\n");
}

TEST(OwnFamiliesTest, WebConfigFamiliesOnlyWithAWebConfig) {
  serve::ServerStats s;
  s.auth_failures = 7;
  s.auth_rate_limited = 5;
  s.config_reloads_failed = 1;
  s.config_last_reload_ok = 0;
  render::SeriesModel model;
  AddServerFamilies(s, /*web_config=*/true, &model);
  const std::string page = Page(model);
  EXPECT_NE(page.find("nvml_exporter_http_auth_failures_total{reason=\"wrong\"} 2\n"
                      "nvml_exporter_http_auth_failures_total{reason=\"rate_limited\"} 5\n"),
            std::string::npos)
      << page;
  EXPECT_NE(page.find("# TYPE nvml_exporter_web_config_reloads_total counter\n"
                      "nvml_exporter_web_config_reloads_total{result=\"ok\"} 0\n"
                      "nvml_exporter_web_config_reloads_total{result=\"failed\"} 1\n"),
            std::string::npos)
      << page;
  EXPECT_NE(page.find("nvml_exporter_web_config_last_reload_success 0\n"), std::string::npos);
  EXPECT_NE(page.find("# TYPE nvml_exporter_http_bcrypt_checks_total counter\n"),
            std::string::npos);
  EXPECT_NE(page.find("# TYPE nvml_exporter_http_tls_handshake_errors_total counter\n"),
            std::string::npos);
}

TEST(OwnFamiliesTest, SinkFamiliesOnePointPerSink) {
  const std::string path = ::testing::TempDir() + "/own_families_emf.log";
  Result<std::unique_ptr<sinks::SinkSet>> set =
      sinks::SinkSet::Create({"file:" + path, "stdout"}, sinks::SinkOptions{});
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  render::SeriesModel model;
  AddSinkFamilies(**set, &model);
  const std::string page = Page(model);
  EXPECT_NE(page.find("# HELP nvml_exporter_emf_sent_total EMF documents sent, per "
                      "--emf-output (over TCP: acknowledged by the receiver).\n"
                      "# TYPE nvml_exporter_emf_sent_total counter\n"
                      "nvml_exporter_emf_sent_total{sink=\"file:" +
                      path +
                      "\"} 0\n"
                      "nvml_exporter_emf_sent_total{sink=\"stdout\"} 0\n"),
            std::string::npos)
      << page;
  EXPECT_NE(page.find("# TYPE nvml_exporter_emf_dropped_total counter\n"), std::string::npos);
  EXPECT_NE(page.find("# TYPE nvml_exporter_emf_queue_length gauge\n"
                      "nvml_exporter_emf_queue_length{sink=\"file:" +
                      path + "\"} 0\n"),
            std::string::npos)
      << page;
  EXPECT_NE(page.find("# TYPE nvml_exporter_emf_receiver_stalled gauge\n"
                      "nvml_exporter_emf_receiver_stalled{sink=\"file:" +
                      path + "\"} 0\n"),
            std::string::npos)
      << page;
  (*set)->Stop();
}

}  // namespace
}  // namespace nvmlx::app

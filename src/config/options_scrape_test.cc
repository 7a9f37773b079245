// The flags dcgm-exporter 4.8.3 and 4.8.4 added or widened (config/options_scrape.cc, -d's g+i,
// -r's DCGM URIs): names, env vars, defaults, precedence and the errors for bad values
// (docs/upstream/flags-4.8.4.md), the container labels of 4.8.3 and the generation switch
// (--dcgm-exporter-compat). The flags of 4.8.2 and before are in options_test.cc.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <vector>

#include "config/options.h"
#include "config/options_test_fixture.h"

namespace nvmlx::config {
namespace {

using test::Env;
using test::Error;
using test::Parse;
using test::WarnedOptions;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(ScrapeOptions, Defaults) {
  Result<Options> r = Parse({});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->max_concurrent_scrapes, 16);  // appconfig.DefaultMaxConcurrentScrapes
  EXPECT_FALSE(r->enable_exporter_metrics);
  EXPECT_FALSE(r->health_require_gpus);
  EXPECT_TRUE(r->startup_warnings.empty());
}

TEST(ScrapeOptions, FlagEnvAndPrecedence) {
  const Env env = {{"DCGM_EXPORTER_MAX_CONCURRENT_SCRAPES", "32"},
                   {"DCGM_EXPORTER_ENABLE_EXPORTER_METRICS", "true"},
                   {"DCGM_EXPORTER_HEALTH_REQUIRE_GPUS", "1"}};
  Result<Options> e = Parse({}, env);
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_EQ(e->max_concurrent_scrapes, 32);
  EXPECT_TRUE(e->enable_exporter_metrics);
  EXPECT_TRUE(e->health_require_gpus);
  // The flag wins over its env var; Go's spellings of names and booleans.
  Result<Options> f = Parse({"-max-concurrent-scrapes", "8", "--enable-exporter-metrics=false",
                             "--health-require-gpus=F"},
                            env);
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->max_concurrent_scrapes, 8);
  EXPECT_FALSE(f->enable_exporter_metrics);
  EXPECT_FALSE(f->health_require_gpus);
  Result<Options> bare = Parse({"--enable-exporter-metrics", "--health-require-gpus"});
  ASSERT_TRUE(bare.ok());
  EXPECT_TRUE(bare->enable_exporter_metrics);
  EXPECT_TRUE(bare->health_require_gpus);
  EXPECT_TRUE(bare->startup_warnings.empty());  // both have an effect here
}

TEST(ScrapeOptions, BadValuesNameTheirOrigin) {
  // dcgm-exporter: "must be greater than 0".
  EXPECT_EQ(Error({"--max-concurrent-scrapes=0"}),
            "--max-concurrent-scrapes: 0 is out of range (at least 1, at most 1000000)");
  EXPECT_EQ(Error({}, {{"DCGM_EXPORTER_MAX_CONCURRENT_SCRAPES", "-1"}}),
            "DCGM_EXPORTER_MAX_CONCURRENT_SCRAPES: -1 is out of range (at least 1, at most "
            "1000000)");
  EXPECT_EQ(Error({}, {{"DCGM_EXPORTER_MAX_CONCURRENT_SCRAPES", "many"}}),
            "DCGM_EXPORTER_MAX_CONCURRENT_SCRAPES: \"many\" is not a whole number");
  EXPECT_EQ(Error({"--enable-exporter-metrics=yes"}),
            "--enable-exporter-metrics: \"yes\" is not a boolean (expected one of 1, t, T, TRUE, "
            "true, True, 0, f, F, FALSE, false, False)");
  EXPECT_EQ(Error({}, {{"DCGM_EXPORTER_HEALTH_REQUIRE_GPUS", "on"}}),
            "DCGM_EXPORTER_HEALTH_REQUIRE_GPUS: \"on\" is not a boolean (expected one of 1, t, "
            "T, TRUE, true, True, 0, f, F, FALSE, false, False)");
}

// DCGM's field-watch retention: checked as dcgm-exporter checks it, then one warning each.
TEST(ScrapeOptions, WatchRetentionIsCheckedThenWarned) {
  Result<Options> r =
      Parse({"--watch-max-keep-age=5m"}, {{"DCGM_EXPORTER_WATCH_MAX_KEEP_SAMPLES", "100"}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_THAT(WarnedOptions(*r), ElementsAre("watch-max-keep-age", "watch-max-keep-samples"));
  EXPECT_EQ(r->startup_warnings[0].message,
            "--watch-max-keep-age (--watch-max-keep-age=5m) ignored: nvml-exporter reads NVML "
            "each collection and keeps no DCGM field-watch cache to bound");
  EXPECT_THAT(r->startup_warnings[1].message,
              HasSubstr("(DCGM_EXPORTER_WATCH_MAX_KEEP_SAMPLES=100) ignored: "));
  // The flag beats the env var: its value is the one named.
  Result<Options> both =
      Parse({"--watch-max-keep-samples", "7"}, {{"DCGM_EXPORTER_WATCH_MAX_KEEP_SAMPLES", "100"}});
  ASSERT_TRUE(both.ok());
  EXPECT_THAT(both->startup_warnings[0].message, HasSubstr("(--watch-max-keep-samples=7) ignored"));
  // Age 0 with a sample bound is fine; both zero is an unbounded watch (refused upstream).
  EXPECT_TRUE(Parse({"--watch-max-keep-age=0s", "--watch-max-keep-samples=10"}).ok());
  EXPECT_EQ(Error({"--watch-max-keep-age=0s"}),
            "--watch-max-keep-age: --watch-max-keep-age and --watch-max-keep-samples cannot both "
            "be zero (an unbounded watch)");
  EXPECT_EQ(Error({"--watch-max-keep-age=-1s"}),
            "--watch-max-keep-age: \"-1s\" must not be negative");
  EXPECT_THAT(Error({}, {{"DCGM_EXPORTER_WATCH_MAX_KEEP_AGE", "ten minutes"}}),
              HasSubstr("DCGM_EXPORTER_WATCH_MAX_KEEP_AGE: "));
  EXPECT_EQ(Error({"--watch-max-keep-samples=-5"}),
            "--watch-max-keep-samples: -5 is out of range (0 to 2147483647)");
  EXPECT_EQ(Error({}, {{"DCGM_EXPORTER_WATCH_MAX_KEEP_SAMPLES", "2147483648"}}),
            "DCGM_EXPORTER_WATCH_MAX_KEEP_SAMPLES: 2147483648 is out of range (0 to 2147483647)");
  EXPECT_EQ(Error({"--watch-max-keep-samples=x"}),
            "--watch-max-keep-samples: \"x\" is not a whole number");
}

TEST(ScrapeOptions, HelpListsThem) {
  const std::string help = Parse({"-h"})->help_text;
  for (const char* env :
       {"DCGM_EXPORTER_MAX_CONCURRENT_SCRAPES", "DCGM_EXPORTER_ENABLE_EXPORTER_METRICS",
        "DCGM_EXPORTER_HEALTH_REQUIRE_GPUS", "DCGM_EXPORTER_WATCH_MAX_KEEP_AGE",
        "DCGM_EXPORTER_WATCH_MAX_KEEP_SAMPLES"}) {
    EXPECT_THAT(help, HasSubstr("[$" + std::string(env) + "]")) << env;
  }
  // The two without effect are listed with the other compatibility-only flags, after the rest.
  EXPECT_GT(help.find("--watch-max-keep-age"), help.find("Accepted for compatibility"));
  EXPECT_LT(help.find("--max-concurrent-scrapes"), help.find("Accepted for compatibility"));
}

// -d's combined form (dcgm-exporter 4.8.3+): g and i together, each at most once, f alone.
TEST(ScrapeOptions, CombinedDeviceSelector) {
  Result<Options> r = Parse({"-d", "g:0,1+i:2-3"});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->devices.kind, DeviceSelector::Kind::kGpusAndInstances);
  EXPECT_FALSE(r->devices.all);
  EXPECT_THAT(r->devices.ids, ElementsAre(0u, 1u));
  EXPECT_FALSE(r->devices.instances_all);
  EXPECT_THAT(r->devices.instance_ids, ElementsAre(2u, 3u));
  EXPECT_EQ(r->devices_text, "g:0,1+i:2-3");
  Result<Options> env = Parse({}, {{"DCGM_EXPORTER_DEVICES_STR", "i+g"}});
  ASSERT_TRUE(env.ok());
  EXPECT_TRUE(env->devices.all && env->devices.instances_all);
  EXPECT_EQ(Error({"-d", "f+g"}),
            "--devices: invalid device selector \"f+g\": f (flex) cannot be combined with g or i");
  EXPECT_EQ(Error({}, {{"DCGM_EXPORTER_DEVICES_STR", "g+g:1"}}),
            "DCGM_EXPORTER_DEVICES_STR: invalid device selector \"g+g:1\": g is given twice");
  EXPECT_EQ(Error({"-d", "g+"}),
            "--devices: invalid device selector \"g+\": empty selector next to '+'");
  EXPECT_EQ(Error({"-d", "g+i:3-1"}),
            "--devices: invalid device selector \"g+i:3-1\": range 3-1 is backwards (write 1-3)");
  // -p and -s take the same grammar (and stay without effect).
  Result<Options> other = Parse({"-s", "g+i"});
  ASSERT_TRUE(other.ok()) << other.status().message();
  EXPECT_THAT(WarnedOptions(*other), ElementsAre("switch-devices"));
}

// -r's DCGM URI forms (dcgm-exporter 4.8.3+): accepted, and warned like HOST:PORT; a malformed
// one refused (upstream's connect fails on it and the exporter exits).
TEST(ScrapeOptions, HostengineUris) {
  for (const char* v : {"tcp://nvidia-dcgm:5555", "TCP://10.0.0.1", "tcp://[::1]:5555",
                        "unix:///var/run/nvidia-dcgm.sock", "vsock://3:5555", "[::1]:5555"}) {
    Result<Options> r = Parse({"-r", v});
    ASSERT_TRUE(r.ok()) << v << ": " << r.status().message();
    EXPECT_THAT(WarnedOptions(*r), ElementsAre("remote-hostengine-info")) << v;
    EXPECT_THAT(r->startup_warnings[0].message, HasSubstr("there is no DCGM hostengine")) << v;
  }
  EXPECT_EQ(Error({"-r", "unix://relative.sock"}),
            "--remote-hostengine-info: \"unix://relative.sock\" is not a DCGM unix URI (expected "
            "unix:///SOCKET_PATH, an absolute path)");
  EXPECT_EQ(Error({}, {{"DCGM_REMOTE_HOSTENGINE_INFO", "vsock://host:5555"}}),
            "DCGM_REMOTE_HOSTENGINE_INFO: \"vsock://host:5555\" is not a DCGM vsock URI "
            "(expected vsock://CID:PORT, both numbers)");
  EXPECT_EQ(Error({"-r", "tcp://h:99999"}),
            "--remote-hostengine-info: \"tcp://h:99999\" is not a DCGM tcp URI (the port must be "
            "1 to 65535)");
  EXPECT_EQ(Error({"-r", "tcp://:5555"}),
            "--remote-hostengine-info: \"tcp://:5555\" is not a DCGM tcp URI (expected "
            "tcp://HOST:PORT)");
  EXPECT_EQ(Error({"-r", "http://h:5555"}),
            "--remote-hostengine-info: \"http://h:5555\" has a scheme DCGM does not know "
            "(expected tcp://, unix:// or vsock://, or HOST:PORT)");
}

// dcgm-exporter 4.8.3's --container-labels / --container-runtime-socket (pkg/cmd/app.go at
// 7ad5832, docs/upstream/container-labels.md): a boolean and a path without default; the labels
// need the socket unless -k, under which they are ignored with a warning.
TEST(Options, ContainerLabels) {
  Result<Options> r = Parse({"--container-labels", "--container-runtime-socket", "/run/d.sock"});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->container_labels);
  EXPECT_EQ(r->container_runtime_socket, "/run/d.sock");
  EXPECT_TRUE(r->startup_warnings.empty());

  r = Parse({}, {{"DCGM_EXPORTER_CONTAINER_LABELS", "true"},
                 {"DCGM_CONTAINER_RUNTIME_SOCKET", "/run/podman/podman.sock"}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->container_labels);
  EXPECT_EQ(r->container_runtime_socket, "/run/podman/podman.sock");

  // The socket alone does nothing; the defaults are off and empty.
  r = Parse({"--container-runtime-socket=/run/d.sock"});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_FALSE(r->container_labels);
  EXPECT_FALSE(Parse({})->container_labels);
  EXPECT_EQ(Parse({})->container_runtime_socket, "");

  // -k: ignored, with one warning; no socket needed.
  r = Parse({"-k", "--container-labels"});
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->startup_warnings.size(), 1u);
  EXPECT_EQ(r->startup_warnings[0].option, "container-labels");
  EXPECT_EQ(r->startup_warnings[0].message,
            "--container-labels ignored: with -k the container label comes from the kubelet");
  r = Parse({"-k"}, {{"DCGM_EXPORTER_CONTAINER_LABELS", "1"}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->startup_warnings.size(), 1u);
  EXPECT_THAT(r->startup_warnings[0].message,
              HasSubstr("(DCGM_EXPORTER_CONTAINER_LABELS=1) ignored: "));

  const std::string help = Parse({"-h"})->help_text;
  EXPECT_THAT(help, HasSubstr("[$DCGM_EXPORTER_CONTAINER_LABELS]"));
  EXPECT_THAT(help, HasSubstr("[$DCGM_CONTAINER_RUNTIME_SOCKET]"));
}

TEST(Options, ContainerLabelsBadValues) {
  const std::string needs =
      " requires --container-runtime-socket or DCGM_CONTAINER_RUNTIME_SOCKET (the "
      "Docker-compatible engine's socket, e.g. /var/run/docker.sock)";
  EXPECT_EQ(Error({"--container-labels"}), "--container-labels" + needs);
  EXPECT_EQ(Error({"--container-labels", "--container-runtime-socket", "  "}),
            "--container-labels" + needs);
  EXPECT_EQ(Error({}, {{"DCGM_EXPORTER_CONTAINER_LABELS", "true"}}),
            "DCGM_EXPORTER_CONTAINER_LABELS" + needs);
  EXPECT_THAT(Error({"--container-labels=maybe", "--container-runtime-socket=/s"}),
              StartsWith("--container-labels: \"maybe\" is not a boolean"));
  EXPECT_THAT(Error({}, {{"DCGM_EXPORTER_CONTAINER_LABELS", "yes"}}),
              StartsWith("DCGM_EXPORTER_CONTAINER_LABELS: \"yes\" is not a boolean"));
}

// --dcgm-exporter-compat picks the host label's spelling and, without -f, the collectors file of
// that release; --hostname-label, when given, wins over it.
TEST(Options, DcgmExporterCompat) {
  Result<Options> newest = Parse({});
  ASSERT_TRUE(newest.ok()) << newest.status().message();
  EXPECT_EQ(newest->dcgm_exporter_compat, "4.8.4");
  EXPECT_EQ(newest->hostname_label, "hostname");
  EXPECT_EQ(newest->collectors, "/etc/dcgm-exporter/default-counters.csv");

  Result<Options> old = Parse({"--dcgm-exporter-compat", "4.8.2"});
  ASSERT_TRUE(old.ok()) << old.status().message();
  EXPECT_EQ(old->dcgm_exporter_compat, "4.8.2");
  EXPECT_EQ(old->hostname_label, "Hostname");
  EXPECT_EQ(old->collectors, "/etc/dcgm-exporter/4.8.2/default-counters.csv");

  Result<Options> mid = Parse({}, {{"NVML_EXPORTER_DCGM_EXPORTER_COMPAT", "4.8.3"}});
  ASSERT_TRUE(mid.ok()) << mid.status().message();
  EXPECT_EQ(mid->hostname_label, "hostname");
  EXPECT_EQ(mid->collectors, "/etc/dcgm-exporter/default-counters.csv");

  // -f (or DCGM_EXPORTER_COLLECTORS) keeps its file whatever the release.
  EXPECT_EQ(Parse({"--dcgm-exporter-compat=4.8.2", "-f", "/x.csv"})->collectors, "/x.csv");
  EXPECT_EQ(
      Parse({"--dcgm-exporter-compat=4.8.2"}, {{"DCGM_EXPORTER_COLLECTORS", "/y.csv"}})->collectors,
      "/y.csv");
  // --hostname-label wins over the release's spelling, both ways.
  EXPECT_EQ(Parse({"--dcgm-exporter-compat=4.8.2", "--hostname-label", "hostname"})->hostname_label,
            "hostname");
  EXPECT_EQ(Parse({"--hostname-label", "Hostname"})->hostname_label, "Hostname");
  EXPECT_EQ(Parse({"--dcgm-exporter-compat=4.8.2"}, {{"NVML_EXPORTER_HOSTNAME_LABEL", "hostname"}})
                ->hostname_label,
            "hostname");

  EXPECT_EQ(Error({"--dcgm-exporter-compat", "4.8"}),
            "--dcgm-exporter-compat: \"4.8\" is not a dcgm-exporter release this daemon mirrors "
            "(expected one of 4.8.2, 4.8.3, 4.8.4, 4.9, 4.10)");
  EXPECT_THAT(Error({}, {{"NVML_EXPORTER_DCGM_EXPORTER_COMPAT", "latest"}}),
              StartsWith("NVML_EXPORTER_DCGM_EXPORTER_COMPAT: \"latest\" is not a dcgm-exporter"));
  EXPECT_THAT(Error({"--hostname-label", "HOSTNAME"}),
              HasSubstr("is not a host label spelling (expected Hostname or hostname)"));
}

// 4.9 and 4.10 (DCGM 4.7 / 4.8 names, the driver label renamed in the rows): their own default
// collectors file, the same host label as 4.8.3+; each with or without the patch number. The
// default stays 4.8.4, what the GPU Operator deploys (docs/compatibility.md §3).
TEST(Options, DcgmExporterCompat49And410) {
  for (const char* v : {"4.9", "4.9.0"}) {
    Result<Options> r = Parse({"--dcgm-exporter-compat", v});
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->dcgm_exporter_compat, "4.9");
    EXPECT_EQ(r->hostname_label, "hostname");
    EXPECT_EQ(r->collectors, "/etc/dcgm-exporter/4.9/default-counters.csv");
  }
  for (const char* v : {"4.10", "4.10.0"}) {
    Result<Options> r = Parse({}, {{"NVML_EXPORTER_DCGM_EXPORTER_COMPAT", v}});
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->dcgm_exporter_compat, "4.10");
    EXPECT_EQ(r->hostname_label, "hostname");
    EXPECT_EQ(r->collectors, "/etc/dcgm-exporter/4.10/default-counters.csv");
  }
  EXPECT_EQ(Parse({"--dcgm-exporter-compat=4.10", "-f", "/x.csv"})->collectors, "/x.csv");
  EXPECT_EQ(Parse({})->dcgm_exporter_compat, "4.8.4");
  EXPECT_THAT(Error({"--dcgm-exporter-compat", "4.11"}),
              HasSubstr("\"4.11\" is not a dcgm-exporter release this daemon mirrors"));
}

// Skip by default (a newer release's field must not stop the daemon); fatal on request.
TEST(Options, CollectorsUnknownFields) {
  EXPECT_EQ(Parse({})->collectors_unknown_fields, UnknownFields::kSkip);
  EXPECT_EQ(Parse({"--collectors-unknown-fields", "fatal"})->collectors_unknown_fields,
            UnknownFields::kFatal);
  EXPECT_EQ(Parse({"--collectors-unknown-fields=skip"})->collectors_unknown_fields,
            UnknownFields::kSkip);
  EXPECT_EQ(
      Parse({}, {{"NVML_EXPORTER_COLLECTORS_UNKNOWN_FIELDS", "fatal"}})->collectors_unknown_fields,
      UnknownFields::kFatal);
  EXPECT_EQ(Error({"--collectors-unknown-fields", "warn"}),
            "--collectors-unknown-fields: \"warn\" is not what to do with an unknown field "
            "(expected skip or fatal)");
  EXPECT_THAT(Parse({"-h"})->help_text, HasSubstr("[$NVML_EXPORTER_COLLECTORS_UNKNOWN_FIELDS]"));
}

}  // namespace
}  // namespace nvmlx::config

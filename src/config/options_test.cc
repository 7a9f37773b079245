#include "config/options.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <initializer_list>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "config/option_flags.h"
#include "config/options_test_fixture.h"

namespace nvmlx::config {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

using test::Env;
using test::Error;
using test::Parse;
using test::WarnedOptions;

TEST(Options, Defaults) {
  Result<Options> r = Parse({});
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Options& o = *r;
  EXPECT_EQ(o.collectors, "/etc/dcgm-exporter/default-counters.csv");
  EXPECT_EQ(o.address, ":9400");
  EXPECT_EQ(o.collect_interval_ms, 30000);
  EXPECT_EQ(o.devices_text, "f");
  EXPECT_EQ(o.devices.kind, DeviceSelector::Kind::kFlex);
  EXPECT_FALSE(o.no_hostname);
  EXPECT_EQ(o.node_name, "");
  EXPECT_FALSE(o.use_old_namespace);
  EXPECT_FALSE(o.replace_blanks_in_model_name);
  EXPECT_FALSE(o.debug);
  EXPECT_EQ(o.log_format, LogFormat::kText);
  EXPECT_FALSE(o.fake_gpus);
  EXPECT_EQ(o.fake_gpus_scenario, "");
  EXPECT_EQ(o.nvml_library, "libnvidia-ml.so.1");
  EXPECT_FALSE(o.once);
  EXPECT_EQ(o.web_read_timeout, std::chrono::seconds(10));
  EXPECT_EQ(o.web_write_timeout, std::chrono::seconds(30));
  EXPECT_FALSE(o.help_or_version_requested);
  EXPECT_EQ(o.exit_code_hint, ExitCode::kOk);
}

TEST(Options, LongShortAndGoSpellings) {
  for (auto args : std::vector<std::vector<const char*>>{{"-f", "/x.csv"},
                                                         {"--collectors", "/x.csv"},
                                                         {"--collectors=/x.csv"},
                                                         {"-collectors", "/x.csv"},
                                                         {"-collectors=/x.csv"},
                                                         {"--f=/x.csv"},
                                                         {"-f=/x.csv"}}) {
    std::vector<std::string> storage = {"nvml-exporter"};
    for (const char* a : args) storage.emplace_back(a);
    std::vector<char*> argv;
    for (std::string& s : storage) argv.push_back(s.data());
    Result<Options> r = ParseOptions(static_cast<int>(argv.size()), argv.data(),
                                     [](std::string_view) { return std::nullopt; });
    ASSERT_TRUE(r.ok()) << storage[1] << ": " << r.status().message();
    EXPECT_EQ(r->collectors, "/x.csv") << storage[1];
  }
}

TEST(Options, EveryFlag) {
  Result<Options> r = Parse({"-f",
                             "/c.csv",
                             "-a",
                             "127.0.0.1:9500",
                             "-c",
                             "1000",
                             "-d",
                             "g:0,2-3",
                             "-n",
                             "-o",
                             "-rbmn",
                             "--debug",
                             "--log-format",
                             "json",
                             "--nvml-library",
                             "/lib/libnvml.so",
                             "--once",
                             "--web-read-timeout",
                             "500ms",
                             "--web-write-timeout=1m"});
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Options& o = *r;
  EXPECT_EQ(o.collectors, "/c.csv");
  EXPECT_EQ(o.address, "127.0.0.1:9500");
  EXPECT_EQ(o.collect_interval_ms, 1000);
  EXPECT_EQ(o.devices_text, "g:0,2-3");
  EXPECT_EQ(o.devices.kind, DeviceSelector::Kind::kGpus);
  EXPECT_EQ(o.devices.ids, (std::vector<unsigned>{0, 2, 3}));
  EXPECT_TRUE(o.no_hostname);
  EXPECT_TRUE(o.use_old_namespace);
  EXPECT_TRUE(o.replace_blanks_in_model_name);
  EXPECT_TRUE(o.debug);
  EXPECT_EQ(o.log_format, LogFormat::kJson);
  EXPECT_EQ(o.nvml_library, "/lib/libnvml.so");
  EXPECT_TRUE(o.once);
  EXPECT_EQ(o.web_read_timeout, std::chrono::milliseconds(500));
  EXPECT_EQ(o.web_write_timeout, std::chrono::minutes(1));
}

TEST(Options, RbmnSpellings) {
  for (const char* a : {"-rbmn", "--rbmn", "--replace-blanks-in-model-name", "-rbmn=true"}) {
    Result<Options> r = Parse({a});
    ASSERT_TRUE(r.ok()) << a << ": " << r.status().message();
    EXPECT_TRUE(r->replace_blanks_in_model_name) << a;
  }
  Result<Options> off = Parse({"-rbmn=false"});
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(off->replace_blanks_in_model_name);
}

TEST(Options, EveryEnvVar) {
  Env env = {{"DCGM_EXPORTER_COLLECTORS", "/env.csv"},
             {"DCGM_EXPORTER_LISTEN", "[::]:9401"},
             {"DCGM_EXPORTER_INTERVAL", "250"},
             {"DCGM_EXPORTER_DEVICES_STR", "i:1"},
             {"DCGM_EXPORTER_NO_HOSTNAME", "true"},
             {"DCGM_EXPORTER_USE_OLD_NAMESPACE", "1"},
             {"DCGM_EXPORTER_REPLACE_BLANKS_IN_MODEL_NAME", "T"},
             {"DCGM_EXPORTER_DEBUG", "TRUE"},
             {"DCGM_EXPORTER_LOG_FORMAT", "json"},
             {"NVML_EXPORTER_NVML_LIBRARY", "/opt/libnvidia-ml.so.1"},
             {"DCGM_EXPORTER_WEB_READ_TIMEOUT", "2s"},
             {"DCGM_EXPORTER_WEB_WRITE_TIMEOUT", "1h"},
             {"NODE_NAME", "node-7"}};
  Result<Options> r = Parse({}, env);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Options& o = *r;
  EXPECT_EQ(o.collectors, "/env.csv");
  EXPECT_EQ(o.address, "[::]:9401");
  EXPECT_EQ(o.collect_interval_ms, 250);
  EXPECT_EQ(o.devices.kind, DeviceSelector::Kind::kInstances);
  EXPECT_TRUE(o.no_hostname);
  EXPECT_TRUE(o.use_old_namespace);
  EXPECT_TRUE(o.replace_blanks_in_model_name);
  EXPECT_TRUE(o.debug);
  EXPECT_EQ(o.log_format, LogFormat::kJson);
  EXPECT_EQ(o.nvml_library, "/opt/libnvidia-ml.so.1");
  EXPECT_EQ(o.web_read_timeout, std::chrono::seconds(2));
  EXPECT_EQ(o.web_write_timeout, std::chrono::hours(1));
  EXPECT_EQ(o.node_name, "node-7");
}

TEST(Options, FlagBeatsEnvBeatsDefault) {
  Env env = {{"DCGM_EXPORTER_INTERVAL", "5000"},
             {"DCGM_EXPORTER_COLLECTORS", "/env.csv"},
             {"DCGM_EXPORTER_DEBUG", "true"},
             {"DCGM_EXPORTER_LOG_FORMAT", "bogus"}};  // never read: the flag wins
  Result<Options> r = Parse({"-c", "2000", "--debug=false", "--log-format", "text"}, env);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->collect_interval_ms, 2000);
  EXPECT_FALSE(r->debug);                // explicit false beats env true
  EXPECT_EQ(r->collectors, "/env.csv");  // env beats default
  EXPECT_EQ(r->address, ":9400");        // default
}

TEST(Options, EmptyEnvVarCountsAsUnset) {
  Result<Options> r = Parse(
      {}, {{"DCGM_EXPORTER_INTERVAL", ""}, {"DCGM_EXPORTER_KUBERNETES", ""}, {"NODE_NAME", ""}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->collect_interval_ms, 30000);
}

TEST(Options, RepeatedFlagLastWins) {
  Result<Options> r = Parse({"-c", "1000", "-c", "2000"});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->collect_interval_ms, 2000);
}

TEST(Options, ParseBoolValues) {
  for (const char* t : {"1", "t", "T", "TRUE", "true", "True"}) {
    EXPECT_EQ(ParseGoBool(t), true) << t;
    Result<Options> r = Parse({}, {{"DCGM_EXPORTER_DEBUG", t}});
    ASSERT_TRUE(r.ok()) << t;
    EXPECT_TRUE(r->debug) << t;
    Result<Options> f = Parse({(std::string("--debug=") + t).c_str()});
    ASSERT_TRUE(f.ok()) << t;
    EXPECT_TRUE(f->debug) << t;
  }
  for (const char* f : {"0", "f", "F", "FALSE", "false", "False"}) {
    EXPECT_EQ(ParseGoBool(f), false) << f;
    Result<Options> r = Parse({"--debug"}, {{"DCGM_EXPORTER_NO_HOSTNAME", f}});
    ASSERT_TRUE(r.ok()) << f;
    EXPECT_FALSE(r->no_hostname) << f;
  }
  for (const char* bad : {"yes", "no", "on", "tRuE", "2", " true", ""}) {
    EXPECT_EQ(ParseGoBool(bad), std::nullopt) << bad;
  }
  EXPECT_EQ(Error({}, {{"DCGM_EXPORTER_DEBUG", "yes"}}),
            "DCGM_EXPORTER_DEBUG: \"yes\" is not a boolean (expected one of 1, t, T, TRUE, true, "
            "True, 0, f, F, FALSE, false, False)");
  EXPECT_EQ(Error({"--no-hostname=on"}),
            "--no-hostname: \"on\" is not a boolean (expected one of 1, t, T, TRUE, true, True, 0, "
            "f, F, FALSE, false, False)");
}

TEST(Options, BooleanFlagDoesNotTakeTheNextArgument) {
  // As in Go: `-n false` is the flag -n followed by a stray argument.
  EXPECT_EQ(Error({"-n", "false"}),
            "unexpected argument \"false\": nvml-exporter takes flags only");
}

TEST(Options, BadInterval) {
  EXPECT_EQ(Error({"-c", "50"}),
            "--collect-interval: 50 is below the minimum of 100 (milliseconds)");
  EXPECT_EQ(Error({"-c", "99"}),
            "--collect-interval: 99 is below the minimum of 100 (milliseconds)");
  EXPECT_EQ(Error({"-c", "-5"}),
            "--collect-interval: -5 is below the minimum of 100 (milliseconds)");
  EXPECT_EQ(Error({"-c", "abc"}),
            "--collect-interval: \"abc\" is not a whole number of milliseconds");
  EXPECT_EQ(Error({"-c", "10s"}),
            "--collect-interval: \"10s\" is not a whole number of milliseconds");
  EXPECT_EQ(Error({"-c", "1.5"}),
            "--collect-interval: \"1.5\" is not a whole number of milliseconds");
  EXPECT_EQ(Error({"-c", ""}), "--collect-interval: \"\" is not a whole number of milliseconds");
  EXPECT_EQ(Error({}, {{"DCGM_EXPORTER_INTERVAL", "x"}}),
            "DCGM_EXPORTER_INTERVAL: \"x\" is not a whole number of milliseconds");
  EXPECT_THAT(Error({"-c", "99999999999"}), HasSubstr("is too large"));
  Result<Options> min = Parse({"-c", "100"});
  ASSERT_TRUE(min.ok());
  EXPECT_EQ(min->collect_interval_ms, 100);
}

TEST(Options, ClockEventsCountWindow) {
  Result<Options> def = Parse({});
  ASSERT_TRUE(def.ok());
  EXPECT_EQ(def->clock_events_count_window_ms, 300000);
  Result<Options> flag = Parse({"--clock-events-count-window-size", "60000"});
  ASSERT_TRUE(flag.ok()) << flag.status().message();
  EXPECT_EQ(flag->clock_events_count_window_ms, 60000);
  Result<Options> env = Parse({}, {{"DCGM_EXPORTER_CLOCK_EVENTS_COUNT_WINDOW_SIZE", "1000"}});
  ASSERT_TRUE(env.ok()) << env.status().message();
  EXPECT_EQ(env->clock_events_count_window_ms, 1000);
  EXPECT_EQ(Error({"--clock-events-count-window-size", "0"}),
            "--clock-events-count-window-size: 0 must be at least 1");
  EXPECT_EQ(Error({}, {{"DCGM_EXPORTER_CLOCK_EVENTS_COUNT_WINDOW_SIZE", "5m"}}),
            "DCGM_EXPORTER_CLOCK_EVENTS_COUNT_WINDOW_SIZE: \"5m\" is not a whole number of "
            "milliseconds");
}

TEST(Options, XidCountWindow) {
  Result<Options> def = Parse({});
  ASSERT_TRUE(def.ok());
  EXPECT_EQ(def->xid_count_window_ms, 300000);
  Result<Options> flag = Parse({"-x", "60000"});
  ASSERT_TRUE(flag.ok()) << flag.status().message();
  EXPECT_EQ(flag->xid_count_window_ms, 60000);
  Result<Options> env = Parse({}, {{"DCGM_EXPORTER_XID_COUNT_WINDOW_SIZE", "1000"}});
  ASSERT_TRUE(env.ok()) << env.status().message();
  EXPECT_EQ(env->xid_count_window_ms, 1000);
  EXPECT_EQ(Error({"-x", "0"}), "--xid-count-window-size: 0 must be at least 1");
  EXPECT_EQ(Error({"--xid-count-window-size", "5m"}),
            "--xid-count-window-size: \"5m\" is not a whole number of milliseconds");
}

TEST(Options, BadValues) {
  EXPECT_EQ(Error({"-d", "g:1-"}),
            "--devices: invalid device selector \"g:1-\": expected a number after '-'");
  EXPECT_EQ(Error({}, {{"DCGM_EXPORTER_DEVICES_STR", "f:0"}}),
            "DCGM_EXPORTER_DEVICES_STR: invalid device selector \"f:0\": no id list is allowed "
            "with f (flex); use g:<ids> to pick GPUs");
  EXPECT_EQ(Error({"--log-format", "xml"}),
            "--log-format: \"xml\" is not a log format (expected text or json)");
  EXPECT_EQ(Error({"--web-read-timeout", "10"}),
            "--web-read-timeout: invalid duration \"10\": missing unit (ns, us, ms, s, m or h, "
            "e.g. 10s)");
  EXPECT_EQ(Error({"--web-write-timeout", "0"}),
            "--web-write-timeout: \"0\" is below the minimum of 1ms");
  EXPECT_EQ(Error({"-f="}), "--collectors: must not be empty");
  EXPECT_EQ(Error({"-a"}), "flag --address needs a value");
  EXPECT_EQ(Error({"--bogus"}), "unknown flag --bogus (see nvml-exporter --help)");
  EXPECT_EQ(Error({"-z=1"}), "unknown flag -z (see nvml-exporter --help)");
  EXPECT_EQ(Error({"extra"}), "unexpected argument \"extra\": nvml-exporter takes flags only");
  EXPECT_EQ(Error({"--", "-f"}), "unexpected argument \"-f\": nvml-exporter takes flags only");
}

TEST(Options, ValueMayStartWithADash) {
  Result<Options> r = Parse({"-f", "-weird-name.csv"});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->collectors, "-weird-name.csv");
}

TEST(Options, FakeGpus) {
  Result<Options> plain = Parse({"--fake-gpus"});
  ASSERT_TRUE(plain.ok());
  EXPECT_TRUE(plain->fake_gpus);
  EXPECT_EQ(plain->fake_gpus_scenario, "");

  Result<Options> env = Parse({}, {{"DCGM_EXPORTER_USE_FAKE_GPUS", "true"}});
  ASSERT_TRUE(env.ok());
  EXPECT_TRUE(env->fake_gpus);

  Result<Options> scen = Parse({"--fake-gpus-scenario", "/s.yaml"});
  ASSERT_TRUE(scen.ok());
  EXPECT_TRUE(scen->fake_gpus);  // implied
  EXPECT_EQ(scen->fake_gpus_scenario, "/s.yaml");

  Result<Options> scen_env = Parse({}, {{"NVML_EXPORTER_FAKE_GPUS_SCENARIO", "/e.yaml"}});
  ASSERT_TRUE(scen_env.ok());
  EXPECT_TRUE(scen_env->fake_gpus);
  EXPECT_EQ(scen_env->fake_gpus_scenario, "/e.yaml");
}

TEST(Options, KubernetesAndHpcFlags) {
  Result<Options> d = Parse({});
  ASSERT_TRUE(d.ok());
  EXPECT_FALSE(d->kubernetes);
  EXPECT_EQ(d->kubernetes_gpu_id_type, KubernetesGpuIdType::kUid);
  EXPECT_EQ(d->pod_resources_socket, "/var/lib/kubelet/pod-resources/kubelet.sock");
  EXPECT_TRUE(d->nvidia_resource_names.empty());
  EXPECT_FALSE(d->kubernetes_virtual_gpus);
  EXPECT_EQ(d->hpc_job_mapping_dir, "");

  Result<Options> f =
      Parse({"-k", "--kubernetes-gpu-id-type", "device-name",
             "--pod-resources-kubelet-socket=/run/k.sock", "--nvidia-resource-names",
             "a.com/gpu, b.com/gpu", "--nvidia-resource-names", "c.com/gpu",
             "--kubernetes-virtual-gpus", "--hpc-job-mapping-dir", "/jobs"});
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_TRUE(f->kubernetes);
  EXPECT_EQ(f->kubernetes_gpu_id_type, KubernetesGpuIdType::kDeviceName);
  EXPECT_EQ(f->pod_resources_socket, "/run/k.sock");
  EXPECT_THAT(f->nvidia_resource_names, ElementsAre("a.com/gpu", "b.com/gpu", "c.com/gpu"));
  EXPECT_TRUE(f->kubernetes_virtual_gpus);
  EXPECT_EQ(f->hpc_job_mapping_dir, "/jobs");

  Result<Options> e = Parse({}, {{"DCGM_EXPORTER_KUBERNETES", "true"},
                                 {"DCGM_EXPORTER_KUBERNETES_GPU_ID_TYPE", "uid"},
                                 {"DCGM_POD_RESOURCES_KUBELET_SOCKET", "/e.sock"},
                                 {"NVIDIA_RESOURCE_NAMES", "x.com/gpu,,y.com/gpu"},
                                 {"KUBERNETES_VIRTUAL_GPUS", "1"},
                                 {"DCGM_HPC_JOB_MAPPING_DIR", "/e-jobs"}});
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_TRUE(e->kubernetes);
  EXPECT_EQ(e->pod_resources_socket, "/e.sock");
  EXPECT_THAT(e->nvidia_resource_names, ElementsAre("x.com/gpu", "y.com/gpu"));
  EXPECT_TRUE(e->kubernetes_virtual_gpus);
  EXPECT_EQ(e->hpc_job_mapping_dir, "/e-jobs");

  EXPECT_EQ(Error({"--kubernetes-gpu-id-type", "index"}),
            "--kubernetes-gpu-id-type: \"index\" is not a GPU id type (expected uid or "
            "device-name)");
  EXPECT_EQ(Error({"--pod-resources-kubelet-socket="}),
            "--pod-resources-kubelet-socket: must not be empty");
}

// dcgm-exporter's flag set: pkg/cmd/app.go at 4.5.3-4.8.2 (691c927) and at main (d5e5f51), the
// same 38 flags in both (`-v/--version` and `-h/--help` come from urfave). Long name, alias,
// env var, and a value that is valid there.
struct UpstreamFlag {
  const char* name;
  const char* alias;
  const char* env;
  const char* value;  // nullptr: a boolean, set to true
};
constexpr UpstreamFlag kUpstreamFlags[] = {
    {"collectors", "f", "DCGM_EXPORTER_COLLECTORS", "/x.csv"},
    {"address", "a", "DCGM_EXPORTER_LISTEN", ":9500"},
    {"collect-interval", "c", "DCGM_EXPORTER_INTERVAL", "1000"},
    {"kubernetes", "k", "DCGM_EXPORTER_KUBERNETES", nullptr},
    {"use-old-namespace", "o", "DCGM_EXPORTER_USE_OLD_NAMESPACE", nullptr},
    {"cpu-devices", "p", "DCGM_EXPORTER_CPU_DEVICES_STR", "g:0"},
    {"configmap-data", "m", "DCGM_EXPORTER_CONFIGMAP_DATA", "gpu-operator:metrics-config"},
    {"remote-hostengine-info", "r", "DCGM_REMOTE_HOSTENGINE_INFO", "nvidia-dcgm:5555"},
    {"kubernetes-enable-pod-labels", "", "DCGM_EXPORTER_KUBERNETES_ENABLE_POD_LABELS", nullptr},
    {"kubernetes-enable-pod-uid", "", "DCGM_EXPORTER_KUBERNETES_ENABLE_POD_UID", nullptr},
    {"kubernetes-gpu-id-type", "", "DCGM_EXPORTER_KUBERNETES_GPU_ID_TYPE", "device-name"},
    {"kubernetes-pod-label-allowlist-regex", "",
     "DCGM_EXPORTER_KUBERNETES_POD_LABEL_ALLOWLIST_REGEX", "^app$"},
    {"devices", "d", "DCGM_EXPORTER_DEVICES_STR", "g"},
    {"no-hostname", "n", "DCGM_EXPORTER_NO_HOSTNAME", nullptr},
    {"switch-devices", "s", "DCGM_EXPORTER_OTHER_DEVICES_STR", "i:0-3"},
    {"fake-gpus", "", "DCGM_EXPORTER_USE_FAKE_GPUS", nullptr},
    {"web-config-file", "", "DCGM_EXPORTER_WEB_CONFIG_FILE", "/etc/web.yml"},
    {"xid-count-window-size", "x", "DCGM_EXPORTER_XID_COUNT_WINDOW_SIZE", "60000"},
    {"replace-blanks-in-model-name", "rbmn", "DCGM_EXPORTER_REPLACE_BLANKS_IN_MODEL_NAME", nullptr},
    {"debug", "", "DCGM_EXPORTER_DEBUG", nullptr},
    {"clock-events-count-window-size", "", "DCGM_EXPORTER_CLOCK_EVENTS_COUNT_WINDOW_SIZE", "60000"},
    {"enable-dcgm-log", "", "DCGM_EXPORTER_ENABLE_DCGM_LOG", nullptr},
    {"dcgm-log-level", "", "DCGM_EXPORTER_DCGM_LOG_LEVEL", "WARN"},
    {"log-format", "", "DCGM_EXPORTER_LOG_FORMAT", "json"},
    {"pod-resources-kubelet-socket", "", "DCGM_POD_RESOURCES_KUBELET_SOCKET", "/k.sock"},
    {"hpc-job-mapping-dir", "", "DCGM_HPC_JOB_MAPPING_DIR", "/jobs"},
    {"nvidia-resource-names", "", "NVIDIA_RESOURCE_NAMES", "nvidia.com/a100"},
    {"kubernetes-virtual-gpus", "", "KUBERNETES_VIRTUAL_GPUS", nullptr},
    {"dump-enabled", "", "DCGM_EXPORTER_DUMP_ENABLED", nullptr},
    {"dump-directory", "", "DCGM_EXPORTER_DUMP_DIRECTORY", "/tmp/d"},
    {"dump-retention", "", "DCGM_EXPORTER_DUMP_RETENTION", "12"},
    {"dump-compression", "", "DCGM_EXPORTER_DUMP_COMPRESSION", nullptr},
    {"kubernetes-enable-dra", "", "KUBERNETES_ENABLE_DRA", nullptr},
    {"disable-startup-validate", "", "DISABLE_STARTUP_VALIDATE", nullptr},
    {"enable-gpu-bind-unbind-watch", "", "DCGM_EXPORTER_ENABLE_GPU_BIND_UNBIND_WATCH", nullptr},
    {"gpu-bind-unbind-poll-interval", "", "DCGM_EXPORTER_GPU_BIND_UNBIND_POLL_INTERVAL", "5s"},
    {"enable-pprof", "", "DCGM_EXPORTER_ENABLE_PPROF", nullptr},
    {"web-systemd-socket", "", "DCGM_EXPORTER_SYSTEMD_SOCKET", nullptr},
};

// The flags that have no effect here: each one set gives exactly one warning.
const std::set<std::string, std::less<>> kIgnored = {"cpu-devices",      "remote-hostengine-info",
                                                     "switch-devices",   "enable-dcgm-log",
                                                     "dcgm-log-level",   "dump-enabled",
                                                     "dump-directory",   "dump-retention",
                                                     "dump-compression", "disable-startup-validate",
                                                     "enable-pprof"};

TEST(Options, EveryUpstreamFlagIsAcceptedByNameAliasAndEnv) {
  EXPECT_EQ(std::size(kUpstreamFlags), 38u);
  for (const UpstreamFlag& f : kUpstreamFlags) {
    const std::string value = f.value ? f.value : "true";
    std::vector<std::vector<std::string>> lines = {{"--" + std::string(f.name) + "=" + value}};
    if (*f.alias) lines.push_back({"-" + std::string(f.alias) + "=" + value});
    if (f.value) lines.push_back({"-" + std::string(f.name), value});
    for (const std::vector<std::string>& line : lines) {
      std::vector<std::string> storage = {"nvml-exporter"};
      storage.insert(storage.end(), line.begin(), line.end());
      std::vector<char*> argv;
      for (std::string& s : storage) argv.push_back(s.data());
      Result<Options> r = ParseOptions(static_cast<int>(argv.size()), argv.data(),
                                       [](std::string_view) { return std::nullopt; });
      ASSERT_TRUE(r.ok()) << line[0] << ": " << r.status().message();
      const std::vector<std::string> want =
          kIgnored.count(f.name) ? std::vector<std::string>{f.name} : std::vector<std::string>{};
      EXPECT_EQ(WarnedOptions(*r), want) << line[0];
      for (const Options::StartupWarning& w : r->startup_warnings) {
        EXPECT_THAT(w.message, HasSubstr("--" + std::string(f.name))) << line[0];
        EXPECT_THAT(w.message, HasSubstr(" ignored: ")) << line[0];
      }
    }
    if (value.empty()) continue;  // an empty env var counts as unset
    Result<Options> env = Parse({}, {{f.env, value}});
    ASSERT_TRUE(env.ok()) << f.env << ": " << env.status().message();
    const std::vector<std::string> want =
        kIgnored.count(f.name) ? std::vector<std::string>{f.name} : std::vector<std::string>{};
    EXPECT_EQ(WarnedOptions(*env), want) << f.env;
    for (const Options::StartupWarning& w : env->startup_warnings) {
      EXPECT_THAT(w.message, HasSubstr("(" + std::string(f.env) + "=" + value + ") ignored: "));
    }
  }
}

TEST(Options, HelpListsEveryUpstreamFlag) {
  const std::string help = Parse({"-h"})->help_text;
  for (const UpstreamFlag& f : kUpstreamFlags) {
    std::string names = "--" + std::string(f.name);
    if (*f.alias) names = "-" + std::string(f.alias) + ", " + names;
    EXPECT_THAT(help, HasSubstr("  " + names)) << f.name;
    EXPECT_THAT(help, HasSubstr("[$" + std::string(f.env) + "]")) << f.name;
  }
}

TEST(Options, FlagsOfNoUpstreamReleaseAreUnknown) {
  // Every flag that once was ours alone is upstream's now (4.8.3: --config-file and the container
  // labels; 4.8.4: the scrape, probe, self-metrics and watch flags). A name of no release stays
  // unknown, and an env var no flag names is not read.
  for (const char* name : {"max-scrapes", "enable-pprof-metrics"}) {
    const std::string flag = "--" + std::string(name);
    EXPECT_EQ(Error({flag.c_str(), "1"}), "unknown flag " + flag + " (see nvml-exporter --help)");
  }
  Result<Options> r = Parse({}, {{"DCGM_EXPORTER_MAX_SCRAPES", "4"}});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->startup_warnings.empty());
}

TEST(Options, IgnoredOptionWarnings) {
  // The GPU Operator with its standalone DCGM (ClusterPolicy dcgm.enabled=true).
  Result<Options> r = Parse({}, {{"DCGM_REMOTE_HOSTENGINE_INFO", "nvidia-dcgm:5555"}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->startup_warnings.size(), 1u);
  EXPECT_EQ(r->startup_warnings[0].option, "remote-hostengine-info");
  EXPECT_EQ(r->startup_warnings[0].message,
            "-r/--remote-hostengine-info (DCGM_REMOTE_HOSTENGINE_INFO=nvidia-dcgm:5555) ignored: "
            "nvml-exporter reads NVML in-process; there is no DCGM hostengine to connect to");
  // -r counts when set at all, even to its default (dcgm-exporter's IsSet).
  Result<Options> def = Parse({"-r", "localhost:5555"});
  ASSERT_TRUE(def.ok());
  EXPECT_THAT(WarnedOptions(*def), ElementsAre("remote-hostengine-info"));
  EXPECT_THAT(def->startup_warnings[0].message,
              StartsWith("-r/--remote-hostengine-info (--remote-hostengine-info=localhost:5555)"));
  // The Helm chart with debugDump.enabled: four options, four warnings, in flag order.
  Result<Options> dump = Parse({"-f", "/etc/dcgm-exporter/default-counters.csv", "--dump-enabled",
                                "--dump-directory=/tmp/dcgm-exporter-debug", "--dump-retention=24",
                                "--dump-compression"});
  ASSERT_TRUE(dump.ok()) << dump.status().message();
  EXPECT_THAT(WarnedOptions(*dump),
              ElementsAre("dump-enabled", "dump-directory", "dump-retention", "dump-compression"));
  EXPECT_EQ(dump->startup_warnings[0].message,
            "--dump-enabled ignored: nvml-exporter has no DCGM debug dumps; "
            "--debug logs what it reads and --once prints one collection");
  // A boolean set to false asks for nothing.
  Result<Options> off = Parse({"--enable-dcgm-log=false", "--enable-pprof=0"},
                              {{"DISABLE_STARTUP_VALIDATE", "false"},
                               {"KUBERNETES_ENABLE_DRA", "F"},
                               {"DCGM_EXPORTER_CONFIGMAP_DATA", "none"},
                               {"DCGM_EXPORTER_WEB_CONFIG_FILE", ""}});
  ASSERT_TRUE(off.ok()) << off.status().message();
  EXPECT_TRUE(off->startup_warnings.empty());
  EXPECT_FALSE(off->kubernetes_enable_dra);
  EXPECT_EQ(off->configmap_namespace, "");
}

TEST(Options, CarriedCompatOptions) {
  Result<Options> d = Parse({});
  ASSERT_TRUE(d.ok());
  EXPECT_FALSE(d->kubernetes_enable_dra);
  EXPECT_FALSE(d->enable_gpu_bind_unbind_watch);
  EXPECT_FALSE(d->web_systemd_socket);
  EXPECT_EQ(d->configmap_name, "");
  EXPECT_TRUE(d->startup_warnings.empty());

  Result<Options> r = Parse(
      {"--web-systemd-socket", "-m", "gpu-operator:metrics-config"},
      {{"KUBERNETES_ENABLE_DRA", "true"}, {"DCGM_EXPORTER_ENABLE_GPU_BIND_UNBIND_WATCH", "1"}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->kubernetes_enable_dra);
  EXPECT_TRUE(r->enable_gpu_bind_unbind_watch);
  EXPECT_TRUE(r->web_systemd_socket);
  EXPECT_EQ(r->configmap_namespace, "gpu-operator");
  EXPECT_EQ(r->configmap_name, "metrics-config");
  // DRA and the bind/unbind watch are honoured: no warning for them.
  EXPECT_TRUE(r->startup_warnings.empty()) << r->startup_warnings[0].message;
  EXPECT_EQ(r->gpu_bind_unbind_poll_interval, std::chrono::seconds(1));
  Result<Options> p = Parse({"--gpu-bind-unbind-poll-interval", "250ms"});
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->gpu_bind_unbind_poll_interval, std::chrono::milliseconds(250));
  EXPECT_TRUE(p->startup_warnings.empty());
}

TEST(Options, CompatValuesAreCheckedAsUpstreamChecksThem) {
  EXPECT_EQ(Error({"--dcgm-log-level", "LOUD"}),
            "--dcgm-log-level: \"LOUD\" is not a DCGM log level (expected NONE, FATAL, ERROR, "
            "WARN, INFO, DEBUG or VERB)");
  EXPECT_EQ(Error({"-s", "x"}),
            "--switch-devices: invalid device selector \"x\": expected f, g, i, g:<ids> or "
            "i:<ids> (e.g. g:0,2-3)");
  EXPECT_THAT(Error({}, {{"DCGM_EXPORTER_CPU_DEVICES_STR", "f:1"}}),
              StartsWith("DCGM_EXPORTER_CPU_DEVICES_STR: invalid device selector \"f:1\""));
  EXPECT_EQ(Error({"--dump-retention", "1d"}),
            "--dump-retention: \"1d\" is not a whole number of hours");
  EXPECT_EQ(Error({"--dump-enabled=yes"}),
            "--dump-enabled: \"yes\" is not a boolean (expected one of 1, t, T, TRUE, true, True, "
            "0, f, F, FALSE, false, False)");
  for (const char* bad : {"metrics-config", "ns:", ":name", "a:b:c"}) {
    EXPECT_EQ(Error({"-m", bad}), std::string("--configmap-data: \"") + bad +
                                      "\" is not a ConfigMap (expected NAMESPACE:NAME, or none)");
  }
  // dcgm-exporter reads a bad poll interval as 1s, with a warning: it starts.
  Result<Options> poll = Parse({"--gpu-bind-unbind-poll-interval", "often"});
  ASSERT_TRUE(poll.ok());
  EXPECT_THAT(WarnedOptions(*poll), ElementsAre("gpu-bind-unbind-poll-interval"));
  EXPECT_EQ(poll->gpu_bind_unbind_poll_interval, std::chrono::seconds(1));
  EXPECT_THAT(poll->startup_warnings[0].message, HasSubstr("\"often\""));
}

TEST(Options, WebFlags) {
  // The Helm chart's TLS and basic-auth values set the env var; the file is checked at start.
  Result<Options> env =
      Parse({}, {{"DCGM_EXPORTER_WEB_CONFIG_FILE", "/etc/dcgm-exporter/web-config.yaml"}});
  ASSERT_TRUE(env.ok()) << env.status().message();
  EXPECT_EQ(env->web_config_file, "/etc/dcgm-exporter/web-config.yaml");
  EXPECT_EQ(env->web_max_connections, 0);
  EXPECT_FALSE(env->web_health_no_auth);
  Result<Options> flags =
      Parse({"--web-config-file", "/w.yml", "--web-max-connections", "64", "--web-health-no-auth"},
            {{"NVML_EXPORTER_WEB_MAX_CONNECTIONS", "8"}});
  ASSERT_TRUE(flags.ok()) << flags.status().message();
  EXPECT_EQ(flags->web_config_file, "/w.yml");
  EXPECT_EQ(flags->web_max_connections, 64);  // the flag beats the env var
  EXPECT_TRUE(flags->web_health_no_auth);
  Result<Options> from_env = Parse({}, {{"NVML_EXPORTER_WEB_MAX_CONNECTIONS", "8"},
                                        {"NVML_EXPORTER_WEB_HEALTH_NO_AUTH", "true"}});
  ASSERT_TRUE(from_env.ok());
  EXPECT_EQ(from_env->web_max_connections, 8);
  EXPECT_TRUE(from_env->web_health_no_auth);
  EXPECT_THAT(Error({"--web-max-connections", "-1"}),
              StartsWith("--web-max-connections: \"-1\" is not a connection count"));
  EXPECT_THAT(Error({}, {{"NVML_EXPORTER_WEB_MAX_CONNECTIONS", "x"}}),
              StartsWith("NVML_EXPORTER_WEB_MAX_CONNECTIONS: \"x\" is not a connection count"));
}

TEST(Options, ProcessAndPodAttributionFlags) {
  Result<Options> d = Parse({});
  ASSERT_TRUE(d.ok());
  EXPECT_FALSE(d->kubernetes_process_metrics);
  EXPECT_EQ(d->host_proc_root, "/proc");
  EXPECT_TRUE(d->kubernetes_pod_label_allowlist_regex.empty());
  EXPECT_EQ(d->kubernetes_api_server, "");

  Result<Options> r = Parse({"--kubernetes-process-metrics", "--host-proc-root", "/host/proc",
                             "--kubernetes-enable-pod-labels", "--kubernetes-enable-pod-uid=true",
                             "--kubernetes-pod-label-allowlist-regex", "^app,team",
                             "--kubernetes-pod-label-allowlist-regex=tier",
                             "--kubernetes-api-server", "https://127.0.0.1:6443",
                             "--kubernetes-token-file", "/t", "--kubernetes-ca-file", "/ca"});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->kubernetes_process_metrics);
  EXPECT_EQ(r->host_proc_root, "/host/proc");
  EXPECT_TRUE(r->kubernetes_enable_pod_labels);
  EXPECT_TRUE(r->kubernetes_enable_pod_uid);
  EXPECT_EQ(r->kubernetes_pod_label_allowlist_regex,
            (std::vector<std::string>{"^app", "team", "tier"}));
  EXPECT_EQ(r->kubernetes_api_server, "https://127.0.0.1:6443");
  EXPECT_EQ(r->kubernetes_token_file, "/t");
  EXPECT_EQ(r->kubernetes_ca_file, "/ca");

  Result<Options> env = Parse({}, {{"NVML_EXPORTER_KUBERNETES_PROCESS_METRICS", "1"},
                                   {"NVML_EXPORTER_HOST_PROC_ROOT", "/hp"},
                                   {"DCGM_EXPORTER_KUBERNETES_ENABLE_POD_LABELS", "true"},
                                   {"DCGM_EXPORTER_KUBERNETES_POD_LABEL_ALLOWLIST_REGEX", "a,b"}});
  ASSERT_TRUE(env.ok()) << env.status().message();
  EXPECT_TRUE(env->kubernetes_process_metrics);
  EXPECT_EQ(env->host_proc_root, "/hp");
  EXPECT_TRUE(env->kubernetes_enable_pod_labels);
  EXPECT_EQ(env->kubernetes_pod_label_allowlist_regex, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(Error({"--host-proc-root="}), "--host-proc-root: must not be empty");
}

TEST(Options, LiveHistoryMinutes) {
  EXPECT_EQ(Parse({})->live_history_minutes, 15);
  EXPECT_EQ(Parse({"--live-history-minutes", "60"})->live_history_minutes, 60);
  EXPECT_EQ(Parse({"--live-history-minutes=0"})->live_history_minutes, 0);
  EXPECT_EQ(Parse({"--live-history-minutes", "5"}, {{"NVML_EXPORTER_LIVE_HISTORY_MINUTES", "30"}})
                ->live_history_minutes,
            5);  // the flag beats the env var
  EXPECT_EQ(Parse({}, {{"NVML_EXPORTER_LIVE_HISTORY_MINUTES", "30"}})->live_history_minutes, 30);
  EXPECT_THAT(Error({"--live-history-minutes", "1441"}),
              StartsWith("--live-history-minutes: \"1441\" is not a number of minutes from 0"));
  EXPECT_THAT(Error({}, {{"NVML_EXPORTER_LIVE_HISTORY_MINUTES", "x"}}),
              StartsWith("NVML_EXPORTER_LIVE_HISTORY_MINUTES: \"x\" is not a number of minutes"));
}

TEST(Options, Help) {
  for (const char* h : {"-h", "--help", "-help"}) {
    Result<Options> r = Parse({h});
    ASSERT_TRUE(r.ok()) << h;
    EXPECT_TRUE(r->help_or_version_requested);
    EXPECT_EQ(r->exit_code_hint, ExitCode::kOk);
    EXPECT_THAT(r->help_text, HasSubstr("Usage: nvml-exporter"));
  }
  const std::string help = Parse({"-h"})->help_text;
  EXPECT_THAT(help, HasSubstr("-f, --collectors FILE  [$DCGM_EXPORTER_COLLECTORS]"));
  EXPECT_THAT(help, HasSubstr("(default \"/etc/dcgm-exporter/default-counters.csv\")"));
  EXPECT_THAT(help, HasSubstr("-rbmn, --replace-blanks-in-model-name  "
                              "[$DCGM_EXPORTER_REPLACE_BLANKS_IN_MODEL_NAME]"));
  EXPECT_THAT(help, HasSubstr("--fake-gpus-scenario FILE  [$NVML_EXPORTER_FAKE_GPUS_SCENARIO]"));
  EXPECT_THAT(help, HasSubstr("-k, --kubernetes  [$DCGM_EXPORTER_KUBERNETES]"));
  EXPECT_THAT(help, HasSubstr("NODE_NAME"));
  // Help wins over errors elsewhere on the line.
  Result<Options> with_error = Parse({"--kubernetes", "--bogus", "-h"});
  ASSERT_TRUE(with_error.ok());
  EXPECT_TRUE(with_error->help_or_version_requested);
}

TEST(Options, Version) {
  for (const char* v : {"-v", "--version"}) {
    Result<Options> r = Parse({v});
    ASSERT_TRUE(r.ok()) << v;
    EXPECT_TRUE(r->help_or_version_requested);
    EXPECT_THAT(r->help_text, StartsWith("nvml-exporter version "));
  }
}

TEST(GoDuration, Parses) {
  using std::chrono::nanoseconds;
  EXPECT_EQ(*ParseGoDuration("0"), nanoseconds(0));
  EXPECT_EQ(*ParseGoDuration("10s"), std::chrono::seconds(10));
  EXPECT_EQ(*ParseGoDuration("500ms"), std::chrono::milliseconds(500));
  EXPECT_EQ(*ParseGoDuration("1m"), std::chrono::minutes(1));
  EXPECT_EQ(*ParseGoDuration("1h2m3s"), std::chrono::seconds(3723));
  EXPECT_EQ(*ParseGoDuration("1.5s"), std::chrono::milliseconds(1500));
  EXPECT_EQ(*ParseGoDuration(".5s"), std::chrono::milliseconds(500));
  EXPECT_EQ(*ParseGoDuration("2us"), nanoseconds(2000));
  EXPECT_EQ(*ParseGoDuration("2\xC2\xB5s"), nanoseconds(2000));
  EXPECT_EQ(*ParseGoDuration("7ns"), nanoseconds(7));
  EXPECT_EQ(*ParseGoDuration("-1s"), std::chrono::seconds(-1));
  EXPECT_EQ(*ParseGoDuration("+1s"), std::chrono::seconds(1));
  for (const char* bad : {"", "10", "s", "1x", "1.s.", "--1s", "1 s", "1e3s", "9999999999h"}) {
    EXPECT_FALSE(ParseGoDuration(bad).ok()) << bad;
  }
}

TEST(Options, ProfilingSourceFlags) {
  Result<Options> d = Parse({});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->profiling_source, "auto");
  EXPECT_EQ(d->cupti_library, "libcupti.so.13");
  EXPECT_EQ(d->pm_sampling_interval_ms, 500);
  EXPECT_EQ(d->pm_sampling_dwell_ms, 10000);
  EXPECT_EQ(d->pm_sampling_steady_hold_ms, 60000);
  EXPECT_FALSE(d->profiling_pause_endpoint);
  Result<Options> r =
      Parse({"--profiling-source", "pm-sampling", "--cupti-library", "/opt/cupti/libcupti.so.13",
             "--pm-sampling-interval", "250", "--pm-sampling-dwell", "0",
             "--pm-sampling-steady-hold", "0", "--profiling-pause-endpoint"});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->profiling_source, "pm-sampling");
  EXPECT_EQ(r->cupti_library, "/opt/cupti/libcupti.so.13");
  EXPECT_EQ(r->pm_sampling_interval_ms, 250);
  EXPECT_EQ(r->pm_sampling_dwell_ms, 0);
  EXPECT_EQ(r->pm_sampling_steady_hold_ms, 0);
  EXPECT_TRUE(r->profiling_pause_endpoint);
  Result<Options> e = Parse({}, {{"NVML_EXPORTER_PROFILING_SOURCE", "none"},
                                 {"NVML_EXPORTER_PM_SAMPLING_INTERVAL", "20"},
                                 {"NVML_EXPORTER_PM_SAMPLING_DWELL", "30000"},
                                 {"NVML_EXPORTER_PM_SAMPLING_STEADY_HOLD", "3600000"},
                                 {"NVML_EXPORTER_PROFILING_PAUSE_ENDPOINT", "true"}});
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_EQ(e->profiling_source, "none");
  EXPECT_EQ(e->pm_sampling_interval_ms, 20);
  EXPECT_EQ(e->pm_sampling_dwell_ms, 30000);
  EXPECT_EQ(e->pm_sampling_steady_hold_ms, 3600000);
  EXPECT_TRUE(e->profiling_pause_endpoint);
  EXPECT_NE(Error({"--profiling-source", "dcgm"}).find("--profiling-source"), std::string::npos);
  EXPECT_NE(Error({"--pm-sampling-interval", "10"}).find("--pm-sampling-interval"),
            std::string::npos);
  EXPECT_NE(Error({"--pm-sampling-interval", "2000"}).find("20 to 1000"), std::string::npos);
  EXPECT_NE(Error({"--pm-sampling-dwell", "-1"}).find("--pm-sampling-dwell"), std::string::npos);
  EXPECT_NE(Error({"--pm-sampling-dwell", "1h"}).find("0 to 600000"), std::string::npos);
  EXPECT_NE(Error({"--pm-sampling-steady-hold", "-1"}).find("--pm-sampling-steady-hold"),
            std::string::npos);
  EXPECT_NE(Error({"--pm-sampling-steady-hold", "3600001"}).find("0 to 3600000"),
            std::string::npos);
  EXPECT_NE(Error({"--cupti-library", ""}).find("--cupti-library"), std::string::npos);
  EXPECT_TRUE(d->pm_sampling_pin.empty());
  Result<Options> pin = Parse({"--pm-sampling-pin", "DCGM_FI_PROF_GR_ENGINE_ACTIVE,1005",
                               "--pm-sampling-pin", "DCGM_FI_PROF_SM_ACTIVE"});
  ASSERT_TRUE(pin.ok()) << pin.status().message();
  EXPECT_EQ(pin->pm_sampling_pin, (std::vector<std::string>{"DCGM_FI_PROF_GR_ENGINE_ACTIVE", "1005",
                                                            "DCGM_FI_PROF_SM_ACTIVE"}));
  Result<Options> pin_env =
      Parse({}, {{"NVML_EXPORTER_PM_SAMPLING_PIN", "DCGM_FI_PROF_DRAM_ACTIVE"}});
  ASSERT_TRUE(pin_env.ok()) << pin_env.status().message();
  EXPECT_EQ(pin_env->pm_sampling_pin, (std::vector<std::string>{"DCGM_FI_PROF_DRAM_ACTIVE"}));
}

// A value of any length, from a flag or an environment variable, is quoted in an error or a
// start-up warning by its first bytes only (util::QuoteForMessage), never whole: every flag of
// every group gets a 64 KiB value, and -c and DCGM_EXPORTER_INTERVAL a 50 MB one.
TEST(OptionsTest, LongValuesAreQuotedByAPrefixOnly) {
  const std::string big(64u << 10, '7');
  auto check = [](const Result<Options>& r, const std::string& what) {
    if (!r.ok()) {
      EXPECT_LT(r.status().message().size(), 500u)
          << what << ": " << r.status().message().substr(0, 300);
      return;
    }
    for (const Options::StartupWarning& w : r->startup_warnings) {
      EXPECT_LT(w.message.size(), 500u) << what << ": " << w.message.substr(0, 300);
    }
  };
  for (const flags::FlagGroup& g :
       {flags::CoreFlags(), flags::SelectionFlags(), flags::RuntimeFlags(), flags::WebFlags(),
        flags::ScrapeFlags(), flags::EmfFlags(), flags::KubernetesFlags(),
        flags::CounterWindowFlags(), flags::SeriesFlags(), flags::CompatFlags()}) {
    for (const flags::FlagSpec& f : g.flags) {
      const std::string flag = "--" + std::string(f.name) + "=" + big;
      check(Parse({flag.c_str()}), flag.substr(0, 40));
      if (!f.env.empty()) {
        check(Parse({}, Env{{std::string(f.env), big}}), std::string(f.env));
      }
    }
  }
  const std::string huge(50u << 20, 'x');
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THAT(Error({"-c", huge.c_str()}), HasSubstr("\"" + std::string(64, 'x') + "\"..."));
  const std::string env_error = Error({}, Env{{"DCGM_EXPORTER_INTERVAL", huge}});
  EXPECT_LT(env_error.size(), 500u);
  EXPECT_THAT(env_error, HasSubstr("(52428800 bytes)"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

}  // namespace
}  // namespace nvmlx::config

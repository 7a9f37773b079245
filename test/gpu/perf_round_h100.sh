#!/usr/bin/env bash
# Issue 40's before/after on a GPU host, in one run (docs/benchmarks.md "Performance round";
# docs/validation/h100-perf-round-2026-12-06.md). Two daemon builds, BEFORE (default
# bundle/nvml-exporter-before) and AFTER (bundle/nvml-exporter), each collecting every second:
#   1. PM sampling with the shipped plan on the default collectors file (the seed's five: GR
#      engine, DRAM, PCIe TX/RX shared, tensor alone, alternated every --pm-sampling-dwell, 10 s):
#      CPU per collection over COST_S seconds, idle and under gpu-pulse's tensor pulses (4 s on,
#      4 s off), before and after; and AFTER with the shared fields pinned (one configuration, the
#      floor the alternation is measured against); RSS at the end of each;
#   2. the default file through GPM: CPU per collection and per thread (bench/thread_cpu.py),
#      before and after, beside the NVML floor of the same file (bench/nvml_floor);
#   3. RSS above nvmlInit's own (bench/nvml_init_rss), before and after.
# Writes results.txt and the daemons' logs into $OUT. Run from the repo root after `make bundle`
# (and copying the before build to bundle/nvml-exporter-before); nothing changes GPU settings.
set -uo pipefail
B="${BUNDLE:-bundle}"
OUT="${OUT:-perf-round-out}"
COST_S="${COST_S:-40}"
BEFORE="${BEFORE:-$B/nvml-exporter-before}"
AFTER="$B/nvml-exporter"
mkdir -p "$OUT"
R="$OUT/results.txt"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >"$R"
CUPTI="${CUPTI:-$(find / \( -path /proc -o -path /sys \) -prune -o -name 'libcupti.so.13' -print 2>/dev/null | sort | head -1)}"
CSV="$B/etc/default-counters.csv"
PIN=DCGM_FI_PROF_GR_ENGINE_ACTIVE,DCGM_FI_PROF_DRAM_ACTIVE,DCGM_FI_PROF_PCIE_TX_BYTES,DCGM_FI_PROF_PCIE_RX_BYTES
hz=$(getconf CLK_TCK)
cpu_of() { awk '{print $14 + $15}' "/proc/$1/stat"; }
start_daemon() {  # $1: binary, $2: port, $3: log, then flags; sets DAEMON_PID
  # DAEMON_FLAGS: e.g. --fake-gpus to try the script here on the simulated GPUs.
  "$1" -f "$CSV" -c 1000 -a "127.0.0.1:$2" ${DAEMON_FLAGS:-} "${@:4}" >/dev/null 2>"$3" &
  DAEMON_PID=$!
  for _ in $(seq 100); do curl -fsS -o /dev/null "http://127.0.0.1:$2/ready" 2>/dev/null && break; sleep 0.2; done
}
stop_daemon() {  # waits until it is gone: its CUPTI session must be free for the next one
  kill -TERM "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null
}
pm_run() {  # $1: tag, $2: binary, $3: port, $4: load (idle|pulse), then flags
  local tag=$1 bin=$2 port=$3 load=$4; shift 4
  start_daemon "$bin" "$port" "$OUT/pm-$tag-$load.log" --profiling-source=pm-sampling \
    --cupti-library "$CUPTI" "$@"
  local pid=$DAEMON_PID
  sleep 12  # past CUPTI's load and the first cycle of the alternation
  local pulse=""
  if [ "$load" = pulse ]; then
    "$B/gpu-pulse" --on 4s --off 4s --duration "${COST_S}s" --gpus 0 --mode tensor >>"$OUT/pulse.txt" 2>&1 &
    pulse=$!
  fi
  local c0 t0 c1 t1; c0=$(cpu_of "$pid"); t0=$(date +%s.%N)
  sleep "$COST_S"
  c1=$(cpu_of "$pid"); t1=$(date +%s.%N)
  [ -n "$pulse" ] && wait "$pulse"
  local page; page=$(curl -fsS "http://127.0.0.1:$port/metrics")
  local rss; rss=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
  python3 - "$tag" "$load" "$c0" "$c1" "$t0" "$t1" "$hz" "$rss" >>"$R" <<'PY'
import sys
tag, load, c0, c1, t0, t1, hz, rss = sys.argv[1:]
secs = float(t1) - float(t0)
cpu = (int(c1) - int(c0)) / int(hz)
print(f"pm {tag:12s} {load:5s}: cpu_ms_per_collection={1000 * cpu / secs:.2f} "
      f"vmrss_mib={int(rss) / 1024:.1f}")
PY
  echo "$page" | grep -E '^nvml_exporter_pm_sampling_(configurations|losses_total)|^DCGM_FI_PROF_PIPE_TENSOR' |
    sed "s/^/    $tag $load /" >>"$R"
  stop_daemon
}
for load in idle pulse; do
  pm_run before "$BEFORE" 9431 "$load"
  pm_run after "$AFTER" 9432 "$load"
  pm_run pinned "$AFTER" 9433 "$load" --pm-sampling-pin "$PIN"
done

"$B/bench/nvml_floor" -f "$CSV" -n 40 -c 1000 >"$OUT/floor.json" 2>&1
echo "floor: $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("cpu_ms_per_sweep=%.2f rss_after_init_kib=%d" % (d["cpu_ms_per_sweep"], d["rss_after_init_kib"]))' "$OUT/floor.json")" >>"$R"
"$B/nvml_init_rss" libnvidia-ml.so.1 >"$OUT/nvml_init_rss.txt" 2>&1
echo "nvml_init_rss: $(tr '\n' ' ' <"$OUT/nvml_init_rss.txt")" >>"$R"
gpm_run() {  # $1: tag, $2: binary, $3: port
  start_daemon "$2" "$3" "$OUT/gpm-$1.log"
  local pid=$DAEMON_PID
  sleep 5
  python3 bench/thread_cpu.py "$pid" "$COST_S" --collections "$COST_S" | sed "s/^/gpm $1 /" >>"$R"
  for _ in 1 2 3; do curl -fsS -o /dev/null "http://127.0.0.1:$3/metrics"; done
  echo "gpm $1 $(grep -E 'VmRSS|RssAnon|RssFile' "/proc/$pid/status" | tr -s ' \t' ' ' | tr '\n' ' ')" >>"$R"
  stop_daemon
}
gpm_run before "$BEFORE" 9441
gpm_run after "$AFTER" 9442
gpm_run before2 "$BEFORE" 9443
gpm_run after2 "$AFTER" 9444
cat "$R"

#!/usr/bin/env bash
# Issue 40's before/after on a GPU host, one run, everything to stdout (docs/benchmarks.md
# "Performance round", docs/validation/h100-perf-round-2026-12-06.md §5). BEFORE is the build
# of the round's start (bundle/nvml-exporter-before), AFTER this tree's (bundle/nvml-exporter).
#   A. RSS, GPM path, default file: nvml_init_rss (the baseline), BEFORE and AFTER side by side,
#      read 40 s after start (AFTER releases start-up's read-only pages at 30 s) and 3 scrapes;
#   B. RSS, PM sampling, idle GPU: BEFORE, then AFTER, each 40 s;
#   C. CPU per collection under tensor pulses (gpu-pulse 4 s on, 4 s off, started first), PM
#      sampling: BEFORE, AFTER (the steady hold, default 60 s), and AFTER with the shared fields
#      pinned (one configuration: the floor), utime+stime over the window;
#   D. the default file: nvml_floor, nvml_floor --split, BEFORE and AFTER at the same time, all
#      four on one CPU (taskset), 40 s, twice on two CPUs.
# Run from the repo root after `make bundle`; nothing here changes GPU settings.
set -uo pipefail
B="${BUNDLE:-bundle}"
BEFORE="$B/nvml-exporter-before"
AFTER="$B/nvml-exporter"
CSV="$B/etc/default-counters.csv"
HOLD_S="${HOLD_S:-150}"
SECTIONS="${SECTIONS:-ABCD}"  # which of the sections to run (two calls fit the device's 10 min)
run() { [[ "$SECTIONS" == *"$1"* ]]; }
CUPTI="${CUPTI:-$(find / \( -path /proc -o -path /sys \) -prune -o -name 'libcupti.so.13' -print 2>/dev/null | sort | head -1)}"
PIN=DCGM_FI_PROF_GR_ENGINE_ACTIVE,DCGM_FI_PROF_DRAM_ACTIVE,DCGM_FI_PROF_PCIE_TX_BYTES,DCGM_FI_PROF_PCIE_RX_BYTES
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
hz=$(getconf CLK_TCK)
cpu_of() { awk '{print $14 + $15}' "/proc/$1/stat"; }
status() { grep -E 'VmRSS|RssAnon|RssFile' "/proc/$1/status" | tr -s ' \t' ' ' | tr '\n' ' '; }
wait_ready() { for _ in $(seq 150); do curl -fsS -o /dev/null "http://127.0.0.1:$1/ready" 2>/dev/null && return; sleep 0.2; done; }
scrape3() { for _ in 1 2 3; do curl -fsS -o /dev/null "http://127.0.0.1:$1/metrics"; sleep 0.3; done; }

if run A; then
echo "== A. RSS, GPM path"
"$B/nvml_init_rss" libnvidia-ml.so.1 | tr '\n' ' ' | sed 's/^/base /'; echo
"$BEFORE" -f "$CSV" -c 1000 -a 127.0.0.1:9601 >/dev/null 2>&1 &
b=$!
"$AFTER" -f "$CSV" -c 1000 -a 127.0.0.1:9602 >/dev/null 2>&1 &
a=$!
wait_ready 9601; wait_ready 9602; sleep 40; scrape3 9601; scrape3 9602
echo "gpm before $(status $b)"; echo "gpm after $(status $a)"
python3 bench/smaps_by_mapping.py "$a" --top 12 --tag "gpm after"
python3 bench/smaps_by_mapping.py "$b" --top 6 --tag "gpm before"
kill -TERM "$a" "$b"; wait "$a" "$b" 2>/dev/null

fi
if run B; then
echo "== B. RSS, PM sampling, idle"
for bin in "$BEFORE" "$AFTER"; do
  "$bin" -f "$CSV" -c 1000 -a 127.0.0.1:9603 --profiling-source=pm-sampling --cupti-library "$CUPTI" >/dev/null 2>&1 &
  p=$!
  wait_ready 9603; sleep 40; scrape3 9603
  echo "pm $(basename "$bin") $(status $p)"
  python3 bench/smaps_by_mapping.py "$p" --top 8 --tag "pm $(basename "$bin")"
  kill -TERM "$p"; wait "$p" 2>/dev/null
done

fi
echo "== C. PM sampling under tensor pulses"
pm_cpu() {  # $1 tag, $2 binary, $3 window seconds, then flags
  local tag=$1 bin=$2 secs=$3; shift 3
  "$B/gpu-pulse" --on 4s --off 4s --duration "$((secs + 16))s" --gpus 0 --mode tensor >/dev/null 2>&1 &
  local pulse=$!
  sleep 1
  "$bin" -f "$CSV" -c 1000 -a 127.0.0.1:9604 --profiling-source=pm-sampling --cupti-library "$CUPTI" "$@" >/dev/null 2>&1 &
  local p=$!
  wait_ready 9604; sleep 12
  local c0 t0 c1 t1; c0=$(cpu_of "$p"); t0=$(date +%s.%N)
  sleep "$secs"
  c1=$(cpu_of "$p"); t1=$(date +%s.%N)
  local tensor; tensor=$(curl -fsS http://127.0.0.1:9604/metrics | grep -E '^nvml_exporter_pm_sampling_coverage_ratio.*(1004|TENSOR)' | head -1)
  echo "pm-pulse $tag: $(python3 -c "import sys; c0,c1,t0,t1,hz=map(float,sys.argv[1:]); print('cpu_ms_per_collection=%.2f window_s=%.0f' % (1000*(c1-c0)/hz/(t1-t0), t1-t0))" "$c0" "$c1" "$t0" "$t1" "$hz") $(status $p)"
  echo "  $tensor"
  kill -TERM "$p"; wait "$p" 2>/dev/null
  wait "$pulse"
}
if run C; then
C_RUNS="${C_RUNS:-before after pinned}"  # which of C's three runs
[[ "$C_RUNS" == *before* ]] && pm_cpu before "$BEFORE" 60
[[ "$C_RUNS" == *after* ]] && pm_cpu after "$AFTER" "$HOLD_S"
[[ "$C_RUNS" == *pinned* ]] && pm_cpu pinned "$AFTER" 40 --pm-sampling-pin "$PIN"
fi

echo "== D. default file, four at once on one CPU"
together() {  # $1 round, $2 cpu
  taskset -c "$2" "$B/bench/nvml_floor" -f "$CSV" -n 45 -c 1000 >/tmp/floor-$1.json 2>&1 &
  local f=$!
  sleep 0.25
  taskset -c "$2" "$B/bench/nvml_floor" -f "$CSV" -n 45 -c 1000 --split >/tmp/split-$1.json 2>&1 &
  local s=$!
  sleep 0.25
  taskset -c "$2" "$BEFORE" -f "$CSV" -c 1000 -a 127.0.0.1:9611 >/dev/null 2>&1 &
  local b=$!
  sleep 0.25
  taskset -c "$2" "$AFTER" -f "$CSV" -c 1000 -a 127.0.0.1:9612 >/dev/null 2>&1 &
  local a=$!
  wait_ready 9611; wait_ready 9612; sleep 3
  python3 bench/thread_cpu.py "$b" 35 --collections 35 >/tmp/threads-before-$1.txt &
  local t=$!
  python3 bench/thread_cpu.py "$a" 35 --collections 35 | sed "s/^/round $1 after /"
  wait "$t"; sed "s/^/round $1 before /" /tmp/threads-before-$1.txt | grep total
  kill -TERM "$a" "$b"; wait "$a" "$b" 2>/dev/null
  wait "$f" "$s"
  echo "round $1 floor $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["cpu_ms_per_sweep"])' /tmp/floor-$1.json)"
  echo "round $1 split $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["cpu_ms_per_sweep"])' /tmp/split-$1.json)"
}
if run D; then
for round in ${D_ROUNDS:-1:3 2:11}; do together "${round%%:*}" "${round##*:}"; done
fi

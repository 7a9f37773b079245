#!/usr/bin/env bash
# Issue 40's first look on a GPU host, in one run (docs/benchmarks.md "Performance round"):
#   1. where a PM-sampling configuration switch's CPU goes, step by step (tools/pm-probe
#      --switch): a fresh session per switch (restart, as the exporter switched before) against
#      one session kept enabled and reconfigured (--keep), idle and under a tensor load, and the
#      hardware buffer at 4 MiB against 256 KiB; the values after each switch are printed;
#   2. the default collectors file: the NVML floor's per-call breakdown (bench/nvml_floor) beside
#      the daemon's CPU per thread (bench/thread_cpu.py), same file, same interval.
# Writes switch-*.csv, floor.json, threads-*.txt and card.txt into $OUT. Run from the repo root
# after `make bundle`; nothing here changes GPU settings.
set -uo pipefail
B="${BUNDLE:-bundle}"
OUT="${OUT:-perf-probe-out}"
SWITCHES="${SWITCHES:-8}"
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader >"$OUT/card.txt"
CUPTI="${CUPTI:-$(find / \( -path /proc -o -path /sys \) -prune -o -name 'libcupti.so.13' -print 2>/dev/null | sort | head -1)}"
echo "cupti: $CUPTI" >>"$OUT/card.txt"
. "$(dirname "$0")/gh100_switch_metrics.sh"  # SHARED, TENSOR
switch() {  # $1: tag, then pm-probe flags
  local tag=$1; shift
  "$B/pm-probe" --cupti "$CUPTI" --switch "$SWITCHES" --dwell-ms 1000 --other "$TENSOR" "$@" \
    "${SHARED[@]}" >"$OUT/switch-$tag.csv" 2>"$OUT/switch-$tag.err"
  echo "switch $tag: exit $?" >>"$OUT/card.txt"
}
switch idle-restart
switch idle-keep --keep
switch idle-keep-256k --keep --hw-buffer-kib 256
"$B/gpu-pulse" --on 120s --off 0 --duration 60s --gpus 0 --mode tensor >"$OUT/pulse.txt" 2>&1 &
load=$!
sleep 3
switch tensor-restart
switch tensor-keep --keep
wait "$load"

"$B/bench/nvml_floor" -f "$B/etc/default-counters.csv" -n 30 -c 1000 --breakdown >"$OUT/floor.json" 2>&1
run_threads() {  # $1: tag, $2: port, then daemon flags
  local tag=$1 port=$2; shift 2
  "$B/nvml-exporter" -c 1000 -a "127.0.0.1:$port" "$@" 2>"$OUT/daemon-$tag.log" &
  local pid=$!
  for _ in $(seq 100); do curl -fsS -o /dev/null "http://127.0.0.1:$port/ready" && break; sleep 0.2; done
  sleep 5
  python3 bench/thread_cpu.py "$pid" 30 --collections 30 >"$OUT/threads-$tag.txt"
  grep VmRSS "/proc/$pid/status" >>"$OUT/threads-$tag.txt"
  kill "$pid"; wait "$pid" 2>/dev/null
}
run_threads default 9461 -f "$B/etc/default-counters.csv"
run_threads dcp 9462 -f "$B/etc/dcp-metrics-included.csv"

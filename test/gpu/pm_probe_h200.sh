#!/usr/bin/env bash
# Raw PM samples on the H200 (tools/pm-probe): what each sample of a decode holds for the metrics
# the exporter averages, and for their raw counters, at idle and under gpu-pulse's tensor and fp32
# loads and pinned PCIe copies. Written after GR engine activity read 1/N of GPM's value with N
# samples per collection (docs/validation/h200-pm-sampling.md). Run from the repo root after
# `make bundle`; nothing here changes GPU settings. Output: $OUT/<set>-<interval>.csv, one line
# per sample, '#' lines with each decode's sample count and CPU time.
set -uo pipefail
B="${BUNDLE:-bundle}"
OUT="${OUT:-pm-probe-out}"
mkdir -p "$OUT"
CUPTI="${CUPTI:-$(find / \( -path /proc -o -path /sys \) -prune -o -name 'libcupti.so.13' -print \
  2>/dev/null | sort | head -1)}"
# The exporter's own metrics (collect/pm_metrics.cc) ...
served=(gr__cycles_active.avg.pct_of_peak_sustained_elapsed
  sm__cycles_active.avg.pct_of_peak_sustained_elapsed
  sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed
  dram__cycles_active.avg.pct_of_peak_sustained_elapsed
  pcie__write_bytes.sum.per_second pcie__read_bytes.sum.per_second
  sm__warps_active.avg.pct_of_peak_sustained_elapsed)
# ... and the raw counters behind them (names the chip lacks are reported and left out).
raw=(gr__cycles_active.sum gr__cycles_elapsed.max gr__cycles_elapsed.sum
  gpc__cycles_elapsed.max sys__cycles_elapsed.max pcie__write_bytes.sum pcie__read_bytes.sum
  sm__cycles_active.sum sm__cycles_elapsed.max)
pcie() {
  python3 - "$1" <<'PY'
import sys, time, torch
end = time.time() + float(sys.argv[1])
h = torch.empty(256 << 20, dtype=torch.uint8).pin_memory()
d = torch.empty_like(h, device="cuda")
while time.time() < end:
    d.copy_(h, non_blocking=True); h.copy_(d, non_blocking=True)
torch.cuda.synchronize()
PY
}
schedule() {  # idle 3 s, tensor 7 s, fp32 6 s, PCIe 6 s, idle 2 s
  sleep 3
  "$B/gpu-pulse" --on 7s --off 0 --duration 7s --gpus 0 --mode tensor >/dev/null 2>&1
  "$B/gpu-pulse" --on 6s --off 0 --duration 6s --gpus 0 --mode fp32 >/dev/null 2>&1
  pcie 6 >/dev/null 2>&1
  sleep 2
}
probe() {  # $1: name, $2: interval ms, rest: metrics
  local name="$1" interval="$2"; shift 2
  echo "== $name interval=${interval}ms $(date +%s.%N)" >>"$OUT/phases.txt"
  "$B/pm-probe" --cupti "$CUPTI" --interval-ms "$interval" --decode-ms 1000 --seconds 25 "$@" \
    >"$OUT/$name-$interval.csv" 2>"$OUT/$name-$interval.err" &
  local p=$!
  sleep 1
  schedule
  wait "$p"
}
echo "cupti=$CUPTI" >"$OUT/phases.txt"
probe served 500 "${served[@]}"
probe served 100 "${served[@]}"
probe raw 500 "${raw[@]}"

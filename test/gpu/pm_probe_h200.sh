#!/usr/bin/env bash
# Raw PM samples on the H200 (tools/pm-probe): what each sample of a decode holds for the
# metrics the exporter averages, for the chip's triage counters of the same measures, and for
# raw counters, at idle and under gpu-pulse's tensor and fp32 loads and pinned PCIe copies.
# Written after GR engine activity read 1/N of GPM's value with N
# samples per collection (docs/validation/h200-pm-sampling.md). Run from the repo root after
# `make bundle`; nothing here changes GPU settings. Output: $OUT/<set>-<interval>.csv, one line
# per sample, '#' lines with each decode's sample count and CPU time. Arguments pick the sets and
# intervals (SET:MS ...); SHORT=1 runs a 12 s schedule per set.
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
# ... the same measures from the chip's "triage" counter groups (the set Nsight Systems' GPU
# metrics sample; GH100 names them TriageCompute, GA102/AD102 TriageAC/TriageSCG) ...
triage=(FE_B.TriageCompute.gr__cycles_active.avg.pct_of_peak_sustained_elapsed
  TPC.TriageCompute.sm__cycles_active.avg.pct_of_peak_sustained_elapsed
  TPC.TriageCompute.sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed
  FBSP.TriageCompute.dramc__read_throughput.avg.pct_of_peak_sustained_elapsed
  PCI.TriageCompute.pcie__write_bytes.sum.per_second PCI.TriageCompute.pcie__read_bytes.sum.per_second
  TPC.TriageCompute.tpc__warps_active_realtime.avg.pct_of_peak_sustained_elapsed
  TPC.TriageCompute.sm__pipe_fp64_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed
  TPC.TriageCompute.sm__inst_executed_pipe_fma_realtime.avg.pct_of_peak_sustained_elapsed
  dram__cycles_active.avg.pct_of_peak_sustained_elapsed)
# ... and the raw counters behind both (names the chip lacks are reported and left out).
raw=(gr__cycles_active.sum gr__cycles_elapsed.max FE_B.TriageCompute.gr__cycles_active.sum
  PCI.TriageCompute.pcie__write_bytes.sum pcie__write_bytes.sum sys__cycles_elapsed.max
  TPC.TriageCompute.tpc__warps_active_realtime.sum sm__warps_active.sum sm__cycles_elapsed.max
  gpc__cycles_elapsed.max)
# Sets that tell which counter domain stalls the samples under load (run 6 of the validation):
# the served set without DRAM, DRAM alone, the per-second forms, the tensor pipe, PCIe reads, and
# every served measure in its raw form.
nodram=(gr__cycles_active.avg.pct_of_peak_sustained_elapsed
  sm__cycles_active.avg.pct_of_peak_sustained_elapsed
  sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed
  pcie__write_bytes.sum.per_second pcie__read_bytes.sum.per_second
  sm__warps_active.avg.pct_of_peak_sustained_elapsed)
dram=(gr__cycles_active.sum gr__cycles_elapsed.max dram__cycles_active.sum dram__cycles_elapsed.max)
persec=(gr__cycles_active.sum gr__cycles_elapsed.max pcie__write_bytes.sum.per_second
  pcie__read_bytes.sum.per_second)
tensor=(gr__cycles_active.sum gr__cycles_elapsed.max sm__pipe_tensor_cycles_active.sum
  sm__cycles_active.sum sm__cycles_elapsed.max)
pcieread=(gr__cycles_active.sum gr__cycles_elapsed.max pcie__read_bytes.sum)
servedraw=(gr__cycles_active.sum gr__cycles_elapsed.max sm__cycles_active.sum sm__cycles_elapsed.max
  sm__pipe_tensor_cycles_active.sum dram__cycles_active.sum dram__cycles_elapsed.max
  pcie__write_bytes.sum pcie__read_bytes.sum sm__warps_active.sum)
# One SM-domain counter each, beside the GR pair that shows a stall (run 7): which of them stops
# the samples, and whether the TPC "realtime" triage forms do too.
smactive=(gr__cycles_active.sum gr__cycles_elapsed.max sm__cycles_active.sum)
tensoronly=(gr__cycles_active.sum gr__cycles_elapsed.max sm__pipe_tensor_cycles_active.sum)
tensorrt=(gr__cycles_active.sum gr__cycles_elapsed.max
  TPC.TriageCompute.sm__pipe_tensor_cycles_active_realtime.sum)
smidle=(gr__cycles_active.sum gr__cycles_elapsed.max
  TPC.TriageCompute.tpc__warps_inactive_sm_idle_realtime.sum
  TPC.TriageCompute.tpc__warps_inactive_sm_active_realtime.sum)
pipes=(gr__cycles_active.sum gr__cycles_elapsed.max
  TPC.TriageCompute.sm__pipe_fp64_cycles_active_realtime.sum
  TPC.TriageCompute.sm__inst_executed_pipe_fma_realtime.sum)
pcie() { python3 test/gpu/pcie_copies.py "$1"; }
schedule() {  # idle 3 s, tensor 7 s, fp32 6 s, PCIe 6 s, idle 2 s; SHORT=1: idle, tensor, PCIe
  if [ -n "${SHORT:-}" ]; then
    sleep 2
    "$B/gpu-pulse" --on 5s --off 0 --duration 5s --gpus 0 --mode tensor >/dev/null 2>&1
    pcie 4 >/dev/null 2>&1
    return
  fi
  sleep 3
  "$B/gpu-pulse" --on 7s --off 0 --duration 7s --gpus 0 --mode tensor >/dev/null 2>&1
  "$B/gpu-pulse" --on 6s --off 0 --duration 6s --gpus 0 --mode fp32 >/dev/null 2>&1
  pcie 6 >/dev/null 2>&1
  sleep 2
}
probe() {  # $1: name, $2: interval ms, rest: metrics (PROBE_ARGS: more pm-probe options)
  local name="$1" interval="$2"; shift 2
  echo "== $name interval=${interval}ms $(date +%s.%N)" >>"$OUT/phases.txt"
  # shellcheck disable=SC2086
  "$B/pm-probe" --cupti "$CUPTI" --interval-ms "$interval" --decode-ms 1000 ${PROBE_ARGS:-} \
    --seconds "$([ -n "${SHORT:-}" ] && echo 13 || echo 25)" "$@" \
    >"$OUT/$name-$interval.csv" 2>"$OUT/$name-$interval.err" &
  local p=$!
  sleep 1
  schedule
  wait "$p"
}
echo "cupti=$CUPTI" >"$OUT/phases.txt"
# Arguments: SET:INTERVAL_MS ... (default: the first run's five).
[ $# -gt 0 ] || set -- served:500 triage:500 raw:500 triage:100 served:100
# SET:MS:fresh re-initialises the image after every decode (pm-probe --fresh-image).
for run in "$@"; do
  IFS=: read -r set_name ms mode <<<"$run"
  declare -n metrics="$set_name"
  PROBE_ARGS="${mode:+--fresh-image}" probe "$set_name${mode:+-$mode}" "$ms" "${metrics[@]}"
  unset -n metrics
done

#!/usr/bin/env bash
# Issue 26, step 1: can one PM-sampling pass hold tensor-pipe activity (or SM activity) beside
# the fields PM sampling serves today, on the H200, under every gpu-pulse load for minutes?
# For each set, tools/pm-probe samples every 500 ms (the exporter's default) for the whole
# schedule below while pynvml's GPM (test/gpu/pynvml_gpm.py) reads the same GPU once a second as
# the reference. Schedule: idle 5 s, tensor 20 s, fp32 15 s, fp64 15 s, memory 15 s, pinned PCIe
# copies 15 s, tensor and fp32 pulses interleaved 15 s (transitions), idle 5 s.
# Run from the repo root after `make bundle`; nothing here changes GPU settings. Output:
# $OUT/<set>.csv (pm-probe), <set>.err, <set>-gpm.txt, phases.txt (each phase's start, unix s).
set -uo pipefail
B="${BUNDLE:-bundle}"
OUT="${OUT:-pm-onepass-out}"
mkdir -p "$OUT"
CUPTI="${CUPTI:-$(find / \( -path /proc -o -path /sys \) -prune -o -name 'libcupti.so.13' -print \
  2>/dev/null | sort | head -1)}"
base=(gr__cycles_active.avg.pct_of_peak_sustained_elapsed)
rest=(dram__cycles_active.avg.pct_of_peak_sustained_elapsed
  pcie__write_bytes.sum.per_second pcie__read_bytes.sum.per_second
  sm__warps_active.avg.pct_of_peak_sustained_elapsed
  nvltx__bytes.sum.per_second nvlrx__bytes.sum.per_second)
# The candidate second, right after GR so that pm-probe's fit-to-one-pass drops from the end.
tensor=("${base[@]}" sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed "${rest[@]}")
smactive=("${base[@]}" sm__cycles_active.avg.pct_of_peak_sustained_elapsed "${rest[@]}")
pcie() { python3 test/gpu/pcie_copies.py "$1"; }
phase() { echo "$1 $2 $(date +%s.%N)" >>"$OUT/phases.txt"; }
pulse() { "$B/gpu-pulse" --gpus 0 "$@" >/dev/null 2>&1; }
schedule() {  # $1: set name
  phase "$1" idle; sleep 5
  phase "$1" tensor; pulse --mode tensor --on 20s --off 0 --duration 20s
  phase "$1" fp32; pulse --mode fp32 --on 15s --off 0 --duration 15s
  phase "$1" fp64; pulse --mode fp64 --on 15s --off 0 --duration 15s
  phase "$1" memory; pulse --mode memory --on 15s --off 0 --duration 15s
  phase "$1" pcie; pcie 15 >/dev/null 2>&1
  phase "$1" transitions
  pulse --mode tensor --on 2s --off 1s --duration 15s &
  local other=$!
  pulse --mode fp32 --on 1s --off 2s --duration 15s
  wait "$other"  # not a bare wait: that would wait for the probe too
  phase "$1" idle; sleep 5
  phase "$1" end
}
echo "cupti=$CUPTI" >"$OUT/phases.txt"
[ $# -gt 0 ] || set -- tensor smactive
for name in "$@"; do
  declare -n metrics="$name"
  "$B/pm-probe" --cupti "$CUPTI" --interval-ms 500 --decode-ms 1000 --seconds 125 "${metrics[@]}" \
    >"$OUT/$name.csv" 2>"$OUT/$name.err" &
  probe=$!
  python3 test/gpu/pynvml_gpm.py 125 >"$OUT/$name-gpm.txt" 2>&1 &
  gpm=$!
  sleep 1
  schedule "$name"
  wait "$probe" "$gpm"
  unset -n metrics
done
tar czf "$OUT/pm-onepass.tgz" -C "$OUT" --exclude pm-onepass.tgz .

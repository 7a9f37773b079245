#!/usr/bin/env bash
# Issue 3 on a real GPU: the MIG code paths (read only: MIG mode is reported, never changed) and
# DCGM_EXP_CLOCK_EVENTS_COUNT against nvidia-smi's clock-event reasons, idle then under
# gpu-pulse. Run from the repo root after `make bundle` (with gpu-pulse). Writes into $OUT
# (default ./mig-clock-out): report.txt (summary) and mig-clock.tgz (everything).
# Nothing here changes GPU settings.
set -uo pipefail
B="${BUNDLE:-bundle}"
RESULT="${OUT:-mig-clock-out}"
W="$(mktemp -d)"
mkdir -p "$RESULT"
CSV=testdata/golden/mig_counters.csv
{
  echo "## nvidia-smi MIG mode"
  nvidia-smi --query-gpu=index,name,mig.mode.current,mig.mode.pending --format=csv
  nvidia-smi -L
} >"$W/report.txt" 2>&1
for sel in f g i; do
  "$B/nvml-exporter" -f "$CSV" -d "$sel" --once >"$W/once_$sel.txt" 2>"$W/once_$sel.log"
  echo "== -d $sel: rc=$? series=$(grep -vc '^#' "$W/once_$sel.txt") GPU_I lines=$(grep -c GPU_I_ID "$W/once_$sel.txt")" >>"$W/report.txt"
  grep -iE "error|warn" "$W/once_$sel.log" | head -5 >>"$W/report.txt"
done
# Clock events: 1 s collections with a 20 s window; 12 s idle, then 15 s of tensor load.
"$B/nvml-exporter" -f "$CSV" -c 1000 --clock-events-count-window-size 20000 -a 127.0.0.1:9400 \
  2>"$W/daemon.log" &
d=$!
smi() { nvidia-smi --query-gpu=clocks_event_reasons.active --format=csv,noheader >>"$W/smi_reasons.txt" 2>&1; }
for _ in $(seq 12); do smi; sleep 1; done
curl -sS http://127.0.0.1:9400/metrics >"$W/metrics_idle.txt"
"$B/gpu-pulse" --on 15s --off 1s --duration 15s --gpus 0 --mode tensor >"$W/pulse.txt" 2>&1 &
p=$!
for _ in $(seq 14); do smi; sleep 1; done
curl -sS http://127.0.0.1:9400/metrics >"$W/metrics_load.txt"
wait $p
kill -TERM $d; wait $d; echo "daemon rc=$?" >>"$W/daemon.log"
{
  echo "## DCGM_EXP_CLOCK_EVENTS_COUNT idle (20 s window)"
  grep '^DCGM_EXP_CLOCK_EVENTS_COUNT' "$W/metrics_idle.txt"
  echo "## DCGM_EXP_CLOCK_EVENTS_COUNT after 14 s of load"
  grep '^DCGM_EXP_CLOCK_EVENTS_COUNT' "$W/metrics_load.txt"
  echo "## nvidia-smi clocks_event_reasons.active, 1/s (12 idle, 14 load)"
  sort "$W/smi_reasons.txt" | uniq -c
  echo "## daemon log warnings"
  grep -iE "warn|error" "$W/daemon.log" | head -10
  tail -3 "$W/pulse.txt"
} >>"$W/report.txt"
cp "$W/report.txt" "$RESULT/"
tar czf "$RESULT/mig-clock.tgz" -C "$W" .
cat "$W/report.txt"

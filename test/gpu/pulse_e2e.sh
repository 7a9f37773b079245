#!/usr/bin/env bash
# gpu-pulse drives GPU 0 20 s on / 20 s off in tensor mode for DURATION (default 120 s) while
# nvml-exporter collects every second; /metrics is sampled every second into samples.csv.
# Then test/gpu/pulse_check.py checks each phase against gpu-pulse's own phase log and writes
# pulse_report.md. Needs a GPU, `make bundle` output in $BUNDLE (with gpu-pulse), curl, python3.
# Output files land in $OUT (default ./pulse-out). Nothing here changes GPU settings.
set -uo pipefail
B="${BUNDLE:-bundle}"
OUT="${OUT:-pulse-out}"
DURATION="${DURATION:-120}"
PORT="${PORT:-9400}"
mkdir -p "$OUT"
"$B/nvml-exporter" -f "$B/etc/dcp-metrics-included.csv" -c 1000 -a "127.0.0.1:$PORT" \
  2>"$OUT/exporter.log" &
exp=$!
for _ in $(seq 50); do curl -fsS -o /dev/null "http://127.0.0.1:$PORT/ready" && break; sleep 0.2; done
FIELDS="DCGM_FI_DEV_GPU_UTIL DCGM_FI_DEV_POWER_USAGE DCGM_FI_DEV_SM_CLOCK DCGM_FI_PROF_GR_ENGINE_ACTIVE DCGM_FI_PROF_SM_ACTIVE DCGM_FI_PROF_PIPE_TENSOR_ACTIVE DCGM_FI_PROF_DRAM_ACTIVE"
echo "t,$(echo $FIELDS | tr ' ' ',')" >"$OUT/samples.csv"
sampler() {
  local end=$(( $(date +%s) + DURATION + 8 ))
  while [ "$(date +%s)" -lt "$end" ]; do
    local t m row
    t=$(date +%s.%N)
    m=$(curl -fsS "http://127.0.0.1:$PORT/metrics")
    row="$t"
    for f in $FIELDS; do
      row="$row,$(echo "$m" | awk -v f="$f" 'index($0, f "{gpu=\"0\"") == 1 {print $NF; exit}')"
    done
    echo "$row" >>"$OUT/samples.csv"
    sleep "$(python3 -c "import time; print(max(0.0, 1.0 - (time.time() - $t)))")"
  done
}
sampler &
smp=$!
# An independent reading of the same GPM counters (pynvml), for the agreement check.
python3 test/gpu/pynvml_gpm.py "$((DURATION + 6))" >"$OUT/pynvml_gpm.txt" 2>"$OUT/pynvml_gpm.err" &
pyn=$!
sleep 4
"$B/gpu-pulse" --on 20s --off 20s --duration "${DURATION}s" --gpus 0 --mode tensor \
  >"$OUT/pulse_phases.txt" 2>"$OUT/pulse_status.txt"
echo "gpu-pulse rc=$?" >>"$OUT/pulse_phases.txt"
wait $smp
wait $pyn
kill -TERM $exp; wait $exp
python3 test/gpu/pulse_check.py "$OUT" | tee "$OUT/pulse_report.md"

#!/usr/bin/env bash
# Cost of PM sampling's alternating configurations (docs/pm-sampling.md §3, §6) on the H200, in
# one run: the same daemon binary twice over the same load, one after the other, each collecting
# every second and scraped every second for COST_S seconds while gpu-pulse alternates tensor and
# fp32 pulses (4 s each):
#   single:      --pm-sampling-pin on the six shared fields: one configuration, the layout
#                served before alternation (tensor and the pipes left out);
#   alternating: the default plan: the shared fields, then tensor alone (FP32 is not served on
#                GH100: its counter stalls the sampler; FP64 needs 2 passes there), each live for
#                the default --pm-sampling-dwell (10 s);
#   alternating_dwell0: the same, switching after three sampling intervals (every 2 collections).
# Writes cost.txt (CPU seconds per collection, VmRSS / VmHWM at the end, losses) into $OUT.
# Run from the repo root after `make bundle`; nothing here changes GPU settings.
set -uo pipefail
B="${BUNDLE:-bundle}"
OUT="${OUT:-pm-cost-out}"
COST_S="${COST_S:-45}"
mkdir -p "$OUT"
CUPTI="${CUPTI:-$(find / \( -path /proc -o -path /sys \) -prune -o -name 'libcupti.so.13' -print 2>/dev/null | sort | head -1)}"
cat >"$OUT/cost.csv" <<'CSV'
DCGM_FI_PROF_GR_ENGINE_ACTIVE, gauge, gr
DCGM_FI_PROF_SM_ACTIVE, gauge, sm
DCGM_FI_PROF_SM_OCCUPANCY, gauge, occ
DCGM_FI_PROF_PIPE_TENSOR_ACTIVE, gauge, tensor
DCGM_FI_PROF_DRAM_ACTIVE, gauge, dram
DCGM_FI_PROF_PIPE_FP32_ACTIVE, gauge, fp32
DCGM_FI_PROF_PCIE_TX_BYTES, gauge, pcie tx
DCGM_FI_PROF_PCIE_RX_BYTES, gauge, pcie rx
CSV
PIN=DCGM_FI_PROF_GR_ENGINE_ACTIVE,DCGM_FI_PROF_SM_ACTIVE,DCGM_FI_PROF_SM_OCCUPANCY,DCGM_FI_PROF_DRAM_ACTIVE,DCGM_FI_PROF_PCIE_TX_BYTES,DCGM_FI_PROF_PCIE_RX_BYTES
hz=$(getconf CLK_TCK)
measure() {  # $1: tag, $2: port, then daemon flags
  local tag=$1 port=$2; shift 2
  "$B/nvml-exporter" -f "$OUT/cost.csv" -c 1000 -a "127.0.0.1:$port" --profiling-source=pm-sampling \
    --cupti-library "$CUPTI" "$@" 2>"$OUT/$tag.log" &
  local pid=$!
  for _ in $(seq 100); do curl -fsS -o /dev/null "http://127.0.0.1:$port/ready" && break; sleep 0.2; done
  sleep 3  # past the start-up (CUPTI's load, the host API's configurations)
  "$B/gpu-pulse" --on 4s --off 4s --duration "${COST_S}s" --gpus 0 --mode tensor >>"$OUT/pulse.txt" 2>&1 &
  local load=$!
  local c0 t0; c0=$(awk '{print $14 + $15}' "/proc/$pid/stat"); t0=$(date +%s.%N)
  local n=0
  while kill -0 "$load" 2>/dev/null; do
    curl -fsS "http://127.0.0.1:$port/metrics" | grep -E '^(DCGM_FI_PROF|nvml_exporter_pm_sampling)' |
      sed "s/^/$tag /" >>"$OUT/cost_scrapes.txt"
    n=$((n + 1)); sleep 1
  done
  local c1 t1; c1=$(awk '{print $14 + $15}' "/proc/$pid/stat"); t1=$(date +%s.%N)
  local rss hwm losses configs
  rss=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status"); hwm=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
  losses=$(curl -fsS "http://127.0.0.1:$port/metrics" | sed -n 's/^nvml_exporter_pm_sampling_losses_total{[^}]*} //p')
  configs=$(curl -fsS "http://127.0.0.1:$port/metrics" | sed -n 's/^nvml_exporter_pm_sampling_configurations{[^}]*} //p')
  python3 - "$tag" "$c0" "$c1" "$t0" "$t1" "$hz" "$rss" "$hwm" "$losses" "$configs" "$n" >>"$OUT/cost.txt" <<'PY'
import sys
tag, c0, c1, t0, t1, hz, rss, hwm, losses, configs, n = sys.argv[1:]
secs = float(t1) - float(t0)
cpu = (int(c1) - int(c0)) / int(hz)
print(f"{tag}: configurations={configs} seconds={secs:.1f} collections~{secs:.0f} cpu_s={cpu:.2f} "
      f"cpu_ms_per_collection={1000 * cpu / secs:.2f} vmrss_mib={int(rss) / 1024:.1f} "
      f"vmhwm_mib={int(hwm) / 1024:.1f} losses={losses} scrapes={n}")
PY
  kill -TERM "$pid"; wait "$pid"
}
measure single 9421 --pm-sampling-pin "$PIN"
measure alternating 9422
measure alternating_dwell0 9423 --pm-sampling-dwell 0
cat "$OUT/cost.txt"

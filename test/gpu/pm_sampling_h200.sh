#!/usr/bin/env bash
# PM sampling (CUPTI) against GPM on the same GPU, side by side (docs/pm-sampling.md §6;
# results in docs/validation/h200-pm-sampling.md). Run from the repo root after `make bundle`,
# on a Hopper GPU (which has both sources). Nothing here changes GPU settings.
#
# Two daemons collect every second: one with --profiling-source=gpm, one with
# --profiling-source=pm-sampling (CUPTI from $CUPTI, default: the pip wheel nvidia-cuda-cupti's).
# Both are scraped every second into samples.csv while the GPU runs: idle, gpu-pulse's tensor,
# fp32, fp64 and memory modes, and a PCIe phase (pinned host<->device copies through PyTorch).
# Then, with sampling running, Nsight Compute profiles a kernel (coexistence), SIGUSR1 pauses PM
# sampling, ncu runs again, SIGUSR2 resumes. test/gpu/pm_sampling_compare.py checks each phase
# (ratios within 5 points, bytes/s within 10 %) and writes report.md and a plot into $OUT.
set -uo pipefail
B="${BUNDLE:-bundle}"
OUT="${OUT:-pm-sampling-out}"
PHASE_S="${PHASE_S:-15}"
mkdir -p "$OUT"
if [ -z "${CUPTI:-}" ]; then
  # The pip wheel (nvidia-cuda-cupti; CUDA 13 wheels put it under nvidia/cu13/lib), else any.
  CUPTI=$(find / \( -path /proc -o -path /sys \) -prune -o -name 'libcupti.so.13' -print 2>/dev/null |
    sort | head -1)
fi
echo "cupti=$CUPTI" >"$OUT/env.txt"
ls -la "$(dirname "$CUPTI")" >>"$OUT/env.txt" 2>&1
nvidia-smi -L >>"$OUT/env.txt" 2>&1
cat >"$OUT/prof.csv" <<'CSV'
DCGM_FI_PROF_GR_ENGINE_ACTIVE, gauge, gr
DCGM_FI_PROF_SM_ACTIVE, gauge, sm
DCGM_FI_PROF_SM_OCCUPANCY, gauge, occ
DCGM_FI_PROF_PIPE_TENSOR_ACTIVE, gauge, tensor
DCGM_FI_PROF_DRAM_ACTIVE, gauge, dram
DCGM_FI_PROF_PIPE_FP64_ACTIVE, gauge, fp64
DCGM_FI_PROF_PIPE_FP32_ACTIVE, gauge, fp32
DCGM_FI_PROF_PIPE_FP16_ACTIVE, gauge, fp16
DCGM_FI_PROF_PCIE_TX_BYTES, gauge, pcie tx
DCGM_FI_PROF_PCIE_RX_BYTES, gauge, pcie rx
DCGM_FI_PROF_NVLINK_TX_BYTES, gauge, nvlink tx
DCGM_FI_PROF_NVLINK_RX_BYTES, gauge, nvlink rx
CSV
"$B/nvml-exporter" -f "$OUT/prof.csv" -c 1000 -a 127.0.0.1:9411 --profiling-source=gpm \
  2>"$OUT/gpm.log" &
gpm=$!
"$B/nvml-exporter" -f "$OUT/prof.csv" -c 1000 -a 127.0.0.1:9412 \
  --profiling-source=pm-sampling --cupti-library "$CUPTI" --debug 2>"$OUT/pm.log" &
pm=$!
for p in 9411 9412; do
  for _ in $(seq 100); do curl -fsS -o /dev/null "http://127.0.0.1:$p/ready" && break; sleep 0.2; done
done
pm_pid=$pm
phase() { echo "$(date +%s.%N) $1" >>"$OUT/phases.txt"; }
sampler() {
  while [ ! -e "$OUT/.stop" ]; do
    local t; t=$(date +%s.%N)
    { echo "# t=$t"; curl -fsS http://127.0.0.1:9411/metrics | grep -E '^DCGM_FI_PROF' | sed 's/^/gpm /'
      curl -fsS http://127.0.0.1:9412/metrics | grep -E '^(DCGM_FI_PROF|nvml_exporter_pm_sampling)' | sed 's/^/pm /'
    } >>"$OUT/scrapes.txt"
    grep -E 'VmRSS' /proc/$pm_pid/status 2>/dev/null | sed "s/^/# $t pm_/" >>"$OUT/scrapes.txt"
    sleep 1
  done
}
sampler &
smp=$!
phase idle; sleep "$PHASE_S"
for mode in tensor fp32 fp64 memory; do
  phase "$mode"
  "$B/gpu-pulse" --on "${PHASE_S}s" --off 0 --duration "${PHASE_S}s" --gpus 0 --mode "$mode" \
    >>"$OUT/pulse.txt" 2>&1
done
phase pcie
python3 - "$PHASE_S" >>"$OUT/pcie.txt" 2>&1 <<'PY'
import sys, time, torch
end = time.time() + float(sys.argv[1])
h = torch.empty(256 << 20, dtype=torch.uint8).pin_memory()
d = torch.empty_like(h, device="cuda")
n = 0
while time.time() < end:
    d.copy_(h, non_blocking=True); h.copy_(d, non_blocking=True); n += 2
torch.cuda.synchronize()
print(f"pcie copies={n} bytes={n * h.numel()}")
PY
phase idle2; sleep 4
# Coexistence: Nsight Compute while PM sampling holds the counters, then paused.
phase ncu_busy
timeout 60 ncu --clock-control none -c 2 "$B/gpu-pulse" --on 1s --off 0 --duration 1s --mode fp32 \
  >"$OUT/ncu_busy.txt" 2>&1; echo "ncu rc=$?" >>"$OUT/ncu_busy.txt"
sleep 3
phase paused
kill -USR1 "$pm_pid"; sleep 3
timeout 60 ncu --clock-control none -c 2 "$B/gpu-pulse" --on 1s --off 0 --duration 1s --mode fp32 \
  >"$OUT/ncu_paused.txt" 2>&1; echo "ncu rc=$?" >>"$OUT/ncu_paused.txt"
phase resumed
kill -USR2 "$pm_pid"; sleep 5
phase end
touch "$OUT/.stop"; wait $smp
nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv >"$OUT/compute_apps.txt" 2>&1
kill -TERM $gpm $pm_pid; wait $gpm; wait $pm
python3 test/gpu/pm_sampling_compare.py "$OUT"

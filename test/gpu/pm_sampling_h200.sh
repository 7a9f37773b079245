#!/usr/bin/env bash
# PM sampling (CUPTI) against GPM on the same GPU (docs/pm-sampling.md; results in
# docs/validation/h200-pm-sampling.md). Run from the repo root after `make bundle`, on a Hopper
# GPU (which has both sources). Nothing here changes GPU settings.
#
# The two sources are run one after the other over the same load schedule, not at once: with a
# GPM reader and a PM-sampling session on one GPU together, PM sampling completed 2 samples a
# second instead of 10 under load, then none (recorded in the validation document). Each daemon
# collects every second and is scraped every second into scrapes.txt while the GPU runs: idle,
# gpu-pulse's tensor, fp32, fp64 and memory modes (steady loads), and a PCIe phase (pinned
# host<->device copies through PyTorch). After the PM-sampling pass, Nsight Compute profiles a
# kernel while sampling holds the counters, SIGUSR1 pauses PM sampling, ncu runs again, SIGUSR2
# resumes. test/gpu/pm_sampling_compare.py compares each phase's medians (ratios within 5 points,
# bytes/s within 10 %) and writes report.md and plot.png into $OUT.
set -uo pipefail
B="${BUNDLE:-bundle}"
OUT="${OUT:-pm-sampling-out}"
PHASE_S="${PHASE_S:-10}"  # PM_INTERVAL: --pm-sampling-interval in ms (default 500); PM_DEBUG=1: --debug
# PM_ARGS: more daemon flags for the PM-sampling run (--pm-sampling-pin ...); NO_NCU=1 skips the
# Nsight Compute part; TRANSITIONS=1 adds a phase of 4 s tensor pulses after the PCIe one.
mkdir -p "$OUT"
if [ -z "${CUPTI:-}" ]; then
  # The pip wheel (nvidia-cuda-cupti; CUDA 13 wheels put it under nvidia/cu13/lib), else any.
  CUPTI=$(find / \( -path /proc -o -path /sys \) -prune -o -name 'libcupti.so.13' -print 2>/dev/null |
    sort | head -1)
fi
echo "cupti=$CUPTI" >"$OUT/env.txt"
nvidia-smi -L >>"$OUT/env.txt" 2>&1
grep -i profiling /proc/driver/nvidia/params >>"$OUT/env.txt" 2>&1
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
phase() { echo "$(date +%s.%N) $1" >>"$OUT/phases.txt"; }
sampler() {  # $1: source tag, $2: port, $3: daemon pid
  while [ ! -e "$OUT/.stop_$1" ]; do
    local t; t=$(date +%s.%N)
    { echo "# t=$t"
      curl -fsS "http://127.0.0.1:$2/metrics" | grep -E '^(DCGM_FI_PROF|nvml_exporter_pm_sampling)' | sed "s/^/$1 /"
    } >>"$OUT/scrapes.txt"
    grep -E 'VmRSS' "/proc/$3/status" 2>/dev/null | sed "s/^/# $t $1_/" >>"$OUT/scrapes.txt"
    sleep 1
  done
}
loads() {  # $1: source tag
  phase "$1:idle"; sleep "$PHASE_S"
  for mode in tensor fp32 fp64 memory; do
    phase "$1:$mode"
    "$B/gpu-pulse" --on "${PHASE_S}s" --off 0 --duration "${PHASE_S}s" --gpus 0 --mode "$mode" \
      >>"$OUT/pulse.txt" 2>&1
  done
  phase "$1:pcie"
  python3 test/gpu/pcie_copies.py "$PHASE_S" >>"$OUT/pcie.txt" 2>&1
  if [ -n "${TRANSITIONS:-}" ]; then
    phase "$1:transitions"
    "$B/gpu-pulse" --on 4s --off 4s --duration "${PHASE_S}s" --gpus 0 --mode tensor \
      >>"$OUT/pulse.txt" 2>&1
  fi
  phase "$1:end"
}
run_source() {  # $1: tag, $2: port, $3: --profiling-source value
  local extra=()
  [ "$3" = pm-sampling ] &&
    extra=(--cupti-library "$CUPTI" --pm-sampling-interval "${PM_INTERVAL:-500}" ${PM_DEBUG:+--debug}
           ${PM_ARGS:-})
  "$B/nvml-exporter" -f "$OUT/prof.csv" -c 1000 -a "127.0.0.1:$2" --profiling-source="$3" \
    "${extra[@]}" 2>"$OUT/$1.log" &
  local pid=$!
  for _ in $(seq 100); do curl -fsS -o /dev/null "http://127.0.0.1:$2/ready" && break; sleep 0.2; done
  sampler "$1" "$2" "$pid" &
  local smp=$!
  local t0 c0; t0=$(date +%s.%N); c0=$(awk '{print $14 + $15}' "/proc/$pid/stat")
  loads "$1"
  # CPU of the daemon over the load schedule (clock ticks; 1 collection a second).
  echo "$1 cpu_ticks=$(( $(awk '{print $14 + $15}' "/proc/$pid/stat") - c0 )) hz=$(getconf CLK_TCK)" \
    "seconds=$(python3 -c "import time; print(round(time.time() - $t0, 1))")" >>"$OUT/cpu.txt"
  if [ "$1" = pm ] && [ -z "${NO_NCU:-}" ]; then  # Nsight Compute, then pause/resume
    phase pm:ncu_busy
    timeout 60 ncu --clock-control none -c 2 "$B/gpu-pulse" --on 1s --off 0 --duration 1s --mode fp32 \
      >"$OUT/ncu_busy.txt" 2>&1; echo "ncu rc=$?" >>"$OUT/ncu_busy.txt"
    sleep 2
    phase pm:paused
    kill -USR1 "$pid"; sleep 3
    timeout 60 ncu --clock-control none -c 2 "$B/gpu-pulse" --on 1s --off 0 --duration 1s --mode fp32 \
      >"$OUT/ncu_paused.txt" 2>&1; echo "ncu rc=$?" >>"$OUT/ncu_paused.txt"
    phase pm:resumed
    kill -USR2 "$pid"; sleep 4
    phase pm:done
    nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv \
      >"$OUT/compute_apps.txt" 2>&1
    grep -E 'VmRSS|VmHWM' "/proc/$pid/status" >>"$OUT/compute_apps.txt"
  fi
  touch "$OUT/.stop_$1"; wait "$smp"
  kill -TERM "$pid"; wait "$pid"
}
run_source pm 9412 pm-sampling
run_source gpm 9411 gpm
python3 test/gpu/pm_sampling_compare.py "$OUT"

#!/usr/bin/env bash
# bench/gpu.sh: the GPU host's benchmark, in one run, from a `make bundle` folder (it holds the
# daemon, bench/nvml_floor, this script, bench/gpu_bench.py and bench/peers/). Measures:
#   - our CPU per collection (utime+stime from /proc/<pid>/stat over >= 60 intervals, no
#     scrapes) against the NVML floor of the same file (bench/nvml_floor: the file's raw NVML
#     calls and one GPM sample per GPU), for etc/dcp-metrics-included.csv and
#     etc/default-counters.csv;
#   - RSS; time to the first /metrics and to the first complete one (every family of the steady
#     page present, GPM included); scrape latency p50/p99 (plain and gzip);
#   - the peers: a Python exporter (bench/peers/pynvml_exporter.py: what users write
#     themselves) and `nvidia-smi --query-gpu` per call.
# Writes gpu-bench.json and gpu-bench.md under $OUT (default ./gpu-bench-out).
# Usage: bench/gpu.sh [BUNDLE_DIR]
#   INTERVAL_MS (1000) and SECONDS_PER_RUN (61): the collection interval and measuring window;
#   DEFAULT_CSV=0 skips the default-counters run; BEFORE_BIN=path adds the same DCP run of
#   another build (a before/after in the same run); NVML_LIBRARY=path (default: the system's);
#   FLOOR_SWEEPS (100) and FLOOR_INTERVAL_MS (100): the floor's sweeps and their cadence;
#   SIMULATED=1 uses the bundle's simulated GPUs (NVMLX_SIMGPU_SCENARIO picks the scenario);
#   GROUPS_CONFIG=path (default: the bundle's etc/exporter-config.yaml, when there) adds the DCP
#   run with that YAML config's watch groups (label "groups"; -f and -c still win over it).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bundle="${1:-$(cd "$here/.." && pwd)}"
out="${OUT:-$PWD/gpu-bench-out}"
interval="${INTERVAL_MS:-1000}"
secs="${SECONDS_PER_RUN:-61}"
lib="${NVML_LIBRARY:-}"
if [ "${SIMULATED:-0}" = 1 ]; then lib="$bundle/simgpu/libnvidia-ml.so.1"; fi
floor="$bundle/bench/nvml_floor"
[ -x "$floor" ] || floor="$bundle/nvml_floor"
args=(--out "$out" --floor "$floor" --python-peer --nvidia-smi-calls "${SMI_CALLS:-20}"
  --floor-sweeps "${FLOOR_SWEEPS:-100}" --floor-interval-ms "${FLOOR_INTERVAL_MS:-100}")
[ -n "$lib" ] && args+=(--nvml-library "$lib")
args+=(--daemon "after=$bundle/nvml-exporter:$bundle/etc/dcp-metrics-included.csv:$interval:$secs")
groups_config="${GROUPS_CONFIG:-$bundle/etc/exporter-config.yaml}"
if [ -f "$groups_config" ]; then
  args+=(--label-args "groups=--config-file=$groups_config")
  args+=(--daemon "groups=$bundle/nvml-exporter:$bundle/etc/dcp-metrics-included.csv:$interval:$secs")
fi
if [ -n "${BEFORE_BIN:-}" ]; then
  args+=(--daemon "before=$BEFORE_BIN:$bundle/etc/dcp-metrics-included.csv:$interval:$secs")
fi
if [ "${DEFAULT_CSV:-1}" = 1 ]; then
  args+=(--daemon "after=$bundle/nvml-exporter:$bundle/etc/default-counters.csv:$interval:$secs")
fi
exec python3 "$here/gpu_bench.py" "${args[@]}"

#!/usr/bin/env bash
# Which NVML calls the daemon makes per collection against the NVML floor of the same collectors
# file (bench/nvml_floor, plain and --split), counted by the simulated libnvidia-ml.so.1
# (NVMLX_SIMGPU_CALL_LOG): a count does not drift with the machine, as the CPU of the same calls
# does on a GPU host (docs/benchmarks.md "Performance round", the default-file row). Each tool's
# counts are divided by its own rounds (its nvmlDeviceGetTemperature calls per GPU: one per sweep
# or collection in both), so one-time calls (identity, event registration) show as fractions.
# Usage: bench/nvml_calls.sh [build-dir] [collectors.csv] [seconds]
set -euo pipefail
src="$(cd "$(dirname "$0")/.." && pwd)"
build="$(realpath "${1:-build}")"
csv="$(realpath "${2:-$src/etc/default-counters.csv}")"
secs="${3:-20}"
. "$src/bench/lib.sh"
sim="$build/simgpu/libnvidia-ml.so.1"
NVMLX_SIMGPU_CALL_LOG="$work/floor" "$build/bench/nvml_floor" -f "$csv" -n "$secs" -c 200 \
  --nvml-library "$sim" >/dev/null
NVMLX_SIMGPU_CALL_LOG="$work/split" "$build/bench/nvml_floor" -f "$csv" -n "$secs" -c 200 \
  --split --nvml-library "$sim" >/dev/null
p=$(port)
NVMLX_SIMGPU_CALL_LOG="$work/daemon" "$build/src/app/nvml-exporter" -f "$csv" -c 1000 \
  --fake-gpus -a "127.0.0.1:$p" >/dev/null 2>"$work/daemon.log" &
pid=$!
pids+=("$pid")
wait_up "http://127.0.0.1:$p/ready"
sleep "$secs"
kill -TERM "$pid"
wait "$pid" || true
python3 - "$work/floor" "$work/split" "$work/daemon" <<'PY'
import sys
def load(path):
    counts = dict(line.rsplit(" ", 1) for line in open(path).read().splitlines())
    counts = {k: int(v) for k, v in counts.items()}
    return counts, max(1, counts.get("nvmlDeviceGetTemperature", 1))
tables = [load(p) for p in sys.argv[1:]]
keys = sorted(set().union(*(t[0] for t in tables)))
print("| call (per GPU and round) | floor | floor --split | daemon |")
print("|---|---|---|---|")
for k in keys:
    per = [t[0].get(k, 0) / t[1] for t in tables]
    mark = " **more**" if per[2] > per[1] + 0.2 else ""
    print(f"| `{k}` | {per[0]:.2f} | {per[1]:.2f} | {per[2]:.2f}{mark} |")
print(f"\nnvmlDeviceGetTemperature calls (rounds x GPUs): floor {tables[0][1]}, floor --split {tables[1][1]}, daemon {tables[2][1]}")
PY

#!/usr/bin/env bash
# Time from `make run` in a fresh clone to the first successful GET /metrics on :9400, the
# newcomer's first experience. Usage: bench/first_metrics.sh [REV] (default HEAD). Clones REV
# into a temporary folder (no build tree, no ccache), runs `make run` there, polls /metrics once
# a second, prints the seconds, then stops the daemon. Dependencies already installed by
# scripts/install-deps.sh are not counted unless missing.
#
# bench/first_metrics.sh --daemon [BUILD] [RUNS]: the daemon's own start-up instead, on 8 simulated
# GPUs (etc/dcp-metrics-included.csv, -c 1000), RUNS times (5): milliseconds from exec to the
# first /metrics answer and to the first complete page (every family of the steady page, the
# GPM ones included; bench/gpu_bench.py). BEFORE_BIN=<another build's daemon> alternates with it.
set -euo pipefail
src="$(cd "$(dirname "$0")/.." && pwd)"
if [ "${1:-}" = --daemon ]; then
  build="$(cd "${2:-build}" && pwd)"
  runs="${3:-5}"
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  export NVMLX_SIMGPU_SCENARIO="${NVMLX_SIMGPU_SCENARIO:-$src/testdata/scenarios/eight_gpus.yaml}"
  specs=()
  for _ in $(seq "$runs"); do
    specs+=(--daemon "after=$build/src/app/nvml-exporter:$src/etc/dcp-metrics-included.csv:1000:0")
    if [ -n "${BEFORE_BIN:-}" ]; then
      specs+=(--daemon "before=$BEFORE_BIN:$src/etc/dcp-metrics-included.csv:1000:0")
    fi
  done
  python3 "$src/bench/gpu_bench.py" --out "$work" --floor none --no-floor --scrapes 0 \
    --nvml-library "$build/simgpu/libnvidia-ml.so.1" "${specs[@]}" >/dev/null
  python3 - "$work/gpu-bench.json" <<'PY'
import json, statistics, sys
r = json.load(open(sys.argv[1]))
for label in ("before", "after"):
    d = [x for x in r["daemons"] if x["label"] == label]
    if d:
        a = statistics.median(x["first_answer_ms"] for x in d)
        c = statistics.median(x["first_complete_ms"] for x in d)
        print(f"first_metrics: {label}: median of {len(d)}: first /metrics {a:.0f} ms, "
              f"first complete page (GPM included) {c:.0f} ms")
PY
  exit 0
fi
rev="${1:-HEAD}"
if curl -sf -o /dev/null localhost:9400/metrics; then
  echo "first_metrics: something already serves :9400" >&2
  exit 1
fi
dir="$(mktemp -d)"
pgid=""
# make run execs the daemon in its own session (setsid): stopping that group stops it.
trap '[ -n "$pgid" ] && kill -- "-$pgid" 2>/dev/null; sleep 1; rm -rf "$dir" "$dir.log"' EXIT
git clone -q "$src" "$dir"
git -C "$dir" checkout -q "$rev"
start=$(date +%s.%N)
setsid bash -c 'cd "$1" && exec make run' _ "$dir" >"$dir.log" 2>&1 &
pgid=$!
until curl -sf -o /dev/null localhost:9400/metrics; do
  if ! kill -0 "$pgid" 2>/dev/null; then
    echo "first_metrics: make run exited:" >&2
    tail -20 "$dir.log" >&2
    exit 1
  fi
  sleep 1
done
end=$(date +%s.%N)
steps=$(grep -c '^\[[0-9]*/[0-9]*\]' "$dir.log" || true)
printf 'first_metrics: %s: %.0f s to the first /metrics (%s build steps)\n' \
  "$(git -C "$dir" log --oneline -1)" "$(awk -v a="$start" -v b="$end" 'BEGIN{print b - a}')" "$steps"

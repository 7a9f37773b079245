#!/usr/bin/env bash
# bench/collect_overhead.sh: our own CPU per collection on 8 simulated GPUs, i.e. the daemon's CPU
# per collection minus the NVML floor's (bench/nvml_floor: the same file's NVML calls) measured
# in the same run. The simulated calls cost microseconds, so the difference is what the daemon
# adds: threads, snapshot, render, gzip, Xid watcher. With BEFORE_BIN (another build of the
# daemon, e.g. main's) the same runs of that build too, alternating, for a before/after.
# Writes the "Collection overhead" section of docs/benchmarks.md with --write.
# Usage: bench/collect_overhead.sh [BUILD] [--write]
#   SECONDS_SLOW (61, at -c 1000) and SECONDS_FAST (10, at -c 100): measuring windows.
set -euo pipefail
build="${1:-build}"
write="${2:-}"
src="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export NVMLX_SIMGPU_SCENARIO="${NVMLX_SIMGPU_SCENARIO:-$src/testdata/scenarios/eight_gpus.yaml}"
daemon="$build/src/app/nvml-exporter"
slow="${SECONDS_SLOW:-61}"
fast="${SECONDS_FAST:-10}"
specs=()
for csv in dcp-metrics-included.csv default-counters.csv; do
  for c in 1000 100; do
    secs=$([ "$c" = 1000 ] && echo "$slow" || echo "$fast")
    specs+=(--daemon "after=$daemon:$src/etc/$csv:$c:$secs")
    if [ -n "${BEFORE_BIN:-}" ]; then specs+=(--daemon "before=$BEFORE_BIN:$src/etc/$csv:$c:$secs"); fi
  done
done
python3 "$src/bench/gpu_bench.py" --out "$work" --floor "$build/bench/nvml_floor" \
  --nvml-library "$build/simgpu/libnvidia-ml.so.1" --floor-sweeps 100 --scrapes 0 \
  "${specs[@]}" >/dev/null
python3 - "$work/gpu-bench.json" "$src/docs/benchmarks.md" "$write" "${BEFORE_LABEL:-}" <<'PY'
import json, re, sys, datetime
res, doc, write, before_label = sys.argv[1:5]
r = json.load(open(res))
rows = ["| file | -c ms | collections | floor ms / sweep | build | CPU ms / collection | "
        "our overhead ms | ratio to floor |", "|---|---|---|---|---|---|---|---|"]
for d in r["daemons"]:
    fl = d["floor_ms"]  # the mean of a floor run just before and one just after this daemon
    name = d["label"] if d["label"] != "before" or not before_label else f"before ({before_label})"
    rows.append(f"| {d['csv']} | {d['interval_ms']} | {d['collections']} | {fl:.3f} | {name} | "
                f"{d['cpu_ms_per_collection']:.3f} | {d['cpu_ms_per_collection'] - fl:.3f} | "
                f"{d['cpu_ms_per_collection'] / fl:.1f} |")
sec = ["## Collection overhead (`bench/collect_overhead.sh`)", "",
       f"Measured by `make bench` on {datetime.date.today()}: 8 simulated GPUs (`eight_gpus.yaml`, "
       "GPM on), the daemon's CPU per collection (its threads' run time from "
       "`/proc/<pid>/task/*/schedstat` over the window, no scrapes) against `bench/nvml_floor` "
       "on the same file in the same run (the file's NVML calls and one GPM sample per GPU, "
       "back to back at 100 ms). The simulated calls cost microseconds, so the difference "
       "(\"our overhead\") is what the daemon itself adds per collection: waking the per-GPU "
       "readers, the snapshot, the render and gzip of the page, the Xid watcher's waits "
       "(500 ms each, so they weigh more at `-c 100`). The ratio is large here because the "
       "simulated floor is tiny; on an H200 the same daemon is at 1.09x its floor "
       "([validation/h200-bench.md](validation/h200-bench.md)).", ""] + rows + ["",
       "Where the overhead goes (`perf record` of the daemon at `-c 100`, 8 GPUs): about half in "
       "the kernel's futex wait/wake and task switch, i.e. waking the per-GPU readers (one fast "
       "and one slow reader per GPU, about 18 wake-ups per collection), which is the price of "
       "isolating a hung call to its GPU (docs/faults.md); the rest in the render, gzip and "
       "the readers' own bookkeeping, a few percent each. What was removed (issue 15): the slow "
       "loop, which woke at the same instant as the fast one and made each GPU's slow and fast "
       "reads overlap (on the H200 the overlap cost 9 ms of CPU per collection: "
       "[validation/h200-bench.md](validation/h200-bench.md)); one wake-up of the collecting "
       "thread per GPU answer (now one per round); zlib's per-page stream set-up and level 6 "
       "(now one stream, level 1: on the 8-GPU page of 48 KiB, zlib at level 1 took 0.05-0.08 ms against 0.18-0.23 ms at level 6 in one run, for 3355 against 3080 bytes); the main thread's wake-up every second.", ""]
text = "\n".join(sec)
print(text)
if write == "--write":
    doc_text = open(doc).read()
    doc_text = re.sub(r"## Collection overhead.*?(?=\n## |\Z)", "", doc_text, flags=re.S).rstrip()
    open(doc, "w").write(doc_text + "\n\n" + text)
PY

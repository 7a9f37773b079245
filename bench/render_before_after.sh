#!/usr/bin/env bash
# The Prometheus render of two revisions, in the same run: bench/render_bench of BASE (default
# 9085134, the tree before the shared series model) and of the working tree, on the same
# machine, alternating. Usage: bench/render_before_after.sh [BASE] [--write]
#   BASE is cloned into a temporary folder and only its render_bench target is built there
#   (RelWithDebInfo, as make build); the working tree's comes from $BUILD (default build).
#   Each binary runs ROUNDS times (default 5), alternating, BM_RenderPrometheus and the naive
#   baseline of the same binary; the median time per series of each is reported. The naive
#   renderer's code did not change between the two, so its ratio tells how far the machine
#   itself drifted during the run.
#   --write replaces the "Prometheus render before/after" section of docs/benchmarks.md.
# Not a test: numbers are reported, never asserted.
set -euo pipefail
base="9085134"
write=0
for a in "$@"; do
  case "$a" in
    --write) write=1 ;;
    *) base="$a" ;;
  esac
done
src="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD:-$src/build}"
rounds="${ROUNDS:-5}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

git clone -q "$src" "$work/base"
git -C "$work/base" checkout -q "$base"
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S "$work/base" -B "$work/base/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "${launcher[@]}" >"$work/base-cmake.log"
cmake --build "$work/base/build" --target render_bench -j "$(nproc)" >"$work/base-build.log"
cmake --build "$build" --target render_bench -j "$(nproc)" >"$work/head-build.log"

filter='BM_RenderPrometheus/|BM_NaiveOstreamRender/'
for r in $(seq "$rounds"); do
  for side in base head; do
    bin="$build/bench/render_bench"
    [ "$side" = base ] && bin="$work/base/build/bench/render_bench"
    "$bin" --benchmark_filter="$filter" --benchmark_format=json --benchmark_min_time=0.3 \
      >"$work/$side.$r.json" 2>/dev/null
  done
done

python3 - "$work" "$rounds" "$base" "$(git -C "$src" rev-parse --short HEAD)" "$write" \
  "$src/docs/benchmarks.md" <<'PY'
import json, statistics, sys, datetime, re
work, rounds, base, head, write, doc = sys.argv[1:7]
def runs(side):
    per = {}
    for r in range(1, int(rounds) + 1):
        for b in json.load(open(f"{work}/{side}.{r}.json"))["benchmarks"]:
            per.setdefault(b["name"], []).append(b["real_time"] / b["series"])
    return {k: statistics.median(v) for k, v in per.items()}
b, h = runs("base"), runs("head")
args = sorted({n.split("/")[1] for n in b if n.startswith("BM_RenderPrometheus/")}, key=int)
lines = [
    "## Prometheus render before/after (`bench/render_before_after.sh`)",
    "",
    f"Measured on {datetime.date.today()} by `bench/render_before_after.sh {base} --write`: "
    f"`BM_RenderPrometheus` (a whole Snapshot to the text page, as the daemon runs it: after, into a series model kept across collections) of `{base}` (before the shared "
    f"series model) and of `{head}`, built alike and run alternately, {rounds} rounds each, "
    "median ns per series. The naive renderer's code is the same in both binaries: its ratio "
    "shows the machine's own drift during the run.",
    "",
    "| GPUs | before ns/series | after ns/series | ratio (after/before) | naive ratio (after/before) |",
    "|---|---|---|---|---|",
]
for a in args:
    p, n = f"BM_RenderPrometheus/{a}", f"BM_NaiveOstreamRender/{a}"
    lines.append(f"| {a} | {b[p]:.1f} | {h[p]:.1f} | {h[p] / b[p]:.2f} | {h[n] / b[n]:.2f} |")
odd = [a for a in args
       if abs(h[f"BM_NaiveOstreamRender/{a}"] / b[f"BM_NaiveOstreamRender/{a}"] - 1) > 0.10]
if odd:
    lines += ["", f"At {', '.join(odd)} GPU(s) the naive renderer, the same code in both binaries, "
              "differs by more than 10% between them: part of that row's ratio is the binaries' "
              "layout (data types, allocation pattern), not the renderer."]
section = "\n".join(lines) + "\n"
print(section)
if write == "1":
    text = open(doc).read()
    pat = re.compile(r"## Prometheus render before/after.*?(?=\n## |\Z)", re.S)
    if pat.search(text):
        text = pat.sub(lambda m: section.rstrip("\n") + "\n", text, count=1)
    else:
        # After the rendering section, which it qualifies.
        i = text.find("\n## ", text.find("## Rendering"))
        text = text[:i + 1] + section + "\n" + text[i + 1:] if i >= 0 else text + "\n" + section
    open(doc, "w").write(text)
PY

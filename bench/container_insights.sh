#!/usr/bin/env bash
# --emf-schema container-insights: what one collection's documents cost at 8 GPUs and 500 pods
# (bench/container_insights_bench.cc), against the Prometheus page of the same snapshot rendered
# in the same run (the baseline); also with no pods, and the per-collection cost of
# --emf-histograms. Median of 5 repetitions; reported, never asserted.
# Usage: bench/container_insights.sh [build-dir] [--write]   (--write replaces the "## Container
# Insights EMF" section of docs/benchmarks.md; otherwise the section goes to stdout).
set -euo pipefail
build="${1:-build}"
write="${2:-}"
src="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$build/bench/container_insights_bench" --benchmark_format=json --benchmark_min_time=0.3 \
  --benchmark_repetitions=5 --benchmark_report_aggregates_only=true >"$work/ci.json"
PYTHONPATH="$src/bench" python3 - "$work/ci.json" "$src/docs/benchmarks.md" "$write" <<'PY'
import json, sys, datetime
from doc_section import publish
res, doc, write = sys.argv[1:4]
b = {x["name"]: x for x in json.load(open(res))["benchmarks"] if x.get("aggregate_name") == "median"}
def get(name, pods):
    x = b[f"{name}/{pods}_median"]
    us = x["real_time"] * {"ns": 1e-3, "us": 1.0, "ms": 1e3}[x["time_unit"]]
    return us, x
rows = []
for pods in (0, 500):
    prom, p = get("BM_PrometheusPage", pods)
    ci, c = get("BM_ContainerInsights", pods)
    hist, _ = get("BM_ContainerInsightsHistogramSample", pods)
    rows.append(f"| {pods} | {prom:.1f} | {p['bytes']/1024:.0f} | {ci:.1f} | {c['documents']:.0f} | "
                f"{c['bytes']/1024:.0f} | {ci/prom:.2f} | {hist:.1f} | {hist/prom:.2f} |")
sec = "\n".join([
    "## Container Insights EMF (`bench/container_insights_bench.cc`)", "",
    f"Measured by `bench/container_insights.sh` on {datetime.date.today()} (Google Benchmark, "
    "wall time, median of 5). One collection of 8 GPUs with the Container Insights fields "
    "(`etc/container-insights.csv`); 500 pods time-slice them (one container and one GPU process "
    "each, their GPU requests and limits, the Node's capacity), so each pod's events carry its "
    "own share. The baseline is the Prometheus page of the same snapshot (per-pod families on), "
    "rendered in the same run.", "",
    "| pods | Prometheus page µs | page KiB | Container Insights µs | documents | KiB | ratio | "
    "histogram sample µs | ratio |",
    "|---|---|---|---|---|---|---|---|---|",
    *rows, "",
    "Both run once per collection on the publish path, never in a scrape; sending is on each "
    "sink's thread. With `--emf-histograms` a collection inside a period only adds its samples "
    "to the distributions; the documents go once per period.", ""])
publish(doc, "## Container Insights EMF", sec, write)
PY

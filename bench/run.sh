#!/usr/bin/env bash
# make bench: measures nvml-exporter and a baseline in the same run, on this machine, and writes
# docs/benchmarks.md. Not a test: numbers are reported, never asserted.
#   1. render time per series (Google Benchmark, bench/render_bench), against a naive
#      ostringstream renderer of the same series in the same binary (the baseline);
#   2. /metrics latency and throughput under wrk, 8 simulated GPUs, against Debian's
#      prometheus-node-exporter (a typical Go exporter) serving its own /metrics;
#   3. resident memory (VmRSS) of both after the load;
#   4. the EMF renderer on the same snapshots as the Prometheus renderer, in the same run
#      (per series, per document, and the ratio to the Prometheus renderer).
#   5. the Kubernetes attribution section (bench/kubelet.sh: -k against the fake kubelet);
#   6. the Prometheus render of this tree against 9085134, before the shared series model
#      (bench/render_before_after.sh);
#   7. the live page's history memory against its bound, and its per-collection and per-request
#      costs against the /metrics render (bench/live_bench).
#   8. resident memory above the simulator's nvmlInit baseline: plain, -k with 500 pods, EMF,
#      TLS (bench/rss.sh; RSS_BEFORE_BUILD=<dir> adds another build's numbers).
#   9. our CPU per collection minus the NVML floor's on 8 simulated GPUs (bench/collect_overhead.sh;
#      BEFORE_BIN=<another build> adds a before/after);
#  10. scaling: 1, 8, 64 GPUs and 0..5000 pods, with a plot (bench/scaling.sh);
#  11. the Container Insights EMF schema per collection (bench/container_insights.sh);
#  12. a scraper's success and latency under slowloris, a password storm and a rewrite storm,
#      beside unattacked runs (bench/adversarial.sh).
set -euo pipefail
build="${1:-build}"
src="$(cd "$(dirname "$0")/.." && pwd)"
out="$src/docs/benchmarks.md"
. "$src/bench/lib.sh"  # $work, $pids, port, wait_up
duration="${BENCH_SECONDS:-10}"
conns="${BENCH_CONNECTIONS:-16}"

"$build/bench/render_bench" --benchmark_format=json --benchmark_min_time=0.5 >"$work/render.json"

p1=$(port)
"$build/src/app/nvml-exporter" --fake-gpus --fake-gpus-scenario "$src/testdata/scenarios/eight_gpus.yaml" \
  -f "$src/etc/dcp-metrics-included.csv" -c 1000 -a "127.0.0.1:$p1" 2>"$work/exporter.log" &
pids+=($!); exporter_pid=$!
wait_up "http://127.0.0.1:$p1/metrics"
p2=$(port)
prometheus-node-exporter --web.listen-address="127.0.0.1:$p2" >"$work/node.log" 2>&1 &
pids+=($!); node_pid=$!
wait_up "http://127.0.0.1:$p2/metrics"

run_wrk() {  # url name connections threads
  wrk -t"$4" -c"$3" -d"${duration}s" --latency "$1" >"$work/$2.wrk"
}
# One connection is how Prometheus scrapes (latency); many show throughput.
run_wrk "http://127.0.0.1:$p1/metrics" ours1 1 1
run_wrk "http://127.0.0.1:$p2/metrics" node1 1 1
run_wrk "http://127.0.0.1:$p1/metrics" ours "$conns" 2
run_wrk "http://127.0.0.1:$p2/metrics" node "$conns" 2
curl -fsS "http://127.0.0.1:$p1/metrics" >"$work/ours.body"
curl -fsS "http://127.0.0.1:$p2/metrics" >"$work/node.body"
rss() { awk '/VmRSS/ {print $2}' "/proc/$1/status"; }
ours_rss=$(rss "$exporter_pid"); node_rss=$(rss "$node_pid")

python3 - "$work" "$out" "$ours_rss" "$node_rss" "$duration" "$conns" <<'PY'
import json, re, sys, subprocess, datetime, platform
work, out, ours_rss, node_rss, duration, conns = sys.argv[1:7]
def wrk(name):
    t = open(f"{work}/{name}.wrk").read()
    def lat(p):
        m = re.search(rf"^\s+{p}%\s+([\d.]+)(us|ms|s)\s*$", t, re.M)
        v, u = float(m.group(1)), m.group(2)
        return v * {"us": 1e-3, "ms": 1.0, "s": 1e3}[u]
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", t).group(1))
    return {"p50": lat(50), "p99": lat(99), "rps": rps}
ours, node = wrk("ours"), wrk("node")
ours1, node1 = wrk("ours1"), wrk("node1")
series = lambda f: sum(1 for l in open(f, errors="replace") if l and not l.startswith("#"))
ours_series, node_series = series(f"{work}/ours.body"), series(f"{work}/node.body")
render = json.load(open(f"{work}/render.json"))["benchmarks"]
rb = {b["name"]: b for b in render}
def per_series(name):
    b = rb[name]
    # Google Benchmark writes user counters as top-level keys; real_time is in ns here.
    return b["real_time"] / b["series"]
rows = []
for name in sorted(n for n in rb if n.startswith("BM_RenderPrometheus/")):
    base = name.replace("BM_RenderPrometheus", "BM_NaiveOstreamRender")
    if base in rb:
        rows.append((name.split("/")[1], per_series(name), per_series(base)))
cpu = subprocess.run(["sh", "-c", "grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"], capture_output=True, text=True).stdout.strip()
with open(out, "w") as f:
    f.write("# Benchmarks\n\n")
    f.write(f"Measured by `make bench` (bench/run.sh) on {datetime.date.today()}, {platform.machine()}, "
            f"{cpu}, `nproc`={subprocess.run(['nproc'],capture_output=True,text=True).stdout.strip()}. "
            "Each figure is a ratio against a baseline measured in the same run; absolute numbers are "
            "for this machine only.\n\n")
    f.write("## Rendering (Google Benchmark, `bench/render_bench.cc`)\n\n")
    f.write("Time per series to render a whole Snapshot (default + DCP counters), ours against a naive "
            "`std::ostringstream` renderer of the same series (the shape of a template renderer).\n\n")
    f.write("| GPUs | ours ns/series | naive ns/series | ratio (ours/naive) |\n|---|---|---|---|\n")
    for gpus, a, b in rows:
        f.write(f"| {gpus} | {a:.1f} | {b:.1f} | {a/b:.2f} |\n")
    f.write("\n## EMF rendering (same binary, same snapshots, same run)\n\n")
    f.write("`BM_RenderEmfAll`: every metric selected (the same series as the Prometheus page, one "
            "document per GPU label set); `BM_RenderEmfDefaultRules`: the built-in selection (15 of "
            "the 24 fields per GPU, two dimension sets). Time per metric sent and per document, and "
            "the ratio of EMF to the Prometheus renderer per series. `BM_BuildSeries` is the shared "
            "snapshot-to-series step inside every EMF render.\n\n")
    f.write("| GPUs | Prometheus ns/series | EMF all ns/series | ratio (EMF/Prometheus) | EMF all ns/document "
            "| EMF built-in ns/series | EMF built-in ns/document | series step ns/series |\n"
            "|---|---|---|---|---|---|---|---|\n")
    for name in sorted(n for n in rb if n.startswith("BM_RenderPrometheus/")):
        g = name.split("/")[1]
        a, d, s_ = rb.get(f"BM_RenderEmfAll/{g}"), rb.get(f"BM_RenderEmfDefaultRules/{g}"), rb.get(f"BM_BuildSeries/{g}")
        if not (a and d and s_):
            continue
        prom = per_series(name)
        f.write(f"| {g} | {prom:.1f} | {per_series(a['name']):.1f} | {per_series(a['name'])/prom:.2f} | "
                f"{a['real_time']/a['documents']:.0f} | {per_series(d['name']):.1f} | "
                f"{d['real_time']/d['documents']:.0f} | {per_series(s_['name']):.1f} |\n")
    f.write("\nEMF rendering runs once per collection on the collector's publish path (sending is on "
            "each sink's own thread); at 8 GPUs it is tens of microseconds per collection.\n")
    f.write(f"\n## `/metrics` under wrk ({duration} s per run)\n\n")
    f.write("Ours: 8 simulated GPUs, `etc/dcp-metrics-included.csv`, collecting every 1 s. Baseline: "
            "Debian's `prometheus-node-exporter` 1.5 (Go, client_golang) on the same machine, default collectors.\n\n")
    f.write("One connection (how Prometheus scrapes: latency) and "
            f"{conns} connections on 2 wrk threads (throughput).\n\n")
    f.write("| | series | p50 ms (1 conn) | p99 ms (1 conn) | p99 ms ({0} conns) | requests/s ({0} conns) | RSS MiB |\n"
            "|---|---|---|---|---|---|---|\n".format(conns))
    f.write(f"| nvml-exporter | {ours_series} | {ours1['p50']:.3f} | {ours1['p99']:.3f} | {ours['p99']:.3f} | {ours['rps']:.0f} | {int(ours_rss)/1024:.1f} |\n")
    f.write(f"| node-exporter (baseline) | {node_series} | {node1['p50']:.3f} | {node1['p99']:.3f} | {node['p99']:.3f} | {node['rps']:.0f} | {int(node_rss)/1024:.1f} |\n")
    f.write(f"| ratio (ours/baseline) | {ours_series/node_series:.2f} | {ours1['p50']/node1['p50']:.4f} | {ours1['p99']/node1['p99']:.4f} | "
            f"{ours['p99']/node['p99']:.4f} | {ours['rps']/node['rps']:.0f} | {int(ours_rss)/int(node_rss):.2f} |\n\n")
    f.write("Targets of issue 2: p99 under 1 ms, at least 10 000 scrapes/s on 2 cores, RSS under 20 MiB.\n"
            "wrk shares the 2 cores with the server, so throughput is a lower bound and the many-connection "
            "p99 includes queueing behind wrk itself. The baseline does real work per scrape (it reads /proc "
            "and /sys on every request); ours serves a page rendered once per collection, which is the point "
            "of the design. RSS here is on simulated GPUs; with the real driver loaded it was 25.8 MiB on the "
            "H200 (docs/validation/h200.md).\n")
print(open(out).read())
PY
# The Kubernetes attribution section (its own script, so that it can be rerun alone).
bash "$src/bench/kubelet.sh" "$build" --write
# The resident-memory section (likewise).
bash "$src/bench/rss.sh" "$build" --write
# --emf-schema container-insights at 8 GPUs and 500 pods against the Prometheus page (likewise).
bash "$src/bench/container_insights.sh" "$build" --write
# A scraper under attack (hardening round two) beside the same scraper unattacked (likewise).
bash "$src/bench/adversarial.sh" "$build" --write
# The process-attribution section: cgroup parsing, attributor passes, and the render with
# per-pod families against the same render with them off (the baseline), in the same binary.
"$build/bench/attribution_bench" --benchmark_format=json --benchmark_min_time=0.3 \
  >"$work/attribution.json"
python3 - "$work/attribution.json" "$out" <<'PY'
import json, re, sys, datetime
res, doc = sys.argv[1:3]
b = {x["name"]: x for x in json.load(open(res))["benchmarks"]}
us = lambda n: b[n]["real_time"] / 1000.0 if b[n]["time_unit"] == "ns" else b[n]["real_time"]
off, on = us("BM_RenderPerPod/0"), us("BM_RenderPerPod/1")
sec = ["## Process attribution (`bench/attribution_bench.cc`)", "",
       f"Measured by `make bench` on {datetime.date.today()} (Google Benchmark, wall time). "
       "The render rows are a whole page of 8 GPUs, each shared by 4 pods with 2 processes, "
       "GPU_UTIL and FB_USED enabled; the baseline is the same render with the per-pod "
       "families off, in the same run.", "",
       "| | µs | ratio |", "|---|---|---|",
       f"| parse one /proc/<pid>/cgroup | {us('BM_ParseCgroupFile'):.3f} | |",
       f"| attributor pass, 7 PIDs, cold (stat + cgroup reads) | {us('BM_AttributorPassCold'):.1f} | |",
       f"| attributor pass, 7 PIDs, cached | {us('BM_AttributorPassWarm'):.1f} | |",
       f"| render, per-pod families off (baseline) | {off:.1f} | 1.00 |",
       f"| render, per-pod families on | {on:.1f} | {on/off:.1f} |", "",
       "The attributor runs on its own thread once per collection, never in a scrape; the render "
       "runs once per collection too, so the scrape path is unchanged.", ""]
text = open(doc).read()
text = re.sub(r"## Process attribution.*?(?=\n## |\Z)", "", text, flags=re.S).rstrip() + "\n\n"
open(doc, "w").write(text + "\n".join(sec))
print("\n".join(sec))
PY
# The live page: history memory against its bound, and what it costs per collection and per
# request against the /metrics render of the same snapshot (the baseline), in the same binary.
"$build/bench/live_bench" --benchmark_format=json --benchmark_min_time=0.3 >"$work/live.json"
python3 - "$work/live.json" "$out" <<'PY'
import json, re, sys, datetime
res, doc = sys.argv[1:3]
b = {x["name"]: x for x in json.load(open(res))["benchmarks"]}
def us(n):
    x = b[n]
    return x["real_time"] * {"ns": 1e-3, "us": 1.0, "ms": 1e3}[x["time_unit"]]
sec = ["## Live page (`bench/live_bench.cc`)", "",
       f"Measured by `make bench` on {datetime.date.today()} (Google Benchmark, wall time). "
       "History of 15 minutes at a 1 s interval (901 points per GPU), filled twice over so that "
       "every ring has wrapped. Heap is glibc's allocated bytes (`mallinfo2`) after the fill "
       "minus before; the bound is GPUs x `History::BytesPerDevice()`.", "",
       "| GPUs | bytes per GPU | bound (bytes) | heap held (bytes) | ratio heap/bound |",
       "|---|---|---|---|---|"]
for g in (1, 8, 64):
    x = b[f"BM_HistoryMemory/{g}/iterations:1"]
    sec.append(f"| {g} | {x['bytes_per_gpu']:.0f} | {x['bound_bytes']:.0f} | {x['heap_bytes']:.0f} | "
               f"{x['ratio']:.3f} |")
sec += ["", "The ratio above 1 is the map node and key of each GPU's ring (about 180 bytes); it does "
        "not grow with time.", "",
        "| per | 1 GPU µs | 8 GPUs µs | 8 GPUs ratio to the /metrics render |", "|---|---|---|---|"]
base = us("BM_PrometheusPage/8")
for label, name in [("/metrics page render (baseline), per collection", "BM_PrometheusPage"),
                    ("history point added, per collection", "BM_HistoryAdd"),
                    ("snapshot document rendered, per collection", "BM_SnapshotJson"),
                    ("/api/v1/history?minutes=15 answered, per request", "BM_HistoryRequest"),
                    ("/api/v1/history?since= (the page's poll), per request", "BM_HistoryPoll")]:
    sec.append(f"| {label} | {us(name + '/1'):.2f} | {us(name + '/8'):.2f} | {us(name + '/8') / base:.2f} |")
body = b["BM_HistoryRequest/8"]["body_bytes"]
sec += ["", f"A full history answer for 8 GPUs is {body / 1024:.0f} KiB. None of these runs on the "
        "/metrics path: the first three on the collector's thread, the last two on an HTTP thread "
        "for the page's own requests: a whole window when it loads, then only the new points.", ""]
text = open(doc).read()
text = re.sub(r"## Live page.*?(?=\n## |\Z)", "", text, flags=re.S).rstrip() + "\n\n"
open(doc, "w").write(text + "\n".join(sec))
print("\n".join(sec))
PY
# The Prometheus render against the tree before the shared series model (issue 10), in the same
# run: builds that revision's render_bench in a temporary clone.
BUILD="$build" bash "$src/bench/render_before_after.sh" --write
# Our own CPU per collection against the NVML floor, and the scaling table and plot.
bash "$src/bench/collect_overhead.sh" "$build" --write
bash "$src/bench/scaling.sh" "$build" --write

#!/usr/bin/env bash
# make demo on a machine with a GPU: scripts/demo.sh must take the driver's NVML (not the
# simulated GPUs), Prometheus must scrape the real GPUs with our rules loaded, every query of
# dcgm-exporter's dashboard (grafana.com 12239; testdata/compat/dcgm-exporter-dashboard-queries.txt)
# must return data for them, and Ctrl-C must stop everything. gpu-pulse (bundle/gpu-pulse, when
# present) loads GPU 0 meanwhile.
# Needs, on the GPU machine: BUILD_DIR (default build) with nvml-exporter and kubelet_fixture
# (`make demo` builds them), and Debian's prometheus. Nothing here changes GPU settings.
#   BUILD_DIR=build SCRAPE_SECONDS=20 bash test/gpu/demo_gpu.sh
set -euo pipefail
BUILD_DIR="${BUILD_DIR:-build}"
SCRAPE_SECONDS="${SCRAPE_SECONDS:-20}"
src="$(cd "$(dirname "$0")/../.." && pwd)"
fail() { echo "FAIL: $*" >&2; exit 1; }
[ -e /dev/nvidia0 ] || fail "no /dev/nvidia0: run this on the GPU machine"
log="$(mktemp)"
export DEMO_EXPORTER_PORT="${DEMO_EXPORTER_PORT:-19400}" DEMO_PROMETHEUS_PORT="${DEMO_PROMETHEUS_PORT:-19090}"
python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.setsid()
os.execvp("bash", ["bash"] + sys.argv[1:])' "$src/scripts/demo.sh" "$BUILD_DIR" >"$log" 2>&1 &
demo=$!
trap 'kill -TERM -- -$demo 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 600); do grep -q 'demo is running' "$log" && break; kill -0 $demo 2>/dev/null || break; sleep 0.1; done
grep -q 'demo is running' "$log" || { cat "$log" >&2; fail "demo did not start"; }
grep -q "NVIDIA GPU found: using the driver's libnvidia-ml.so.1" "$log" || { cat "$log" >&2; fail "demo did not take the GPU"; }
pulse=""
if [ -x bundle/gpu-pulse ]; then
  bundle/gpu-pulse --on 5s --off 5s --duration "$((SCRAPE_SECONDS + 10))s" --gpus 0 >/dev/null 2>&1 &
  pulse=$!
fi
sleep "$SCRAPE_SECONDS"
python3 - "http://127.0.0.1:$DEMO_PROMETHEUS_PORT" "$src" <<'PY'
import json, re, sys, urllib.parse, urllib.request
prom, src = sys.argv[1], sys.argv[2]
def q(expr):
    with urllib.request.urlopen(f"{prom}/api/v1/query?" + urllib.parse.urlencode({"query": expr}), timeout=10) as r:
        return json.load(r)["data"]["result"]
util = q("DCGM_FI_DEV_GPU_UTIL")
assert util, "no DCGM_FI_DEV_GPU_UTIL in Prometheus"
models = sorted({s["metric"]["modelName"] for s in util})
lib = q("nvml_exporter_build_info")[0]["metric"]["nvml_library"]
assert "simgpu" not in lib, f"simulated NVML: {lib}"
exprs = [x for x in open(f"{src}/testdata/compat/dcgm-exporter-dashboard-queries.txt").read().splitlines()
         if x.strip() and not x.startswith("#") and not x.startswith("label_values(")]
assert exprs, "no expressions in testdata/compat/dcgm-exporter-dashboard-queries.txt"
missing = [e for e in exprs if not q(re.sub(r"\$\{?\w+\}?", ".*", e))]
assert not missing, f"dcgm-exporter dashboard queries without data: {missing}"
with urllib.request.urlopen(f"{prom}/api/v1/rules", timeout=10) as r:
    rules = [x for g in json.load(r)["data"]["groups"] for x in g["rules"]]
bad = [(x["name"], x.get("lastError")) for x in rules if x.get("health") != "ok"]
assert len(rules) >= 29 and not bad, bad
print(f"ok: {len(util)} real GPUs ({models}) via {lib}; every dcgm-exporter dashboard query has data; "
      f"{len(rules)} rules healthy")
PY
[ -n "$pulse" ] && { kill "$pulse" 2>/dev/null || true; wait "$pulse" 2>/dev/null || true; }
kill -INT -- -"$demo"
for _ in $(seq 150); do kill -0 $demo 2>/dev/null || break; sleep 0.1; done
kill -0 $demo 2>/dev/null && fail "demo still running after Ctrl-C"
[ -z "$(pgrep -g "$demo" || true)" ] || fail "processes left after Ctrl-C"
echo "demo_gpu: all passed"

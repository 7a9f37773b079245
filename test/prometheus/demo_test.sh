#!/usr/bin/env bash
# make demo's script (scripts/demo.sh) as a user runs it: it starts, prints its URLs, the
# exporter serves simulated GPUs with pod labels, Prometheus scrapes it with our rules loaded and
# an alert firing (the scenario's Xid 94: GpuCriticalXid, its meaning in the annotation); then
# Ctrl-C (SIGINT to its whole process group, as a terminal sends it) stops every process it
# started, frees both ports and removes its files, and it exits 0.
set -euo pipefail
BUILD_DIR="${BUILD_DIR:?}"
SOURCE_DIR="${SOURCE_DIR:?}"
fail() { echo "FAIL: $*" >&2; exit 1; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
log="$(mktemp)"
export DEMO_EXPORTER_PORT="$(free_port)" DEMO_PROMETHEUS_PORT="$(free_port)" DEMO_FORCE_SIMULATED=1
# As a terminal starts it: its own session and process group, SIGINT not ignored (bash ignores
# SIGINT in the commands it starts with &, and a shell cannot trap a signal ignored at entry).
python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.setsid()
os.execvp("bash", ["bash"] + sys.argv[1:])' "$SOURCE_DIR/scripts/demo.sh" "$BUILD_DIR" >"$log" 2>&1 &
demo=$!
pgid=$demo
trap 'kill -TERM -- -$pgid 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 300); do grep -q 'demo is running' "$log" && break; kill -0 $demo 2>/dev/null || break; sleep 0.1; done
grep -q 'demo is running' "$log" || { cat "$log" >&2; fail "demo did not start"; }
[ "$(ps -o pgid= -p $demo | tr -d ' ')" = "$demo" ] || fail "demo.sh does not lead its own process group"
metrics=$(sed -n 's/^  exporter metrics  //p' "$log")
prom=$(sed -n 's|^  Prometheus        \(http://[^/]*\)/graph.*|\1|p' "$log")
dir=$(sed -n 's/.*Logs and data: //p' "$log")
[ -n "$metrics" ] && [ -n "$prom" ] && [ -d "$dir" ] || { cat "$log" >&2; fail "URLs or folder not printed"; }
[ "$(pgrep -g "$pgid" | wc -l)" -ge 5 ] || fail "want demo.sh, kubelet, API server, exporter and prometheus running"

# The per-process shares need two collections and the API server's pod list: poll.
for _ in $(seq 50); do
  page=$(curl -fsS "$metrics")
  grep -q '^nvml_exporter_pod_gpu_sm_utilization_ratio{gpu="1",.*pod="inference-c"' <<<"$page" && break
  sleep 0.2
done
grep -q '^DCGM_FI_DEV_GPU_UTIL{gpu="0",.*namespace="ml",pod="trainer-a"}' <<<"$page" ||
  fail "exporter: no pod labels on GPU 0 (fake kubelet)"
grep -q '^nvml_exporter_pod_gpu_sm_utilization_ratio{gpu="1",.*namespace="serving",pod="inference-c"' <<<"$page" ||
  fail "exporter: no per-process share of serving/inference-c on GPU 1 (fake API server and /proc)"
echo "ok: $metrics serves simulated GPUs with pod labels and per-pod shares"

# Prometheus: the target up, our three rule groups loaded, GpuCriticalXid firing.
python3 - "$prom" <<'PY'
import json, sys, time, urllib.request
prom = sys.argv[1]
def get(path):
    with urllib.request.urlopen(prom + path, timeout=10) as r:
        return json.load(r)["data"]
deadline = time.time() + 30
while True:
    up = get("/api/v1/query?query=up")["result"]
    groups = {g["name"] for g in get("/api/v1/rules")["groups"]}
    alerts = [a for a in get("/api/v1/alerts")["alerts"]
              if a["labels"]["alertname"] == "GpuCriticalXid" and a["state"] == "firing"]
    if up and up[0]["value"][1] == "1" and alerts:
        break
    if time.time() > deadline:
        sys.exit(f"FAIL: up {up}, rule groups {sorted(groups)}, GpuCriticalXid {alerts}")
    time.sleep(0.5)
assert {"nvml-exporter.gpu", "nvml-exporter.self", "nvml-exporter.pods"} <= groups, groups
a = alerts[0]
assert a["labels"]["xid"] == "94" and a["labels"]["gpu"] == "3", a
assert "Xid 94 (Contained ECC error)" in a["annotations"]["description"], a
print(f"ok: {prom}: target up, rule groups {sorted(groups)}, GpuCriticalXid firing: {a['annotations']['description']}")
PY

# Ctrl-C.
kill -INT -- -"$pgid"
for _ in $(seq 150); do kill -0 $demo 2>/dev/null || break; sleep 0.1; done
kill -0 $demo 2>/dev/null && fail "demo still running 15 s after SIGINT"
set +e; wait $demo; rc=$?; set -e
[ "$rc" = 0 ] || { cat "$log" >&2; fail "demo exited $rc after Ctrl-C"; }
left=$(pgrep -g "$pgid" || true)
[ -z "$left" ] || fail "processes left after Ctrl-C: $(ps -o pid,cmd -p "$(tr '\n' ',' <<<"$left" | sed 's/,$//')")"
[ ! -e "$dir" ] || fail "$dir not removed"
curl -s -o /dev/null "$metrics" && fail "exporter port still answers"
curl -s -o /dev/null "$prom/-/ready" && fail "prometheus port still answers"
grep -q 'demo: stopped' "$log" || fail "no 'demo: stopped' line"
echo "ok: Ctrl-C stopped every process, freed both ports, removed $dir; exit 0"
echo "demo_test: all passed"

#!/usr/bin/env bash
# Per-pod GPU usage end to end: simulated processes (testdata/scenarios/processes.yaml), a fake
# host /proc (testdata/proc, via --host-proc-root) and a fake API server over HTTPS
# (fake_apiserver.py with a self-signed certificate made here by the openssl CLI) serving the pods
# of testdata/apiserver/pods_node1.json. Checks that per-pod values sum to each GPU's totals and
# each pod gets its own share, dcgm-exporter's per-pod DCGM series, pod labels and pod_uid, and
# that API server faults (401, bad JSON, dropped watch, 410, server down) and an unreadable proc
# root keep /metrics served with the last good state, count errors and log once per streak.
source "$(dirname "$0")/lib.sh"
CTL="$WORK/ctl"
mkdir -p "$CTL"
echo ok >"$CTL/mode"
start_apiserver

metrics() { curl -fsS "http://127.0.0.1:$port/metrics"; }
# wait_for SECONDS REGEX: until /metrics has a line matching REGEX
wait_for() {
  local secs="$1" re="$2" i
  for ((i = 0; i < secs * 5; i++)); do
    if grep -Eq "$re" <<<"$(metrics 2>/dev/null)"; then return 0; fi
    sleep 0.2
  done
  return 1
}
errors_of() {
  local page
  page=$(metrics)
  sed -n "s/^nvml_exporter_attribution_errors_total{source=\"$1\"} //p" <<<"$page"
}

port=$(free_port)
NODE_NAME=node1 start_exporter "$port" -c 500 --log-format json \
  -f "$SOURCE_DIR/etc/default-counters.csv" \
  --fake-gpus-scenario "$SOURCE_DIR/testdata/scenarios/processes.yaml" \
  --kubernetes-process-metrics --kubernetes-virtual-gpus --host-proc-root "$SOURCE_DIR/testdata/proc" \
  --kubernetes-api-server "https://127.0.0.1:$api_port" --kubernetes-token-file "$WORK/token" \
  --kubernetes-ca-file "$WORK/cert.pem" --kubernetes-enable-pod-uid \
  --kubernetes-enable-pod-labels --kubernetes-pod-label-allowlist-regex '^app,team'
wait_for 15 '^nvml_exporter_pod_gpu_processes\{.*pod="inference-c"' ||
  { metrics | grep nvml_exporter_ >&2; cat "$WORK/exporter.log" >&2; fail "no per-pod series"; }
sleep 1.2  # two more collections: 4999 (exited at 0.3 s) is gone, utilization windows are fresh
metrics >"$WORK/page.txt"
# promtool: parses (exit 0, or 3 for lint only); our families lint-clean (dcgm-exporter's names
# are not: see prometheus_test.sh).
set +e
promtool check metrics <"$WORK/page.txt" >"$WORK/promtool.txt" 2>&1; rc=$?
set -e
[ "$rc" = 0 ] || [ "$rc" = 3 ] || { cat "$WORK/promtool.txt" >&2; fail "promtool cannot parse the page"; }
grep '^nvml_exporter_' "$WORK/promtool.txt" && fail "lint problems in our families"

python3 - "$WORK/page.txt" <<'PY'
import re, sys
from collections import defaultdict
series = []
for line in open(sys.argv[1]):
    m = re.match(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)\{(.*)\} (\S+)$', line.strip())
    if m:
        labels = dict(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"', m.group(2)))
        series.append((m.group(1), labels, float(m.group(3))))
def get(name, **want):
    return [(l, v) for n, l, v in series if n == name and all(l.get(k) == x for k, x in want.items())]
def one(name, **want):
    got = get(name, **want)
    assert len(got) == 1, (name, want, got)
    return got[0][1]
for gpu in ("0", "1"):
    for pod_family, total_family in [
        ("nvml_exporter_pod_gpu_processes", "nvml_exporter_gpu_processes"),
        ("nvml_exporter_pod_gpu_memory_used_bytes", "nvml_exporter_gpu_process_memory_used_bytes"),
        ("nvml_exporter_pod_gpu_sm_utilization_ratio", "nvml_exporter_gpu_process_sm_utilization_ratio"),
    ]:
        pods = sum(v for l, v in get(pod_family, gpu=gpu))
        total = one(total_family, gpu=gpu)
        host = 0.0
        if gpu == "0":  # the host process 4301: 1 process, 1024 MiB, 5 %
            host = {"nvml_exporter_gpu_processes": 1,
                    "nvml_exporter_gpu_process_memory_used_bytes": 1024 << 20,
                    "nvml_exporter_gpu_process_sm_utilization_ratio": 0.05}[total_family]
        assert abs(pods + host - total) < 1e-6, (gpu, pod_family, pods, host, total)
assert one("nvml_exporter_gpu_unattributed_processes", gpu="0") == 1  # host 4301 only
assert one("nvml_exporter_gpu_unattributed_processes", gpu="1") == 0
# Each pod container gets its own share.
main = dict(gpu="0", namespace="ml", pod="trainer-a", container="main")
assert one("nvml_exporter_pod_gpu_processes", **main) == 2            # 4101 and idle 4401
assert one("nvml_exporter_pod_gpu_memory_used_bytes", **main) == (10240 + 512) << 20
assert one("nvml_exporter_pod_gpu_sm_utilization_ratio", **main) == 0.40
side = dict(gpu="0", pod="trainer-a", container="sidecar")
assert one("nvml_exporter_pod_gpu_sm_utilization_ratio", **side) == 0.15
nb = dict(gpu="0", namespace="research", pod="notebook-b", container="notebook")
assert one("nvml_exporter_pod_gpu_sm_utilization_ratio", **nb) == 0.30
assert one("nvml_exporter_pod_gpu_memory_used_bytes", **nb) == 8192 << 20
# The static pod on GPU 1, found through its mirror annotation.
assert one("nvml_exporter_pod_gpu_processes", gpu="1", pod="inference-c", container="server") == 2
# Labels: pod_uid (flag), allowlisted pod labels, sanitised; others not copied.
l = get("nvml_exporter_pod_gpu_processes", **main)[0][0]
assert l["pod_uid"] == "8f1c2d3e-4a5b-6c7d-8e9f-0a1b2c3d4e5f", l
assert l["app_kubernetes_io_name"] == "trainer" and l["team"] == "vision", l
assert "pod_template_hash" not in l, l
# dcgm-exporter's per-pod DCGM series next to the device series.
assert one("DCGM_FI_DEV_GPU_UTIL", gpu="0", pod="trainer-a", container="main") == 40
assert one("DCGM_FI_DEV_FB_USED", gpu="0", pod="notebook-b") == 8192
dev = [x for x in get("DCGM_FI_DEV_GPU_UTIL", gpu="0") if "pod" not in x[0]]
assert len(dev) == 1 and dev[0][1] == 90, dev
assert one("nvml_exporter_attribution_errors_total", source="apiserver") == 0
assert one("nvml_exporter_attribution_errors_total", source="cgroup") == 0  # 4999 exited: no error
print("ok: per-pod shares sum to the GPU totals; labels and DCGM per-pod series as expected")
PY

# A watch event changes a pod's labels.
echo '{"type":"MODIFIED","object":{"kind":"Pod","metadata":{"name":"notebook-b","namespace":"research","uid":"11111111-2222-3333-4444-555555555555","resourceVersion":"1300","labels":{"app":"jupyter-v2"}},"spec":{"nodeName":"node1"},"status":{"containerStatuses":[{"name":"notebook","containerID":"cri-o://bb4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7081911"}]}}}' >"$CTL/event.json"
wait_for 10 '^nvml_exporter_pod_gpu_processes\{.*pod="notebook-b".*app="jupyter-v2"' ||
  fail "watch event not applied"
pass "watch events update pod metadata"

# 410 Gone on the watch: the watcher lists again.
lists_before=$(cat "$CTL/lists")
echo gone >"$CTL/mode"
for _ in $(seq 1 50); do [ "$(cat "$CTL/lists")" -gt "$lists_before" ] && break; sleep 0.2; done
[ "$(cat "$CTL/lists")" -gt "$lists_before" ] || fail "410 Gone did not re-list"
pass "410 Gone re-lists"

# Faults: 401, bad JSON, server down. Each keeps the last good pod metadata on the page and is
# counted; a 401 streak (the watch drop that starts it, then refused requests) counts several
# errors but logs once.
recoveries() { grep -c '"msg":"attribution source recovered"' "$WORK/exporter.log" || true; }
for fault in 401 badjson down; do
  before=$(errors_of apiserver)
  want=$((before + 1))
  [ "$fault" = 401 ] && want=$((before + 2))
  if [ "$fault" = down ]; then
    kill "$API_PID"; wait "$API_PID" 2>/dev/null || true
  else
    echo "$fault" >"$CTL/mode"
  fi
  for _ in $(seq 1 75); do
    [ "$(errors_of apiserver)" -ge "$want" ] && break
    sleep 0.2
  done
  after=$(errors_of apiserver)
  [ "$after" -ge "$want" ] || fail "$fault: nvml_exporter_attribution_errors_total{source=\"apiserver\"} went $before -> $after"
  grep -Eq '^nvml_exporter_pod_gpu_processes\{.*pod="trainer-a",container="main"' <<<"$(metrics)" ||
    fail "$fault: pod series lost"
  pass "$fault: counted ($before -> $after), last good pod metadata kept"
  if [ "$fault" != down ]; then
    r=$(recoveries)
    echo ok >"$CTL/mode"
    for _ in $(seq 1 100); do [ "$(recoveries)" -gt "$r" ] && break; sleep 0.2; done
    [ "$(recoveries)" -gt "$r" ] || fail "$fault: no recovery after the server came back"
  fi
done
total=$(errors_of apiserver)
kill "${PIDS[1]}"; wait "${PIDS[1]}" 2>/dev/null || true
python3 - "$WORK/exporter.log" "$total" <<'PY2'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
seq = "".join("F" if l["msg"].startswith("attribution source failing") else "R"
              for l in lines if l.get("source") == "apiserver" and
              (l["msg"].startswith("attribution source failing") or l["msg"] == "attribution source recovered"))
# Once per streak: failures and recoveries alternate, and there are fewer lines than errors.
assert seq.startswith("F") and "FF" not in seq and "RR" not in seq, seq
assert seq.count("F") >= 3 and seq.count("F") < int(sys.argv[2]), (seq, sys.argv[2])
print(f"ok: {sys.argv[2]} errors logged as {seq.count('F')} streaks ({seq})")
PY2

# An unreadable proc root: processes stay unattributed, the error is counted, the page is served.
out="$WORK/once.txt"
env -u KUBERNETES_SERVICE_HOST -u KUBERNETES_SERVICE_PORT \
  "$EXPORTER" --fake-gpus-scenario "$SOURCE_DIR/testdata/scenarios/processes.yaml" --once \
  -f "$SOURCE_DIR/etc/default-counters.csv" --kubernetes-process-metrics \
  --host-proc-root "$WORK/no-such-proc" >"$out" 2>"$WORK/once.log" || fail "--once failed"
grep -q '^nvml_exporter_attribution_errors_total{source="cgroup"} 1$' "$out" ||
  fail "unreadable proc root not counted: $(grep attribution_errors "$out")"
grep -q '^nvml_exporter_gpu_unattributed_processes{gpu="0",.*} [56]$' "$out" ||
  fail "processes should be unattributed: $(grep unattributed "$out")"
grep -q '^DCGM_FI_DEV_GPU_UTIL{gpu="0",.*} 90$' "$out" || fail "device series missing"
pass "unreadable proc root degrades attribution only"
# Pod labels on the device series (-k, not --kubernetes-virtual-gpus): the kubelet (fixture) puts
# trainer-a on GPU 0; its allow-listed labels from the API server join the CSV's label fields,
# sorted with them, before the attributes, as dcgm-exporter prints them.
start_apiserver  # the fault loop above left it down
uuid0=$(env -u KUBERNETES_SERVICE_HOST "$EXPORTER" --fake-gpus-scenario \
  "$SOURCE_DIR/testdata/scenarios/processes.yaml" -f "$SOURCE_DIR/etc/default-counters.csv" --once \
  2>/dev/null | sed -n 's/^DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="\([^"]*\)".*/\1/p' | head -1)
[ -n "$uuid0" ] || fail "no GPU 0 UUID"
echo '{"answers": [{"pods": [{"namespace": "ml", "name": "trainer-a", "containers": [{"name": "main",
  "devices": [{"resource_name": "nvidia.com/gpu", "device_ids": ["'"$uuid0"'"]}]}]}]}]}' \
  >"$WORK/kubelet.json"
"$BUILD_DIR/test/fixtures/kubelet_fixture" --socket "$WORK/kubelet.sock" --script "$WORK/kubelet.json" \
  >"$WORK/fixture.out" 2>"$WORK/fixture.log" &
PIDS+=($!)
for _ in $(seq 100); do grep -q ready "$WORK/fixture.out" 2>/dev/null && break; sleep 0.05; done
port=$(free_port)
NODE_NAME=node1 start_exporter "$port" -c 500 -f "$SOURCE_DIR/etc/default-counters.csv" \
  --fake-gpus-scenario "$SOURCE_DIR/testdata/scenarios/processes.yaml" \
  -k --pod-resources-kubelet-socket "$WORK/kubelet.sock" \
  --kubernetes-api-server "https://127.0.0.1:$api_port" --kubernetes-token-file "$WORK/token" \
  --kubernetes-ca-file "$WORK/cert.pem" \
  --kubernetes-enable-pod-labels --kubernetes-pod-label-allowlist-regex '^app,team'
want='DCGM_FI_DEV_GPU_UTIL\{gpu="0",UUID="'"$uuid0"'",[^}]*,hostname="node1",DCGM_FI_DRIVER_VERSION="[^"]*",app_kubernetes_io_name="trainer",team="vision",container="main",namespace="ml",pod="trainer-a"\} '
wait_for 15 "^$want" || { metrics | grep '^DCGM_FI_DEV_GPU_UTIL' >&2; fail "no pod labels on the device series"; }
metrics | grep -q 'pod_template_hash' && fail "a label outside the allowlist was copied"
kill "${PIDS[-1]}"; wait "${PIDS[-1]}" 2>/dev/null || true
pass "pod labels on the device series, sorted in with the CSV's label fields"

echo "pods_test: all passed"

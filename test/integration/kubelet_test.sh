#!/usr/bin/env bash
# -k end to end: the daemon on simulated GPUs against the fake kubelet (test/fixtures/
# kubelet_fixture, a real gRPC pod-resources v1 server on a unix socket). Checks the pod labels
# on /metrics, and that every kubelet fault (socket missing, error status, slow past the
# deadline, stopped, refusing, restarted with a 20 MiB answer) keeps /metrics served with the
# last good attribution, counts nvml_exporter_attribution_errors_total{source="kubelet"} and
# logs once per failure streak and once on recovery. Then --kubernetes-virtual-gpus with -o, and
# promtool still parses the page.
source "$(dirname "$0")/lib.sh"
FIXTURE="$BUILD_DIR/test/fixtures/kubelet_fixture"
[ -x "$FIXTURE" ] || fail "missing $FIXTURE"
sock="$WORK/kubelet.sock"
fixture_pid=""
start_fixture() {  # script file
  "$FIXTURE" --socket "$sock" --script "$1" >"$WORK/fixture.out" 2>>"$WORK/fixture.log" &
  fixture_pid=$!
  PIDS+=("$fixture_pid")
  for _ in $(seq 100); do grep -q ready "$WORK/fixture.out" 2>/dev/null && return 0; sleep 0.05; done
  fail "fixture did not start"
}
stop_fixture() { kill "$fixture_pid"; wait "$fixture_pid" 2>/dev/null || true; }
scrape() { curl -fsS "http://127.0.0.1:$port/metrics"; }
errors_now() { scrape | sed -n 's/^nvml_exporter_attribution_errors_total{source="kubelet"} //p'; }
# wait_for SECONDS CMD...: polls CMD every 0.2 s.
wait_for() {
  local secs="$1" i; shift
  for ((i = 0; i < secs * 5; i++)); do "$@" && return 0; sleep 0.2; done
  return 1
}
errors_above() { local n; n=$(errors_now); [ -n "$n" ] && [ "$n" -gt "$1" ]; }
# Whole page first: grep -q would close the pipe early and fail curl under pipefail.
has() { local page; page=$(scrape) && grep -q -- "$1" <<<"$page"; }

port=$(free_port)
start_exporter "$port" -c 1000 --log-format json -f "$SOURCE_DIR/etc/default-counters.csv" \
  -k --pod-resources-kubelet-socket "$sock"
exporter_pid="${PIDS[-1]}"

# 1. No socket yet: plain series, counted errors.
scrape >"$WORK/nosock.txt"
grep -q '^DCGM_FI_DEV_GPU_UTIL{gpu="0"' "$WORK/nosock.txt" || fail "no GPU series without kubelet"
grep -q 'pod=' "$WORK/nosock.txt" && fail "pod labels without a kubelet"
wait_for 10 errors_above 0 || fail "missing socket not counted"
pass "socket missing: served without pod labels, counted"
uuid0=$(sed -n 's/^DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="\([^"]*\)".*/\1/p' "$WORK/nosock.txt")
uuid1=$(sed -n 's/^DCGM_FI_DEV_GPU_UTIL{gpu="1",UUID="\([^"]*\)".*/\1/p' "$WORK/nosock.txt")
[ -n "$uuid0" ] && [ -n "$uuid1" ] || fail "need two simulated GPUs"

pods='[{"namespace": "team-a", "name": "trainer", "containers": [{"name": "main", "devices": [
         {"resource_name": "nvidia.com/gpu", "device_ids": ["'$uuid0'"]}]}]},
       {"namespace": "team-b", "name": "z-infer", "containers": [{"name": "srv", "devices": [
         {"resource_name": "nvidia.com/gpu", "device_ids": ["'$uuid1'::1"]}]}]},
       {"namespace": "team-b", "name": "a-infer", "containers": [{"name": "srv", "devices": [
         {"resource_name": "nvidia.com/gpu", "device_ids": ["'$uuid1'::0"]}]}]},
       {"namespace": "team-c", "name": "nic-only", "containers": [{"name": "c", "devices": [
         {"resource_name": "example.com/nic", "device_ids": ["'$uuid1'"]}]}]}]'
echo '{"answers": [{"pods": '"$pods"'}]}' >"$WORK/normal.json"
echo '{"answers": [{"error": {"code": 13, "message": "scripted kubelet failure"}}]}' >"$WORK/error.json"
echo '{"answers": [{"delay_ms": 3000, "pods": '"$pods"'}]}' >"$WORK/slow.json"
echo '{"answers": [{"generate": {"pods": 4000, "device_ids": ["GPU-not-here"], "pad_bytes": 20971520},
                    "pods": [{"namespace": "team-h", "name": "huge", "containers": [{"name": "m",
                      "devices": [{"resource_name": "nvidia.com/gpu", "device_ids": ["'$uuid0'"]}]}]}]}]}' \
  >"$WORK/huge.json"

# 2. The kubelet appears: labels within a refresh period or two.
start_fixture "$WORK/normal.json"
wait_for 10 has 'container="main",namespace="team-a",pod="trainer"} ' || fail "pod labels did not appear"
scrape >"$WORK/normal.txt"
line=$(grep '^DCGM_FI_DEV_GPU_UTIL{gpu="0"' "$WORK/normal.txt")
[[ "$line" == *',DCGM_FI_DRIVER_VERSION="'*'",container="main",namespace="team-a",pod="trainer"} '* ]] ||
  fail "labels of GPU 0 not in dcgm-exporter's order: $line"
# Time-sliced GPU 1 without --kubernetes-virtual-gpus: one series, the least pod, no vgpu.
[ "$(grep -c '^DCGM_FI_DEV_GPU_UTIL{gpu="1"' "$WORK/normal.txt")" = 1 ] || fail "GPU 1 must have one series"
grep -q '^DCGM_FI_DEV_GPU_UTIL{gpu="1",.*,container="srv",namespace="team-b",pod="a-infer"} ' "$WORK/normal.txt" ||
  fail "shared GPU 1 must name the least pod: $(grep '^DCGM_FI_DEV_GPU_UTIL{gpu="1"' "$WORK/normal.txt")"
grep -q 'vgpu=' "$WORK/normal.txt" && fail "no vgpu label without --kubernetes-virtual-gpus"
grep -q 'nic-only' "$WORK/normal.txt" && fail "other resources must not be attributed"
pass "pod, namespace, container labels after the sorted labels; shared GPU names one stable pod"

# 3. Faults: each keeps the last good labels and counts.
for fault in error slow stop refuse; do
  before=$(errors_now)
  case "$fault" in
    error) stop_fixture; start_fixture "$WORK/error.json" ;;
    slow) stop_fixture; start_fixture "$WORK/slow.json" ;;
    stop) stop_fixture ;;
    refuse) python3 -c "import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])" "$sock" ;;
  esac
  wait_for 15 errors_above "$before" || fail "$fault: not counted"
  wait_for 15 errors_above "$((before + 1))" || fail "$fault: not counted twice"
  has 'namespace="team-a",pod="trainer"} ' || fail "$fault: last good attribution lost"
  pass "$fault: /metrics keeps the last good labels, errors counted"
done

# 4. Kubelet back with a 20 MiB answer (dcgm-exporter fails past 4 MiB): recovered.
rm -f "$sock"
start_fixture "$WORK/huge.json"
wait_for 20 has 'namespace="team-h",pod="huge"} ' || fail "20 MiB answer not taken"
has 'pod="trainer"' && fail "stale pods must go once the kubelet answers"
pass "restart with a 20 MiB answer: recovered"

kill "$exporter_pid"; wait "$exporter_pid" 2>/dev/null || true
python3 - "$WORK/exporter.log" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
failed = [l for l in lines if l["msg"].startswith("attribution source failing")
          and l.get("source") == "kubelet"]
recovered = [l for l in lines if l["msg"] == "attribution source recovered"
             and l.get("source") == "kubelet"]
# Streaks: the missing socket at start; error -> slow -> stop -> refuse (one streak).
assert len(failed) == 2, failed
assert len(recovered) == 2, recovered
assert "no such file" in failed[0]["err"], failed[0]
# The second streak is error, slow, stop and refuse: several failed refreshes, logged once.
assert int(recovered[1]["failed_attempts"]) >= 4, recovered[1]
print(f"ok: logged once per failure streak ({len(failed)}) and once per recovery")
PY

# 5. --kubernetes-virtual-gpus with -o: one series per sharing pod, old label names; promtool.
stop_fixture
start_fixture "$WORK/normal.json"
port=$(free_port)
start_exporter "$port" -c 1000 -f "$SOURCE_DIR/etc/default-counters.csv" -k -o \
  --kubernetes-virtual-gpus --pod-resources-kubelet-socket "$sock"
scrape >"$WORK/virtual.txt"
grep -q '^DCGM_FI_DEV_GPU_TEMP{gpu="1",.*,container_name="srv",pod_name="a-infer",pod_namespace="team-b",vgpu="0"} ' "$WORK/virtual.txt" ||
  fail "vgpu 0 series missing"
grep -q '^DCGM_FI_DEV_GPU_TEMP{gpu="1",.*,container_name="srv",pod_name="z-infer",pod_namespace="team-b",vgpu="1"} ' "$WORK/virtual.txt" ||
  fail "vgpu 1 series missing"
grep -q '^DCGM_FI_DEV_GPU_TEMP{gpu="0",.*,container_name="main",pod_name="trainer",pod_namespace="team-a"} ' "$WORK/virtual.txt" ||
  fail "exclusive GPU 0 with old names"
# GPU_UTIL is per process there (dcgm-exporter 4.8): the unlabelled device series, and per pod its
# share with pod_uid; without an API server the kubelet's pods cannot be joined to processes
# (no uid), so they read 0 with an empty pod_uid, as upstream.
grep -q '^DCGM_FI_DEV_GPU_UTIL{gpu="1",[^}]*,DCGM_FI_DRIVER_VERSION="[^"]*"} ' "$WORK/virtual.txt" ||
  fail "GPU_UTIL device series missing"
grep -q '^DCGM_FI_DEV_GPU_UTIL{gpu="1",.*,container_name="srv",pod_name="a-infer",pod_namespace="team-b",pod_uid="",vgpu="0"} 0$' "$WORK/virtual.txt" ||
  fail "GPU_UTIL per-pod series missing: $(grep '^DCGM_FI_DEV_GPU_UTIL{gpu="1"' "$WORK/virtual.txt")"
grep -q '^nvml_exporter_pod_' "$WORK/virtual.txt" && fail "our pod families without our flag"
set +e
promtool check metrics <"$WORK/virtual.txt" >"$WORK/lint.txt" 2>&1; rc=$?
set -e
[ "$rc" = 0 ] || [ "$rc" = 3 ] || { cat "$WORK/lint.txt"; fail "promtool could not parse (exit $rc)"; }
grep -q 'nvml_exporter_attribution' "$WORK/lint.txt" && { cat "$WORK/lint.txt"; fail "our family must be lint-clean"; }
pass "virtual GPUs: one series per sharing pod with vgpu; old names; promtool parses"

# 6. The kubelet client is a plugin (lib/libnvmlx_kubelet.so beside the binary): a binary without
# it runs without -k, and with -k stops at start-up with a configuration error (exit 2) naming it.
mkdir "$WORK/noplugin"
cp "$EXPORTER" "$WORK/noplugin/nvml-exporter"
set +e
timeout 20 "$WORK/noplugin/nvml-exporter" --fake-gpus -a "127.0.0.1:$(free_port)" -k \
  -f "$SOURCE_DIR/etc/default-counters.csv" \
  --pod-resources-kubelet-socket "$sock" >"$WORK/noplugin.out" 2>"$WORK/noplugin.log"
rc=$?
set -e
[ "$rc" = 2 ] || { cat "$WORK/noplugin.log"; fail "-k without the plugin: exit $rc, want 2"; }
grep -q "libnvmlx_kubelet.so" "$WORK/noplugin.log" && grep -q "$WORK/noplugin/lib/libnvmlx_kubelet.so" "$WORK/noplugin.log" ||
  { cat "$WORK/noplugin.log"; fail "-k without the plugin: the error does not name where it looked"; }
EXPORTER="$WORK/noplugin/nvml-exporter"
port=$(free_port)
start_exporter "$port" -c 1000 -f "$SOURCE_DIR/etc/default-counters.csv"
has '^DCGM_FI_DEV_GPU_TEMP{gpu="0"' || fail "no series without -k and without the plugin"
pass "kubelet plugin missing: -k is a configuration error (exit 2) naming it; without -k it serves"
echo "kubelet_test: all passed"

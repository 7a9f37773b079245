#!/usr/bin/env bash
# --kubernetes-virtual-gpus end to end, as dcgm-exporter 4.8 serves it: the fake kubelet
# (kubelet_fixture) lists time-sliced pods on GPU 0 of testdata/scenarios/processes.yaml, the
# fake API server (fake_apiserver.py) gives their uids, testdata/proc their processes' cgroups.
# 1. -k --kubernetes-virtual-gpus alone: DCGM_FI_DEV_GPU_UTIL and DCGM_FI_DEV_FB_USED keep the
#    unlabelled device series and add one per sharing pod container with its own share and
#    pod_uid; other families get one copy per kubelet pod; none of our nvml_exporter_pod_* or
#    per-GPU process families. Compared line by line with testdata/golden/vgpu_alone.txt.
# 2. The same plus --kubernetes-process-metrics: the same DCGM lines, plus our families
#    (testdata/golden/vgpu_process_metrics.txt).
# 3. MIG (testdata/scenarios/processes_mig.yaml): the kubelet lists the MIG instances' pods;
#    DCGM_FI_DEV_FB_USED of each instance gets one series per sharing pod container with its
#    processes' memory on that instance (NVML lists processes per MIG handle; no per-process
#    utilization under MIG, as upstream reads only memory there): testdata/golden/vgpu_mig.txt.
# UPDATE_GOLDEN=1 rewrites the golden files.
source "$(dirname "$0")/lib.sh"
FIXTURE="$BUILD_DIR/test/fixtures/kubelet_fixture"
[ -x "$FIXTURE" ] || fail "missing $FIXTURE"
CTL="$WORK/ctl"
mkdir -p "$CTL"
echo ok >"$CTL/mode"
start_apiserver

SCENARIO="$SOURCE_DIR/testdata/scenarios/processes.yaml"
# The simulated GPUs' UUIDs, for the kubelet's device ids.
"$EXPORTER" --fake-gpus-scenario "$SCENARIO" --once -f "$SOURCE_DIR/etc/default-counters.csv" \
  >"$WORK/plain.txt" 2>"$WORK/plain.log" || fail "--once failed"
uuid0=$(sed -n 's/^DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="\([^"]*\)".*/\1/p' "$WORK/plain.txt")
uuid1=$(sed -n 's/^DCGM_FI_DEV_GPU_UTIL{gpu="1",UUID="\([^"]*\)".*/\1/p' "$WORK/plain.txt")
[ -n "$uuid0" ] && [ -n "$uuid1" ] || fail "need two simulated GPUs"

# GPU 0 time-sliced by trainer-a (replica 0), notebook-b (1) and idle-d (2, no process and not
# known to the API server); GPU 1 held by inference-c alone.
sock="$WORK/kubelet.sock"
cat >"$WORK/kubelet.json" <<JSON
{"answers": [{"pods": [
  {"namespace": "ml", "name": "trainer-a", "containers": [{"name": "main", "devices": [
    {"resource_name": "nvidia.com/gpu", "device_ids": ["$uuid0::0"]}]}]},
  {"namespace": "research", "name": "notebook-b", "containers": [{"name": "notebook", "devices": [
    {"resource_name": "nvidia.com/gpu", "device_ids": ["$uuid0::1"]}]}]},
  {"namespace": "ml", "name": "idle-d", "containers": [{"name": "worker", "devices": [
    {"resource_name": "nvidia.com/gpu", "device_ids": ["$uuid0::2"]}]}]},
  {"namespace": "serving", "name": "inference-c", "containers": [{"name": "server", "devices": [
    {"resource_name": "nvidia.com/gpu", "device_ids": ["$uuid1"]}]}]}]}]}
JSON
"$FIXTURE" --socket "$sock" --script "$WORK/kubelet.json" >"$WORK/fixture.out" 2>>"$WORK/fixture.log" &
PIDS+=($!)
for _ in $(seq 100); do grep -q ready "$WORK/fixture.out" 2>/dev/null && break; sleep 0.05; done
grep -q ready "$WORK/fixture.out" || fail "fixture did not start"

metrics() { curl -fsS "http://127.0.0.1:$port/metrics"; }
# run_case NAME GOLDEN EXTRA_ARGS...: serves, waits for the pods' shares, compares GPU 0's lines.
run_case() {
  local name="$1" golden="$SOURCE_DIR/testdata/golden/$2" i page; shift 2
  port=$(free_port)
  NODE_NAME=node1 start_exporter "$port" -c 500 -f "$SOURCE_DIR/etc/default-counters.csv" \
    --fake-gpus-scenario "$SCENARIO" -k --pod-resources-kubelet-socket "$sock" \
    --kubernetes-virtual-gpus --host-proc-root "$SOURCE_DIR/testdata/proc" \
    --kubernetes-api-server "https://127.0.0.1:$api_port" --kubernetes-token-file "$WORK/token" \
    --kubernetes-ca-file "$WORK/cert.pem" "$@"
  # The kubelet's share line (vgpu="1"), not just the pod's: per-process attribution (API server
  # and cgroups) can name notebook-b before the kubelet's first List has arrived, which under
  # TSan once took longer than the 1.2 s below (CI of stop 31's second run).
  for ((i = 0; i < 150; i++)); do
    page=$(metrics)
    grep -q '^DCGM_FI_DEV_FB_USED{gpu="0",.*pod="notebook-b",pod_uid="1111[^"]*",vgpu=' <<<"$page" &&
      break
    sleep 0.2
  done
  sleep 1.2  # two more collections: 4999 (exited at 0.3 s) is gone
  metrics >"$WORK/$name.txt"
  # GPU 0's lines of the per-process families, one other DCGM family and ours; the UUID as a
  # placeholder (the simulator's may change with its seed). Energy per pod grows with the time the
  # run took: pod_energy_test.sh checks its values.
  grep -E '^(DCGM_FI_DEV_GPU_UTIL|DCGM_FI_DEV_FB_USED|DCGM_FI_DEV_GPU_TEMP|nvml_exporter_(pod_gpu|gpu_process|gpu_unattributed)[a-z_]*)\{gpu="0"' \
    "$WORK/$name.txt" | grep -v '^nvml_exporter_pod_gpu_energy_joules_total' |
    sed "s/$uuid0/GPU-UUID0/" >"$WORK/$name.got"
  if [ "${UPDATE_GOLDEN:-}" = 1 ]; then cp "$WORK/$name.got" "$golden"; fi
  diff -u "$golden" "$WORK/$name.got" || fail "$name: GPU 0's series differ from $golden"
  kill "${PIDS[-1]}"; wait "${PIDS[-1]}" 2>/dev/null || true
  unset 'PIDS[-1]'
}

run_case alone vgpu_alone.txt
grep -q '^nvml_exporter_pod_\|^nvml_exporter_gpu_process' "$WORK/alone.txt" &&
  fail "our per-pod families need --kubernetes-process-metrics"
# The exclusive GPU 1: its pod's share (70 % + the square wave's 0 or 20 %) next to the device.
# NVML averages per-process utilization over the window since the last read: a window across
# an edge of the wave (a slow collection, as under TSan) gives a value between the two.
grep -Eq '^DCGM_FI_DEV_GPU_UTIL\{gpu="1",[^}]*,container="server",namespace="serving",pod="inference-c",pod_uid="99999999-8888-7777-6666-555555555555"\} (7[0-9]|8[0-9]|90)$' \
  "$WORK/alone.txt" || fail "GPU 1's pod share missing: $(grep '^DCGM_FI_DEV_GPU_UTIL{gpu="1"' "$WORK/alone.txt")"
pass "--kubernetes-virtual-gpus alone: dcgm-exporter 4.8's per-pod shares, none of our families"

run_case process_metrics vgpu_process_metrics.txt --kubernetes-process-metrics
# The DCGM lines do not change with our flag.
grep '^DCGM_' "$SOURCE_DIR/testdata/golden/vgpu_process_metrics.txt" |
  diff -u <(grep '^DCGM_' "$SOURCE_DIR/testdata/golden/vgpu_alone.txt") - ||
  fail "--kubernetes-process-metrics changed the DCGM series"
grep -q '^nvml_exporter_pod_gpu_energy_joules_total{gpu="0",.*pod="notebook-b"' "$WORK/process_metrics.txt" ||
  fail "no energy per pod with --kubernetes-process-metrics"
pass "with --kubernetes-process-metrics: the same DCGM series plus our families"

# 3. MIG: a second kubelet answer naming the MIG instances (time-sliced 3g.71gb, exclusive 1g.18gb).
SCENARIO="$SOURCE_DIR/testdata/scenarios/processes_mig.yaml"
"$EXPORTER" --fake-gpus-scenario "$SCENARIO" --once -f "$SOURCE_DIR/etc/default-counters.csv" \
  >"$WORK/mig_plain.txt" 2>"$WORK/mig_plain.log" || fail "--once (MIG) failed"
uuid0=$(sed -n 's/^DCGM_FI_DEV_GPU_TEMP{gpu="0",UUID="\([^"]*\)".*GPU_I_ID="1".*/\1/p' "$WORK/mig_plain.txt")
mig1=MIG-00000000-0000-0000-0000-000100000000
mig7=MIG-00000000-0000-0000-0000-000700000002
[ -n "$uuid0" ] || fail "MIG scenario: no GPU 0 instance series"
sock="$WORK/kubelet_mig.sock"
cat >"$WORK/kubelet_mig.json" <<JSON
{"answers": [{"pods": [
  {"namespace": "ml", "name": "trainer-a", "containers": [{"name": "main", "devices": [
    {"resource_name": "nvidia.com/mig-3g.71gb", "device_ids": ["$mig1::0"]}]}]},
  {"namespace": "research", "name": "notebook-b", "containers": [{"name": "notebook", "devices": [
    {"resource_name": "nvidia.com/mig-3g.71gb", "device_ids": ["$mig1::1"]}]}]},
  {"namespace": "ml", "name": "idle-d", "containers": [{"name": "worker", "devices": [
    {"resource_name": "nvidia.com/mig-3g.71gb", "device_ids": ["$mig1::2"]}]}]},
  {"namespace": "serving", "name": "inference-c", "containers": [{"name": "server", "devices": [
    {"resource_name": "nvidia.com/mig-1g.18gb", "device_ids": ["$mig7"]}]}]}]}]}
JSON
"$FIXTURE" --socket "$sock" --script "$WORK/kubelet_mig.json" >"$WORK/fixture_mig.out" 2>>"$WORK/fixture.log" &
PIDS+=($!)
for _ in $(seq 100); do grep -q ready "$WORK/fixture_mig.out" 2>/dev/null && break; sleep 0.05; done
grep -q ready "$WORK/fixture_mig.out" || fail "MIG fixture did not start"
run_case mig vgpu_mig.txt
grep -q 'per-process read failed' "$WORK/exporter.log" && fail "MIG: the memory-only reads must not warn"
# The exclusive 1g.18gb instance: inference-c's 16384 MiB next to the device's value.
grep -Eq '^DCGM_FI_DEV_FB_USED\{gpu="0",[^}]*GPU_I_ID="7"[^}]*,container="server",namespace="serving",pod="inference-c",pod_uid="99999999-8888-7777-6666-555555555555"\} 16384$' \
  "$WORK/mig.txt" || fail "MIG 1g.18gb pod share missing: $(grep '^DCGM_FI_DEV_FB_USED{gpu="0"' "$WORK/mig.txt")"
pass "--kubernetes-virtual-gpus on MIG: each instance's FB_USED per sharing pod from its processes"
echo "vgpu_test: all passed"

#!/usr/bin/env bash
# --emf-schema container-insights end to end: the daemon on testdata/scenarios/processes.yaml
# (GPU 0 time-sliced by three pods plus a host process, GPU 1 one pod's), the fake kubelet
# (kubelet_fixture) naming the pods of each GPU, the fake API server giving their uids and
# containers, testdata/proc their processes' cgroups. Every EMF document written to a file sink
# must be valid EMF and valid Container Insights (emf_validate --container-insights), and:
#  - one NodeGPU event per GPU per collection, with the device's values;
#  - ContainerGPU/PodGPU events for every pod container holding a GPU; on the shared GPU 0 each
#    carries its own processes' share (utilization %, memory bytes), the idle pod 0; the
#    exclusive GPU 1's pod carries the device's values;
#  - the allocation counts (Pod and Node events) from the pod specs of
#    testdata/apiserver/pods_ci_node1.json and the Node testdata/apiserver/node_node1.json
#    (capacity 8): trainer-a, notebook-b, idle-d 1 GPU each and Running, queued-e 2 and
#    Pending; inference-c (a container without a GPU limit) and done-f (Succeeded) not counted;
#  - InstanceId/InstanceType from the Node object once it is read (the flags before).
source "$(dirname "$0")/lib.sh"
FIXTURE="$BUILD_DIR/test/fixtures/kubelet_fixture"
VALIDATE="$BUILD_DIR/test/emf/emf_validate"
[ -x "$FIXTURE" ] && [ -x "$VALIDATE" ] || fail "missing $FIXTURE or $VALIDATE"
CTL="$WORK/ctl"
mkdir -p "$CTL"
echo ok >"$CTL/mode"
mkdir -p "$CTL/nodes"
cp "$SOURCE_DIR/testdata/apiserver/node_node1.json" "$CTL/nodes/node1.json"
API_PODS=pods_ci_node1.json start_apiserver

SCENARIO="$SOURCE_DIR/testdata/scenarios/processes.yaml"
"$EXPORTER" --fake-gpus-scenario "$SCENARIO" --once -f "$SOURCE_DIR/etc/container-insights.csv" \
  >"$WORK/plain.txt" 2>"$WORK/plain.log" || fail "--once failed"
uuid0=$(sed -n 's/^DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="\([^"]*\)".*/\1/p' "$WORK/plain.txt")
uuid1=$(sed -n 's/^DCGM_FI_DEV_GPU_UTIL{gpu="1",UUID="\([^"]*\)".*/\1/p' "$WORK/plain.txt")
[ -n "$uuid0" ] && [ -n "$uuid1" ] || fail "need two simulated GPUs"

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

port=$(free_port)
emf="$WORK/ci.log"
NODE_NAME=node1 start_exporter "$port" -c 500 -f "$SOURCE_DIR/etc/container-insights.csv" \
  --fake-gpus-scenario "$SCENARIO" -k --pod-resources-kubelet-socket "$sock" \
  --kubernetes-process-metrics --host-proc-root "$SOURCE_DIR/testdata/proc" \
  --kubernetes-api-server "https://127.0.0.1:$api_port" --kubernetes-token-file "$WORK/token" \
  --kubernetes-ca-file "$WORK/cert.pem" \
  --emf-schema container-insights --emf-cluster-name it-cluster --emf-output "file:$emf" \
  --emf-instance-id i-0aaaaaaaaaaaaaaaa --emf-instance-type g5.xlarge
# Until a collection has every pod's share (the API server's uids and the processes' cgroups
# arrive after the first collections) and the Node's identity, then two more.
for ((i = 0; i < 150; i++)); do
  # idle-d has no process: only the kubelet's List names it (per-process attribution can name
  # the others before that List arrives, slow under TSan).
  grep -q '"FullPodName":"notebook-b".*"container_gpu_memory_used":8589934592' "$emf" 2>/dev/null &&
    grep -q '"FullPodName":"idle-d".*"Type":"ContainerGPU"' "$emf" &&
    grep -q '"InstanceType":"p4d.24xlarge".*"Type":"Node"' "$emf" && break
  sleep 0.2
done
sleep 1.2
kill "${PIDS[-1]}"; wait "${PIDS[-1]}" 2>/dev/null || true
unset 'PIDS[-1]'
"$VALIDATE" --container-insights it-cluster "$emf" >"$WORK/validate.txt" ||
  { head -20 "$WORK/validate.txt" >&2; fail "documents outside EMF or Container Insights' schema"; }
pass "$(tail -1 "$WORK/validate.txt"): EMF and Container Insights' schema"

python3 - "$emf" "$uuid0" "$uuid1" <<'PY'
import json, sys
from collections import defaultdict
docs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
uuid0, uuid1 = sys.argv[2], sys.argv[3]
by_ts = defaultdict(list)
for d in docs:
    by_ts[d["_aws"]["Timestamp"]].append(d)
last = by_ts[max(by_ts)]
def one(type_, **want):
    got = [d for d in last if d["Type"] == type_ and all(d.get(k) == v for k, v in want.items())]
    assert len(got) == 1, (type_, want, len(got))
    return got[0]
MiB = 1 << 20
for d in docs:
    assert d["NodeName"] == "node1", d
    assert (d["InstanceId"], d["InstanceType"]) in (("i-0aaaaaaaaaaaaaaaa", "g5.xlarge"),
                                                    ("i-0123456789abcdef0", "p4d.24xlarge")), d
for d in last:  # the Node object's identity, once read, over the flags'
    assert (d["InstanceId"], d["InstanceType"]) == ("i-0123456789abcdef0", "p4d.24xlarge"), d
# Per collection: a node event per GPU.
for ts, ds in by_ts.items():
    assert sum(1 for d in ds if d["Type"] == "NodeGPU") == 2, (ts, [d["Type"] for d in ds])
n0, n1 = one("NodeGPU", GpuDevice="nvidia0"), one("NodeGPU", GpuDevice="nvidia1")
assert n0["node_gpu_utilization"] == 90 and n0["node_gpu_memory_used"] == 30000 * MiB, n0
# The shared GPU 0: each container its own share; the idle pod 0.
# trainer-a/main runs pids 4101 (40%, 10240 MiB) and 4401 (idle, 512 MiB).
shares = {("trainer-a", "main"): (40, 10752), ("trainer-a", "sidecar"): (15, 2048),
          ("notebook-b", "notebook"): (30, 8192), ("idle-d", "worker"): (0, 0)}
for (pod, c), (util, mib) in shares.items():
    e = one("ContainerGPU", FullPodName=pod, ContainerName=c, UUID=uuid0)
    assert e["container_gpu_utilization"] == util, (pod, c, e)
    assert e["container_gpu_memory_used"] == mib * MiB, (pod, c, e)
    assert e["container_gpu_memory_total"] == n0["node_gpu_memory_total"], e
    assert e["GpuDevice"] == "nvidia0" and e["kubernetes"]["container_name"] == c, e
p = one("PodGPU", FullPodName="trainer-a", UUID=uuid0)
assert p["pod_gpu_utilization"] == 55 and p["pod_gpu_memory_used"] == 12800 * MiB, p
assert p["Namespace"] == "ml" and "ContainerName" not in p, p
# The exclusive GPU 1: the device's values.
e = one("ContainerGPU", FullPodName="inference-c", UUID=uuid1)
assert e["container_gpu_utilization"] == n1["node_gpu_utilization"], (e, n1)
assert e["container_gpu_memory_used"] == n1["node_gpu_memory_used"], (e, n1)
assert e["kubernetes"]["pod_id"] == "99999999-8888-7777-6666-555555555555", e
# The allocation counts, as the agent's pod store computes them from the specs.
pods = {d["FullPodName"]: d for d in last if d["Type"] == "Pod"}
want = {"trainer-a": (1, 1, 1, 12.5, "trainer"), "notebook-b": (1, 1, 1, 12.5, "notebook-b"),
        "idle-d": (1, 1, 1, 12.5, "idle"), "queued-e": (2, 2, 0, 25, "queued-e")}
assert sorted(pods) == sorted(want), sorted(pods)
for name, (req, lim, used, reserved, workload) in want.items():
    d = pods[name]
    got = (d["pod_gpu_request"], d["pod_gpu_limit"], d["pod_gpu_usage_total"],
           d["pod_gpu_reserved_capacity"], d["PodName"])
    assert got == (req, lim, used, reserved, workload), (name, got)
node = [d for d in last if d["Type"] == "Node"]
assert len(node) == 1, node
n = node[0]
got = (n["node_gpu_limit"], n["node_gpu_request"], n["node_gpu_usage_total"],
       n["node_gpu_reserved_capacity"], n["node_gpu_unreserved_capacity"],
       n["node_gpu_available_capacity"])
assert got == (8, 5, 3, 62.5, 37.5, 5), got
assert one("ContainerGPU", FullPodName="trainer-a", ContainerName="main")["PodName"] == "trainer"
print(f"ok: {len(docs)} documents in {len(by_ts)} collections")
PY
pass "node, pod and container events with each pod's own share on the shared GPU; allocation counts; the Node's identity"
echo "container_insights_test: all passed"

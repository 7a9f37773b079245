#!/usr/bin/env bash
# Issue 25 on a real GPU: --emf-schema container-insights on the H200 with two pods time-slicing
# GPU 0. gpu-pulse A (fp32, 10 s on / 10 s off) and B (tensor, 5 s on / 15 s off) stand for the
# pods' processes; a proc root puts them in two pods by cgroup (their stat files are the real
# ones, linked), and test/integration/fake_apiserver.py plays the API server: the two pods'
# specs (one nvidia.com/gpu each, A a Deployment's) and this node's Node object (providerID,
# instance type, 4 time-sliced GPUs of capacity). The daemon writes EMF to a file for DURATION
# seconds; container_insights_h200_check.py then validates every document (emf_validate
# --container-insights) and compares the values with nvidia-smi and the pulses' phases.
# Run from the repo root after `make bundle` (with gpu-pulse and emf_validate). Output in $OUT
# (default ./ci-h200-out). Nothing here changes GPU settings.
set -uo pipefail
source "$(dirname "$0")/proc_root.sh"
B="${BUNDLE:-bundle}"
OUT="${OUT:-ci-h200-out}"
DURATION="${DURATION:-40}"
mkdir -p "$OUT"
ROOT="$(mktemp -d)"
CTL="$ROOT/ctl"
mkdir -p "$CTL/nodes" "$ROOT/proc"
UID_A=aaaaaaaa-0000-4000-8000-00000000000a
UID_B=bbbbbbbb-0000-4000-8000-00000000000b
CID_A=$(printf 'a%.0s' $(seq 64))
CID_B=$(printf 'b%.0s' $(seq 64))
cat >"$ROOT/pods.json" <<JSON
{"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": "10"}, "items": [
 {"metadata": {"name": "trainer-a-5f6d7c8b9-x2x9q", "namespace": "ml", "uid": "$UID_A",
   "ownerReferences": [{"kind": "ReplicaSet", "name": "trainer-a-5f6d7c8b9", "controller": true}]},
  "spec": {"nodeName": "h200-node", "containers": [{"name": "main",
   "resources": {"limits": {"nvidia.com/gpu": "1"}, "requests": {"nvidia.com/gpu": "1"}}}]},
  "status": {"phase": "Running", "containerStatuses": [{"name": "main", "containerID": "containerd://$CID_A"}]}},
 {"metadata": {"name": "notebook-b", "namespace": "research", "uid": "$UID_B"},
  "spec": {"nodeName": "h200-node", "containers": [{"name": "notebook",
   "resources": {"limits": {"nvidia.com/gpu": "1"}, "requests": {"nvidia.com/gpu": "1"}}}]},
  "status": {"phase": "Running", "containerStatuses": [{"name": "notebook", "containerID": "containerd://$CID_B"}]}}]}
JSON
cat >"$CTL/nodes/h200-node.json" <<'JSON'
{"kind": "Node", "apiVersion": "v1",
 "metadata": {"name": "h200-node", "labels": {"node.kubernetes.io/instance-type": "p5en.48xlarge"}},
 "spec": {"providerID": "aws:///us-east-1a/i-0a200b1c2d3e4f5a6"},
 "status": {"capacity": {"nvidia.com/gpu": "4"}, "allocatable": {"nvidia.com/gpu": "4"}}}
JSON
echo ok >"$CTL/mode"
echo test-token >"$ROOT/token"
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=fake-apiserver" \
  -addext "subjectAltName=IP:127.0.0.1" -keyout "$ROOT/key.pem" -out "$ROOT/cert.pem" \
  2>"$OUT/openssl.log" || { echo "openssl failed"; exit 1; }
python3 test/integration/fake_apiserver.py "$ROOT/pods.json" "$ROOT/cert.pem" "$ROOT/key.pem" \
  test-token "$CTL" "$ROOT/api.port" 2>"$OUT/apiserver.log" &
api=$!
for _ in $(seq 50); do [ -s "$ROOT/api.port" ] && break; sleep 0.1; done
api_port=$(cat "$ROOT/api.port")

"$B/gpu-pulse" --on 10s --off 10s --duration "${DURATION}s" --gpus 0 --mode fp32 \
  >"$OUT/pulse_a.txt" 2>"$OUT/pulse_a.err" &
pa=$!
"$B/gpu-pulse" --on 5s --off 15s --duration "${DURATION}s" --gpus 0 --mode tensor \
  >"$OUT/pulse_b.txt" 2>"$OUT/pulse_b.err" &
pb=$!
fake_proc_entry "$ROOT/proc" $pa $UID_A "$CID_A"
fake_proc_entry "$ROOT/proc" $pb $UID_B "$CID_B"
date +%s.%N >"$OUT/start.txt"
( sleep 4; nvidia-smi --query-gpu=memory.total,memory.used --format=csv,noheader,nounits -i 0 \
    >"$OUT/smi_memory.txt" 2>&1 ) &
NODE_NAME=h200-node "$B/nvml-exporter" -f "$B/etc/container-insights.csv" -c 1000 \
  -a 127.0.0.1:9400 --kubernetes-process-metrics --host-proc-root "$ROOT/proc" \
  --kubernetes-api-server "https://127.0.0.1:$api_port" --kubernetes-token-file "$ROOT/token" \
  --kubernetes-ca-file "$ROOT/cert.pem" --emf-schema container-insights \
  --emf-cluster-name h200-cluster --emf-output "file:$OUT/ci.log" 2>"$OUT/exporter.log" &
exp=$!
wait $pa $pb
sleep 2
curl -fsS http://127.0.0.1:9400/metrics >"$OUT/metrics_last.txt"
kill -TERM $exp; wait $exp
kill $api 2>/dev/null
# --no-instance: the first collection may come before the Node object is read (no
# --emf-instance-* flags here); the check below wants the identity on every later one.
"$B/emf_validate" --container-insights h200-cluster --no-instance "$OUT/ci.log" >"$OUT/validate.txt" 2>&1
echo "emf_validate exit $?" >>"$OUT/validate.txt"
python3 test/gpu/container_insights_h200_check.py "$OUT" >"$OUT/report.md"; rc=$?
cat "$OUT/validate.txt" | tail -3
cat "$OUT/report.md"
tar czf "$OUT/ci-h200.tgz" -C "$OUT" --exclude ci-h200.tgz .
exit $rc

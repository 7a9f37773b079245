#!/usr/bin/env bash
# Issue 27 on a real GPU: energy per pod (docs/attribution.md "Energy per pod") with two pods
# time-slicing GPU 0. Pod A (team-a/trainer-a) runs gpu-pulse fp32 10 s on / 10 s off; pod B
# (team-b/infer-b) runs gpu-pulse tensor 10 s on / 10 s off, started 5 s later: so every 20 s
# there are 5 s of A alone, both, B alone and neither. What Kubernetes adds is stood in for by a
# proc root whose <pid>/cgroup files put A and B in two containers and the fake API server
# (test/integration/fake_apiserver.py) naming their pods; NVML's energy counter and per-process
# SM time are the GPU's own. /metrics is read every second into energy.csv; pod_energy_check.py
# compares, interval by interval, each pod's joules with the GPU counter's growth and the phases
# each gpu-pulse printed. Run from the repo root after `make bundle`; output in $OUT (default
# ./pod-energy-out); EXPORTER_ARGS: more daemon flags. Nothing here changes GPU settings.
set -uo pipefail
source "$(dirname "$0")/proc_root.sh"
B="${BUNDLE:-bundle}"
OUT="${OUT:-pod-energy-out}"
DURATION="${DURATION:-60}"
mkdir -p "$OUT"
W="$(mktemp -d)"
UID_A=aaaaaaaa-0000-4000-8000-00000000000a
UID_B=bbbbbbbb-0000-4000-8000-00000000000b
CID_A=$(printf 'a%.0s' $(seq 64))
CID_B=$(printf 'b%.0s' $(seq 64))
python3 - "$W/pods.json" "$UID_A" "$CID_A" "$UID_B" "$CID_B" <<'PY'
import json, sys
path, ua, ca, ub, cb = sys.argv[1:]
def pod(ns, name, uid, cid):
    return {"metadata": {"name": name, "namespace": ns, "uid": uid, "resourceVersion": "1"},
            "spec": {"nodeName": "node1"},
            "status": {"phase": "Running",
                       "containerStatuses": [{"name": "main", "containerID": "containerd://" + cid}]}}
json.dump({"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": "1"},
           "items": [pod("team-a", "trainer-a", ua, ca), pod("team-b", "infer-b", ub, cb)]},
          open(path, "w"))
PY
mkdir -p "$W/ctl" "$W/proc"
echo ok >"$W/ctl/mode"
echo test-token >"$W/token"
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=fake-apiserver" \
  -addext "subjectAltName=IP:127.0.0.1" -keyout "$W/key.pem" -out "$W/cert.pem" 2>"$OUT/openssl.log" ||
  { echo "openssl could not make a certificate" >&2; exit 1; }
python3 test/integration/fake_apiserver.py "$W/pods.json" "$W/cert.pem" "$W/key.pem" test-token \
  "$W/ctl" "$W/api.port" 2>"$OUT/apiserver.log" &
api=$!
for _ in $(seq 100); do [ -s "$W/api.port" ] && break; sleep 0.1; done
"$B/gpu-pulse" --on 10s --off 10s --duration "${DURATION}s" --gpus 0 --mode fp32 \
  >"$OUT/pulse_a.txt" 2>"$OUT/pulse_a.err" &
pa=$!
# B's pid is the subshell's, which becomes gpu-pulse 5 s later.
( sleep 5; exec "$B/gpu-pulse" --on 10s --off 10s --duration "$((DURATION - 5))s" --gpus 0 \
    --mode tensor >"$OUT/pulse_b.txt" 2>"$OUT/pulse_b.err" ) &
pb=$!
fake_proc_entry "$W/proc" $pa $UID_A "$CID_A"
fake_proc_entry "$W/proc" $pb $UID_B "$CID_B"
echo "pid_a=$pa uid_a=$UID_A pid_b=$pb uid_b=$UID_B" >"$OUT/pids.txt"
NODE_NAME=node1 "$B/nvml-exporter" -f "$B/etc/default-counters.csv" -c 1000 -a 127.0.0.1:9400 \
  --kubernetes-process-metrics --host-proc-root "$W/proc" \
  --kubernetes-api-server "https://127.0.0.1:$(cat "$W/api.port")" \
  --kubernetes-token-file "$W/token" --kubernetes-ca-file "$W/cert.pem" ${EXPORTER_ARGS:-} \
  2>"$OUT/exporter.log" &
exp=$!
for _ in $(seq 50); do curl -fsS -o /dev/null http://127.0.0.1:9400/ready && break; sleep 0.2; done
echo "t,series,value" >"$OUT/energy.csv"
end=$(($(date +%s) + DURATION + 2))
while [ "$(date +%s)" -lt "$end" ]; do
  t=$(date +%s.%N)
  curl -fsS http://127.0.0.1:9400/metrics >"$W/m.txt"
  sed -n -e 's/^DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu="0",[^}]*} \(.*\)$/gpu_mj \1/p' \
    -e 's/^nvml_exporter_pod_gpu_energy_joules_total{gpu="0",[^}]*namespace="\([^"]*\)",pod="\([^"]*\)"[^}]*} \(.*\)$/\1\/\2 \3/p' \
    -e 's/^nvml_exporter_pod_gpu_sm_utilization_ratio{gpu="0",[^}]*namespace="\([^"]*\)",pod="\([^"]*\)"[^}]*} \(.*\)$/sm:\1\/\2 \3/p' \
    "$W/m.txt" | awk -v t="$t" '{print t "," $1 "," $2}' >>"$OUT/energy.csv"
  sleep 0.9
done
cp "$W/m.txt" "$OUT/metrics_last.txt"
wait $pa $pb
kill -TERM $exp $api; wait $exp
python3 test/gpu/pod_energy_check.py "$OUT" >"$OUT/report.md"; rc=$?
cat "$OUT/report.md"
exit $rc

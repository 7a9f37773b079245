#!/usr/bin/env bash
# Issue 4 on a real GPU: two gpu-pulse processes share GPU 0 with different duty cycles
# (A: 10 s on / 10 s off, fp32; B: 5 s on / 15 s off, tensor) while nvml-exporter runs with
# --kubernetes-process-metrics. NVML's real per-process data is used; what Kubernetes would add
# is stood in for by a proc root whose <pid>/cgroup files put A and B in two pods (their stat
# files are the real ones, linked). /metrics is sampled every second into samples.csv, then
# attribution_check.py compares each pod's series with the phases each gpu-pulse printed.
# Run from the repo root after `make bundle` (with gpu-pulse). Output in $OUT (default
# ./attribution-out). Nothing here changes GPU settings.
set -uo pipefail
B="${BUNDLE:-bundle}"
OUT="${OUT:-attribution-out}"
DURATION="${DURATION:-60}"
mkdir -p "$OUT"
ROOT="$(mktemp -d)"
UID_A=aaaaaaaa-0000-4000-8000-00000000000a
UID_B=bbbbbbbb-0000-4000-8000-00000000000b
"$B/gpu-pulse" --on 10s --off 10s --duration "${DURATION}s" --gpus 0 --mode fp32 \
  >"$OUT/pulse_a.txt" 2>"$OUT/pulse_a.err" &
pa=$!
"$B/gpu-pulse" --on 5s --off 15s --duration "${DURATION}s" --gpus 0 --mode tensor \
  >"$OUT/pulse_b.txt" 2>"$OUT/pulse_b.err" &
pb=$!
fake() {  # pid uid container-hex-char
  mkdir -p "$ROOT/$1"
  ln -s "/proc/$1/stat" "$ROOT/$1/stat"
  printf '0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod%s.slice/cri-containerd-%s.scope\n' \
    "${2//-/_}" "$(printf "$3%.0s" $(seq 64))" >"$ROOT/$1/cgroup"
}
fake $pa $UID_A a
fake $pb $UID_B b
echo "pid_a=$pa uid_a=$UID_A pid_b=$pb uid_b=$UID_B" >"$OUT/pids.txt"
( sleep 4; nvidia-smi --query-compute-apps=pid,used_memory --format=csv >"$OUT/smi_apps.txt" 2>&1 ) &
"$B/nvml-exporter" -f "$B/etc/default-counters.csv" -c 1000 -a 127.0.0.1:9400 \
  --kubernetes-process-metrics --host-proc-root "$ROOT" --kubernetes-enable-pod-uid \
  2>"$OUT/exporter.log" &
exp=$!
for _ in $(seq 50); do curl -fsS -o /dev/null http://127.0.0.1:9400/ready && break; sleep 0.2; done
echo "t,uid,sm_ratio,memory_bytes,processes,gpu_util,gpu_process_sm_ratio" >"$OUT/samples.csv"
end=$(( $(date +%s) + DURATION + 3 ))
while [ "$(date +%s)" -lt "$end" ]; do
  t=$(date +%s.%N)
  curl -fsS http://127.0.0.1:9400/metrics >"$ROOT/m.txt"
  python3 - "$t" "$ROOT/m.txt" >>"$OUT/samples.csv" <<'PY'
import re, sys
t, page = sys.argv[1], open(sys.argv[2]).read()
def get(name, uid=None):
    for line in page.splitlines():
        if line.startswith(name + "{") and 'gpu="0"' in line and (uid is None or f'pod_uid="{uid}"' in line):
            return line.rsplit(" ", 1)[1]
    return ""
util = get("DCGM_FI_DEV_GPU_UTIL")
tot = get("nvml_exporter_gpu_process_sm_utilization_ratio")
for uid in sorted(set(re.findall(r'nvml_exporter_pod_gpu_processes\{[^}]*pod_uid="([^"]+)"', page))):
    print(",".join([t, uid, get("nvml_exporter_pod_gpu_sm_utilization_ratio", uid),
                    get("nvml_exporter_pod_gpu_memory_used_bytes", uid),
                    get("nvml_exporter_pod_gpu_processes", uid), util, tot]))
PY
  sleep 0.9
done
cp "$ROOT/m.txt" "$OUT/metrics_last.txt"
wait $pa $pb
kill -TERM $exp; wait $exp
python3 test/gpu/attribution_check.py "$OUT" >"$OUT/attribution_report.md"; rc=$?
cat "$OUT/attribution_report.md"
tar czf "$OUT/attribution.tgz" -C "$OUT" --exclude attribution.tgz .
exit $rc

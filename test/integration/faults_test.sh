#!/usr/bin/env bash
# A GPU that falls off the bus degrades one part, visibly: its series stop, gpu_up goes to 0,
# it is logged once, /health says so, and the other GPUs keep being collected. A field that
# always fails is omitted and logged once per (GPU, field), not once per collection.
source "$(dirname "$0")/lib.sh"
port=$(free_port)
# The default collectors plus the health watch and P2P status: a lost GPU keeps its health
# series (ALL fails); its peers' P2P queries to it fail without taking them down.
{ cat "$SOURCE_DIR/etc/default-counters.csv"; echo "DCGM_EXP_GPU_HEALTH_STATUS, counter, health"
  echo "DCGM_EXP_P2P_STATUS, counter, p2p"; } >"$WORK/with_health.csv"
start_exporter "$port" -c 500 --log-format json -f "$WORK/with_health.csv" \
  --fake-gpus-scenario "$SOURCE_DIR/testdata/scenarios/gpu_lost.yaml"
curl -fsS "http://127.0.0.1:$port/metrics" >"$WORK/before.txt"
grep -q '^nvml_exporter_gpu_up{gpu="1",[^}]*} 1$' "$WORK/before.txt" || fail "GPU 1 should be up at first"
grep -q '^DCGM_EXP_GPU_HEALTH_STATUS{gpu="1",.*health_error_code="DCGM_FR_OK",health_watch="ALL"} 0$' \
  "$WORK/before.txt" || fail "GPU 1's ALL health watch should pass at first"
sleep 4.5
curl -fsS "http://127.0.0.1:$port/metrics" >"$WORK/after.txt"
grep -q '^nvml_exporter_gpu_up{gpu="1",[^}]*} 0$' "$WORK/after.txt" || fail "gpu_up for the lost GPU must be 0"
grep -q '^DCGM_FI_DEV_GPU_UTIL{gpu="1"' "$WORK/after.txt" && fail "series of the lost GPU must stop"
grep -q '^DCGM_FI_DEV_GPU_UTIL{gpu="0",.*} 10$' "$WORK/after.txt" || fail "GPU 0 must still be collected"
grep -q '^DCGM_FI_DEV_GPU_UTIL{gpu="2",.*} 30$' "$WORK/after.txt" || fail "GPU 2 must still be collected"
grep -q '^DCGM_FI_DEV_POWER_USAGE' "$WORK/after.txt" && fail "a failing field must be omitted"
[ "$(grep -c '^DCGM_EXP_GPU_HEALTH_STATUS{gpu="1",' "$WORK/after.txt")" = 11 ] ||
  fail "the lost GPU must keep its 11 health series"
grep -q '^DCGM_EXP_GPU_HEALTH_STATUS{gpu="1",.*health_error_code="DCGM_FR_FALLEN_OFF_BUS",health_watch="ALL"} 20$' \
  "$WORK/after.txt" || fail "the lost GPU's ALL health watch must fail (fallen off the bus)"
grep -q '^DCGM_EXP_GPU_HEALTH_STATUS{gpu="0",.*health_watch="ALL"} 0$' "$WORK/after.txt" ||
  fail "GPU 0's health must still pass"
grep -q '^DCGM_EXP_P2P_STATUS{gpu="0",.*peer_gpu="2"} 0$' "$WORK/after.txt" ||
  fail "P2P between the GPUs still up must go on"
grep -q '^DCGM_EXP_P2P_STATUS{.*peer_gpu="1"}' "$WORK/after.txt" && fail "no P2P series to the lost GPU"
body=$(curl -sS "http://127.0.0.1:$port/health")
[ "$body" = "OK: 1 of 3 GPU(s) lost" ] || fail "health body: $body"
pass "lost GPU isolated, health reports it"
sleep 1
kill "${PIDS[0]}"; wait "${PIDS[0]}" || true
# Logs are JSON lines; the loss is logged once, the failing field once per GPU.
python3 - "$WORK/exporter.log" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
lost = [l for l in lines if "GPU is lost" in l["msg"]]
assert len(lost) == 1 and lost[0]["gpu"] == "1" and lost[0]["level"] == "error", lost
power = [l for l in lines if l.get("field") == "DCGM_FI_DEV_POWER_USAGE"]
assert sorted(l["gpu"] for l in power) == ["0", "1", "2"], power
assert all("nvmlDeviceGetPowerUsage" in l["err"] for l in power), power
print(f"ok: {len(lines)} JSON log lines; loss logged once; failing field logged once per GPU")
PY

# Xid 79 (fallen off the bus) on GPU 1 at 0.5 s marks it lost as GPU_IS_LOST does, although the
# simulated GPU goes on answering calls: series stop, gpu_up 0, /health says so, logged once.
: >"$WORK/exporter.log"
port=$(free_port)
start_exporter "$port" -c 200 --log-format json -f "$SOURCE_DIR/etc/default-counters.csv" \
  --fake-gpus-scenario "$SOURCE_DIR/testdata/scenarios/xid_lost.yaml"
for _ in $(seq 1 40); do
  body=$(curl -sS "http://127.0.0.1:$port/health")
  [ "$body" = "OK: 1 of 3 GPU(s) lost" ] && break
  sleep 0.1
done
[ "$body" = "OK: 1 of 3 GPU(s) lost" ] || fail "health after Xid 79: $body"
sleep 0.5
curl -fsS "http://127.0.0.1:$port/metrics" >"$WORK/xid79.txt"
grep -q '^nvml_exporter_gpu_up{gpu="1",[^}]*} 0$' "$WORK/xid79.txt" || fail "gpu_up after Xid 79 must be 0"
grep -q '^DCGM_FI_DEV_GPU_UTIL{gpu="1"' "$WORK/xid79.txt" && fail "series of the GPU with Xid 79 must stop"
grep -q '^DCGM_FI_DEV_GPU_UTIL{gpu="0",.*} 10$' "$WORK/xid79.txt" || fail "GPU 0 must still be collected"
grep -q '^DCGM_FI_DEV_GPU_UTIL{gpu="2",.*} 30$' "$WORK/xid79.txt" || fail "GPU 2 must still be collected"
kill "${PIDS[1]}"; wait "${PIDS[1]}" || true
python3 - "$WORK/exporter.log" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
lost = [l for l in lines if "GPU is lost" in l["msg"]]
assert len(lost) == 1 and lost[0]["gpu"] == "1" and "Xid 79" in lost[0]["err"], lost
print("ok: Xid 79 marked GPU 1 lost, logged once")
PY
pass "Xid 79 isolates the GPU like GPU_IS_LOST"
echo "faults_test: all passed"

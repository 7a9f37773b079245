#!/usr/bin/env bash
# DCGM_FI_PROF_* from simulated NVML GPM, end to end: --once prints the profiling families with
# DCGM's 6 decimals and integer B/s; a GPU without GPM warns "metric not enabled" once per field
# and has no such series; a running daemon serves window averages of a square wave.
source "$(dirname "$0")/lib.sh"
CSV="$SOURCE_DIR/etc/dcp-metrics-included.csv"

out="$WORK/pulse.txt"
"$EXPORTER" --fake-gpus-scenario "$SOURCE_DIR/testdata/scenarios/pulse_fast.yaml" -f "$CSV" \
  --once >"$out" 2>"$WORK/pulse.log"
grep -Eq '^DCGM_FI_PROF_GR_ENGINE_ACTIVE\{gpu="0",[^}]*\} [01]\.[0-9]{6}$' "$out" ||
  fail "pulse_fast: no 6-decimal DCGM_FI_PROF_GR_ENGINE_ACTIVE for GPU 0: $(grep PROF_GR "$out" || true)"
grep -Eq '^DCGM_FI_PROF_GR_ENGINE_ACTIVE\{gpu="1",[^}]*\} 0\.420000$' "$out" ||
  fail "pulse_fast: GPU 1 (42 %) should read 0.420000"
grep -Eq '^DCGM_FI_PROF_PCIE_RX_BYTES\{gpu="0",[^}]*\} 3145728$' "$out" ||
  fail "pulse_fast: PCIE_RX_BYTES should be 3 MiB/s as integer B/s"
grep -q 'metric not enabled.*field=DCGM_FI_PROF' "$WORK/pulse.log" && fail "pulse_fast: unexpected warning"
pass "pulse_fast --once prints PROF values"

out="$WORK/one.txt"
"$EXPORTER" --fake-gpus-scenario "$SOURCE_DIR/testdata/scenarios/one_gpu.yaml" -f "$CSV" \
  --once >"$out" 2>"$WORK/one.log"
grep -q '^DCGM_FI_PROF_[A-Z_]*{' "$out" && fail "one_gpu has no GPM but PROF series appeared"
n=$(grep -c 'metric not enabled.*field=DCGM_FI_PROF_GR_ENGINE_ACTIVE' "$WORK/one.log" || true)
[ "$n" = 1 ] || fail "one_gpu: want one 'metric not enabled' for GR_ENGINE_ACTIVE, got $n"
pass "GPU without GPM: PROF omitted, warned once per field"

# The daemon: 3 s on / 3 s off, collected every 1.5 s: windows inside one phase read 1 or 0 ...
port=$(free_port)
start_exporter "$port" --fake-gpus-scenario "$SOURCE_DIR/testdata/scenarios/pulse_fast.yaml" \
  -f "$CSV" -c 1500
wait_http "http://127.0.0.1:$port/metrics" 10 || fail "daemon did not come up"
seen=""
for _ in $(seq 1 16); do
  v=$(curl -fsS "http://127.0.0.1:$port/metrics" |
    sed -n 's/^DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu="0",[^}]*} //p')
  [ -n "$v" ] && seen="$seen $v"
  sleep 0.5
done
echo "GR_ENGINE_ACTIVE gpu 0 over 8 s:$seen"
echo "$seen" | grep -Eq ' 0\.999000| 0\.9[0-9]{5}' || fail "never saw a busy window"
echo "$seen" | grep -Eq ' 0\.000000| 0\.0[0-9]{5}' || fail "never saw an idle window"
pass "daemon serves GPM window averages of the duty cycle"
echo "gpm_test: all passed"

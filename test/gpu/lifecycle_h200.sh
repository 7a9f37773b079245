#!/usr/bin/env bash
# The lifecycle on a real GPU (docs/faults.md): no read is stale on a healthy driver, the read
# deadline holds with the real call costs (every GPU answers every round at -c 1000, slow fields
# included), SIGHUP reloads, a bad file is rejected and counted, SIGTERM stops within 2 s.
# Run from the repo root after `make bundle` (BUNDLE=bundle), on the GPU host through the device
# tool: `bash test/gpu/lifecycle_h200.sh`; prints one line per check and exits non-zero on the
# first failure. Nothing here changes GPU settings.
set -uo pipefail
B="${BUNDLE:-bundle}"
W="$(mktemp -d)"
fail() { echo "FAIL: $*"; tail -n 20 "$W/daemon.log"; exit 1; }
cp "$B/etc/default-counters.csv" "$W/counters.csv"
"$B/nvml-exporter" -f "$W/counters.csv" -c 1000 -a 127.0.0.1:9411 --log-format json \
  2>"$W/daemon.log" &
pid=$!
for _ in $(seq 1 100); do curl -fsS -o /dev/null http://127.0.0.1:9411/ready 2>/dev/null && break; sleep 0.1; done
sleep 5  # five rounds, slow reads included
curl -fsS http://127.0.0.1:9411/metrics >"$W/m.txt" || fail "no /metrics"
grep -E '^nvml_exporter_gpu_stale' "$W/m.txt"
grep -Eq '^nvml_exporter_gpu_stale\{.*\} 1$' "$W/m.txt" && fail "a read is stale on a healthy driver"
grep -Eq '^nvml_exporter_gpu_up\{.*\} 0$' "$W/m.txt" && fail "a GPU is down"
grep -q '^DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{' "$W/m.txt" || fail "no slow field (energy)"
grep -q 'did not finish within the read deadline' "$W/daemon.log" && fail "a read missed its deadline"
echo "ok: no stale read, every GPU up, slow fields present"
grep -v '^DCGM_FI_DEV_POWER_USAGE' "$W/counters.csv" >"$W/new.csv" && mv "$W/new.csv" "$W/counters.csv"
kill -HUP "$pid"; sleep 3
curl -fsS http://127.0.0.1:9411/metrics >"$W/m2.txt"
grep -q '^DCGM_FI_DEV_POWER_USAGE{' "$W/m2.txt" && fail "SIGHUP did not reload"
echo "DCGM_FI_DEV_NOT_A_FIELD, gauge, x" >>"$W/counters.csv"
kill -HUP "$pid"; sleep 3
curl -fsS http://127.0.0.1:9411/metrics >"$W/m3.txt"
grep -q '^nvml_exporter_config_reload_failures_total 1$' "$W/m3.txt" || fail "bad file not counted"
echo "ok: SIGHUP reload, bad file rejected"
t0=$(date +%s.%N); kill -TERM "$pid"; wait "$pid"; rc=$?; t1=$(date +%s.%N)
took=$(python3 -c "print(round($t1 - $t0, 2))")
python3 -c "import sys; sys.exit(0 if $took < 2 else 1)" || fail "stop took ${took}s"
[ "$rc" = 0 ] || fail "exit code $rc"
echo "ok: SIGTERM stop in ${took}s"

#!/usr/bin/env bash
# Hardening round two, rows 4 and 6 (docs/faults.md): gpu_up and /health tell the truth.
#  4. Every NVML read of a GPU failing with the shipped counters (which include the Xid field,
#     whose sample comes from the Xid watcher, not from a read of the GPU): gpu_up 0 and counted
#     unreadable in /health (it said 1 and OK: the Xid sample counted as a good read).
#  6. A GPU lost before start is on the page as gpu_up 0 and counted lost (it had no series at
#     all); a GPU that answers NOT_SUPPORTED to every call is down (one PCI info read decides);
#     a GPU that lacks one field (no fan) stays up.
#  7. Reads that are slow but finish (700 ms against a 500 ms deadline): their values are
#     published one collection late, the GPU is said slow (not stuck), and a recovery line comes
#     when they speed up (they were thrown away and the GPU had no series indefinitely).
source "$(dirname "$0")/lib.sh"
port=$(free_port)
start_exporter "$port" -c 300 -f "$SOURCE_DIR/etc/default-counters.csv" \
  --fake-gpus-scenario "$SOURCE_DIR/testdata/scenarios/health_truth.yaml"
up() { sed -n "s/^nvml_exporter_gpu_up{gpu=\"$1\"[^}]*} //p" "$WORK/m.txt"; }
for _ in $(seq 50); do
  curl -fsS "http://127.0.0.1:$port/metrics" >"$WORK/m.txt"
  [ "$(up 1)" = 0 ] && [ "$(up 2)" = 0 ] && break
  sleep 0.2
done
grep -q '^DCGM_FI_DEV_XID_ERRORS{gpu="0"' "$WORK/m.txt" ||
  fail "the test needs the Xid field collected (default counters): $(grep XID "$WORK/m.txt" | head -2)"
[ "$(up 0)" = 1 ] || fail "healthy GPU 0: gpu_up $(up 0)"
[ "$(up 1)" = 0 ] || fail "row 4: GPU 1 (every read UNKNOWN) must be down, gpu_up '$(up 1)'"
[ "$(up 2)" = 0 ] || fail "row 6: GPU 2 (every read NOT_SUPPORTED) must be down, gpu_up '$(up 2)'"
[ "$(up 3)" = 0 ] || fail "row 6: GPU 3 (lost at start) must be on the page as down, gpu_up '$(up 3)'"
[ "$(up 4)" = 1 ] || fail "GPU 4 lacks only the fan: up, gpu_up '$(up 4)'"
grep -q '^DCGM_FI_DEV_GPU_UTIL{gpu="4",.*} 50$' "$WORK/m.txt" || fail "GPU 4 still collected"
grep -q '^DCGM_FI_DEV_GPU_UTIL{gpu="3"' "$WORK/m.txt" && fail "GPU 3 (lost) has no field series"
health=$(curl -sS "http://127.0.0.1:$port/health")
[ "$health" = "OK: 1 of 5 GPU(s) lost, 2 of 5 GPU(s) unreadable (every read failed)" ] ||
  fail "/health: '$health'"
grep -q 'GPU is lost at start.*gpu=3' "$WORK/exporter.log" || fail "no log line for GPU 3"
pass "gpu_up and /health: every read failing (with the Xid field), every read NOT_SUPPORTED, lost at start"
# Row 7.
stop_exporter() { kill -TERM "${PIDS[-1]}"; wait "${PIDS[-1]}" || true; }
stop_exporter
printf 'DCGM_FI_DEV_GPU_UTIL, gauge, u\nDCGM_FI_DEV_GPU_TEMP, gauge, t\n' >"$WORK/slow.csv"
: >"$WORK/exporter.log"
port=$(free_port)
start_exporter "$port" -c 1000 -f "$WORK/slow.csv" \
  --fake-gpus-scenario "$SOURCE_DIR/testdata/scenarios/reads_slow.yaml"
seen_slow=0 seen_temp=0
for _ in $(seq 40); do
  curl -fsS "http://127.0.0.1:$port/metrics" >"$WORK/m.txt"
  if grep -q '^nvml_exporter_gpu_slow_reads{gpu="0"[^}]*} 1$' "$WORK/m.txt"; then
    seen_slow=$((seen_slow + 1))
    grep -q '^DCGM_FI_DEV_GPU_TEMP{gpu="0",.*} 40$' "$WORK/m.txt" && seen_temp=$((seen_temp + 1))
    grep -q '^nvml_exporter_gpu_stale{gpu="0",[^}]*reads="fast"} 0$' "$WORK/m.txt" ||
      fail "row 7: a slow GPU whose values are published must not be stale"
  fi
  sleep 0.25
done
[ "$seen_slow" -ge 4 ] || fail "row 7: the slow reads were never published as late ($seen_slow scrapes)"
[ "$seen_temp" -ge 4 ] || fail "row 7: GPU 0's temperature missing while its reads were slow"
grep -q '"GPU reads are slow\|GPU reads are slow' "$WORK/exporter.log" || fail "row 7: no 'slow' line"
[ "$(grep -c 'GPU reads are slow' "$WORK/exporter.log")" = 1 ] || fail "row 7: 'slow' logged more than once"
grep -q 'GPU reads finish within the read deadline again' "$WORK/exporter.log" ||
  { cat "$WORK/exporter.log"; fail "row 7: no recovery line once the reads sped up"; }
grep -q '^nvml_exporter_gpu_slow_reads' "$WORK/m.txt" && fail "row 7: still slow after recovery"
grep -q '^DCGM_FI_DEV_GPU_UTIL{gpu="1",.*} 20$' "$WORK/m.txt" || fail "GPU 1 collected throughout"
pass "row 7: slow reads are published one collection late, said slow, and recover"
echo "health_truth_test: all passed"

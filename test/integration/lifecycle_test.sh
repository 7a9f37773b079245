#!/usr/bin/env bash
# The daemon's lifecycle against a stuck driver (docs/faults.md), defects 1, 3, 4 and 5 of the
# hardening issue, each as a real process on the simulated GPUs:
#  - a call hung in one GPU's set-up leaves the other GPU served and /health failing, naming it;
#  - SIGTERM ends it within 2 s with an NVML call hung at start, with a call hung mid fast
#    collection and with one hung in the slow loop; a FIFO as the collectors file is refused;
#  - a hung call on one GPU leaves the others collected (stale metric, one log line, /health 200)
#    and the GPU is fresh again once the call returns; a GPU whose every read fails is down;
#  - /health gives the same, documented answer with every GPU lost and with none at all.
source "$(dirname "$0")/lib.sh"
CSV="$SOURCE_DIR/testdata/csv/stuck_driver.csv"
# The 2 s promise is the release build's; a sanitizer build (several times slower, and a leak
# check at every clean exit) gets 5 s.
STOP_LIMIT=2
if [ -n "${ASAN_OPTIONS:-}${TSAN_OPTIONS:-}${UBSAN_OPTIONS:-}" ]; then STOP_LIMIT=5; fi
now() { date +%s.%N; }
# stop_within PID LIMIT_S: SIGTERM, then waits; fails unless it has exited within LIMIT_S.
stop_within() {
  local pid="$1" limit="$2" t0 t1 rc=0
  t0=$(now)
  kill -TERM "$pid"
  for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
  t1=$(now)
  local took; took=$(python3 -c "print(round($t1 - $t0, 3))")
  if kill -0 "$pid" 2>/dev/null; then fail "still running ${took}s after SIGTERM"; fi
  wait "$pid" || rc=$?
  echo "stopped in ${took}s (rc $rc)"
  python3 -c "import sys; sys.exit(0 if $took < $limit else 1)" || fail "took ${took}s to stop (limit ${limit}s)"
  [ "$rc" = 0 ] || fail "exit code $rc after SIGTERM"
}
# metric FILE REGEX: the value of the first line matching ^REGEX
metric() { grep -E "^$2" "$1" | head -1 | awk '{print $NF}'; }
# until_metric PORT REGEX VALUE SECONDS: polls /metrics until the series has that value.
until_metric() {
  local port="$1" re="$2" want="$3" secs="$4" i
  for ((i = 0; i < secs * 10; i++)); do
    curl -fsS "http://127.0.0.1:$port/metrics" >"$WORK/m.txt" 2>/dev/null || true
    [ "$(metric "$WORK/m.txt" "$re")" = "$want" ] && return 0
    sleep 0.1
  done
  fail "$re never became $want"
}
# until_grep PORT ERE SECONDS: polls /metrics until a line matches.
until_grep() {
  local port="$1" re="$2" secs="$3" i
  for ((i = 0; i < secs * 10; i++)); do
    curl -fsS "http://127.0.0.1:$port/metrics" >"$WORK/m.txt" 2>/dev/null || true
    grep -Eq "$re" "$WORK/m.txt" && return 0
    sleep 0.1
  done
  fail "no line matching $re"
}

# await_signals_blocked PID: waits (10 s at most) until the daemon has blocked SIGTERM for its
# threads (bit 15 of SigBlk in some thread: every thread started after app::Run blocks the
# signals inherits the mask; the main thread's own shows 0 while sigtimedwait waits), so that a
# SIGTERM from then on is its own to handle. One sent before that ends the process by the default
# action (exit 143), as for any program still starting: under load (ASan, a busy machine) that
# can take over a second.
await_signals_blocked() {
  local pid="$1" i mask task
  for ((i = 0; i < 200; i++)); do
    for task in /proc/"$pid"/task/*/status; do
      mask=$(awk '/^SigBlk:/ {print $2}' "$task" 2>/dev/null)
      [ -n "$mask" ] && (( (16#$mask >> 14) & 1 )) && return 0
    done
    sleep 0.05
  done
  fail "the daemon never blocked SIGTERM"
}

# await_port PORT SECONDS: waits until the daemon answers /health, whatever the status.
await_port() {
  local i
  for ((i = 0; i < $2 * 10; i++)); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$1/health")" != 000 ] && return 0
    sleep 0.1
  done
  fail "the port never opened"
}
# health_is PORT CODE BODY: /health answers CODE with BODY.
health_is() {
  local got
  got=$(curl -sS -w ' %{http_code}' "http://127.0.0.1:$1/health")
  [ "$got" = "$3 $2" ] || fail "/health: want '$3 $2', got '$got'"
}

# 1. Hardening round two, row 5: a call hung from the start in GPU 0's set-up (its priming
#    temperature read). The call is named within the read deadline (-c 2000: 1 s); the port opens
#    at the set-up deadline (5 s) with GPU 1 served, GPU 0 stale, and /health failing, naming the
#    call; SIGTERM still ends it within 2 s while the call hangs, naming it.
export NVMLX_SIMGPU_RELEASE_FILE="$WORK/release"
rm -f "$WORK/release"
port=$(free_port)
"$EXPORTER" --fake-gpus --fake-gpus-scenario "$SOURCE_DIR/testdata/scenarios/hang_start.yaml" \
  -a "127.0.0.1:$port" -f "$CSV" -c 2000 2>"$WORK/start.log" &
PIDS+=($!); pid=$!
await_signals_blocked "$pid"
for _ in $(seq 30); do
  grep -q 'GPU set-up has not finished within the read deadline.*gpu=0.*call=nvmlDeviceGetTemperature' \
    "$WORK/start.log" && break
  sleep 0.1
done
grep -q 'GPU set-up has not finished within the read deadline.*gpu=0.*call=nvmlDeviceGetTemperature' \
  "$WORK/start.log" || { cat "$WORK/start.log"; fail "the hung call was not named within the read deadline"; }
await_port "$port" 20
health_is "$port" 503 "start-up incomplete: 1 of 2 GPU(s) still in their set-up (gpu 0 in nvmlDeviceGetTemperature); the others are served"
curl -fsS "http://127.0.0.1:$port/metrics" >"$WORK/m.txt"
[ "$(metric "$WORK/m.txt" 'DCGM_FI_DEV_GPU_TEMP\{gpu="1",')" = 35 ] || fail "GPU 1 must be served"
grep -q '^DCGM_FI_DEV_GPU_TEMP{gpu="0"' "$WORK/m.txt" && fail "GPU 0 is still in its set-up"
[ "$(metric "$WORK/m.txt" 'nvml_exporter_gpu_up\{gpu="0",')" = 0 ] || fail "gpu_up of the GPU in its set-up"
[ "$(metric "$WORK/m.txt" 'nvml_exporter_gpu_stale\{gpu="0",[^}]*reads="fast"\}')" = 1 ] || fail "gpu_stale of GPU 0"
stop_within "$pid" "$STOP_LIMIT"
grep -q 'exiting with an NVML call still in progress.*gpu=0 loop=fast call=nvmlDeviceGetTemperature' "$WORK/start.log" ||
  { cat "$WORK/start.log"; fail "the exit must name the stuck call"; }
pass "a call hung in GPU 0's set-up: port open with GPU 1 served, /health 503 naming the call, SIGTERM within 2 s"

# start_hung SCENARIO: a daemon (-c 500) on testdata/scenarios/SCENARIO whose set-up hangs; sets
# port and pid once its port is open (at the set-up deadline).
start_hung() {
  : >"$WORK/exporter.log"
  port=$(free_port)
  "$EXPORTER" --fake-gpus --fake-gpus-scenario "$SOURCE_DIR/testdata/scenarios/$1" \
    -a "127.0.0.1:$port" -f "$CSV" -c 500 2>"$WORK/exporter.log" &
  PIDS+=($!); pid=$!
  await_port "$port" 20
}

# 1b. The same, and the call returns: GPU 0's series start and /health passes (no restart).
start_hung hang_start.yaml
touch "$WORK/release"
until_metric "$port" 'DCGM_FI_DEV_GPU_TEMP\{gpu="0",' 35 10
health_is "$port" 200 OK
grep -q 'GPU set-up finished; its series start.*gpu=0' "$WORK/exporter.log" || fail "no line for the set-up's end"
stop_within "$pid" "$STOP_LIMIT"
rm -f "$WORK/release"
pass "the hung set-up call returns: GPU 0 collected, /health OK"

# 1c. A call hung while GPU 0 is opened and identified (its UUID): GPU 1 served, /health names the
#     call; when it returns, the daemon re-executes itself (same pid) and collects both GPUs.
start_hung hang_probe.yaml
health_is "$port" 503 "start-up incomplete: 1 of 2 GPU(s) still in their set-up (gpu 0 in nvmlDeviceGetUUID); the others are served"
curl -fsS "http://127.0.0.1:$port/metrics" >"$WORK/m.txt"
[ "$(metric "$WORK/m.txt" 'nvml_exporter_gpu_up\{gpu="0"\}')" = 0 ] || fail "gpu_up of a GPU not yet identified"
[ "$(metric "$WORK/m.txt" 'DCGM_FI_DEV_GPU_TEMP\{gpu="1",')" = 35 ] || fail "GPU 1 must be served"
touch "$WORK/release"
until_metric "$port" 'DCGM_FI_DEV_GPU_TEMP\{gpu="0",' 35 20
health_is "$port" 200 OK
kill -0 "$pid" || fail "the re-executed daemon keeps its pid"
grep -q 'GPU set-up finished after the start-up stopped waiting for it.*gpu=0' "$WORK/exporter.log" ||
  fail "no line for the late set-up"
grep -q 're-executing the daemon' "$WORK/exporter.log" || fail "no re-execution"
stop_within "$pid" "$STOP_LIMIT"
rm -f "$WORK/release"
unset NVMLX_SIMGPU_RELEASE_FILE
pass "a call hung while opening GPU 0: GPU 1 served; when it returns the daemon re-executes and collects both"

# 2. A FIFO as the collectors file (nobody writes): refused at once with a clear error (exit 2),
#    not waited on (hardening round two, row 11; it used to hold the start-up until SIGTERM).
mkfifo "$WORK/fifo.csv"
rc=0
timeout 10 "$EXPORTER" --fake-gpus -a "127.0.0.1:$(free_port)" -f "$WORK/fifo.csv" 2>"$WORK/fifo.log" || rc=$?
[ "$rc" = 2 ] || { cat "$WORK/fifo.log"; fail "FIFO as the collectors file: want exit 2, got $rc"; }
grep -q 'fifo.csv: the collectors file is not a regular file' "$WORK/fifo.log" || { cat "$WORK/fifo.log"; fail "FIFO: no clear error"; }
pass "a FIFO as the collectors file is refused at once (exit 2), naming the file"

# 3. Hung mid-run: GPU 0's fast read and GPU 1's slow read hang at t=2 s, GPU 2 fails every
#    read; GPU 3 keeps being collected every interval, /health stays 200.
export NVMLX_SIMGPU_RELEASE_FILE="$WORK/release"
port=$(free_port)
start_exporter "$port" -c 200 --log-format json -f "$CSV" \
  --fake-gpus-scenario "$SOURCE_DIR/testdata/scenarios/hang_live.yaml"
pid=${PIDS[-1]}
until_metric "$port" 'nvml_exporter_gpu_stale\{gpu="0",[^}]*reads="fast"\}' 1 10
until_metric "$port" 'nvml_exporter_gpu_stale\{gpu="1",[^}]*reads="slow"\}' 1 10
until_metric "$port" 'nvml_exporter_gpu_up\{gpu="2",' 0 10
sleep 1
curl -fsS "http://127.0.0.1:$port/metrics" >"$WORK/a.txt"
t_a=$(metric "$WORK/a.txt" nvml_exporter_last_collect_timestamp_seconds)
sleep 1
curl -fsS "http://127.0.0.1:$port/metrics" >"$WORK/b.txt"
t_b=$(metric "$WORK/b.txt" nvml_exporter_last_collect_timestamp_seconds)
python3 -c "import sys; sys.exit(0 if $t_b - $t_a > 0.5 else 1)" || fail "collections stopped: $t_a -> $t_b"
grep -q '^DCGM_FI_DEV_GPU_TEMP{gpu="0"' "$WORK/b.txt" && fail "a stale GPU's series must be left out"
[ "$(metric "$WORK/b.txt" 'nvml_exporter_gpu_up\{gpu="0",')" = 0 ] || fail "gpu_up of the stuck GPU"
[ "$(metric "$WORK/b.txt" 'DCGM_FI_DEV_GPU_TEMP\{gpu="3",')" = 43 ] || fail "GPU 3 must be collected"
[ "$(metric "$WORK/b.txt" 'DCGM_FI_DEV_GPU_TEMP\{gpu="1",')" = 41 ] || fail "GPU 1's fast reads go on"
grep -q '^DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu="1"' "$WORK/b.txt" && fail "stale slow values served"
grep -q '^DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu="3"' "$WORK/b.txt" || fail "GPU 3's energy must go on"
[ "$(metric "$WORK/b.txt" 'nvml_exporter_gpu_stale\{gpu="2",[^}]*reads="fast"\}')" = 0 ] ||
  fail "a GPU failing its reads is not stale"
[ "$(metric "$WORK/b.txt" 'nvml_exporter_gpu_up\{gpu="3",')" = 1 ] || fail "gpu_up of GPU 3"
body=$(curl -sS -w ' %{http_code}' "http://127.0.0.1:$port/health")
[ "$body" = "OK: 1 of 4 GPU(s) stale (a driver call is stuck), 1 of 4 GPU(s) unreadable (every read failed) 200" ] ||
  fail "health: $body"
pass "a hung call on GPU 0 (fast) and GPU 1 (slow) leaves the others collected; gpu_up 0 when every read fails"
stop_within "$pid" "$STOP_LIMIT"
python3 - "$WORK/exporter.log" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
fast = [l for l in lines if l["msg"].startswith("GPU read did not finish")]
assert len(fast) == 1 and fast[0]["gpu"] == "0" and fast[0]["call"] == "nvmlDeviceGetTemperature", fast
slow = [l for l in lines if l["msg"].startswith("GPU slow read did not finish")]
assert len(slow) == 1 and slow[0]["gpu"] == "1" and slow[0]["call"] == "nvmlDeviceGetFieldValues", slow
stuck = [l["stuck"] for l in lines if l["msg"] == "exiting with an NVML call still in progress"]
assert any(s.startswith("gpu=0 loop=fast call=nvmlDeviceGetTemperature") for s in stuck), stuck
assert any(s.startswith("gpu=1 loop=slow call=nvmlDeviceGetFieldValues") for s in stuck), stuck
# GPU 2 failed every read for ~20 rounds: each field is logged once (an error storm stays bounded).
storm = [l for l in lines if l.get("gpu") == "2" and l["msg"].startswith("field read failed")]
fields = [l["field"] for l in storm]
assert len(fields) == len(set(fields)) and "DCGM_FI_DEV_GPU_TEMP" in fields, storm
print("ok: stale logged once per GPU with its call; the exit names the stuck calls; "
      f"GPU 2's error storm logged {len(storm)} lines, one per field")
PY
pass "SIGTERM within 2 s with calls hung mid fast collection and in the slow loop"

# 4. The stuck call returns: the GPU is fresh again, logged once; then a clean stop.
: >"$WORK/exporter.log"
port=$(free_port)
start_exporter "$port" -c 200 --log-format json -f "$CSV" \
  --fake-gpus-scenario "$SOURCE_DIR/testdata/scenarios/hang_live.yaml"
pid=${PIDS[-1]}
until_metric "$port" 'nvml_exporter_gpu_stale\{gpu="0",[^}]*reads="fast"\}' 1 10
touch "$WORK/release"
until_metric "$port" 'nvml_exporter_gpu_stale\{gpu="0",[^}]*reads="fast"\}' 0 10
until_metric "$port" 'nvml_exporter_gpu_stale\{gpu="1",[^}]*reads="slow"\}' 0 10
until_metric "$port" 'DCGM_FI_DEV_GPU_TEMP\{gpu="0",' 40 10
until_metric "$port" 'nvml_exporter_gpu_up\{gpu="0",' 1 10
grep -q '^DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu="1"' "$WORK/m.txt" || fail "GPU 1's energy is back"
stop_within "$pid" "$STOP_LIMIT"
grep -q 'GPU reads answer again' "$WORK/exporter.log" || fail "no recovery log line"
grep -q 'exiting with an NVML call still in progress' "$WORK/exporter.log" && fail "nothing was stuck"
rm -f "$WORK/release"
pass "when the stuck call returns the data is fresh again; the stop is a clean one"

# 5. Only the slow loop is stuck: SIGTERM within 2 s too.
: >"$WORK/exporter.log"
port=$(free_port)
start_exporter "$port" -c 200 --log-format json -f "$CSV" \
  --fake-gpus-scenario "$SOURCE_DIR/testdata/scenarios/hang_slow.yaml"
pid=${PIDS[-1]}
until_metric "$port" 'nvml_exporter_gpu_stale\{gpu="0",[^}]*reads="slow"\}' 1 10
[ "$(metric "$WORK/m.txt" 'nvml_exporter_gpu_up\{gpu="0",')" = 1 ] || fail "fast reads of GPU 0 go on"
[ "$(curl -sS "http://127.0.0.1:$port/health")" = "OK" ] || fail "/health with a stuck slow read"
stop_within "$pid" "$STOP_LIMIT"
grep -q '"stuck":"gpu=0 loop=slow call=nvmlDeviceGetFieldValues' "$WORK/exporter.log" ||
  fail "the exit must name the stuck slow call"
pass "SIGTERM within 2 s with a call hung in the slow loop"
unset NVMLX_SIMGPU_RELEASE_FILE

# 6. Reload: SIGHUP (it was exit 129) and a change of the file reload the field list; a bad
#    file is rejected with file:line, counted, and the old fields stay.
: >"$WORK/exporter.log"
printf 'DCGM_FI_DEV_GPU_UTIL, gauge, util\n' >"$WORK/reload.csv"
port=$(free_port)
# fatal: an unknown name rejects the reload, as dcgm-exporter (the default skips the row:
# collectors_unknown_test.sh).
start_exporter "$port" -c 200 --log-format json -f "$WORK/reload.csv" \
  --collectors-unknown-fields=fatal
pid=${PIDS[-1]}
printf 'DCGM_FI_DEV_GPU_UTIL, gauge, util\nDCGM_FI_DEV_GPU_TEMP, gauge, temp\n' >"$WORK/reload.csv.new"
mv "$WORK/reload.csv.new" "$WORK/reload.csv"
kill -HUP "$pid"
until_grep "$port" '^DCGM_FI_DEV_GPU_TEMP\{gpu="0",' 10
kill -0 "$pid" || fail "SIGHUP killed the daemon"
printf 'DCGM_FI_DEV_GPU_UTIL, gauge, util\nDCGM_FI_DEV_GPU_TMP, gauge, temp\n' >"$WORK/reload.csv.new"
mv "$WORK/reload.csv.new" "$WORK/reload.csv"
kill -HUP "$pid"
until_metric "$port" 'nvml_exporter_config_reload_failures_total' 1 10
grep -Eq '^DCGM_FI_DEV_GPU_TEMP\{gpu="0",' "$WORK/m.txt" || fail "a bad file must keep the old fields"
grep -q '"msg":"collectors file rejected; the current fields stay in use".*reload.csv:2: unknown field' \
  "$WORK/exporter.log" || { cat "$WORK/exporter.log"; fail "no rejection line with file:line"; }
# No signal: the reloader notices the change of the file (polled every 2 s) and reads it once
# the next poll finds it unchanged.
printf 'DCGM_FI_DEV_GPU_TEMP, gauge, temp\n' >"$WORK/reload.csv.new"
mv "$WORK/reload.csv.new" "$WORK/reload.csv"
for _ in $(seq 1 100); do
  curl -fsS "http://127.0.0.1:$port/metrics" >"$WORK/m.txt"
  grep -q '^DCGM_FI_DEV_GPU_UTIL{' "$WORK/m.txt" || break
  sleep 0.1
done
grep -q '^DCGM_FI_DEV_GPU_UTIL{' "$WORK/m.txt" && fail "a changed file must be reloaded without a signal"
[ "$(metric "$WORK/m.txt" 'nvml_exporter_config_reload_failures_total')" = 1 ] || fail "failure count"
[ "$(grep -c '"msg":"collectors file reloaded"' "$WORK/exporter.log")" = 2 ] || fail "reload log lines"
stop_within "$pid" "$STOP_LIMIT"
pass "SIGHUP and a changed file reload the fields; a bad file is rejected with file:line and counted"

# 7. /health, defect 5: every GPU lost and no GPU at all give the same rule (liveness: 200 while
#    the loop publishes), the GPU state in the body.
cat >"$WORK/all_lost.yaml" <<'YAML'
gpus: [{name: "NVIDIA H200"}, {name: "NVIDIA H200"}]
faults: [{gpu: 0, lost_after_s: 0.5}, {gpu: 1, lost_after_s: 0.5}]
YAML
port=$(free_port)
start_exporter "$port" -c 200 -f "$CSV" --fake-gpus-scenario "$WORK/all_lost.yaml"
pid=${PIDS[-1]}
# Both: under ASan the start can outlast the 0.5 s, and a GPU whose probe already finds it lost is
# down from the first page while the other is found lost at its first read after its set-up.
until_metric "$port" 'nvml_exporter_gpu_up\{gpu="1",' 0 10
until_metric "$port" 'nvml_exporter_gpu_up\{gpu="0",' 0 10
body=$(curl -sS -w ' %{http_code}' "http://127.0.0.1:$port/health")
[ "$body" = "OK: 2 of 2 GPU(s) lost 200" ] || fail "all lost: $body"
ready=$(curl -sS -w ' %{http_code}' "http://127.0.0.1:$port/ready")
[ "$ready" = "OK: 2 of 2 GPU(s) lost 200" ] || fail "all lost, ready: $ready"
stop_within "$pid" "$STOP_LIMIT"
echo 'gpus: []' >"$WORK/no_gpus.yaml"
port=$(free_port)
start_exporter "$port" -c 200 -f "$CSV" --fake-gpus-scenario "$WORK/no_gpus.yaml"
pid=${PIDS[-1]}
body=$(curl -sS -w ' %{http_code}' "http://127.0.0.1:$port/health")
[ "$body" = "OK: no GPU is being collected 200" ] || fail "no GPUs: $body"
stop_within "$pid" "$STOP_LIMIT"
pass "/health: all GPUs lost and zero GPUs both 200 with the state in the body"
# 8. nvmlInit failing at start (driver not loaded yet): retried with backoff, logged once, then
#    the daemon serves; a library that is missing or not NVML: exit 1 at once, one line naming it.
: >"$WORK/exporter.log"
port=$(free_port)
NVMLX_SIMGPU_INIT_FAILURES=2 start_exporter "$port" -c 500 --log-format json -f "$CSV"
pid=${PIDS[-1]}
[ "$(grep -c 'NVML initialisation failed; retrying' "$WORK/exporter.log")" = 1 ] ||
  fail "init failure must be logged once"
grep -q '"msg":"NVML initialised","attempts":"3"' "$WORK/exporter.log" || fail "no recovery line"
stop_within "$pid" "$STOP_LIMIT"
for lib in /nonexistent/libnvidia-ml.so.1 "$(python3 -c 'import zlib, ctypes.util; print(ctypes.util.find_library("z") or "")')"; do
  [ -n "$lib" ] || continue
  set +e
  "$EXPORTER" --nvml-library "$lib" -a "127.0.0.1:$(free_port)" -f "$CSV" 2>"$WORK/nolib.err"; rc=$?
  set -e
  [ "$rc" = 1 ] || fail "$lib: exit $rc, want 1"
  grep -q "$lib" "$WORK/nolib.err" || { cat "$WORK/nolib.err"; fail "$lib: the error must name the library"; }
  grep -q 'retrying' "$WORK/nolib.err" && fail "$lib: a missing library is not retried"
done
pass "nvmlInit retried with backoff; missing or non-NVML library exits 1 naming it"
# 9. --once with a read stuck on GPU 0: the page comes after the once deadline (10 s) with GPU 0
#    stale, and the process exits instead of waiting for the stuck reader.
printf 'DCGM_FI_DEV_GPU_UTIL, gauge, util\nDCGM_EXP_CLOCK_EVENTS_COUNT, counter, events\n' >"$WORK/once.csv"
t0=$(now)
set +e
timeout 30 "$EXPORTER" --fake-gpus --fake-gpus-scenario "$SOURCE_DIR/testdata/scenarios/hang_once.yaml" \
  -f "$WORK/once.csv" --once >"$WORK/once.txt" 2>"$WORK/once.log"; rc=$?
set -e
took=$(python3 -c "print(round($(now) - $t0, 1))")
[ "$rc" = 0 ] || { cat "$WORK/once.log"; fail "--once with a stuck read: exit $rc after ${took}s"; }
grep -Eq '^nvml_exporter_gpu_stale\{gpu="0",[^}]*reads="fast"\} 1' "$WORK/once.txt" || fail "--once: GPU 0 stale"
grep -Eq '^DCGM_FI_DEV_GPU_UTIL\{gpu="1",' "$WORK/once.txt" || fail "--once: GPU 1 collected"
grep -q 'exiting with an NVML call still in progress.*nvmlDeviceGetCurrentClocksEventReasons' "$WORK/once.log" ||
  fail "--once: the stuck call must be logged"
pass "--once prints the page with the stuck GPU stale and exits (${took}s)"
# 10. SIGTERM during a scrape storm (wrk, 64 connections, kept alive, gzip): in-flight responses
#     are drained or cut at the server's grace, and the daemon exits 0 within the same limit.
: >"$WORK/exporter.log"
port=$(free_port)
start_exporter "$port" -c 200 -f "$CSV"
pid=${PIDS[-1]}
until_grep "$port" '^DCGM_FI_DEV_GPU_UTIL\{' 10
wrk -t2 -c64 -d20s -H 'Accept-Encoding: gzip' "http://127.0.0.1:$port/metrics" >"$WORK/storm.wrk" 2>&1 &
storm=$!
sleep 2
kill -0 "$storm" || fail "wrk ended before the SIGTERM"
stop_within "$pid" "$STOP_LIMIT"
wait "$storm" || true
served=$(awk '/requests in/ {print $1}' "$WORK/storm.wrk")
[ "${served:-0}" -gt 0 ] || { cat "$WORK/storm.wrk"; fail "the storm got no answer before the SIGTERM"; }
pass "SIGTERM during a wrk storm ($served scrapes answered): exit 0 within $STOP_LIMIT s"
# Hardening round two, row 11: a reload or pause signal that arrives while the image is still
# loading must not end the process. The exec inherits those signals blocked and already pending
# (what a re-execution does, and what main.cc's earliest constructor does for a first start): the
# daemon takes them once its main thread waits, ignores them during start-up, and serves.
: >"$WORK/exporter.log"
port=$(free_port)
python3 -c '
import os, signal, sys
early = {signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2}
signal.pthread_sigmask(signal.SIG_BLOCK, early)
for sig in early:
    os.kill(os.getpid(), sig)  # pending, blocked, across the exec
os.execv(sys.argv[1], sys.argv[1:])
' "$EXPORTER" --fake-gpus -a "127.0.0.1:$port" -c 200 -f "$CSV" >"$WORK/exporter.out" 2>"$WORK/exporter.log" &
pid=$!
PIDS+=("$pid")
wait_http "http://127.0.0.1:$port/ready" 20 || { cat "$WORK/exporter.log"; fail "signals at exec ended the daemon"; }
kill -0 "$pid" || fail "the daemon died of a signal sent at exec"
[ "$(grep -c 'signal during start-up: ignored' "$WORK/exporter.log")" = 3 ] ||
  { cat "$WORK/exporter.log"; fail "want SIGHUP, SIGUSR1 and SIGUSR2 taken and ignored during start-up"; }
stop_within "$pid" "$STOP_LIMIT"
pass "SIGHUP, SIGUSR1 and SIGUSR2 sent before the daemon's main ran: taken during start-up, not fatal"
echo "lifecycle_test: all passed"

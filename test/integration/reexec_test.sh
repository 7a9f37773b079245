#!/usr/bin/env bash
# The daemon re-executing itself (same pid) where a reload cannot apply a change in place.
# --enable-gpu-bind-unbind-watch: it watches a stand-in for the nvidia driver's PCI directory
# (NVMLX_GPU_BIND_DIR) and, when a GPU is bound or unbound there, re-executes so that the
# simulated NVML enumerates the GPUs of the scenario as it is now; a directory that cannot be
# read leaves the watch off with one warning; the re-executed daemon still stops cleanly on
# SIGTERM; the directory vanishing and coming back (the nvidia module reloaded) re-executes
# too, even with the same GPUs. A reload (SIGHUP) that adds Xid fields, which need the Xid
# watcher only a start builds, re-executes too, and the new image serves them.
source "$(dirname "$0")/lib.sh"
BIND="$WORK/nvidia"
mkdir -p "$BIND/module"
touch "$BIND/bind" "$BIND/unbind" "$BIND/new_id" "$BIND/0000:00:06.0"
SCN="$WORK/gpus.yaml"
scenario() {  # scenario N: N simulated GPUs
  { echo 'driver_version: "580.159.04"'
    echo 'gpus:'
    for i in $(seq 1 "$1"); do
      echo "  - {name: \"NVIDIA H200\", pci_bus_id: \"00000000:00:0$((5 + i)).0\", values: {gpu_util: $((10 * i))}}"
    done
  } >"$SCN.new"
  mv "$SCN.new" "$SCN"
}
printf 'DCGM_FI_DEV_GPU_UTIL, gauge, u\n' >"$WORK/c.csv"
scenario 1
export NVMLX_GPU_BIND_DIR="$BIND"
port=$(free_port)
start_exporter "$port" --fake-gpus-scenario "$SCN" -f "$WORK/c.csv" -c 200 \
  --enable-gpu-bind-unbind-watch --gpu-bind-unbind-poll-interval 100ms
pid=${PIDS[-1]}
gpus() { curl -sS "http://127.0.0.1:$port/metrics" 2>/dev/null | grep -c '^DCGM_FI_DEV_GPU_UTIL{' || true; }
await_gpus() {  # await_gpus N: the page shows N GPUs within 15 s
  for _ in $(seq 150); do
    [ "$(gpus)" = "$1" ] && return 0
    sleep 0.1
  done
  cat "$WORK/exporter.log" >&2
  fail "timed out waiting for $1 GPUs (page has $(gpus))"
}
await_log() {  # await_log PATTERN COUNT: the log has COUNT lines matching within 10 s
  for _ in $(seq 100); do
    [ "$(grep -c "$1" "$WORK/exporter.log")" = "$2" ] && return 0
    sleep 0.1
  done
  cat "$WORK/exporter.log" >&2
  fail "want $2 log lines matching '$1', have $(grep -c "$1" "$WORK/exporter.log")"
}
await_gpus 1
await_log 'GPU bind/unbind watch on' 1  # the watch starts once the daemon serves
grep -q 'enable-gpu-bind-unbind-watch.*ignored' "$WORK/exporter.log" && fail "watch flag still warned as ignored"

scenario 2
touch "$BIND/0000:00:07.0"  # a GPU is bound
await_gpus 2
kill -0 "$pid" || fail "the daemon is gone: it should have re-executed in place"
grep -q 'GPU set changed.*added=0000:00:07.0' "$WORK/exporter.log" || fail "no 'GPU set changed' line"
[ "$(grep -c 're-executing the daemon' "$WORK/exporter.log")" = 1 ] || fail "want one re-exec"
await_log 'GPU bind/unbind watch on' 2  # the new image watches again
pass "a GPU bound: the daemon re-executed (same pid) and serves both GPUs"

scenario 1
rm "$BIND/0000:00:07.0"  # unbound

await_gpus 1
kill -0 "$pid" || fail "the daemon is gone after the unbind"
grep -q 'removed=0000:00:07.0' "$WORK/exporter.log" || fail "the unbind was not logged"
pass "a GPU unbound: back to one GPU"

await_log 'GPU bind/unbind watch on' 3
mv "$BIND" "$BIND.away"  # the nvidia module unloaded ...
await_log "cannot read the driver's directory" 1
mv "$BIND.away" "$BIND"  # ... and loaded again, with the same GPU
await_log 're-executing the daemon' 3
await_log 'driver_reloaded=true' 1
await_gpus 1
kill -0 "$pid" || fail "the daemon is gone after the driver reload"
pass "the driver reloaded (directory gone and back, same GPUs): re-executed"

kill -TERM "$pid"
set +e
wait "$pid"
rc=$?
set -e
[ "$rc" = 0 ] || fail "SIGTERM after re-exec: exit $rc"
pass "the re-executed daemon stops cleanly"

export NVMLX_GPU_BIND_DIR="$WORK/no-such-dir"
port=$(free_port)
start_exporter "$port" --fake-gpus-scenario "$SCN" -f "$WORK/c.csv" --enable-gpu-bind-unbind-watch
await_log 'GPU bind/unbind watch off' 1
await_gpus 1
pass "an unreadable directory: the watch is off, with one warning, and the daemon serves"

# A reload that adds an Xid field: the Xid watcher only starts with the daemon.
kill -TERM "${PIDS[-1]}"
port=$(free_port)
start_exporter "$port" --fake-gpus-scenario "$SCN" -f "$WORK/c.csv" -c 200
pid=${PIDS[-1]}
printf 'DCGM_FI_DEV_GPU_UTIL, gauge, u\nDCGM_FI_DEV_XID_ERRORS, gauge, x\n' >"$WORK/c.csv.new"
mv "$WORK/c.csv.new" "$WORK/c.csv"
kill -HUP "$pid"
await_log 're-executing the daemon' 1
for _ in $(seq 150); do
  curl -sS "http://127.0.0.1:$port/metrics" 2>/dev/null | grep -q '^DCGM_FI_DEV_XID_ERRORS{' && break
  sleep 0.1
done
curl -sS "http://127.0.0.1:$port/metrics" | grep -q '^DCGM_FI_DEV_XID_ERRORS{gpu="0"' ||
  fail "no Xid series after the reload's re-execution"
kill -0 "$pid" || fail "the daemon is gone after the Xid reload"
grep -q 'need the Xid watcher.*action=re-executing' "$WORK/exporter.log" || fail "no reason logged"
pass "a reload adding Xid fields re-executes the daemon, which then serves them"
echo "reexec_test: all passed"

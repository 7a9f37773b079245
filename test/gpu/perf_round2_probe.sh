#!/usr/bin/env bash
# Issue 40, second look on a GPU host, in one run (docs/benchmarks.md "Performance round"):
#   1. where the daemon's RSS is, by mapping, against bench/nvml_init_rss (the RSS rows): GPM
#      path and PM-sampling path, each plain, with malloc_trim every 2 s (bench/malloc_trim_shim.cc:
#      how much is free heap malloc keeps) and with start-up's read-only pages given back after
#      8 s (DROP_SHIM, an LD_PRELOAD experiment);
#   2. PM sampling's driver costs against the hardware buffer's size and a retained primary
#      context, with the RSS each leaves (tools/pm-probe --switch);
#   3. the default file's CPU against the NVML floor with the floor and both builds running at the
#      same time (same minute, same driver state), twice, so that the VM's drift cannot split them.
# Everything goes to stdout. Run from the repo root after `make bundle` (plus the two shims in
# bundle/: g++ -O2 -shared -fPIC bench/malloc_trim_shim.cc -o bundle/malloc_trim_shim.so, and
# bench/drop_pages_shim.cc likewise as bundle/drop_shim.so).
# Nothing here changes GPU settings.
set -uo pipefail
B="${BUNDLE:-bundle}"
CSV="$B/etc/default-counters.csv"
CUPTI="${CUPTI:-$(find / \( -path /proc -o -path /sys \) -prune -o -name 'libcupti.so.13' -print 2>/dev/null | sort | head -1)}"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "cupti: $CUPTI"
status() { grep -E 'VmRSS|RssAnon|RssFile' "/proc/$1/status" | tr -s ' \t' ' ' | tr '\n' ' '; }
wait_ready() { for _ in $(seq 150); do curl -fsS -o /dev/null "http://127.0.0.1:$1/ready" 2>/dev/null && return; sleep 0.2; done; }
scrape3() { for _ in 1 2 3; do curl -fsS -o /dev/null "http://127.0.0.1:$1/metrics"; sleep 0.3; done; }

echo "== 1. RSS by mapping"
sleep 60 | "$B/nvml_init_rss" libnvidia-ml.so.1 --hold &
sleep 3
bpid=$(pgrep -f "nvml_init_rss libnvidia-ml" | head -1)
echo "base $(status "$bpid")"
python3 bench/smaps_by_mapping.py "$bpid" --top 14 --tag base
pkill -f "nvml_init_rss libnvidia-ml"; pkill -f "sleep 60"
rss_run() {  # $1 tag, $2 port, $3 seconds before reading, $4 env (or -), then daemon flags
  local tag=$1 port=$2 secs=$3 envx=$4; shift 4
  if [ "$envx" = - ]; then envx=; fi
  env $envx "$B/nvml-exporter" -f "$CSV" -c 1000 -a "127.0.0.1:$port" "$@" >/dev/null 2>/tmp/rss-$tag.log &
  local pid=$!
  wait_ready "$port"; sleep "$secs"; scrape3 "$port"
  echo "$tag $(status "$pid")"
  python3 bench/smaps_by_mapping.py "$pid" --top 16 --tag "$tag"
  kill -TERM "$pid"; wait "$pid" 2>/dev/null
}
rss_run gpm 9501 12 -
rss_run gpm-trim 9502 12 "LD_PRELOAD=$PWD/$B/malloc_trim_shim.so"
rss_run gpm-drop 9503 20 "LD_PRELOAD=$PWD/$B/drop_shim.so DROP_AFTER_S=8"
rss_run pm 9504 15 - --profiling-source=pm-sampling --cupti-library "$CUPTI"
rss_run pm-trim 9505 15 "LD_PRELOAD=$PWD/$B/malloc_trim_shim.so" --profiling-source=pm-sampling --cupti-library "$CUPTI"
rss_run pm-drop 9506 22 "LD_PRELOAD=$PWD/$B/drop_shim.so DROP_AFTER_S=10" --profiling-source=pm-sampling --cupti-library "$CUPTI"

echo "== 2. pm-probe: buffer size, retained context"
. "$(dirname "$0")/gh100_switch_metrics.sh"  # SHARED, TENSOR
probe() {  # $1 tag, then flags
  local tag=$1; shift
  "$B/pm-probe" --cupti "$CUPTI" --switch 4 --dwell-ms 1000 --other "$TENSOR" "$@" "${SHARED[@]}" \
    >/tmp/probe-$tag.csv 2>/tmp/probe-$tag.err
  echo "probe $tag exit $?"
  grep -E '^restart|^keep' /tmp/probe-$tag.csv | sed "s/^/probe $tag /" | tail -4
  grep -E 'rss|Rss|retained' /tmp/probe-$tag.err | sed "s/^/probe $tag /" | tail -4
}
probe buf4096 --hw-buffer-kib 4096
probe buf256 --hw-buffer-kib 256
probe retain --retain-ctx
"$B/gpu-pulse" --on 120s --off 0 --duration 45s --gpus 0 --mode tensor >/dev/null 2>&1 &
load=$!
sleep 3
probe load-buf4096 --hw-buffer-kib 4096
probe load-buf256 --hw-buffer-kib 256
probe load-retain --retain-ctx
wait "$load"
head -2 /tmp/probe-buf4096.csv

echo "== 3. default file: floor, before and after at the same time"
together() {  # $1 round
  "$B/bench/nvml_floor" -f "$CSV" -n 40 -c 1000 >/tmp/floor-$1.json 2>&1 &
  local fpid=$!
  sleep 0.33
  "$B/nvml-exporter-before" -f "$CSV" -c 1000 -a 127.0.0.1:9511 >/dev/null 2>&1 &
  local b=$!
  sleep 0.33
  "$B/nvml-exporter" -f "$CSV" -c 1000 -a 127.0.0.1:9512 >/dev/null 2>&1 &
  local a=$!
  wait_ready 9511; wait_ready 9512; sleep 3
  python3 bench/thread_cpu.py "$b" 30 --collections 30 >/tmp/threads-before-$1.txt &
  local t=$!
  python3 bench/thread_cpu.py "$a" 30 --collections 30 | sed "s/^/round $1 after /"
  wait "$t"; sed "s/^/round $1 before /" /tmp/threads-before-$1.txt
  kill -TERM "$a" "$b"; wait "$a" "$b" 2>/dev/null
  wait "$fpid"
  echo "round $1 floor $(cat /tmp/floor-$1.json)"
}
together 1
together 2

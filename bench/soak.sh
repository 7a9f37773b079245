#!/usr/bin/env bash
# Soak: many scrapes, kept-alive and on new connections, with collectors-file reloads (SIGHUP)
# meanwhile, against one daemon on 8 simulated GPUs. Reports RSS, open fds and threads of the
# daemon after warm-up and at the end, and whether every request succeeded. Bounded: stops
# after SOAK_SCRAPES requests of each kind (default 100000, so 200000 in all) and
# SOAK_RELOADS reloads (default 1000). Not a test: figures are reported, not asserted; the
# section goes into docs/benchmarks.md through bench/run.sh, or to stdout when run alone:
#   bench/soak.sh [build-dir]
set -euo pipefail
build="${1:-build}"
src="$(cd "$(dirname "$0")/.." && pwd)"
scrapes="${SOAK_SCRAPES:-100000}"
reloads="${SOAK_RELOADS:-1000}"
. "$src/bench/lib.sh"  # $work, $pids, port, wait_up

cp "$src/etc/dcp-metrics-included.csv" "$work/collectors.csv"
p=$(port)
"$build/src/app/nvml-exporter" --fake-gpus --fake-gpus-scenario "$src/testdata/scenarios/eight_gpus.yaml" \
  -f "$work/collectors.csv" -c 1000 -a "127.0.0.1:$p" 2>"$work/exporter.log" &
pids+=($!); pid=$!
url="http://127.0.0.1:$p/metrics"
wait_up "$url"

measure() {  # RSS kB, fds, threads
  echo "$(awk '/VmRSS/ {print $2}' "/proc/$pid/status") $(ls "/proc/$pid/fd" | wc -l) $(ls "/proc/$pid/task" | wc -l)"
}
# Warm-up: both kinds of request and a few reloads, so that the first figures include the
# daemon's steady buffers.
wrk -t1 -c4 -d2s -H 'Accept-Encoding: gzip' "$url" >/dev/null
for _ in 1 2 3; do kill -HUP "$pid"; sleep 0.2; done
sleep 1
read -r rss0 fd0 thr0 <<<"$(measure)"

# Reloads in the background, spread over the scrape phases; every tenth one swaps in a
# collectors file with one more field, so that the field set really changes.
(
  for i in $(seq "$reloads"); do
    if (( i % 10 == 0 )); then
      cp "$src/etc/default-counters.csv" "$work/collectors.csv"
    else
      cp "$src/etc/dcp-metrics-included.csv" "$work/collectors.csv"
    fi
    kill -HUP "$pid" 2>/dev/null || exit 0
    sleep 0.03
  done
) &
reloader=$!; pids+=($reloader)

# wrk runs for a duration; repeat short runs until the count is reached.
run_until() {  # name count extra-wrk-args...
  local name="$1" want="$2" done_=0 errs=0 n e
  shift 2
  while (( done_ < want )); do
    wrk -t2 -c8 -d5s "$@" "$url" >"$work/$name.wrk"
    n=$(awk '/requests in/ {print $1}' "$work/$name.wrk")
    e=$(awk '/Non-2xx|Socket errors/ {for (i=1;i<=NF;i++) if ($i ~ /^[0-9]+,?$/) s+=$i} END {print s+0}' "$work/$name.wrk")
    done_=$(( done_ + n )); errs=$(( errs + e ))
  done
  echo "$done_ $errs"
}
start=$(date +%s)
read -r keep keep_err <<<"$(run_until keepalive "$scrapes" -H 'Accept-Encoding: gzip')"
read -r fresh fresh_err <<<"$(run_until close "$scrapes" -H 'Accept-Encoding: gzip' -H 'Connection: close')"
wait "$reloader" || true
elapsed=$(( $(date +%s) - start ))
sleep 2  # let the last reload's collection publish
read -r rss1 fd1 thr1 <<<"$(measure)"
alive=yes; kill -0 "$pid" 2>/dev/null || alive=no
# Reloads are counted on the page, not logged: the last success's age, and the failures.
page=$(curl -fsS "$url")
reload_age=$(awk -v now="$(date +%s)" '/^nvml_exporter_config_last_reload_success_timestamp_seconds/ {printf "%.1f", now - $2}' <<<"$page")
reload_failures=$(awk '/^nvml_exporter_config_reload_failures_total/ {print $2}' <<<"$page")

cat <<EOF
## Soak (\`bench/soak.sh\`)

One daemon, 8 simulated GPUs, \`etc/dcp-metrics-included.csv\`, \`-c 1000\`; $keep kept-alive and
$fresh new-connection scrapes (wrk, 8 connections, gzip), and $reloads SIGHUP reloads meanwhile
(every tenth swaps the collectors file), in ${elapsed} s. Failed requests (non-2xx or socket
errors): $keep_err kept-alive, $fresh_err new-connection. Daemon alive at the end: $alive; last
successful reload ${reload_age} s before the end, reload failures: ${reload_failures}.

| | after warm-up | at the end | ratio |
|---|---|---|---|
| RSS (KiB) | $rss0 | $rss1 | $(python3 -c "print(f'{$rss1/$rss0:.2f}')") |
| open fds | $fd0 | $fd1 | $(python3 -c "print(f'{$fd1/$fd0:.2f}')") |
| threads | $thr0 | $thr1 | $(python3 -c "print(f'{$thr1/$thr0:.2f}')") |
EOF

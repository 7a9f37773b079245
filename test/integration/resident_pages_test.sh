#!/usr/bin/env bash
# Start-up's read-only pages are released once start-up is over (util/resident_pages.h; at 30 s,
# here at 300 ms through NVMLX_START_UP_OVER_MS), and the daemon goes on serving whole pages
# from the code it maps back as it runs.
source "$(dirname "$0")/lib.sh"
port=$(free_port)
NVMLX_START_UP_OVER_MS=300 start_exporter "$port" -c 200 --debug -f "$SOURCE_DIR/etc/default-counters.csv"
pid="${PIDS[-1]}"
for _ in $(seq 100); do grep -q "start-up's read-only pages released" "$WORK/exporter.log" && break; sleep 0.1; done
line=$(grep "start-up's read-only pages released" "$WORK/exporter.log") || fail "no release logged"
[[ "$line" =~ segments=([0-9]+) ]] && [ "${BASH_REMATCH[1]}" -gt 0 ] || fail "nothing released: $line"
[ "$(grep -c "pages released" "$WORK/exporter.log")" = 1 ] || fail "released more than once"
pass "released once after start-up: $line"
for i in 1 2 3 4 5; do
  curl -fsS "http://127.0.0.1:$port/metrics" >"$WORK/m$i.txt" || fail "scrape $i after the release"
  [ "$(grep -c '^DCGM_FI_DEV_GPU_UTIL{' "$WORK/m$i.txt")" = 2 ] || fail "scrape $i: not both GPUs"
  sleep 0.25
done
promtool_parses "the page after the release" "$WORK/m5.txt"
kill -0 "$pid" || fail "the daemon died after the release"
pass "whole pages served after the release"

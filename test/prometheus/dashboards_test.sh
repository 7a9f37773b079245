#!/usr/bin/env bash
# The dashboards and rules against real data: scripts/demo.sh (the daemon on simulated GPUs with
# pods from the fake kubelet, and a real Prometheus scraping it every second with
# deploy/prometheus/rules.yml) runs for SCRAPE_SECONDS (default 8); then dashboards_check.py runs
# every query of our dashboards and of dcgm-exporter's (testdata/compat/*-queries.txt) and every
# rule, and renders our dashboards to PNG in OUT_DIR (default $BUILD_DIR/dashboards).
#   Regenerate docs/dashboards/: SCRAPE_SECONDS=60 OUT_DIR=docs/dashboards BUILD_DIR=build \
#     SOURCE_DIR=. bash test/prometheus/dashboards_test.sh
set -euo pipefail
BUILD_DIR="${BUILD_DIR:?}"
SOURCE_DIR="${SOURCE_DIR:?}"
OUT_DIR="${OUT_DIR:-$BUILD_DIR/dashboards}"
SCRAPE_SECONDS="${SCRAPE_SECONDS:-8}"
fail() { echo "FAIL: $*" >&2; exit 1; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# Debian's python3 has python3-matplotlib; another python3 may come first on PATH.
PY=python3
python3 -c 'import matplotlib' 2>/dev/null || PY=/usr/bin/python3
"$PY" -c 'import matplotlib, yaml' 2>/dev/null || fail "python3-matplotlib not installed (scripts/install-deps.sh)"
log="$(mktemp)"
export DEMO_EXPORTER_PORT="$(free_port)" DEMO_PROMETHEUS_PORT="$(free_port)" DEMO_FORCE_SIMULATED=1
bash "$SOURCE_DIR/scripts/demo.sh" "$BUILD_DIR" >"$log" 2>&1 &
demo=$!
trap 'kill -TERM $demo 2>/dev/null || true; wait $demo 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 300); do grep -q 'demo is running' "$log" && break; kill -0 $demo 2>/dev/null || break; sleep 0.1; done
grep -q 'demo is running' "$log" || { cat "$log" >&2; fail "demo did not start"; }
# Prometheus starts scraping a few seconds after it is ready (its discovery updates are
# throttled to 5 s): the window starts at the first sample.
prom="http://127.0.0.1:$DEMO_PROMETHEUS_PORT"
for _ in $(seq 150); do
  curl -fsS "$prom/api/v1/query?query=up%7Bjob%3D%22nvml-exporter%22%7D%3D%3D1" 2>/dev/null | grep -q '"value"' && break
  sleep 0.1
done
start=$(date +%s)
sleep "$SCRAPE_SECONDS"
rm -rf "$OUT_DIR"
"$PY" "$SOURCE_DIR/test/prometheus/dashboards_check.py" "$prom" \
  "$SOURCE_DIR" "$OUT_DIR" "$start"
# Each image exists and is a PNG of some size (every panel's data was checked above).
for d in fleet gpu pods; do
  f="$OUT_DIR/nvml-exporter-$d.png"
  [ "$(head -c 8 "$f" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "$f is not a PNG"
  [ "$(stat -c %s "$f")" -gt 20000 ] || fail "$f is suspiciously small"
done
echo "dashboards_test: all passed"

# Shared helpers for the integration tests (sourced). Every test cleans up its processes.
set -euo pipefail
BUILD_DIR="${BUILD_DIR:?}"
SOURCE_DIR="${SOURCE_DIR:?}"
EXPORTER="$BUILD_DIR/src/app/nvml-exporter"
WORK="$(mktemp -d)"
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
# On failure, the daemon's last log lines too: CI keeps no work folder.
fail() {
  echo "FAIL: $*" >&2
  if [ -s "$WORK/exporter.log" ]; then
    echo "--- last lines of the daemon's log:" >&2
    tail -n 15 "$WORK/exporter.log" >&2
  fi
  exit 1
}
pass() { echo "ok: $*"; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# wait_http URL SECONDS: until it answers 200
wait_http() {
  local url="$1" secs="$2" i
  for ((i = 0; i < secs * 10; i++)); do
    if curl -fsS -o /dev/null "$url" 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  return 1
}
# await_page URL PATTERN SECONDS: until the page at URL has a line matching PATTERN (grep -E)
await_page() {
  local url="$1" pattern="$2" secs="$3" i
  for ((i = 0; i < secs * 5; i++)); do
    if curl -fsS "$url" 2>/dev/null | grep -qE "$pattern"; then return 0; fi
    sleep 0.2
  done
  return 1
}
# start_exporter PORT ARGS...: runs the daemon on simulated GPUs in the background.
start_exporter() {
  local port="$1"; shift
  "$EXPORTER" --fake-gpus -a "127.0.0.1:$port" "$@" >"$WORK/exporter.out" 2>"$WORK/exporter.log" &
  PIDS+=($!)
  wait_http "http://127.0.0.1:$port/ready" 20 || { cat "$WORK/exporter.log" >&2; fail "exporter did not become ready"; }
}
# start_pod_energy_exporter PORT [FLAGS...]: start_exporter with energy per pod as the pod tests
# run it: processes.yaml's GPUs and their /proc, the fake API server (start_apiserver first),
# --state-dir $WORK/state, collecting every 300 ms with JSON logs.
start_pod_energy_exporter() {
  local port="$1"; shift
  NODE_NAME=node1 start_exporter "$port" -c 300 --log-format json \
    -f "$SOURCE_DIR/etc/default-counters.csv" \
    --fake-gpus-scenario "$SOURCE_DIR/testdata/scenarios/processes.yaml" \
    --kubernetes-process-metrics --host-proc-root "$SOURCE_DIR/testdata/proc" \
    --kubernetes-api-server "https://127.0.0.1:$api_port" --kubernetes-token-file "$WORK/token" \
    --kubernetes-ca-file "$WORK/cert.pem" --state-dir "$WORK/state" "$@"
}
# start_apiserver: the fake Kubernetes API server (fake_apiserver.py) over HTTPS on a free port,
# serving testdata/apiserver/$API_PODS (default pods_node1.json), steered through the files of
# $CTL (created, mode "ok" unless set already). Bearer token "test-token" in $WORK/token; a self-signed certificate
# for 127.0.0.1, made once by the openssl CLI, in $WORK/cert.pem (the CA to trust). Sets
# API_PID and api_port. Call it again to restart a stopped server (a new port).
start_apiserver() {
  mkdir -p "$CTL"
  [ -e "$CTL/mode" ] || echo ok >"$CTL/mode"
  echo "test-token" >"$WORK/token"
  if [ ! -s "$WORK/cert.pem" ]; then
    openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=fake-apiserver" \
      -addext "subjectAltName=IP:127.0.0.1" -keyout "$WORK/key.pem" -out "$WORK/cert.pem" \
      2>"$WORK/openssl.log" || { cat "$WORK/openssl.log" >&2; fail "openssl could not make a certificate"; }
  fi
  rm -f "$WORK/api.port"
  python3 "$SOURCE_DIR/test/integration/fake_apiserver.py" "$SOURCE_DIR/testdata/apiserver/${API_PODS:-pods_node1.json}" \
    "$WORK/cert.pem" "$WORK/key.pem" test-token "$CTL" "$WORK/api.port" 2>>"$WORK/apiserver.log" &
  API_PID=$!
  PIDS+=("$API_PID")
  for _ in $(seq 1 100); do [ -s "$WORK/api.port" ] && break; sleep 0.1; done
  [ -s "$WORK/api.port" ] || fail "fake API server did not start"
  api_port=$(cat "$WORK/api.port")
}
# A --once page for a golden file: stdin without the lines that vary between builds and runs
# (the build_info labels, the collection's own timing).
drop_varying_lines() {
  grep -Ev '^nvml_exporter_(build_info|collect_duration_seconds|last_collect_timestamp_seconds)[{ ]'
}
# golden_matches NAME GOT WANT: GOT must equal the golden file WANT. With NVMLX_UPDATE_GOLDEN=1,
# GOT replaces WANT instead and the status is 1, so that the caller skips its further checks.
golden_matches() {
  local name="$1" got="$2" want="$3"
  if [ "${NVMLX_UPDATE_GOLDEN:-}" = 1 ]; then
    cp "$got" "$want"
    echo "updated $want"
    return 1
  fi
  diff -u "$want" "$got" || fail "$name: exposition differs from $want"
}
# promtool_parses NAME PAGE: promtool, when installed, parses PAGE (its exit 3 is lint only:
# dcgm-exporter's own names break Prometheus' naming rules).
promtool_parses() {
  command -v promtool >/dev/null || return 0
  local rc=0
  promtool check metrics <"$2" >/dev/null 2>&1 || rc=$?
  [ "$rc" = 0 ] || [ "$rc" = 3 ] || fail "$1: promtool could not parse it (exit $rc)"
}

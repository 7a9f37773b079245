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
fail() { echo "FAIL: $*" >&2; exit 1; }
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
# start_exporter PORT ARGS...: runs the daemon on simulated GPUs in the background.
start_exporter() {
  local port="$1"; shift
  "$EXPORTER" --fake-gpus -a "127.0.0.1:$port" "$@" >"$WORK/exporter.out" 2>"$WORK/exporter.log" &
  PIDS+=($!)
  wait_http "http://127.0.0.1:$port/ready" 20 || { cat "$WORK/exporter.log" >&2; fail "exporter did not become ready"; }
}

# Sourced by the bench scripts, after `set -euo pipefail` and $src: a scratch folder $work and
# the list $pids of background processes, both cleaned up at exit; `port` prints a free TCP port
# of 127.0.0.1; `wait_up URL` waits up to 10 s for URL to answer (over https without checking
# the certificate: the benches make their own self-signed ones).
work="$(mktemp -d)"
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_up() { for _ in $(seq 100); do curl -kfsS -o /dev/null "$1" 2>/dev/null && return 0; sleep 0.1; done; return 1; }

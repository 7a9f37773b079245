#!/usr/bin/env bash
# Time from `make run` in a fresh clone to the first successful GET /metrics on :9400, the
# newcomer's first experience. Usage: bench/first_metrics.sh [REV] (default HEAD). Clones REV
# into a temporary folder (no build tree, no ccache), runs `make run` there, polls /metrics once
# a second, prints the seconds, then stops the daemon. Dependencies already installed by
# scripts/install-deps.sh are not counted unless missing.
set -euo pipefail
rev="${1:-HEAD}"
src="$(cd "$(dirname "$0")/.." && pwd)"
if curl -sf -o /dev/null localhost:9400/metrics; then
  echo "first_metrics: something already serves :9400" >&2
  exit 1
fi
dir="$(mktemp -d)"
pgid=""
# make run execs the daemon in its own session (setsid): stopping that group stops it.
trap '[ -n "$pgid" ] && kill -- "-$pgid" 2>/dev/null; sleep 1; rm -rf "$dir" "$dir.log"' EXIT
git clone -q "$src" "$dir"
git -C "$dir" checkout -q "$rev"
start=$(date +%s.%N)
setsid bash -c 'cd "$1" && exec make run' _ "$dir" >"$dir.log" 2>&1 &
pgid=$!
until curl -sf -o /dev/null localhost:9400/metrics; do
  if ! kill -0 "$pgid" 2>/dev/null; then
    echo "first_metrics: make run exited:" >&2
    tail -20 "$dir.log" >&2
    exit 1
  fi
  sleep 1
done
end=$(date +%s.%N)
steps=$(grep -c '^\[[0-9]*/[0-9]*\]' "$dir.log" || true)
printf 'first_metrics: %s: %.0f s to the first /metrics (%s build steps)\n' \
  "$(git -C "$dir" log --oneline -1)" "$(awk -v a="$start" -v b="$end" 'BEGIN{print b - a}')" "$steps"

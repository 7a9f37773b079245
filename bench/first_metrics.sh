#!/usr/bin/env bash
# Time from `make run` in a fresh clone to the first successful GET /metrics on :9400, the
# newcomer's first experience. Usage: bench/first_metrics.sh [REV] (default HEAD). Clones REV
# into a temporary folder (no build tree, no ccache), runs `make run` there, polls /metrics once
# a second, prints the seconds, then stops the daemon. Dependencies already installed by
# scripts/install-deps.sh are not counted unless missing.
#
# bench/first_metrics.sh --daemon [BUILD] [RUNS]: the daemon's own start-up instead, on 8 simulated
# GPUs (etc/dcp-metrics-included.csv, -c 1000), RUNS times (5): milliseconds from exec to the
# first /metrics answer and to the first complete page (every family of the steady page, the
# GPM ones included; bench/gpu_bench.py). BEFORE_BIN=<another build's daemon> alternates with it.
#
# bench/first_metrics.sh --bare [--port PORT] [REV]: the README's promise, "on a fresh Debian 12
# machine as root", from scratch: the time from `make run` in a fresh clone of REV to the first
# /metrics on a bare Debian 12 root, apt included, with no package of this machine and no ccache.
# Needs root (chroot, mounts) and mmdebstrap; nothing else of this machine is used but its
# network and its Debian mirror (/etc/apt/sources.list.d/debian.sources).
#   The bare machine: Debian 12 minbase (what every Debian install has: apt, dpkg, coreutils,
#   bash) plus ca-certificates, curl, git and make. A Debian 12 cloud image has the first two and
#   lacks git and make; the README asks for those two before the clone (`apt-get install git
#   make`), so they are not counted. Its apt lists are empty, as mmdebstrap leaves them: `make
#   run`'s apt-get update is counted.
#   The minbase tarball is made once and kept in FIRST_METRICS_CACHE
#   (/var/cache/nvml-exporter-bench); each run unpacks it into a fresh folder under /var/tmp, so
#   no installed package, apt list or download is ever reused. REV is cloned into it from a bare
#   copy of this repository (not timed: printed apart), then `make run ARGS="-a :PORT"` runs
#   there under chroot, in its own PID and mount namespaces (/proc, /dev, /sys mounted there
#   only; the namespace's processes, the daemon included, die with it), while this script polls
#   localhost:PORT/metrics (PORT: 9400; the chroot shares this machine's network). No service
#   starts on install (a policy-rc.d that says no, as in Debian's container images): the old
#   package list would otherwise start Prometheus on :9090. Prints the total, its apt, configure
#   and build phases, and the machine's load during the run (other builds on a shared machine
#   lengthen it: compare runs of similar load only). The folder is removed at the end; the
#   timestamped output of the last run stays in FIRST_METRICS_CACHE/last-run.log.
set -euo pipefail
src="$(cd "$(dirname "$0")/.." && pwd)"
if [ "${1:-}" = --bare ]; then
  shift
  port=9400
  if [ "${1:-}" = --port ]; then port="$2"; shift 2; fi
  rev="${1:-HEAD}"
  die() { echo "first_metrics: $*" >&2; exit 1; }
  [ "$(id -u)" -eq 0 ] || die "--bare needs root (chroot and mounts)"
  command -v mmdebstrap >/dev/null || die "--bare needs mmdebstrap"
  sources=/etc/apt/sources.list.d/debian.sources
  [ -f "$sources" ] || die "no $sources: which Debian mirror to use?"
  hash="$(git -C "$src" rev-parse --verify "$rev^{commit}")"
  if curl -sf -o /dev/null "localhost:$port/metrics"; then die "something already serves :$port"; fi
  base_packages=ca-certificates,curl,git,make
  cache="${FIRST_METRICS_CACHE:-/var/cache/nvml-exporter-bench}"
  key="$({ cat "$sources"; echo "$base_packages"; } | sha256sum | cut -c1-12)"
  tarball="$cache/bookworm-minbase-$key.tar"
  if [ ! -f "$tarball" ]; then
    mkdir -p "$cache"
    echo "first_metrics: making $tarball (once)" >&2
    mmdebstrap --quiet --mode=root --variant=minbase --format=tar --include="$base_packages" \
      bookworm "$cache/partial-$key.tar" "$sources"
    mv "$cache/partial-$key.tar" "$tarball"
  fi

  root="$(mktemp -d /var/tmp/first-metrics.XXXXXX)"
  work="$root.work"
  mkdir "$work"
  sampler=""
  stop() {
    local pid
    if [ -f "$work/unshare.pid" ]; then
      pid="$(cat "$work/unshare.pid")"
      # SIGKILL: unshare blocks SIGTERM while it waits for its child. --kill-child then kills
      # the namespace's first process, and the kernel every other one in it.
      kill -KILL "$pid" 2>/dev/null || true
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    fi
    if [ -n "$sampler" ]; then kill "$sampler" 2>/dev/null || true; wait "$sampler" 2>/dev/null || true; fi
    wait 2>/dev/null || true
    if [ -s "$work/log" ]; then cp "$work/log" "$cache/last-run.log"; fi
    # The mounts lived in the namespace only; refuse to delete through one that did not.
    if findmnt -rn -o TARGET | grep -q "^$root"; then
      echo "first_metrics: mounts left under $root; not removing it" >&2
    else
      rm -rf --one-file-system "$root" "$work"
    fi
  }
  trap stop EXIT
  tar -xpf "$tarball" -C "$root" --numeric-owner
  cp /etc/resolv.conf "$root/etc/resolv.conf"
  cp "$sources" "$root/etc/apt/sources.list.d/debian.sources"
  rm -f "$root/etc/apt/sources.list"
  printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
  chmod 0755 "$root/usr/sbin/policy-rc.d"
  git clone -q --bare --no-hardlinks "$src" "$root/srv/nvml-exporter.git"
  # in_root CMD...: CMD under chroot, in new PID and mount namespaces, with a clean environment;
  # execs unshare, so call it in a subshell. --kill-child: when unshare dies, so does everything
  # in the namespace.
  in_root() {
    exec unshare --mount --pid --fork --kill-child --propagation private -- bash -c '
      root="$1"; shift
      mount -t proc proc "$root/proc"
      mount --rbind /dev "$root/dev"
      mount --rbind /sys "$root/sys"
      exec chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"' _ "$root" "$@"
  }
  t0=$EPOCHREALTIME
  (in_root git clone -q /srv/nvml-exporter.git /root/nvml-exporter)
  (in_root git -C /root/nvml-exporter checkout -q "$hash")
  clone_s="$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.1f", b - a}')"

  { while sleep 5; do cut -d' ' -f1 /proc/loadavg; done; } >"$work/load" &
  sampler=$!
  up_start="$(uptime)"
  start=$EPOCHREALTIME
  {
    echo "$BASHPID" >"$work/unshare.pid"
    in_root bash -c 'cd /root/nvml-exporter && exec make run ARGS="-a :$1"' _ "$port"
  } 2>&1 | while IFS= read -r line; do printf '%s %s\n' "$EPOCHREALTIME" "$line"; done >"$work/log" &
  for _ in $(seq 50); do [ -s "$work/unshare.pid" ] && break; sleep 0.1; done
  pid="$(cat "$work/unshare.pid")"
  until curl -sf -o /dev/null "localhost:$port/metrics"; do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "first_metrics: make run exited:" >&2
      tail -n 30 "$work/log" | cut -d' ' -f2- >&2
      exit 1
    fi
    sleep 0.5
  done
  end=$EPOCHREALTIME
  up_end="$(uptime)"
  kill "$sampler" 2>/dev/null || true
  # Phases, from the timestamped output: apt until the first line of the configure step (the
  # recipe's `cmake ...` or cmake's own `-- ...`), then configure until the first build step.
  python3 - "$work/log" "$work/load" "$start" "$end" "$clone_s" "$port" \
    "$(git -C "$src" log --oneline -1 "$hash" | cut -c1-72)" "$up_start" "$up_end" <<'PY'
import re, sys
log, loadf, start, end, clone_s, port, commit, up_start, up_end = sys.argv[1:]
start, end = float(start), float(end)
lines = []
for raw in open(log, errors="replace", newline="\n"):
    t, _, text = raw.rstrip("\n").partition(" ")
    lines.append((float(t), text))
steps = [(t, x) for t, x in lines if re.match(r"\[\d+/\d+\]", x)]
conf = next((t for t, x in lines if re.match(r"(cmake |-- |bash scripts/configure)", x)), None)
newly = [int(m.group(1)) for _, x in lines for m in [re.search(r"(\d+) newly installed", x)] if m]
loads = [float(x) for x in open(loadf).read().split()]
phase = lambda a, b: f"{b - a:.0f} s" if a is not None and b is not None else "?"
print(f"first_metrics --bare: {commit}")
print(f"  clone (not counted): {clone_s} s")
print(f"  make run to the first /metrics on :{port}: {end - start:.0f} s")
print(f"    apt (install-deps, {sum(newly)} packages newly installed): {phase(start, conf)}")
print(f"    configure: {phase(conf, steps[0][0] if steps else None)}")
print(f"    build: {phase(steps[0][0], steps[-1][0]) if steps else '?'} ({len(steps)} build steps)")
print(f"    daemon start to the answer: {phase(steps[-1][0] if steps else None, end)}")
if loads:
    print(f"  load (1-min average, every 5 s): mean {sum(loads) / len(loads):.1f}, max {max(loads):.1f}")
print(f"  uptime at start: {up_start.strip()}")
print(f"  uptime at the answer: {up_end.strip()}")
PY
  exit 0
fi
if [ "${1:-}" = --daemon ]; then
  build="$(cd "${2:-build}" && pwd)"
  runs="${3:-5}"
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  export NVMLX_SIMGPU_SCENARIO="${NVMLX_SIMGPU_SCENARIO:-$src/testdata/scenarios/eight_gpus.yaml}"
  specs=()
  for _ in $(seq "$runs"); do
    specs+=(--daemon "after=$build/src/app/nvml-exporter:$src/etc/dcp-metrics-included.csv:1000:0")
    if [ -n "${BEFORE_BIN:-}" ]; then
      specs+=(--daemon "before=$BEFORE_BIN:$src/etc/dcp-metrics-included.csv:1000:0")
    fi
  done
  python3 "$src/bench/gpu_bench.py" --out "$work" --floor none --no-floor --scrapes 0 \
    --nvml-library "$build/simgpu/libnvidia-ml.so.1" "${specs[@]}" >/dev/null
  python3 - "$work/gpu-bench.json" <<'PY'
import json, statistics, sys
r = json.load(open(sys.argv[1]))
for label in ("before", "after"):
    d = [x for x in r["daemons"] if x["label"] == label]
    if d:
        a = statistics.median(x["first_answer_ms"] for x in d)
        c = statistics.median(x["first_complete_ms"] for x in d)
        print(f"first_metrics: {label}: median of {len(d)}: first /metrics {a:.0f} ms, "
              f"first complete page (GPM included) {c:.0f} ms")
PY
  exit 0
fi
rev="${1:-HEAD}"
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

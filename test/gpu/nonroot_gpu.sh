#!/usr/bin/env bash
# The daemon on a real GPU as uid/gid 65534 with no capabilities (docs/security.md §2, §6): it
# must serve the device fields and, on Hopper and later, the GPM profiling fields. Records the
# driver's RmProfilingAdminOnly, which decides whether GPM needs an administrator.
# Run from the repo root after `make bundle`, as root (setpriv drops to 65534), e.g. on the H200
# host through the device tool: `make bundle && bash test/gpu/nonroot_gpu.sh`. Output in $OUT
# (default ./nonroot-out): params.txt, metrics.txt, daemon.log, result.txt. Exit 0 when every
# check passed. Nothing here changes GPU settings.
set -uo pipefail
B="${BUNDLE:-bundle}"
OUT="${OUT:-nonroot-out}"
mkdir -p "$OUT"
[ "$(id -u)" = 0 ] || { echo "run as root (setpriv drops to 65534)" >&2; exit 2; }
grep -i 'RmProfilingAdminOnly' /proc/driver/nvidia/params >"$OUT/params.txt" 2>&1 || true
port=19400
# The bundle must be readable by 65534 wherever it lies.
tmp="$(mktemp -d)"; chmod 755 "$tmp"; cp -r "$B" "$tmp/b"; chmod -R a+rX "$tmp/b"
setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all \
  --no-new-privs "$tmp/b/nvml-exporter" -f "$tmp/b/etc/dcp-metrics-included.csv" -c 1000 \
  -a "127.0.0.1:$port" >"$OUT/daemon.out" 2>"$OUT/daemon.log" &
pid=$!
sleep 6  # a few collections: GPM values need two samples
curl -fsS "http://127.0.0.1:$port/metrics" >"$OUT/metrics.txt" 2>>"$OUT/daemon.log"
grep -E '^(Uid|Gid|Groups|CapEff|CapBnd|NoNewPrivs):' "/proc/$pid/status" >"$OUT/status.txt"
kill "$pid"; wait "$pid" 2>/dev/null
rm -rf "$tmp"
check() {  # description, command...
  local what="$1"; shift
  if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fi
}
{
  echo "params: $(cat "$OUT/params.txt")"
  check "runs as 65534" grep -q '^Uid:[[:space:]]*65534[[:space:]]65534' "$OUT/status.txt"
  check "no effective capabilities" grep -q '^CapEff:[[:space:]]*0000000000000000' "$OUT/status.txt"
  check "device fields" grep -q '^DCGM_FI_DEV_GPU_TEMP{' "$OUT/metrics.txt"
  check "GPM profiling fields" grep -q '^DCGM_FI_PROF_GR_ENGINE_ACTIVE{' "$OUT/metrics.txt"
  check "no permission errors logged" bash -c "! grep -qi 'NO_PERMISSION' '$OUT/daemon.log'"
} | tee "$OUT/result.txt"
grep -q '^FAIL' "$OUT/result.txt" && exit 1
exit 0

#!/usr/bin/env bash
# The container image on a real GPU, run the way the GPU Operator runs it, without a container
# engine: the image's root filesystem (build/image/rootfs.tar.gz from `make image` or the
# image_build_run test: the OCI image unpacked by umoci) is entered with chroot in fresh mount and
# PID namespaces, after doing what the NVIDIA container toolkit does for a container with
# NVIDIA_VISIBLE_DEVICES=all and the `utility` capability: the driver's libnvidia-ml.so.1
# bind-mounted into the root's library folder and the ld.so cache refreshed, the /dev/nvidia*
# nodes bound into its /dev. The entrypoint runs with the image's env plus the operator's
# DaemonSet env (DCGM_EXPORTER_KUBERNETES=true, DCGM_EXPORTER_COLLECTORS=
# /etc/dcgm-exporter/dcp-metrics-included.csv, :9400, NODE_NAME), three times:
#   root       uid 0 with a container's default capabilities (the operator's pod is privileged)
#   least      uid 0, no capability but CAP_SYS_CHROOT (the chroot itself needs it), no new
#              privileges, read-only root: deploy/kubernetes/base's securityContext
#   nonroot    uid 65532 (the image's user nvml-exporter), no capability, read-only root
# There is no kubelet on the GPU machine: the pod-resources folder is an empty mount, and the
# daemon must say so once and serve anyway. Each run must serve /health (200) and /metrics with
# the GPUs' series, the profiling (GPM) fields included.
#
# usage: validate_image.sh [ROOTFS_TAR]   (as root; default build/image/rootfs.tar.gz)
# Writes summary.md and, per run, metrics/health/log/status files into $OUT (default
# ./validation-out). Exit status: the number of failed checks (0: all passed).
set -uo pipefail
TAR="${1:-build/image/rootfs.tar.gz}"
RESULT="${OUT:-validation-out}"
mkdir -p "$RESULT"
RESULT="$(realpath "$RESULT")"
[ "$(id -u)" -eq 0 ] || { echo "validate_image: run as root" >&2; exit 1; }
[ -f "$TAR" ] || { echo "validate_image: $TAR: no such file (make image)" >&2; exit 1; }

R="$(mktemp -d)/rootfs"
mkdir -p "$R"
tar -xzf "$TAR" --numeric-owner -C "$R"
# NVML_LIBRARY: another libnvidia-ml.so.1 (build/simgpu's, for a dry run of this script on a
# machine without a GPU; the checks then see the simulator's H200s).
NVML="${NVML_LIBRARY:-$(ldconfig -p | awk '/libnvidia-ml\.so\.1 .*x86-64/ {print $NF; exit}')}"
[ -n "$NVML" ] || { echo "validate_image: no libnvidia-ml.so.1 on this host" >&2; exit 1; }
# What the toolkit adds: the driver's NVML and the device nodes' mount points, then the cache.
touch "$R/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1"
mkdir -p "$R/var/lib/kubelet/pod-resources"
mkdir -p "$R/dev"
ldconfig -r "$R" 2>/dev/null
NODES=$(ls -d /dev/nvidia* 2>/dev/null)
{
  echo "# The image on this GPU machine"
  echo
  echo "- host: $(. /etc/os-release; echo "$PRETTY_NAME"), kernel $(uname -r)"
  echo "- driver NVML: $(readlink -f "$NVML")"
  echo "- image root: $TAR ($(du -h "$TAR" | cut -f1)); entrypoint /usr/bin/dcgm-exporter -> $(readlink "$R/usr/bin/dcgm-exporter")"
  if [ -n "$NODES" ]; then
    echo "- device nodes: $(ls -ld $NODES | awk '{print $1, $NF}' | paste -sd';' | sed 's/;/; /g')"
  else
    echo "- device nodes: none"
  fi
  echo
  echo "| run | uid | CapEff | root fs | /health | series | GPUs | PROF series | kubelet absent logged | exit on SIGTERM |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
} >"$RESULT/summary.md"

FAILED=0
ENV_IMAGE=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin NVIDIA_VISIBLE_DEVICES=all
           NVIDIA_DRIVER_CAPABILITIES=utility NVIDIA_DISABLE_REQUIRE=true HOME=/root)
ENV_OPERATOR=(DCGM_EXPORTER_LISTEN=:9400 DCGM_EXPORTER_KUBERNETES=true
              DCGM_EXPORTER_COLLECTORS=/etc/dcgm-exporter/dcp-metrics-included.csv NODE_NAME=h200-node)

run() {  # name user(uid:gid) least(0|1)
  local name="$1" user="$2" least="$3" out="$RESULT/$1"
  mkdir -p "$out"
  local setup="mount -t tmpfs -o mode=755,nosuid tmpfs '$R/dev'"
  for n in null zero urandom random; do setup+=" && touch '$R/dev/$n' && mount --bind /dev/$n '$R/dev/$n'"; done
  for n in $NODES; do
    if [ -d "$n" ]; then setup+=" && mkdir -p '$R$n' && mount --rbind $n '$R$n'"
    else setup+=" && touch '$R$n' && mount --bind $n '$R$n'"; fi
  done
  setup+=" && mount --bind -o ro '$NVML' '$R/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1'"
  setup+=" && mount -t proc proc '$R/proc'"
  local exec="chroot '$R' /usr/bin/dcgm-exporter"
  if [ "$user" != 0:0 ]; then exec="chroot --userspec=$user '$R' /usr/bin/dcgm-exporter"; fi
  if [ "$least" = 1 ]; then
    # Read-only root (the submounts above stay as they are), then only CAP_SYS_CHROOT left for
    # chroot itself (and CAP_SETUID/SETGID to change to a non-root uid, which then drops all).
    setup+=" && mount -o remount,bind,ro '$R'"
    local keep="+sys_chroot"
    if [ "$user" != 0:0 ]; then keep+=",+setuid,+setgid"; fi
    exec="setpriv --bounding-set=-all,$keep --inh-caps=-all --no-new-privs $exec"
  fi
  if [ "$least" = 1 ]; then setup="mount --bind '$R' '$R' && $setup"; fi
  env -i "${ENV_IMAGE[@]}" "${ENV_OPERATOR[@]}" \
    unshare --mount --propagation private --pid --fork --kill-child -- /bin/sh -c "$setup && exec $exec" \
    >"$out/stdout.txt" 2>"$out/log.txt" &
  local u=$!
  local pid="" ok=0
  for _ in $(seq 1 60); do
    pid=$(pgrep -P $u | head -1)
    if [ -n "$pid" ] && curl -sf http://127.0.0.1:9400/metrics -o "$out/metrics.txt" && grep -q '^DCGM_FI_DEV_GPU_UTIL{' "$out/metrics.txt"; then ok=1; break; fi
    sleep 0.5
  done
  # The operator sets no interval: 30 s. The profiling (GPM) rates need two samples, so wait for
  # the second collection (at most 40 s).
  for _ in $(seq 1 80); do
    curl -s http://127.0.0.1:9400/metrics -o "$out/metrics.txt"
    grep -q '^DCGM_FI_PROF_' "$out/metrics.txt" && break
    sleep 0.5
  done
  local health
  health=$(curl -s -o "$out/health.txt" -w '%{http_code}' http://127.0.0.1:9400/health)
  [ -n "$pid" ] && cat "/proc/$pid/status" >"$out/status.txt" 2>/dev/null
  local uid cap
  uid=$(awk '/^Uid:/ {print $2}' "$out/status.txt" 2>/dev/null)
  cap=$(awk '/^CapEff:/ {print $2}' "$out/status.txt" 2>/dev/null)
  [ -n "$pid" ] && kill -TERM "$pid"
  wait $u; local rc=$?
  local series gpus prof kubelet rofs
  series=$(grep -c '^DCGM_' "$out/metrics.txt" 2>/dev/null)
  gpus=$(grep '^DCGM_FI_DEV_GPU_UTIL{' "$out/metrics.txt" 2>/dev/null | grep -c 'modelName="NVIDIA H200"')
  prof=$(grep -c '^DCGM_FI_PROF_' "$out/metrics.txt" 2>/dev/null)
  kubelet=$(grep -c 'kubelet' "$out/log.txt")
  rofs=$([ "$least" = 1 ] && echo read-only || echo read-write)
  echo "| $name | $uid | $cap | $rofs | $health | $series | $gpus | $prof | $kubelet lines | $rc |" >>"$RESULT/summary.md"
  local want_uid="${user%%:*}"
  if [ "$ok" != 1 ] || [ "$health" != 200 ] || [ "$uid" != "$want_uid" ] || [ "${gpus:-0}" -lt 1 ] \
     || [ "${prof:-0}" -lt 1 ] || ! grep -q 'hostname="h200-node"' "$out/metrics.txt"; then
    echo "validate_image: $name FAILED (see $out/log.txt)" >&2
    FAILED=$((FAILED + 1))
  fi
}

run root 0:0 0
run least 0:0 1
run nonroot 65532:65532 1
{
  echo
  echo "CapEff: hex capability mask of the daemon (/proc/PID/status); 'least' keeps CAP_SYS_CHROOT only"
  echo "(0000000000040000), which chroot itself needs and NVML does not use."
  echo "Failed runs: $FAILED"
} >>"$RESULT/summary.md"
cat "$RESULT/summary.md"
exit "$FAILED"

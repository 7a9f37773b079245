#!/usr/bin/env bash
# The image's root filesystem, made the same way by the Dockerfile (its `rootfs` stage) and by
# deploy/image/build-oci.sh (CI, which has no container engine that can pull base images):
#   1. mmdebstrap --variant=extract: only the packages of runtime-packages.txt and their hard
#      dependencies, unpacked; no shell, no dpkg, no apt (a distroless-style root);
#   2. documentation, manuals and locales removed (copyright files kept);
#   3. our files: the daemon, its kubelet plugin (/usr/lib/nvml-exporter/, where -k looks for it:
#      attribute/kubelet_plugin.h; taken from lib/ beside NVML_EXPORTER_BINARY, as the build
#      tree has it), the simulated NVML (for --fake-gpus), the collectors CSVs under
#      /etc/dcgm-exporter/, a passwd/group with root and the unprivileged user nvml-exporter
#      (65532), an ld.so cache.
#
# usage: make-rootfs.sh OUT_DIR NVML_EXPORTER_BINARY SIMGPU_LIBRARY SOURCE_DIR [APT_SOURCES]
#   APT_SOURCES: the apt sources file mmdebstrap downloads from; default: this machine's own
#   (/etc/apt/sources.list.d/debian.sources on Debian 12), so it uses the mirror apt uses here.
# Needs root (mmdebstrap --mode=root) or user namespaces (--mode=unshare, as a user).
set -euo pipefail

out="$1"
binary="$2"
simgpu="$3"
src="$4"
sources="${5:-/etc/apt/sources.list.d/debian.sources}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

plugin="$(dirname "$binary")/lib/libnvmlx_kubelet.so"
for f in "$binary" "$plugin" "$simgpu" "$sources"; do
  [ -f "$f" ] || { echo "make-rootfs: $f: no such file" >&2; exit 1; }
done
command -v mmdebstrap >/dev/null || { echo "make-rootfs: mmdebstrap not installed" >&2; exit 1; }

packages=$(grep -v -e '^#' -e '^$' "$here/runtime-packages.txt" | paste -sd, -)
mode=unshare
[ "$(id -u)" -eq 0 ] && mode=root

rm -rf "$out"
# Extract only: nothing is configured, so no maintainer script and no chroot runs, and nothing
# needs mounting (a `docker build` may not mount); the suite is Debian 12's, the mirror this
# machine's.
mmdebstrap --quiet --mode="$mode" --variant=extract --format=directory --skip=chroot/mount \
  --include="$packages" bookworm "$out" "$sources"

# What a daemon never reads. Copyright files stay (licences of what the image redistributes).
find "$out/usr/share/doc" -mindepth 2 ! -name copyright -delete 2>/dev/null || true
rm -rf "$out"/usr/share/{man,info,locale,lintian,bug,bash-completion,gcc,gdb} \
  "$out"/var/cache/* "$out"/var/lib/apt "$out"/var/log/*
# glibc's iconv modules (8 MB): nothing here calls iconv, and the C and UTF-8 conversions glibc
# needs itself are built into libc.
rm -rf "$out"/usr/lib/x86_64-linux-gnu/gconv
find "$out" -xtype l -path '*/usr/share/*' -delete

install -D -m 0755 "$binary" "$out/usr/bin/nvml-exporter"
strip --strip-debug "$out/usr/bin/nvml-exporter"
install -D -m 0644 "$plugin" "$out/usr/lib/nvml-exporter/libnvmlx_kubelet.so"
strip --strip-debug "$out/usr/lib/nvml-exporter/libnvmlx_kubelet.so"
# dcgm-exporter's names for the same program: its binary, and the entrypoint scripts of its
# distroless and Ubuntu images, which manifests written for dcgm-exporter name as `command`.
ln -s nvml-exporter "$out/usr/bin/dcgm-exporter"
ln -s nvml-exporter "$out/usr/bin/dcgm-exporter-entrypoint.sh"
mkdir -p "$out/usr/local/dcgm"
ln -s /usr/bin/nvml-exporter "$out/usr/local/dcgm/dcgm-exporter-entrypoint.sh"
# The daemon looks for the simulator at ../lib/simgpu/ from its own path; it is never on the
# loader's path, so the driver's libnvidia-ml.so.1 is the only one a real run can load.
install -D -m 0644 "$simgpu" "$out/usr/lib/simgpu/libnvidia-ml.so.1"
strip --strip-debug "$out/usr/lib/simgpu/libnvidia-ml.so.1"

install -d -m 0755 "$out/etc/dcgm-exporter" "$out/etc/dcgm-exporter/4.8.2" \
  "$out/etc/dcgm-exporter/4.9" "$out/etc/dcgm-exporter/4.10"
install -m 0644 "$src"/etc/default-counters.csv "$src"/etc/dcp-metrics-included.csv \
  "$src"/etc/1.x-compatibility-metrics.csv "$src"/etc/container-insights.csv \
  "$out/etc/dcgm-exporter/"
# dcgm-exporter 4.8.2's rows: --dcgm-exporter-compat 4.8.2 loads 4.8.2/default-counters.csv when
# -f is not given (config/options_series.cc).
install -m 0644 "$src"/etc/4.8.2/default-counters.csv "$src"/etc/4.8.2/dcp-metrics-included.csv \
  "$out/etc/dcgm-exporter/4.8.2/"
# dcgm-exporter 4.9 and 4.10's default rows, as far as their release notes tell them:
# --dcgm-exporter-compat 4.9 / 4.10 loads them when -f is not given.
install -m 0644 "$src"/etc/4.9/default-counters.csv "$out/etc/dcgm-exporter/4.9/"
install -m 0644 "$src"/etc/4.10/default-counters.csv "$out/etc/dcgm-exporter/4.10/"

cat >"$out/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/usr/sbin/nologin
nvml-exporter:x:65532:65532:nvml-exporter:/nonexistent:/usr/sbin/nologin
EOF
cat >"$out/etc/group" <<'EOF'
root:x:0:
nvml-exporter:x:65532:
EOF
printf 'passwd: files\ngroup: files\nhosts: files dns\n' >"$out/etc/nsswitch.conf"
install -d -m 1777 "$out/tmp"
install -d -m 0755 "$out/proc" "$out/sys" "$out/dev" "$out/run"  # a runtime's mount points
install -d -m 0700 "$out/root"
# The NVIDIA container toolkit adds its own ld.so.conf.d entry and refreshes the cache when it
# injects the driver's libraries; the cache built here covers ours.
echo 'include /etc/ld.so.conf.d/*.conf' >"$out/etc/ld.so.conf"
mkdir -p "$out/etc/ld.so.conf.d"
ldconfig -r "$out"

echo "make-rootfs: $out ($(du -sh "$out" | cut -f1), $(find "$out" -type f | wc -l) files)"

#!/usr/bin/env bash
# make image: the container image without a container engine, into BUILD_DIR/image/:
#   rootfs/                 make-rootfs.sh's root (the Dockerfile's rootfs stage)
#   nvml-exporter.oci.tar   build-oci.sh's OCI archive (docker/podman: `skopeo copy
#                           oci-archive:nvml-exporter.oci.tar docker-daemon:nvml-exporter:dev`,
#                           or `podman load -i`)
#   bundle/                 the archive unpacked by umoci (an OCI runtime bundle: config.json and
#                           rootfs/), what test/image/image_test.py runs
#   rootfs.tar.gz           bundle/rootfs as one file, what test/gpu/validate_image.sh takes
#   sizes.txt               compressed (the layer blob) and unpacked sizes, seconds per step
# Everything stays under BUILD_DIR/image; nothing is cached elsewhere.
#
# usage: build.sh BUILD_DIR [SOURCE_DIR]
set -euo pipefail

build="$(realpath "$1")"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
src="$(realpath "${2:-$here/../..}")"
out="$build/image"
mkdir -p "$out/tmp"
# mmdebstrap's and buildah's temporary files stay in the build folder too.
export TMPDIR="$out/tmp"
for tool in mmdebstrap buildah umoci; do
  command -v "$tool" >/dev/null || {
    echo "image: $tool not installed (bash scripts/install-deps.sh installs it)" >&2
    exit 1
  }
done

t0=$(date +%s.%N)
bash "$here/make-rootfs.sh" "$out/rootfs" "$build/src/app/nvml-exporter" \
  "$build/simgpu/libnvidia-ml.so.1" "$src"
t1=$(date +%s.%N)
bash "$here/build-oci.sh" "$src" "$out/rootfs" "$out/nvml-exporter.oci.tar" nvml-exporter:dev
t2=$(date +%s.%N)
rm -rf "$out/oci" "$out/bundle"
mkdir "$out/oci"
tar -xf "$out/nvml-exporter.oci.tar" -C "$out/oci"
umoci unpack --image "$out/oci:nvml-exporter:dev" "$out/bundle" >/dev/null
tar -C "$out/bundle/rootfs" -czf "$out/rootfs.tar.gz" .
rm -rf "$out/tmp"
t3=$(date +%s.%N)

# The compressed size is what a registry stores and a node pulls: the layer blobs and the
# config (gzip, as buildah commits them); unpacked: the root on disk.
python3 - "$out" "$t0" "$t1" "$t2" "$t3" <<'EOF' | tee "$out/sizes.txt"
import json, os, subprocess, sys
out, t0, t1, t2, t3 = sys.argv[1], *map(float, sys.argv[2:])
blobs = os.path.join(out, "oci/blobs/sha256")
index = json.load(open(os.path.join(out, "oci/index.json")))
manifest = json.load(open(os.path.join(blobs, index["manifests"][0]["digest"].split(":")[1])))
compressed = manifest["config"]["size"] + sum(l["size"] for l in manifest["layers"])
unpacked = int(subprocess.run(["du", "-sb", os.path.join(out, "bundle/rootfs")],
                              capture_output=True, text=True, check=True).stdout.split()[0])
tarball = os.path.getsize(os.path.join(out, "rootfs.tar.gz"))
print(f"compressed_bytes {compressed}")
print(f"unpacked_bytes {unpacked}")
print(f"rootfs_tar_gz_bytes {tarball}")
print(f"layers {len(manifest['layers'])}")
print(f"seconds_rootfs {t1 - t0:.1f}")
print(f"seconds_oci {t2 - t1:.1f}")
print(f"seconds_unpack {t3 - t2:.1f}")
EOF

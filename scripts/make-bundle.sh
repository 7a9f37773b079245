#!/usr/bin/env bash
# make bundle: a relocatable folder with the daemon and every non-system shared library it needs,
# for machines without our build dependencies (the H200 validation host runs Ubuntu 24.04).
# libc, libm, libstdc++, libgcc_s and the loader are left to the target machine; NVML is always
# the target's own libnvidia-ml.so.1. The binary's DT_RPATH is $ORIGIN/lib (see src/app/CMakeLists.txt).
set -euo pipefail
build="$1"; out="$2"
bin="$build/src/app/nvml-exporter"
rm -rf "$out"; mkdir -p "$out/lib" "$out/simgpu" "$out/etc"
cp "$bin" "$out/"
strip --strip-debug "$out/nvml-exporter"
cp etc/*.csv "$out/etc/"
cp "$build/simgpu/libnvidia-ml.so.1" "$out/simgpu/"
# The simulated CUPTI (--fake-gpus with a scenario that has pm_sampling keys).
[ -e "$build/simgpu/libcupti.so.13" ] && cp "$build/simgpu/libcupti.so.13" "$out/simgpu/"
# The load generator, when this machine could build it (nvcc present); cudart is static in it.
if [ -x "$build/tools/gpu-pulse/gpu-pulse" ]; then
  cp "$build/tools/gpu-pulse/gpu-pulse" "$out/" && strip --strip-debug "$out/gpu-pulse"
fi
system_lib='^(libc|libm|libstdc\+\+|libgcc_s|ld-linux-x86-64|libpthread|libdl|librt|linux-vdso)\.so'
copy_deps() {
  ldd "$1" | awk '/=> \// {print $3}' | while read -r so; do
    base=$(basename "$so")
    if [[ "$base" =~ $system_lib ]]; then continue; fi
    [ -e "$out/lib/$base" ] || cp -L "$so" "$out/lib/$base"
  done
}
copy_deps "$bin"
copy_deps "$out/simgpu/libnvidia-ml.so.1"
for so in "$out"/lib/*.so*; do [ -e "$so" ] && copy_deps "$so"; done
echo "bundle: $out ($(du -sh "$out" | cut -f1), $(ls "$out/lib" | wc -l) libraries)"

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
# The kubelet plugin (-k loads it from ./lib/, next to the binary: attribute/kubelet_plugin.h).
plugin="$build/src/app/lib/libnvmlx_kubelet.so"
cp "$plugin" "$out/lib/"
strip --strip-debug "$out/lib/libnvmlx_kubelet.so"
cp etc/*.csv "$out/etc/"
mkdir -p "$out/etc/4.8.2" && cp etc/4.8.2/*.csv "$out/etc/4.8.2/"
for v in 4.9 4.10; do mkdir -p "$out/etc/$v" && cp "etc/$v/"*.csv "$out/etc/$v/"; done
# The example YAML configs (bench/gpu.sh's "groups" run reads exporter-config.yaml).
for f in etc/*.yaml; do [ -e "$f" ] && cp "$f" "$out/etc/"; done
cp "$build/simgpu/libnvidia-ml.so.1" "$out/simgpu/"
# The RSS baseline (bench/nvml_init_rss: nvmlInit_v2 alone) for test/gpu/rss_h200.sh.
if [ -x "$build/bench/nvml_init_rss" ]; then
  cp "$build/bench/nvml_init_rss" "$out/" && strip --strip-debug "$out/nvml_init_rss"
fi
# The GPU benchmark (bench/gpu.sh): the NVML floor, the script and its Python stand-in peer.
mkdir -p "$out/bench/peers"
if [ -x "$build/bench/nvml_floor" ]; then
  cp "$build/bench/nvml_floor" "$out/bench/" && strip --strip-debug "$out/bench/nvml_floor"
fi
cp bench/gpu.sh bench/gpu_bench.py "$out/bench/"
cp bench/peers/pynvml_exporter.py "$out/bench/peers/"
# The simulated CUPTI (--fake-gpus with a scenario that has pm_sampling keys).
[ -e "$build/simgpu/libcupti.so.13" ] && cp "$build/simgpu/libcupti.so.13" "$out/simgpu/"
# The raw PM-sample probe (tools/pm-probe), for the PM-sampling validation.
if [ -x "$build/tools/pm-probe/pm-probe" ]; then
  cp "$build/tools/pm-probe/pm-probe" "$out/" && strip --strip-debug "$out/pm-probe"
fi
# The EMF checker (test/emf/emf_validate), for the Container Insights validation on a GPU.
if [ -x "$build/test/emf/emf_validate" ]; then
  cp "$build/test/emf/emf_validate" "$out/" && strip --strip-debug "$out/emf_validate"
fi
# The load generator, when this machine could build it (nvcc present); cudart is static in it.
if [ -x "$build/tools/gpu-pulse/gpu-pulse" ]; then
  cp "$build/tools/gpu-pulse/gpu-pulse" "$out/" && strip --strip-debug "$out/gpu-pulse"
fi
system_lib='^(libc|libm|libstdc\+\+|libgcc_s|ld-linux-x86-64|libpthread|libdl|librt|linux-vdso)\.so'
# The binary does not link OpenSSL but dlopens libssl.so.3 on first use (util/openssl_lazy.h),
# through the same $ORIGIN/lib; the plugin's gRPC links it, so copying its dependencies ships it.
copy_deps() {
  ldd "$1" | awk '/=> \// {print $3}' | while read -r so; do
    base=$(basename "$so")
    if [[ "$base" =~ $system_lib ]]; then continue; fi
    [ -e "$out/lib/$base" ] || cp -L "$so" "$out/lib/$base"
  done
}
copy_deps "$bin"
copy_deps "$plugin"
copy_deps "$out/simgpu/libnvidia-ml.so.1"
[ -e "$out/pm-probe" ] && copy_deps "$out/pm-probe"
for so in "$out"/lib/*.so*; do [ -e "$so" ] && copy_deps "$so"; done
# Every program here that needs one of our libraries must find it in ./lib on a host without them
# (a pm-probe without that path once cost a validation run): its RPATH must lead there.
lib_dir=$(realpath "$out/lib")
for exe in "$out"/* "$out"/bench/*; do
  [ -f "$exe" ] && head -c4 "$exe" | grep -q ELF || continue
  needs_ours=$(ldd "$exe" | awk '/=> \// {print $1}' | grep -vE "$system_lib|libnvidia-ml|libcuda" || true)
  [ -n "$needs_ours" ] || continue
  found=0
  rpath=$(readelf -d "$exe" | sed -n 's/.*R\(UN\)\?PATH.*\[\(.*\)\]/\2/p')
  IFS=: read -ra dirs <<<"$rpath"
  for d in "${dirs[@]}"; do
    d=${d//\$ORIGIN/$(dirname "$exe")}
    [ "$(realpath -m "$d")" = "$lib_dir" ] && found=1
  done
  if [ "$found" = 0 ]; then
    echo "bundle: $exe needs $(echo $needs_ours) but its RPATH ($rpath) does not lead to lib/" >&2
    exit 1
  fi
done
echo "bundle: $out ($(du -sh "$out" | cut -f1), $(ls "$out/lib" | wc -l) libraries)"

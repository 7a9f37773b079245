#!/usr/bin/env bash
# The Makefile's cmake configure step: one build folder serves `make run` (the daemon only, so
# without the test and benchmark libraries installed) and `make test` (everything).
#
#   scripts/configure.sh BUILD_DIR [--fresh SETTING...] [--need SETTING...] [-- CMAKE_ARGS...]
#
# SETTING is -DNAME=VALUE. Configures BUILD_DIR (cmake -G Ninja CMAKE_ARGS, then the settings)
# when it has no build.ninja yet, with the --fresh and --need settings; or when its cache holds
# another value for a --need setting, with the --need settings (the rest of the cache stays).
# Otherwise does nothing: ninja re-runs cmake itself when a CMakeLists.txt changes.
#   make run:  --fresh -DNVMLX_BUILD_TESTS=OFF -DNVMLX_BUILD_BENCH=OFF -DNVMLX_DEBUG_INFO=OFF (a
#              folder made by make test stays as it is: it builds the daemon as well)
#   make test: --need -DNVMLX_BUILD_TESTS=ON -DNVMLX_BUILD_BENCH=ON (turns them on in a folder
#              that make run made)
set -euo pipefail
build="${1:?usage: scripts/configure.sh BUILD_DIR [--fresh SETTING...] [--need SETTING...] [-- CMAKE_ARGS...]}"
shift
fresh=()
need=()
args=()
list=fresh
while [ "$#" -gt 0 ]; do
  case "$1" in
    --fresh) list=fresh ;;
    --need) list=need ;;
    --) shift; args=("$@"); break ;;
    -D*=*) if [ "$list" = fresh ]; then fresh+=("$1"); else need+=("$1"); fi ;;
    *) echo "configure.sh: not a -DNAME=VALUE setting: $1" >&2; exit 2 ;;
  esac
  shift
done

configure() {
  echo "cmake -S . -B $build -G Ninja ${args[*]} $*"
  cmake -S . -B "$build" -G Ninja "${args[@]}" "$@"
}

if [ ! -f "$build/build.ninja" ] || [ ! -f "$build/CMakeCache.txt" ]; then
  configure ${fresh[@]+"${fresh[@]}"} ${need[@]+"${need[@]}"}
  exit 0
fi
for s in ${need[@]+"${need[@]}"}; do
  kv="${s#-D}"
  name="${kv%%=*}"
  value="${kv#*=}"
  if ! grep -qxF -e "$name:BOOL=$value" -e "$name:STRING=$value" -e "$name:UNINITIALIZED=$value" \
       "$build/CMakeCache.txt"; then
    configure "${need[@]}"
    exit 0
  fi
done

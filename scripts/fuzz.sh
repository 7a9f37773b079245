#!/usr/bin/env bash
# Builds the libFuzzer binaries (cmake/fuzz.cmake) with clang++ in their own build folder and
# runs each for a fixed time, several at once. `make fuzz` (FUZZ_SECONDS, default 60 s each) and
# `make fuzz-smoke` (CI: 20 s each) call it.
#
#   scripts/fuzz.sh BUILD_DIR SECONDS [NAME...]     NAME: cgroup, collectors_csv, ... (default: all)
#
# Each fuzzer starts from its committed seeds, testdata/fuzz/<name>/, and writes the new inputs it
# finds to BUILD_DIR/corpus/<name>/ (kept between runs, never committed by this script). A crash,
# an invariant's abort, a leak, a timeout (10 s per input) or an out-of-memory (2 GiB) fails the
# run; the input is saved as BUILD_DIR/artifacts/<name>/crash-… (or leak-, timeout-, oom-). Fix
# the bug, then add that file to testdata/fuzz/<name>/ (its replay test runs it in `make test`
# from then on) and write a unit test of the case beside the parser.
# FUZZ_JOBS: fuzzers run at once (default: the number of CPUs). FUZZ_CXX: the compiler (clang++).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:?usage: scripts/fuzz.sh BUILD_DIR SECONDS [NAME...]}"
seconds="${2:?usage: scripts/fuzz.sh BUILD_DIR SECONDS [NAME...]}"
shift 2
jobs="${FUZZ_JOBS:-$(nproc)}"

start=$(date +%s)
# A unity build, as make run's (docs/development.md "Unity builds"): the libraries under the
# fuzzers are the daemon's, which scripts/check_unity_names.py keeps unity-safe; each fuzzer is
# one file. It saves CI most of this step's build time.
if [ ! -f "$build/build.ninja" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_COMPILER="${FUZZ_CXX:-clang++}" -DNVMLX_BUILD_FUZZ=ON \
    -DNVMLX_BUILD_TESTS=OFF -DNVMLX_BUILD_BENCH=OFF -DCMAKE_UNITY_BUILD=ON >/dev/null
fi
cmake --build "$build" -j "$(nproc)" --target fuzzers
echo "fuzz: built in $(( $(date +%s) - start )) s"

names=("$@")
if [ "${#names[@]}" -eq 0 ]; then
  for bin in "$build"/fuzz/*_fuzz; do
    b="$(basename "$bin")"
    names+=("${b%_fuzz}")
  done
fi

run_one() {
  local name="$1" bin="$build/fuzz/$1_fuzz" seeds="testdata/fuzz/$1"
  local corpus="$build/corpus/$name" artifacts="$build/artifacts/$name/" log="$build/logs/$name.log"
  [ -x "$bin" ] || { echo "fuzz: $name: no binary $bin"; return 1; }
  [ -d "$seeds" ] || { echo "fuzz: $name: no seed corpus $seeds"; return 1; }
  mkdir -p "$corpus" "$artifacts" "$(dirname "$log")"
  if "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
       -artifact_prefix="$artifacts" "$corpus" "$seeds" >"$log" 2>&1; then
    echo "fuzz: $name: ok, $(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" \
      | grep -o '[0-9]*$') runs in ${seconds} s, $(find "$corpus" -type f | wc -l) inputs in $corpus"
  else
    echo "fuzz: $name: FAILED (log $log); the input:"
    ls "$artifacts"
    grep -E -A25 '^==[0-9]+==ERROR|runtime error|deadly signal|SUMMARY' "$log" | head -60
    return 1
  fi
}

failed=()
declare -A pids=()
for name in "${names[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  run_one "$name" >"$build/logs.$name.summary" 2>&1 &
  pids[$name]=$!
done
for name in "${names[@]}"; do
  if ! wait "${pids[$name]}"; then failed+=("$name"); fi
  cat "$build/logs.$name.summary"
  rm -f "$build/logs.$name.summary"
done
echo "fuzz: ${#names[@]} fuzzers, $(( $(date +%s) - start )) s in all"
if [ "${#failed[@]}" -ne 0 ]; then
  echo "fuzz: failed: ${failed[*]}" >&2
  exit 1
fi

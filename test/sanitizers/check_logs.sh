#!/usr/bin/env bash
# The sanitizer log fixture of ctest (top CMakeLists.txt, NVMLX_SANITIZE):
#   check_logs.sh --clear DIR   before the first test: an empty DIR (the runtimes do not create it)
#   check_logs.sh DIR           after the last: print every report written there, fail if any
set -euo pipefail
if [ "${1:-}" = "--clear" ]; then
  rm -rf "$2" && mkdir -p "$2"
  exit 0
fi
dir="$1"
shopt -s nullglob
logs=("$dir"/*)
if [ "${#logs[@]}" -eq 0 ]; then
  echo "sanitizer_logs_check: no reports in $dir"
  exit 0
fi
for f in "${logs[@]}"; do
  echo "=== $f"
  cat "$f"
done
echo "sanitizer_logs_check: ${#logs[@]} report file(s) in $dir" >&2
exit 1

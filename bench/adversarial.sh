#!/usr/bin/env bash
# The adversarial benchmarks of the hardening rounds, each beside an unattacked run or an older
# binary, in one invocation:
#  - round two (bench/adversarial.py, issue 28): slowloris at the connection limit, a
#    wrong-password storm, a collectors-file rewrite storm; about 2 min.
#  - round three (bench/adversarial_round3.py, issue 36): slowloris at the connection limit from
#    another address and from the scraper's own, hostile --state-dir files, energy per pod across
#    SIGKILLs, --container-labels with 5000 containers, a 50 MB YAML value; about 5 min, 10 with
#    --old (each attack against both binaries, side by side).
# Usage: bench/adversarial.sh [build-dir] [--write] [--old OLD_EXPORTER]
#   build-dir  default build (its src/app/nvml-exporter is the daemon under test)
#   --write    replace the sections "## Adversarial scrapes" and "## Adversarial round three" of
#              docs/benchmarks.md; otherwise they go to stdout
#   --old      round three also runs every attack against this binary (e.g. a build of the commit
#              before the round), which finds its own simulated NVML beside its build
# ROUND=2 or ROUND=3 runs one round only (default: both). Round three's knobs (RUNS, ATTACK_S,
# KILLS, SEED, CONTAINERS, CPU_S, YAML_MB, GARBAGE_MB, RSS_CAP_MB, ATTACKS=1,2,...) pass through
# the environment; see bench/adversarial_round3.py.
set -euo pipefail
build=build
write=""
old=()
if [ $# -gt 0 ] && [[ "$1" != --* ]]; then build="$1"; shift; fi
while [ $# -gt 0 ]; do
  case "$1" in
    --write) write=--write ;;
    --old) old=(--old "${2:?--old needs a binary}"); shift ;;
    *) echo "usage: $0 [build-dir] [--write] [--old OLD_EXPORTER]" >&2; exit 2 ;;
  esac
  shift
done
src="$(cd "$(dirname "$0")/.." && pwd)"
round="${ROUND:-all}"
if [ "$round" = all ] || [ "$round" = 2 ]; then
  python3 "$src/bench/adversarial.py" "$build/src/app/nvml-exporter" "$src" "$src/docs/benchmarks.md" "$write"
fi
if [ "$round" = all ] || [ "$round" = 3 ]; then
  python3 "$src/bench/adversarial_round3.py" "$build/src/app/nvml-exporter" "$src" \
    "$src/docs/benchmarks.md" "${old[@]}" ${write:+"$write"} --attacks "${ATTACKS:-1,2,3,4,5}"
fi

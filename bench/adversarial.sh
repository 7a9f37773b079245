#!/usr/bin/env bash
# Hardening round two's adversarial benchmark (bench/adversarial.py: slowloris at the connection
# limit, a wrong-password storm, a collectors-file rewrite storm, each beside an unattacked run).
# Usage: bench/adversarial.sh [build-dir] [--write]   (--write replaces the "## Adversarial
# scrapes" section of docs/benchmarks.md; otherwise the section goes to stdout). About 2 min.
set -euo pipefail
build="${1:-build}"
write="${2:-}"
src="$(cd "$(dirname "$0")/.." && pwd)"
python3 "$src/bench/adversarial.py" "$build/src/app/nvml-exporter" "$src" "$src/docs/benchmarks.md" "$write"

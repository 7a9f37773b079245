#!/usr/bin/env bash
# bench/scaling.sh: scrape latency, page size, collection CPU and RSS at 1, 8 and 64 simulated
# GPUs, and at 0..5000 pods with and without virtual GPUs (bench/scaling.py says how), as a
# table and a plot (docs/benchmarks/scaling.png). --write replaces the "## Scaling on simulated
# GPUs" section of docs/benchmarks.md; otherwise the section goes to stdout only.
# Usage: bench/scaling.sh [BUILD] [--write]   (SCALING_SECONDS, SCALING_SCRAPES, SCALING_PODS)
set -euo pipefail
build="$(cd "${1:-build}" && pwd)"
write="${2:-}"
src="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$src/docs/benchmarks"
python3 "$src/bench/scaling.py" "$build" "$src" "$work/section.md" "$src/docs/benchmarks/scaling.png" \
  | grep -v '^{' || true
if [ "$write" = --write ]; then
  python3 - "$work/section.md" "$src/docs/benchmarks.md" <<'PY'
import re, sys
sec, doc = sys.argv[1:3]
text = open(doc).read()
text = re.sub(r"## Scaling on simulated GPUs.*?(?=\n## |\Z)", "", text, flags=re.S).rstrip()
open(doc, "w").write(text + "\n\n" + open(sec).read())
PY
fi

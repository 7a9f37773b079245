#!/usr/bin/env bash
# Resident memory (VmRSS) of the daemon on 8 simulated GPUs, against a baseline measured in the
# same run: bench/nvml_init_rss, a minimal program that loads the same simulated
# libnvidia-ml.so.1 through the daemon's own loader and calls nvmlInit_v2 (what any NVML
# exporter must carry). Numbers are reported, never asserted. Cases, each a fresh daemon with
# -c 1000 and etc/dcp-metrics-included.csv, RSS read after RSS_SECONDS (default 20) and a few
# scrapes:
#   1. plain: no -k, no EMF, no TLS (what every node pays);
#   2. -k against the fake kubelet (test/fixtures/kubelet_fixture) serving RSS_PODS (500) pods
#      that time-slice the 8 GPUs;
#   3. EMF to a file (--emf-output file:...);
#   4. TLS: --web-config-file with tls_server_config (scraped over https).
# With RSS_BEFORE_BUILD=<build dir of another revision> the same cases run with that build's
# binary too (its nvml-exporter; the baseline, fixture and scripts are this tree's), e.g. the
# revision before a memory change. Also prints which mappings the plain daemon's RSS is in.
# Usage: bench/rss.sh [build-dir] [--write]   (--write replaces the "## Resident memory"
# section of docs/benchmarks.md; otherwise the section goes to stdout).
set -euo pipefail
build="$(realpath "${1:-build}")"
write="${2:-}"
src="$(cd "$(dirname "$0")/.." && pwd)"
. "$src/bench/lib.sh"  # $work, $pids, port, wait_up
secs="${RSS_SECONDS:-20}"
pods="${RSS_PODS:-500}"
scenario="$src/testdata/scenarios/eight_gpus.yaml"
csv="$src/etc/dcp-metrics-included.csv"
simgpu="$build/simgpu/libnvidia-ml.so.1"

# Baseline: the simulator loaded and initialised, every GPU's identity read once.
NVMLX_SIMGPU_SCENARIO="$scenario" "$build/bench/nvml_init_rss" "$simgpu" >"$work/baseline.txt"
baseline=$(awk '/after_devices_kib/ {print $2}' "$work/baseline.txt")

# The fake kubelet: $pods pods time-slicing the 8 GPUs (bench/fake_kubelet.sh).
. "$src/bench/fake_kubelet.sh"
start_fake_kubelet "$build/src/app/nvml-exporter" "$scenario" "$csv" "$pods"

# A self-signed certificate for the TLS case.
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$work/key.pem" -out "$work/cert.pem" \
  -subj /CN=localhost -days 1 2>/dev/null
printf 'tls_server_config:\n  cert_file: %s\n  key_file: %s\n' "$work/cert.pem" "$work/key.pem" \
  >"$work/web.yml"

# smaps_groups PID: RSS in KiB per group of mappings, as "group kib" lines.
smaps_groups() {
  python3 - "$1" <<'PY'
import collections, re, sys
def group(name):
    n = name.rsplit("/", 1)[-1]
    if n.startswith(("libgrpc", "libgpr", "libupb", "libaddress_sorting", "libcares", "libabsl", "libprotobuf")):
        return "gRPC, protobuf, abseil"
    if n.startswith(("libssl", "libcrypto")): return "OpenSSL"
    if n.startswith("libnvidia-ml"): return "libnvidia-ml (simulator)"
    if n.startswith("libnvmlx_kubelet"): return "kubelet plugin"
    if n == "nvml-exporter": return "nvml-exporter (code, data)"
    if n.startswith(("libc.so", "libm.so", "ld-linux", "libstdc++", "libgcc_s")): return "libc, libm, ld.so, libstdc++"
    if name in ("[anon]", "[heap]"): return "heap, arenas, thread stacks"
    if name.startswith("["): return "other"
    return "other libraries"
agg = collections.Counter(); cur = None
for line in open(f"/proc/{sys.argv[1]}/smaps"):
    if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
        parts = line.split(None, 5)
        cur = group(parts[5].strip() if len(parts) > 5 else "[anon]")
    elif line.startswith("Rss:"):
        agg[cur] += int(line.split()[1])
for g, kib in agg.most_common():
    print(f"{g}\t{kib}")
PY
}

# run_case LABEL BINARY ARGS...: starts the daemon, waits, scrapes, writes LABEL.rss (and
# LABEL.smaps), stops it.
run_case() {
  local label="$1" bin="$2"; shift 2
  local p scheme=http
  p=$(port)
  [[ " $* " == *" --web-config-file "* ]] && scheme=https
  "$bin" --fake-gpus --fake-gpus-scenario "$scenario" -f "$csv" -c 1000 -a "127.0.0.1:$p" "$@" \
    >"$work/$label.out" 2>"$work/$label.log" &
  local pid=$!
  pids+=("$pid")
  wait_up "$scheme://127.0.0.1:$p/metrics" || { cat "$work/$label.log" >&2; echo "rss: $label did not start" >&2; exit 1; }
  sleep "$secs"
  for _ in 1 2 3 4 5; do curl -kfsS -o /dev/null "$scheme://127.0.0.1:$p/metrics"; done
  awk '/VmRSS/ {print $2}' "/proc/$pid/status" >"$work/$label.rss"
  smaps_groups "$pid" >"$work/$label.smaps"
  kill "$pid"; wait "$pid" 2>/dev/null || true
}

cases() {  # PREFIX BINARY
  run_case "$1-plain" "$2"
  run_case "$1-k500" "$2" -k --pod-resources-kubelet-socket "$sock"
  run_case "$1-emf" "$2" --emf-output "file:$work/$1-emf.json"
  run_case "$1-tls" "$2" --web-config-file "$work/web.yml"
}
cases after "$build/src/app/nvml-exporter"
before=""
if [ -n "${RSS_BEFORE_BUILD:-}" ]; then
  before="$(realpath "$RSS_BEFORE_BUILD")"
  cases before "$before/src/app/nvml-exporter"
fi

PYTHONPATH="$src/bench" python3 - "$work" "$baseline" "$secs" "$pods" "$before" \
  "$src/docs/benchmarks.md" "$write" <<'PY'
import datetime, platform, subprocess, sys
from doc_section import publish
work, baseline, secs, pods, before, doc, write = sys.argv[1:8]
base = int(baseline)
mib = lambda k: k / 1024
def rss(label):
    return int(open(f"{work}/{label}.rss").read())
def groups(label):
    return {l.split("\t")[0]: int(l.split("\t")[1]) for l in open(f"{work}/{label}.smaps").read().splitlines()}
cases = [("plain", "no -k, no EMF, no TLS"), ("k500", f"-k, fake kubelet with {pods} pods"),
         ("emf", "EMF to a file"), ("tls", "TLS web config, scraped over https")]
has_before = bool(before)
out = ["## Resident memory (`bench/rss.sh`)", ""]
out.append(f"Measured by `bench/rss.sh build --write` on {datetime.date.today()}, {platform.machine()}: "
           f"VmRSS of the daemon on 8 simulated GPUs (-c 1000, dcp-metrics-included.csv) after {secs} s "
           "and a few scrapes, against the baseline in the same run: `bench/nvml_init_rss`, which only "
           "loads the same simulated libnvidia-ml.so.1 through the daemon's loader, calls nvmlInit_v2 "
           f"and reads each GPU's identity ({mib(base):.1f} MiB). \"Above\" is the daemon's RSS minus "
           "the baseline: what the exporter itself costs. Targets (issue 15): at most 4 MiB above "
           "without -k, at most 8 MiB above with -k and 500 pods.")
out.append("")
if has_before:
    out.append("| case | before: MiB | before: above | after: MiB | after: above | after / baseline |")
    out.append("|---|---|---|---|---|---|")
else:
    out.append("| case | MiB | above baseline | ratio to baseline |")
    out.append("|---|---|---|---|")
for key, what in cases:
    a = rss(f"after-{key}")
    if has_before:
        b = rss(f"before-{key}")
        out.append(f"| {what} | {mib(b):.1f} | {mib(b - base):+.1f} | {mib(a):.1f} | {mib(a - base):+.1f} | {a / base:.2f} |")
    else:
        out.append(f"| {what} | {mib(a):.1f} | {mib(a - base):+.1f} | {a / base:.2f} |")
out.append("")
out.append("Where the plain daemon's RSS is (`/proc/<pid>/smaps`, Rss by mapping; file-backed pages "
           "count once mapped, whether shared or not):")
out.append("")
ga = groups("after-plain")
gb = groups("before-plain") if has_before else {}
names = sorted(set(ga) | set(gb), key=lambda g: -max(ga.get(g, 0), gb.get(g, 0)))
if has_before:
    out.append("| mappings | before: KiB | after: KiB |")
    out.append("|---|---|---|")
    for g in names:
        out.append(f"| {g} | {gb.get(g, 0)} | {ga.get(g, 0)} |")
else:
    out.append("| mappings | KiB |")
    out.append("|---|---|")
    for g in names:
        out.append(f"| {g} | {ga.get(g, 0)} |")
out.append("")
publish(doc, "## Resident memory", "\n".join(out) + "\n", write)
PY

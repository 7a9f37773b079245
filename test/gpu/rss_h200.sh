#!/usr/bin/env bash
# Resident memory on the real driver: the daemon without -k against nvmlInit_v2 alone
# (nvml_init_rss: loads libnvidia-ml.so.1 through the daemon's loader, calls nvmlInit_v2 and
# reads every GPU's identity). Issue 15's target: the daemon at most 4 MiB above that baseline.
# Also checks that a daemon without -k and without TLS maps neither gRPC/protobuf nor OpenSSL
# (they load on demand: attribute/kubelet_plugin.h, util/openssl_lazy.h), and prints where its
# RSS is, by mapping.
# Run from the repo root after `make bundle` (BUNDLE=bundle), on the GPU host through the device
# tool: `bash test/gpu/rss_h200.sh` (RSS_SECONDS=30 by default); prints one line per check and
# exits non-zero on the first failure. Nothing here changes GPU settings.
set -uo pipefail
B="${BUNDLE:-bundle}"
secs="${RSS_SECONDS:-30}"
W="$(mktemp -d)"
fail() { echo "FAIL: $*"; tail -n 20 "$W/daemon.log" 2>/dev/null; exit 1; }
[ -x "$B/nvml_init_rss" ] || fail "$B/nvml_init_rss missing (make bundle copies it from build/bench/)"

"$B/nvml_init_rss" libnvidia-ml.so.1 >"$W/baseline.txt" || fail "nvml_init_rss failed"
cat "$W/baseline.txt"
base=$(awk '/after_devices_kib/ {print $2}' "$W/baseline.txt")

"$B/nvml-exporter" -f "$B/etc/dcp-metrics-included.csv" -c 1000 -a 127.0.0.1:9412 \
  2>"$W/daemon.log" &
pid=$!
for _ in $(seq 1 100); do curl -fsS -o /dev/null http://127.0.0.1:9412/ready 2>/dev/null && break; sleep 0.1; done
sleep "$secs"
for _ in 1 2 3 4 5; do curl -fsS -o /dev/null http://127.0.0.1:9412/metrics || fail "no /metrics"; done
rss=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
threads=$(awk '/Threads/ {print $2}' "/proc/$pid/status")
python3 - "$pid" <<'PY'
import collections, re, sys
agg = collections.Counter(); cur = None
for line in open(f"/proc/{sys.argv[1]}/smaps"):
    if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
        parts = line.split(None, 5)
        name = parts[5].strip() if len(parts) > 5 else "[anon]"
        cur = name.rsplit("/", 1)[-1] if name.startswith("/") else name
    elif line.startswith("Rss:"):
        agg[cur] += int(line.split()[1])
for name, kib in agg.most_common(15):
    print(f"  {kib:7d} KiB  {name}")
PY
grep -Eo '[^/ ]*(libgrpc|libprotobuf|libabsl|libssl|libcrypto|libnvmlx_kubelet)[^ ]*' "/proc/$pid/maps" | sort -u >"$W/lazy.txt"
kill -TERM "$pid"; wait "$pid"
above=$((rss - base))
echo "daemon: $rss KiB after ${secs}s ($threads threads); baseline nvmlInit_v2: $base KiB; above: $above KiB ($(python3 -c "print(round($above/1024, 1))") MiB), ratio $(python3 -c "print(round($rss/$base, 2))")"
[ -s "$W/lazy.txt" ] && fail "mapped without -k or TLS: $(tr '\n' ' ' <"$W/lazy.txt")"
echo "ok: no gRPC, protobuf, OpenSSL or kubelet plugin mapped"
[ "$above" -le 4096 ] || fail "RSS $above KiB above the baseline, target 4096 KiB"
echo "ok: RSS within 4 MiB of nvmlInit_v2's"

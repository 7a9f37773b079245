#!/usr/bin/env bash
# Validates the core exporter on a real NVIDIA GPU (run from the repo root after `make bundle`;
# on the H200 host through the device tool). Writes comparison.md and validation.tgz (all of
# the following) into $OUT (default ./validation-out):
#   smi_{idle,load}.csv       nvidia-smi --query-gpu readings taken right after each --once
#   once_{idle,load}.txt      nvml-exporter --once expositions
#   metrics_daemon.txt        /metrics from the daemon (-c 1000), health.txt
#   comparison.md             field-by-field agreement, made by test/gpu/compare_smi.py
# Nothing here changes GPU settings.
set -uo pipefail
B="${BUNDLE:-bundle}"
RESULT="${OUT:-validation-out}"
OUT="$(mktemp -d)"
mkdir -p "$RESULT"
CSV="$B/etc/default-counters.csv"
Q=index,uuid,pci.bus_id,name,clocks.sm,clocks.mem,temperature.gpu,temperature.memory,power.draw,utilization.gpu,utilization.memory,memory.total,memory.free,memory.used,memory.reserved,pcie.link.gen.current,pcie.link.width.current,driver_version,enforced.power.limit,fan.speed
snap() {  # name
  "$B/nvml-exporter" -f "$CSV" --once >"$OUT/once_$1.txt" 2>"$OUT/once_$1.log"
  echo "once rc=$?" >>"$OUT/once_$1.log"
  nvidia-smi --query-gpu=$Q --format=csv,noheader,nounits >"$OUT/smi_$1.csv" 2>&1
}
nvidia-smi -L >"$OUT/gpus.txt" 2>&1
nvidia-smi >"$OUT/nvidia-smi.txt" 2>&1
snap idle
# A load so utilisation, power and clocks are not all at their idle floor.
python3 - <<'PY' &
import time, torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
t = time.time()
while time.time() - t < 30:
    for _ in range(20): c = a @ b
    torch.cuda.synchronize()
PY
load=$!
sleep 12
snap load
# The daemon: serve, scrape, health, gzip, as root and as nobody.
"$B/nvml-exporter" -f "$B/etc/dcp-metrics-included.csv" -c 1000 -a 127.0.0.1:9400 \
  >"$OUT/daemon.out" 2>"$OUT/daemon.log" &
d=$!
sleep 4
curl -sS -D "$OUT/metrics_headers.txt" http://127.0.0.1:9400/metrics >"$OUT/metrics_daemon.txt"
sleep 2
curl -sS http://127.0.0.1:9400/metrics >"$OUT/metrics_daemon2.txt"
curl -sS -w '\nhttp=%{http_code}\n' http://127.0.0.1:9400/health >"$OUT/health.txt"
curl -sS -H 'Accept-Encoding: gzip' http://127.0.0.1:9400/metrics | gzip -dc | head -n 3 >"$OUT/gzip_head.txt"
grep -E "VmRSS|VmHWM" /proc/$d/status >"$OUT/daemon_rss.txt"
ps -o pid,rss,time,args -p $d >>"$OUT/daemon_rss.txt"
kill -TERM $d; wait $d; echo "daemon rc=$?" >>"$OUT/daemon.log"
wait $load
if id nobody >/dev/null 2>&1; then
  chmod -R a+rX "$B"
  su -s /bin/sh nobody -c "$B/nvml-exporter -f $CSV --once" >"$OUT/once_nobody.txt" 2>"$OUT/once_nobody.log"
  echo "nobody rc=$?" >>"$OUT/once_nobody.log"
fi
python3 test/gpu/compare_smi.py "$OUT" >"$OUT/comparison.md" 2>&1
cp "$OUT/comparison.md" "$RESULT/"
tar czf "$RESULT/validation.tgz" -C "$OUT" .
cat "$OUT/comparison.md"

#!/usr/bin/env bash
# Validates the drop-in fidelity work on a real NVIDIA GPU (run from the repo root after
# `make bundle`; on the H200 host through the device tool). Nothing here changes GPU settings.
# Writes into $OUT (default ./validation-out): fidelity.txt (the summary) and fidelity.tgz:
#   nvlink_once.txt/.log   the daemon with every per-link NVLink bandwidth row (L0..L17, totals)
#                          next to nvidia-smi nvlink -s / -gt d (link state, throughput)
#   upstream_once.log      --once with upstream's three collectors files: the skip warnings
#   operator.log           the GPU Operator's standalone-DCGM env (-r set) and the chart's debug
#                          dump flags: one warning each, serving anyway
#   probes.txt             /health and /ready at start and once serving
#   hostname.txt           --hostname-label hostname
set -uo pipefail
B="${BUNDLE:-bundle}"
RESULT="${OUT:-validation-out}"
OUT="$(mktemp -d)"
mkdir -p "$RESULT"
X="$B/nvml-exporter"
S="$OUT/fidelity.txt"

nvidia-smi -L >"$OUT/gpus.txt" 2>&1
nvidia-smi nvlink -s >"$OUT/smi_nvlink_status.txt" 2>&1
nvidia-smi nvlink -gt d >"$OUT/smi_nvlink_throughput.txt" 2>&1

# 1. Per-link NVLink bandwidth: every row, through nvmlDeviceGetFieldValues at scopeId = link.
{
  echo "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL, gauge, total"
  for l in $(seq 0 17); do echo "DCGM_FI_DEV_NVLINK_BANDWIDTH_L$l, gauge, link $l"; done
} >"$OUT/nvlink.csv"
# A rate needs two reads: the daemon, scraped after a few collections, not --once.
"$X" -f "$OUT/nvlink.csv" -c 1000 -a 127.0.0.1:9401 >/dev/null 2>"$OUT/nvlink_once.log" &
n=$!
sleep 4
curl -sS http://127.0.0.1:9401/metrics >"$OUT/nvlink_once.txt"
kill -TERM $n; wait $n; echo "nvlink daemon rc=$?" >>"$OUT/nvlink_once.log"
{
  echo "## per-link NVLink bandwidth (daemon, -c 1000, after 4 s)"
  echo "series: $(grep -c '^DCGM_FI_DEV_NVLINK_BANDWIDTH' "$OUT/nvlink_once.txt")"
  grep '^DCGM_FI_DEV_NVLINK_BANDWIDTH' "$OUT/nvlink_once.txt" | sed 's/{.*}/{…}/' | head -20
  echo "warnings:"; grep -c '"level":"warn"\|level=warn\|WARN' "$OUT/nvlink_once.log"
  grep -i 'warn' "$OUT/nvlink_once.log" | head -5
  echo "links up (nvidia-smi): $(grep -c 'GB/s' "$OUT/smi_nvlink_status.txt")"
} >>"$S"

# 2. Upstream's three collectors files: known-but-skipped rows warn, nothing fails.
for f in default-counters dcp-metrics-included 1.x-compatibility-metrics; do
  "$X" -f "$B/etc/$f.csv" --once >"$OUT/upstream_$f.txt" 2>"$OUT/upstream_$f.log"
  echo "rc=$?" >>"$OUT/upstream_$f.log"
  {
    echo "## $f.csv: $(tail -1 "$OUT/upstream_$f.log"), $(grep -vc '^#' "$OUT/upstream_$f.txt") series"
    grep 'metric not enabled' "$OUT/upstream_$f.log" | sed 's/^.*field=/  field=/' | head -10
  } >>"$S"
done

# 3. The operator's standalone-DCGM env and the chart's debug-dump flags; the probes.
DCGM_REMOTE_HOSTENGINE_INFO=nvidia-dcgm:5555 DCGM_EXPORTER_KUBERNETES=false \
  "$X" -f "$B/etc/dcp-metrics-included.csv" -c 1000 -a 127.0.0.1:9400 \
  --dump-enabled --dump-directory=/tmp/dcgm-exporter-debug --dump-retention=24 --dump-compression \
  >"$OUT/operator.out" 2>"$OUT/operator.log" &
d=$!
{
  echo "## probes"
  for _ in $(seq 50); do curl -s -o /dev/null http://127.0.0.1:9400/health && break; sleep 0.05; done
  echo "early /health: $(curl -sS -w ' http=%{http_code}' http://127.0.0.1:9400/health)"
  echo "early /ready:  $(curl -sS -w ' http=%{http_code}' http://127.0.0.1:9400/ready)"
  for _ in $(seq 100); do curl -fs -o /dev/null http://127.0.0.1:9400/ready && break; sleep 0.1; done
  echo "/health: $(curl -sS -w ' http=%{http_code}' http://127.0.0.1:9400/health)"
  echo "/ready:  $(curl -sS -w ' http=%{http_code}' http://127.0.0.1:9400/ready)"
} >>"$S"
sleep 2
curl -sS http://127.0.0.1:9400/metrics >"$OUT/operator_metrics.txt"
kill -TERM $d; wait $d; echo "daemon rc=$?" >>"$OUT/operator.log"
{
  echo "## operator env + debug-dump flags: $(grep -c '^DCGM_' "$OUT/operator_metrics.txt") series served"
  grep -i 'warn' "$OUT/operator.log" | head -10
  tail -1 "$OUT/operator.log"
} >>"$S"

# 4. The host label spelling.
NODE_NAME=h200 "$X" -f "$B/etc/default-counters.csv" --hostname-label hostname --once \
  >"$OUT/hostname.txt" 2>/dev/null
{
  echo "## --hostname-label hostname"
  echo "hostname=: $(grep -c ',hostname="' "$OUT/hostname.txt"), Hostname=: $(grep -c ',Hostname="' "$OUT/hostname.txt")"
} >>"$S"

# 5. DCGM_EXP_GPU_HEALTH_STATUS and DCGM_EXP_P2P_STATUS from the real driver (idle GPU: every
# watch should pass; P2P needs a second GPU, so a 1-GPU host has no P2P series).
printf '%s\n' "DCGM_EXP_GPU_HEALTH_STATUS, gauge, health" "DCGM_EXP_P2P_STATUS, gauge, p2p" \
  >"$OUT/health.csv"
"$X" -f "$OUT/health.csv" --once >"$OUT/health_once.txt" 2>"$OUT/health_once.log"
echo "rc=$?" >>"$OUT/health_once.log"
{
  echo "## health and P2P status (--once): $(tail -1 "$OUT/health_once.log")"
  grep -E '^DCGM_EXP_(GPU_HEALTH|P2P)_STATUS' "$OUT/health_once.txt" |
    sed 's/UUID="[^"]*",pci_bus_id="[^"]*",device="[^"]*",modelName="[^"]*",//'
  grep -i 'warn' "$OUT/health_once.log" | head -5
} >>"$S"

cp "$S" "$RESULT/"
tar czf "$RESULT/fidelity.tgz" -C "$OUT" .
cat "$S"

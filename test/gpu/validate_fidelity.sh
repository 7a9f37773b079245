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
#   hostname.txt           --dcgm-exporter-compat 4.8.2 (Hostname)
#   nvlink_errors.*        the 72 per-link NVLink error counters, the four totals and the health
#                          watch, in a daemon collecting every 500 ms for 4 s, next to what NVML
#                          itself answers per link (nvlink_probe.txt, python ctypes)
#   lost_sim.txt           a lost GPU's health series, on the bundle's simulated GPUs (a real
#                          GPU cannot be taken off the bus from here)
# Sections 1-5 only record; section 6 checks and the script exits 1 when a check fails
# ("FAIL: ..." lines in fidelity.txt). On the single-GPU H200 VM (no NVLink peer) NVML answers
# NOT_SUPPORTED per link: no per-link series, one warning per row, NVLINK watch 0 (DCGM_FR_OK).
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
NODE_NAME=h200 "$X" -f "$B/etc/default-counters.csv" --dcgm-exporter-compat 4.8.2 --once \
  >"$OUT/hostname.txt" 2>/dev/null
{
  echo "## --dcgm-exporter-compat 4.8.2 (host label Hostname)"
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

# 6. Per-link NVLink error counters (nvmlDeviceGetNvLinkErrorCounter) and the NVLINK health watch
# (nvmlDeviceGetNvLinkState per link). Every per-link row must either be served or warned about
# exactly once per GPU (also over several collections); the NVLINK watch must fail exactly when
# NVML reports an active-capable link inactive, and pass when no link answers (no NVLink).
fails=0
check() { if eval "$2"; then echo "ok: $1" >>"$S"; else echo "FAIL: $1" >>"$S"; fails=$((fails + 1)); fi; }
python3 - >"$OUT/nvlink_probe.txt" 2>&1 <<'PY'
import ctypes
nvml = ctypes.CDLL("libnvidia-ml.so.1")
assert nvml.nvmlInit_v2() == 0
n = ctypes.c_uint()
nvml.nvmlDeviceGetCount_v2(ctypes.byref(n))
for i in range(n.value):
    d = ctypes.c_void_p()
    nvml.nvmlDeviceGetHandleByIndex_v2(i, ctypes.byref(d))
    states, counters = [], []
    for link in range(18):
        a = ctypes.c_int(-1)
        rc = nvml.nvmlDeviceGetNvLinkState(d, link, ctypes.byref(a))
        states.append(f"{link}:{'rc%d' % rc if rc else ('up' if a.value == 1 else 'down')}")
        v = ctypes.c_ulonglong()
        rc = nvml.nvmlDeviceGetNvLinkErrorCounter(d, link, 2, ctypes.byref(v))  # CRC_FLIT
        counters.append(f"{link}:{'rc%d' % rc if rc else v.value}")
    print(f"gpu {i} state {' '.join(states)}")
    print(f"gpu {i} crc_flit {' '.join(counters)}")
nvml.nvmlShutdown()
PY
{
  for f in CRC_FLIT CRC_DATA REPLAY RECOVERY; do
    echo "DCGM_FI_DEV_NVLINK_${f}_ERROR_COUNT_TOTAL, counter, total"
    for l in $(seq 0 17); do echo "DCGM_FI_DEV_NVLINK_${f}_ERROR_COUNT_L$l, counter, link $l"; done
  done
  echo "DCGM_EXP_GPU_HEALTH_STATUS, gauge, health"
} >"$OUT/nvlink_errors.csv"
"$X" -f "$OUT/nvlink_errors.csv" -c 500 -a 127.0.0.1:9402 --log-format json >/dev/null \
  2>"$OUT/nvlink_errors.log" &
n=$!
sleep 4
curl -sS http://127.0.0.1:9402/metrics >"$OUT/nvlink_errors.txt"
kill -TERM $n; wait $n; rc=$?
gpus=$(grep -c '^nvml_exporter_gpu_up{' "$OUT/nvlink_errors.txt")
per_link=$(grep -Ec '^DCGM_FI_DEV_NVLINK_[A-Z_]+_ERROR_COUNT_L[0-9]+\{' "$OUT/nvlink_errors.txt")
warned=$(python3 - "$OUT/nvlink_errors.log" <<'PY'
import collections, json, sys
rows = collections.Counter()
for line in open(sys.argv[1]):
    try:
        l = json.loads(line)
    except ValueError:
        continue
    f = l.get("field", "")
    if "field read failed" in l.get("msg", "") and "_ERROR_COUNT_L" in f:
        rows[(l.get("gpu"), f)] += 1
twice = sum(1 for n in rows.values() if n > 1)
print(len(rows), twice)
PY
)
{
  echo "## per-link NVLink error counters and NVLINK health (daemon, -c 500, 4 s): rc=$rc"
  cat "$OUT/nvlink_probe.txt"
  echo "GPUs: $gpus, per-link series: $per_link, per-link rows warned (GPU, row): ${warned% *}, warned more than once: ${warned#* }"
  grep -E '^DCGM_FI_DEV_NVLINK_[A-Z_]+_ERROR_COUNT_(TOTAL|L0)\{' "$OUT/nvlink_errors.txt" | sed 's/{.*}/{…}/'
  grep -m3 '_ERROR_COUNT_L' "$OUT/nvlink_errors.log"
  grep '^DCGM_EXP_GPU_HEALTH_STATUS{.*health_watch="NVLINK"' "$OUT/nvlink_errors.txt" |
    sed 's/UUID="[^"]*",pci_bus_id="[^"]*",device="[^"]*",modelName="[^"]*",//'
} >>"$S"
check "daemon exited 0 after SIGTERM" '[ "$rc" = 0 ]'
check "every per-link row served or warned once per GPU ($per_link + ${warned% *} = 72 x $gpus)" \
  '[ $((per_link + ${warned% *})) = $((72 * gpus)) ] && [ "${warned#* }" = 0 ]'
# NVLINK reports DCGM_FR_NVLINK_DOWN (20) exactly on a GPU with a link NVML calls down (and no
# MIG). Without NVLink it must pass (0, DCGM_FR_OK); with NVLink, error growth within the run may
# raise DCGM_FR_NVLINK_ERROR_* on a live system, which is not a failure of this check.
while read -r gpu states; do
  want=DCGM_FR_OK
  if grep -q ':down' <<<"$states" && ! nvidia-smi -i "$gpu" --query-gpu=mig.mode.current --format=csv,noheader 2>/dev/null | grep -q Enabled; then
    want=DCGM_FR_NVLINK_DOWN
  fi
  line=$(grep -E "^DCGM_EXP_GPU_HEALTH_STATUS\{gpu=\"$gpu\",.*health_watch=\"NVLINK\"\}" "$OUT/nvlink_errors.txt")
  got=$(sed -n 's/.*health_error_code="\([^"]*\)".*/\1/p' <<<"$line")
  summary="link states: $(grep -o 'rc[0-9]*\|up\|down' <<<"$states" | sort | uniq -c | tr -s ' \n' ' ')"
  if grep -q ':\(up\|down\)' <<<"$states" && [ "$want" = DCGM_FR_OK ]; then
    check "GPU $gpu NVLINK watch is not DCGM_FR_NVLINK_DOWN (got $got; $summary)" '[ "$got" != DCGM_FR_NVLINK_DOWN ]'
  else
    check "GPU $gpu NVLINK watch is $want (got $got; $summary)" '[ "$got" = "$want" ]'
  fi
done < <(sed -n 's/^gpu \([0-9]*\) state \(.*\)$/\1 \2/p' "$OUT/nvlink_probe.txt")
if grep -q ' state .*rc3' "$OUT/nvlink_probe.txt" && ! grep -q ' state .*\(up\|down\)' "$OUT/nvlink_probe.txt"; then
  check "no NVLink (every link NOT_SUPPORTED): no per-link series" '[ "$per_link" = 0 ]'
fi

# 7. A lost GPU keeps its health series (ALL 20, DCGM_FR_FALLEN_OFF_BUS): simulated, from the
# bundle's libnvidia-ml (GPU 1 goes GPU_IS_LOST after 1 s).
cat >"$OUT/lost.yaml" <<'YAML'
gpus: [{name: "NVIDIA H200"}, {name: "NVIDIA H200"}]
faults: [{gpu: 1, lost_after_s: 1}]
YAML
"$X" --fake-gpus-scenario "$OUT/lost.yaml" -f "$OUT/nvlink_errors.csv" -c 300 -a 127.0.0.1:9403 \
  >/dev/null 2>"$OUT/lost_sim.log" &
n=$!
sleep 3
curl -sS http://127.0.0.1:9403/metrics >"$OUT/lost_sim.txt"
kill -TERM $n; wait $n
{
  echo "## lost GPU (simulated): its series"
  grep 'gpu="1"' "$OUT/lost_sim.txt" | sed 's/UUID="[^"]*",pci_bus_id="[^"]*",device="[^"]*",modelName="[^"]*",//'
} >>"$S"
check "simulated lost GPU: 11 health series, ALL 20 DCGM_FR_FALLEN_OFF_BUS, nothing else" \
  '[ "$(grep -c "^DCGM_EXP_GPU_HEALTH_STATUS{gpu=\"1\"" "$OUT/lost_sim.txt")" = 11 ] &&
   grep -q "^DCGM_EXP_GPU_HEALTH_STATUS{gpu=\"1\",.*DCGM_FR_FALLEN_OFF_BUS\",health_watch=\"ALL\"} 20$" "$OUT/lost_sim.txt" &&
   ! grep -q "^DCGM_FI_[A-Z_]*{gpu=\"1\"" "$OUT/lost_sim.txt"'
echo "fidelity checks: $fails failed" >>"$S"

cp "$S" "$RESULT/"
tar czf "$RESULT/fidelity.tgz" -C "$OUT" .
cat "$S"
[ "$fails" = 0 ]

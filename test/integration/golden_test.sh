#!/usr/bin/env bash
# End-to-end golden files: the real daemon (--once) on 1 and 8 simulated GPUs with a frozen
# clock renders byte-for-byte the expected exposition (CSV -> NVML seam -> catalog -> collector
# -> renderer). Lines that legitimately vary between builds and runs are dropped first: the
# build_info labels and the collection's own timing. Regenerate with NVMLX_UPDATE_GOLDEN=1.
source "$(dirname "$0")/lib.sh"
# once OUT ARGS...: the daemon's --once page on node golden-node with a frozen clock, without the
# lines that vary, into OUT; its stderr into $ONCE_STDERR when set, else dropped.
once() {
  local out="$1"
  shift
  NODE_NAME=golden-node NVMLX_SIMGPU_FROZEN_TIME_S=100 "$EXPORTER" "$@" --once \
    2>"${ONCE_STDERR:-/dev/null}" | drop_varying_lines >"$out"
}
for n in one_gpu eight_gpus; do
  got="$WORK/$n.txt"
  once "$got" --fake-gpus-scenario "$SOURCE_DIR/testdata/scenarios/$n.yaml" \
    -f "$SOURCE_DIR/etc/dcp-metrics-included.csv"
  golden_matches "$n" "$got" "$SOURCE_DIR/testdata/golden/once_$n.txt" || continue
  pass "$n: $(grep -c '^DCGM_' "$got") series match the golden file"
done
# --dcgm-exporter-compat 4.8.2 (its env var here) and --hostname-label Hostname: the one-GPU page
# with the host label spelt as dcgm-exporter 4.8.2 did, nothing else changed (-f is given, so
# the rows are the same); bad values are usage errors; without -f, 4.8.2 reads its own default
# file (absent here, so the error names it).
for how in NVML_EXPORTER_DCGM_EXPORTER_COMPAT=4.8.2 NVML_EXPORTER_HOSTNAME_LABEL=Hostname; do
  got="$WORK/hostname.txt"
  (export "$how" && once "$got" --fake-gpus-scenario "$SOURCE_DIR/testdata/scenarios/one_gpu.yaml" \
    -f "$SOURCE_DIR/etc/dcp-metrics-included.csv")
  grep -q ',Hostname="golden-node"' "$got" || fail "hostname ($how): no Hostname label"
  diff -u <(sed 's/,hostname="golden-node"/,Hostname="golden-node"/' "$SOURCE_DIR/testdata/golden/once_one_gpu.txt") "$got" ||
    fail "hostname ($how): the page differs from the golden file by more than the label name"
done
rc=0; "$EXPORTER" --fake-gpus --hostname-label HOSTNAME --once >/dev/null 2>"$WORK/hl.err" || rc=$?
[ "$rc" = 2 ] && grep -q 'expected Hostname or hostname' "$WORK/hl.err" ||
  fail "hostname: bad spelling not refused (exit $rc): $(cat "$WORK/hl.err")"
rc=0; "$EXPORTER" --fake-gpus --dcgm-exporter-compat 4.11 --once >/dev/null 2>"$WORK/gen.err" || rc=$?
[ "$rc" = 2 ] && grep -q 'expected one of 4.8.2, 4.8.3, 4.8.4, 4.9, 4.10' "$WORK/gen.err" ||
  fail "--dcgm-exporter-compat 4.11 not refused (exit $rc): $(cat "$WORK/gen.err")"
rc=0; "$EXPORTER" --fake-gpus --dcgm-exporter-compat 4.8.2 --once >/dev/null 2>"$WORK/gen.err" || rc=$?
[ "$rc" != 0 ] && grep -q '/etc/dcgm-exporter/4.8.2/default-counters.csv' "$WORK/gen.err" ||
  fail "--dcgm-exporter-compat 4.8.2 without -f must read 4.8.2's file (exit $rc): $(cat "$WORK/gen.err")"
pass "hostname: --dcgm-exporter-compat 4.8.2 and --hostname-label Hostname rename only the host label"
# MIG (testdata/scenarios/mig.yaml): GPU 0 split into its instances (per-instance memory and GPM
# ratios with GPU_I_PROFILE/GPU_I_ID; GPU-wide fields repeated on every instance, as
# dcgm-exporter, or once on the GPU with --mig-gpu-fields-on-parent), GPU 1 without MIG; with
# -d g the GPUs only, with -d i:0,2 two instances with their GPU's GPU-wide fields. Also the
# windowed counters: DCGM_EXP_CLOCK_EVENTS_COUNT after one sample (clock_event per reason set).
for sel in f g i:0,2 f+on_parent; do
  name="mig_${sel//[:,+]/_}"
  got="$WORK/$name.txt"
  extra=()
  [ "${sel#*+}" = on_parent ] && extra=(--mig-gpu-fields-on-parent)
  once "$got" "${extra[@]}" --fake-gpus-scenario "$SOURCE_DIR/testdata/scenarios/mig.yaml" \
    -d "${sel%+*}" -f "$SOURCE_DIR/testdata/golden/mig_counters.csv"
  golden_matches "$name" "$got" "$SOURCE_DIR/testdata/golden/once_$name.txt" || continue
  # GPU_I_* labels keep the page parseable.
  promtool_parses "$name" "$got"
  pass "$name: $(grep -c '^DCGM_' "$got") series match the golden file"
done
# Health (testdata/scenarios/health_faults.yaml): DCGM_EXP_GPU_HEALTH_STATUS, one series per GPU
# and health watch with the condition each GPU's faults map to (docs/dcgm-compat.md §5, "Health
# and P2P status"), and DCGM_EXP_P2P_STATUS per GPU pair (none for pairs whose query fails).
got="$WORK/health.txt"
once "$got" --fake-gpus-scenario "$SOURCE_DIR/testdata/scenarios/health_faults.yaml" \
  -f "$SOURCE_DIR/testdata/golden/health_counters.csv"
if golden_matches health "$got" "$SOURCE_DIR/testdata/golden/once_health.txt"; then
  [ "$(grep -c '^DCGM_EXP_GPU_HEALTH_STATUS{' "$got")" = 44 ] || fail "health: not 11 watches x 4 GPUs"
  promtool_parses health "$got"
  pass "health: $(grep -c '^DCGM_EXP_' "$got") health and P2P series match the golden file"
fi
# Per-link NVLink error counters and the NVLINK health watch (testdata/scenarios/nvlink.yaml):
# GPU 0 serves all 72 per-link counters, GPU 1 the 16 of its 4 links (NVLINK fails: link 2 is
# inactive), GPU 2 (no NVLink, as the H200 VM) none and passes. Unreadable rows: no series and one
# warning per GPU and row.
got="$WORK/nvlink.txt"
ONCE_STDERR="$WORK/nvlink.log" once "$got" --log-format json \
  --fake-gpus-scenario "$SOURCE_DIR/testdata/scenarios/nvlink.yaml" \
  -f "$SOURCE_DIR/testdata/golden/nvlink_counters.csv"
if golden_matches nvlink "$got" "$SOURCE_DIR/testdata/golden/once_nvlink.txt"; then
  for g in 0:72 1:16 2:0; do
    n=$(grep -Ec "^DCGM_FI_DEV_NVLINK_[A-Z_]+_ERROR_COUNT_L[0-9]+\{gpu=\"${g%:*}\"" "$got" || true)
    [ "$n" = "${g#*:}" ] || fail "nvlink: GPU ${g%:*} has $n per-link series, want ${g#*:}"
  done
  grep -q '^DCGM_EXP_GPU_HEALTH_STATUS{gpu="1",.*health_error_code="DCGM_FR_NVLINK_DOWN",health_watch="NVLINK"} 20$' "$got" ||
    fail "nvlink: GPU 1's NVLINK watch must fail (link 2 inactive)"
  grep -q '^DCGM_EXP_GPU_HEALTH_STATUS{gpu="2",.*health_error_code="DCGM_FR_OK",health_watch="NVLINK"} 0$' "$got" ||
    fail "nvlink: GPU 2 (no NVLink) must pass its NVLINK watch"
  # One warning per (GPU, unreadable row): GPU 1 56 per-link rows, GPU 2 72 + 4 totals.
  python3 - "$WORK/nvlink.log" <<'PY' || fail "nvlink: warnings are not one per GPU and unreadable row"
import collections, json, sys
rows = collections.Counter()
for line in open(sys.argv[1]):
    l = json.loads(line)
    if "field read failed" in l.get("msg", "") and "NVLINK" in l.get("field", ""):
        rows[(l["gpu"], l["field"])] += 1
assert all(n == 1 for n in rows.values()), rows
per_gpu = collections.Counter(g for g, _ in rows)
assert per_gpu == {"1": 56, "2": 76}, per_gpu
PY
  promtool_parses nvlink "$got"
  pass "nvlink: $(grep -c '^DCGM_' "$got") per-link NVLink and health series match the golden file"
fi
# A lost GPU (testdata/scenarios/health_lost.yaml: GPU 1 answers GPU_IS_LOST in the first
# collection) keeps its 11 health series, ALL failing with DCGM_FR_FALLEN_OFF_BUS; GPU 0 passes.
got="$WORK/health_lost.txt"
once "$got" --fake-gpus-scenario "$SOURCE_DIR/testdata/scenarios/health_lost.yaml" \
  -f "$SOURCE_DIR/testdata/golden/health_counters.csv"
if golden_matches health_lost "$got" "$SOURCE_DIR/testdata/golden/once_health_lost.txt"; then
  [ "$(grep -c '^DCGM_EXP_GPU_HEALTH_STATUS{gpu="1",' "$got")" = 11 ] || fail "health_lost: not 11 watches for the lost GPU"
  grep -q '^DCGM_EXP_GPU_HEALTH_STATUS{gpu="1",.*health_error_code="DCGM_FR_FALLEN_OFF_BUS",health_watch="ALL"} 20$' "$got" ||
    fail "health_lost: the lost GPU's ALL watch must fail (fallen off the bus)"
  grep -q '^DCGM_FI_DEV_GPU_TEMP{gpu="1"' "$got" && fail "health_lost: the lost GPU must have no other series"
  grep -q '^nvml_exporter_gpu_up{gpu="1",[^}]*} 0$' "$got" || fail "health_lost: gpu_up must be 0"
  pass "health_lost: the lost GPU keeps its health series, ALL failing"
fi
echo "golden_test: all passed"

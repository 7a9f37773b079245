#!/usr/bin/env bash
# End-to-end golden files: the real daemon (--once) on 1 and 8 simulated GPUs with a frozen
# clock renders byte-for-byte the expected exposition (CSV -> NVML seam -> catalog -> collector
# -> renderer). Lines that legitimately vary between builds and runs are dropped first: the
# build_info labels and the collection's own timing. Regenerate with NVMLX_UPDATE_GOLDEN=1.
source "$(dirname "$0")/lib.sh"
for n in one_gpu eight_gpus; do
  got="$WORK/$n.txt"
  NODE_NAME=golden-node NVMLX_SIMGPU_FROZEN_TIME_S=100 "$EXPORTER" \
    --fake-gpus-scenario "$SOURCE_DIR/testdata/scenarios/$n.yaml" \
    -f "$SOURCE_DIR/etc/dcp-metrics-included.csv" --once 2>/dev/null \
    | grep -Ev '^nvml_exporter_(build_info|collect_duration_seconds|last_collect_timestamp_seconds)[{ ]' >"$got"
  want="$SOURCE_DIR/testdata/golden/once_$n.txt"
  if [ "${NVMLX_UPDATE_GOLDEN:-}" = 1 ]; then cp "$got" "$want"; echo "updated $want"; continue; fi
  diff -u "$want" "$got" || fail "$n: exposition differs from $want"
  pass "$n: $(grep -c '^DCGM_' "$got") series match the golden file"
done
# --hostname-label hostname (upstream main's spelling): the one-GPU page with that one label
# renamed, nothing else changed; an unknown spelling is a usage error.
got="$WORK/hostname.txt"
NODE_NAME=golden-node NVMLX_SIMGPU_FROZEN_TIME_S=100 NVML_EXPORTER_HOSTNAME_LABEL=hostname \
  "$EXPORTER" --fake-gpus-scenario "$SOURCE_DIR/testdata/scenarios/one_gpu.yaml" \
  -f "$SOURCE_DIR/etc/dcp-metrics-included.csv" --once 2>/dev/null \
  | grep -Ev '^nvml_exporter_(build_info|collect_duration_seconds|last_collect_timestamp_seconds)[{ ]' >"$got"
grep -q ',hostname="golden-node"' "$got" || fail "hostname: no hostname label"
diff -u <(sed 's/,Hostname="golden-node"/,hostname="golden-node"/' "$SOURCE_DIR/testdata/golden/once_one_gpu.txt") "$got" ||
  fail "hostname: the page differs from the golden file by more than the label name"
rc=0; "$EXPORTER" --fake-gpus --hostname-label HOSTNAME --once >/dev/null 2>"$WORK/hl.err" || rc=$?
[ "$rc" = 2 ] && grep -q 'expected Hostname or hostname' "$WORK/hl.err" ||
  fail "hostname: bad spelling not refused (exit $rc): $(cat "$WORK/hl.err")"
pass "hostname: --hostname-label hostname renames only the host label"
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
  NODE_NAME=golden-node NVMLX_SIMGPU_FROZEN_TIME_S=100 "$EXPORTER" "${extra[@]}" \
    --fake-gpus-scenario "$SOURCE_DIR/testdata/scenarios/mig.yaml" -d "${sel%+*}" \
    -f "$SOURCE_DIR/testdata/golden/mig_counters.csv" --once 2>/dev/null \
    | grep -Ev '^nvml_exporter_(build_info|collect_duration_seconds|last_collect_timestamp_seconds)[{ ]' >"$got"
  want="$SOURCE_DIR/testdata/golden/once_$name.txt"
  if [ "${NVMLX_UPDATE_GOLDEN:-}" = 1 ]; then cp "$got" "$want"; echo "updated $want"; continue; fi
  diff -u "$want" "$got" || fail "$name: exposition differs from $want"
  # GPU_I_* labels keep the page parseable (exit 3 = lint only: dcgm-exporter's names).
  if command -v promtool >/dev/null; then
    rc=0; promtool check metrics <"$got" >/dev/null 2>&1 || rc=$?
    [ "$rc" = 0 ] || [ "$rc" = 3 ] || fail "$name: promtool could not parse it (exit $rc)"
  fi
  pass "$name: $(grep -c '^DCGM_' "$got") series match the golden file"
done
# Health (testdata/scenarios/health_faults.yaml): DCGM_EXP_GPU_HEALTH_STATUS, one series per GPU
# and health watch with the condition each GPU's faults map to (docs/dcgm-compat.md §5, "Health
# and P2P status"), and DCGM_EXP_P2P_STATUS per GPU pair (none for pairs whose query fails).
got="$WORK/health.txt"
NODE_NAME=golden-node NVMLX_SIMGPU_FROZEN_TIME_S=100 "$EXPORTER" \
  --fake-gpus-scenario "$SOURCE_DIR/testdata/scenarios/health_faults.yaml" \
  -f "$SOURCE_DIR/testdata/golden/health_counters.csv" --once 2>/dev/null \
  | grep -Ev '^nvml_exporter_(build_info|collect_duration_seconds|last_collect_timestamp_seconds)[{ ]' >"$got"
want="$SOURCE_DIR/testdata/golden/once_health.txt"
if [ "${NVMLX_UPDATE_GOLDEN:-}" = 1 ]; then
  cp "$got" "$want"; echo "updated $want"
else
  diff -u "$want" "$got" || fail "health: exposition differs from $want"
  [ "$(grep -c '^DCGM_EXP_GPU_HEALTH_STATUS{' "$got")" = 44 ] || fail "health: not 11 watches x 4 GPUs"
  if command -v promtool >/dev/null; then
    rc=0; promtool check metrics <"$got" >/dev/null 2>&1 || rc=$?
    [ "$rc" = 0 ] || [ "$rc" = 3 ] || fail "health: promtool could not parse it (exit $rc)"
  fi
  pass "health: $(grep -c '^DCGM_EXP_' "$got") health and P2P series match the golden file"
fi
echo "golden_test: all passed"

#!/usr/bin/env bash
# Issue 37: collectors files of newer dcgm-exporter releases.
#  1. dcgm-exporter 4.10.0's DCGM_FI_PROF_{PCIE,NVLINK}_{TX,RX}_BYTES_PER_SECOND are served on GPM
#     GPUs with exactly their older twins' values, page after page (the rates move).
#  2. --dcgm-exporter-compat 4.10 with etc/4.10/'s file: its names, the renamed driver label.
#  3. A name no release we know has is skipped: one warning naming file:line and the name, the
#     rest served, nvml_exporter_collectors_skipped{name} on the page, exit 0; also on a reload.
#  4. --collectors-unknown-fields=fatal keeps dcgm-exporter's behaviour: exit 2.
source "$(dirname "$0")/lib.sh"
SCENARIO="$SOURCE_DIR/testdata/scenarios/gpm_rates.yaml"
NEW=(PCIE_TX PCIE_RX NVLINK_TX NVLINK_RX)

cat >"$WORK/twins.csv" <<'CSV'
DCGM_FI_PROF_PCIE_TX_BYTES_PER_SECOND,   gauge, PCIe TX (B/s).
DCGM_FI_PROF_PCIE_RX_BYTES_PER_SECOND,   gauge, PCIe RX (B/s).
DCGM_FI_PROF_NVLINK_TX_BYTES_PER_SECOND, gauge, NVLink TX (B/s).
DCGM_FI_PROF_NVLINK_RX_BYTES_PER_SECOND, gauge, NVLink RX (B/s).
DCGM_FI_PROF_PCIE_TX_BYTES,   gauge, PCIe TX (B/s).
DCGM_FI_PROF_PCIE_RX_BYTES,   gauge, PCIe RX (B/s).
DCGM_FI_PROF_NVLINK_TX_BYTES, gauge, NVLink TX (B/s).
DCGM_FI_PROF_NVLINK_RX_BYTES, gauge, NVLink RX (B/s).
CSV

# value PAGE NAME GPU: the value of NAME's series of GPU on the page (empty when none).
value() { sed -n "s/^$2{gpu=\"$3\",[^}]*} //p" "$1"; }
# twins_equal PAGE: each new name equals its twin on GPUs 0 and 1, and GPU 2 (no GPM) has neither.
twins_equal() {
  local page="$1" k g new old
  for k in "${NEW[@]}"; do
    for g in 0 1; do
      new=$(value "$page" "DCGM_FI_PROF_${k}_BYTES_PER_SECOND" "$g")
      old=$(value "$page" "DCGM_FI_PROF_${k}_BYTES" "$g")
      [ -n "$new" ] && [ -n "$old" ] || { cat "$page"; fail "$k gpu $g: a series is missing"; }
      [ "$new" = "$old" ] || fail "$k gpu $g: ${k}_BYTES_PER_SECOND $new != ${k}_BYTES $old"
      [ "$new" -gt 0 ] || fail "$k gpu $g: want a rate > 0, got $new"
    done
    [ -z "$(value "$page" "DCGM_FI_PROF_${k}_BYTES_PER_SECOND" 2)" ] || fail "$k: GPU 2 has no GPM"
  done
  grep -q "^# TYPE DCGM_FI_PROF_PCIE_TX_BYTES_PER_SECOND gauge$" "$page" || fail "TYPE line"
}

"$EXPORTER" --fake-gpus-scenario "$SCENARIO" -f "$WORK/twins.csv" --collectors-unknown-fields=fatal \
  --once >"$WORK/once.txt" 2>"$WORK/once.log" || { cat "$WORK/once.log"; fail "--once exited non-zero"; }
twins_equal "$WORK/once.txt"
# GPU 1's constants: 4.25 MiB/s = 4456448 B/s, NVLink RX 24 MiB/s = 25165824 B/s.
[ "$(value "$WORK/once.txt" DCGM_FI_PROF_PCIE_TX_BYTES_PER_SECOND 1)" = 4456448 ] || fail "PCIe TX gpu 1"
[ "$(value "$WORK/once.txt" DCGM_FI_PROF_NVLINK_RX_BYTES_PER_SECOND 1)" = 25165824 ] || fail "NVLink RX gpu 1"
grep -q 'unknown field' "$WORK/once.log" && fail "a 4.10 name was called unknown"

port=$(free_port)
start_exporter "$port" --fake-gpus-scenario "$SCENARIO" -f "$WORK/twins.csv" -c 300
# GPM's first rates need two samples a window apart: the first pages after /ready may have no
# PROF series yet (under ASan on a loaded machine they did not), so wait for them first.
for _ in $(seq 1 100); do
  [ "$(curl -fsS "http://127.0.0.1:$port/metrics" 2>/dev/null |
        grep -c '^DCGM_FI_PROF_[A-Z_]*_BYTES\(_PER_SECOND\)\?{gpu="[01]",')" = 16 ] && break
  sleep 0.1
done
pages=0 seen=""
for _ in $(seq 1 12); do
  curl -fsS "http://127.0.0.1:$port/metrics" >"$WORK/page.txt"
  twins_equal "$WORK/page.txt"
  seen="$seen $(value "$WORK/page.txt" DCGM_FI_PROF_PCIE_TX_BYTES_PER_SECOND 0)"
  pages=$((pages + 1))
  sleep 0.4
done
# The rate moved while the twins stayed equal: one reading serves both names.
[ "$(tr ' ' '\n' <<<"$seen" | sort -u | grep -c .)" -ge 3 ] || fail "PCIe TX did not move:$seen"
kill "${PIDS[-1]}"
pass "4.10 PROF_*_BYTES_PER_SECOND = their twins on $pages pages of GPM GPUs (PCIe TX:$seen)"

# 2. --dcgm-exporter-compat 4.10: its file (-f here: the image installs it under /etc/dcgm-exporter).
"$EXPORTER" --fake-gpus-scenario "$SCENARIO" --dcgm-exporter-compat 4.10 \
  -f "$SOURCE_DIR/etc/4.10/default-counters.csv" --collectors-unknown-fields=fatal --once \
  >"$WORK/410.txt" 2>"$WORK/410.log" || { cat "$WORK/410.log"; fail "4.10 file: exit"; }
for n in DCGM_FI_PROF_PCIE_TX_BYTES_PER_SECOND DCGM_FI_DEV_FB_CAPACITY_BYTES DCGM_FI_DEV_SM_CLOCK_HERTZ \
         DCGM_FI_DEV_GPU_UTIL_RATIO; do
  grep -q "^$n{gpu=\"0\"," "$WORK/410.txt" || fail "4.10 file: no $n"
done
grep -q '^DCGM_FI_PROF_PCIE_TX_BYTES{' "$WORK/410.txt" && fail "4.10 file: the old PCIe name"
grep -Eq '^DCGM_FI_DEV_GPU_TEMP_CELSIUS\{[^}]*,hostname="[^"]*",DCGM_FI_SYSTEM_DRIVER_VERSION="580\.159\.04"\} ' \
  "$WORK/410.txt" || { grep TEMP "$WORK/410.txt"; fail "4.10 file: labels"; }
grep -q 'DCGM_FI_DRIVER_VERSION=' "$WORK/410.txt" && fail "4.10 file: the 4.8 driver label"
if [ ! -e /etc/dcgm-exporter/4.10/default-counters.csv ]; then
  set +e
  "$EXPORTER" --fake-gpus --dcgm-exporter-compat 4.10 --once >/dev/null 2>"$WORK/410-default.err"
  set -e
  grep -q '/etc/dcgm-exporter/4.10/default-counters.csv' "$WORK/410-default.err" \
    || { cat "$WORK/410-default.err"; fail "4.10: default -f is not 4.10's file"; }
fi
pass "--dcgm-exporter-compat 4.10: its names, DCGM_FI_SYSTEM_DRIVER_VERSION, default -f"

# 3. A name from a later release: skipped, named once with file:line, the rest served.
cat >"$WORK/later.csv" <<'CSV'
# written by a release after 4.10
DCGM_FI_DEV_GPU_TEMP, gauge, GPU temperature (in C).
DCGM_FI_DEV_FROM_A_LATER_RELEASE, gauge, Something new.
DCGM_FI_PROF_PCIE_RX_BYTES_PER_SECOND, gauge, PCIe RX (B/s).
CSV
"$EXPORTER" --fake-gpus-scenario "$SCENARIO" -f "$WORK/later.csv" --once >"$WORK/later.txt" \
  2>"$WORK/later.log" || { cat "$WORK/later.log"; fail "unknown name: exit $?, want 0"; }
[ "$(grep -c 'DCGM_FI_DEV_FROM_A_LATER_RELEASE' "$WORK/later.log")" = 1 ] \
  || { cat "$WORK/later.log"; fail "unknown name: want exactly one warning"; }
grep -q "later.csv:3: unknown field \\\\\"DCGM_FI_DEV_FROM_A_LATER_RELEASE\\\\\"; skipping this row" \
  "$WORK/later.log" || { cat "$WORK/later.log"; fail "unknown name: warning without file:line"; }
grep -q '^DCGM_FI_DEV_GPU_TEMP{gpu="0",' "$WORK/later.txt" || fail "unknown name: the rest is not served"
grep -q '^DCGM_FI_PROF_PCIE_RX_BYTES_PER_SECOND{gpu="0",' "$WORK/later.txt" || fail "unknown name: 4.10 row"
grep -q '^nvml_exporter_collectors_skipped{name="DCGM_FI_DEV_FROM_A_LATER_RELEASE"} 1$' "$WORK/later.txt" \
  || { grep collectors_skipped "$WORK/later.txt"; fail "unknown name: no nvml_exporter_collectors_skipped"; }
grep -q '^DCGM_FI_DEV_FROM_A_LATER_RELEASE' "$WORK/later.txt" && fail "unknown name: a family for it"
pass "unknown name: skipped with one warning naming later.csv:3, listed, the rest served, exit 0"

# ... and on a reload: the list follows the file, nothing is rejected.
printf 'DCGM_FI_DEV_GPU_TEMP, gauge, t\n' >"$WORK/reload.csv"
port=$(free_port)
start_exporter "$port" --fake-gpus-scenario "$SCENARIO" -f "$WORK/reload.csv" -c 200
printf 'DCGM_FI_DEV_GPU_TEMP, gauge, t\nDCGM_FI_DEV_GPU_UTIL, gauge, u\nDCGM_FI_X_NEWER, gauge, x\n' \
  >"$WORK/reload.csv.new"
mv "$WORK/reload.csv.new" "$WORK/reload.csv"
kill -HUP "${PIDS[-1]}"
await_page "http://127.0.0.1:$port/metrics" '^nvml_exporter_collectors_skipped\{name="DCGM_FI_X_NEWER"\} 1$' 10 \
  || fail "reload: the skipped name is not listed"
curl -fsS "http://127.0.0.1:$port/metrics" >"$WORK/m.txt"
grep -q '^DCGM_FI_DEV_GPU_UTIL{gpu="0",' "$WORK/m.txt" || fail "reload: the new known row is not served"
grep -q '^nvml_exporter_config_reload_failures_total 0$' "$WORK/m.txt" || fail "reload: counted as a failure"
[ "$(grep -c 'unknown field "DCGM_FI_X_NEWER"\|unknown field \\"DCGM_FI_X_NEWER\\"' "$WORK/exporter.log")" = 1 ] \
  || { cat "$WORK/exporter.log"; fail "reload: want one warning for the skipped name"; }
printf 'DCGM_FI_DEV_GPU_TEMP, gauge, t\n' >"$WORK/reload.csv.new"
mv "$WORK/reload.csv.new" "$WORK/reload.csv"
kill -HUP "${PIDS[-1]}"
for _ in $(seq 1 50); do
  curl -fsS "http://127.0.0.1:$port/metrics" >"$WORK/m.txt"
  grep -q collectors_skipped "$WORK/m.txt" || break
  sleep 0.2
done
grep -q collectors_skipped "$WORK/m.txt" && fail "reload: the list did not empty"
kill "${PIDS[-1]}"
pass "reload: an unknown name is skipped and listed, and the list follows the file"

# 4. --collectors-unknown-fields=fatal (and its env var): dcgm-exporter's exit 2.
for how in flag env; do
  set +e
  if [ "$how" = flag ]; then
    "$EXPORTER" --fake-gpus -f "$WORK/later.csv" --collectors-unknown-fields=fatal --once \
      >/dev/null 2>"$WORK/fatal.err"
  else
    NVML_EXPORTER_COLLECTORS_UNKNOWN_FIELDS=fatal "$EXPORTER" --fake-gpus -f "$WORK/later.csv" \
      --once >/dev/null 2>"$WORK/fatal.err"
  fi
  rc=$?
  set -e
  [ "$rc" = 2 ] || { cat "$WORK/fatal.err"; fail "fatal ($how): exit $rc, want 2"; }
  grep -q 'later.csv:3: unknown field "DCGM_FI_DEV_FROM_A_LATER_RELEASE"' "$WORK/fatal.err" \
    || { cat "$WORK/fatal.err"; fail "fatal ($how): message"; }
done
pass "--collectors-unknown-fields=fatal: exit 2 naming later.csv:3"
echo "collectors_unknown_test: all passed"

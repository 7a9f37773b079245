#!/usr/bin/env bash
# DCGM_FI_PROF_* through PM sampling, end to end with the real daemon on simulated GPUs whose
# scenario has `pm_sampling` keys (testdata/scenarios/pm_sampling.yaml): under --fake-gpus the
# daemon loads the simulated libcupti.so.13 beside the simulated NVML through the same dlopen
# path as the real one. Checks: --once serves the pre-Hopper GPUs through PM sampling and the
# H200 through GPM, in the catalog's units; --profiling-source=none drops them; a bad value
# exits 2; a missing --cupti-library warns once and serves GPM only; a running daemon reports a
# busy GPU's loss, recovers it, and SIGUSR1 / SIGUSR2 pause and resume sampling, as does
# POST /api/v1/profiling/pause and /resume with --profiling-pause-endpoint; configurations
# alternate when a field needs its own (tensor), with coverage series, and --pm-sampling-pin.
source "$(dirname "$0")/lib.sh"
SCN="$SOURCE_DIR/testdata/scenarios/pm_sampling.yaml"
printf 'DCGM_FI_DEV_GPU_UTIL, gauge, u\nDCGM_FI_PROF_GR_ENGINE_ACTIVE, gauge, gr\nDCGM_FI_PROF_PCIE_TX_BYTES, gauge, tx\n' \
  >"$WORK/prof.csv"
value() {  # value FILE SERIES GPU
  sed -n "s/^$2{gpu=\"$3\",[^}]*} //p" "$1"
}

out="$WORK/once.txt"
"$EXPORTER" --fake-gpus-scenario "$SCN" -f "$WORK/prof.csv" --once --profiling-source=auto >"$out" 2>"$WORK/once.log"
[ "$(value "$out" DCGM_FI_PROF_GR_ENGINE_ACTIVE 0)" = 0.400000 ] ||
  fail "GPU 0 (A10G, PM sampling, 40 %) should read 0.400000: $(grep PROF_GR "$out" || true)"
[ "$(value "$out" DCGM_FI_PROF_PCIE_TX_BYTES 0)" = 2097152 ] || fail "GPU 0 PCIe TX: want 2 MiB/s"
[ "$(value "$out" DCGM_FI_PROF_GR_ENGINE_ACTIVE 1)" = 0.700000 ] || fail "GPU 1 (H200) via GPM"
grep -q 'nvml_exporter_pm_sampling_active{gpu="0"' "$out" || fail "no pm_sampling_active for GPU 0"
grep -q 'nvml_exporter_pm_sampling_active{gpu="1"' "$out" && fail "GPU 1 is GPM's, not PM's"
[ "$(value "$out" nvml_exporter_pm_sampling_losses_total 2)" = 1 ] ||
  fail "GPU 2 (busy at start) should count one loss"
grep -q 'CUPTI loaded for PM sampling' "$WORK/once.log" || fail "no 'CUPTI loaded' line"
pass "--once: PM sampling on pre-Hopper GPUs, GPM on the H200, busy GPU counted"

"$EXPORTER" --fake-gpus-scenario "$SCN" -f "$WORK/prof.csv" --once --profiling-source=none \
  >"$WORK/none.txt" 2>/dev/null
grep -q '^DCGM_FI_PROF_' "$WORK/none.txt" && fail "--profiling-source=none still has PROF series"
grep -q '^DCGM_FI_DEV_GPU_UTIL' "$WORK/none.txt" || fail "--profiling-source=none lost GPU_UTIL"
set +e
"$EXPORTER" --fake-gpus-scenario "$SCN" -f "$WORK/prof.csv" --once --profiling-source=dcgm \
  >/dev/null 2>"$WORK/bad.log"
rc=$?
set -e
[ "$rc" = 2 ] || fail "--profiling-source=dcgm: want exit 2, got $rc"
grep -q 'not a profiling source' "$WORK/bad.log" || fail "bad value message: $(cat "$WORK/bad.log")"
pass "--profiling-source none and a bad value"

# The default is auto: GPM where the GPU has it, PM sampling elsewhere; --profiling-source=gpm
# keeps the GPU without GPM free of PROF series, and CUPTI is then not even loaded.
"$EXPORTER" --fake-gpus-scenario "$SCN" -f "$WORK/prof.csv" --once >"$WORK/default.txt" \
  2>"$WORK/default.log"
[ "$(value "$WORK/default.txt" DCGM_FI_PROF_GR_ENGINE_ACTIVE 0)" = 0.400000 ] ||
  fail "default source did not serve PM sampling on GPU 0: $(grep PROF_GR "$WORK/default.txt" || true)"
[ "$(value "$WORK/default.txt" DCGM_FI_PROF_GR_ENGINE_ACTIVE 1)" = 0.700000 ] || fail "default lost GPM"
"$EXPORTER" --fake-gpus-scenario "$SCN" -f "$WORK/prof.csv" --once --profiling-source=gpm \
  >"$WORK/gpm.txt" 2>"$WORK/gpm.log"
[ -z "$(value "$WORK/gpm.txt" DCGM_FI_PROF_GR_ENGINE_ACTIVE 0)" ] ||
  fail "--profiling-source=gpm served PM sampling on GPU 0"
[ "$(value "$WORK/gpm.txt" DCGM_FI_PROF_GR_ENGINE_ACTIVE 1)" = 0.700000 ] || fail "gpm lost GPM"
grep -q 'CUPTI' "$WORK/gpm.log" && fail "--profiling-source=gpm loaded CUPTI: $(grep CUPTI "$WORK/gpm.log")"
pass "default (auto) serves PM sampling where GPM is absent; gpm: CUPTI not loaded"

"$EXPORTER" --fake-gpus-scenario "$SCN" -f "$WORK/prof.csv" --once --profiling-source=auto \
  --cupti-library /nonexistent/libcupti.so.13 >"$WORK/nolib.txt" 2>"$WORK/nolib.log"
[ "$(grep -c 'CUPTI not loaded' "$WORK/nolib.log")" = 1 ] || fail "want one 'CUPTI not loaded'"
[ -z "$(value "$WORK/nolib.txt" DCGM_FI_PROF_GR_ENGINE_ACTIVE 0)" ] || fail "GPU 0 without CUPTI"
[ "$(value "$WORK/nolib.txt" DCGM_FI_PROF_GR_ENGINE_ACTIVE 1)" = 0.700000 ] || fail "GPM lost"
grep -q '^DCGM_FI_DEV_GPU_UTIL{gpu="0"' "$WORK/nolib.txt" || fail "other fields lost"
pass "absent CUPTI: one warning, GPM and every other field as before"

port=$(free_port)
start_exporter "$port" --fake-gpus-scenario "$SCN" -f "$WORK/prof.csv" -c 500 --profiling-source=auto
pid=${PIDS[-1]}
page="$WORK/page.txt"
scrape() { curl -fsS "http://127.0.0.1:$port/metrics" >"$page"; }
await() {  # await DESCRIPTION SERIES GPU WANT: polls the page for up to 10 s
  for _ in $(seq 50); do
    scrape
    [ "$(value "$page" "$2" "$3")" = "$4" ] && return 0
    sleep 0.2
  done
  fail "timed out: $1 ($2 of GPU $3 is '$(value "$page" "$2" "$3")', want '$4')"
}
await "GPU 2 recovers after busy_until_s" DCGM_FI_PROF_GR_ENGINE_ACTIVE 2 0.400000
[ "$(value "$page" nvml_exporter_pm_sampling_active 2)" = 1 ] || fail "GPU 2 active after recovery"
kill -USR1 "$pid"
await "paused" nvml_exporter_pm_sampling_active 0 0
[ -z "$(value "$page" DCGM_FI_PROF_GR_ENGINE_ACTIVE 0)" ] || fail "paused GPU 0 still has PROF"
[ "$(value "$page" DCGM_FI_PROF_GR_ENGINE_ACTIVE 1)" = 0.700000 ] || fail "GPM paused too"
[ -n "$(value "$page" DCGM_FI_DEV_GPU_UTIL 0)" ] || fail "pause dropped GPU_UTIL"
kill -USR2 "$pid"
await "resumed" DCGM_FI_PROF_GR_ENGINE_ACTIVE 0 0.400000
[ "$(value "$page" nvml_exporter_pm_sampling_losses_total 0)" = 0 ] || fail "a pause is no loss"
[ "$(grep -c 'PM sampling paused' "$WORK/exporter.log")" -ge 1 ] || fail "pause not logged"
kill -0 "$pid" || fail "daemon died"
pass "daemon: busy GPU recovers; SIGUSR1 pauses and SIGUSR2 resumes PM sampling only"

# The HTTP form: off by default (404), on with --profiling-pause-endpoint.
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$port/api/v1/profiling/pause")
[ "$code" = 404 ] || fail "pause endpoint off by default: want 404, got $code"
curl -fsS "http://127.0.0.1:$port/api/v1/profiling" | grep -q '"pause_endpoint":false' ||
  fail "GET /api/v1/profiling should say the endpoint is off"
port=$(free_port)
start_exporter "$port" --fake-gpus-scenario "$SCN" -f "$WORK/prof.csv" -c 500 \
  --profiling-source=auto --profiling-pause-endpoint
await "second daemon serves PM sampling" DCGM_FI_PROF_GR_ENGINE_ACTIVE 0 0.400000
grep -q 'anyone who reaches the port can pause profiling' "$WORK/exporter.log" ||
  fail "no warning for the endpoint without a web config"
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/api/v1/profiling/pause")
[ "$code" = 405 ] || fail "GET of the pause endpoint: want 405, got $code"
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Origin: https://elsewhere.example' \
  "http://127.0.0.1:$port/api/v1/profiling/pause")
[ "$code" = 403 ] || fail "cross-origin POST: want 403, got $code"
scrape
[ "$(value "$page" nvml_exporter_pm_sampling_active 0)" = 1 ] || fail "the refused POST paused"
curl -fsS -X POST "http://127.0.0.1:$port/api/v1/profiling/pause" | grep -q '"paused":true' ||
  fail "POST pause did not answer paused"
await "paused over HTTP" nvml_exporter_pm_sampling_active 0 0
curl -fsS "http://127.0.0.1:$port/api/v1/profiling" | grep -q '"paused":true' ||
  fail "GET /api/v1/profiling should say paused"
[ "$(value "$page" DCGM_FI_PROF_GR_ENGINE_ACTIVE 1)" = 0.700000 ] || fail "GPM paused over HTTP"
curl -fsS -X POST "http://127.0.0.1:$port/api/v1/profiling/resume" | grep -q '"paused":false' ||
  fail "POST resume did not answer"
await "resumed over HTTP" DCGM_FI_PROF_GR_ENGINE_ACTIVE 0 0.400000
pass "--profiling-pause-endpoint: POST pause/resume, GET state, cross-origin and GET refused"

# Alternating configurations: GR engine shares a pass, the tensor pipe is measured alone; both
# are served, with the configuration count and a coverage per field. Pinning GR keeps it in every
# configuration, which leaves no room for the tensor counter. --pm-sampling-dwell 0: switch after
# three sampling intervals (the default's 10 s would outlast the test's awaits).
# --pm-sampling-steady-hold 0: GPU 0's load is constant, so the default 60 s steady hold would
# measure tensor once and then hold it, and the coverage check below wants it measured in turn.
printf 'DCGM_FI_PROF_GR_ENGINE_ACTIVE, gauge, gr\nDCGM_FI_PROF_PIPE_TENSOR_ACTIVE, gauge, t\n' \
  >"$WORK/alt.csv"
port=$(free_port)
start_exporter "$port" --fake-gpus-scenario "$SCN" -f "$WORK/alt.csv" -c 300 \
  --pm-sampling-interval 50 --pm-sampling-dwell 0 --pm-sampling-steady-hold 0
await "tensor through its own configuration" DCGM_FI_PROF_PIPE_TENSOR_ACTIVE 0 0.250000
await "GR beside it" DCGM_FI_PROF_GR_ENGINE_ACTIVE 0 0.400000
[ "$(value "$page" nvml_exporter_pm_sampling_configurations 0)" = 2 ] ||
  fail "want 2 configurations on GPU 0: $(grep configurations "$page" || true)"
cov() { sed -n "s/^nvml_exporter_pm_sampling_coverage_ratio{gpu=\"0\",[^}]*field=\"$1\"} //p" "$page"; }
[ -n "$(cov DCGM_FI_PROF_GR_ENGINE_ACTIVE)" ] && [ -n "$(cov DCGM_FI_PROF_PIPE_TENSOR_ACTIVE)" ] ||
  fail "no coverage series: $(grep coverage "$page" || true)"
measured=0
for _ in $(seq 20); do
  scrape
  python3 -c "import sys; sys.exit(0 if 0 < float('$(cov DCGM_FI_PROF_PIPE_TENSOR_ACTIVE)') <= 1 else 1)" &&
    measured=$((measured + 1))
  sleep 0.15
done
[ "$measured" -ge 3 ] || fail "tensor's coverage was above 0 in only $measured of 20 scrapes"
grep -q 'configurations=2 layout="GR_ENGINE_ACTIVE | PIPE_TENSOR_ACTIVE"' "$WORK/exporter.log" ||
  fail "no layout line: $(grep 'PM sampling' "$WORK/exporter.log" | head -3)"
"$EXPORTER" --fake-gpus-scenario "$SCN" -f "$WORK/alt.csv" --once \
  --pm-sampling-pin DCGM_FI_PROF_GR_ENGINE_ACTIVE >"$WORK/pinned.txt" 2>"$WORK/pinned.log"
[ "$(value "$WORK/pinned.txt" nvml_exporter_pm_sampling_configurations 0)" = 1 ] ||
  fail "pinned GR: want one configuration"
[ -z "$(value "$WORK/pinned.txt" DCGM_FI_PROF_PIPE_TENSOR_ACTIVE 0)" ] || fail "pinned GR served tensor"
grep -q 'pinned fields are in every configuration' "$WORK/pinned.log" || fail "no reason for tensor"
set +e
"$EXPORTER" --fake-gpus-scenario "$SCN" -f "$WORK/alt.csv" --once \
  --pm-sampling-pin DCGM_FI_DEV_GPU_TEMP >/dev/null 2>"$WORK/badpin.log"
rc=$?
set -e
[ "$rc" = 2 ] || fail "--pm-sampling-pin of a non-PM field: want exit 2, got $rc"
grep -q 'is not measured by PM sampling' "$WORK/badpin.log" || fail "bad pin: $(tail -1 "$WORK/badpin.log")"
pass "alternating configurations: tensor alone, coverage per field, --pm-sampling-pin"
echo "pm_sampling_test: all passed"

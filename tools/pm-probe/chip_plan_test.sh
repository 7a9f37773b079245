#!/usr/bin/env bash
# pm-probe --chip (chip_plan.h) against the simulated CUPTI, with no GPU and no
# cuptiProfilerInitialize: the host API's view of testdata/scenarios/pm_sampling.yaml's chips.
# GA102 there takes 7 metrics per pass: the exporter's 8 PM fields keep 7, SM active (last in
# the pass order) is left out; TU102 takes 3 and has no NVLink metrics: GR, DRAM, PCIe TX kept.
# Metrics given by hand replace the exporter's; a chip that knows none of them exits 1.
set -euo pipefail
probe="$1"; cupti="$2"; src="$3"
export NVMLX_SIMGPU_SCENARIO="$src/testdata/scenarios/pm_sampling.yaml"
fail() { echo "FAIL: $*" >&2; exit 1; }
out=$("$probe" --cupti "$cupti" --chip GA102)
grep -q '^### GA102' <<<"$out" || fail "no heading: $out"
grep -q '7 of 8 kept in one pass' <<<"$out" || fail "GA102: want 7 of 8 kept: $out"
grep -q '| DCGM_FI_PROF_SM_ACTIVE | .* | 1 pass | left out: 2 passes with it |' <<<"$out" ||
  fail "GA102: SM active should be the one left out: $out"
grep -q 'every known metric together: 2 passes' <<<"$out" || fail "GA102 total: $out"
out=$("$probe" --cupti "$cupti" --chip TU102)
grep -q '3 of 8 kept in one pass' <<<"$out" || fail "TU102: want 3 of 8 kept: $out"
grep -q '| DCGM_FI_PROF_NVLINK_TX_BYTES | .* | unknown to the chip |' <<<"$out" ||
  fail "TU102: NVLink should be unknown: $out"
out=$("$probe" --cupti "$cupti" --chip GA102 gr__cycles_active.avg.pct_of_peak_sustained_elapsed \
  sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed)
grep -q '2 of 2 kept in one pass' <<<"$out" || fail "GA102 by hand: $out"
grep -q '^| - | `sm__pipe_tensor' <<<"$out" || fail "a metric by hand has no field: $out"
if "$probe" --cupti "$cupti" --chip GA102 no__such_metric.sum >/dev/null 2>&1; then
  fail "a chip knowing none of the metrics should exit 1"
fi
echo "chip_plan_test: all passed"

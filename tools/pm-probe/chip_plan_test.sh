#!/usr/bin/env bash
# pm-probe --chip (chip_plan.h) against the simulated CUPTI, with no GPU and no
# cuptiProfilerInitialize: the host API's view of testdata/scenarios/pm_sampling.yaml's chips,
# and the exporter's plan of configurations (fields/pm_plan.h). GA102 there takes 7 metrics per
# pass: of the 8 shared fields 7 share configuration 1, SM active (last in the order) gets
# configuration 2, and tensor, FP32, FP64 one each; TU102 takes 3 and has no NVLink metrics.
# Metrics given by hand are planned like shared ones; a chip that knows none of them exits 1.
set -euo pipefail
probe="$1"; cupti="$2"; src="$3"
export NVMLX_SIMGPU_SCENARIO="$src/testdata/scenarios/pm_sampling.yaml"
fail() { echo "FAIL: $*" >&2; exit 1; }
out=$("$probe" --cupti "$cupti" --chip GA102)
grep -q '^### GA102' <<<"$out" || fail "no heading: $out"
grep -q '11 of 11 served in 5 configurations (1: 7 metrics; 2: 1 metric; 3: 1 metric; 4: 1 metric; 5: 1 metric)' <<<"$out" ||
  fail "GA102: want 11 fields in 5 configurations: $out"
grep -q '| DCGM_FI_PROF_SM_ACTIVE | .* | 1 pass | configuration 2 |' <<<"$out" ||
  fail "GA102: SM active should move to configuration 2: $out"
grep -q '| DCGM_FI_PROF_PIPE_TENSOR_ACTIVE | .* | 1 pass | configuration 3 |' <<<"$out" ||
  fail "GA102: tensor alone in configuration 3: $out"
grep -q 'every known metric together: 2 passes' <<<"$out" || fail "GA102 total: $out"
out=$("$probe" --cupti "$cupti" --chip TU102)
grep -q '9 of 11 served in 5 configurations' <<<"$out" || fail "TU102: want 9 of 11: $out"
grep -q '| DCGM_FI_PROF_NVLINK_TX_BYTES | .* | not served: not available on TU102' <<<"$out" ||
  fail "TU102: NVLink should be unknown: $out"
out=$("$probe" --cupti "$cupti" --chip GA102 gr__cycles_active.avg.pct_of_peak_sustained_elapsed \
  sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed)
grep -q '2 of 2 served in 1 configuration (1: 2 metrics)' <<<"$out" || fail "GA102 by hand: $out"
grep -q '^| - | `sm__pipe_tensor' <<<"$out" || fail "a metric by hand has no field: $out"
if "$probe" --cupti "$cupti" --chip GA102 no__such_metric.sum >/dev/null 2>&1; then
  fail "a chip knowing none of the metrics should exit 1"
fi
echo "chip_plan_test: all passed"

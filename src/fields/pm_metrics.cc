#include "fields/pm_metrics.h"

#include <array>

namespace nvmlx::fields {
namespace {

constexpr double kPercent = 1.0;                     // pct_of_peak -> GPM percent
constexpr double kBytesToMib = 1.0 / (1024 * 1024);  // B/s -> GPM MiB/s

// Tensor (1004), FP64 (1006) and FP32 (1007) are not here. On the H200 (GH100, driver 580,
// CUPTI 13.0) a configuration holding the tensor-pipe cycle counter (sm__pipe_tensor_cycles_active)
// beside GR engine activity stopped completing samples within seconds of a tensor load and
// delivered none after it until the session was re-enabled, with or without SM activity in the
// same pass (docs/validation/h200-pm-sampling.md run 6; h200-pm-sampling/onepass-2026-12-04.md).
// The FP64/FP32 pipe counters are of the same kind and each needs a second pass on these chips.
// SM active (1002) is here, last: beside every field above it completed every sample through
// idle, tensor, fp32, fp64, memory, PCIe and interleaved loads on the H200 for two minutes and
// agreed with GPM (onepass-2026-12-04.md); last, because the reader keeps fields in this order
// while they fit one pass: where SM active does not fit beside the others, it is the one left
// out, and no chip loses a field it served before.
constexpr std::array<PmFieldMetric, 8> kMetrics = {{
    {1001, "gr__cycles_active.avg.pct_of_peak_sustained_elapsed", kPercent},
    {1005, "dram__cycles_active.avg.pct_of_peak_sustained_elapsed", kPercent},
    // TX: data the GPU sends, i.e. its writes to host memory; RX: the data of its reads.
    {1009, "pcie__write_bytes.sum.per_second", kBytesToMib},
    {1010, "pcie__read_bytes.sum.per_second", kBytesToMib},
    {1003, "sm__warps_active.avg.pct_of_peak_sustained_elapsed", kPercent},
    {1011, "nvltx__bytes.sum.per_second", kBytesToMib},
    {1012, "nvlrx__bytes.sum.per_second", kBytesToMib},
    {1002, "sm__cycles_active.avg.pct_of_peak_sustained_elapsed", kPercent},
}};

}  // namespace

std::span<const PmFieldMetric> PmFieldMetrics() { return kMetrics; }

const PmFieldMetric* PmMetricFor(int field_id) {
  for (const PmFieldMetric& m : kMetrics) {
    if (m.field_id == field_id) return &m;
  }
  return nullptr;
}

std::string_view PmUnmappedReason(int field_id) {
  if (PmMetricFor(field_id) != nullptr) return {};
  switch (field_id) {
    case 1004:
    case 1006:
    case 1007:
      return "a tensor-pipe cycle counter in the pass stops PM sampling's samples under load "
             "(seen on the H200, driver 580, CUPTI 13.0); the FP64/FP32 pipe counters are of its "
             "kind";
    case 1008:
      return "PM sampling has no FP16-pipe cycle counter (only instruction counts)";
    case 1013:
    case 1014:
    case 1015:
      return "PM sampling has no per-type tensor-pipe (IMMA/HMMA/DMMA) cycle metric on these chips";
    case 1016:
      return "PM sampling's ALU pipe is not GPM's integer pipe";
    default:
      return "no PM-sampling metric for this field (engine and per-link fields are GPM only)";
  }
}

}  // namespace nvmlx::fields

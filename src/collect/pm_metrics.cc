#include "collect/pm_metrics.h"

#include <array>

namespace nvmlx::collect {
namespace {

constexpr double kPercent = 1.0;                     // pct_of_peak -> GPM percent
constexpr double kBytesToMib = 1.0 / (1024 * 1024);  // B/s -> GPM MiB/s

constexpr std::array<PmFieldMetric, 11> kMetrics = {{
    {1001, "gr__cycles_active.avg.pct_of_peak_sustained_elapsed", kPercent},
    {1004, "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed", kPercent},
    {1005, "dram__cycles_active.avg.pct_of_peak_sustained_elapsed", kPercent},
    // TX: data the GPU sends, i.e. its writes to host memory; RX: the data of its reads.
    {1009, "pcie__write_bytes.sum.per_second", kBytesToMib},
    {1010, "pcie__read_bytes.sum.per_second", kBytesToMib},
    {1002, "sm__cycles_active.avg.pct_of_peak_sustained_elapsed", kPercent},
    {1003, "sm__warps_active.avg.pct_of_peak_sustained_elapsed", kPercent},
    {1011, "nvltx__bytes.sum.per_second", kBytesToMib},
    {1012, "nvlrx__bytes.sum.per_second", kBytesToMib},
    {1006, "sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_elapsed", kPercent},
    {1007, "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_elapsed", kPercent},
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

}  // namespace nvmlx::collect

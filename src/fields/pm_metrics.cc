#include "fields/pm_metrics.h"

#include <algorithm>
#include <array>
#include <charconv>

#include "fields/catalog.h"

namespace nvmlx::fields {
namespace {

constexpr double kPercent = 1.0;                     // pct_of_peak -> GPM percent
constexpr double kBytesToMib = 1.0 / (1024 * 1024);  // B/s -> GPM MiB/s

// SM active (1002) shares the pass, last: beside every field above it completed every sample
// through idle, tensor, fp32, fp64, memory, PCIe and interleaved loads on the H200 for two minutes
// and agreed with GPM (docs/validation/h200-pm-sampling/onepass-2026-12-04.md); last, because
// fields keep their place in this order while they fit one pass: where SM active does not fit
// beside the others it moves to a second configuration, and no field served before loses its
// place.
//
// Tensor (1004), FP32 (1007) and FP64 (1006) are measured each in a configuration of its own
// (fields/pm_plan.h), alternated with the shared one. On the H200 (GH100, driver 580, CUPTI 13.0)
// a configuration holding the tensor-pipe cycle counter beside GR engine activity and the served
// fields, or beside SM activity, stopped completing samples within seconds of a tensor load and
// delivered none after it until the session was re-enabled (docs/validation/h200-pm-sampling.md
// run 6; h200-pm-sampling/onepass-2026-12-04.md); the FP32/FP64 pipe counters are of its kind. The
// FMA pipe is what GPM's FP32 utilisation counts (fused multiply-add, the FP32 work of a kernel).
// The pipes are bounded by SM activity and GR engine activity (PmFieldMetric::bounded_by).
constexpr std::array<int, 2> kPipeBounds = {1002, 1001};
constexpr std::array<PmFieldMetric, 11> kMetrics = {{
    {1001, "gr__cycles_active.avg.pct_of_peak_sustained_elapsed", kPercent},
    {1005, "dram__cycles_active.avg.pct_of_peak_sustained_elapsed", kPercent},
    // TX: data the GPU sends, i.e. its writes to host memory; RX: the data of its reads.
    {1009, "pcie__write_bytes.sum.per_second", kBytesToMib},
    {1010, "pcie__read_bytes.sum.per_second", kBytesToMib},
    {1003, "sm__warps_active.avg.pct_of_peak_sustained_elapsed", kPercent},
    {1011, "nvltx__bytes.sum.per_second", kBytesToMib},
    {1012, "nvlrx__bytes.sum.per_second", kBytesToMib},
    {1002, "sm__cycles_active.avg.pct_of_peak_sustained_elapsed", kPercent},
    {1004,
     "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed",
     kPercent,
     true,
     {},
     kPipeBounds},
    // Alone, under gpu-pulse's fp32 load, GH100's sampler completed no sample for 3 s, twice in
    // 25 s, and again whenever it was restarted until the load stopped (an H100, driver 580,
    // CUPTI 13: docs/validation/h200-pm-sampling.md run 9); under every other load it ran. GPM
    // serves the field on Hopper.
    {1007, "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_elapsed", kPercent, true, "GH100",
     kPipeBounds},
    {1006,
     "sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_elapsed",
     kPercent,
     true,
     {},
     kPipeBounds},
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

std::string PmKnownStall(const PmFieldMetric& m, std::string_view chip) {
  std::string_view list = m.stalls_alone_on;
  while (!list.empty()) {
    const size_t comma = list.find(',');
    if (list.substr(0, comma) == chip) {
      return "stops " + std::string(chip) +
             "'s PM sampler under its own load even configured alone (measured on real "
             "hardware; docs/pm-sampling.md §3)";
    }
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
  }
  return {};
}

Result<std::vector<int>> ResolvePmPins(const std::vector<std::string>& values) {
  std::vector<int> out;
  for (const std::string& v : values) {
    const FieldDef* f = FindByName(v);
    int id = 0;
    if (f == nullptr) {
      const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), id);
      if (ec == std::errc() && end == v.data() + v.size()) f = FindById(id);
    }
    if (f == nullptr) {
      return InvalidArgument("\"" + v + "\" is not a DCGM field name or id");
    }
    if (PmMetricFor(f->id) == nullptr) {
      return InvalidArgument("\"" + v +
                             "\" is not measured by PM sampling (expected one of "
                             "the DCGM_FI_PROF_* fields in docs/pm-sampling.md §3)");
    }
    if (std::find(out.begin(), out.end(), f->id) == out.end()) out.push_back(f->id);
  }
  return out;
}

}  // namespace nvmlx::fields

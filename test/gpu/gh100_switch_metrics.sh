# Sourced by the PM-sampling switch probes (perf_round_probe.sh, perf_round2_probe.sh): the
# shipped GH100 plan's two configurations as CUPTI metric names (docs/pm-sampling.md §3):
# SHARED, the one-pass configuration (GR engine, DRAM, PCIe write/read, SM occupancy, SM active),
# and TENSOR, the tensor pipe configured alone.
SHARED=(gr__cycles_active.avg.pct_of_peak_sustained_elapsed
  dram__cycles_active.avg.pct_of_peak_sustained_elapsed
  pcie__write_bytes.sum.per_second pcie__read_bytes.sum.per_second
  sm__warps_active.avg.pct_of_peak_sustained_elapsed
  sm__cycles_active.avg.pct_of_peak_sustained_elapsed)
TENSOR=sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed

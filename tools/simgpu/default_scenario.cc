// The built-in scenario, used when NVMLX_SIMGPU_SCENARIO is unset (SCENARIO.md, last section).
// Kept as YAML so that it goes through the same parser and validation as any scenario file.
#include "scenario.h"

namespace nvmlx::simgpu {

const char* const kDefaultScenarioYaml = R"yaml(
driver_version: "580.159.04"
nvml_version: "13.580.159.04"
cuda_driver_version: 13000
gpus:
  # GPU 0: gpu-pulse's duty cycle, 20 s busy / 20 s idle (GPM: the measured bf16 matmul).
  - name: "NVIDIA H200"
    gpm: true
    values:
      gpm_graphics_util: {square: {high: 99.9, low: 0, on_s: 20, off_s: 20}}
      gpm_sm_util: {square: {high: 96.5, low: 0, on_s: 20, off_s: 20}}
      gpm_sm_occupancy: {square: {high: 14.3, low: 0, on_s: 20, off_s: 20}}
      gpm_any_tensor_util: {square: {high: 93.7, low: 0, on_s: 20, off_s: 20}}
      gpm_hmma_tensor_util: {square: {high: 93.7, low: 0, on_s: 20, off_s: 20}}
      gpm_dram_bw_util: {square: {high: 17.3, low: 0, on_s: 20, off_s: 20}}
      gpm_pcie_tx_mibs: 2.5
      gpm_pcie_rx_mibs: 3
      gpu_util: {square: {high: 100, low: 0, on_s: 20, off_s: 20}}
      mem_util: {square: {high: 35, low: 0, on_s: 20, off_s: 20}}
      power_w: {square: {high: 690, low: 80, on_s: 20, off_s: 20}}
      sm_clock: {square: {high: 1980, low: 345, on_s: 20, off_s: 20}}
      graphics_clock: {square: {high: 1980, low: 345, on_s: 20, off_s: 20}}
      gpu_temp: {square: {high: 62, low: 38, on_s: 20, off_s: 20}}
      fb_used_mib: {square: {high: 80000, low: 0, on_s: 20, off_s: 20}}
  # GPU 1: utilisation ramps 0 -> 100 % every minute.
  - name: "NVIDIA H200"
    gpm: true
    values:
      gpu_util: {ramp: {from: 0, to: 100, over_s: 60}}
      gpm_graphics_util: {ramp: {from: 0, to: 100, over_s: 60}}
faults:
  # The H200 is passively cooled: the real driver answers NOT_SUPPORTED.
  - {gpu: "*", call: nvmlDeviceGetFanSpeed, error: NOT_SUPPORTED}
)yaml";

}  // namespace nvmlx::simgpu

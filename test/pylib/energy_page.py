"""Reading energy per pod off a /metrics page (the pod energy integration tests)."""
import re


def read_energy_page(path):
    """(energy, power, series) of a saved page: each GPU's DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION in
    J and DCGM_FI_DEV_POWER_USAGE in W by gpu index, and every
    nvml_exporter_pod_gpu_energy_joules_total series (its whole name and labels) -> (gpu, J)."""
    energy, power, series = {}, {}, {}
    for line in open(path):
        m = re.match(r'DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION\{gpu="(\d+)",.*\} (\S+)$', line)
        if m:
            energy[m.group(1)] = float(m.group(2)) / 1000
        m = re.match(r'DCGM_FI_DEV_POWER_USAGE\{gpu="(\d+)",.*\} (\S+)$', line)
        if m:
            power[m.group(1)] = float(m.group(2))
        m = re.match(r'(nvml_exporter_pod_gpu_energy_joules_total\{gpu="(\d+)",.*\}) (\S+)$', line)
        if m:
            series[m.group(1)] = (m.group(2), float(m.group(3)))
    return energy, power, series

#!/usr/bin/env python3
"""Writes deploy/prometheus/rename-rules.yml: recording rules that publish every renamed DCGM
metric under its other generation's name and unit, both ways.

DCGM 4.6 renamed most fields (the old names stay as aliases of the same field id, so the value
and unit do not change), and DCGM 4.6.1 added base-unit fields under new ids (hertz, bytes,
joules, ratios) next to the old MHz / MiB / mJ / % ones. dcgm-exporter names a metric after the
field as written in its collectors CSV, so a fleet whose exporters run different CSVs or
releases serves the same measurement under two names. With these rules loaded, dashboards and
alerts written for either name see every GPU.

Each rule publishes NEW from OLD (and another OLD from NEW):
  - only for a GPU (or MIG instance) that does not export the target name itself: the guard is
    `unless on(UUID, GPU_I_ID) TARGET{renamed_from=""}`, so no series is duplicated;
  - with every label of the source series, plus renamed_from="<source name>", which marks the
    recorded series: the guard counts native series only (`{renamed_from=""}`), or a recorded
    series would suppress itself at the next evaluation. A recorded series is never renamed
    back: its GPU exports the source name natively, which the guard of the way back sees.

Sources of the rename list (names and units only): docs/upstream/generations.md.
Usage: gen_rename_rules.py [OUT]   (default: deploy/prometheus/rename-rules.yml)
"""
import os
import sys

# (old name, new name, (op, n): new value = old value op n, what it converts).
# Base-unit fields of DCGM 4.6.1 (new field ids, other units): go-dcgm b7fa315
# pkg/dcgm/const_fields.go (ids 1600-1612) and pkg/dcgm/base_unit_fields_test.go.
BASE_UNIT = [
    ("DCGM_FI_DEV_BAR1_TOTAL", "DCGM_FI_DEV_BAR1_CAPACITY_BYTES", ("*", 1048576), "MiB -> bytes"),
    ("DCGM_FI_DEV_BAR1_USED", "DCGM_FI_DEV_BAR1_USED_BYTES", ("*", 1048576), "MiB -> bytes"),
    ("DCGM_FI_DEV_BAR1_FREE", "DCGM_FI_DEV_BAR1_FREE_BYTES", ("*", 1048576), "MiB -> bytes"),
    ("DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_SM_CLOCK_HERTZ", ("*", 1000000), "MHz -> Hz"),
    ("DCGM_FI_DEV_MEM_CLOCK", "DCGM_FI_DEV_MEMORY_CLOCK_HERTZ", ("*", 1000000), "MHz -> Hz"),
    ("DCGM_FI_DEV_VIDEO_CLOCK", "DCGM_FI_DEV_VIDEO_CLOCK_HERTZ", ("*", 1000000), "MHz -> Hz"),
    ("DCGM_FI_DEV_APP_SM_CLOCK", "DCGM_FI_DEV_SM_APP_CLOCK_HERTZ", ("*", 1000000), "MHz -> Hz"),
    ("DCGM_FI_DEV_APP_MEM_CLOCK", "DCGM_FI_DEV_MEMORY_APP_CLOCK_HERTZ", ("*", 1000000), "MHz -> Hz"),
    ("DCGM_FI_DEV_MAX_SM_CLOCK", "DCGM_FI_DEV_SM_MAX_CLOCK_HERTZ", ("*", 1000000), "MHz -> Hz"),
    ("DCGM_FI_DEV_MAX_MEM_CLOCK", "DCGM_FI_DEV_MEMORY_MAX_CLOCK_HERTZ", ("*", 1000000), "MHz -> Hz"),
    ("DCGM_FI_DEV_MAX_VIDEO_CLOCK", "DCGM_FI_DEV_VIDEO_MAX_CLOCK_HERTZ", ("*", 1000000), "MHz -> Hz"),
    ("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "DCGM_FI_DEV_GPU_ENERGY_JOULES_TOTAL", ("/", 1000), "mJ -> J"),
    ("DCGM_FI_DEV_FAN_SPEED", "DCGM_FI_DEV_FAN_SPEED_RATIO", ("/", 100), "% -> ratio"),
]

# Same field id, new name, same value (DCGM 4.6's "Deprecated: renamed" aliases, go-dcgm b7fa315
# pkg/dcgm/const_fields.go; DCGM 72fa3fe dcgmlib/dcgm_fields.h): the fields of the shipped CSVs
# (etc/, etc/4.8.2/, commented rows included) and the profiling ratios next to them.
SAME_UNIT = [
    ("DCGM_FI_DEV_MEMORY_TEMP", "DCGM_FI_DEV_MEMORY_TEMP_CELSIUS"),
    ("DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_GPU_TEMP_CELSIUS"),
    ("DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_BOARD_POWER_WATTS"),
    ("DCGM_FI_DEV_POWER_MGMT_LIMIT", "DCGM_FI_DEV_BOARD_POWER_LIMIT_REQUESTED_WATTS"),
    ("DCGM_FI_DEV_ENFORCED_POWER_LIMIT", "DCGM_FI_DEV_BOARD_POWER_LIMIT_ENFORCED_WATTS"),
    ("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "DCGM_FI_DEV_PCIE_REPLAY_TOTAL"),
    ("DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_XID_ERROR"),
    ("DCGM_FI_DEV_RETIRED_SBE", "DCGM_FI_DEV_PAGE_RETIRED_SBE_TOTAL"),
    ("DCGM_FI_DEV_RETIRED_DBE", "DCGM_FI_DEV_PAGE_RETIRED_DBE_TOTAL"),
    ("DCGM_FI_DEV_RETIRED_PENDING", "DCGM_FI_DEV_PAGE_RETIRED_PENDING"),
    ("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "DCGM_FI_DEV_ROW_REMAP_UNCORRECTABLE_TOTAL"),
    ("DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "DCGM_FI_DEV_ROW_REMAP_CORRECTABLE_TOTAL"),
    ("DCGM_FI_DEV_ROW_REMAP_FAILURE", "DCGM_FI_DEV_ROW_REMAP_FAILED"),
    ("DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_TOTAL"),
    ("DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL", "DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_TOTAL"),
    ("DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_TOTAL"),
    ("DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL", "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_TOTAL"),
    ("DCGM_FI_DEV_NVLINK_ERROR_DL_CRC", "DCGM_FI_DEV_NVLINK_CRC_ERROR_TOTAL"),
    ("DCGM_FI_DEV_NVLINK_ERROR_DL_RECOVERY", "DCGM_FI_DEV_NVLINK_RECOVERY_TOTAL"),
    ("DCGM_FI_DEV_NVLINK_ERROR_DL_REPLAY", "DCGM_FI_DEV_NVLINK_REPLAY_TOTAL"),
    ("DCGM_FI_DEV_NVLINK_COUNT_LINK_RECOVERY_SUCCESSFUL_EVENTS",
     "DCGM_FI_DEV_NVLINK_RECOVERY_SUCCESSFUL_TOTAL"),
    ("DCGM_FI_DEV_NVLINK_COUNT_LINK_RECOVERY_FAILED_EVENTS", "DCGM_FI_DEV_NVLINK_RECOVERY_FAILED_TOTAL"),
    ("DCGM_FI_DEV_NVLINK_COUNT_LINK_RECOVERY_EVENTS", "DCGM_FI_DEV_NVLINK_RECOVERY_EVENT_TOTAL"),
    ("DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "DCGM_FI_DEV_NVLINK_THROUGHPUT_TOTAL"),
    ("DCGM_FI_DEV_NVLINK_BANDWIDTH_L0", "DCGM_FI_DEV_NVLINK_THROUGHPUT_L0"),
    ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_PROF_GR_ENGINE_UTIL_RATIO"),
    ("DCGM_FI_PROF_SM_ACTIVE", "DCGM_FI_PROF_SM_UTIL_RATIO"),
    ("DCGM_FI_PROF_SM_OCCUPANCY", "DCGM_FI_PROF_SM_OCCUPANCY_RATIO"),
    ("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "DCGM_FI_PROF_TENSOR_UTIL_RATIO"),
    ("DCGM_FI_PROF_DRAM_ACTIVE", "DCGM_FI_PROF_DRAM_UTIL_RATIO"),
    ("DCGM_FI_PROF_PIPE_FP64_ACTIVE", "DCGM_FI_PROF_FP64_UTIL_RATIO"),
    ("DCGM_FI_PROF_PIPE_FP32_ACTIVE", "DCGM_FI_PROF_FP32_UTIL_RATIO"),
    ("DCGM_FI_PROF_PIPE_FP16_ACTIVE", "DCGM_FI_PROF_FP16_UTIL_RATIO"),
]

MARK = "renamed_from"
GUARD = "on(UUID, GPU_I_ID)"

HEADER = """\
# Generated by scripts/gen_rename_rules.py: edit that file and run it, do not edit this one
# (test/prometheus/config_test.sh fails when the two differ).
#
# Recording rules that publish each DCGM metric renamed by DCGM 4.6 / 4.6.1 under its other
# name and unit, both ways, so that dashboards and alerts written for either generation see
# every GPU of a fleet that runs both (docs/upstream/generations.md lists the renames and their
# sources). A recorded series keeps every label of its source and adds
# renamed_from="<source metric>"; it is published only for a GPU (UUID, GPU_I_ID) that does not
# export the target name itself, so no series is duplicated. Load next to rules.yml (rule_files,
# or as a second PrometheusRule). Tests: test/prometheus/rename_rules_test.yml.
groups:
"""


def rule(source, target, conversion, why):
    value = source if conversion is None else f"{source} {conversion[0]} {conversion[1]}"
    expr = f'{value} unless {GUARD} {target}{{{MARK}=""}}'
    lines = [f"      - record: {target}"]
    if why:
        lines.append(f"        # {why}")
    lines.append(f"        expr: {expr}")
    lines.append(f"        labels: {{{MARK}: {source}}}")
    return "\n".join(lines) + "\n"


def inverse_why(why):
    a, b = why.split(" -> ")
    return f"{b} -> {a}"


def render():
    out = [HEADER]
    out.append("  - name: nvml-exporter.renames.base-units\n    rules:\n")
    for old, new, (op, n), why in BASE_UNIT:
        out.append(rule(old, new, (op, n), why))
        out.append(rule(new, old, ("/" if op == "*" else "*", n), inverse_why(why)))
    out.append("  - name: nvml-exporter.renames.same-unit\n    rules:\n")
    for old, new in SAME_UNIT:
        out.append(rule(old, new, None, ""))
        out.append(rule(new, old, None, ""))
    return "".join(out)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "deploy", "prometheus",
                                                              "rename-rules.yml")
    with open(out, "w") as f:
        f.write(render())


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Writes deploy/prometheus/rename-rules.yml: recording rules that publish every renamed DCGM
metric under its other generation's name and unit, both ways.

DCGM 4.6 renamed most fields (the old names stay as aliases of the same field id, so the value
and unit do not change), and DCGM 4.6.1 added base-unit fields under new ids (hertz, bytes,
joules, ratios) next to the old MHz / MiB / mJ / % ones. dcgm-exporter names a metric after the
field as written in its collectors CSV, so a fleet whose exporters run different CSVs or
releases serves the same measurement under two names. With these rules loaded, dashboards and
alerts written for either name see every GPU.

DCGM 4.7 (dcgm-exporter 4.9.0) added a second set of base-unit fields (ids 1613-1648): ratios
for the utilisations, seconds for the throttle counters, bytes for the framebuffer, bytes/s for
the NVLink throughput. dcgm-exporter 4.10.0 renamed the four profiling rates (same unit).

Each rule publishes NEW from OLD (and another OLD from NEW):
  - only for a GPU (or MIG instance) that does not export the target name itself: the guard is
    `unless on(UUID, GPU_I_ID) TARGET{renamed_from=""}`, so no series is duplicated;
  - with every label of the source series, plus renamed_from="<source name>", which marks the
    recorded series: the guard counts native series only (`{renamed_from=""}`), or a recorded
    series would suppress itself at the next evaluation. A recorded series is never renamed
    back: its GPU exports the source name natively, which the guard of the way back sees;
  - from native series only (`SOURCE{renamed_from=""}`): a name can be in two pairs (the NVLink
    total is renamed by 4.6 at the same unit and by 4.7 in bytes/s), and a recorded series fed
    to the next pair would chain renames and record a second copy under the first name;
  - for a target of two pairs, from the first source a GPU has (precedence() below).
Counters stay counters: a product by a constant keeps resets where they were, so rate() and
increase() on a recorded counter work (the tests take rate() of an energy and a throttle one).

Sources of the rename list (names and units only): docs/upstream/generations.md (4.6 / 4.6.1)
and docs/upstream/dcgm-fields-4.7.md (4.7).
Usage: gen_rename_rules.py [OUT]   (default: deploy/prometheus/rename-rules.yml)
"""
import collections
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

# Base-unit fields of DCGM 4.7 (new field ids): go-dcgm 892ef1f83067dfcc466968701e81683dc4bfdf48
# pkg/dcgm/const_fields.go (ids 1613-1648; its "Deprecated: Use ..." comments pair each old field
# with its new one), listed in docs/upstream/dcgm-fields-4.7.md; src/fields/dcgm_field_list.inc
# and catalog_base_units.h serve them.
#
# GPU utilisation: DCGM_FI_DEV_GPU_UTIL_RATIO is two things across a fleet. DCGM 4.6.1
# (dcgm-exporter 4.8.4) gave that name to field 203, in percent; DCGM 4.7 gives it to the new
# field 1613, a 0-1 ratio, and so does our catalog. A rule cannot tell from the series which one
# it got, so it would divide one generation's value by 100 too many or too few. The pair uses
# DCGM_FI_DEV_GPU_UTIL (203, % in every release) and DCGM_FI_DEV_GPU_UTIL_RATIO_V2 (1613 in DCGM
# 4.7 and in our catalog, no older meaning): both names have one unit wherever they appear, and
# DCGM_FI_DEV_GPU_UTIL_RATIO is neither read nor written by these rules.
#
# NVLink: the older fields take the RX + TX KiB counters' rate and divide it by 1000 ("MB/s",
# truncated to an integer); the bytes/s fields multiply the KiB/s by 1024 (src/fields/catalog.cc
# Rate(), catalog_nvlink.h, catalog_base_units.h kKibToBytesDivisor, conversions.cc CounterRate).
# So bytes/s = "MB/s" x 1024000, exact but for the older field's truncation (under 1024000 B/s).
# The older names are those dcgm-exporter <= 4.8's CSVs write (NVLINK_BANDWIDTH_*); their 4.6
# aliases NVLINK_THROUGHPUT_L<k> / _TOTAL are paired with them at the same unit below (L0 and
# the total), not with the bytes/s names.
#
# Not covered:
#   - DCGM_FI_PROF_{PCIE,NVLINK}_{TX,RX}_BYTES_PER_SECOND (DCGM 4.8, dcgm-exporter 4.10.0): same
#     unit as DCGM_FI_PROF_{PCIE,NVLINK}_{TX,RX}_BYTES, but no stored source gives their ids and
#     our catalog does not serve them (docs/upstream/dcgm-fields-4.7.md): left out until it does;
#   - DCGM_FI_DEV_C2C_MAX_BANDWIDTH_BYTES_PER_SECOND (1629): not in the doc's rename list, the
#     factor from the older "MB/s" is unsourced, and neither field is read here;
#   - DCGM_FI_DEV_VGPU_FB_USED_BYTES (vGPU instance), NVLINK_PPCNT_* (NVLink entity): no older
#     GPU metric to pair.
NVLINK_LINKS = 18
BASE_UNIT_47 = [
    ("DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_GPU_UTIL_RATIO_V2", ("/", 100), "% -> ratio"),
    ("DCGM_FI_DEV_MEM_COPY_UTIL", "DCGM_FI_DEV_MEMORY_UTIL_RATIO", ("/", 100), "% -> ratio"),
    ("DCGM_FI_DEV_ENC_UTIL", "DCGM_FI_DEV_ENC_UTIL_RATIO", ("/", 100), "% -> ratio"),
    ("DCGM_FI_DEV_DEC_UTIL", "DCGM_FI_DEV_DEC_UTIL_RATIO", ("/", 100), "% -> ratio"),
] + [
    (f"DCGM_FI_DEV_{old}", f"DCGM_FI_DEV_GPU_{new}_THROTTLE_SECONDS_TOTAL", ("/", 1000000000),
     "ns -> s")
    for old, new in [("POWER_VIOLATION", "POWER"), ("THERMAL_VIOLATION", "THERMAL"),
                     ("SYNC_BOOST_VIOLATION", "SYNC_BOOST"), ("BOARD_LIMIT_VIOLATION", "LIMIT"),
                     ("LOW_UTIL_VIOLATION", "LOW_UTIL"), ("RELIABILITY_VIOLATION", "RELIABILITY"),
                     ("TOTAL_APP_CLOCKS_VIOLATION", "APP"), ("TOTAL_BASE_CLOCKS_VIOLATION", "BASE")]
] + [
    ("DCGM_FI_DEV_FB_TOTAL", "DCGM_FI_DEV_FB_CAPACITY_BYTES", ("*", 1048576), "MiB -> bytes"),
    ("DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_FB_FREE_BYTES", ("*", 1048576), "MiB -> bytes"),
    ("DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_USED_BYTES", ("*", 1048576), "MiB -> bytes"),
    ("DCGM_FI_DEV_FB_RESERVED", "DCGM_FI_DEV_FB_RESERVED_BYTES", ("*", 1048576), "MiB -> bytes"),
    ("DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "DCGM_FI_DEV_NVLINK_THROUGHPUT_BYTES_PER_SECOND",
     ("*", 1024000), "MB/s (KiB/s / 1000) -> bytes/s"),
] + [
    (f"DCGM_FI_DEV_NVLINK_BANDWIDTH_L{k}", f"DCGM_FI_DEV_NVLINK_THROUGHPUT_L{k}_BYTES_PER_SECOND",
     ("*", 1024000), "MB/s (KiB/s / 1000) -> bytes/s")
    for k in range(NVLINK_LINKS)
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
    # dcgm-exporter 4.10.0 (DCGM 4.8.0) ships the profiling rates under new names, in the same
    # unit (its release notes; docs/upstream/dcgm-exporter-4.9-4.10.md): a fleet that upgrades
    # node by node serves both.
    ("DCGM_FI_PROF_PCIE_TX_BYTES", "DCGM_FI_PROF_PCIE_TX_BYTES_PER_SECOND"),
    ("DCGM_FI_PROF_PCIE_RX_BYTES", "DCGM_FI_PROF_PCIE_RX_BYTES_PER_SECOND"),
    ("DCGM_FI_PROF_NVLINK_TX_BYTES", "DCGM_FI_PROF_NVLINK_TX_BYTES_PER_SECOND"),
    ("DCGM_FI_PROF_NVLINK_RX_BYTES", "DCGM_FI_PROF_NVLINK_RX_BYTES_PER_SECOND"),
]

MARK = "renamed_from"
GUARD = "on(UUID, GPU_I_ID)"

HEADER = """\
# Generated by scripts/gen_rename_rules.py: edit that file and run it, do not edit this one
# (test/prometheus/config_test.sh fails when the two differ).
#
# Recording rules that publish each DCGM metric renamed by DCGM 4.6 / 4.6.1 / 4.7 under its
# other name and unit, both ways, so that dashboards and alerts written for either generation see
# every GPU of a fleet that runs both (docs/upstream/generations.md and
# docs/upstream/dcgm-fields-4.7.md list the renames and their sources). A recorded series keeps
# every label of its source and adds renamed_from="<source metric>"; it is published only for a
# GPU (UUID, GPU_I_ID) that does not export the target name itself, so no series is duplicated,
# and only from a native series (renamed_from=""), so renames never chain. Load next to rules.yml
# (rule_files, or as a second PrometheusRule). Tests: test/prometheus/rename_rules_test.yml.
groups:
"""


def rule(source, target, conversion, why, also_guard=()):
    """One recording rule. also_guard: sources that take precedence for the same target."""
    native = f'{source}{{{MARK}=""}}'
    value = native if conversion is None else f"{native} {conversion[0]} {conversion[1]}"
    expr = value
    for name in (target,) + tuple(also_guard):
        expr += f' unless {GUARD} {name}{{{MARK}=""}}'
    lines = [f"      - record: {target}"]
    if why:
        lines.append(f"        # {why}")
    lines.append(f"        expr: {expr}")
    lines.append(f"        labels: {{{MARK}: {source}}}")
    return "\n".join(lines) + "\n"


def inverse_why(why):
    a, b = why.split(" -> ")
    return f"{b} -> {a}"


def both_ways(pairs):
    """(source, target, conversion, why) of each pair, forward then back."""
    for old, new, conv, why in pairs:
        back = None if conv is None else ("/" if conv[0] == "*" else "*", conv[1])
        yield old, new, conv, why
        yield new, old, back, inverse_why(why) if why else ""


GROUPS = [
    ("nvml-exporter.renames.base-units", BASE_UNIT),
    ("nvml-exporter.renames.base-units-4.7", BASE_UNIT_47),
    ("nvml-exporter.renames.same-unit", [(o, n, None, "") for o, n in SAME_UNIT]),
]


def precedence():
    """target -> its sources, first wins. A name can be the target of two pairs (the NVLink
    total and link 0: from the same-id spelling NVLINK_THROUGHPUT_* and from the bytes/s field);
    a GPU that exports both sources would get two recorded copies, one per renamed_from. The
    same-unit source goes first (its value is the field's own, not a product), and each later
    rule is also guarded by the earlier sources."""
    order = collections.defaultdict(list)
    for _, pairs in reversed(GROUPS):  # same-unit first
        for source, target, _, _ in both_ways(pairs):
            order[target].append(source)
    return order


def render():
    order = precedence()
    out = [HEADER]
    for name, pairs in GROUPS:
        out.append(f"  - name: {name}\n    rules:\n")
        for source, target, conv, why in both_ways(pairs):
            earlier = order[target][:order[target].index(source)]
            out.append(rule(source, target, conv, why, earlier))
    return "".join(out)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "deploy", "prometheus",
                                                              "rename-rules.yml")
    with open(out, "w") as f:
        f.write(render())


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Checks scripts/gen_rename_rules.py's pairs against the exporter's field catalog
(src/fields/dcgm_field_list.inc), so a typo or a pair the catalog disagrees with fails here:

- every name of a pair is a name the catalog resolves (by id, or as a twin of one: 4.10's names);
- a same-unit pair names one field id twice, a base-unit pair two different ids;
- DCGM_FI_DEV_GPU_UTIL_RATIO is in no pair (percent in DCGM 4.6.1, a ratio in 4.7: see the
  generator's comment).

Usage: rename_pairs_check.py SOURCE_DIR
"""
import importlib.util
import re
import sys


def main():
    root = sys.argv[1]
    spec = importlib.util.spec_from_file_location("gen", f"{root}/scripts/gen_rename_rules.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    inc = f"{root}/src/fields/dcgm_field_list.inc"
    ids = {}
    for line in open(inc):
        m = re.match(r'NVMLX_DCGM_NAME\("([A-Z0-9_]+)", (\d+)\)', line)
        if m:
            ids[m.group(1)] = int(m.group(2))
    # dcgm-exporter 4.10's names with no id anywhere: the catalog serves each as its twin
    # (fields::TwinName, src/fields/catalog_names.cc), so it stands for the twin's id here.
    twins = f"{root}/src/fields/catalog_names.cc"
    for m in re.finditer(r'\{"(DCGM_FI_[A-Z0-9_]+)", "(DCGM_FI_[A-Z0-9_]+)"\}', open(twins).read()):
        if m.group(2) in ids:
            ids.setdefault(m.group(1), ids[m.group(2)])
    problems = []
    if len(ids) < 500:
        problems.append(f"{inc}: parsed only {len(ids)} NVMLX_DCGM_NAME rows")
    base = [(o, n, True) for o, n, _, _ in gen.BASE_UNIT + gen.BASE_UNIT_47]
    same = [(o, n, False) for o, n in gen.SAME_UNIT]
    names = set()
    for old, new, other_unit in base + same:
        names.update([old, new])
        for name in (old, new):
            if name not in ids:
                problems.append(f"pair {old} / {new}: {name} is not in {inc}")
        if old in ids and new in ids and (ids[old] != ids[new]) != other_unit:
            want = "two different field ids" if other_unit else "one field id"
            problems.append(f"pair {old} ({ids[old]}) / {new} ({ids[new]}): expected {want}")
    if "DCGM_FI_DEV_GPU_UTIL_RATIO" in names:
        problems.append("DCGM_FI_DEV_GPU_UTIL_RATIO is in a pair: its unit depends on the release")
    if problems:
        print("\n".join("FAIL: " + p for p in problems))
        sys.exit(1)
    print(f"ok: {len(base)} base-unit and {len(same)} same-unit pairs, every name in the catalog")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Compares nvml-exporter --once output with nvidia-smi readings taken right after it.

Tolerances reflect that the two reads are a second or so apart on a GPU that is changing:
clocks and temperatures within a few units, power within 15 % (NVML's power is a 1 s average),
utilisation within 15 points, memory within 1 % of total. Identity fields must match exactly.
Prints a Markdown report; exits 1 if a supported field disagrees or is missing.
"""
import re
import sys

out = sys.argv[1]
# nvidia-smi column -> (DCGM field, tolerance kind)
COLS = ["index", "uuid", "pci.bus_id", "name", "clocks.sm", "clocks.mem", "temperature.gpu",
        "temperature.memory", "power.draw", "utilization.gpu", "utilization.memory", "memory.total",
        "memory.free", "memory.used", "memory.reserved", "pcie.link.gen.current",
        "pcie.link.width.current", "driver_version", "enforced.power.limit", "fan.speed"]
CHECKS = [
    ("clocks.sm", "DCGM_FI_DEV_SM_CLOCK", ("rel", 0.10)),
    ("clocks.mem", "DCGM_FI_DEV_MEM_CLOCK", ("abs", 10)),
    ("temperature.gpu", "DCGM_FI_DEV_GPU_TEMP", ("abs", 3)),
    ("temperature.memory", "DCGM_FI_DEV_MEMORY_TEMP", ("abs", 3)),
    ("power.draw", "DCGM_FI_DEV_POWER_USAGE", ("rel", 0.15)),
    ("utilization.gpu", "DCGM_FI_DEV_GPU_UTIL", ("abs", 15)),
    ("utilization.memory", "DCGM_FI_DEV_MEM_COPY_UTIL", ("abs", 15)),
    ("memory.free", "DCGM_FI_DEV_FB_FREE", ("total", 0.01)),
    ("memory.used", "DCGM_FI_DEV_FB_USED", ("total", 0.01)),
    ("memory.reserved", "DCGM_FI_DEV_FB_RESERVED", ("abs", 2)),
]

def parse_metrics(path):
    series = {}
    for line in open(path):
        if line.startswith("#") or not line.strip():
            continue
        m = re.match(r'([A-Za-z_:][A-Za-z0-9_:]*)\{(.*)\} (\S+)$', line.strip())
        if not m:
            continue
        labels = dict(re.findall(r'([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)"', m.group(2)))
        series.setdefault(m.group(1), {})[labels.get("gpu")] = (labels, float(m.group(3)))
    return series

def parse_smi(path):
    rows = []
    for line in open(path):
        vals = [v.strip() for v in line.split(",")]
        if len(vals) == len(COLS):
            rows.append(dict(zip(COLS, vals)))
    return rows

bad = 0
print("# nvml-exporter --once vs nvidia-smi\n")
for phase in ("idle", "load"):
    ours = parse_metrics(f"{out}/once_{phase}.txt")
    smi = parse_smi(f"{out}/smi_{phase}.csv")
    print(f"## {phase}\n")
    if not smi or not ours:
        bad += 1
        print(f"FAIL: nothing to compare (nvidia-smi rows: {len(smi)}, our families: {len(ours)})\n")
        continue
    print("| GPU | field | nvml-exporter | nvidia-smi | tolerance | result |\n|---|---|---|---|---|---|")
    for row in smi:
        g = row["index"]
        total = float(row["memory.total"])
        anyfam = ours.get("DCGM_FI_DEV_GPU_TEMP", {}).get(g)
        if anyfam:
            labels = anyfam[0]
            for key, want in (("UUID", row["uuid"]), ("modelName", row["name"]),
                              ("DCGM_FI_DRIVER_VERSION", row["driver_version"])):
                ok = labels.get(key) == want
                bad += not ok
                print(f"| {g} | label {key} | {labels.get(key)} | {want} | exact | {'ok' if ok else 'MISMATCH'} |")
            smi_bus = row["pci.bus_id"].upper()
            ok = labels.get("pci_bus_id", "").upper() == smi_bus
            bad += not ok
            print(f"| {g} | label pci_bus_id | {labels.get('pci_bus_id')} | {smi_bus} | exact | {'ok' if ok else 'MISMATCH'} |")
        for col, field, (kind, tol) in CHECKS:
            s = row[col]
            have = ours.get(field, {}).get(g)
            if s.startswith("[N/A]") or s.startswith("[Not Supported]") or s == "N/A":
                verdict = "absent (ok: unsupported)" if have is None else "present while smi says N/A"
                print(f"| {g} | {field} | {have[1] if have else '—'} | {s} | | {verdict} |")
                continue
            if have is None:
                bad += 1
                print(f"| {g} | {field} | MISSING | {s} | | FAIL |")
                continue
            v, w = have[1], float(s)
            lim = {"rel": tol * max(abs(w), 1.0), "abs": tol, "total": tol * total}[kind]
            ok = abs(v - w) <= lim
            bad += not ok
            print(f"| {g} | {field} | {v:g} | {w:g} | ±{lim:g} | {'ok' if ok else 'FAIL'} |")
        fan = row["fan.speed"]
        have = ours.get("DCGM_FI_DEV_FAN_SPEED", {}).get(g)
        print(f"| {g} | DCGM_FI_DEV_FAN_SPEED | {have[1] if have else '—'} | {fan} | | "
              f"{'ok (omitted, smi N/A)' if have is None and 'N/A' in fan else 'see values'} |")
    print()
families = sorted(parse_metrics(f"{out}/once_load.txt"))
print(f"Families in --once (default-counters.csv): {len(families)}\n")
print(", ".join(families))
print(f"\n**{'ALL AGREE' if bad == 0 else f'{bad} DISAGREEMENTS'}**")
sys.exit(1 if bad else 0)

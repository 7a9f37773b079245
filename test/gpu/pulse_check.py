#!/usr/bin/env python3
"""Checks samples.csv (from pulse_e2e.sh) against gpu-pulse's phase lines.

For every phase of gpu-pulse (from its own start/end timestamps), the samples taken from
2 collection intervals (2 s) after the phase started until it ended must satisfy:
  on:  DCGM_FI_DEV_GPU_UTIL >= 90, DCGM_FI_PROF_GR_ENGINE_ACTIVE >= 0.9,
       DCGM_FI_PROF_PIPE_TENSOR_ACTIVE >= 0.5
  off: DCGM_FI_DEV_GPU_UTIL <= 10, DCGM_FI_PROF_GR_ENGINE_ACTIVE <= 0.1,
       DCGM_FI_PROF_PIPE_TENSOR_ACTIVE < 0.5
so every transition is seen within 2 intervals; power must follow (mean on - mean off > 200 W).
Prints a Markdown report; exits 1 on any failure.
"""
import csv
import re
import sys

out = sys.argv[1]
INTERVAL = 1.0
phases = []
for line in open(f"{out}/pulse_phases.txt"):
    m = dict(re.findall(r"(\w+)=(\S+)", line))
    if "phase" in m and m.get("gpu") == "0" and "start" in m:
        phases.append((m["phase"], float(m["start"]), float(m["end"])))
rows = list(csv.DictReader(open(f"{out}/samples.csv")))
def val(r, k):
    v = r.get(k, "")
    return float(v) if v not in ("", None) else None

RULES = {
    "on": [("DCGM_FI_DEV_GPU_UTIL", ">=", 90), ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", ">=", 0.9),
           ("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", ">=", 0.5)],
    "off": [("DCGM_FI_DEV_GPU_UTIL", "<=", 10), ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "<=", 0.1),
            ("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "<", 0.5)],
}
OPS = {">=": lambda a, b: a >= b, "<=": lambda a, b: a <= b, "<": lambda a, b: a < b}
bad = 0
print("# gpu-pulse (tensor, 20 s on / 20 s off) vs nvml-exporter at 1 s\n")
print(f"{len(rows)} samples, {len(phases)} phases of gpu-pulse.\n")
print("| phase | start | end | samples checked | GPU_UTIL min/max | GR_ENGINE min/max | TENSOR min/max | power mean W | result |")
print("|---|---|---|---|---|---|---|---|---|")
power = {"on": [], "off": []}
for name, start, end in phases:
    if end - start < 2 * INTERVAL + 1:
        continue  # a phase cut short by --duration
    sel = [r for r in rows if start + 2 * INTERVAL <= float(r["t"]) <= end]
    fails = []
    for r in sel:
        for k, op, lim in RULES[name]:
            v = val(r, k)
            if v is None or not OPS[op](v, lim):
                fails.append(f"t={float(r['t']) - start:.1f}s {k}={v}")
    p = [val(r, "DCGM_FI_DEV_POWER_USAGE") for r in sel if val(r, "DCGM_FI_DEV_POWER_USAGE") is not None]
    power[name] += p
    def mm(k):
        vs = [val(r, k) for r in sel if val(r, k) is not None]
        return f"{min(vs):g}/{max(vs):g}" if vs else "—"
    ok = not fails and len(sel) >= 2
    bad += not ok
    print(f"| {name} | {start:.1f} | {end:.1f} | {len(sel)} | {mm('DCGM_FI_DEV_GPU_UTIL')} | "
          f"{mm('DCGM_FI_PROF_GR_ENGINE_ACTIVE')} | {mm('DCGM_FI_PROF_PIPE_TENSOR_ACTIVE')} | "
          f"{sum(p) / len(p) if p else float('nan'):.0f} | {'ok' if ok else 'FAIL: ' + '; '.join(fails[:3])} |")
if power["on"] and power["off"]:
    on, off = sum(power["on"]) / len(power["on"]), sum(power["off"]) / len(power["off"])
    ok = on - off > 200
    bad += not ok
    print(f"\nPower follows: mean {on:.0f} W on vs {off:.0f} W off: {'ok' if ok else 'FAIL'}")
else:
    bad += 1
    print("\nFAIL: no power samples")
if len([p for p in phases if p[0] == "on"]) < 2:
    bad += 1
    print("FAIL: fewer than two on-phases")
print(f"\n**{'ALL PHASES AS EXPECTED' if bad == 0 else f'{bad} FAILURES'}**")
sys.exit(1 if bad else 0)

#!/usr/bin/env python3
"""Plots samples.csv + gpu-pulse phases (from pulse_e2e.sh) as a PNG: the picture an operator
wants to see. Needs matplotlib (Debian: python3-matplotlib via scripts/install-plot-deps.sh; run it with
/usr/bin/python3 where another python3 comes first on PATH).
Usage: pulse_plot.py OUT_DIR PNG"""
import csv
import re
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

out, png = sys.argv[1], sys.argv[2]
rows = list(csv.DictReader(open(f"{out}/samples.csv")))
t0 = float(rows[0]["t"])
t = [float(r["t"]) - t0 for r in rows]
def series(k, scale=1.0):
    return [float(r[k]) * scale if r.get(k) else float("nan") for r in rows]
phases = []
for line in open(f"{out}/pulse_phases.txt"):
    m = dict(re.findall(r"(\w+)=(\S+)", line))
    if m.get("phase") == "on" and m.get("gpu") == "0":
        phases.append((float(m["start"]) - t0, float(m["end"]) - t0))
fig, (a1, a2) = plt.subplots(2, 1, figsize=(11, 6.5), sharex=True)
for ax in (a1, a2):
    for s, e in phases:
        ax.axvspan(s, e, color="#f2d7a6", alpha=0.5, lw=0)
a1.plot(t, series("DCGM_FI_DEV_GPU_UTIL"), label="DCGM_FI_DEV_GPU_UTIL (%)", lw=1.8)
a1.plot(t, series("DCGM_FI_PROF_GR_ENGINE_ACTIVE", 100), label="PROF_GR_ENGINE_ACTIVE ×100", lw=1.4, ls="--")
a1.plot(t, series("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", 100), label="PROF_PIPE_TENSOR_ACTIVE ×100", lw=1.4)
a1.plot(t, series("DCGM_FI_PROF_DRAM_ACTIVE", 100), label="PROF_DRAM_ACTIVE ×100", lw=1.0)
a1.set_ylabel("percent")
a1.set_ylim(-5, 105)
a1.legend(loc="upper right", fontsize=8)
a1.set_title("nvml-exporter on an H200, gpu-pulse tensor 20 s on / 20 s off (shaded: gpu-pulse on-phases), -c 1000")
a2.plot(t, series("DCGM_FI_DEV_POWER_USAGE"), color="#c0392b", label="DCGM_FI_DEV_POWER_USAGE (W)")
a2.set_ylabel("W")
a2.set_xlabel("seconds")
a2.legend(loc="upper right", fontsize=8)
fig.tight_layout()
fig.savefig(png, dpi=110)
print(f"wrote {png}")

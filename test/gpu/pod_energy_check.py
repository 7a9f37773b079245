#!/usr/bin/env python3
"""Checks pod_energy_h200.sh's readings: per-pod energy against the GPU's own counter.

Between consecutive readings the GPU counter grew by some joules; the pods' series (and the empty
series: idle time, nobody's) must have grown by exactly that together (within 0.5 J: the counter
is in mJ, the series are rounded on the page). Each interval that lies well inside both
processes' phases (>= 1.5 s after a transition: a collection reads the window before it) is
classed by who was running: A alone, B alone, both, neither. Per class: the GPU's joules and
mean power, and each series' share. Rules: alone, that pod gets >= 0.9 of the growth; neither,
the empty series gets >= 0.9; both, A and B together get >= 0.8 (time-slicing is not fair, so no
split is asserted). Markdown on stdout; exit status 1 when a rule fails."""
import collections
import csv
import sys

from pulse_log import phases

out = sys.argv[1]




A, B, EMPTY = "team-a/trainer-a", "team-b/infer-b", "/"
ph = {A: phases(f"{out}/pulse_a.txt"), B: phases(f"{out}/pulse_b.txt")}


def state(who, t0, t1):
    """'on'/'off' when [t0, t1] lies >= 1.5 s inside one phase of `who` (or wholly outside all of
    its phases: not running), else None."""
    p = ph[who]
    for s, a, b in p:
        if a + 1.5 <= t0 and t1 <= b + 0.2:
            return s
        if a < t1 and t0 < b + 1.5:
            return None
    if not p or t1 < p[0][1] or t0 > p[-1][2] + 1.5:
        return "off"
    return None


readings = collections.OrderedDict()
for r in csv.DictReader(open(f"{out}/energy.csv")):
    readings.setdefault(float(r["t"]), {})[r["series"]] = float(r["value"])
times = [t for t, d in readings.items() if "gpu_mj" in d]
ok = True
classes = collections.defaultdict(lambda: collections.Counter())
first, last = None, None
for t0, t1 in zip(times, times[1:]):
    d0, d1 = readings[t0], readings[t1]
    grown = (d1["gpu_mj"] - d0["gpu_mj"]) / 1000
    series = [k for k in d1 if k != "gpu_mj" and not k.startswith("sm:")]
    if grown <= 0 or not series:
        continue
    first = first or t0
    last = t1
    split = {k: d1[k] - d0.get(k, 0.0) for k in series}
    a, b = state(A, t0, t1), state(B, t0, t1)
    if a is None or b is None:
        continue
    cls = {("on", "off"): "A alone", ("off", "on"): "B alone", ("on", "on"): "both",
           ("off", "off"): "neither"}[(a, b)]
    c = classes[cls]
    c["intervals"] += 1
    c["seconds"] += t1 - t0
    c["gpu"] += grown
    for k, v in split.items():
        c[k] += v

d0, d1 = readings[first], readings[last]
gpu_total = (d1["gpu_mj"] - d0["gpu_mj"]) / 1000
keys = sorted(k for k in d1 if k != "gpu_mj" and not k.startswith("sm:"))
series_total = sum(d1[k] - d0.get(k, 0.0) for k in keys)
print("# Energy per pod on one GPU, two time-sliced pods\n")
print(f"Over the run ({last - first:.1f} s): the GPU's counter grew {gpu_total:.1f} J; the "
      f"series together {series_total:.1f} J (difference {series_total - gpu_total:+.2f} J).\n")
for k in keys:
    print(f"- `{k}`: {d1[k] - d0.get(k, 0.0):.1f} J")
if abs(series_total - gpu_total) > 0.5:
    ok = False
    print("\nFAIL: the series do not add up to the GPU's counter")
print("\n| who ran | intervals | seconds | GPU J | mean W | A share | B share | empty share | verdict |")
print("|---|---|---|---|---|---|---|---|---|")
rules = {"A alone": lambda s: s[A] >= 0.9, "B alone": lambda s: s[B] >= 0.9,
         "both": lambda s: s[A] + s[B] >= 0.8, "neither": lambda s: s[EMPTY] >= 0.9}
for cls in ("A alone", "B alone", "both", "neither"):
    c = classes.get(cls)
    if not c or c["gpu"] <= 0:
        print(f"| {cls} | 0 | - | - | - | - | - | - | FAIL (no interval) |")
        ok = False
        continue
    share = {k: c[k] / c["gpu"] for k in (A, B, EMPTY)}
    good = rules[cls](share)
    ok &= good
    print(f"| {cls} | {c['intervals']} | {c['seconds']:.1f} | {c['gpu']:.1f} | "
          f"{c['gpu'] / c['seconds']:.0f} | {share[A]:.3f} | {share[B]:.3f} | {share[EMPTY]:.3f} | "
          f"{'ok' if good else 'FAIL'} |")
print(f"\n{'all rules hold' if ok else 'some rule failed'}")
sys.exit(0 if ok else 1)

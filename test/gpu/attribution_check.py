#!/usr/bin/env python3
"""Checks attribution_e2e.sh's samples: each pod's SM share follows its own gpu-pulse phases.

For every sample taken well inside both processes' phases (>= 2 s after a transition, as a value
is the average over the last interval): a pod whose process is off shows <= 0.05; on while the
other is off, >= 0.5; both on, the two shares sum to >= 0.8. Time-slicing is not fair (on the
H200 the tensor process took ~all of the SMs from the fp32 one), so no split is asserted.
Writes a markdown report on stdout; exit status 1 when a rule fails."""
import csv, sys

from pulse_log import phases
out = sys.argv[1]
pids = dict(kv.split("=") for kv in open(f"{out}/pids.txt").read().split())
who = {pids["uid_a"]: ("A fp32 10s/10s", phases(f"{out}/pulse_a.txt")),
       pids["uid_b"]: ("B tensor 5s/15s", phases(f"{out}/pulse_b.txt"))}
rows = list(csv.DictReader(open(f"{out}/samples.csv")))
ok = True
def state(ph, t):
    for s_, a, b in ph:
        if a <= t < b:
            return s_
    return "-"
def settled(ph, t):  # >= 2 s inside a phase: a value is the average over the last interval
    return any(a + 2.0 <= t <= b - 0.5 for _, a, b in ph)
uids = list(who)
samples = {}
for r in rows:
    if r["sm_ratio"]:
        samples.setdefault(r["t"], {})[r["uid"]] = float(r["sm_ratio"])
cases = {}  # (pod, case) -> shares
for t, d in samples.items():
    tt = float(t)
    for u in uids:
        other = uids[1] if u == uids[0] else uids[0]
        if u not in d or not settled(who[u][1], tt) or not settled(who[other][1], tt):
            continue
        mine, theirs = state(who[u][1], tt), state(who[other][1], tt)
        if mine == "off":
            case = "off"
        elif theirs == "off":
            case = "on, alone"
        else:
            case = "on, both on"
        cases.setdefault((u, case), []).append((d[u], d.get(other, 0.0)))
print("# Per-process attribution on a real GPU\n")
print("| pod | case | samples | SM share min | median | max | verdict |")
print("|---|---|---|---|---|---|---|")
for u in uids:
    for case in ("on, alone", "on, both on", "off"):
        v = cases.get((u, case), [])
        if not v:
            print(f"| {who[u][0]} | {case} | 0 | | | | (none) |")
            continue
        mine = sorted(x for x, _ in v)
        if case == "off":
            good = mine[-1] <= 0.05
        elif case == "on, alone":
            good = mine[0] >= 0.5
        else:  # the two share the GPU: together they hold it
            good = min(x + y for x, y in v) >= 0.8
        ok &= good
        print(f"| {who[u][0]} | {case} | {len(v)} | {mine[0]:.2f} | {mine[len(mine)//2]:.2f} | "
              f"{mine[-1]:.2f} | {'pass' if good else 'FAIL'} |")
mem = [float(r["memory_bytes"]) for r in rows if r["memory_bytes"]]
print(f"\nMemory per pod while running: {min(mem)/2**20:.0f} to {max(mem)/2**20:.0f} MiB.")
# The timeline: per second, each pod's SM share and the GPU's utilization.
t0 = min(float(r["t"]) for r in rows) if rows else 0
by_t = {}
for r in rows:
    by_t.setdefault(round(float(r["t"]) - t0), {})[r["uid"]] = r
print("\n| t s | A share | B share | A phase | B phase | GPU_UTIL % |\n|---|---|---|---|---|---|")
for t in sorted(by_t):
    d = by_t[t]
    any_r = next(iter(d.values()))
    abs_t = float(any_r["t"])
    cells = [d.get(u, {}).get("sm_ratio", "") for u in who]
    print(f"| {t} | {cells[0]} | {cells[1]} | {state(who[pids['uid_a']][1], abs_t)} | "
          f"{state(who[pids['uid_b']][1], abs_t)} | {any_r['gpu_util']} |")
print("\nRules, on samples >= 2 s inside both processes' phases: a pod whose process is off <= 0.05; "
      "on while the other is off >= 0.50; both on: the two shares sum to >= 0.80 (the split is "
      "the GPU scheduler's, not necessarily fair).")
print(f"\nOverall: {'PASS' if ok else 'FAIL'}")
sys.exit(0 if ok else 1)

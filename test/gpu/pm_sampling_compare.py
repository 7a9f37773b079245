#!/usr/bin/env python3
"""Compares PM sampling with GPM per load phase (test/gpu/pm_sampling_h200.sh's output).

Usage: pm_sampling_compare.py OUTDIR. Reads OUTDIR/scrapes.txt and OUTDIR/phases.txt; writes
OUTDIR/report.md and OUTDIR/plot.png (when matplotlib is there). Each phase's first 3 s and last
1 s are left out (both daemons' windows must lie inside the phase). A field agrees when the
median over the phase of |PM - GPM| per scrape is within 0.05 (ratios) or within 10 % of GPM's
median with a floor of 1 MiB/s (bytes/s: at idle both are near zero). Exit 1 on a disagreement.
"""
import collections
import os
import re
import statistics
import sys

out = sys.argv[1]
series = collections.defaultdict(list)  # (source, field) -> [(t, value)]
rss = []
t = None
line_re = re.compile(r'^(gpm|pm) (\w+)\{[^}]*\} (\S+)$')
for line in open(os.path.join(out, 'scrapes.txt')):
    line = line.rstrip('\n')
    if line.startswith('# t='):
        t = float(line[4:])
        continue
    m = re.match(r'^# (\S+) pm_VmRSS:\s+(\d+) kB', line)
    if m:
        rss.append((float(m.group(1)), int(m.group(2)) / 1024))
        continue
    m = line_re.match(line)
    if m and t is not None:
        series[(m.group(1), m.group(2))].append((t, float(m.group(3))))
phases = []
for line in open(os.path.join(out, 'phases.txt')):
    ts, name = line.split()
    phases.append((float(ts), name))
windows = []
for i, (start, name) in enumerate(phases[:-1]):
    windows.append((name, start + 3, phases[i + 1][0] - 1))

fields = sorted({f for (s, f) in series if f.startswith('DCGM_FI_PROF')})
rows, failures = [], 0
for name, lo, hi in windows:
    if name not in ('idle', 'tensor', 'fp32', 'fp64', 'memory', 'pcie'):
        continue
    for f in fields:
        g = {round(t): v for t, v in series.get(('gpm', f), []) if lo <= t <= hi}
        p = {round(t): v for t, v in series.get(('pm', f), []) if lo <= t <= hi}
        both = sorted(set(g) & set(p))
        if not both:
            rows.append((name, f, len(g), len(p), '-', '-', '-', 'n/a' if not p else 'no pair'))
            continue
        gm = statistics.median(g[k] for k in both)
        pmed = statistics.median(p[k] for k in both)
        diff = statistics.median(abs(p[k] - g[k]) for k in both)
        is_bytes = 'BYTES' in f
        tol = max(0.10 * abs(gm), 1048576.0) if is_bytes else 0.05
        ok = diff <= tol
        failures += 0 if ok else 1
        fmt = (lambda v: f'{v / 1048576:.1f} MiB/s') if is_bytes else (lambda v: f'{v:.3f}')
        rows.append((name, f, len(g), len(p), fmt(gm), fmt(pmed), fmt(diff),
                     'ok' if ok else f'FAIL (tol {fmt(tol)})'))

with open(os.path.join(out, 'report.md'), 'w') as r:
    r.write('| phase | field | GPM n | PM n | GPM median | PM median | median abs diff | verdict |\n')
    r.write('|---|---|---|---|---|---|---|---|\n')
    for row in rows:
        r.write('| ' + ' | '.join(str(c) for c in row) + ' |\n')
    missing = [f for f in fields if not series.get(('pm', f))]
    r.write(f'\nfields GPM serves but PM sampling does not: {", ".join(missing) or "none"}\n')
    if rss:
        r.write(f'PM-sampling daemon RSS: min {min(v for _, v in rss):.0f} MiB, '
                f'max {max(v for _, v in rss):.0f} MiB\n')
    for name, lo, hi in [(n, a - 2, b + 1) for n, a, b in windows
                         if n in ('ncu_busy', 'paused', 'resumed')]:
        act = [v for t, v in series.get(('pm', 'nvml_exporter_pm_sampling_active'), []) if lo <= t <= hi]
        los = [v for t, v in series.get(('pm', 'nvml_exporter_pm_sampling_losses_total'), []) if lo <= t <= hi]
        r.write(f'{name}: pm_sampling_active {act}, losses {los[-1] if los else "-"}\n')
    r.write(f'\ndisagreements: {failures}\n')
print(open(os.path.join(out, 'report.md')).read())

try:
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    n = len(fields)
    fig, axes = plt.subplots(n, 1, figsize=(11, 2.1 * n), sharex=True)
    t0 = phases[0][0]
    for ax, f in zip(axes, fields):
        for src, style in (('gpm', '-'), ('pm', '--')):
            pts = series.get((src, f), [])
            ax.plot([t - t0 for t, _ in pts], [v for _, v in pts], style, label=src)
        for ts, name in phases:
            ax.axvline(ts - t0, color='grey', lw=0.5)
            if f == fields[0]:
                ax.text(ts - t0, ax.get_ylim()[1], name, fontsize=7, va='bottom')
        ax.set_ylabel(f.replace('DCGM_FI_PROF_', ''), fontsize=7)
    axes[0].legend(loc='upper right', fontsize=7)
    axes[-1].set_xlabel('seconds')
    fig.tight_layout()
    fig.savefig(os.path.join(out, 'plot.png'), dpi=80)
except ImportError:
    pass
sys.exit(1 if failures else 0)

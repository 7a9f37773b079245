#!/usr/bin/env python3
"""Compares PM sampling with GPM per load phase (test/gpu/pm_sampling_h200.sh's output).

Usage: pm_sampling_compare.py OUTDIR. Reads OUTDIR/scrapes.txt (lines "<src> <series> <value>"
after "# t=<unix time>" markers; src is pm or gpm) and OUTDIR/phases.txt ("<time> <src>:<phase>").
The two sources ran one after the other over the same schedule of steady loads, so each phase is
compared by its medians: each phase's first 3 s and last 1 s are left out (the daemons' 1 s
windows must lie inside the phase); a field agrees when |median(PM) - median(GPM)| is within
0.05 (ratios) or within 10 % of GPM's median with a floor of 1 MiB/s (bytes/s: at idle both are
near zero); TOL_RATIO and TOL_BYTES_PCT (environment) tighten them. Where PM sampling alternates
configurations, the report gives each field's mean coverage in the phase
(nvml_exporter_pm_sampling_coverage_ratio) and the run's losses. In the PCIe phase the two runs'
loads are themselves measured (OUTDIR/pcie.txt: each run's copy rate, pcie_copies.py), so bytes/s
are judged as each source's reading over its own run's copy rate: two sequential copy loops differ
by a few percent, which is not a disagreement of the sources. Writes OUTDIR/report.md and
OUTDIR/plot.png (with matplotlib). Exit 1 on a disagreement.
"""
import collections
import os
import re
import statistics
import sys

out = sys.argv[1]
series = collections.defaultdict(list)  # (src, field) -> [(t, value)]
rss = collections.defaultdict(list)
t = None
line_re = re.compile(r'^(gpm|pm) (\w+)\{[^}]*\} (\S+)$')
coverage_re = re.compile(r'^(pm) nvml_exporter_pm_sampling_coverage_ratio\{[^}]*field="(\w+)"[^}]*\} (\S+)$')
TOL_RATIO = float(os.environ.get('TOL_RATIO', '0.05'))
TOL_BYTES = float(os.environ.get('TOL_BYTES_PCT', '10')) / 100
for line in open(os.path.join(out, 'scrapes.txt')):
    line = line.rstrip('\n')
    if line.startswith('# t='):
        t = float(line[4:])
        continue
    m = re.match(r'^# \S+ (\w+)_VmRSS:\s+(\d+) kB', line)
    if m:
        rss[m.group(1)].append(int(m.group(2)) / 1024)
        continue
    m = coverage_re.match(line)
    if m and t is not None:
        series[(m.group(1), 'coverage:' + m.group(2))].append((t, float(m.group(3))))
        continue
    m = line_re.match(line)
    if m and t is not None:
        series[(m.group(1), m.group(2))].append((t, float(m.group(3))))
phases = []
for line in open(os.path.join(out, 'phases.txt')):
    ts, name = line.split()
    src, ph = name.split(':')
    phases.append((float(ts), src, ph))
windows = {}  # (src, phase) -> (lo, hi)
for i, (start, src, ph) in enumerate(phases[:-1]):
    windows[(src, ph)] = (start + 3, phases[i + 1][0] - 1, start)

# Each run's own PCIe copy rate, in the order the runs' PCIe phases started (bytes/s each way).
load_rate = {}
pcie_order = [src for _, src, ph in sorted(phases) if ph == 'pcie']
pcie_path = os.path.join(out, 'pcie.txt')
if os.path.exists(pcie_path):
    rates = [float(m.group(1)) * 1048576 for m in
             re.finditer(r'each_way_mib_s=(\S+)', open(pcie_path).read())]
    if len(rates) == len(pcie_order):
        load_rate = dict(zip(pcie_order, rates))

MODES = ('idle', 'tensor', 'fp32', 'fp64', 'memory', 'pcie')
fields = sorted({f for (s, f) in series if f.startswith('DCGM_FI_PROF')})


def values(src, f, ph):
    if (src, ph) not in windows:
        return []
    lo, hi, _ = windows[(src, ph)]
    return [v for tt, v in series.get((src, f), []) if lo <= tt <= hi]


rows, failures, normalized = [], 0, []
for ph in MODES:
    for f in fields:
        g, p = values('gpm', f, ph), values('pm', f, ph)
        is_bytes = 'BYTES' in f
        fmt = (lambda v: f'{v / 1048576:.1f} MiB/s') if is_bytes else (lambda v: f'{v:.3f}')
        if not g or not p:
            rows.append((ph, f, len(g), len(p), fmt(statistics.median(g)) if g else '-',
                         fmt(statistics.median(p)) if p else '-', '-', '-',
                         'not served by PM sampling' if g and not p else 'n/a'))
            continue
        gm, pmed = statistics.median(g), statistics.median(p)
        diff = abs(pmed - gm)
        tol = max(TOL_BYTES * abs(gm), 1048576.0) if is_bytes else TOL_RATIO
        ok = diff <= tol
        if is_bytes and ph == 'pcie' and len(load_rate) == 2:
            # Each reading over its own run's load: the sources agree when those fractions do.
            gf, pf = gm / load_rate['gpm'], pmed / load_rate['pm']
            ok = abs(pf - gf) <= TOL_BYTES * gf
            normalized.append(f'{f.replace("DCGM_FI_PROF_", "")}: GPM {gf:.4f} of its load '
                              f'({load_rate["gpm"] / 1048576:.1f} MiB/s), PM {pf:.4f} of its load '
                              f'({load_rate["pm"] / 1048576:.1f} MiB/s), '
                              f'difference {100 * (pf - gf) / gf:+.2f} % -> {"ok" if ok else "FAIL"}')
        failures += 0 if ok else 1
        cov = values('pm', 'coverage:' + f, ph)
        rows.append((ph, f.replace('DCGM_FI_PROF_', ''), len(g), len(p), fmt(gm), fmt(pmed),
                     fmt(diff), f'{statistics.mean(cov):.2f}' if cov else '-',
                     'ok' if ok else f'FAIL (tol {fmt(tol)})'))

with open(os.path.join(out, 'report.md'), 'w') as r:
    r.write('| phase | field | GPM n | PM n | GPM median | PM median | abs diff | PM coverage | verdict |\n')
    r.write('|---|---|---|---|---|---|---|---|---|\n')
    for row in rows:
        if row[-1] == 'n/a':
            continue
        r.write('| ' + ' | '.join(str(c) for c in row) + ' |\n')
    for line in normalized:
        r.write(f'\nPCIe phase, over each run\'s own copy rate: {line}')
    for src in ('pm', 'gpm'):
        if rss[src]:
            r.write(f'\n{src} daemon RSS: {min(rss[src]):.0f}-{max(rss[src]):.0f} MiB')
    r.write('\n')
    for ph in ('ncu_busy', 'paused', 'resumed'):
        if ('pm', ph) not in windows:
            continue
        lo, hi, start = windows[('pm', ph)]
        act = [v for tt, v in series.get(('pm', 'nvml_exporter_pm_sampling_active'), [])
               if start <= tt <= hi + 1]
        los = [v for tt, v in series.get(('pm', 'nvml_exporter_pm_sampling_losses_total'), [])
               if start <= tt <= hi + 1]
        gr = len([1 for tt, _ in series.get(('pm', 'DCGM_FI_PROF_GR_ENGINE_ACTIVE'), [])
                  if start <= tt <= hi + 1])
        r.write(f'{ph}: pm_sampling_active {act}, losses {los[-1] if los else "-"}, '
                f'GR_ENGINE series in {gr} of {len(act)} scrapes\n')
    for name in ('nvml_exporter_pm_sampling_configurations', 'nvml_exporter_pm_sampling_losses_total'):
        got = series.get(('pm', name), [])
        if got:
            r.write(f'{name}: first {got[0][1]:g}, last {got[-1][1]:g} ({len(got)} scrapes)\n')
    r.write(f'\ndisagreements: {failures} (tolerances: {TOL_RATIO} for ratios, '
            f'{TOL_BYTES * 100:g} % for bytes/s)\n')
print(open(os.path.join(out, 'report.md')).read())

try:
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    shown = [f for f in fields if series.get(('pm', f))]
    fig, axes = plt.subplots(len(shown), 1, figsize=(11, 1.9 * len(shown)), sharex=True)
    for ax, f in zip(axes, shown):
        for src, style in (('gpm', '-'), ('pm', '--')):
            t0 = windows[(src, 'idle')][2]
            pts = [(tt - t0, v) for tt, v in series.get((src, f), [])
                   if tt <= windows[(src, 'pcie')][1] + 1]
            ax.plot([a for a, _ in pts], [b for _, b in pts], style, label=src)
        for ph in MODES:
            x = windows[('gpm', ph)][2] - windows[('gpm', 'idle')][2]
            ax.axvline(x, color='grey', lw=0.5)
            if f == shown[0]:
                ax.text(x + 0.3, ax.get_ylim()[1], ph, fontsize=7, va='bottom')
        ax.set_ylabel(f.replace('DCGM_FI_PROF_', ''), fontsize=7)
    axes[0].legend(loc='upper right', fontsize=7)
    axes[-1].set_xlabel('seconds since the idle phase (each source its own run)')
    fig.tight_layout()
    fig.savefig(os.path.join(out, 'plot.png'), dpi=80)
except ImportError:
    pass
sys.exit(1 if failures else 0)

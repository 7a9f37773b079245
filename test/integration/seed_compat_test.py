#!/usr/bin/env python3
"""The seed article's sample /metrics (dcgm-exporter on an A10G, testdata/seed_sample_metrics.txt)
against ours for the same fields: the same family names, TYPEs, and label names in the same order.

Differences allowed, each for a stated reason:
  - we add pci_bus_id (dcgm-exporter >= 3.x emits it; the article's 2.x build did not);
  - container/namespace/pod come with -k (pod attribution, a later stage);
  - DCGM_FI_DEV_XID_ERRORS may carry err_code and err_msg as extra labels at the end: current
    dcgm-exporter adds these attributes (after every other label); the article's older build
    predates them;
  - families the article has that we do not serve yet must be in LATER (read in later stages).
The article's build spells the host label Hostname and types the NVLink bandwidth a counter, as
dcgm-exporter 4.8.2 did: ours runs as that generation (--dcgm-exporter-compat 4.8.2 with
etc/4.8.2/default-counters.csv).
"""
import re
import subprocess
import sys

exporter, source_dir = sys.argv[1], sys.argv[2]
LATER = set()
# Attributes newer dcgm-exporter appends to a family's labels, by family.
EXTRA_AT_END = {"DCGM_FI_DEV_XID_ERRORS": ["err_code", "err_msg"]}
POD_LABELS = ["container", "namespace", "pod"]

def parse(text):
    fams, types = {}, {}
    for line in text.splitlines():
        m = re.match(r"# TYPE (\S+) (\S+)", line)
        if m:
            types[m.group(1)] = m.group(2)
            continue
        if line.startswith("#") or not line.strip():
            continue
        m = re.match(r"([A-Za-z_:][A-Za-z0-9_:]*)(?:\{(.*)\})? (\S+)$", line)
        assert m, f"unparsable sample line: {line!r}"
        labels = re.findall(r'([A-Za-z_][A-Za-z0-9_]*)="(?:[^"\\]|\\.)*"', m.group(2) or "")
        fams.setdefault(m.group(1), labels)
    return fams, types

seed, seed_types = parse(open(f"{source_dir}/testdata/seed_sample_metrics.txt").read())
# eight_gpus.yaml has NVLink counters (the built-in scenario, like a single H200, has none) and
# GPM, so the DCGM_FI_PROF_* families are served and compared too.
out = subprocess.run([exporter, "--fake-gpus-scenario", f"{source_dir}/testdata/scenarios/eight_gpus.yaml", "-f", f"{source_dir}/etc/4.8.2/default-counters.csv", "--dcgm-exporter-compat", "4.8.2", "--once"],
                     check=True, capture_output=True, text=True, env={"NODE_NAME": "node-a"}).stdout
ours, our_types = parse(out)

checked = 0
for fam, labels in seed.items():
    if fam in LATER:
        continue
    assert fam in ours, f"family {fam} of the seed is missing from ours"
    assert seed_types[fam] == our_types[fam], f"{fam}: TYPE {our_types[fam]} != seed {seed_types[fam]}"
    want = [l for l in labels if l not in POD_LABELS]
    got = ours[fam]
    extra = EXTRA_AT_END.get(fam, [])
    if extra and got[-len(extra):] == extra:
        got = got[:-len(extra)]
    assert [l for l in got if l != "pci_bus_id"] == want, f"{fam}: labels {got} vs seed {want}"
    assert got.index("pci_bus_id") == got.index("UUID") + 1, f"{fam}: pci_bus_id after UUID: {got}"
    checked += 1
assert checked >= 15, f"only {checked} families compared"
print(f"ok: {checked} families match the seed's names, TYPEs and label order")

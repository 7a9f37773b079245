#!/usr/bin/env python3
"""Resident memory of a running process by mapping: where its VmRSS is.

Usage: smaps_by_mapping.py PID [--top N] [--tag TAG]

Sums /proc/PID/smaps per mapped file (anonymous regions as [anon], the heap as [heap]) and
prints, largest first, each one's Rss and the anonymous part of it (pages written since they
were mapped: relocated data, .bss, malloc's arenas) in KiB, then the totals. With --tag every
line starts with TAG, so that two processes' tables can be told apart in one log (the RSS row
of docs/benchmarks.md "Performance round": the daemon against bench/nvml_init_rss).
"""
import argparse
import collections
import re
import sys


def read(pid):
    rss, anon = collections.Counter(), collections.Counter()
    name = None
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
                parts = line.split(None, 5)
                name = parts[5].strip() if len(parts) > 5 else "[anon]"
            elif line.startswith("Rss:"):
                rss[name] += int(line.split()[1])
            elif line.startswith("Anonymous:"):
                anon[name] += int(line.split()[1])
    return rss, anon


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("pid", type=int)
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--tag", default="")
    a = ap.parse_args()
    rss, anon = read(a.pid)
    tag = f"{a.tag} " if a.tag else ""
    for name, kib in rss.most_common(a.top):
        print(f"{tag}{kib:8d} {anon[name]:8d}  {name}")
    print(f"{tag}{sum(rss.values()):8d} {sum(anon.values()):8d}  total (Rss, Anonymous KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

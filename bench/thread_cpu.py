#!/usr/bin/env python3
"""Per-thread CPU of a running process over a window, grouped by thread name.

Usage: thread_cpu.py PID SECONDS [--collections N]

Reads each thread's CPU time (/proc/PID/task/*/schedstat, in ns; utime + stime of its stat, in
clock ticks, where the kernel keeps no schedstat) and its name (comm) at the start and the end
of the window and prints, per thread name (the daemon names its threads: util/thread_name.h),
the CPU it used in milliseconds per second of the window, and per collection when
--collections is given (the number of collections in the window, e.g. SECONDS at -c 1000).
Threads that started or ended inside the window count from their first or to their last reading.
It is how bench/gpu.sh's "CPU above the floor" is split by part of the daemon (docs/benchmarks.md).
"""
import argparse
import os
import sys
import time


def read_threads(pid):
    hz = os.sysconf("SC_CLK_TCK")
    out = {}
    base = f"/proc/{pid}/task"
    for tid in os.listdir(base):
        try:
            with open(f"{base}/{tid}/comm") as f:
                name = f.read().strip()
            try:
                with open(f"{base}/{tid}/schedstat") as f:
                    out[tid] = (name, int(f.read().split()[0]) / 1e9)
                    continue
            except (OSError, ValueError, IndexError):
                pass
            with open(f"{base}/{tid}/stat") as f:
                stat = f.read()
        except OSError:
            continue  # the thread ended while we looked
        fields = stat[stat.rindex(")") + 2:].split()
        out[tid] = (name, (int(fields[11]) + int(fields[12])) / hz)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("pid", type=int)
    ap.add_argument("seconds", type=float)
    ap.add_argument("--collections", type=float, default=0)
    a = ap.parse_args()
    first = read_threads(a.pid)
    t0 = time.monotonic()
    time.sleep(a.seconds)
    last = read_threads(a.pid)
    secs = time.monotonic() - t0
    by_name = {}
    for tid, (name, cpu) in last.items():
        start = first.get(tid, (name, 0.0))[1]
        by_name[name] = by_name.get(name, 0.0) + cpu - start
    total = sum(by_name.values())
    for name, cpu in sorted(by_name.items(), key=lambda kv: -kv[1]):
        per = f" {1000 * cpu / a.collections:8.2f} ms/collection" if a.collections else ""
        print(f"{name:16s} {1000 * cpu / secs:8.2f} ms/s{per}")
    per = f" {1000 * total / a.collections:8.2f} ms/collection" if a.collections else ""
    print(f"{'total':16s} {1000 * total / secs:8.2f} ms/s{per}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

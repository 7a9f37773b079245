#!/usr/bin/env python3
"""The daemon out of file descriptors (a low `ulimit -n`): it refuses cleanly, logs once per
streak, does not spin, and recovers.

  1. 150 connections that each send half a request exhaust the daemon's 96 descriptors. A new
     client gets an answer promptly (a half request yields its descriptor; else the reserve
     descriptor drains the backlog with a 503), never a hang; the daemon's CPU stays low
     (backoff, no busy loop); the log has one "out of file descriptors" line.
  2. The busy connections close: the next scrape succeeds, and the log says once that accepting
     works again.
  3. 150 connections that each make one request and stay idle (keep-alive): scrapes keep
     succeeding meanwhile, because idle connections make room (evicted, counted).
  4. The issue's reproduction: `ulimit -n 1024`, the default connection limit, 1100 connections
     that each make one request and go idle: every scrape meanwhile succeeds (it locked
     scrapers out for 120 s, logging "accept failed" every 100 ms, before the limit existed).

usage: fd_exhaustion_test.py EXPORTER SOURCE_DIR
"""
import os
import re
import resource
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pylib"))
from net import free_port  # noqa: E402

exporter, source_dir = sys.argv[1:3]
work = tempfile.mkdtemp()


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    print(open(log_path).read()[-3000:], file=sys.stderr)
    sys.exit(1)


def scrape(port, timeout=2.0):
    """(status, seconds); status 0 when no HTTP answer."""
    start = time.time()
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=timeout) as r:
            r.read()
            return r.status, time.time() - start
    except urllib.error.HTTPError as e:
        return e.code, time.time() - start
    except OSError:
        return 0, time.time() - start


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_daemon(nofile, log_name, flags=""):
    """(process, port) of the daemon under `ulimit -n nofile`, once it serves /metrics. Its
    stderr goes to log_name in the work folder, which fail() prints from now on."""
    global log_path
    port = free_port()
    log_path = os.path.join(work, log_name)
    cmd = (f"ulimit -n {nofile} && exec {exporter} --fake-gpus "
           f"-f {source_dir}/etc/default-counters.csv -a 127.0.0.1:{port} -c 1000 {flags}")
    with open(log_path, "w") as log:
        proc = subprocess.Popen(["bash", "-c", cmd], stdout=subprocess.DEVNULL, stderr=log)
    for _ in range(100):
        if scrape(port)[0] == 200:
            return proc, port
        time.sleep(0.1)
    proc.terminate()
    proc.wait(timeout=10)
    fail("daemon did not serve")


def open_idle(port, n, sources=("127.0.0.1",)):
    """n connections that each make one request, read its answer and stay open (keep-alive),
    from the given loopback addresses in turn (each holds at most a quarter of the daemon's
    connection limit); those that fail are left out."""
    idle = []
    for i in range(n):
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=5,
                                         source_address=(sources[i % len(sources)], 0))
            s.sendall(b"GET /health HTTP/1.1\r\nHost: t\r\n\r\n")
            s.recv(4096)
            idle.append(s)
        except OSError:
            pass
    return idle


proc, port = start_daemon(96, "exporter.log", "--web-max-connections 1000 --web-read-timeout 60s")
try:
    # 1. Exhaustion by busy connections.
    busy = []
    for _ in range(150):
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        s.sendall(b"GET /metrics HTTP/1.1\r\n")
        busy.append(s)
    time.sleep(1.0)
    status, took = scrape(port, timeout=3)
    # A half-sent request yields its descriptor to a newcomer (hardening round two, row 1): the
    # new client is served; 503 or a close would be acceptable too, a hang is not.
    if status not in (0, 200, 503) or took > 2.5:
        fail(f"exhausted: a new client got {status} after {took:.2f}s (want an answer, fast)")
    cpu0 = cpu_seconds(proc.pid)
    time.sleep(2.0)
    spent = cpu_seconds(proc.pid) - cpu0
    if spent > 0.5:
        fail(f"exhausted: {spent:.2f}s of CPU in 2s (spinning on accept?)")
    logs = open(log_path).read()
    n = len(re.findall(r"out of file descriptors", logs))
    if n != 1:
        fail(f"{n} 'out of file descriptors' lines, want 1 per streak")
    print(f"ok: exhausted -> new client got {status or 'a close'} in {took:.2f}s, "
          f"{spent:.2f}s CPU in 2s, one log line")

    # 2. Recovery.
    for s in busy:
        s.close()
    deadline = time.time() + 5
    while time.time() < deadline and scrape(port)[0] != 200:
        time.sleep(0.1)
    if scrape(port)[0] != 200:
        fail("did not recover after the busy connections closed")
    # The recovery line comes with the first accept after 5 s without a failure.
    deadline = time.time() + 10
    while time.time() < deadline:
        scrape(port)
        if re.search(r"accepting connections again", open(log_path).read()):
            break
        time.sleep(0.5)
    logs = open(log_path).read()
    if len(re.findall(r"accepting connections again", logs)) != 1:
        fail("want one 'accepting connections again' line")
    print("ok: recovers, one recovery line")

    # 3. Idle keep-alive flood: scrapes succeed meanwhile (idle connections are evicted).
    idle = open_idle(port, 150)
    worst = 0.0
    for _ in range(10):
        status, took = scrape(port)
        worst = max(worst, took)
        if status != 200:
            fail(f"idle flood: scrape got {status}")
        time.sleep(0.1)
    for s in idle:
        s.close()
    time.sleep(1.5)  # the next page carries the counters
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
        page = r.read().decode()
    m = re.search(r'^nvml_exporter_http_connections_total\{outcome="evicted"\} (\d+)', page, re.M)
    if not m or int(m.group(1)) == 0:
        fail("idle flood: no evicted connections counted on /metrics")
    print(f"ok: 150 idle connections: 10 scrapes all 200 (worst {worst * 1000:.0f} ms), "
          f"{m.group(1)} evicted")
finally:
    proc.terminate()
    proc.wait(timeout=10)

# 4. 1100 idle keep-alive connections against ulimit -n 1024 and the default limit.
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
if hard != resource.RLIM_INFINITY and hard < 1300:
    print(f"skip: 1100 connections need RLIMIT_NOFILE >= 1300 here (hard limit {hard})")
else:
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1300), hard))
    proc, port = start_daemon(1024, "exporter2.log")
    try:
        idle = open_idle(port, 1100)
        worst, bad = 0.0, 0
        for _ in range(20):
            status, took = scrape(port)
            worst = max(worst, took)
            bad += status != 200
            time.sleep(0.1)
        for s in idle:
            s.close()
        if bad:
            fail(f"1100 idle connections: {bad} of 20 scrapes failed")
        accept_lines = len(re.findall(r"accept failed", open(log_path).read()))
        if accept_lines > 1:
            fail(f"{accept_lines} 'accept failed' lines, want at most one per streak")
        print(f"ok: ulimit -n 1024, 1100 idle connections: 20 of 20 scrapes 200 "
              f"(worst {worst * 1000:.0f} ms)")
    finally:
        proc.terminate()
        proc.wait(timeout=10)
# 5. Hardening round two, row 9: real EMFILE under a connection limit above what the descriptors
#    allow (--web-max-connections 4000, ulimit -n 1024): evicting idle connections lets one
#    accept through before the table fills again. The "out of file descriptors" line is logged
#    once per streak (it flipped every ~10 ms: ~3800 lines in 20 s), and scrapes still succeed.
if hard != resource.RLIM_INFINITY and hard < 1300:
    print(f"skip: row 9 needs RLIMIT_NOFILE >= 1300 here (hard limit {hard})")
else:
    proc, port = start_daemon(1024, "exporter3.log", "--web-max-connections 4000")
    # From four addresses: one holds at most a quarter of the limit (1000), which alone would
    # keep the table from filling.
    flood = ("127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5")
    try:
        idle = open_idle(port, 1100, flood)
        bad = 0
        for _ in range(30):
            more = open_idle(port, 20, flood)  # keep the table full: each eviction is refilled
            idle.extend(more)
            bad += scrape(port)[0] != 200
            time.sleep(0.1)
        for s in idle:
            s.close()
        lines = len(re.findall(r"out of file descriptors", open(log_path).read()))
        if lines == 0:
            fail("row 9: the flood never ran the daemon out of descriptors (the test did not bite)")
        if lines > 1:
            fail(f"row 9: {lines} 'out of file descriptors' lines in ~5 s, want one per streak")
        if bad > 3:
            fail(f"row 9: {bad} of 30 scrapes failed under the flood")
        print(f"ok: EMFILE under --web-max-connections 4000: {lines} log line, {30 - bad} of 30 "
              f"scrapes 200")
    finally:
        proc.terminate()
        proc.wait(timeout=10)
print("fd_exhaustion_test: pass")

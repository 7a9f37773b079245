#!/usr/bin/env python3
"""Hardening round two's adversarial benchmark (issue 28): a good scraper's success rate and
latency under each attack, beside the same scraper unattacked, in one invocation. Bounded: each
phase runs PHASE_S seconds (default 15) against a fresh daemon on 8 simulated GPUs under
`ulimit -n 1024` (connection limit 512). Reported, not asserted; target >= 99 % per attack.

  baseline      no attack (plain HTTP)
  slowloris     600 sockets from 127.0.0.2 that send half a request header and are reopened as
                soon as they close, at the connection limit
  auth-baseline basic auth (bcrypt cost 10), no attack: the scraper's first check is uncached
  auth-storm    40 clients on 127.0.0.3-6 sending wrong passwords as fast as answered, while the
                scraper (right password, uncached at its first scrape) scrapes
  rewrite-storm the collectors file truncated, then rewritten 0.3 s later, over and over; a
                scrape counts only when it holds all 8 GPUs' series of every field

The scraper scrapes every SCRAPE_MS ms (default 100) on a new connection; success = 200 within
2 s (and, for the rewrite storm, the complete page).

usage: adversarial.py EXPORTER SOURCE_DIR DOC [--write]
"""
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import base64
import datetime

exporter, source_dir, doc = sys.argv[1:4]
write = sys.argv[4] if len(sys.argv) > 4 else ""
sys.path.insert(0, os.path.join(source_dir, "bench"))
sys.path.insert(0, os.path.join(source_dir, "test", "pylib"))
from doc_section import publish  # noqa: E402
from net import free_port  # noqa: E402

PHASE_S = float(os.environ.get("PHASE_S", "15"))
SCRAPE_S = float(os.environ.get("SCRAPE_MS", "100")) / 1000
work = tempfile.mkdtemp()
COST10 = "$2b$10$cLTpLCeQz0brzZB6qzwM8uz3kOZLryPKfOBfWMUm/tm54DmA9S4j."  # "fakepassword"
FIELDS = ["DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE",
          "DCGM_FI_DEV_FB_USED"]
CSV_FULL = "".join(f"{f}, gauge, {f}\n" for f in FIELDS)


def start(flags, csv_path):
    port = free_port()
    log = open(os.path.join(work, f"exporter-{port}.log"), "w")
    cmd = (f"ulimit -n 1024 && exec {exporter} --fake-gpus-scenario "
           f"{source_dir}/testdata/scenarios/eight_gpus.yaml -f {csv_path} "
           f"-a 127.0.0.1:{port} -c 1000 {flags}")
    proc = subprocess.Popen(["bash", "-c", cmd], stdout=subprocess.DEVNULL, stderr=log)
    for _ in range(100):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                break
        except OSError:
            time.sleep(0.1)
    time.sleep(1.5)  # the first collections
    return proc, port


def scrape(port, auth=None, complete=False):
    req = urllib.request.Request(f"http://127.0.0.1:{port}/metrics")
    if auth:
        req.add_header("Authorization", "Basic " + base64.b64encode(auth.encode()).decode())
    t0 = time.monotonic()
    try:
        with urllib.request.urlopen(req, timeout=2) as r:
            body = r.read().decode()
            ok = r.status == 200
    except Exception:
        return False, time.monotonic() - t0
    took = time.monotonic() - t0
    if ok and complete:
        ok = all(len(re.findall(rf"^{f}{{", body, re.M)) == 8 for f in FIELDS)
    return ok, took


def run_scraper(port, auth=None, complete=False):
    results = []
    end = time.monotonic() + PHASE_S
    while time.monotonic() < end:
        results.append(scrape(port, auth, complete))
        time.sleep(SCRAPE_S)
    return results


def slowloris(port, stop):
    fds = [None] * 600
    i = 0
    while not stop.is_set():
        k = i % len(fds)
        i += 1
        if fds[k] is not None:
            try:
                fds[k].send(b"X: y\r\n")  # still open: keep trickling
                if i % 3:
                    continue
            except OSError:
                pass
            fds[k].close()
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=1,
                                         source_address=("127.0.0.2", 0))
            s.send(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
            fds[k] = s
        except OSError:
            fds[k] = None
        time.sleep(0.001)
    for s in fds:
        if s is not None:
            s.close()


def password_storm(port, stop, n):
    def one(t):
        src = f"127.0.0.{3 + t % 4}"
        i = 0
        while not stop.is_set():
            i += 1
            try:
                s = socket.create_connection(("127.0.0.1", port), timeout=2,
                                             source_address=(src, 0))
                cred = base64.b64encode(f"prom:wrong{t}_{i}".encode()).decode()
                s.sendall(f"GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Basic {cred}\r\n"
                          "Connection: close\r\n\r\n".encode())
                s.recv(256)
                s.close()
            except OSError:
                time.sleep(0.01)
    threads = [threading.Thread(target=one, args=(t,)) for t in range(n)]
    for t in threads:
        t.start()
    return threads


def rewrite_storm(path, stop):
    while not stop.is_set():
        open(path, "w").close()  # truncated, as a ConfigMap update or an editor can leave it
        time.sleep(0.3)
        with open(path, "w") as f:
            f.write(CSV_FULL)
        time.sleep(0.7)


def phase(name, flags="", attack=None, auth=None, complete=False):
    csv_path = os.path.join(work, f"{name}.csv")
    with open(csv_path, "w") as f:
        f.write(CSV_FULL)
    proc, port = start(flags, csv_path)
    stop = threading.Event()
    threads = []
    try:
        if attack == "slowloris":
            threads = [threading.Thread(target=slowloris, args=(port, stop))]
        elif attack == "auth":
            threads = password_storm(port, stop, 40)
        elif attack == "rewrite":
            threads = [threading.Thread(target=rewrite_storm, args=(csv_path, stop))]
        for t in threads:
            if not t.is_alive():
                t.start()
        time.sleep(2 if attack else 0)  # the attack in full swing
        res = run_scraper(port, auth, complete)
    finally:
        stop.set()
        for t in threads:
            t.join()
        proc.terminate()
        proc.wait(timeout=10)
    lat = sorted(t for ok, t in res if ok)
    n = len(res)
    good = sum(1 for ok, _ in res if ok)
    p50 = statistics.median(lat) * 1000 if lat else float("nan")
    p99 = lat[min(len(lat) - 1, int(0.99 * len(lat)))] * 1000 if lat else float("nan")
    return name, n, good, p50, p99


web = os.path.join(work, "web.yml")
with open(web, "w") as f:
    f.write(f"basic_auth_users:\n  prom: {COST10}\n")
rows = [
    phase("baseline"),
    phase("slowloris", attack="slowloris"),
    phase("auth-baseline", flags=f"--web-config-file {web}", auth="prom:fakepassword"),
    phase("auth-storm", flags=f"--web-config-file {web}", attack="auth", auth="prom:fakepassword"),
    phase("rewrite-baseline", complete=True),
    phase("rewrite-storm", attack="rewrite", complete=True),
]
base = {"slowloris": "baseline", "auth-storm": "auth-baseline", "rewrite-storm": "rewrite-baseline"}
by = {r[0]: r for r in rows}
lines = ["| phase | scrapes | succeeded | success % | p50 ms | p99 ms | p99 / its baseline's |",
         "|---|---|---|---|---|---|---|"]
for name, n, good, p50, p99 in rows:
    ratio = f"{p99 / by[base[name]][4]:.2f}" if name in base else "-"
    lines.append(f"| {name} | {n} | {good} | {100 * good / n:.1f} | {p50:.1f} | {p99:.1f} | {ratio} |")
sec = "\n".join([
    "## Adversarial scrapes (`bench/adversarial.sh`)", "",
    f"Measured by `bench/adversarial.sh` on {datetime.date.today()}: a scraper every "
    f"{SCRAPE_S * 1000:.0f} ms on a new connection for {PHASE_S:.0f} s per phase, against a fresh "
    "daemon on 8 simulated GPUs under `ulimit -n 1024` (connection limit 512), each attack beside "
    "an unattacked baseline of the same configuration in the same invocation. Success: 200 within "
    "2 s (rewrite phases: and every GPU's series of all 4 fields). Attacks (hardening round two, "
    "issue 28): 600 half-header sockets from one other address, reopened as they close; 40 "
    "clients sending wrong passwords (bcrypt cost 10) from four other addresses while the "
    "scraper's password is not cached at its first scrape; the collectors file truncated and "
    "rewritten 0.3 s later every second. Target: >= 99 % under each attack.", "",
    *lines, ""])
publish(doc, "## Adversarial scrapes", sec, write)

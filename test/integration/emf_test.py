#!/usr/bin/env python3
"""EMF end to end: the running daemon on 8 simulated GPUs sends EMF documents to a real TCP
listener, a real UDP listener and a file at once. Every document received is checked with the
test suite's EMF validator (build/test/emf/emf_validate). The TCP listener is killed mid-run and
restarted on the same port: /metrics keeps answering during the outage, drops are counted there,
and the daemon reconnects and delivers again. A bad --emf-config makes the daemon refuse to start
with file:line, not crash. A reader that closes stdout early does not kill the daemon (one
simulated GPU, one_gpu.yaml): the stdout output's drops are counted instead.

usage: emf_test.py EXPORTER EMF_VALIDATE SOURCE_DIR
"""
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pylib"))
from net import free_port  # noqa: E402

exporter, validate, src = sys.argv[1:4]
work = tempfile.mkdtemp(prefix="emf_it_")
procs = []


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    for p in procs:
        p.kill()
    log = os.path.join(work, "exporter.log")
    if os.path.exists(log):
        sys.stderr.write(open(log).read()[-4000:])
    sys.exit(1)


class TcpListener:
    """Accepts connections and collects newline-delimited lines until closed."""

    def __init__(self, port):
        self.lines, self.lock = [], threading.Lock()
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", port))
        self.sock.listen(8)
        self.conns, self.closed = [], False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self.closed:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(c)
            threading.Thread(target=self._read, args=(c,), daemon=True).start()

    def _read(self, c):
        buf = b""
        while True:
            try:
                data = c.recv(65536)
            except OSError:
                return
            if not data:
                return
            buf += data
            *complete, buf = buf.split(b"\n")
            with self.lock:
                self.lines.extend(complete)

    def count(self):
        with self.lock:
            return len(self.lines)

    def kill(self):
        self.closed = True
        for c in self.conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            c.close()
        # shutdown() first: a thread blocked in accept() keeps a closed socket listening.
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()


class UdpListener:
    def __init__(self, port):
        self.datagrams, self.lock = [], threading.Lock()
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
        self.sock.bind(("127.0.0.1", port))
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        while True:
            data, _ = self.sock.recvfrom(65536)
            with self.lock:
                self.datagrams.append(data)

    def count(self):
        with self.lock:
            return len(self.datagrams)


def wait_for(what, cond, secs=15):
    end = time.time() + secs
    while time.time() < end:
        if cond():
            return
        time.sleep(0.05)
    fail(f"timed out waiting for {what}")


def scrape(port, timeout=2):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=timeout) as r:
        return r.read().decode()


def counter(text, name, sink):
    m = re.search(rf'^{name}{{sink="{re.escape(sink)}"}} (\d+)$', text, re.M)
    return int(m.group(1)) if m else None


def check_valid(lines, what):
    path = os.path.join(work, f"{what}.jsonl")
    with open(path, "wb") as f:
        for l in lines:
            f.write(l + b"\n")
    r = subprocess.run([validate, path], capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"invalid EMF from {what}:\n{r.stdout[-3000:]}")
    print(f"ok: {what}: {r.stdout.strip().splitlines()[-1]}")


# 1. A bad rules file: refused at start, with the file and line, exit 2.
bad = f"{src}/testdata/emf/bad_flat_dimensions.json"
csv = f"{src}/etc/default-counters.csv"
r = subprocess.run([exporter, "--fake-gpus", "-f", csv, "-a", "127.0.0.1:0", "--emf-output",
                    "stdout", "--emf-config", bad], capture_output=True, text=True, timeout=30)
if r.returncode != 2 or f"{bad}:5:" not in r.stderr or "array of arrays" not in r.stderr:
    fail(f"bad --emf-config: rc={r.returncode} stderr={r.stderr!r}")
r = subprocess.run([exporter, "--fake-gpus", "-f", csv, "--emf-output", "tcp://nohost"],
                   capture_output=True, text=True, timeout=30)
if r.returncode != 2 or "tcp://nohost" not in r.stderr:
    fail(f"bad --emf-output: rc={r.returncode} stderr={r.stderr!r}")
print("ok: bad EMF flags and files refused with exit 2 and a clear message")

# 2. A reader that closes stdout early: the stdout output fails (drops counted), the daemon
# lives on and keeps serving.
port = free_port()
p = subprocess.Popen([exporter, "--fake-gpus-scenario", f"{src}/testdata/scenarios/one_gpu.yaml",
                      "-f", f"{src}/etc/dcp-metrics-included.csv", "-c", "200",
                      "-a", f"127.0.0.1:{port}", "--emf-output", "stdout", "--emf-queue-size", "5"],
                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
procs.append(p)
first = p.stdout.readline()
if not first.startswith(b'{"_aws":'):
    fail(f"stdout output: {first[:200]!r}")
check_valid([first.rstrip(b"\n")], "stdout-one-gpu")
if json.loads(first)["gpu"] != "0":
    fail("one_gpu.yaml: expected GPU 0")
p.stdout.close()


def stdout_dropped():
    try:
        return (counter(scrape(port), "nvml_exporter_emf_dropped_total", "stdout") or 0) > 0
    except OSError:
        return False
wait_for("drops on a closed stdout", stdout_dropped)
if p.poll() is not None:
    fail(f"the daemon died when stdout closed (rc={p.returncode})")
p.terminate()
p.wait(timeout=15)
procs.remove(p)
print("ok: closed stdout: the daemon lives, drops counted")

# 3. The daemon with three outputs at once.
tcp_port, udp_port, http_port = free_port(), free_port(socket.SOCK_DGRAM), free_port()
tcp, udp = TcpListener(tcp_port), UdpListener(udp_port)
tcp_sink, udp_sink = f"tcp://127.0.0.1:{tcp_port}", f"udp://127.0.0.1:{udp_port}"
emf_file = os.path.join(work, "emf.log")
log = open(os.path.join(work, "exporter.log"), "w")
procs.append(subprocess.Popen(
    [exporter, "--fake-gpus", "--fake-gpus-scenario", f"{src}/testdata/scenarios/eight_gpus.yaml",
     "-f", f"{src}/etc/dcp-metrics-included.csv", "-c", "200", "-a", f"127.0.0.1:{http_port}",
     "--emf-output", tcp_sink, "--emf-output", udp_sink, "--emf-output", f"file:{emf_file}",
     "--emf-cluster-name", "it-cluster", "--emf-queue-size", "40"],
    stdout=log, stderr=subprocess.STDOUT))
wait_for("16 documents on TCP and UDP", lambda: tcp.count() >= 16 and udp.count() >= 16)
# The counters on the page are those of the last collection (the page is rendered then). The
# daemon listens only after its collector started, so documents can arrive before the port
# accepts (under TSan, often): a refused connection here means "not yet".
def tcp_sent():
    try:
        return (counter(scrape(http_port), "nvml_exporter_emf_sent_total", tcp_sink) or 0) > 0
    except OSError:
        return False
wait_for("sent_total of the TCP sink in /metrics", tcp_sent)
print(f"ok: TCP and UDP receive documents ({tcp.count()}, {udp.count()})")

# 4. Kill the TCP receiver: /metrics keeps answering, drops are counted.
before_outage = tcp.count()
tcp.kill()
dropped = 0
t_end = time.time() + 20
while time.time() < t_end:
    t0 = time.time()
    text = scrape(http_port, timeout=2)  # raises (fails the test) if /metrics stops answering
    if time.time() - t0 > 1.5:
        fail("/metrics slow during the outage")
    dropped = counter(text, "nvml_exporter_emf_dropped_total", tcp_sink) or 0
    if dropped > 0:
        break
    time.sleep(0.1)
if dropped == 0:
    fail("no drops counted while the TCP receiver is down")
udp_during = udp.count()
wait_for("UDP keeps receiving during the TCP outage", lambda: udp.count() > udp_during + 8)
print(f"ok: TCP receiver down: /metrics answers, dropped_total={dropped}, UDP unaffected")

# 5. Restart it on the same port: the daemon reconnects.
sent_in_outage = counter(scrape(http_port), "nvml_exporter_emf_sent_total", tcp_sink)
tcp = TcpListener(tcp_port)
wait_for("documents on the restarted TCP listener", lambda: tcp.count() >= 16, secs=30)
wait_for("sent_total growing again", lambda: counter(
    scrape(http_port), "nvml_exporter_emf_sent_total", tcp_sink) > sent_in_outage + 8)
print(f"ok: reconnected; sent_total {sent_in_outage} -> "
      f"{counter(scrape(http_port), 'nvml_exporter_emf_sent_total', tcp_sink)}")

procs[0].terminate()
procs[0].wait(timeout=15)

# 6. Everything received is valid EMF; the content is what the rules select.
check_valid(tcp.lines, "tcp")
with udp.lock:
    datagrams = list(udp.datagrams)
if any(b"\n" in d for d in datagrams):
    fail("a UDP datagram holds more than one document")
check_valid(datagrams, "udp")
check_valid(open(emf_file, "rb").read().splitlines(), "file")
docs = [json.loads(d) for d in datagrams]
gpus = {d["gpu"] for d in docs}
if gpus != {str(i) for i in range(8)}:
    fail(f"documents for GPUs {sorted(gpus)}, expected 0..7")
for d in docs:
    if d["ClusterName"] != "it-cluster" or d["_aws"].get("LogGroupName") != \
            "/aws/containerinsights/it-cluster/prometheus":
        fail(f"cluster name / log group wrong: {d['_aws']}")
util = [d for d in docs if "DCGM_FI_DEV_GPU_UTIL" in d]
if not util or util[0]["_aws"]["CloudWatchMetrics"][0]["Dimensions"] != \
        [["ClusterName", "NodeName", "gpu"]]:
    fail(f"unexpected dimensions: {util[:1]}")
print("emf_test: all passed")

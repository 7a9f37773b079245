#!/usr/bin/env python3
"""Hardening round three's adversarial benchmark (issue 36): the round's five attacks, each run
against the daemon under test and, when --old names a second binary (e.g. the build before the
round), against that one too, side by side in one invocation. Reported, not asserted.

  1 slowloris   at the connection limit: a daemon on 8 simulated GPUs under `ulimit -n 1024`
                (its limit is then 512); 600 sockets each sending half a request header, reopened
                as the server closes them (and some closed at random by us), from 127.0.0.2 in
                one variant and from the scraper's own 127.0.0.1 in the other; a scraper on
                127.0.0.1 every 0.5 s (success: 200 within 2 s). RUNS runs of ATTACK_S seconds
                per variant. Per binary: runs wedged (after the attack a scrape still fails for
                5 s), runs in which it died, scrape success % during the attack, the first
                scrape after it, and SIGTERM (time to exit, exit code; SIGKILL after 15 s:
                "unkillable").
  2 state-file  --kubernetes-process-metrics --state-dir DIR (as test/integration/
                pod_energy_test.sh runs it: fake API server, processes.yaml, testdata/proc) with
                DIR/pod-energy.json replaced by something hostile (a wrong type in "version",
                "saved", "grown"; a FIFO; a link to /dev/zero; a directory; 40 MB of JSON
                whitespace then garbage; a GPU index of 2^40; 1e308 joules; random bytes). The
                hostile documents are made from a file the same binary saved a moment before.
                Per case: /metrics within 10 s (how long), exit status if it died, whether the
                file was set aside (pod-energy.json.bad), peak RSS (VmHWM; killed at RSS_CAP_MB),
                error log lines naming the file.
  3 sigkill     the same pod set-up with --state-dir and -c 300; KILLS SIGKILLs 2-15 s apart
                (random, SEED), a restart after each; the per-pod energy series just before each
                kill and on the first page after the restart that has them. Per binary: series
                that went back across a restart, the largest step back, and the growth of the
                per-pod series (summed) over the whole run beside that of the GPUs' own counters
                (DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION): end minus start, and summed over each
                process's life (the old simulator restarts its counter in every process).
  4 containers  --container-labels with an engine stub (in this script, on a unix socket:
                GET /containers/json and /containers/<id>/json, answered from memory, as fast as
                Python can) listing CONTAINERS running containers all given GPU 0. Per binary:
                DCGM_FI_DEV_GPU_TEMP lines, page bytes, the daemon's CPU % over CPU_S seconds
                (scraped once a second meanwhile), RSS, and the nvml_exporter_* lines that
                mention containers (a counter of dropped copies, if there is one).
  5 big-yaml    --config-file with one YAML_MB MB string value (metrics.file): time to exit (exit 2
                expected), stderr's length and its first 200 characters.

usage: adversarial_round3.py EXPORTER SOURCE_DIR DOC [--old OLD_EXPORTER] [--write]
                             [--attacks 1,2,3,4,5]

  EXPORTER      the daemon under test ("new"); OLD_EXPORTER the one to compare with ("old"). Each
                finds its own simulated NVML beside its build (src/app/app.cc FindSimulator).
  DOC           docs/benchmarks.md: with --write the section "## Adversarial round three" is
                replaced there (bench/doc_section.py); the section is printed either way.

Environment knobs (defaults give ~5 min for one binary, ~10 min with --old):
  RUNS=3 ATTACK_S=20      slowloris runs per variant and binary, seconds of attack per run
  KILLS=5 SEED=36         SIGKILLs per binary, the seed of their moments
  CONTAINERS=5000 CPU_S=10
  YAML_MB=50 GARBAGE_MB=40 RSS_CAP_MB=2048
  KEEP_WORK=1             keep the work folder (logs, state files) for a look afterwards
Every process started is killed on the way out, on errors and on SIGINT/SIGTERM too.
"""
import argparse
import atexit
import datetime
import json
import os
import random
import re
import resource
import selectors
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("exporter")
ap.add_argument("source_dir")
ap.add_argument("doc")
ap.add_argument("--old", help="a second exporter to compare with")
ap.add_argument("--write", action="store_true", help="replace the section in DOC")
ap.add_argument("--attacks", default="1,2,3,4,5", help="which attacks, e.g. 1,3")
args = ap.parse_args()
SRC = os.path.abspath(args.source_dir)
sys.path.insert(0, os.path.join(SRC, "bench"))
sys.path.insert(0, os.path.join(SRC, "test", "pylib"))
from doc_section import publish  # noqa: E402
from net import free_port  # noqa: E402

RUNS = int(os.environ.get("RUNS", "3"))
ATTACK_S = float(os.environ.get("ATTACK_S", "20"))
KILLS = int(os.environ.get("KILLS", "5"))
SEED = int(os.environ.get("SEED", "36"))
CONTAINERS = int(os.environ.get("CONTAINERS", "5000"))
CPU_S = float(os.environ.get("CPU_S", "10"))
YAML_MB = int(os.environ.get("YAML_MB", "50"))
GARBAGE_MB = int(os.environ.get("GARBAGE_MB", "40"))
RSS_CAP_MB = int(os.environ.get("RSS_CAP_MB", "2048"))
BINARIES = [("new", os.path.abspath(args.exporter))]
if args.old:
    BINARIES.append(("old", os.path.abspath(args.old)))
WORK = tempfile.mkdtemp(prefix="adversarial3-")
TICK = os.sysconf("SC_CLK_TCK")

# --- processes: every one started is registered and killed on the way out -------------------
PROCS = []


def spawn(cmd, **kw):
    p = subprocess.Popen(cmd, **kw)
    PROCS.append(p)
    return p


def cleanup():
    for p in PROCS:
        if p.poll() is None:
            try:
                p.kill()
            except OSError:
                pass
    for p in PROCS:
        try:
            p.wait(timeout=10)
        except Exception:
            pass
    if not os.environ.get("KEEP_WORK"):
        shutil.rmtree(WORK, ignore_errors=True)


atexit.register(cleanup)


def on_signal(sig, _frame):
    raise SystemExit(128 + sig)  # unwinds through the finally blocks, then atexit


signal.signal(signal.SIGTERM, on_signal)
signal.signal(signal.SIGINT, on_signal)
# 600 attacking sockets and the engine stub's: well under the hard limit, maybe not the soft one.
_soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (_hard, _hard))


def proc_status(pid, key):
    """A kB value of /proc/PID/status (VmRSS, VmHWM) in MB, or None."""
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def cpu_seconds(pid):
    try:
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime
    except (OSError, IndexError):
        return None


def describe_exit(code):
    if code is None:
        return "running"
    return f"signal {signal.Signals(-code).name}" if code < 0 else f"exit {code}"


class Daemon:
    """One nvml-exporter on simulated GPUs, its stderr in a log file of WORK."""

    def __init__(self, binary, flags, name, env=None, ulimit=None):
        self.port = free_port()
        self.log = os.path.join(WORK, f"{name}-{self.port}.log")
        argv = [binary, "--fake-gpus", "-a", f"127.0.0.1:{self.port}", *flags]
        if ulimit:
            argv = ["bash", "-c", f'ulimit -n {ulimit} && exec "$@"', "bash", *argv]
        with open(self.log, "w") as log:
            self.proc = spawn(argv, stdout=subprocess.DEVNULL, stderr=log,
                              env={**os.environ, **(env or {})})
        self.pid = self.proc.pid
        self.started = time.monotonic()
        self.hwm = 0.0
        self.capped = False

    def url(self, path="/metrics"):
        return f"http://127.0.0.1:{self.port}{path}"

    def alive(self):
        return self.proc.poll() is None

    def sample_rss(self):
        v = proc_status(self.pid, "VmHWM")
        if v is not None and self.alive():
            self.hwm = max(self.hwm, v)
        return v

    def wait_page(self, secs, pattern=None):
        """Polls /metrics until a 200 (whose body matches `pattern`, if given) or `secs` passed
        or the daemon died or grew past RSS_CAP_MB (then killed). Returns the body or None."""
        end = time.monotonic() + secs
        while time.monotonic() < end and self.alive():
            if (self.sample_rss() or 0) > RSS_CAP_MB:
                self.proc.kill()
                self.proc.wait()
                self.capped = True
                return None
            ok, _, body = get(self.url(), timeout=min(2, max(0.1, end - time.monotonic())))
            if ok and (pattern is None or re.search(pattern, body, re.M)):
                return body
            time.sleep(0.1)
        return None

    def stop(self, sig=signal.SIGTERM, grace=15):
        """Sends `sig`; returns (seconds to exit, exit code), code None when it had to be
        SIGKILLed after `grace` seconds."""
        if not self.alive():
            return 0.0, self.proc.returncode
        t0 = time.monotonic()
        self.proc.send_signal(sig)
        try:
            code = self.proc.wait(timeout=grace)
            return time.monotonic() - t0, code
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return time.monotonic() - t0, None

    def log_text(self):
        try:
            return open(self.log, errors="replace").read()
        except OSError:
            return ""


def get(url, timeout=2.0):
    """(ok, seconds, body): ok is a 200 within `timeout`."""
    t0 = time.monotonic()
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            body = r.read().decode(errors="replace")
            return r.status == 200, time.monotonic() - t0, body
    except Exception:
        return False, time.monotonic() - t0, ""


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return out


def ms(s):
    return f"{s * 1000:.0f} ms" if s < 1 else f"{s:.1f} s"


# --- 1: slowloris at the connection limit ------------------------------------------------------
SLOW_SOCKETS = 600
HALF_HEADER = b"GET /metrics HTTP/1.1\r\nHost: x\r\n"


def slowloris(port, source, stop, stats, threads=4):
    """SLOW_SOCKETS half-header sockets from `source`, split over `threads` threads each with a
    selector: a socket the server closes (recv == b"" or an error) or answers is reopened at once;
    about 5 a second per thread are closed by us at random."""
    per = SLOW_SOCKETS // threads

    def worker(seed):
        rng = random.Random(seed)
        sel = selectors.DefaultSelector()
        socks = []

        def drop(s):
            sel.unregister(s)
            socks.remove(s)
            s.close()

        try:
            while not stop.is_set():
                while len(socks) < per and not stop.is_set():
                    s = socket.socket()
                    try:
                        s.settimeout(0.5)
                        s.bind((source, 0))
                        s.connect(("127.0.0.1", port))
                        s.send(HALF_HEADER)
                        s.setblocking(False)
                    except OSError:
                        s.close()
                        stats["failed"] += 1
                        time.sleep(0.005)
                        break
                    stats["opened"] += 1
                    sel.register(s, selectors.EVENT_READ)
                    socks.append(s)
                for key, _ in sel.select(timeout=0.05):
                    s = key.fileobj
                    try:
                        data = s.recv(4096)
                    except BlockingIOError:
                        continue
                    except OSError:
                        data = b""
                    stats["answered" if data else "closed"] += 1
                    drop(s)
                if socks and rng.random() < 0.25:
                    drop(rng.choice(socks))
                    stats["dropped"] += 1
        finally:
            for s in list(socks):
                s.close()
            sel.close()

    ts = [threading.Thread(target=worker, args=(SEED * 100 + i,), daemon=True)
          for i in range(threads)]
    for t in ts:
        t.start()
    return ts


def slowloris_run(binary, source, run):
    csv = os.path.join(WORK, "four.csv")
    with open(csv, "w") as f:
        for fld in ["DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE",
                    "DCGM_FI_DEV_FB_USED"]:
            f.write(f"{fld}, gauge, {fld}\n")
    d = Daemon(binary, ["--fake-gpus-scenario", f"{SRC}/testdata/scenarios/eight_gpus.yaml",
                        "-f", csv, "-c", "1000"], f"slowloris-{run}", ulimit=1024)
    stop = threading.Event()
    stats = {"opened": 0, "failed": 0, "closed": 0, "answered": 0, "dropped": 0}
    threads = []
    r = {"wedged": False, "died": None}
    try:
        if d.wait_page(20) is None:
            raise RuntimeError(f"{binary} did not serve /metrics: {d.log_text()[-500:]}")
        threads = slowloris(d.port, source, stop, stats)
        time.sleep(2)  # in full swing
        oks = []
        end = time.monotonic() + ATTACK_S
        while time.monotonic() < end and d.alive():
            ok, took, _ = get(d.url(), timeout=2)
            oks.append(ok)
            time.sleep(max(0.0, 0.5 - took))
        stop.set()
        for t in threads:
            t.join()
        r["success"] = 100 * sum(oks) / max(1, len(oks))
        r["scrapes"] = len(oks)
        # After the attack: the first scrape, then scrapes back to back for 5 s.
        t_stop = time.monotonic()
        first = None
        recovered = None
        while time.monotonic() - t_stop < 5 and d.alive():
            ok, took, _ = get(d.url(), timeout=2)
            if first is None:
                first = (ok, took)
            if ok:
                recovered = time.monotonic() - t_stop
                break
        r["first"] = first
        r["recovered"] = recovered
        r["wedged"] = recovered is None and d.alive()
        if not d.alive():
            r["died"] = describe_exit(d.proc.returncode)
        r["term"] = d.stop(signal.SIGTERM, 15)
        r["stats"] = dict(stats)
    finally:
        stop.set()
        for t in threads:
            t.join()
        d.stop(signal.SIGKILL, 5)
    return r


def attack_slowloris():
    rows = []
    for label, source in [("from 127.0.0.2", "127.0.0.2"), ("from 127.0.0.1", "127.0.0.1")]:
        results = {name: [] for name, _ in BINARIES}
        for run in range(RUNS):
            for name, binary in BINARIES:
                r = slowloris_run(binary, source, run)
                results[name].append(r)
                print(f"# slowloris {label} {name} run {run + 1}: {r}", file=sys.stderr)
        for name, _ in BINARIES:
            rs = results[name]

            def first(r):
                if r["first"] is None:
                    return "none"
                ok, took = r["first"]
                if ok:
                    return ms(took)
                return f"failed ({ms(took)}); 200 after {ms(r['recovered'])}" \
                    if r["recovered"] is not None else f"failed ({ms(took)})"

            def term(r):
                if "term" not in r:
                    return "-"
                took, code = r["term"]
                return "unkillable" if code is None else f"{ms(took)}, {describe_exit(code)}"

            rows.append([label, name, f"{sum(r['wedged'] for r in rs)} of {len(rs)}",
                         ", ".join(r["died"] or "no" for r in rs),
                         ", ".join(f"{r.get('success', 0):.0f}" for r in rs),
                         "; ".join(first(r) for r in rs),
                         "; ".join(term(r) for r in rs),
                         ", ".join(f"{r['stats']['closed'] + r['stats']['answered']}"
                                   if "stats" in r else "-" for r in rs)])
    return [
        "### 1. Slowloris at the connection limit", "",
        f"8 simulated GPUs, `ulimit -n 1024` (limit 512 connections), {SLOW_SOCKETS} sockets "
        f"sending `GET /metrics HTTP/1.1\\r\\nHost: x\\r\\n` and reopened as soon as the server "
        f"closes them (about 20 a second also closed by the attacker at random); a scraper on "
        f"127.0.0.1 every 0.5 s (200 within 2 s). {RUNS} runs of {ATTACK_S:.0f} s per variant "
        f"and binary. Wedged: after the attack, scrapes still failed for 5 s. Per run, "
        f"comma-separated.", "",
        *table(["attacker", "binary", "wedged", "died", "scrape success %",
                "first scrape after", "SIGTERM", "server-side closes"], rows), ""]


# --- the pod set-up of test/integration/pod_energy_test.sh -------------------------------------
class ApiServer:
    def __init__(self):
        d = os.path.join(WORK, "api")
        os.makedirs(os.path.join(d, "ctl"), exist_ok=True)
        with open(os.path.join(d, "ctl", "mode"), "w") as f:
            f.write("ok\n")
        self.token = os.path.join(d, "token")
        with open(self.token, "w") as f:
            f.write("test-token\n")
        self.cert, key = os.path.join(d, "cert.pem"), os.path.join(d, "key.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                        "-subj", "/CN=fake-apiserver", "-addext", "subjectAltName=IP:127.0.0.1",
                        "-keyout", key, "-out", self.cert], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = os.path.join(d, "api.port")
        self.proc = spawn(["python3", f"{SRC}/test/integration/fake_apiserver.py",
                           f"{SRC}/testdata/apiserver/pods_node1.json", self.cert, key,
                           "test-token", os.path.join(d, "ctl"), port_file],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            if os.path.exists(port_file) and open(port_file).read().strip():
                break
            time.sleep(0.1)
        self.port = int(open(port_file).read())

    def flags(self):
        return ["--kubernetes-api-server", f"https://127.0.0.1:{self.port}",
                "--kubernetes-token-file", self.token, "--kubernetes-ca-file", self.cert]


_API = []


def api():
    if not _API:
        _API.append(ApiServer())
    return _API[0]


POD_SERIES = r'^nvml_exporter_pod_gpu_energy_joules_total\{.*pod="[a-z]'


def pod_daemon(binary, state_dir, name, collect_ms=300):
    return Daemon(binary, ["-c", str(collect_ms), "--log-format", "json",
                           "-f", f"{SRC}/etc/default-counters.csv",
                           "--fake-gpus-scenario", f"{SRC}/testdata/scenarios/processes.yaml",
                           "--kubernetes-process-metrics", "--kubernetes-virtual-gpus",
                           "--host-proc-root", f"{SRC}/testdata/proc", *api().flags(),
                           "--state-dir", state_dir], name, env={"NODE_NAME": "node1"})


# --- 2: the state file -------------------------------------------------------------------------
def saved_state(binary):
    """A pod-energy.json this binary saved (its series and readings real), as a dict."""
    state = os.path.join(WORK, "state-base")
    shutil.rmtree(state, ignore_errors=True)
    os.makedirs(state)
    d = pod_daemon(binary, state, "state-base")
    try:
        if d.wait_page(20, POD_SERIES) is None:
            raise RuntimeError(f"{binary}: no per-pod energy series: {d.log_text()[-800:]}")
        time.sleep(1)
    finally:
        d.stop()
    doc = json.load(open(os.path.join(state, "pod-energy.json")))
    if not doc.get("series"):  # nothing saved: one series of its first GPU, made up
        uuid = sorted(doc.get("readings_mj") or {"GPU-0": 0})[0]
        doc["series"] = [{"gpu": 0, "uuid": uuid, "profile": "", "gpu_instance": "",
                          "namespace": "ml", "pod": "trainer-a", "container": "main",
                          "joules": 100.0, "grown": doc.get("saved", int(time.time()))}]
        SAVED_EMPTY.append(binary)
    return doc


SAVED_EMPTY = []


def hostile_cases(base):
    def edit(fn):
        def make(path):
            doc = json.loads(json.dumps(base))
            fn(doc)
            with open(path, "w") as f:
                json.dump(doc, f)
        return make

    def garbage(path):
        with open(path, "w") as f:
            chunk = " \n\t\r" * 262144  # 1 MiB of JSON whitespace
            for _ in range(GARBAGE_MB):
                f.write(chunk)
            f.write("{garbage")

    def rand(path):
        with open(path, "wb") as f:
            f.write(random.Random(SEED).randbytes(65536))

    return [
        ('"version":"1"', edit(lambda d: d.update(version="1"))),
        ('"saved":"x"', edit(lambda d: d.update(saved="x"))),
        ('"grown":"x"', edit(lambda d: [s.update(grown="x") for s in d["series"]])),
        ("a FIFO", lambda p: os.mkfifo(p)),
        ("a link to /dev/zero", lambda p: os.symlink("/dev/zero", p)),
        ("a directory", lambda p: os.mkdir(p)),
        (f"{GARBAGE_MB} MB of whitespace, then garbage", garbage),
        ("gpu 2^40", edit(lambda d: [s.update(gpu=2 ** 40) for s in d["series"]])),
        ("joules 1e308", edit(lambda d: [s.update(joules=1e308) for s in d["series"]])),
        ("64 KiB of random bytes", rand),
    ]


def state_case(binary, name, make):
    state = os.path.join(WORK, f"state-{name}")
    shutil.rmtree(state, ignore_errors=True)
    os.makedirs(state)
    path = os.path.join(state, "pod-energy.json")
    make(path)
    d = pod_daemon(binary, state, f"state-{name}")
    try:
        body = d.wait_page(10)
        took = time.monotonic() - d.started
        if body is not None:  # a page with the per-pod series, for their values and the RSS
            body = d.wait_page(5, POD_SERIES) or body
        d.sample_rss()
        aside = sorted(e for e in os.listdir(state) if e != "pod-energy.json")
        huge = re.findall(r"^nvml_exporter_pod_gpu_energy_joules_total\{[^}]*\} (\S+)$",
                          body or "", re.M)
        r = {
            "metrics": ms(took) if body is not None else
            ("killed at RSS cap" if d.capped else "no" if d.alive() else "died"),
            "exit": describe_exit(d.proc.returncode) if not d.alive() and not d.capped else "-",
            "aside": ", ".join(aside) or "no",
            "rss": f"{d.hwm:.0f} MB",
            "max": max((float(v) for v in huge), default=None),
        }
    finally:
        d.stop(signal.SIGKILL, 5)
    log = d.log_text()
    r["errors"] = sum(1 for line in log.splitlines()
                      if "pod-energy.json" in line and re.search(r"error|terminate|what\(\)",
                                                                 line, re.I))
    r["stderr_tail"] = log.strip().splitlines()[-1][:160] if log.strip() else ""
    m = re.search(r'"file":"[^"]*pod-energy\.json"[^\n]*?"err":"((?:[^"\\]|\\.)*)"', log)
    r["err"] = (m.group(1)[:90] if m else "-").replace("|", "\\|")
    return r


def attack_state_file():
    rows = []
    notes = []
    bases = {name: saved_state(binary) for name, binary in BINARIES}
    for label, make in hostile_cases(bases[BINARIES[0][0]]):
        for name, binary in BINARIES:
            cases = dict(hostile_cases(bases[name]))
            r = state_case(binary, f"{name}-{len(rows)}", cases[label])
            print(f"# state file {label} {name}: {r}", file=sys.stderr)
            biggest = "-" if r["max"] is None else f"{r['max']:.3g}"
            rows.append([label, name, r["metrics"], r["exit"], r["aside"], r["rss"],
                         r["errors"], biggest, f"`{r['err']}`" if r["err"] != "-" else "-"])
            if r["exit"] != "-" and r["stderr_tail"]:
                notes.append(f"- {label}, {name}: last log line `{r['stderr_tail']}`")
    return [
        "### 2. A hostile state file", "",
        "`--kubernetes-process-metrics --state-dir DIR` as in `test/integration/"
        "pod_energy_test.sh` (fake API server, processes.yaml, testdata/proc, -c 300), with "
        "DIR/pod-energy.json replaced by each case before the start; the edited documents are "
        "the binary's own saved file with one field changed in every series. /metrics: time from "
        "the start to the first 200 (\"no\": none within 10 s). Set aside: what else DIR held "
        f"then. RSS: VmHWM (killed above {RSS_CAP_MB} MB). Errors: log lines naming the file. "
        "Largest series: the largest per-pod energy value once the pods' series are there (J). "
        "Logged error: its `err`, first 90 characters.", "",
        *[f"- {b}: its own file (SIGTERM 1 s after the first page with per-pod series) had no "
          "series; one made-up series of GPU 0 was added" for b in SAVED_EMPTY], "",
        *table(["state file", "binary", "/metrics", "died", "set aside", "peak RSS",
                "errors", "largest series", "logged error"], rows), "", *notes, ""]


# --- 3: energy across SIGKILLs -----------------------------------------------------------------
def energy_page(body):
    series = {}
    for m in re.finditer(r"^(nvml_exporter_pod_gpu_energy_joules_total\{gpu=\"(\d+)\"[^}]*\}) "
                         r"(\S+)$", body, re.M):
        series[m.group(1)] = (m.group(2), float(m.group(3)))
    gpus = {m.group(1): float(m.group(2)) / 1000 for m in re.finditer(
        r'^DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION\{gpu="(\d+)"[^}]*\} (\S+)$', body, re.M)}
    return series, gpus


def sigkill_run(binary, name):
    rng = random.Random(SEED)
    state = os.path.join(WORK, f"sigkill-{name}")
    os.makedirs(state)
    pages = []  # (kind, series, gpus): kind "start" (first page of a process) or "kill"
    d = pod_daemon(binary, state, f"sigkill-{name}")
    try:
        for k in range(KILLS + 1):
            body = d.wait_page(20, POD_SERIES)
            if body is None:
                raise RuntimeError(f"{binary}: no per-pod energy after restart {k}: "
                                   f"{d.log_text()[-800:]}")
            # The pods come one by one after a start: the first page with all the series the
            # page before the kill had (within 5 s), else the last one seen.
            want = set(pages[-1][1]) if pages else set()
            end = time.monotonic() + 5
            while not want <= set(energy_page(body)[0]) and time.monotonic() < end:
                time.sleep(0.1)
                body = d.wait_page(2, POD_SERIES) or body
            pages.append(("start", *energy_page(body)))
            if k == KILLS:
                break
            time.sleep(rng.uniform(2, 15))
            ok, _, body = get(d.url(), timeout=2)
            pages.append(("kill", *energy_page(body if ok else "")))
            d.stop(signal.SIGKILL)
            d = pod_daemon(binary, state, f"sigkill-{name}-{k}")
    finally:
        d.stop(signal.SIGKILL, 5)
    went_back, worst, missing = 0, 0.0, 0
    for (k1, s1, _), (k2, s2, _) in zip(pages, pages[1:]):
        if (k1, k2) != ("kill", "start"):
            continue
        for key, (_, v) in s1.items():
            if key not in s2:
                missing += 1
                continue
            if s2[key][1] < v - 1e-6:  # the page has 6 decimals
                went_back += 1
                worst = max(worst, v - s2[key][1])
    first, last = pages[0], pages[-1]
    pod_growth = sum(v for _, v in last[1].values()) - sum(v for _, v in first[1].values())
    gpu_growth = sum(last[2].values()) - sum(first[2].values())
    per_life = 0.0  # the counters' growth within each process, from its first page to its last
    for (k1, _, g1), (k2, _, g2) in zip(pages, pages[1:]):
        if k1 == "start":
            per_life += sum(g2.values()) - sum(g1.values())
    restarts_back = sum(1 for (k1, _, g1), (k2, _, g2) in zip(pages, pages[1:])
                        if (k1, k2) == ("kill", "start")
                        and sum(g2.values()) < sum(g1.values()))
    return {"went_back": went_back, "worst": worst, "missing": missing, "pod": pod_growth, "gpu": gpu_growth,
            "per_life": per_life, "counter_back": restarts_back,
            "elapsed": len(pages), "series": len(last[1])}


def attack_sigkill():
    rows = []
    for name, binary in BINARIES:
        r = sigkill_run(binary, name)
        print(f"# sigkill {name}: {r}", file=sys.stderr)
        rows.append([name, r["series"], r["went_back"], f"{r['worst']:.3f}", r["missing"], f"{r['pod']:.1f}",
                     f"{r['gpu']:.1f}", f"{r['pod'] / r['gpu']:.3f}" if r["gpu"] > 0 else "-",
                     f"{r['per_life']:.1f}",
                     f"{r['pod'] / r['per_life']:.3f}" if r["per_life"] > 0 else "-",
                     f"{r['counter_back']} of {KILLS}"])
    return [
        "### 3. Energy per pod across SIGKILLs", "",
        f"The pod set-up with `--state-dir` and `-c 300`; {KILLS} SIGKILLs at random moments "
        f"2-15 s apart (seed {SEED}), a restart after each. Went back: series lower on the first "
        "page after a restart that has them all (within 5 s) than on the page just before the "
        "kill; missing after: series of the page before a kill not on that page. Growth over the whole run, first page to last: the per-pod series summed, the GPUs' "
        "`DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION` summed (J), and that counter's growth summed "
        "over each process's life (from its first page to its last: what a counter that restarts "
        "in every process shows). Counter went back: restarts after which the GPUs' own counter "
        "was lower than before the kill.", "",
        *table(["binary", "series", "went back", "largest step back (J)", "missing after",
                "pods' growth (J)",
                "GPUs' growth (J)", "pods / GPUs", "GPUs' growth per life (J)",
                "pods / per life", "counter went back"], rows), ""]


# --- 4: 5000 containers ------------------------------------------------------------------------
class EngineStub:
    """A Docker-compatible engine on a unix socket, its answers made once: GET /containers/json
    and GET /containers/<id>/json, one request per connection (the daemon sends Connection:
    close), served by one thread."""

    def __init__(self, path, n):
        def answer(doc, status="200 OK"):
            body = json.dumps(doc).encode()
            return (f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\n"
                    f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode() + body

        ids = [f"{i:064x}" for i in range(1, n + 1)]
        self.answers = {"/containers/json": answer(
            [{"Id": c, "Names": [f"/job-{i:05d}"]} for i, c in enumerate(ids)])}
        for i, c in enumerate(ids):
            self.answers[f"/containers/{c}/json"] = answer({
                "Id": c, "Name": f"/job-{i:05d}",
                "Config": {"Env": ["NVIDIA_VISIBLE_DEVICES=0"]},
                "HostConfig": {"DeviceRequests": []}})
        self.missing = answer({"message": "No such container"}, "404 Not Found")
        self.requests = 0
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.bind(path)
        self.sock.listen(128)
        self.sock.settimeout(0.2)
        self.stopped = False
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        while not self.stopped:
            try:
                c, _ = self.sock.accept()
            except OSError:
                continue
            try:
                c.settimeout(2)
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = c.recv(4096)
                    if not chunk:
                        break
                    data += chunk
                parts = data.split(b" ", 2)
                target = parts[1].decode(errors="replace") if len(parts) > 1 else ""
                c.sendall(self.answers.get(target, self.missing))
                self.requests += 1
            except OSError:
                pass
            finally:
                c.close()

    def close(self):
        self.stopped = True
        self.thread.join()
        self.sock.close()


def containers_run(binary, name):
    path = os.path.join(WORK, f"engine-{name}.sock")
    engine = EngineStub(path, CONTAINERS)
    d = Daemon(binary, ["--fake-gpus-scenario", f"{SRC}/testdata/scenarios/eight_gpus.yaml",
                        "-f", f"{SRC}/etc/default-counters.csv", "-c", "1000",
                        "--container-labels", "--container-runtime-socket", path],
               f"containers-{name}")
    try:
        t0 = time.monotonic()
        body = None
        end = t0 + 60
        while time.monotonic() < end and d.alive():
            ok, _, page = get(d.url(), timeout=30)
            if ok and re.search(r'^DCGM_FI_DEV_GPU_TEMP\{gpu="0".*container=', page, re.M):
                body = page
                break
            time.sleep(0.5)
        if body is None:
            ok, _, body = get(d.url(), timeout=30)
            body = body if ok else ""
        labelled = time.monotonic() - t0
        c0 = cpu_seconds(d.pid)
        w0 = time.monotonic()
        scrape_s = []
        while time.monotonic() - w0 < CPU_S and d.alive():
            ok, took, page = get(d.url(), timeout=30)
            if ok:
                scrape_s.append(took)
                body = page
            time.sleep(max(0.0, 1 - took))
        c1 = cpu_seconds(d.pid)
        cpu = 100 * (c1 - c0) / (time.monotonic() - w0) if c0 is not None and c1 else None
        own = [line for line in body.splitlines()
               if line.startswith("nvml_exporter_") and "container" in line]
        return {
            "labelled": f"{labelled:.1f} s" if "container=" in body else "never",
            "temp": len(re.findall(r"^DCGM_FI_DEV_GPU_TEMP\{", body, re.M)),
            "bytes": len(body.encode()),
            "cpu": f"{cpu:.0f}" if cpu is not None else "-",
            "scrape": ms(statistics.median(scrape_s)) if scrape_s else "-",
            "rss": f"{proc_status(d.pid, 'VmRSS') or 0:.0f} MB",
            "hwm": f"{proc_status(d.pid, 'VmHWM') or 0:.0f} MB",
            "own": own, "requests": engine.requests,
            "died": "-" if d.alive() else describe_exit(d.proc.returncode),
        }
    finally:
        d.stop(signal.SIGKILL, 5)
        engine.close()


def attack_containers():
    rows, notes = [], []
    for name, binary in BINARIES:
        r = containers_run(binary, name)
        print(f"# containers {name}: {r}", file=sys.stderr)
        rows.append([name, r["labelled"], r["temp"], f"{r['bytes'] / 1e6:.1f} MB", r["scrape"],
                     r["cpu"], r["rss"], r["hwm"], r["requests"], r["died"]])
        notes.append(f"- {name}: nvml_exporter_* lines naming containers: " +
                     ("; ".join(f"`{x}`" for x in r["own"][:6]) or "none"))
    return [
        f"### 4. `--container-labels` with {CONTAINERS} containers on GPU 0", "",
        "8 simulated GPUs, etc/default-counters.csv, -c 1000; an engine stub in the bench script "
        f"lists {CONTAINERS} running containers, each given GPU 0 (NVIDIA_VISIBLE_DEVICES=0). "
        "Labelled: time from the start until GPU 0's series carry container labels. Then "
        f"{CPU_S:.0f} s with a scrape a second: the daemon's CPU % (utime + stime), the median "
        "scrape, the last page's DCGM_FI_DEV_GPU_TEMP lines and bytes. Engine requests: what the "
        "stub answered in all.", "",
        *table(["binary", "labelled", "GPU_TEMP lines", "page", "scrape p50", "CPU %", "RSS",
                "peak RSS", "engine requests", "died"], rows), "", *notes, ""]


# --- 5: a 50 MB value in the YAML config -------------------------------------------------------
def attack_big_yaml():
    path = os.path.join(WORK, "big.yaml")
    with open(path, "w") as f:
        f.write("version: 2\nmetrics:\n  file: \"")
        chunk = "a" * (1 << 20)
        for _ in range(YAML_MB):
            f.write(chunk)
        f.write("\"\n")
    rows = []
    for name, binary in BINARIES:
        err = os.path.join(WORK, f"big-{name}.err")
        with open(err, "wb") as e:
            t0 = time.monotonic()
            p = spawn([binary, "--fake-gpus", "-a", f"127.0.0.1:{free_port()}",
                       "--config-file", path], stdout=subprocess.DEVNULL, stderr=e)
            try:
                code = p.wait(timeout=120)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
                code = None
            took = time.monotonic() - t0
        text = open(err, "rb").read()
        first = text[:200].decode(errors="replace").replace("\n", " ").replace("|", "\\|")
        print(f"# big yaml {name}: {code} {took:.2f}s {len(text)} bytes", file=sys.stderr)
        rows.append([name, f"{took:.2f} s", "still running at 120 s (killed)" if code is None
                     else describe_exit(code), len(text), f"`{first}`"])
        os.unlink(err)
    return [
        f"### 5. A {YAML_MB} MB value in the YAML configuration", "",
        f"`--config-file` with `version: 2` and `metrics.file` a {YAML_MB} MB string: time until "
        "the process exits, how, and its stderr.", "",
        *table(["binary", "time to exit", "exit", "stderr bytes", "stderr, first 200 chars"],
               rows), ""]


ATTACKS = {"1": attack_slowloris, "2": attack_state_file, "3": attack_sigkill,
           "4": attack_containers, "5": attack_big_yaml}


def version(binary):
    try:
        out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=20)
        return (out.stdout or out.stderr).strip().splitlines()[0]
    except Exception as e:
        return f"? ({e})"


def main():
    t0 = time.monotonic()
    parts = []
    for key in args.attacks.split(","):
        t = time.monotonic()
        parts += ATTACKS[key.strip()]()
        print(f"# attack {key}: {time.monotonic() - t:.0f} s", file=sys.stderr)
    binaries = "; ".join(f"{name}: `{b}`, {version(b)}" for name, b in BINARIES)
    sec = "\n".join([
        "## Adversarial round three (`bench/adversarial.sh`)", "",
        f"Measured by `bench/adversarial.sh` (bench/adversarial_round3.py) on "
        f"{datetime.date.today()}, {os.cpu_count()} cores, in {time.monotonic() - t0:.0f} s: "
        "hardening round three's attacks (issue 36), each against "
        + ("both binaries, side by side in one invocation" if len(BINARIES) > 1 else
           "the daemon under test") + f" ({binaries}). Reported, not asserted.", "",
        *parts])
    publish(args.doc, "## Adversarial round three", sec, "--write" if args.write else "")


try:
    main()
finally:
    cleanup()

#!/usr/bin/env python3
"""The measurements of bench/gpu.sh (read that file first). Standard library only.

Every figure is measured in this one run on this one machine: our daemon's CPU per collection
against the NVML floor (bench/nvml_floor) of the same file, its RSS, its time to the first
complete /metrics and its scrape latency, and the peers (a Python exporter, nvidia-smi). Writes
gpu-bench.json and gpu-bench.md under the output folder.
"""
import argparse
import datetime
import gzip
import http.client
import json
import os
import platform
import re
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import time

TCK = os.sysconf("SC_CLK_TCK")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def cpu_s(pid):
    """CPU time of the whole process, seconds: the sum of its threads' schedstat run time (ns
    resolution; the daemon's threads live as long as it does), else utime + stime from
    /proc/<pid>/stat (clock ticks)."""
    try:
        total = 0
        for t in os.listdir(f"/proc/{pid}/task"):
            total += int(open(f"/proc/{pid}/task/{t}/schedstat").read().split()[0])
        return total / 1e9
    except (OSError, ValueError, IndexError):
        f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(f[11]) + int(f[12])) / TCK


def rss_kib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return -1


def get(port, path="/metrics", gz=False, conn=None, timeout=5):
    c = conn or http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    c.request("GET", path, headers={"Accept-Encoding": "gzip"} if gz else {})
    r = c.getresponse()
    body = r.read()
    if r.getheader("Content-Encoding") == "gzip":
        body = gzip.decompress(body)
    if conn is None:
        c.close()
    return r.status, body.decode(errors="replace")


def families(text):
    return {l.split("{")[0].split(" ")[0] for l in text.splitlines() if l and l[0] != "#"}


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))]


def latency(port, n, gz):
    """Sequential GETs on one kept-alive connection (how Prometheus scrapes), ms."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    out = []
    for _ in range(n):
        t = time.perf_counter()
        st, _ = get(port, gz=gz, conn=conn)
        out.append((time.perf_counter() - t) * 1e3)
        if st != 200:
            raise RuntimeError(f"scrape answered {st}")
    conn.close()
    return {"n": n, "p50_ms": pct(out, 50), "p99_ms": pct(out, 99)}


def wait_http(port, proc, limit_s=30):
    end = time.time() + limit_s
    while time.time() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"process exited with {proc.returncode}")
        try:
            st, body = get(port, timeout=1)
            if st == 200:
                return body
        except OSError:
            pass
        time.sleep(0.005)
    raise RuntimeError("no answer on /metrics")


def run_daemon(a, label, binary, csv, interval_ms, secs, env, scrapes):
    port = free_port()
    cmd = [binary, "-f", csv, "-c", str(interval_ms), "-a", f"127.0.0.1:{port}"] + a.daemon_args
    cmd += a.label_args.get(label, [])
    log = open(os.path.join(a.out, f"{label}.log"), "w")
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=log, env=env)
    res = {"label": label, "binary": binary, "csv": os.path.basename(csv),
           "interval_ms": interval_ms}
    try:
        # Start-up: the first answer, then every family of the steady page present.
        polls = []
        body = wait_http(port, p)
        res["first_answer_ms"] = (time.perf_counter() - t0) * 1e3
        polls.append((res["first_answer_ms"], families(body)))
        settle = time.perf_counter() + max(3.0, 3 * interval_ms / 1000.0)
        while time.perf_counter() < settle:
            _, body = get(port)
            polls.append(((time.perf_counter() - t0) * 1e3, families(body)))
            time.sleep(0.005)
        steady = polls[-1][1]
        res["families"] = len(steady)
        res["prof_families"] = sorted(f for f in steady if f.startswith("DCGM_FI_PROF_"))
        res["first_complete_ms"] = next(t for t, f in polls if steady <= f)
        # CPU per collection over >= 60 intervals, no scrapes meanwhile.
        c0, w0 = cpu_s(p.pid), time.perf_counter()
        time.sleep(secs)
        c1, w1 = cpu_s(p.pid), time.perf_counter()
        n = (w1 - w0) * 1000.0 / interval_ms
        res["collections"] = round(n)
        res["cpu_ms_per_collection"] = (c1 - c0) * 1e3 / n
        res["cpu_pct_of_core"] = (c1 - c0) / (w1 - w0) * 100
        res["rss_mib"] = rss_kib(p.pid) / 1024.0
        _, body = get(port)
        m = re.search(r"^nvml_exporter_collect_duration_seconds (\S+)", body, re.M)
        res["collect_duration_ms"] = float(m.group(1)) * 1e3 if m else None
        res["page_bytes"] = len(body.encode())
        if scrapes:
            res["scrape_plain"] = latency(port, scrapes, False)
            res["scrape_gzip"] = latency(port, scrapes, True)
    finally:
        p.terminate()
        try:
            p.wait(5)
        except subprocess.TimeoutExpired:
            p.kill()
    return res


def run_floor(a, csv, env):
    cmd = [a.floor, "-f", csv, "-n", str(a.floor_sweeps), "-c", str(a.floor_interval_ms),
           "--breakdown"] + (["--nvml-library", a.nvml_library] if a.nvml_library else [])
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True).stdout
    r = json.loads(out.strip().splitlines()[-1])
    # Without --breakdown's clock reads around each call: the figure the ratio uses.
    cmd.remove("--breakdown")
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True).stdout
    r["cpu_ms_per_sweep_breakdown_run"] = r["cpu_ms_per_sweep"]
    r["cpu_ms_per_sweep"] = json.loads(out.strip().splitlines()[-1])["cpu_ms_per_sweep"]
    return r


def floor_cpu(a, csv, env):
    """One plain floor run (no --breakdown): CPU ms per sweep."""
    cmd = [a.floor, "-f", csv, "-n", str(a.floor_sweeps), "-c", str(a.floor_interval_ms)] + (
        ["--nvml-library", a.nvml_library] if a.nvml_library else [])
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])["cpu_ms_per_sweep"]


def run_python_peer(a, env, scrapes):
    port = free_port()
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers", "pynvml_exporter.py")
    log = open(os.path.join(a.out, "python-peer.log"), "w")
    p = subprocess.Popen([sys.executable, script, str(port)], stdout=subprocess.DEVNULL,
                         stderr=log, env=env)
    try:
        wait_http(port, p)
        for _ in range(5):
            get(port)
        c0 = cpu_s(p.pid)
        lat = latency(port, scrapes, False)
        c1 = cpu_s(p.pid)
        log.flush()
        return {"kind": open(log.name).read().strip().splitlines()[0],
                "scrape_plain": lat, "cpu_ms_per_scrape": (c1 - c0) * 1e3 / scrapes,
                "rss_mib": rss_kib(p.pid) / 1024.0}
    finally:
        p.terminate()
        p.wait(5)


def run_nvidia_smi(n):
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None
    q = ("clocks.sm,clocks.mem,temperature.gpu,temperature.memory,power.draw,utilization.gpu,"
         "utilization.memory,memory.used,memory.free,pcie.link.gen.current")
    ts = []
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    for _ in range(n):
        t = time.perf_counter()
        subprocess.run([smi, f"--query-gpu={q}", "--format=csv,noheader,nounits"],
                       capture_output=True, check=True)
        ts.append((time.perf_counter() - t) * 1e3)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime) * 1e3 / n
    return {"n": n, "p50_ms": pct(ts, 50), "p99_ms": pct(ts, 99), "cpu_ms_per_call": cpu}


def markdown(r):
    L = [f"Measured by `bench/gpu.sh` on {r['date']}: {r['host']}, {r.get('gpu', '?')}, "
         f"driver {r.get('driver', '?')}. All figures from this one run.", ""]
    L += ["| daemon | file | -c ms | collections | CPU ms / collection | floor CPU ms / sweep "
          "(mean of the runs before and after) | "
          "ratio to floor | overhead ms | % of a core | collect_duration ms | RSS MiB | "
          "first /metrics ms | first complete ms |", "|" + "---|" * 13]
    for d in r["daemons"]:
        fl = d.get("floor_ms", float("nan"))
        L.append(f"| {d['label']} | {d['csv']} | {d['interval_ms']} | {d['collections']} | "
                 f"{d['cpu_ms_per_collection']:.2f} | {fl:.2f} "
                 f"({' / '.join(f'{x:.2f}' for x in d.get('floor_runs_ms', []))}) | "
                 f"{d['cpu_ms_per_collection'] / fl:.2f} | {d['cpu_ms_per_collection'] - fl:.2f} | "
                 f"{d['cpu_pct_of_core']:.2f} | {d['collect_duration_ms'] or 0:.2f} | "
                 f"{d['rss_mib']:.1f} | {d['first_answer_ms']:.0f} | {d['first_complete_ms']:.0f} |")
    L += ["", "Floor (`bench/nvml_floor`, the same file's NVML calls; its first run with "
          "`--breakdown`: thread CPU per call kind, µs per sweep):", ""]
    for csv, f in r["floor"].items():
        parts = ", ".join(f"{k} {v:.0f}" for k, v in sorted(
            f.get("thread_cpu_us_per_sweep", {}).items(), key=lambda kv: -kv[1]))
        L.append(f"- {csv}: {f['cpu_ms_per_sweep']:.3f} ms/sweep ({f['gpus']} GPU(s), "
                 f"{f['gpm_gpus']} with GPM; RSS after nvmlInit_v2 "
                 f"{f['rss_after_init_kib'] / 1024:.1f} MiB); {parts}")
    L += ["", "| scrape of /metrics (one kept-alive connection) | p50 ms | p99 ms | CPU ms / scrape "
          "| RSS MiB |", "|---|---|---|---|---|"]
    for d in r["daemons"]:
        if "scrape_plain" in d:
            L.append(f"| {d['label']} (plain) | {d['scrape_plain']['p50_ms']:.3f} | "
                     f"{d['scrape_plain']['p99_ms']:.3f} | (page pre-rendered) | {d['rss_mib']:.1f} |")
            L.append(f"| {d['label']} (gzip) | {d['scrape_gzip']['p50_ms']:.3f} | "
                     f"{d['scrape_gzip']['p99_ms']:.3f} | | |")
    py = r.get("python_peer")
    if py:
        L.append(f"| Python stand-in ({py['kind']}) | {py['scrape_plain']['p50_ms']:.3f} | "
                 f"{py['scrape_plain']['p99_ms']:.3f} | {py['cpu_ms_per_scrape']:.2f} | "
                 f"{py['rss_mib']:.1f} |")
    smi = r.get("nvidia_smi")
    if smi:
        L.append(f"| `nvidia-smi --query-gpu` per call | {smi['p50_ms']:.1f} | {smi['p99_ms']:.1f} "
                 f"| {smi['cpu_ms_per_call']:.1f} | |")
    L += ["", "Cited, not measured: dcgm-exporter 15–20 % of a core (NVIDIA/gpu-monitoring-tools#133),"
          " 400–500 MiB RSS before OOM kills (NVIDIA/dcgm-exporter#702, pytorch/ci-infra#1011), "
          "1.45 GB image (NVIDIA/dcgm-exporter PR #228).", ""]
    return "\n".join(L)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--floor", required=True)
    ap.add_argument("--daemon", action="append", default=[],
                    help="LABEL=BINARY:CSV:INTERVAL_MS:SECONDS (repeatable)")
    ap.add_argument("--label-args", action="append", default=[],
                    help="LABEL=ARGS: extra daemon arguments (space-separated) for that label's "
                         "runs, e.g. groups=--config-file=etc/exporter-config.yaml")
    ap.add_argument("--nvml-library", default="")
    ap.add_argument("--floor-sweeps", type=int, default=100)
    ap.add_argument("--floor-interval-ms", type=int, default=100)
    ap.add_argument("--scrapes", type=int, default=500)
    ap.add_argument("--python-peer", action="store_true")
    ap.add_argument("--no-floor", action="store_true", help="start-up only: no floor runs")
    ap.add_argument("--nvidia-smi-calls", type=int, default=0)
    ap.add_argument("daemon_args", nargs="*")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    a.label_args = {k: v.split() for k, v in (x.split("=", 1) for x in a.label_args)}
    env = dict(os.environ)
    if a.nvml_library:
        a.daemon_args = ["--nvml-library", a.nvml_library] + a.daemon_args
    r = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
         "host": f"{platform.machine()}, {os.cpu_count()} CPUs", "daemons": [], "floor": {}}
    smi = shutil.which("nvidia-smi")
    if smi:
        q = subprocess.run([smi, "--query-gpu=name,driver_version", "--format=csv,noheader"],
                           capture_output=True, text=True).stdout.strip().splitlines()
        if q:
            r["gpu"], r["driver"] = [x.strip() for x in q[0].split(",")][:2]
            r["gpu"] = f"{len(q)} x {r['gpu']}"
    for spec in a.daemon:
        label, rest = spec.split("=", 1)
        binary, csv, interval, secs = rest.rsplit(":", 3)
        if not a.no_floor and os.path.basename(csv) not in r["floor"]:
            r["floor"][os.path.basename(csv)] = run_floor(a, csv, env)
        scrapes = a.scrapes if not r["daemons"] else 0  # latency once, on the first daemon
        # The floor moves over minutes on a real GPU (NVML's own threads, the energy read): each
        # daemon's ratio is to the mean of a floor run just before and one just after it.
        before = floor_cpu(a, csv, env) if not a.no_floor else None
        d = run_daemon(a, label, binary, csv, int(interval), float(secs), env, scrapes)
        if before is not None:
            d["floor_runs_ms"] = [before, floor_cpu(a, csv, env)]
            d["floor_ms"] = sum(d["floor_runs_ms"]) / 2
        r["daemons"].append(d)
        print(json.dumps(r["daemons"][-1]), flush=True)
    if a.python_peer:
        try:
            r["python_peer"] = run_python_peer(a, env, min(a.scrapes, 200))
        except Exception as e:  # the peer is optional: say why it is missing
            r["python_peer_error"] = str(e)
    if a.nvidia_smi_calls:
        r["nvidia_smi"] = run_nvidia_smi(a.nvidia_smi_calls)
    json.dump(r, open(os.path.join(a.out, "gpu-bench.json"), "w"), indent=1)
    md = markdown(r)
    open(os.path.join(a.out, "gpu-bench.md"), "w").write(md)
    print(md)


if __name__ == "__main__":
    main()

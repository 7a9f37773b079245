#!/usr/bin/env python3
"""bench/remote_write.py: what remote-writing the exporter costs per node (docs/remote-write.md).

For each collectors file (etc/default-counters.csv, etc/dcp-metrics-included.csv), each scrape
interval (1 s, 15 s, 30 s: the daemon's --collect-interval matches it) and three nodes:
  - 8gpu:   testdata/scenarios/eight_gpus.yaml (an HGX H200 board, GPM on), no pods;
  - 2gpu:   testdata/scenarios/processes.yaml (2 GPUs with processes), no per-pod series;
  - 2gpu+pods: the same with --kubernetes-process-metrics --kubernetes-virtual-gpus and the fake
    API server (pods_node1.json: 4 pod containers on the 2 GPUs), i.e. per-pod series;
the daemon on simulated GPUs is scraped by a Prometheus in agent mode running the remote-write
overlay's prometheus.yml (its Kubernetes discovery replaced by a static target with the
__meta_kubernetes_* labels pod discovery gives, as test/integration/remote_write_test.sh does),
remote-writing into one receiver (--web.enable-remote-write-receiver). All agents run at once for
RW_SECONDS (default 150) after 10 s of warm-up. Per agent it reads its own counters (prometheus_remote_storage_
samples_total, _bytes_total: compressed, data only; _metadata_bytes_total) and per target the
receiver's series count (by instance). samples/s is series / interval; bytes/sample is the
agent's bytes_total / samples_total since it started; bytes/s their product. The measured columns
are counter deltas over the window (a 30 s interval gives only ~5 scrapes in 150 s: +-20 %).

usage: bench/remote_write.py [BUILD_DIR]   (env: RW_SECONDS, RW_INTERVALS="1,15,30", RW_FILES)
Prints one JSON line per run and a Markdown table.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

import yaml

src = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(src, "test", "pylib"))
from net import free_port  # noqa: E402
build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(src, "build"))
exporter = os.path.join(build, "src/app/nvml-exporter")
seconds = int(os.environ.get("RW_SECONDS", "150"))
intervals = [int(x) for x in os.environ.get("RW_INTERVALS", "1,15,30").split(",")]
files = os.environ.get("RW_FILES", "default-counters.csv,dcp-metrics-included.csv").split(",")
work = tempfile.mkdtemp(prefix="rw-bench-")
procs = []


def get(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        return r.read().decode()


def wait(url, secs=30):
    for _ in range(secs * 10):
        try:
            get(url)
            return
        except Exception:
            time.sleep(0.1)
    sys.exit(f"{url} did not answer")


def start(args, log, env=None):
    p = subprocess.Popen(args, stdout=open(log, "w"), stderr=subprocess.STDOUT, env=env)
    procs.append(p)
    return p


def counters(page):
    out = {}
    for name in ("samples_total", "bytes_total", "metadata_bytes_total"):
        m = re.search(rf"^prometheus_remote_storage_{name}{{[^}}]*}} (\S+)$", page, re.M)
        out[name] = float(m.group(1)) if m else 0.0
    return out


try:
    # The fake API server (per-pod runs).
    ctl = os.path.join(work, "ctl")
    os.makedirs(ctl)
    open(os.path.join(ctl, "mode"), "w").write("ok\n")
    open(os.path.join(work, "token"), "w").write("test-token\n")
    cert, key = os.path.join(work, "cert.pem"), os.path.join(work, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=fake-apiserver", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", key, "-out", cert], check=True, capture_output=True)
    port_file = os.path.join(work, "api.port")
    start(["python3", os.path.join(src, "test/integration/fake_apiserver.py"),
           os.path.join(src, "testdata/apiserver/pods_node1.json"), cert, key, "test-token", ctl,
           port_file], os.path.join(work, "apiserver.log"))
    for _ in range(100):
        if os.path.exists(port_file) and open(port_file).read().strip():
            break
        time.sleep(0.1)
    api_port = open(port_file).read().strip()

    rport = free_port()
    open(os.path.join(work, "receiver.yml"), "w").write("global:\n  evaluation_interval: 15s\n")
    start(["prometheus", f"--config.file={work}/receiver.yml", f"--storage.tsdb.path={work}/tsdb",
           "--web.enable-remote-write-receiver", f"--web.listen-address=127.0.0.1:{rport}"],
          os.path.join(work, "receiver.log"))
    wait(f"http://127.0.0.1:{rport}/-/ready")

    shipped = yaml.safe_load(open(os.path.join(src, "deploy/kubernetes/overlays/remote-write/prometheus.yml")))
    meta = {"__meta_kubernetes_pod_label_app_kubernetes_io_name": "nvml-exporter",
            "__meta_kubernetes_pod_container_init": "false",
            "__meta_kubernetes_pod_container_port_number": "9400",
            "__meta_kubernetes_pod_phase": "Running",
            "__meta_kubernetes_pod_node_name": "ip-10-0-12-34.ec2.internal",
            "__meta_kubernetes_namespace": "nvml-exporter"}
    runs = []
    for f in files:
        for node in ("8gpu", "2gpu", "2gpu+pods"):
            for iv in intervals:
                name = f"{f.split('-')[0]}-{node}-{iv}s"
                port, aport = free_port(), free_port()
                scenario = "eight_gpus.yaml" if node == "8gpu" else "processes.yaml"
                args = [exporter, "--fake-gpus", "-a", f"127.0.0.1:{port}", "-c", str(iv * 1000),
                        "-f", os.path.join(src, "etc", f),
                        "--fake-gpus-scenario", os.path.join(src, "testdata/scenarios", scenario)]
                env = dict(os.environ, NODE_NAME="node1")
                if node.endswith("+pods"):
                    state = os.path.join(work, f"state-{name}")
                    os.makedirs(state)
                    args += ["--kubernetes-process-metrics", "--kubernetes-virtual-gpus",
                             "--host-proc-root", os.path.join(src, "testdata/proc"),
                             "--kubernetes-api-server", f"https://127.0.0.1:{api_port}",
                             "--kubernetes-token-file", os.path.join(work, "token"),
                             "--kubernetes-ca-file", cert, "--state-dir", state]
                start(args, os.path.join(work, f"exporter-{name}.log"), env)
                cfg = json.loads(json.dumps(shipped))
                cfg["global"]["scrape_interval"] = f"{iv}s"
                cfg["global"]["scrape_timeout"] = f"{min(iv * 1000 - 100, 10000)}ms"
                for job in cfg["scrape_configs"]:
                    del job["kubernetes_sd_configs"]
                    job["static_configs"] = [{"targets": [f"127.0.0.1:{port}"], "labels": meta}]
                cfg["remote_write"][0]["url"] = f"http://127.0.0.1:{rport}/api/v1/write"
                path = os.path.join(work, f"agent-{name}.yml")
                yaml.safe_dump(cfg, open(path, "w"))
                runs.append({"run": name, "file": f, "node": node, "interval_s": iv, "port": port,
                             "aport": aport, "cfg": path, "gpus": 8 if node == "8gpu" else 2})
    for r in runs:
        wait(f"http://127.0.0.1:{r['port']}/ready")
    t0 = time.time()
    for r in runs:
        start(["prometheus", "--enable-feature=agent", f"--config.file={r['cfg']}",
               f"--storage.agent.path={work}/wal-{r['run']}", "--storage.remote.flush-deadline=1s",
               f"--web.listen-address=127.0.0.1:{r['aport']}"], os.path.join(work, f"agent-{r['run']}.log"))
    for r in runs:
        wait(f"http://127.0.0.1:{r['aport']}/-/ready")
    # Measured rates: counter deltas over RW_SECONDS, from after the first scrapes and batches.
    time.sleep(10)
    before = {r["run"]: counters(get(f"http://127.0.0.1:{r['aport']}/metrics")) for r in runs}
    ta = time.time()
    time.sleep(seconds)
    elapsed = time.time() - ta
    q = urllib.parse.quote('count by (instance) ({job="nvml-exporter"})')
    series = {x["metric"]["instance"]: int(x["value"][1])
              for x in json.loads(get(f"http://127.0.0.1:{rport}/api/v1/query?query={q}"))["data"]["result"]}
    for r in runs:
        c = counters(get(f"http://127.0.0.1:{r['aport']}/metrics"))
        n = series.get(f"127.0.0.1:{r['port']}", 0)
        out = {k: r[k] for k in ("run", "file", "node", "gpus", "interval_s")}
        out.update(series=n, samples_sent=int(c["samples_total"]), bytes_sent=int(c["bytes_total"]),
                   metadata_bytes=int(c["metadata_bytes_total"]), elapsed_s=round(elapsed, 1))
        out["samples_per_s"] = round(n / r["interval_s"], 2)
        out["bytes_per_sample"] = round(c["bytes_total"] / c["samples_total"], 2) if c["samples_total"] else None
        out["bytes_per_s"] = round(out["samples_per_s"] * out["bytes_per_sample"], 1) if out["bytes_per_sample"] else None
        b = before[r["run"]]
        out["measured_samples_per_s"] = round((c["samples_total"] - b["samples_total"]) / elapsed, 2)
        out["measured_bytes_per_s"] = round((c["bytes_total"] + c["metadata_bytes_total"]
                                             - b["bytes_total"] - b["metadata_bytes_total"]) / elapsed, 1)
        r["out"] = out
        print(json.dumps(out), flush=True)
    print()
    print("| file | node | interval | series | samples/s | bytes/sample | bytes/s | measured samples/s | measured bytes/s (incl. metadata) |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|")
    for r in runs:
        o = r["out"]
        print(f"| {o['file']} | {o['node']} | {o['interval_s']} s | {o['series']} | {o['samples_per_s']} | "
              f"{o['bytes_per_sample']} | {o['bytes_per_s']} | {o['measured_samples_per_s']} | {o['measured_bytes_per_s']} |")
finally:
    for p in reversed(procs):
        p.terminate()
    for p in procs:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
    shutil.rmtree(work, ignore_errors=True)

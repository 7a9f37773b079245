#!/usr/bin/env python3
"""Scaling on simulated GPUs (bench/scaling.sh runs this; part of `make bench`).

For 1, 8 and 64 simulated GPUs (no pods), and for 8 GPUs time-sliced by 0 to 5000 pods of the fake
kubelet (test/fixtures/kubelet_fixture, a real gRPC pod-resources server) with and without
--kubernetes-virtual-gpus, one daemon each (etc/dcp-metrics-included.csv, -c 1000):
  - scrape latency p50/p99 (sequential GETs on one kept-alive connection, plain),
  - page size, collection CPU (the daemon's threads' run time per collection over the window,
    no scrapes meanwhile; it includes the kubelet refresh, once per second, with -k), RSS.
The baseline of each series is its first row (1 GPU; 0 pods), measured in the same run: the
table gives each figure as a ratio to it. Writes a markdown section and a PNG plot.
Usage: scaling.py BUILD SRC OUT_MD OUT_PNG
"""
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_bench as gb  # noqa: E402

build, src, out_md, out_png = sys.argv[1:5]
secs = float(os.environ.get("SCALING_SECONDS", "10"))
scrapes = int(os.environ.get("SCALING_SCRAPES", "100"))
pod_counts = [int(x) for x in os.environ.get("SCALING_PODS", "0,500,1000,5000").split(",")]
gpu_counts = [1, 8, 64]
exporter = f"{build}/src/app/nvml-exporter"
simgpu = f"{build}/simgpu/libnvidia-ml.so.1"
csv = f"{src}/etc/dcp-metrics-included.csv"
work = tempfile.mkdtemp()


def scenario(n):
    path = f"{work}/gpus{n}.yaml"
    with open(path, "w") as f:
        f.write('driver_version: "580.159.04"\ngpus:\n')
        for i in range(n):
            f.write(f'  - name: "NVIDIA H200"\n    gpm: true\n    values: {{gpu_util: {i % 100}, '
                    f'power_w: {300 + i}, gpm_sm_util: 10.5}}\n')
    return path


def measure(scen, extra):
    port = gb.free_port()
    env = dict(os.environ, NVMLX_SIMGPU_SCENARIO=scen)
    p = subprocess.Popen([exporter, "--nvml-library", simgpu, "-f", csv, "-c", "1000", "-a",
                          f"127.0.0.1:{port}"] + extra, stdout=subprocess.DEVNULL,
                         stderr=open(f"{work}/daemon.log", "a"), env=env)
    try:
        gb.wait_http(port, p)
        time.sleep(2.5)  # the first kubelet refreshes and the GPM round are in
        _, body = gb.get(port)
        c0, w0 = gb.cpu_s(p.pid), time.perf_counter()
        time.sleep(secs)
        c1, w1 = gb.cpu_s(p.pid), time.perf_counter()
        lat = gb.latency(port, scrapes, False)
        _, body = gb.get(port)
        return {"page_kib": len(body.encode()) / 1024.0,
                "series": sum(1 for l in body.splitlines() if l and l[0] != "#"),
                "pod_series": sum(1 for l in body.splitlines() if 'pod="' in l),
                "cpu_ms_per_collection": (c1 - c0) * 1e3 / ((w1 - w0)),
                "p50_ms": lat["p50_ms"], "p99_ms": lat["p99_ms"],
                "rss_mib": gb.rss_kib(p.pid) / 1024.0}
    finally:
        p.terminate()
        p.wait(10)


rows = []
for n in gpu_counts:
    r = measure(scenario(n), [])
    r.update(kind="gpus", gpus=n, pods=0, vgpu=False)
    rows.append(r)
    print(json.dumps(r), flush=True)

# Pods time-slicing the 8 GPUs ("GPU-...::k"), as bench/kubelet.sh does.
eight = f"{src}/testdata/scenarios/eight_gpus.yaml"
once = subprocess.run([exporter, "--nvml-library", simgpu, "-f", csv, "--once"],
                      capture_output=True, text=True, env=dict(os.environ,
                                                               NVMLX_SIMGPU_SCENARIO=eight)).stdout
uuids = sorted({l.split('UUID="')[1].split('"')[0] for l in once.splitlines()
                if l.startswith("nvml_exporter_gpu_up{")})
for vgpu in (False, True):
    for pods in pod_counts:
        extra = []
        fixture = None
        if True:  # -k in every row, 0 pods included: the pod count is the only change
            script = f"{work}/pods{pods}.json"
            json.dump({"answers": [{"pods": [
                {"namespace": f"team-{i % 20}", "name": f"inference-{i}",
                 "containers": [{"name": "server", "devices": [
                     {"resource_name": "nvidia.com/gpu",
                      "device_ids": [f"{uuids[i % len(uuids)]}::{i // len(uuids)}"]}]}]}
                for i in range(pods)]}]}, open(script, "w"))
            sock = f"{work}/kubelet{pods}{int(vgpu)}.sock"
            fixture = subprocess.Popen([f"{build}/test/fixtures/kubelet_fixture", "--socket", sock,
                                        "--script", script], stdout=subprocess.PIPE,
                                       stderr=subprocess.DEVNULL, text=True)
            fixture.stdout.readline()  # "ready"
            extra = ["-k", "--pod-resources-kubelet-socket", sock]
            if vgpu:
                extra.append("--kubernetes-virtual-gpus")
        try:
            r = measure(eight, extra)
        finally:
            if fixture:
                fixture.terminate()
                fixture.wait(5)
        r.update(kind="pods", gpus=8, pods=pods, vgpu=vgpu)
        rows.append(r)
        print(json.dumps(r), flush=True)

json.dump(rows, open(f"{work}/scaling.json", "w"))


def table(sel, key_label, key):
    base = sel[0]
    out = [f"| {key_label} | series | page KiB | p50 ms | p99 ms | collection CPU ms | RSS MiB | "
           "ratio page | ratio p50 | ratio CPU | ratio RSS |", "|" + "---|" * 11]
    for r in sel:
        out.append(f"| {key(r)} | {r['series']} | {r['page_kib']:.0f} | {r['p50_ms']:.3f} | "
                   f"{r['p99_ms']:.3f} | {r['cpu_ms_per_collection']:.2f} | {r['rss_mib']:.1f} | "
                   f"{r['page_kib'] / base['page_kib']:.2f} | {r['p50_ms'] / base['p50_ms']:.2f} | "
                   f"{r['cpu_ms_per_collection'] / base['cpu_ms_per_collection']:.2f} | "
                   f"{r['rss_mib'] / base['rss_mib']:.2f} |")
    return out


g = [r for r in rows if r["kind"] == "gpus"]
pk = [r for r in rows if r["kind"] == "pods" and not r["vgpu"]]
pv = [r for r in rows if r["kind"] == "pods" and r["vgpu"]]
md = ["## Scaling on simulated GPUs (`bench/scaling.sh`)", "",
      f"Measured by `make bench` on {time.strftime('%Y-%m-%d')}: one daemon per row, "
      "`etc/dcp-metrics-included.csv`, `-c 1000`; collection CPU is the daemon's CPU per second "
      f"(one collection, and with `-k` one kubelet refresh) over {secs:.0f} s without scrapes; "
      f"latency over {scrapes} sequential scrapes on one kept-alive connection. Ratios are to "
      "the first row of each table, measured in the same run.", "",
      "GPUs (no pods):", ""] + table(g, "GPUs", lambda r: r["gpus"]) + [
      "", "Pods time-slicing 8 GPUs, `-k` (pod labels on each GPU's series):", ""] + table(
      pk, "pods", lambda r: r["pods"]) + [
      "", "Pods time-slicing 8 GPUs, `-k --kubernetes-virtual-gpus` (one series per sharing "
      "pod, so the page grows with the pods by design):", ""] + table(
      pv, "pods", lambda r: r["pods"]) + [
      "", "The scrape only copies the pre-rendered page: its latency follows the page's size "
      "and nothing else. Without virtual GPUs the page does not grow with the pods, and neither "
      "does the scrape; with them the latency per KiB of page stays flat while the page grows. "
      "The pods cost collection CPU (the kubelet refresh and the render, once per second, off the "
      "scrape path).", "", "![scaling](benchmarks/scaling.png)", ""]
open(out_md, "w").write("\n".join(md))
print("\n".join(md))

plot = f"""
import json, matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
rows = json.load(open({f"{work}/scaling.json"!r}))
fig, ax = plt.subplots(1, 3, figsize=(15, 4.2))
g = [r for r in rows if r["kind"] == "gpus"]
ax[0].plot([r["gpus"] for r in g], [r["cpu_ms_per_collection"] for r in g], "o-", label="collection CPU ms")
ax[0].plot([r["gpus"] for r in g], [r["p50_ms"] for r in g], "s-", label="scrape p50 ms")
ax[0].set_xscale("log"); ax[0].set_yscale("log"); ax[0].set_xlabel("simulated GPUs"); ax[0].legend(); ax[0].set_title("GPUs (no pods)")
for vg, st in ((False, "-k"), (True, "-k --kubernetes-virtual-gpus")):
    p = [r for r in rows if r["kind"] == "pods" and r["vgpu"] == vg]
    ax[1].plot([r["pods"] for r in p], [r["p50_ms"] for r in p], "o-", label="p50 ms, " + st)
    ax[1].plot([r["pods"] for r in p], [r["p50_ms"] / max(r["page_kib"], 1) * 1000 for r in p], "x--", label="p50 µs per KiB, " + st)
    ax[2].plot([r["pods"] for r in p], [r["cpu_ms_per_collection"] for r in p], "o-", label="CPU ms / s, " + st)
    ax[2].plot([r["pods"] for r in p], [r["rss_mib"] for r in p], "s--", label="RSS MiB, " + st)
ax[1].set_yscale("log"); ax[1].set_xlabel("pods (8 GPUs)"); ax[1].set_title("scrape"); ax[1].legend(fontsize=7)
ax[2].set_yscale("log"); ax[2].set_xlabel("pods (8 GPUs)"); ax[2].set_title("collection"); ax[2].legend(fontsize=7)
fig.tight_layout(); fig.savefig({out_png!r}, dpi=90)
"""
subprocess.run(["/usr/bin/python3", "-c", plot], check=True)

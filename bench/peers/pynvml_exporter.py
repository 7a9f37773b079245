#!/usr/bin/env python3
"""A stand-in for what users write themselves: a Python GPU exporter.

Not part of nvml-exporter. bench/gpu.sh runs it beside our daemon as the peer that many sites
actually deploy: the prometheus_client library plus nvidia-ml-py (pynvml), reading the DEV fields
of etc/dcp-metrics-included.csv from NVML inside every scrape (the usual shape: a custom
collector whose collect() calls NVML). When prometheus_client is not installed it falls back to
the standard library's http.server with the same NVML reads and a hand-written text page, and
says so on stderr and in the page (`# stand-in: http.server`): the NVML cost per scrape is the
same, the HTTP layer differs.

Usage: pynvml_exporter.py PORT
"""
import sys

import pynvml as N

FIELD_MEMORY_TEMP = 82          # NVML_FI_DEV_MEMORY_TEMP
FIELD_TOTAL_ENERGY = 83         # NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION
FIELD_NVLINK_BW_TOTAL_TX = 139  # NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX (scope: all links)


def read_gpu(h):
    """The DEV fields of dcp-metrics-included.csv, one NVML call each (as users write it)."""
    out = {}

    def put(name, fn):
        try:
            out[name] = float(fn())
        except N.NVMLError:
            pass

    put("DCGM_FI_DEV_SM_CLOCK", lambda: N.nvmlDeviceGetClockInfo(h, N.NVML_CLOCK_SM))
    put("DCGM_FI_DEV_MEM_CLOCK", lambda: N.nvmlDeviceGetClockInfo(h, N.NVML_CLOCK_MEM))
    put("DCGM_FI_DEV_GPU_TEMP", lambda: N.nvmlDeviceGetTemperature(h, N.NVML_TEMPERATURE_GPU))
    put("DCGM_FI_DEV_POWER_USAGE", lambda: N.nvmlDeviceGetPowerUsage(h) / 1000.0)
    put("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", lambda: N.nvmlDeviceGetTotalEnergyConsumption(h))
    put("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", lambda: N.nvmlDeviceGetPcieReplayCounter(h))
    try:
        u = N.nvmlDeviceGetUtilizationRates(h)
        out["DCGM_FI_DEV_GPU_UTIL"] = u.gpu
        out["DCGM_FI_DEV_MEM_COPY_UTIL"] = u.memory
    except N.NVMLError:
        pass
    put("DCGM_FI_DEV_ENC_UTIL", lambda: N.nvmlDeviceGetEncoderUtilization(h)[0])
    put("DCGM_FI_DEV_DEC_UTIL", lambda: N.nvmlDeviceGetDecoderUtilization(h)[0])
    try:
        m = N.nvmlDeviceGetMemoryInfo(h)
        out["DCGM_FI_DEV_FB_FREE"] = m.free / 1048576
        out["DCGM_FI_DEV_FB_USED"] = m.used / 1048576
        out["DCGM_FI_DEV_FB_RESERVED"] = (m.total - m.free - m.used) / 1048576
    except N.NVMLError:
        pass
    try:
        rows = N.nvmlDeviceGetRemappedRows(h)
        out["DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS"] = rows[0]
        out["DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS"] = rows[1]
        out["DCGM_FI_DEV_ROW_REMAP_FAILURE"] = rows[3]
    except N.NVMLError:
        pass
    try:
        vals = N.nvmlDeviceGetFieldValues(h, [FIELD_MEMORY_TEMP, FIELD_TOTAL_ENERGY,
                                              (FIELD_NVLINK_BW_TOTAL_TX, 0xFFFFFFFF)])
        if vals[0].nvmlReturn == 0:
            out["DCGM_FI_DEV_MEMORY_TEMP"] = vals[0].value.ullVal
        if vals[2].nvmlReturn == 0:
            out["DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL"] = vals[2].value.ullVal
    except (N.NVMLError, TypeError):
        pass
    return out


def main():
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 9401
    N.nvmlInit()
    handles = []
    for i in range(N.nvmlDeviceGetCount()):
        h = N.nvmlDeviceGetHandleByIndex(i)
        uuid = N.nvmlDeviceGetUUID(h)
        handles.append((str(i), uuid.decode() if isinstance(uuid, bytes) else uuid, h))
    try:
        from prometheus_client import start_http_server, REGISTRY
        from prometheus_client.core import GaugeMetricFamily

        class Collector:
            def collect(self):
                fams = {}
                for idx, uuid, h in handles:
                    for name, v in read_gpu(h).items():
                        if name not in fams:
                            fams[name] = GaugeMetricFamily(name, name, labels=["gpu", "UUID"])
                        fams[name].add_metric([idx, uuid], v)
                yield from fams.values()

        REGISTRY.register(Collector())
        print("stand-in: prometheus_client + pynvml", file=sys.stderr, flush=True)
        start_http_server(port, addr="127.0.0.1")
        import threading
        threading.Event().wait()
    except ImportError:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        print("stand-in: prometheus_client not installed; http.server + pynvml", file=sys.stderr,
              flush=True)

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):
                lines = ["# stand-in: http.server"]
                for idx, uuid, h in handles:
                    for name, v in read_gpu(h).items():
                        lines.append(f'{name}{{gpu="{idx}",UUID="{uuid}"}} {v}')
                body = ("\n".join(lines) + "\n").encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()


if __name__ == "__main__":
    main()

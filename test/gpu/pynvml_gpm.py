#!/usr/bin/env python3
"""Independent GPM reading through pynvml (nvidia-ml-py) for GPU 0, once a second:
prints `t graphics_util any_tensor_util dram_bw_util` (percent). Usage: pynvml_gpm.py SECONDS"""
import sys
import time

import pynvml as N

N.nvmlInit()
h = N.nvmlDeviceGetHandleByIndex(0)
a, b = N.nvmlGpmSampleAlloc(), N.nvmlGpmSampleAlloc()
N.nvmlGpmSampleGet(h, a)
end = time.time() + float(sys.argv[1])
ids = [N.NVML_GPM_METRIC_GRAPHICS_UTIL, N.NVML_GPM_METRIC_ANY_TENSOR_UTIL, N.NVML_GPM_METRIC_DRAM_BW_UTIL]
while time.time() < end:
    time.sleep(1.0)
    N.nvmlGpmSampleGet(h, b)
    mg = N.c_nvmlGpmMetricsGet_t()
    mg.version = N.NVML_GPM_METRICS_GET_VERSION
    mg.numMetrics = len(ids)
    mg.sample1, mg.sample2 = a, b
    for i, m in enumerate(ids):
        mg.metrics[i].metricId = m
    N.nvmlGpmMetricsGet(mg)
    print(f"{time.time():.3f} " + " ".join(f"{mg.metrics[i].value:.3f}" for i in range(len(ids))), flush=True)
    a, b = b, a

#!/usr/bin/env python3
"""PCIe load for the GPU scripts: pinned 256 MiB host<->device copies on GPU 0, both directions,
for SECONDS. Usage: pcie_copies.py SECONDS (needs PyTorch with CUDA, as on the validation host)."""
import sys
import time

import torch

end = time.time() + float(sys.argv[1])
host = torch.empty(256 << 20, dtype=torch.uint8).pin_memory()
dev = torch.empty_like(host, device="cuda")
start = time.time()
copies = 0
while time.time() < end:
    dev.copy_(host, non_blocking=True)
    host.copy_(dev, non_blocking=True)
    copies += 1
torch.cuda.synchronize()
# The load's own rate each way (what GPM and PM sampling should read while it runs): the runs of
# two sources are sequential, so their loads are compared too.
mib_s = copies * 256 / (time.time() - start)
print(f"pcie_copies seconds={time.time() - start:.1f} copies={copies} each_way_mib_s={mib_s:.1f}")

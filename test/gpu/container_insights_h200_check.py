#!/usr/bin/env python3
"""Checks container_insights_h200.sh's EMF file against the GPU and the pulses' phases.

Rules (each a row of the report; exit status 1 when one fails):
 - emf_validate found every document valid EMF and valid Container Insights;
 - NodeGPU: node_gpu_memory_total is nvidia-smi's memory.total (MiB x 1048576) and
   node_gpu_memory_used within 2 % of nvidia-smi's memory.used (read once, 4 s in);
   node_gpu_utilization >= 50 somewhere and <= 5 somewhere settled in the window where both
   pulses are off; node_gpu_tensor_core_utilization > 0.05 somewhere while B (tensor) is on;
 - ContainerGPU/PodGPU: one event per pod per collection once attributed; a pod whose process
   is off (settled) shows utilization <= 5; A alone on shows A >= 50 and B <= 5; the pods'
   memory shares sum to at most the node's memory used;
 - PodName of A is its Deployment (trainer-a), B's is its own name;
 - Pod/Node allocation events: each pod request = limit = usage_total = 1 and reserved 25 %;
   node limit 4, usage_total 2, node_gpu_request 2, reserved 50, unreserved 50, available 2;
 - InstanceId/InstanceType are the Node object's on every collection after the first (the first
   may precede the Node GET's answer: no --emf-instance-* flags are given here)."""
import json, sys

from pulse_log import phases
from collections import defaultdict
out = sys.argv[1]
MiB = 1 << 20
docs = [json.loads(l) for l in open(f"{out}/ci.log") if l.strip()]
pa, pb = phases(f"{out}/pulse_a.txt"), phases(f"{out}/pulse_b.txt")
def state(ph, t):
    for s_, a, b in ph:
        if a + 2.0 <= t <= b - 0.5:  # settled: a value is the average over the last interval
            return s_
    return None
rows, ok = [], True
def rule(name, passed, detail):
    global ok
    ok = ok and passed
    rows.append(f"| {name} | {detail} | {'ok' if passed else 'FAIL'} |")

validate = open(f"{out}/validate.txt").read()
rule("emf_validate --container-insights", "emf_validate exit 0" in validate,
     validate.strip().splitlines()[-2] if len(validate.strip().splitlines()) > 1 else validate.strip())
by_type = defaultdict(list)
for d in docs:
    by_type[d["Type"]].append(d)
nodes = [d for d in by_type["NodeGPU"] if d["GpuDevice"] == "nvidia0"]
smi_total, smi_used = (float(x) for x in open(f"{out}/smi_memory.txt").read().split(","))
totals = {d["node_gpu_memory_total"] for d in nodes}
rule("node_gpu_memory_total = nvidia-smi memory.total", totals == {smi_total * MiB},
     f"{sorted(totals)} vs {smi_total:.0f} MiB")
t_smi = float(open(f"{out}/start.txt").read()) + 4
near = min(nodes, key=lambda d: abs(d["_aws"]["Timestamp"] / 1000 - t_smi))
rule("node_gpu_memory_used ~ nvidia-smi memory.used (2 %)",
     abs(near["node_gpu_memory_used"] / MiB - smi_used) <= 0.02 * smi_used + 16,
     f"{near['node_gpu_memory_used'] / MiB:.0f} MiB vs {smi_used:.0f} MiB")
util = [(d["_aws"]["Timestamp"] / 1000, d["node_gpu_utilization"]) for d in nodes]
both_off = [u for t, u in util if state(pa, t) == "off" and state(pb, t) == "off"]
rule("node_gpu_utilization under load >= 50", max(u for _, u in util) >= 50,
     f"max {max(u for _, u in util)}")
rule("node_gpu_utilization with both pulses off <= 5", bool(both_off) and max(both_off) <= 5,
     f"{len(both_off)} samples, max {max(both_off) if both_off else '-'}")
tensor_on = [d["node_gpu_tensor_core_utilization"] for d in nodes
             if "node_gpu_tensor_core_utilization" in d and state(pb, d["_aws"]["Timestamp"] / 1000) == "on"]
rule("node_gpu_tensor_core_utilization while B (tensor) is on > 0.05",
     bool(tensor_on) and max(tensor_on) > 0.05,
     f"{len(tensor_on)} samples, max {max(tensor_on) if tensor_on else '-'}")

A, B = "trainer-a-5f6d7c8b9-x2x9q", "notebook-b"
cont = defaultdict(dict)
for d in by_type["ContainerGPU"]:
    cont[d["_aws"]["Timestamp"]][d["FullPodName"]] = d
off_ok, alone, n_off = True, [], 0
for ts, pods in sorted(cont.items()):
    t = ts / 1000
    for name, ph in ((A, pa), (B, pb)):
        if name in pods and state(ph, t) == "off":
            n_off += 1
            off_ok = off_ok and pods[name].get("container_gpu_utilization", 0) <= 5
    if state(pa, t) == "on" and state(pb, t) == "off" and A in pods and B in pods:
        alone.append((pods[A]["container_gpu_utilization"], pods[B]["container_gpu_utilization"]))
rule("a pod whose process is off: container_gpu_utilization <= 5", off_ok and n_off > 0,
     f"{n_off} samples")
rule("A alone on: A >= 50, B <= 5", bool(alone) and all(a >= 50 and b <= 5 for a, b in alone),
     f"{len(alone)} samples, A min {min(a for a, _ in alone) if alone else '-'}, "
     f"B max {max(b for _, b in alone) if alone else '-'}")
node_used = {d["_aws"]["Timestamp"]: d["node_gpu_memory_used"] for d in nodes}
over = [ts for ts, pods in cont.items() if ts in node_used and
        sum(p.get("container_gpu_memory_used", 0) for p in pods.values()) > node_used[ts]]
rule("pods' memory shares <= the GPU's memory used", not over and bool(cont),
     f"{len(cont)} collections with pod events, {len(over)} over")
names = {d["FullPodName"]: d["PodName"] for d in by_type["PodGPU"]}
rule("PodName: A's Deployment, B's own name",
     names.get(A) == "trainer-a" and names.get(B) == B, f"{names}")

last_ts = max(d["_aws"]["Timestamp"] for d in docs)
last = [d for d in docs if d["_aws"]["Timestamp"] == last_ts]
pods = {d["FullPodName"]: d for d in last if d["Type"] == "Pod"}
want_pod = (1, 1, 1, 25)
got_pod = {n: (d["pod_gpu_request"], d["pod_gpu_limit"], d["pod_gpu_usage_total"],
               d["pod_gpu_reserved_capacity"]) for n, d in pods.items()}
rule("Pod events: request, limit, usage_total, reserved %",
     got_pod == {A: want_pod, B: want_pod}, f"{got_pod}")
node = [d for d in last if d["Type"] == "Node"]
got_node = tuple(node[0].get(k) for k in ("node_gpu_limit", "node_gpu_usage_total", "node_gpu_request",
                 "node_gpu_reserved_capacity", "node_gpu_unreserved_capacity",
                 "node_gpu_available_capacity")) if len(node) == 1 else None
rule("Node event: limit, usage_total, request, reserved, unreserved, available",
     got_node == (4, 2, 2, 50, 50, 2), f"{got_node}")
first_ts = min(d["_aws"]["Timestamp"] for d in docs)
ident = {(d.get("InstanceId"), d.get("InstanceType")) for d in docs if d["_aws"]["Timestamp"] != first_ts}
early = sum(1 for d in docs if d["_aws"]["Timestamp"] == first_ts and "InstanceId" not in d)
rule("InstanceId/InstanceType from the Node object, every collection after the first",
     ident == {("i-0a200b1c2d3e4f5a6", "p5en.48xlarge")},
     f"{ident}; {early} document(s) of the first collection without them")

print("# --emf-schema container-insights on the H200\n")
print(f"{len(docs)} documents: " + ", ".join(f"{k} {len(v)}" for k, v in sorted(by_type.items())) + "\n")
print("| rule | seen | verdict |\n|---|---|---|")
print("\n".join(rows))
sys.exit(0 if ok else 1)

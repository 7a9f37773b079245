#!/usr/bin/env python3
"""Records the GPU Operator chart's `dcgmExporter` and `dcgm` value keys, for
test/deploy/gpu_operator_values_test.py (CI cannot reach the operator's repository).

Two sources, both from one commit of NVIDIA/gpu-operator:
  - deployments/gpu-operator/templates/clusterpolicy.yaml: the `.Values.<section>.<key>` paths
    the chart's template reads (a value the template never reads is silently dropped: a typo in a
    values file does nothing, which is what the test guards against);
  - deployments/gpu-operator/crds/nvidia.com_clusterpolicies.yaml: the ClusterPolicy schema under
    spec.<section>, for the keys below those the template copies whole (toYaml: serviceMonitor,
    service, resources, env, ...).
Only key names are recorded, not the files.

usage: record_gpu_operator_keys.py GPU_OPERATOR_CHECKOUT > testdata/gpu-operator/chart-keys.yaml
"""
import re
import subprocess
import sys

import yaml

repo = sys.argv[1]
SECTIONS = ["dcgmExporter", "dcgm"]
TEMPLATE = "deployments/gpu-operator/templates/clusterpolicy.yaml"
CRD = "deployments/gpu-operator/crds/nvidia.com_clusterpolicies.yaml"


def show(path):
    return subprocess.run(["git", "-C", repo, "show", f"HEAD:{path}"], capture_output=True,
                          text=True, check=True).stdout


commit = subprocess.run(["git", "-C", repo, "rev-parse", "HEAD"], capture_output=True, text=True,
                        check=True).stdout.strip()
template = show(TEMPLATE)
crd = yaml.safe_load(show(CRD))
schema = next(v for v in crd["spec"]["versions"] if v.get("storage"))["schema"]["openAPIV3Schema"]


def flatten(node, prefix, out):
    """Dotted paths of an OpenAPI schema's properties; `[]` stands for an array's items."""
    if node.get("type") == "array" and "items" in node:
        flatten(node["items"], prefix + "[]", out)
        return
    for name, sub in sorted(node.get("properties", {}).items()):
        path = f"{prefix}.{name}" if prefix else name
        out.append(path)
        flatten(sub, path, out)
    if isinstance(node.get("additionalProperties"), dict) or node.get("x-kubernetes-preserve-unknown-fields"):
        out.append(f"{prefix}.*" if prefix else "*")


print("# The GPU Operator chart's value keys (scripts/record_gpu_operator_keys.py).")
print(yaml.safe_dump({
    "repository": "NVIDIA/gpu-operator",
    "commit": commit,
    "template": TEMPLATE,
    "crd": CRD,
    "sections": {
        s: {
            "template_reads": sorted(set(re.findall(r"\.Values\." + s + r"\.([A-Za-z0-9_.]+)", template))),
            "crd_paths": (lambda out: (flatten(schema["properties"]["spec"]["properties"][s], "", out), out)[1])([]),
        } for s in SECTIONS
    },
}, sort_keys=False, width=100), end="")

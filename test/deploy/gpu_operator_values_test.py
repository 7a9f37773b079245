#!/usr/bin/env python3
"""deploy/gpu-operator/values.yaml against the GPU Operator chart's own keys.

The chart's ClusterPolicy template copies only the `.Values.dcgmExporter.<key>` it names (and
`.Values.dcgm.<key>`); a key it does not read is dropped without a word, so a misspelt key in a
values file silently keeps dcgm-exporter. The keys are recorded from NVIDIA/gpu-operator (template
deployments/gpu-operator/templates/clusterpolicy.yaml and ClusterPolicy CRD
deployments/gpu-operator/crds/nvidia.com_clusterpolicies.yaml, at the commit in
testdata/gpu-operator/chart-keys.yaml: a22dbf671f2e26f9a1e342f8eea28e196235e110, the one
testdata/compat/deployments.yaml took the operator's DaemonSet from) by
scripts/record_gpu_operator_keys.py. Every key path of our values must be one the template reads
(its first segment) and one the CRD has (the full path); and the values must do what
docs/gpu-operator.md says: our image, the seed's ConfigMap and collectors path, no hostengine.

usage: gpu_operator_values_test.py SOURCE_DIR
"""
import os
import sys

import yaml

src = sys.argv[1]
recorded = yaml.safe_load(open(os.path.join(src, "testdata/gpu-operator/chart-keys.yaml")))
values = yaml.safe_load(open(os.path.join(src, "deploy/gpu-operator/values.yaml")))
compat = open(os.path.join(src, "testdata/compat/deployments.yaml")).read()
failures = []


def fail(msg):
    failures.append(msg)
    print(f"FAIL: {msg}", file=sys.stderr)


def paths(node, prefix=""):
    if isinstance(node, dict):
        for k, v in node.items():
            p = f"{prefix}.{k}" if prefix else k
            yield p
            yield from paths(v, p)
    elif isinstance(node, list):
        for item in node:
            yield from paths(item, prefix + "[]")


if recorded["commit"] not in compat:
    fail(f"chart keys from {recorded['commit']}, but testdata/compat/deployments.yaml records "
         "another operator commit: record both from one")

checked = 0
for section, keys in values.items():
    if section not in recorded["sections"]:
        fail(f"values section {section}: not recorded (scripts/record_gpu_operator_keys.py SECTIONS)")
        continue
    reads = set(recorded["sections"][section]["template_reads"])
    crd = set(recorded["sections"][section]["crd_paths"])
    open_maps = {p[:-2] for p in crd if p.endswith(".*")}
    for p in paths(keys):
        first = p.split(".")[0].split("[")[0]
        if first not in reads:
            fail(f"{section}.{p}: the chart's template never reads .Values.{section}.{first}")
        elif p not in crd and not any(p.startswith(m + ".") for m in open_maps):
            fail(f"{section}.{p}: not in the ClusterPolicy schema of spec.{section}")
        else:
            checked += 1

exp = values.get("dcgmExporter", {})
if exp.get("image") != "nvml-exporter" or not exp.get("repository") or not exp.get("version"):
    fail("dcgmExporter.repository/image/version must name our image")
if exp.get("config", {}).get("name") != "metrics-config":
    fail("dcgmExporter.config.name must be the seed's ConfigMap metrics-config")
if {"name": "DCGM_EXPORTER_COLLECTORS", "value": "/etc/dcgm-exporter/dcgm-metrics.csv"} not in exp.get("env", []):
    fail("dcgmExporter.env must point DCGM_EXPORTER_COLLECTORS at the ConfigMap's dcgm-metrics.csv")
# The same env as the seed case the compat and image tests run.
if "DCGM_EXPORTER_COLLECTORS: /etc/dcgm-exporter/dcgm-metrics.csv" not in compat:
    fail("testdata/compat/deployments.yaml has no seed case with this collectors path")
if values.get("dcgm", {}).get("enabled") is not False:
    fail("dcgm.enabled must be false: nvml-exporter needs no hostengine")

if failures:
    sys.exit(1)
assert checked >= 10, checked
print(f"gpu_operator_values_test: {checked} keys are the chart's (gpu-operator {recorded['commit'][:8]})")

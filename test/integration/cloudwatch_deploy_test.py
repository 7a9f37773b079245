#!/usr/bin/env python3
"""deploy/cloudwatch: the corrected Prometheus scrape job does what its README says, and the
article's original rules do not. Debian's promtool is built without kubernetes_sd, so the relabel
rules are applied here to the targets Kubernetes pod discovery would produce for a GPU Operator
node (Prometheus semantics: regexes fully anchored, defaults separator ';', regex '(.*)',
replacement '$1', action replace; an empty result deletes the label; labels starting with __
are dropped after relabeling). The cwagent configs must be valid JSON, and the EMF one must use
the emf listener.

usage: cloudwatch_deploy_test.py SOURCE_DIR
"""
import json
import re
import sys

import yaml

src = sys.argv[1]
deploy = f"{src}/deploy/cloudwatch"


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def expand(template, m):
    # Prometheus: $1, ${1}; Python's expand uses \1, so translate.
    t = re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda g: "\\g<" + (g.group(1) or g.group(2)) + ">", template)
    return m.expand(t)


def relabel(labels, rules):
    labels = dict(labels)
    for r in rules:
        action = r.get("action", "replace").lower()
        regex = re.compile(r"(?s:" + str(r.get("regex", "(.*)")) + r")\Z")
        sep = r.get("separator", ";")
        value = sep.join(labels.get(s, "") for s in r.get("source_labels", []))
        if action == "keep":
            if not regex.match(value):
                return None
        elif action == "drop":
            if regex.match(value):
                return None
        elif action == "replace":
            m = regex.match(value)
            if not m:
                continue
            if "target_label" not in r:
                raise ValueError("replace without target_label")
            res = expand(str(r.get("replacement", "$1")), m)
            if res == "":
                labels.pop(r["target_label"], None)
            else:
                labels[r["target_label"]] = res
        elif action == "labelmap":
            for k, v in list(labels.items()):
                m = regex.match(k)
                if m:
                    labels[expand(str(r.get("replacement", "$1")), m)] = v
        else:
            raise ValueError(action)
    return {k: v for k, v in labels.items() if not k.startswith("__")}


def pod_target(container, port, init="false", pod="nvidia-dcgm-exporter-48cwd"):
    t = {
        "__address__": f"10.1.2.3:{port}" if port else "10.1.2.3",
        "__meta_kubernetes_namespace": "gpu-operator",
        "__meta_kubernetes_pod_name": pod,
        "__meta_kubernetes_pod_container_name": container,
        "__meta_kubernetes_pod_container_init": init,
        "__meta_kubernetes_pod_label_app": "nvidia-dcgm-exporter",
        "__meta_kubernetes_pod_node_name": "ip-192-168-214-241.ec2.internal",
        "__meta_kubernetes_pod_controller_kind": "DaemonSet",
        "__meta_kubernetes_pod_controller_name": "nvidia-dcgm-exporter",
        "__meta_kubernetes_pod_phase": "Running",
    }
    if port:
        t["__meta_kubernetes_pod_container_port_number"] = str(port)
    return t


# What role: pod discovers on a GPU node: the exporter's metrics port, its init container (no
# port), a second port, the Helm chart's container name, nvml-exporter, and an unrelated pod.
targets = {
    "operator exporter": pod_target("nvidia-dcgm-exporter", 9400),
    "init container": pod_target("toolkit-validation", None, init="true"),
    "other port": pod_target("nvidia-dcgm-exporter", 8080),
    "helm chart": pod_target("exporter", 9400, pod="dcgm-exporter-x"),
    "nvml-exporter": pod_target("nvml-exporter", 9400, pod="nvml-exporter-y"),
    "unrelated": pod_target("nginx", 9400, pod="web-1"),
}

cfg = yaml.safe_load(open(f"{deploy}/prometheus/prometheus.yaml"))
job = cfg["scrape_configs"][0]
if job["job_name"] != "kubernetes-pod-dcgm-exporter" or job["metrics_path"] != "/metrics":
    fail(f"job name/path: {job['job_name']} {job['metrics_path']}")
kept = {name: relabel(t, job["relabel_configs"]) for name, t in targets.items()}
want_kept = {"operator exporter", "helm chart", "nvml-exporter"}
if {n for n, v in kept.items() if v is not None} != want_kept:
    fail(f"kept targets: {sorted(n for n, v in kept.items() if v is not None)}")
for name in want_kept:
    lab = kept[name]
    if lab.get("Service") != "nvidia-dcgm-exporter" or lab.get("Namespace") != "gpu-operator":
        fail(f"{name}: Service/Namespace: {lab}")
    if "pod" in lab:
        fail(f"{name}: a `pod` target label would clobber the exporter's pod label: {lab}")
    if lab.get("exporter_pod") != targets[name]["__meta_kubernetes_pod_name"]:
        fail(f"{name}: exporter_pod: {lab}")
    if lab.get("NodeName") != "ip-192-168-214-241.ec2.internal":
        fail(f"{name}: NodeName: {lab}")
print("ok: corrected job keeps exactly the exporter metrics ports and sets Service/Namespace")

# The article's rules as published (with the target_label it implies) keep nothing, and its
# address rule leaves a wrong port alone.
article = [
    {"source_labels": ["__meta_kubernetes_pod_container_name"], "action": "keep",
     "regex": "^DCGM.*$"},
    {"source_labels": ["__address__"], "action": "replace", "regex": "([^:]+)(?::d+)?",
     "replacement": "${1}:9400", "target_label": "__address__"},
]
if any(relabel(t, article) is not None for t in targets.values()):
    fail("the article's keep rule was expected to drop every target")
addr_rule = article[1:]
rewritten = {n: relabel(t, addr_rule + [
    {"source_labels": ["__address__"], "target_label": "address"}]) for n, t in targets.items()}
if rewritten["other port"]["address"] != "10.1.2.3:8080":
    fail("article address rule: expected the wrong port to stay")
if rewritten["init container"]["address"] != "10.1.2.3:9400":
    fail("article address rule: expected the port-less init container to be rewritten")
print("ok: the article's rules drop every target; its address rule ignores wrong ports")

# Agent configs: valid JSON; the EMF path uses the emf listener and no prometheus scrape.
emf = json.load(open(f"{deploy}/emf/cwagentconfig.json"))
if "emf" not in emf["logs"]["metrics_collected"] or \
        "prometheus" in emf["logs"]["metrics_collected"]:
    fail("emf/cwagentconfig.json must enable the emf listener only")
addr = emf["logs"]["metrics_collected"]["emf"].get("service_address", "")
if not re.fullmatch(r"(tcp|udp)://[^:]+:25888", addr):
    fail(f"emf service_address: {addr}")
ds = list(yaml.safe_load_all(open(f"{deploy}/emf/daemonset.yaml")))
args = [a for d in ds if d["kind"] == "DaemonSet"
        for c in d["spec"]["template"]["spec"]["containers"] for a in c.get("args", [])]
if f"--emf-output={addr}".replace("0.0.0.0", "127.0.0.1") not in args:
    fail(f"the DaemonSet must send to the agent's listener {addr}: {args}")
prom = json.load(open(f"{deploy}/prometheus/cwagentconfig.json"))
decl = prom["logs"]["metrics_collected"]["prometheus"]["emf_processor"]["metric_declaration"]
if len(decl) != 1 or len(decl[0]["metric_selectors"]) != 14:
    fail("prometheus/cwagentconfig.json must keep the article's declaration")
print("cloudwatch_deploy_test: all passed")

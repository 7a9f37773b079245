#!/usr/bin/env python3
"""What the scrape job's relabel rules keep, on the targets Kubernetes pod discovery makes.

Prometheus is not in a cluster here, so this applies deploy/prometheus/scrape-config.yaml's
relabel_configs to the meta labels that kubernetes_sd_configs (role: pod) gives the pods of the
GPU Operator, dcgm-exporter's Helm chart and ours, and to other pods, with Prometheus's rules:
regexes fully anchored (^(?:...)$; these patterns mean the same in Python's re and RE2), source
labels joined with ';', a missing label is "". Checks that exactly the exporters' 9400 ports
survive, with the node label; and that the seed's two rules (as the article printed them) keep
no target at all. Usage: relabel_check.py SOURCE_DIR
"""
import re
import sys

import yaml


def relabel(labels, rules):
    labels = dict(labels)
    for r in rules:
        action = r.get("action", "replace")
        value = r.get("separator", ";").join(labels.get(s, "") for s in r.get("source_labels", []))
        m = re.fullmatch(r.get("regex", "(.*)"), value, re.S)
        if action == "keep" and not m:
            return None
        if action == "drop" and m:
            return None
        if action == "replace" and m:
            repl = re.sub(r"\$\{(\d+)\}|\$(\d+)", lambda g: m.group(int(g.group(1) or g.group(2))) or "",
                          r.get("replacement", "$1"))
            if repl:
                labels[r["target_label"]] = repl
            else:
                labels.pop(r["target_label"], None)
    return labels


def target(app_label, name_label, container, port, init=False, ip="10.1.2.3", phase="Running"):
    t = {"__meta_kubernetes_pod_container_name": container,
         "__meta_kubernetes_pod_container_init": "true" if init else "false",
         "__meta_kubernetes_pod_node_name": "gpu-node-1",
         "__meta_kubernetes_namespace": "gpu-operator",
         "__meta_kubernetes_pod_phase": phase,
         "__address__": ip if port is None else (f"[{ip}]:{port}" if ":" in ip else f"{ip}:{port}")}
    if port is not None:
        t["__meta_kubernetes_pod_container_port_number"] = str(port)
    if app_label:
        t["__meta_kubernetes_pod_label_app"] = app_label
    if name_label:
        t["__meta_kubernetes_pod_label_app_kubernetes_io_name"] = name_label
    return t


def main():
    job = yaml.safe_load(open(f"{sys.argv[1]}/deploy/prometheus/scrape-config.yaml"))[0]
    rules = job["relabel_configs"]
    want_kept = {
        "GPU Operator": target("nvidia-dcgm-exporter", None, "nvidia-dcgm-exporter", 9400),
        "dcgm-exporter chart": target(None, "dcgm-exporter", "exporter", 9400),
        "nvml-exporter": target(None, "nvml-exporter", "nvml-exporter", 9400),
        "nvml-exporter on IPv6": target(None, "nvml-exporter", "nvml-exporter", 9400, ip="fd00::1"),
    }
    want_dropped = {
        "GPU Operator init container": target("nvidia-dcgm-exporter", None, "toolkit-validation", None, init=True),
        "sidecar port of an exporter pod": target(None, "nvml-exporter", "proxy", 8080),
        "other pod on 9400": target("web", "web", "web", 9400),
        "exporter pod not started": target(None, "nvml-exporter", "nvml-exporter", 9400, phase="Pending"),
    }
    problems = []
    for name, t in want_kept.items():
        got = relabel(t, rules)
        if got is None:
            problems.append(f"{name}: dropped, want kept")
        elif got["__address__"] != t["__address__"] or got.get("kubernetes_node") != "gpu-node-1":
            problems.append(f"{name}: {got['__address__']} node {got.get('kubernetes_node')}")
    for name, t in want_dropped.items():
        if relabel(t, rules) is not None:
            problems.append(f"{name}: kept, want dropped")
    # The seed's rules, as printed (its rewrite rule had no target_label: __address__ assumed).
    seed = [{"source_labels": ["__address__"], "regex": "([^:]+)(?::d+)?", "replacement": "${1}:9400",
             "target_label": "__address__"},
            {"source_labels": ["__meta_kubernetes_pod_container_name"], "regex": "^DCGM.*$", "action": "keep"}]
    seed_kept = [n for n, t in {**want_kept, **want_dropped}.items() if relabel(t, seed) is not None]
    if seed_kept:
        problems.append(f"the seed's rules were expected to keep nothing, kept {seed_kept}")
    wrong_port = relabel(target(None, None, "x", 8080), seed[:1])["__address__"]
    if wrong_port != "10.1.2.3:8080":
        problems.append(f"the seed's rewrite was expected to leave 8080 alone, gave {wrong_port}")
    if problems:
        print("\n".join("FAIL: " + p for p in problems))
        sys.exit(1)
    print(f"ok: the job keeps {len(want_kept)} exporter targets and drops {len(want_dropped)} others; "
          "the seed's rules keep none and leave a wrong port alone")


if __name__ == "__main__":
    main()

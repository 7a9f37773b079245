#!/usr/bin/env python3
"""Writes the Grafana dashboards of deploy/grafana/dashboards/ (nvml-exporter-*.json).

The JSON is generated so that every dashboard has the same variables, datasource references and
layout rules; edit this file, run it, commit both (test/prometheus/dashboards_check.py fails when
the committed JSON differs from what this writes).

Provisioning-safe: raw dashboard JSON (no API wrapper), a `datasource` variable that every panel
and variable uses (no `__inputs`, which only the UI import fills in), `id: null`, fixed `uid`s,
`timeseries` panels (not the Angular `graph` that Grafana 11 disables).

Usage: gen_dashboards.py [OUT_DIR]   (default: deploy/grafana/dashboards next to this script)
"""
import json
import os
import sys

DS = {"type": "prometheus", "uid": "${datasource}"}
# The node is the exporter's host label (NODE_NAME in a DaemonSet), spelt hostname by
# dcgm-exporter 4.8.3 and later (our default) and Hostname by 4.8.2 and before
# (--dcgm-exporter-compat 4.8.2). A Grafana query and legend can name one label, so the
# dashboards take the spelling from the variable host_label (default hostname; Hostname for a
# fleet of 4.8.2 exporters), which Grafana substitutes as text in queries, variable queries and
# legends.
HOST_LABELS = ("hostname", "Hostname")
NODE = "${host_label}"
CLUSTER = 'cluster=~"$cluster"'
GPU_SEL = f'{CLUSTER}, {NODE}=~"$node", gpu=~"$gpu"'
NODE_SEL = f'{CLUSTER}, {NODE}=~"$node"'
POD_SEL = f'{CLUSTER}, namespace=~"$namespace", pod=~"$pod", pod!=""'
IDLE_WINDOW = "15m"  # as the recording rule namespace_pod:dcgm_gpu_idle:count
# One series per GPU (or MIG instance): with --kubernetes-virtual-gpus a GPU also has a series
# per pod container holding a share (GPU_UTIL, FB_USED: the share; other fields: the GPU's value
# again), so per-GPU figures take the max over a GPU's series and per-pod ones the sum of the
# pod's containers on a GPU, as the recording rules of deploy/prometheus/rules.yml do.
GPU_KEY = f"cluster, {NODE}, UUID, GPU_I_ID"
POD_GPU_KEY = f"cluster, namespace, pod, {NODE}, gpu, UUID, GPU_I_ID"


def per_gpu(metric, sel):
    return f"max by ({GPU_KEY}) ({metric}{{{sel}}})"


def per_pod_gpu(expr):
    return f"sum by ({POD_GPU_KEY}) ({expr})"


def variable(name, label, query, multi=True, hide=0):
    return {
        "name": name, "label": label, "type": "query", "datasource": DS,
        # A plain query string (not the object form of newer Grafana): every version reads it.
        "definition": query, "query": query,
        "refresh": 2, "sort": 3, "multi": multi, "includeAll": True, "allValue": ".*",
        "current": {"selected": True, "text": ["All"], "value": ["$__all"]}, "hide": hide,
    }


def host_label_variable():
    options = [{"selected": i == 0, "text": v, "value": v} for i, v in enumerate(HOST_LABELS)]
    return {"name": "host_label", "label": "Host label", "type": "custom",
            "query": ",".join(HOST_LABELS), "options": options,
            "current": {"selected": True, "text": HOST_LABELS[0], "value": HOST_LABELS[0]},
            "multi": False, "includeAll": False, "hide": 0,
            "description": "The exporter's host label: hostname (dcgm-exporter 4.8.3 and later, "
                           "nvml-exporter's default) or Hostname (4.8.2 and before)."}


def datasource_variable():
    return {"name": "datasource", "label": "Data source", "type": "datasource",
            "query": "prometheus", "current": {}, "hide": 0, "refresh": 1, "regex": ""}


def target(expr, legend="", instant=False, ref="A"):
    t = {"datasource": DS, "expr": expr, "legendFormat": legend, "refId": ref}
    if instant:
        t.update({"instant": True, "range": False, "format": "table"})
    else:
        t.update({"range": True})
    return t


class Layout:
    """Places panels left to right on Grafana's 24-column grid."""

    def __init__(self):
        self.x, self.y, self.row_h, self.next_id = 0, 0, 0, 1

    def place(self, panel, w, h):
        if self.x + w > 24:
            self.x, self.y, self.row_h = 0, self.y + self.row_h, 0
        panel["gridPos"] = {"x": self.x, "y": self.y, "w": w, "h": h}
        panel["id"] = self.next_id
        self.next_id += 1
        self.x += w
        self.row_h = max(self.row_h, h)
        return panel

    def row(self, title):
        if self.x:
            self.x, self.y, self.row_h = 0, self.y + self.row_h, 0
        panel = {"type": "row", "title": title, "collapsed": False, "panels": []}
        self.place(panel, 24, 1)
        self.x, self.y, self.row_h = 0, self.y + 1, 0
        return panel


def timeseries(title, targets, unit, description="", minmax=None, stack=False):
    defaults = {"unit": unit, "custom": {"drawStyle": "line", "lineWidth": 1, "fillOpacity": 10,
                                         "showPoints": "never", "spanNulls": True,
                                         "stacking": {"mode": "normal" if stack else "none", "group": "A"}}}
    if minmax:
        defaults["min"], defaults["max"] = minmax
    return {"type": "timeseries", "title": title, "description": description, "datasource": DS,
            "targets": targets, "fieldConfig": {"defaults": defaults, "overrides": []},
            "options": {"legend": {"displayMode": "list", "placement": "bottom", "showLegend": True},
                        "tooltip": {"mode": "multi", "sort": "desc"}}}


def stat(title, expr, unit="none", description="", thresholds=None):
    steps = [{"color": "green", "value": None}] + [
        {"color": c, "value": v} for v, c in (thresholds or [])]
    return {"type": "stat", "title": title, "description": description, "datasource": DS,
            "targets": [target(expr, instant=True)],
            "fieldConfig": {"defaults": {"unit": unit, "thresholds": {"mode": "absolute", "steps": steps}},
                            "overrides": []},
            "options": {"reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
                        "colorMode": "value", "graphMode": "none", "textMode": "auto"}}


def bargauge(title, expr, legend, unit, description="", minmax=(None, None)):
    defaults = {"unit": unit}
    if minmax[0] is not None:
        defaults["min"], defaults["max"] = minmax
    return {"type": "bargauge", "title": title, "description": description, "datasource": DS,
            "targets": [target(expr, legend, instant=True)],
            "fieldConfig": {"defaults": defaults, "overrides": []},
            "options": {"orientation": "horizontal", "displayMode": "gradient",
                        "reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False}}}


def column_order(columns):
    """Grafana's organize transformation does not substitute variables: the node column is
    placed under both host label spellings."""
    names = [n for c in columns for n in (HOST_LABELS if c == NODE else (c,))]
    return {c: i for i, c in enumerate(names)}


def table(title, expr, description="", columns=()):
    hidden = {"Time": True, "__name__": True}
    return {"type": "table", "title": title, "description": description, "datasource": DS,
            "targets": [target(expr, instant=True)],
            "fieldConfig": {"defaults": {}, "overrides": []},
            "transformations": [{"id": "organize", "options": {
                "excludeByName": hidden, "indexByName": column_order(columns)}}],
            "options": {"showHeader": True}}


def dashboard(uid, title, description, variables, panels, tags):
    return {
        "id": None, "uid": uid, "title": title, "description": description,
        "tags": ["nvml-exporter", "gpu"] + tags, "timezone": "", "editable": True,
        "schemaVersion": 39, "version": 1, "refresh": "30s",
        "time": {"from": "now-1h", "to": "now"}, "graphTooltip": 1,
        "templating": {"list": [datasource_variable(), host_label_variable()] + variables},
        "annotations": {"list": []}, "links": [
            {"title": "GPU dashboards", "type": "dashboards", "tags": ["nvml-exporter"],
             "asDropdown": True, "includeVars": True, "keepTime": True}],
        "panels": panels,
    }


def cluster_var():
    return variable("cluster", "Cluster", "label_values(DCGM_FI_DEV_GPU_TEMP, cluster)")


def node_var():
    return variable("node", "Node", f"label_values(DCGM_FI_DEV_GPU_TEMP{{{CLUSTER}}}, {NODE})")


def fleet():
    L = Layout()
    sel = NODE_SEL
    idle_held = per_pod_gpu(f'max_over_time(DCGM_FI_DEV_GPU_UTIL{{{sel}, pod!=""}}[{IDLE_WINDOW}])') + " < 1"
    p = [L.row("Fleet")]
    p.append(L.place(stat("Nodes", f"count(count by (cluster, {NODE}) (DCGM_FI_DEV_GPU_TEMP{{{sel}}}))"), 3, 4))
    p.append(L.place(stat("GPUs", f"count({per_gpu('DCGM_FI_DEV_GPU_TEMP', sel)})"), 3, 4))
    p.append(L.place(stat("Busy GPUs", f"count({per_gpu('DCGM_FI_DEV_GPU_UTIL', sel)} >= 1) or vector(0)",
                          description="GPUs with utilization of 1 % or more now."), 3, 4))
    p.append(L.place(stat("Idle GPUs", f"count({per_gpu('DCGM_FI_DEV_GPU_UTIL', sel)} < 1) or vector(0)"), 3, 4))
    p.append(L.place(stat(
        "Idle allocated GPUs",
        f"count({idle_held}) or vector(0)",
        description=f"GPUs a pod holds but has not used (below 1 %) for {IDLE_WINDOW}.",
        thresholds=[(1, "orange")]), 3, 4))
    p.append(L.place(stat("Power", f"sum({per_gpu('DCGM_FI_DEV_POWER_USAGE', sel)})", "watt"), 3, 4))
    p.append(L.place(stat("Xids (window)",
                          f'sum(DCGM_EXP_XID_ERRORS_COUNT{{{sel}, xid!=""}}) or vector(0)',
                          description="Xid errors in the exporter's window (5 minutes by default).",
                          thresholds=[(1, "red")]), 3, 4))
    p.append(L.place(stat("GPUs lost", f"count(nvml_exporter_gpu_up{{{CLUSTER}}} == 0) or vector(0)",
                          description="GPUs the exporter cannot read (GPU_IS_LOST, Xid 79).",
                          thresholds=[(1, "red")]), 3, 4))
    p.append(L.place(timeseries("Busy and idle GPUs", [
        target(f"count({per_gpu('DCGM_FI_DEV_GPU_UTIL', sel)} >= 1) or vector(0)", "busy"),
        target(f"count({per_gpu('DCGM_FI_DEV_GPU_UTIL', sel)} < 1) or vector(0)", "idle", ref="B"),
        target(f"count({idle_held}) or vector(0)",
               "idle, allocated to a pod", ref="C")], "none"), 12, 8))
    p.append(L.place(bargauge("GPUs per model", f"count by (modelName) (max by ({GPU_KEY}, modelName) (DCGM_FI_DEV_GPU_TEMP{{{sel}}}))",
                              "{{modelName}}", "none"), 12, 8))
    p.append(L.place(timeseries("GPU utilization per node", [
        target(f"avg by (cluster, {NODE}) ({per_gpu('DCGM_FI_DEV_GPU_UTIL', sel)})", f"{{{{{NODE}}}}}")],
        "percent", minmax=(0, 100)), 12, 8))
    p.append(L.place(timeseries("GPU memory used per node", [
        target(f"sum by (cluster, {NODE}) ({per_gpu('DCGM_FI_DEV_FB_USED', sel)}) * 1048576", f"{{{{{NODE}}}}}")],
        "bytes"), 12, 8))
    p.append(L.place(timeseries("Power per node", [
        target(f"sum by (cluster, {NODE}) ({per_gpu('DCGM_FI_DEV_POWER_USAGE', sel)})", f"{{{{{NODE}}}}}")],
        "watt"), 12, 8))
    p.append(L.place(timeseries("Xids per node", [
        target(f'sum by (cluster, {NODE}, xid) (DCGM_EXP_XID_ERRORS_COUNT{{{sel}, xid!=""}})',
               f"{{{{{NODE}}}}} Xid {{{{xid}}}}")], "none",
        description="Xid errors in the exporter's window, per node and Xid."), 12, 8))
    p.append(L.place(table("GPUs", (
        f"max by (cluster, {NODE}, gpu, modelName, UUID, namespace, pod) (DCGM_FI_DEV_GPU_UTIL{{{sel}}})"),
        columns=["cluster", NODE, "gpu", "modelName", "UUID", "namespace", "pod", "Value"]), 24, 8))
    return dashboard("nvmlx-fleet", "GPU fleet (nvml-exporter)",
                     "Every GPU of the selected clusters and nodes: busy vs idle, memory, power, Xids.",
                     [cluster_var(), node_var()], p, ["fleet"])


def gpus():
    L = Layout()
    s = GPU_SEL
    legend = f"{{{{{NODE}}}}} GPU {{{{gpu}}}}"
    p = [L.row("Load")]
    p.append(L.place(timeseries("GPU utilization", [target(f"DCGM_FI_DEV_GPU_UTIL{{{s}}}", legend)],
                                "percent", minmax=(0, 100)), 12, 8))
    p.append(L.place(timeseries("Graphics engine active", [
        target(f"DCGM_FI_PROF_GR_ENGINE_ACTIVE{{{s}}}", legend)], "percentunit", minmax=(0, 1)), 12, 8))
    p.append(L.place(timeseries("SM active and occupancy", [
        target(f"DCGM_FI_PROF_SM_ACTIVE{{{s}}}", f"{legend} active"),
        target(f"DCGM_FI_PROF_SM_OCCUPANCY{{{s}}}", f"{legend} occupancy", ref="B")],
        "percentunit", minmax=(0, 1)), 8, 8))
    p.append(L.place(timeseries("Tensor pipe active", [
        target(f"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{{{s}}}", legend)], "percentunit", minmax=(0, 1)), 8, 8))
    p.append(L.place(timeseries("DRAM active", [
        target(f"DCGM_FI_PROF_DRAM_ACTIVE{{{s}}}", legend)], "percentunit", minmax=(0, 1)), 8, 8))
    p.append(L.row("Memory, power, temperature, clocks"))
    p.append(L.place(timeseries("GPU memory used", [
        target(f"DCGM_FI_DEV_FB_USED{{{s}}} * 1048576", legend)], "bytes"), 12, 8))
    p.append(L.place(timeseries("GPU memory used (share)", [
        target(f"DCGM_FI_DEV_FB_USED{{{s}}} / (DCGM_FI_DEV_FB_USED{{{s}}} + DCGM_FI_DEV_FB_FREE{{{s}}}"
               f" + DCGM_FI_DEV_FB_RESERVED{{{s}}})", legend)], "percentunit", minmax=(0, 1)), 12, 8))
    p.append(L.place(timeseries("Power", [target(f"DCGM_FI_DEV_POWER_USAGE{{{s}}}", legend)], "watt"), 8, 8))
    p.append(L.place(timeseries("Temperature", [
        target(f"DCGM_FI_DEV_GPU_TEMP{{{s}}}", f"{legend} GPU"),
        target(f"DCGM_FI_DEV_MEMORY_TEMP{{{s}}}", f"{legend} memory", ref="B")], "celsius"), 8, 8))
    p.append(L.place(timeseries("Clocks", [
        target(f"DCGM_FI_DEV_SM_CLOCK{{{s}}} * 1000000", f"{legend} SM"),
        target(f"DCGM_FI_DEV_MEM_CLOCK{{{s}}} * 1000000", f"{legend} memory", ref="B")], "hertz"), 8, 8))
    p.append(L.place(timeseries("Clock events (throttle reasons)", [
        target(f"DCGM_EXP_CLOCK_EVENTS_COUNT{{{s}}}", f"{legend} {{{{clock_event}}}}")], "none",
        description="Collections within the exporter's window (5 minutes by default) during which "
                    "each reason held the clocks down."), 12, 8))
    p.append(L.place(timeseries("Energy (rate)", [
        target(f"rate(DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{{{s}}}[$__rate_interval]) / 1000", legend)],
        "watt", description="The energy counter's rate: the average power between scrapes."), 12, 8))
    p.append(L.row("PCIe and NVLink"))
    p.append(L.place(timeseries("PCIe throughput", [
        target(f"DCGM_FI_PROF_PCIE_TX_BYTES{{{s}}}", f"{legend} TX"),
        target(f"DCGM_FI_PROF_PCIE_RX_BYTES{{{s}}}", f"{legend} RX", ref="B")], "Bps"), 8, 8))
    p.append(L.place(timeseries("PCIe replays", [
        target(f"rate(DCGM_FI_DEV_PCIE_REPLAY_COUNTER{{{s}}}[$__rate_interval])", legend)], "ops"), 8, 8))
    p.append(L.place(timeseries("NVLink bandwidth (all links)", [
        target(f"DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL{{{s}}}", legend)], "MBs",
        description="RX + TX over all links, as DCGM reports it (KiB/s / 1000)."), 8, 8))
    p.append(L.row("Errors and health"))
    p.append(L.place(timeseries("Xids (window)", [
        target(f"DCGM_EXP_XID_ERRORS_COUNT{{{s}}}", f"{legend} Xid {{{{xid}}}}")], "none"), 8, 8))
    p.append(L.place(table("Last Xid", f"DCGM_FI_DEV_XID_ERRORS{{{s}}}",
                           columns=[NODE, "gpu", "err_code", "err_msg", "namespace", "pod", "Value"]), 8, 8))
    p.append(L.place(timeseries("Health (0 pass, 10 warn, 20 fail)", [
        target(f'DCGM_EXP_GPU_HEALTH_STATUS{{{s}, health_watch="ALL"}}', legend)], "none", minmax=(0, 20)),
        8, 8))
    p.append(L.place(timeseries("ECC and row remapping", [
        target(f"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL{{{s}}}", f"{legend} uncorrectable ECC"),
        target(f"DCGM_FI_DEV_ECC_SBE_VOL_TOTAL{{{s}}}", f"{legend} correctable ECC", ref="B"),
        target(f"DCGM_FI_DEV_ROW_REMAP_PENDING{{{s}}}", f"{legend} remap pending", ref="C"),
        target(f"DCGM_FI_DEV_ROW_REMAP_FAILURE{{{s}}}", f"{legend} remap failed", ref="D")], "none"), 12, 8))
    p.append(L.place(timeseries("Retired pages and NVLink errors", [
        target(f"DCGM_FI_DEV_RETIRED_DBE{{{s}}} + DCGM_FI_DEV_RETIRED_SBE{{{s}}}", f"{legend} retired pages"),
        target(f"DCGM_FI_DEV_RETIRED_PENDING{{{s}}}", f"{legend} pages pending", ref="B"),
        target(f"DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL{{{s}}} + DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL{{{s}}}",
               f"{legend} NVLink errors", ref="C")], "none"), 12, 8))
    gpu_var = variable("gpu", "GPU", f'label_values(DCGM_FI_DEV_GPU_TEMP{{{CLUSTER}, {NODE}=~"$node"}}, gpu)')
    return dashboard("nvmlx-gpu", "GPU node and GPU (nvml-exporter)",
                     "One node's GPUs in detail: load, profiling ratios, memory, power, temperature, "
                     "clocks and throttle reasons, PCIe and NVLink, Xids, health.",
                     [cluster_var(), node_var(), gpu_var], p, ["node"])


def pods():
    L = Layout()
    s = POD_SEL
    pod_legend = "{{namespace}}/{{pod}}"
    idle = per_pod_gpu(f"max_over_time(DCGM_FI_DEV_GPU_UTIL{{{s}}}[{IDLE_WINDOW}])") + " < 1"
    p = [L.row("Allocation")]
    p.append(L.place(stat("GPUs allocated to pods", f"count(group by ({GPU_KEY}) (DCGM_FI_DEV_GPU_UTIL{{{s}}})) or vector(0)"), 4, 4))
    p.append(L.place(stat("Idle allocated GPUs", f"count({idle}) or vector(0)",
                          description=f"GPUs a pod holds but has not used (below 1 %) for {IDLE_WINDOW}.",
                          thresholds=[(1, "orange")]), 4, 4))
    p.append(L.place(stat("Utilization of allocated GPUs", f"avg({per_gpu('DCGM_FI_DEV_GPU_UTIL', s)})", "percent"), 4, 4))
    p.append(L.place(stat("GPU memory held by pods", f"sum(DCGM_FI_DEV_FB_USED{{{s}}}) * 1048576", "bytes"), 4, 4))
    p.append(L.place(stat("Power of allocated GPUs", f"sum({per_gpu('DCGM_FI_DEV_POWER_USAGE', s)})", "watt"), 4, 4))
    p.append(L.place(stat(
        "Namespaces with GPUs",
        "count(count by (cluster, namespace) ({__name__=~\"DCGM_FI_DEV_GPU_UTIL|nvml_exporter_pod_gpu_processes\", "
        f"{s}}}))",
        description="Namespaces with a pod that holds a GPU or runs a process on one."), 4, 4))
    p.append(L.place(table(
        "Idle allocated GPUs", idle,
        description=f"GPUs held by a pod with utilization below 1 % for {IDLE_WINDOW}: capacity others wait for.",
        columns=["cluster", "namespace", "pod", NODE, "gpu", "UUID", "Value"]), 24, 6))
    p.append(L.row("Use"))
    p.append(L.place(timeseries("GPU share per namespace", [
        target(f"count by (cluster, namespace) (group by (cluster, namespace, {NODE}, UUID, GPU_I_ID) (DCGM_FI_DEV_GPU_UTIL{{{s}}}))"
               f" / scalar(count({per_gpu('DCGM_FI_DEV_GPU_UTIL', CLUSTER)}))",
               "{{namespace}}")], "percentunit", stack=True,
        description="The namespace's GPUs as a share of all GPUs of the selected clusters."), 12, 8))
    p.append(L.place(timeseries("GPUs per namespace", [
        target(f"count by (cluster, namespace) (group by (cluster, namespace, {NODE}, UUID, GPU_I_ID) (DCGM_FI_DEV_GPU_UTIL{{{s}}}))",
               "{{namespace}} allocated"),
        target(f"count by (cluster, namespace) ({idle})", "{{namespace}} idle", ref="B")], "none"), 12, 8))
    p.append(L.place(timeseries("GPU utilization per pod", [
        target(f"avg by (cluster, namespace, pod) ({per_pod_gpu(f'DCGM_FI_DEV_GPU_UTIL{{{s}}}')})", pod_legend)],
        "percent", minmax=(0, 100)), 12, 8))
    p.append(L.place(timeseries("Tensor pipe active per pod", [
        target(f"avg by (cluster, namespace, pod) (DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{{{s}}})", pod_legend)],
        "percentunit", minmax=(0, 1)), 12, 8))
    p.append(L.place(timeseries("GPU memory per pod", [
        target(f"sum by (cluster, namespace, pod) (DCGM_FI_DEV_FB_USED{{{s}}}) * 1048576", pod_legend)],
        "bytes"), 12, 8))
    p.append(L.place(timeseries("Power per pod", [
        target(f"sum by (cluster, namespace, pod) (max by ({POD_GPU_KEY}) (DCGM_FI_DEV_POWER_USAGE{{{s}}}))", pod_legend)],
        "watt"), 12, 8))
    p.append(L.place(bargauge(
        "Top pods by GPU utilization",
        f"topk(10, avg by (cluster, namespace, pod) ({per_pod_gpu(f'avg_over_time(DCGM_FI_DEV_GPU_UTIL{{{s}}}[$__range])')}))",
        pod_legend, "percent", minmax=(0, 100)), 12, 8))
    p.append(L.place(bargauge(
        "Top pods by GPU memory",
        f"topk(10, sum by (cluster, namespace, pod) (DCGM_FI_DEV_FB_USED{{{s}}}) * 1048576)",
        pod_legend, "bytes"), 12, 8))
    p.append(L.row("Shared GPUs: each pod's own share (--kubernetes-process-metrics)"))
    proc = f'{CLUSTER}, namespace=~"$namespace", pod=~"$pod"'
    p.append(L.place(timeseries("SM use per pod (its processes)", [
        target(f"sum by (cluster, namespace, pod, gpu) (nvml_exporter_pod_gpu_sm_utilization_ratio{{{proc}}})",
               "{{namespace}}/{{pod}} GPU {{gpu}}")], "percentunit",
        description="From NVML's per-process data: on a time-sliced or MPS GPU each pod gets its own "
                    "share, where the device series can name only one pod."), 12, 8))
    p.append(L.place(timeseries("GPU memory per pod (its processes)", [
        target(f"sum by (cluster, namespace, pod, gpu) (nvml_exporter_pod_gpu_memory_used_bytes{{{proc}}})",
               "{{namespace}}/{{pod}} GPU {{gpu}}")], "bytes"), 12, 8))
    p.append(L.place(timeseries("Processes per GPU: in pods and not", [
        target(f"sum by (cluster, gpu) (nvml_exporter_pod_gpu_processes{{{proc}}})", "GPU {{gpu}} in pods"),
        target(f"sum by (cluster, gpu) (nvml_exporter_gpu_unattributed_processes{{{CLUSTER}}})",
               "GPU {{gpu}} not in a pod", ref="B")], "none",
        description="Processes NVML lists on each GPU; those not in a pod run on the host or in a "
                    "container the exporter cannot map."), 24, 8))
    p.append(L.row("Energy (--kubernetes-process-metrics)"))
    p.append(L.place(timeseries("GPU energy per namespace, last hour", [
        target(f"sum by (cluster, namespace) (increase(nvml_exporter_pod_gpu_energy_joules_total{{{proc}}}[1h])) / 3600000",
               "{{namespace}}"),
        target(f"sum by (cluster) (increase(nvml_exporter_pod_gpu_energy_joules_total{{{CLUSTER}, pod=\"\"}}[1h])) / 3600000",
               "not in a pod (idle, host)", ref="B")], "kwatth",
        description="Each GPU's energy split among the pods that held it (whole to an exclusive "
                    "holder, by SM share on a shared GPU, by compute slices on MIG); the rest is "
                    "idle time and host processes. The recording rule "
                    "namespace:gpu_energy_joules:increase1h keeps the same per namespace."), 12, 8))
    p.append(L.place(bargauge(
        "Top pods by GPU energy, last hour",
        f"topk(10, sum by (cluster, namespace, pod) (increase(nvml_exporter_pod_gpu_energy_joules_total{{{proc}, pod!=\"\"}}[1h])) / 3600000)",
        "{{namespace}}/{{pod}}", "kwatth"), 12, 8))
    # Namespaces and pods from the device series (-k) and the per-process series: a pod that
    # shares a GPU appears in the latter only, unless --kubernetes-virtual-gpus.
    pods_of = "{__name__=~\"DCGM_FI_DEV_GPU_UTIL|nvml_exporter_pod_gpu_processes\", " + CLUSTER
    ns_var = variable("namespace", "Namespace", f'label_values({pods_of}, namespace!=""}}, namespace)')
    pod_var = variable("pod", "Pod", f'label_values({pods_of}, namespace=~"$namespace", pod!=""}}, pod)')
    return dashboard("nvmlx-pods", "GPU namespaces and pods (nvml-exporter)",
                     "GPUs by the pods that hold them (-k): share per namespace, use, memory, top pods, "
                     "and the GPUs pods hold without using them.",
                     [cluster_var(), ns_var, pod_var], p, ["pods"])


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "deploy", "grafana", "dashboards")
    os.makedirs(out, exist_ok=True)
    for name, make in (("nvml-exporter-fleet", fleet), ("nvml-exporter-gpu", gpus), ("nvml-exporter-pods", pods)):
        with open(os.path.join(out, name + ".json"), "w") as f:
            json.dump(make(), f, indent=2)
            f.write("\n")


if __name__ == "__main__":
    main()

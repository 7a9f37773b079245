#!/usr/bin/env python3
"""deploy/kubernetes and deploy/cloudwatch: every kustomization renders with `kubectl kustomize`,
every rendered object validates offline against the Kubernetes and prometheus-operator schemas
(validate.mjs, with the versions pinned in package.json, installed under BUILD_DIR), and the
objects fit together as a cluster needs them to:
  - each namespaced object has its namespace, and the overlay renders that Namespace or names one
    it expects to exist (amazon-cloudwatch for the agent's ConfigMaps);
  - a binding's service account, a pod's service account and its ConfigMap volumes exist there;
  - the Service selects the DaemonSet's pods and targets a named container port; a
    ServiceMonitor selects that Service and a port of it, a PodMonitor the pods and a container
    port; both keep the series' labels (honorLabels: true);
  - the exporter's ClusterRole grants list/watch on pods and get on nodes;
  - probes hit /health on the metrics port; the container's security context is the least
    privilege the base promises (no privilege, no capability, read-only root, no escalation);
  - the exporter container's environment names only variables nvml-exporter reads (--help lists
    them) or ones its args expand, and the daemon itself accepts that env and those args: it runs
    once with them on simulated GPUs and prints the page (no option ignored or refused).

usage: manifests_test.py SOURCE_DIR BUILD_DIR NVML_EXPORTER
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

src, build, exporter = map(os.path.abspath, sys.argv[1:4])
SKIP = 77
failures = []
# Where the manifests' state directory points when the test runs the daemon with their env.
state_scratch = tempfile.mkdtemp(prefix="manifests-state-")


def fail(msg):
    failures.append(msg)
    print(f"FAIL: {msg}", file=sys.stderr)


# --- The validators, pinned, installed under the build folder ------------------------------
models = os.path.join(build, "deploy-models")
lock = os.path.join(src, "test/deploy/package-lock.json")
installed = os.path.join(models, "node_modules/.package-lock.json")
stamp = os.path.join(models, "lock.stamp")
if not (os.path.exists(installed) and os.path.exists(stamp)
        and open(stamp).read() == open(lock).read()):
    shutil.rmtree(models, ignore_errors=True)
    os.makedirs(models)
    for f in ["package.json", "package-lock.json", ".npmrc"]:
        shutil.copy(os.path.join(src, "test/deploy", f), models)
    r = subprocess.run(["npm", "ci", "--ignore-scripts", "--cache", os.path.join(models, ".npm-cache")],
                       cwd=models, capture_output=True, text=True)
    if r.returncode != 0:
        if re.search(r"ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|ENETUNREACH", r.stderr):
            print(f"SKIP: the npm registry cannot be reached, so the schema validators cannot be "
                  f"installed: {r.stderr.strip().splitlines()[-1]}")
            sys.exit(SKIP)
        sys.exit(f"FAIL: npm ci in {models}: {r.stderr}")
    shutil.copy(lock, stamp)
    shutil.rmtree(os.path.join(models, ".npm-cache"), ignore_errors=True)

# --- Render ------------------------------------------------------------------------------
kustomizations = ["deploy/kubernetes/base"] + sorted(
    f"deploy/kubernetes/overlays/{d}" for d in os.listdir(os.path.join(src, "deploy/kubernetes/overlays")))
kustomizations += ["deploy/cloudwatch/emf", "deploy/cloudwatch/prometheus",
                   "deploy/cloudwatch/container-insights"]
rendered = {}
for k in kustomizations:
    r = subprocess.run(["kubectl", "kustomize", os.path.join(src, k)], capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"{k}: kubectl kustomize: {r.stderr.strip()}")
        continue
    rendered[k] = [d for d in yaml.safe_load_all(r.stdout) if d]
    print(f"ok: {k} renders ({len(rendered[k])} objects)")
overlay_names = {k.rsplit("/", 1)[1] for k in kustomizations if "/overlays/" in k}
for want in ["prometheus", "kube-prometheus-stack", "podmonitor", "cloudwatch-emf",
             "cloudwatch-container-insights",
             "cloudwatch-prometheus", "mig-time-slicing", "remote-write", "remote-write-amp"]:
    if want not in overlay_names:
        fail(f"overlay {want} missing")

# --- Schemas -----------------------------------------------------------------------------
items = [{"source": k, "object": o} for k, objs in rendered.items() for o in objs]
r = subprocess.run(["node", os.path.join(src, "test/deploy/validate.mjs")], input=json.dumps(items),
                   capture_output=True, text=True, env=dict(os.environ, MODELS_DIR=models))
for line in r.stdout.splitlines():
    if not line.startswith("ok "):
        fail(f"schema: {line}")
if r.returncode != 0 and "FAIL" not in r.stdout:
    fail(f"validate.mjs: {r.stderr}")
validated = sum(line.startswith("ok ") for line in r.stdout.splitlines())
print(f"ok: {validated} of {len(items)} objects valid against the schemas")
if validated != len(items):
    fail(f"{len(items) - validated} objects not validated")

# --- How the objects fit together -------------------------------------------------------
CLUSTER_SCOPED = {"Namespace", "ClusterRole", "ClusterRoleBinding"}
# Namespaces an overlay may name without rendering them: the CloudWatch agent's, created by
# upstream's manifest that deploy/cloudwatch/README.md applies first.
EXTERNAL_NAMESPACES = {"amazon-cloudwatch"}
help_text = subprocess.run([exporter, "--help"], capture_output=True, text=True).stdout
known_env = set(re.findall(r"\$([A-Z][A-Z0-9_]+)", help_text)) | {"NODE_NAME"}
known_flags = set(re.findall(r"(--[a-z0-9-]+)", help_text))


def matches(selector, labels):
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def check_exporter_container(k, pod, c):
    env = {e["name"]: e for e in c.get("env", [])}
    expanded = set(re.findall(r"\$\(([A-Z0-9_]+)\)", " ".join(c.get("args", []))))
    for name in env:
        if name not in known_env and name not in expanded:
            fail(f"{k}: env {name}: nvml-exporter reads no such variable (--help) and no arg uses it")
    for a in c.get("args", []):
        flag = a.split("=", 1)[0]
        if flag.startswith("--") and flag not in known_flags:
            fail(f"{k}: arg {a}: no such flag")
    probes = [c.get(p) for p in ["startupProbe", "livenessProbe", "readinessProbe"]]
    ports = {p["name"]: p["containerPort"] for p in c.get("ports", [])}
    if ports.get("metrics") != 9400:
        fail(f"{k}: no container port metrics=9400")
    for p in probes:
        if not p or p.get("httpGet", {}).get("path") != "/health" or \
                p["httpGet"]["port"] not in ("metrics", 9400):
            fail(f"{k}: a probe is not GET /health on the metrics port: {p}")
    sc = c.get("securityContext", {})
    if sc.get("privileged") or sc.get("allowPrivilegeEscalation") is not False or \
            not sc.get("readOnlyRootFilesystem") or sc.get("capabilities", {}).get("drop") != ["ALL"] \
            or sc.get("capabilities", {}).get("add"):
        fail(f"{k}: the exporter's securityContext is not the least-privilege one: {sc}")
    if not c.get("resources", {}).get("limits", {}).get("memory"):
        fail(f"{k}: no memory limit")
    mounts = {m["mountPath"]: m for m in c.get("volumeMounts", [])}
    for path in ["/var/lib/kubelet/pod-resources", "/host/proc"]:
        if not mounts.get(path, {}).get("readOnly"):
            fail(f"{k}: {path} not mounted read-only")
    # The one writable mount is the state directory the daemon is told to use.
    state_dir = env.get("NVML_EXPORTER_STATE_DIR", {}).get("value")
    for path, m in mounts.items():
        if not m.get("readOnly") and path != state_dir:
            fail(f"{k}: {path} mounted writable, and it is not NVML_EXPORTER_STATE_DIR ({state_dir})")
    if state_dir and state_dir not in mounts:
        fail(f"{k}: NVML_EXPORTER_STATE_DIR {state_dir} is not a mounted volume")
    # The daemon with this env and these args: simulated GPUs, one collection, the host's /proc,
    # no kubelet (its absence is logged, not fatal). $(VAR) in args expands as the kubelet does.
    run_env = {"DCGM_EXPORTER_USE_FAKE_GPUS": "true"}
    for name, e in env.items():
        run_env[name] = e.get("value", "node-1")
    run_env["DCGM_EXPORTER_COLLECTORS"] = run_env.get(
        "DCGM_EXPORTER_COLLECTORS", "/etc/dcgm-exporter/default-counters.csv").replace(
        "/etc/dcgm-exporter/", os.path.join(src, "etc") + "/")
    if run_env.get("NVML_EXPORTER_HOST_PROC_ROOT"):
        run_env["NVML_EXPORTER_HOST_PROC_ROOT"] = "/proc"
    if run_env.get("NVML_EXPORTER_STATE_DIR"):
        run_env["NVML_EXPORTER_STATE_DIR"] = state_scratch
    args = [re.sub(r"\$\(([A-Z0-9_]+)\)", lambda m: run_env.get(m.group(1), ""), a)
            for a in c.get("args", [])]
    r = subprocess.run([exporter, "--once"] + args, env=run_env, capture_output=True, text=True,
                       timeout=60)
    bad = [l for l in r.stderr.splitlines()
           if "level=error" in l or " ignored: " in l or "unknown" in l.lower()]
    if r.returncode != 0 or "DCGM_FI_DEV_GPU_UTIL{" not in r.stdout or bad:
        fail(f"{k}: nvml-exporter with the container's env and args: exit {r.returncode}: "
             f"{bad or r.stderr[-1500:]}")


for k, objs in rendered.items():
    by = {}
    for o in objs:
        by.setdefault(o["kind"], []).append(o)
    namespaces = {o["metadata"]["name"] for o in by.get("Namespace", [])}
    for o in objs:
        ns = o["metadata"].get("namespace")
        if o["kind"] in CLUSTER_SCOPED:
            continue
        if not ns:
            fail(f"{k}: {o['kind']} {o['metadata']['name']} has no namespace")
        elif ns not in namespaces and ns not in EXTERNAL_NAMESPACES:
            fail(f"{k}: {o['kind']} {o['metadata']['name']} in namespace {ns}, which is not rendered")
    accounts = {(o["metadata"].get("namespace"), o["metadata"]["name"]) for o in by.get("ServiceAccount", [])}
    configmaps = {(o["metadata"].get("namespace"), o["metadata"]["name"]) for o in by.get("ConfigMap", [])}
    for b in by.get("ClusterRoleBinding", []) + by.get("RoleBinding", []):
        for s in b.get("subjects", []):
            if s["kind"] == "ServiceAccount" and (s.get("namespace"), s["name"]) not in accounts:
                fail(f"{k}: {b['kind']} {b['metadata']['name']} binds {s.get('namespace')}/{s['name']}, "
                     "which is not rendered")
    for ds in by.get("DaemonSet", []):
        ns = ds["metadata"]["namespace"]
        pod = ds["spec"]["template"]
        spec = pod["spec"]
        if not matches(ds["spec"]["selector"]["matchLabels"], pod["metadata"].get("labels", {})):
            fail(f"{k}: the DaemonSet's selector does not select its pods")
        if (ns, spec.get("serviceAccountName", "default")) not in accounts:
            fail(f"{k}: service account {ns}/{spec.get('serviceAccountName')} not rendered")
        for v in spec.get("volumes", []):
            if "configMap" in v and (ns, v["configMap"]["name"]) not in configmaps:
                fail(f"{k}: ConfigMap volume {v['configMap']['name']} not rendered in {ns}")
        if spec.get("nodeSelector") != {"nvidia.com/gpu.present": "true"}:
            fail(f"{k}: nodeSelector {spec.get('nodeSelector')}, want the GPU label")
        if not any(t.get("key") == "nvidia.com/gpu" for t in spec.get("tolerations", [])):
            fail(f"{k}: no toleration for nvidia.com/gpu")
        exporters = [c for c in spec["containers"] if c["name"] == "nvml-exporter"]
        if len(exporters) != 1:
            fail(f"{k}: no nvml-exporter container")
            continue
        check_exporter_container(k, pod, exporters[0])
        container_ports = {p["name"] for c in spec["containers"] for p in c.get("ports", [])}
        pod_labels = pod["metadata"]["labels"]
        for svc in by.get("Service", []):
            if svc["metadata"]["namespace"] != ns:
                continue
            if not matches(svc["spec"]["selector"], pod_labels):
                fail(f"{k}: Service {svc['metadata']['name']} does not select the exporter's pods")
            for p in svc["spec"]["ports"]:
                if p.get("targetPort") not in container_ports:
                    fail(f"{k}: Service port {p['name']} targets {p.get('targetPort')}, not a named port")
            if [p["name"] for p in svc["spec"]["ports"]] != ["metrics"]:
                fail(f"{k}: Service ports {svc['spec']['ports']}: want one named metrics")
        for sm in by.get("ServiceMonitor", []):
            svcs = [s for s in by.get("Service", []) if s["metadata"]["namespace"] == sm["metadata"]["namespace"]
                    and matches(sm["spec"]["selector"]["matchLabels"], s["metadata"].get("labels", {}))]
            if not svcs:
                fail(f"{k}: ServiceMonitor {sm['metadata']['name']} selects no Service")
            for e in sm["spec"]["endpoints"]:
                if not e.get("honorLabels"):
                    fail(f"{k}: ServiceMonitor endpoint without honorLabels: true")
                if svcs and e.get("port") not in {p["name"] for p in svcs[0]["spec"]["ports"]}:
                    fail(f"{k}: ServiceMonitor port {e.get('port')} is not a port of the Service")
        for pm in by.get("PodMonitor", []):
            if pm["metadata"]["namespace"] != ns or not matches(pm["spec"]["selector"]["matchLabels"], pod_labels):
                fail(f"{k}: PodMonitor {pm['metadata']['name']} selects no exporter pod")
            for e in pm["spec"]["podMetricsEndpoints"]:
                if not e.get("honorLabels"):
                    fail(f"{k}: PodMonitor endpoint without honorLabels: true")
                if e.get("port") not in container_ports:
                    fail(f"{k}: PodMonitor port {e.get('port')} is not a container port")
        for np in by.get("NetworkPolicy", []):
            if np["metadata"]["namespace"] == ns and matches(np["spec"]["podSelector"]["matchLabels"], pod_labels):
                ports = [p["port"] for rule in np["spec"].get("ingress", []) for p in rule.get("ports", [])]
                if 9400 not in ports:
                    fail(f"{k}: the NetworkPolicy closes :9400")
    # The exporter's ClusterRoles (together): the pod watch and the Node GET (--emf-schema
    # container-insights) need these, and --kubernetes-node-conditions the status patch and the
    # Events; a missing one shows up only as 403s in a cluster.
    grants = {(g, r, v) for role in by.get("ClusterRole", []) if "nvml-exporter" in role["metadata"]["name"]
              for rule in role.get("rules", []) for g in rule.get("apiGroups", [])
              for r in rule.get("resources", []) for v in rule.get("verbs", [])}
    needs = [("", "pods", "list"), ("", "pods", "watch"), ("", "nodes", "get")]
    env = {e["name"]: e.get("value") for ds in by.get("DaemonSet", [])
           for c in ds["spec"]["template"]["spec"]["containers"] for e in c.get("env", [])}
    if env.get("NVML_EXPORTER_KUBERNETES_NODE_CONDITIONS") == "true":
        needs += [("", "nodes/status", "patch"), ("", "events", "create"), ("", "events", "patch")]
        if not by.get("ValidatingAdmissionPolicy"):
            fail(f"{k}: --kubernetes-node-conditions without the own-node-only policy")
    if by.get("ClusterRole"):
        for need in needs:
            if need not in grants:
                fail(f"{k}: the exporter's ClusterRoles do not grant {need[2]} on {need[1]}")
    if "podmonitor" in k and not by.get("PodMonitor"):
        fail(f"{k}: no PodMonitor")
    if "kube-prometheus-stack" in k and not by.get("ServiceMonitor"):
        fail(f"{k}: no ServiceMonitor")
    if k.endswith("container-insights"):
        exporter_c = by["DaemonSet"][0]["spec"]["template"]["spec"]["containers"][0]
        for want in ["--emf-output=tcp://127.0.0.1:25888", "--emf-schema=container-insights"]:
            if want not in exporter_c.get("args", []):
                fail(f"{k}: the exporter lacks {want}")
        env_of = {e["name"]: e.get("value") for e in exporter_c.get("env", [])}
        if env_of.get("DCGM_EXPORTER_COLLECTORS") != "/etc/dcgm-exporter/container-insights.csv":
            fail(f"{k}: the exporter does not collect etc/container-insights.csv's fields")
    if k.endswith("cloudwatch/emf") or k.endswith("cloudwatch-emf"):
        ds = by["DaemonSet"][0]["spec"]["template"]["spec"]
        names = [c["name"] for c in ds["containers"]]
        if names != ["nvml-exporter", "cloudwatch-agent"]:
            fail(f"{k}: containers {names}, want the exporter and the agent sidecar")
        if "--emf-output=tcp://127.0.0.1:25888" not in ds["containers"][0].get("args", []):
            fail(f"{k}: the exporter does not send EMF to the sidecar's listener")
    if k.endswith("prometheus") and "cloudwatch" in k:
        cms = {o["metadata"]["name"] for o in by.get("ConfigMap", [])}
        if not {"prometheus-cwagentconfig", "prometheus-config"} <= cms:
            fail(f"{k}: the agent's two ConfigMaps are missing: {cms}")
    if "/remote-write" in k:
        # The Prometheus agent: its service account and config rendered in its namespace, agent mode.
        agents = [d for d in by.get("Deployment", []) if d["metadata"]["name"] == "prometheus-agent"]
        if len(agents) != 1:
            fail(f"{k}: no prometheus-agent Deployment")
        for d in agents:
            ns, spec = d["metadata"]["namespace"], d["spec"]["template"]["spec"]
            if (ns, spec.get("serviceAccountName")) not in accounts:
                fail(f"{k}: the agent's service account is not rendered")
            for v in spec.get("volumes", []):
                if "configMap" in v and (ns, v["configMap"]["name"]) not in configmaps:
                    fail(f"{k}: the agent's ConfigMap {v['configMap']['name']} is not rendered")
            if "--enable-feature=agent" not in spec["containers"][0].get("args", []):
                fail(f"{k}: the Prometheus is not in agent mode")
            sa = [o for o in by.get("ServiceAccount", []) if o["metadata"]["name"] == "prometheus-agent"]
            if k.endswith("-amp") and not any("eks.amazonaws.com/role-arn" in (o["metadata"].get("annotations") or {})
                                              for o in sa):
                fail(f"{k}: the agent's service account has no IRSA role")
    print(f"ok: {k}: objects fit together")

if failures:
    sys.exit(1)
print(f"manifests_test: {len(rendered)} kustomizations, {validated} objects valid and consistent")

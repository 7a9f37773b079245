#!/usr/bin/env bash
# Remote write for fleets (docs/remote-write.md): the agent configuration that the remote-write
# overlay ships (its ConfigMap, rendered by kubectl kustomize) runs in a real Prometheus in agent
# mode, scraping the daemon on simulated GPUs with pods every second and remote-writing into a
# second Prometheus (--web.enable-remote-write-receiver) that evaluates deploy/prometheus/rules.yml
# every second. Checks, through the receiver's HTTP API: the DCGM series arrived with the
# exporter's labels, the scrape job's relabelling (kubernetes_node, exporter_namespace) and the
# external cluster label; the recording rule namespace_pod:dcgm_gpu_utilization:avg answers with
# the pod's value; every rule evaluates without error. The remote-write-amp overlay's config
# (SigV4: not testable offline) has the same scrape job and passes promtool check config; the
# kube-prometheus-stack snippet has both targets in the operator's spelling.
# Debian's Prometheus lacks Kubernetes discovery: the job's kubernetes_sd_configs becomes a
# static target carrying the __meta_kubernetes_* labels that pod discovery would give it.
source "$(dirname "$0")/lib.sh"
command -v prometheus >/dev/null || fail "prometheus not installed (scripts/install-deps.sh)"
command -v promtool >/dev/null || fail "promtool not installed"
command -v kubectl >/dev/null || fail "kubectl not installed (it renders the overlays)"
CTL="$WORK/ctl"
start_apiserver
port=$(free_port)
start_pod_energy_exporter "$port" --kubernetes-virtual-gpus
rport=$(free_port)
aport=$(free_port)

# --- The shipped configs, adapted to this machine -------------------------------------------
for o in remote-write remote-write-amp; do
  kubectl kustomize "$SOURCE_DIR/deploy/kubernetes/overlays/$o" >"$WORK/$o.yaml" || fail "$o does not render"
done
python3 - "$WORK" "$SOURCE_DIR" "$port" "$rport" <<'PY' || fail "the overlays' agent configs"
import sys, yaml
work, src, port, rport = sys.argv[1:5]
def agent_config(overlay):
    cms = [d for d in yaml.safe_load_all(open(f"{work}/{overlay}.yaml"))
           if d and d["kind"] == "ConfigMap" and d["metadata"]["name"].startswith("prometheus-agent")]
    assert len(cms) == 1, f"{overlay}: want one prometheus-agent ConfigMap, got {len(cms)}"
    return yaml.safe_load(cms[0]["data"]["prometheus.yml"])
plain, amp = agent_config("remote-write"), agent_config("remote-write-amp")
# One scrape job everywhere: deploy/prometheus/scrape-config.yaml's (its interval is global here).
ref = yaml.safe_load(open(f"{src}/deploy/prometheus/scrape-config.yaml"))
strip = lambda jobs: [{k: v for k, v in j.items() if k not in ("scrape_interval", "scrape_timeout")} for j in jobs]
assert strip(plain["scrape_configs"]) == strip(ref), "remote-write's scrape job differs from scrape-config.yaml's"
assert amp["scrape_configs"] == plain["scrape_configs"], "remote-write-amp's scrape job differs"
assert amp["global"] == plain["global"], "the overlays' global sections differ"
assert "sigv4" in amp["remote_write"][0] and amp["remote_write"][0]["sigv4"].get("region"), "AMP: no sigv4 region"
assert "aps-workspaces" in amp["remote_write"][0]["url"], amp["remote_write"][0]["url"]
assert plain["global"]["external_labels"].get("cluster"), "no external cluster label"
# What pod discovery would give for the exporter's container port.
meta = {"__meta_kubernetes_pod_label_app_kubernetes_io_name": "nvml-exporter",
        "__meta_kubernetes_pod_container_init": "false",
        "__meta_kubernetes_pod_container_port_number": "9400",
        "__meta_kubernetes_pod_phase": "Running",
        "__meta_kubernetes_pod_node_name": "node1",
        "__meta_kubernetes_namespace": "nvml-exporter"}
for cfg in (plain, amp):
    for job in cfg["scrape_configs"]:
        del job["kubernetes_sd_configs"]
        job["static_configs"] = [{"targets": [f"127.0.0.1:{port}"], "labels": meta}]
    cfg["global"]["scrape_interval"], cfg["global"]["scrape_timeout"] = "1s", "900ms"
plain["remote_write"][0]["url"] = f"http://127.0.0.1:{rport}/api/v1/write"
yaml.safe_dump(plain, open(f"{work}/agent.yml", "w"))
yaml.safe_dump(amp, open(f"{work}/agent-amp.yml", "w"))
open(f"{work}/receiver.yml", "w").write(
    f"global:\n  evaluation_interval: 1s\nrule_files:\n  - {src}/deploy/prometheus/rules.yml\n")
# The kube-prometheus-stack snippet: the prometheus-operator's spelling of the same two targets.
vals = yaml.safe_load(open(f"{src}/deploy/prometheus/kube-prometheus-stack-remote-write-values.yaml"))
rw = vals["prometheus"]["prometheusSpec"]["remoteWrite"]
assert [bool(e.get("sigv4", {}).get("region")) for e in rw] == [False, True], rw
for e in rw:
    assert e["url"].startswith("https://"), e
    assert e["writeRelabelConfigs"] == [{"sourceLabels": ["job"], "regex": "nvml-exporter", "action": "keep"}], e
    assert not any(k.startswith(("write_relabel", "basic_auth")) for k in e), f"Prometheus spelling in values: {e}"
assert vals["prometheus"]["prometheusSpec"]["externalLabels"] == plain["global"]["external_labels"]
print("ok: the overlays' agent configs (one scrape job, external cluster label, AMP's sigv4)")
PY
for f in agent agent-amp receiver; do
  promtool check config "$WORK/$f.yml" >"$WORK/check-$f.txt" 2>&1 || { cat "$WORK/check-$f.txt"; fail "promtool check config $f.yml"; }
done
pass "promtool accepts the agent configs (plain and SigV4) and the receiver's"

# --- Receiver, then agent ---------------------------------------------------------------------
prometheus --config.file="$WORK/receiver.yml" --storage.tsdb.path="$WORK/tsdb" \
  --web.enable-remote-write-receiver --web.listen-address="127.0.0.1:$rport" >"$WORK/receiver.log" 2>&1 &
PIDS+=($!)
# A short flush deadline: at exit the agent would otherwise retry a stopped receiver for a minute.
prometheus --enable-feature=agent --config.file="$WORK/agent.yml" --storage.agent.path="$WORK/wal" \
  --storage.remote.flush-deadline=1s --web.listen-address="127.0.0.1:$aport" >"$WORK/agent.log" 2>&1 &
AGENT_PID=$!
PIDS+=("$AGENT_PID")
wait_http "http://127.0.0.1:$rport/-/ready" 30 || { tail -n 20 "$WORK/receiver.log"; fail "receiver not ready"; }
wait_http "http://127.0.0.1:$aport/-/ready" 30 || { tail -n 20 "$WORK/agent.log"; fail "agent not ready"; }
grep -q "agent mode" "$WORK/agent.log" || { tail -n 20 "$WORK/agent.log"; fail "the agent did not start in agent mode"; }

api="http://127.0.0.1:$rport/api/v1"
check() {
  curl -fsS "$api/query?query=DCGM_FI_DEV_GPU_UTIL" >"$WORK/util.json" || return 1
  curl -fsS "$api/query?query=namespace_pod%3Adcgm_gpu_utilization%3Aavg" >"$WORK/rule.json" || return 1
  curl -fsS "$api/query?query=up" >"$WORK/up.json" || return 1
  curl -fsS "$api/rules" >"$WORK/rules.json" || return 1
  python3 - "$WORK" "$1" <<'PY'
import json, sys
work, final = sys.argv[1], sys.argv[2] == "final"
q = lambda n: json.load(open(f"{work}/{n}.json"))["data"]["result"]
util, rule, up = q("util"), q("rule"), q("up")
if not final and not (util and rule):
    sys.exit(1)
assert up and all(r["value"][1] == "1" for r in up), f"up: {up}"
gpus = {r["metric"]["gpu"] for r in util}
assert gpus == {"0", "1"}, f"GPU_UTIL for gpus {sorted(gpus)}, want 0 and 1"
for r in util:
    m = r["metric"]
    for label, want in [("job", "nvml-exporter"), ("cluster", "my-cluster"), ("kubernetes_node", "node1"),
                        ("exporter_namespace", "nvml-exporter"), ("hostname", "node1"),
                        ("modelName", "NVIDIA H200")]:
        assert m.get(label) == want, f"{label}={m.get(label)!r}, want {want!r}: {m}"
    for label in ("UUID", "pci_bus_id", "device", "DCGM_FI_DRIVER_VERSION", "instance"):
        assert m.get(label), f"series lacks {label}: {m}"
pods = {r["metric"].get("pod") for r in util if r["metric"].get("pod")}
assert pods == {"trainer-a", "notebook-b", "inference-c"}, f"per-pod series for {pods}"
by_pod = {r["metric"]["pod"]: float(r["value"][1]) for r in rule}
assert all(r["metric"].get("cluster") == "my-cluster" for r in rule), rule
# trainer-a's two containers on GPU 0: 40 % + 15 % (processes.yaml); notebook-b 30 %.
assert by_pod.get("trainer-a") == 55 and by_pod.get("notebook-b") == 30, f"recording rule: {by_pod}"
groups = json.load(open(f"{work}/rules.json"))["data"]["groups"]
rules = [r for g in groups for r in g["rules"]]
assert len(groups) >= 3 and rules, f"rules.yml not loaded: {[g['name'] for g in groups]}"

bad = [(r["name"], r.get("lastError")) for r in rules if r.get("health") not in ("ok",)]
if not final and bad:
    sys.exit(1)
assert not bad, f"rules not healthy: {bad}"
print(f"ok: receiver has GPU_UTIL for gpus {sorted(gpus)} with pods {sorted(pods)}; "
      f"namespace_pod:dcgm_gpu_utilization:avg {dict(sorted(by_pod.items()))}; "
      f"{len(rules)} rules in {len(groups)} groups healthy")
PY
}
ok=
for _ in $(seq 40); do
  sleep 0.5
  if check poll 2>/dev/null; then ok=1; break; fi
done
[ -n "$ok" ] || check final || { tail -n 20 "$WORK/agent.log"; fail "the receiver did not get the series or the rule's result"; }
sent=$(curl -fsS "http://127.0.0.1:$aport/metrics" | sed -n 's/^prometheus_remote_storage_samples_total{[^}]*} //p' | head -1)
[ -n "$sent" ] && python3 -c "import sys; assert float(sys.argv[1]) > 0" "$sent" || fail "the agent counts no samples sent"
pass "the agent sent $sent samples"
# The agent first, while the receiver still answers its last batch.
kill "$AGENT_PID"; wait "$AGENT_PID" 2>/dev/null || true
echo "remote_write_test: all passed"

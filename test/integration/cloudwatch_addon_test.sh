#!/usr/bin/env bash
# Our daemon as the EKS add-on amazon-cloudwatch-observability runs its dcgm-exporter
# (deploy/cloudwatch/addon/, docs/cloudwatch-addon.md, docs/upstream/cloudwatch-addon.md): the
# operator's env and args, the dcgm-exporter-config-map's two files (testdata/cloudwatch-addon/)
# under a stand-in for /etc/dcgm-exporter, the agent's certificate (SANs dcgm-exporter-service
# and dcgm-exporter-service.amazon-cloudwatch.svc, signed by a CA made here), the kubelet's
# pod-resources socket (kubelet_fixture). A real Prometheus scrapes it over TLS with the
# agent's two scrape jobs: OTel Container Insights' (ca_file, drops Hostname and pci_bus_id)
# and the classic receiver's (keeps DCGM_* only, renames labels to Container Insights' keys).
# A second daemon runs with NVML_EXPORTER_HOSTNAME_LABEL=Hostname (the derived image of
# docs/cloudwatch-addon.md): the agent then removes or renames the host label as it means to.
# Paths: only the root differs (/etc -> $ROOT/etc); the listen address is 127.0.0.1:<free port>
# rather than :9400 (as every integration test: no clash with other tests on the machine).
source "$(dirname "$0")/lib.sh"
command -v prometheus >/dev/null || fail "prometheus not installed (scripts/install-deps.sh)"
FIXTURE="$BUILD_DIR/test/fixtures/kubelet_fixture"
ADDON="$SOURCE_DIR/testdata/cloudwatch-addon"
NODE=ip-192-168-7-21.ec2.internal
ROOT="$WORK/root"

# --- deploy/cloudwatch/addon/: the add-on's JSON and the Helm values say the same ----------------
python3 - "$SOURCE_DIR/deploy/cloudwatch/addon" <<'PY' || fail "deploy/cloudwatch/addon: configuration-values.json and values.yaml differ"
import json, sys, yaml
d = sys.argv[1]
a, b = json.load(open(f"{d}/configuration-values.json")), yaml.safe_load(open(f"{d}/values.yaml"))
assert a == b, (a, b)
img = a["dcgmExporter"]["image"]
assert img["repository"] == "nvml-exporter" and img["tag"], img
assert {"public", "cn-north-1", "cn-northwest-1", "us-gov-east-1", "us-gov-west-1"} <= set(img["repositoryDomainMap"]), img
PY

# --- the Secret amazon-cloudwatch-observability-agent-cert, as cert-manager would make it -----
certs="$ROOT/etc/amazon-cloudwatch-observability-dcgm-cert"
mkdir -p "$certs" "$ROOT/etc/dcgm-exporter"
{
  openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=agent-ca" \
    -keyout "$WORK/ca.key" -out "$WORK/ca.crt" &&
  openssl req -newkey rsa:2048 -nodes -subj "/CN=dcgm-exporter-service" \
    -keyout "$certs/server.key" -out "$WORK/server.csr" &&
  printf 'subjectAltName=DNS:dcgm-exporter-service,DNS:dcgm-exporter-service.amazon-cloudwatch.svc\n' >"$WORK/san.ext" &&
  openssl x509 -req -in "$WORK/server.csr" -CA "$WORK/ca.crt" -CAkey "$WORK/ca.key" \
    -CAcreateserial -days 1 -extfile "$WORK/san.ext" -out "$certs/server.crt"
} >"$WORK/openssl.log" 2>&1 || { cat "$WORK/openssl.log" >&2; fail "openssl could not make the certificates"; }

# --- the ConfigMap dcgm-exporter-config-map, mounted over /etc/dcgm-exporter -----------------
cp "$ADDON/dcp-metrics-included.csv" "$ROOT/etc/dcgm-exporter/"
sed "s#/etc/#$ROOT/etc/#" "$ADDON/web-config.yaml" >"$ROOT/etc/dcgm-exporter/web-config.yaml"

# --- the kubelet: one pod holds GPU 0 ----------------------------------------------------------
uuid0=$(DCGM_EXPORTER_COLLECTORS="$ADDON/dcp-metrics-included.csv" "$EXPORTER" --fake-gpus --once 2>/dev/null |
  sed -n 's/^DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="\([^"]*\)".*/\1/p')
[ -n "$uuid0" ] || fail "no GPU 0 on the simulated NVML"
sock="$WORK/kubelet.sock"
cat >"$WORK/kubelet.json" <<JSON
{"answers": [{"pods": [{"namespace": "ml", "name": "trainer-0", "containers": [{"name": "main",
  "devices": [{"resource_name": "nvidia.com/gpu", "device_ids": ["$uuid0"]}]}]}]}]}
JSON
"$FIXTURE" --socket "$sock" --script "$WORK/kubelet.json" >"$WORK/fixture.out" 2>>"$WORK/fixture.log" &
PIDS+=($!)
for _ in $(seq 100); do grep -q ready "$WORK/fixture.out" 2>/dev/null && break; sleep 0.05; done
grep -q ready "$WORK/fixture.out" || fail "kubelet fixture did not start"

# --- the DaemonSet's container: the operator's env and args, nothing else ----------------------
# (plus, for the test only: the simulated GPUs and the socket's path)
start_addon() { # PORT LOG [extra env...]
  local port="$1" log="$2"; shift 2
  env DCGM_EXPORTER_KUBERNETES=true DCGM_EXPORTER_LISTEN="127.0.0.1:$port" NODE_NAME="$NODE" \
    DCGM_EXPORTER_INTERVAL=1000 \
    DCGM_EXPORTER_COLLECTORS="$ROOT/etc/dcgm-exporter/dcp-metrics-included.csv" \
    DCGM_EXPORTER_USE_FAKE_GPUS=true DCGM_POD_RESOURCES_KUBELET_SOCKET="$sock" "$@" \
    "$EXPORTER" "--web-config-file=$ROOT/etc/dcgm-exporter/web-config.yaml" >/dev/null 2>"$log" &
  PIDS+=($!)
}
port=$(free_port)
port2=$(free_port)
start_addon "$port" "$WORK/exporter.log"
start_addon "$port2" "$WORK/exporter2.log" NVML_EXPORTER_HOSTNAME_LABEL=Hostname
# The agent's client: the CA, and the name it dials (dcgm-exporter-service) checked against the SANs.
tls=(--cacert "$WORK/ca.crt" --resolve "dcgm-exporter-service:$port:127.0.0.1"
     --resolve "dcgm-exporter-service:$port2:127.0.0.1")
wait_http_tls() { for _ in $(seq 200); do curl -fsS "${tls[@]}" -o /dev/null "$1" 2>/dev/null && return 0; sleep 0.1; done; return 1; }
for p in "$port" "$port2"; do
  wait_http_tls "https://dcgm-exporter-service:$p/ready" || fail "no TLS /ready on :$p"
done
# The operator renders no probes; /health and /ready answer on the TLS port for any added later.
for path in /health /ready; do
  code=$(curl -sS "${tls[@]}" -o /dev/null -w '%{http_code}' "https://dcgm-exporter-service:$port$path")
  [ "$code" = 200 ] || fail "GET $path over TLS: $code"
done
curl -fsS -o /dev/null "http://127.0.0.1:$port/metrics" 2>/dev/null && fail "plain HTTP answered on the TLS port"
curl -fsS "${tls[@]}" "https://dcgm-exporter-service:$port/metrics" >"$WORK/page.txt"
grep -q '^DCGM_FI_DEV_GPU_UTIL{gpu="0".*pod="trainer-0"' "$WORK/page.txt" || fail "GPU 0 lacks its pod: $(grep GPU_UTIL "$WORK/page.txt")"
grep -q 'msg="collecting".*interval_ms=1000 fields=11' "$WORK/exporter.log" ||
  fail "want the ConfigMap's 11 fields every 1000 ms: $(grep collecting "$WORK/exporter.log")"
pass "TLS on the add-on's files (SAN dcgm-exporter-service), /health and /ready 200, pod labels, 11 fields at 1 s"

# --- Prometheus with the agent's two scrape jobs, for both daemons -----------------------------
pport=$(free_port)
jobs() { # NAME PORT
  cat <<YAML
  - job_name: otel-$1          # prometheus/cw_k8s_ci_v0_dcgm + transform/cw_k8s_ci_v0_dcgm_promote
    scheme: https
    tls_config: {ca_file: $WORK/ca.crt, server_name: dcgm-exporter-service}
    static_configs: [{targets: ['127.0.0.1:$2']}]
    metric_relabel_configs:
      - {action: labeldrop, regex: Hostname|pci_bus_id}
  - job_name: classic-$1       # awscontainerinsightreceiver containerInsightsDCGMExporterScraper
    scheme: https
    tls_config: {ca_file: $WORK/ca.crt, server_name: dcgm-exporter-service, insecure_skip_verify: false}
    static_configs: [{targets: ['127.0.0.1:$2']}]
    metric_relabel_configs:
      - {source_labels: [__name__], regex: 'DCGM_.*', action: keep}
      - {source_labels: [Hostname], target_label: NodeName, regex: '(.*)', replacement: '\${1}'}
      - {source_labels: [namespace], target_label: Namespace, regex: '(.*)', replacement: '\${1}'}
      - {source_labels: [pod], target_label: FullPodName, regex: '(.*)', replacement: '\${1}'}
      - {source_labels: [pod], target_label: K8sPodName, regex: '(.*)', replacement: '\${1}'}
      - {source_labels: [container], target_label: ContainerName, regex: '(.*)', replacement: '\${1}'}
      - {source_labels: [device], target_label: GpuDevice, regex: '(.*)', replacement: '\${1}'}
YAML
}
{
  printf 'global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\nscrape_configs:\n'
  jobs default "$port"
  jobs hostname "$port2"
} >"$WORK/prometheus.yml"
promtool check config "$WORK/prometheus.yml" >/dev/null 2>&1 || { promtool check config "$WORK/prometheus.yml"; fail "promtool check config"; }
prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/tsdb" \
  --web.listen-address="127.0.0.1:$pport" >"$WORK/prometheus.log" 2>&1 &
PIDS+=($!)
wait_http "http://127.0.0.1:$pport/-/ready" 30 || { tail -n 20 "$WORK/prometheus.log"; fail "prometheus not ready"; }
api="http://127.0.0.1:$pport/api/v1"
check() {
  curl -fsS "$api/query?query=up" >"$WORK/up.json" || return 1
  curl -fsS -G "$api/query" --data-urlencode 'query={__name__=~".+",job=~"otel-.*|classic-.*",__name__!~"up|scrape_.*"}' \
    >"$WORK/series.json" || return 1
  python3 - "$WORK/up.json" "$WORK/series.json" "$ADDON/dcp-metrics-included.csv" "$NODE" "$1" <<'PY'
import json, sys
up = {r["metric"]["job"]: r["value"][1] for r in json.load(open(sys.argv[1]))["data"]["result"]}
series = [r["metric"] for r in json.load(open(sys.argv[2]))["data"]["result"]]
node, final = sys.argv[4], sys.argv[5] == "final"
csv = [l.split(",")[0].strip() for l in open(sys.argv[3]) if l.strip() and not l.startswith("#")]
fields = [f for f in csv if f != "DCGM_FI_DRIVER_VERSION"]
by_job = {}
for m in series:
    by_job.setdefault(m["job"], []).append(m)
jobs = ["otel-default", "classic-default", "otel-hostname", "classic-hostname"]
if not final and (any(up.get(j) != "1" for j in jobs) or any(j not in by_job for j in jobs)):
    sys.exit(1)
assert all(up.get(j) == "1" for j in jobs), f"targets not all up over TLS: {up}"
for job in jobs:
    dcgm = [m for m in by_job[job] if m["__name__"].startswith("DCGM_")]
    names = {m["__name__"] for m in dcgm}
    assert names == set(fields), f"{job}: DCGM families {sorted(names)}, want the ConfigMap's {fields}"
    for m in dcgm:
        assert "pci_bus_id" not in m or job.startswith("classic"), f"{job}: pci_bus_id kept: {m}"
        assert "Hostname" not in m or job.startswith("classic"), f"{job}: Hostname kept: {m}"
        for label in ("gpu", "UUID", "device", "modelName", "DCGM_FI_DRIVER_VERSION"):
            assert label in m, f"{job}: {m['__name__']} lacks {label}: {m}"
        if m["gpu"] == "0":
            if job.startswith("otel"):
                want = {"pod": "trainer-0", "namespace": "ml", "container": "main"}
            else:
                want = {"FullPodName": "trainer-0", "K8sPodName": "trainer-0", "Namespace": "ml",
                        "ContainerName": "main", "GpuDevice": "nvidia0"}
            assert all(m.get(k) == v for k, v in want.items()), f"{job}: GPU 0 labels {m}, want {want}"
    own = {m["__name__"] for m in by_job[job] if m["__name__"].startswith("nvml_exporter_")}
    if job.startswith("classic"):
        assert not own, f"{job}: the receiver keeps DCGM_* only, got {own}"
    else:
        assert {"nvml_exporter_gpu_up", "nvml_exporter_build_info"} <= own, f"{job}: own families {own}"
        print(f"{job}: {len([m for m in by_job[job] if m['__name__'].startswith('nvml_exporter_')])} "
              f"nvml_exporter_* series for 2 GPUs reach the pipeline: {sorted(own)}")
    # The host label: 4.8.3+'s hostname passes the agent's delete of Hostname; Hostname does not.
    hosts = {(m.get("hostname"), m.get("Hostname"), m.get("NodeName")) for m in dcgm}
    want = {("otel-default"): (node, None, None), "classic-default": (node, None, None),
            "otel-hostname": (None, None, None), "classic-hostname": (None, node, node)}[job]
    assert hosts == {want}, f"{job}: (hostname, Hostname, NodeName) {hosts}, want {want}"
print(f"ok: {len(series)} series over TLS in 4 agent-shaped jobs; DCGM names kept, pci_bus_id/Hostname dropped")
PY
}
seen=
for _ in $(seq 20); do
  sleep 1
  if check poll >"$WORK/check.out" 2>&1; then seen=1; break; fi
done
if [ -n "$seen" ]; then cat "$WORK/check.out"; else check final || fail "prometheus did not see the expected series"; fi
echo "cloudwatch_addon_test: all passed"

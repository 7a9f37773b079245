#!/usr/bin/env bash
# `make demo`: the exporter and a real Prometheus on one machine, with our alert and recording
# rules, scraping every second. No GPU here: the simulated GPUs of deploy/demo/scenario.yaml (a
# pulse, a time-sliced GPU shared by two pods, an idle GPU that a pod holds, a free one), the
# fake kubelet (test/fixtures/kubelet_fixture: which pod holds which GPU, deploy/demo/kubelet.json)
# and the fake API server (test/integration/fake_apiserver.py over HTTPS with a throwaway
# certificate: pod names for the per-process shares, with the fake /proc of testdata/proc). With
# a GPU (and the driver's NVML): the real GPUs, and pod labels only if this is a Kubernetes node.
# Prints the URLs; Ctrl-C (or SIGTERM) stops everything it started and removes its files.
#
#   scripts/demo.sh BUILD_DIR
# Environment: DEMO_EXPORTER_PORT (9400), DEMO_PROMETHEUS_PORT (9090), DEMO_ADDRESS (127.0.0.1),
# DEMO_FORCE_SIMULATED=1 (simulated GPUs even on a GPU machine).
set -euo pipefail
build="${1:?usage: demo.sh BUILD_DIR}"
src="$(cd "$(dirname "$0")/.." && pwd)"
exporter_port="${DEMO_EXPORTER_PORT:-9400}"
prom_port="${DEMO_PROMETHEUS_PORT:-9090}"
addr="${DEMO_ADDRESS:-127.0.0.1}"
bin="$build/src/app/nvml-exporter"
fixture="$build/test/fixtures/kubelet_fixture"
for f in "$bin" "$fixture"; do
  [ -x "$f" ] || { echo "demo: $f is missing: run make demo (it builds it)" >&2; exit 1; }
done
command -v prometheus >/dev/null || { echo "demo: prometheus is not installed (scripts/install-deps.sh)" >&2; exit 1; }

dir="$(mktemp -d -t nvml-exporter-demo.XXXXXX)"
pids=()
sleeper=""
stop() {
  trap - INT TERM EXIT
  echo "demo: stopping" >&2
  local p
  if [ -n "$sleeper" ]; then kill -TERM "$sleeper" 2>/dev/null || true; fi
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$dir"
  echo "demo: stopped" >&2
}
trap 'stop; exit 0' INT TERM
trap stop EXIT
# wait_http URL SECONDS NAME LOG: until it answers 200, or give up showing the log's tail.
wait_http() {
  local i
  for ((i = 0; i < $2 * 10; i++)); do
    curl -fsS -o /dev/null "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "demo: $3 did not answer $1; the end of $4:" >&2
  tail -n 20 "$4" >&2
  exit 1
}

args=(-f "$src/etc/observability-counters.csv" -c 1000 -a "$addr:$exporter_port")
if [ -z "${DEMO_FORCE_SIMULATED:-}" ] && [ -e /dev/nvidia0 ] &&
   { ldconfig -p 2>/dev/null | grep -q 'libnvidia-ml.so.1'; }; then
  echo "demo: NVIDIA GPU found: using the driver's libnvidia-ml.so.1" >&2
  sock=/var/lib/kubelet/pod-resources/kubelet.sock
  [ -S "$sock" ] && args+=(-k --pod-resources-kubelet-socket "$sock")
else
  echo "demo: simulated GPUs (deploy/demo/scenario.yaml), pods from a fake kubelet and API server" >&2
  "$fixture" --socket "$dir/kubelet.sock" --script "$src/deploy/demo/kubelet.json" \
    >"$dir/kubelet.out" 2>"$dir/kubelet.log" &
  pids+=($!)
  for _ in $(seq 100); do grep -q ready "$dir/kubelet.out" 2>/dev/null && break; sleep 0.05; done
  # The API server: HTTPS with a certificate made now, bearer token "demo-token".
  openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=demo-apiserver" \
    -addext "subjectAltName=IP:127.0.0.1" -keyout "$dir/key.pem" -out "$dir/cert.pem" \
    >"$dir/openssl.log" 2>&1 || { cat "$dir/openssl.log" >&2; exit 1; }
  echo demo-token >"$dir/token"
  mkdir -p "$dir/apiserver"
  python3 "$src/test/integration/fake_apiserver.py" "$src/testdata/apiserver/pods_node1.json" \
    "$dir/cert.pem" "$dir/key.pem" demo-token "$dir/apiserver" "$dir/apiserver.port" \
    2>"$dir/apiserver.log" &
  pids+=($!)
  for _ in $(seq 100); do [ -s "$dir/apiserver.port" ] && break; sleep 0.05; done
  [ -s "$dir/apiserver.port" ] || { echo "demo: the fake API server did not start" >&2; exit 1; }
  args+=(--fake-gpus-scenario "$src/deploy/demo/scenario.yaml"
         -k --pod-resources-kubelet-socket "$dir/kubelet.sock"
         --kubernetes-process-metrics --host-proc-root "$src/testdata/proc"
         --kubernetes-api-server "https://127.0.0.1:$(cat "$dir/apiserver.port")"
         --kubernetes-token-file "$dir/token" --kubernetes-ca-file "$dir/cert.pem")
  # The API server's pods are on node1.
  export NODE_NAME=node1
fi
NODE_NAME="${NODE_NAME:-demo-node}" "$bin" "${args[@]}" >"$dir/exporter.out" 2>"$dir/exporter.log" &
pids+=($!)
wait_http "http://$addr:$exporter_port/ready" 30 exporter "$dir/exporter.log"

cat >"$dir/prometheus.yml" <<YAML
global:
  scrape_interval: 1s
  scrape_timeout: 900ms
  evaluation_interval: 1s
rule_files:
  - $src/deploy/prometheus/rules.yml
  - $src/deploy/prometheus/rename-rules.yml
scrape_configs:
  - job_name: nvml-exporter
    honor_labels: true
    sample_limit: 20000
    static_configs:
      - targets: ['$addr:$exporter_port']
        labels: {cluster: demo}
YAML
prometheus --config.file="$dir/prometheus.yml" --storage.tsdb.path="$dir/tsdb" \
  --web.listen-address="$addr:$prom_port" >"$dir/prometheus.log" 2>&1 &
pids+=($!)
wait_http "http://$addr:$prom_port/-/ready" 60 prometheus "$dir/prometheus.log"

url="http://$addr:$prom_port"
cat <<TXT
nvml-exporter demo is running (Ctrl-C stops it):
  exporter metrics  http://$addr:$exporter_port/metrics
  Prometheus        $url/graph?g0.expr=DCGM_FI_DEV_GPU_UTIL&g0.tab=0&g0.range_input=5m
  alerts            $url/alerts
  rules             $url/rules
  idle allocated    $url/graph?g0.expr=namespace_pod%3Adcgm_gpu_idle%3Acount&g0.tab=1
  per-pod shares    $url/graph?g0.expr=nvml_exporter_pod_gpu_sm_utilization_ratio&g0.tab=0&g0.range_input=5m
  targets           $url/targets
Grafana: add $url as a Prometheus data source and import deploy/grafana/dashboards/*.json
(or provision them: deploy/grafana/provisioning/), and dcgm-exporter's by its id 12239
(deploy/grafana/README.md). Logs and data: $dir
TXT
# Until Ctrl-C, or until a child dies (then say which and stop the rest).
while true; do
  for p in "${pids[@]}"; do
    if ! kill -0 "$p" 2>/dev/null; then
      # Ctrl-C reaches the whole process group: the children may stop before our INT trap
      # runs. Give it a moment, so that a Ctrl-C is not reported as a failure.
      sleep 0.5
      echo "demo: a process stopped unexpectedly (pid $p); logs:" >&2
      tail -n 5 "$dir"/*.log >&2 || true
      exit 1
    fi
  done
  sleep 1 &
  sleeper=$!
  wait $sleeper || true
done

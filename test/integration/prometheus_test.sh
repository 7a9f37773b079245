#!/usr/bin/env bash
# A real Prometheus (Debian's package) scrapes the daemon on simulated GPUs every second.
# Checks: promtool accepts the exposition, process_* self-metrics included (its only complaints
# are dcgm-exporter's counter names, kept for compatibility); Prometheus's HTTP API returns
# DCGM_FI_DEV_GPU_UTIL for every simulated GPU, and GPU 0's square wave shows both phases; gzip
# and HEAD work end to end.
source "$(dirname "$0")/lib.sh"
command -v prometheus >/dev/null || fail "prometheus not installed (scripts/install-deps.sh)"
command -v promtool >/dev/null || fail "promtool not installed"

port=$(free_port)
# --enable-exporter-metrics: the process_* families are linted with the rest (they must be clean).
start_exporter "$port" -c 1000 -f "$SOURCE_DIR/etc/default-counters.csv" \
  --fake-gpus-scenario "$SOURCE_DIR/testdata/scenarios/pulse_fast.yaml" --enable-exporter-metrics
curl -fsS "http://127.0.0.1:$port/metrics" >"$WORK/metrics.txt"
for fam in process_cpu_seconds_total:counter process_resident_memory_bytes:gauge \
  process_virtual_memory_bytes:gauge process_open_fds:gauge process_max_fds:gauge \
  process_start_time_seconds:gauge; do
  grep -qx "# TYPE ${fam%%:*} ${fam##*:}" "$WORK/metrics.txt" || fail "no ${fam%%:*} (${fam##*:}) on /metrics"
done

# --- promtool ---------------------------------------------------------------------------------
set +e
promtool check metrics <"$WORK/metrics.txt" >"$WORK/lint.txt" 2>&1; rc=$?
set -e
# Exit 3 = lint problems only; 1 = the exposition did not parse.
[ "$rc" = 0 ] || [ "$rc" = 3 ] || { cat "$WORK/lint.txt"; fail "promtool could not parse /metrics (exit $rc)"; }
# The only lint lines allowed are those that dcgm-exporter's names cause, kept for compatibility:
#  - counter families from the CSV lack the _total suffix;
#  - the modelName label is camelCase (on every DCGM family);
#  - DCGM_FI_DEV_PCIE_REPLAY_COUNTER has "counter" in its name.
# Our own nvml_exporter_* families must be lint-clean.
python3 - "$WORK/lint.txt" "$WORK/metrics.txt" "$SOURCE_DIR/etc/default-counters.csv" <<'PY'
import re, sys
lint = [l.rstrip("\n") for l in open(sys.argv[1]) if l.strip()]
text = open(sys.argv[2]).read()
types = dict(re.findall(r"^# TYPE (\S+) (\S+)$", text, re.M))
csv_counters = {l.split(",")[0].strip() for l in open(sys.argv[3])
                if not l.lstrip().startswith("#") and l.count(",") >= 2 and l.split(",")[1].strip() == "counter"}
allowed = set()
for fam, t in types.items():
    if not fam.startswith("DCGM_"):
        continue
    allowed.add(f"{fam} label names should be written in 'snake_case' not 'camelCase'")
    if t == "counter":
        assert fam in csv_counters, f"{fam} is a counter but not one in the CSV"
        allowed.add(f'{fam} counter metrics should have "_total" suffix')
allowed.add("DCGM_FI_DEV_PCIE_REPLAY_COUNTER metric name should not include type 'counter'")
unexpected = [l for l in lint if l not in allowed]
assert not unexpected, f"unexpected promtool lint: {unexpected}"
total = [l for l in lint if "_total" in l]
assert total, "expected the dcgm counter families to be linted for _total (is the CSV's counter set served?)"
print(f"ok: promtool lint limited to dcgm-exporter compatibility names ({len(set(lint))} distinct lines, {len(total)} _total)")
PY

# --- HTTP details -----------------------------------------------------------------------------
ctype=$(curl -fsS -o /dev/null -w '%{content_type}' "http://127.0.0.1:$port/metrics")
[ "$ctype" = "text/plain; version=0.0.4; charset=utf-8" ] || fail "content type: $ctype"
# Into a file first: grep -q quits at its first match, and gzip's SIGPIPE would fail pipefail.
curl -fsS -H 'Accept-Encoding: gzip' "http://127.0.0.1:$port/metrics" | gzip -dc >"$WORK/gunzipped.txt" \
  || fail "gzip body does not decompress"
grep -q '^# TYPE DCGM_FI_DEV_GPU_UTIL gauge' "$WORK/gunzipped.txt" \
  || fail "gzip body does not decompress to the exposition"
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$port/metrics")
[ "$code" = 405 ] || fail "POST /metrics: $code, want 405"
pass "content type, gzip, 405"

# --- Prometheus -------------------------------------------------------------------------------
pport=$(free_port)
cat >"$WORK/prometheus.yml" <<YAML
global:
  scrape_interval: 1s
  scrape_timeout: 900ms
scrape_configs:
  - job_name: nvml-exporter
    static_configs:
      - targets: ['127.0.0.1:$port']
YAML
promtool check config "$WORK/prometheus.yml" >/dev/null || fail "promtool check config"
prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/tsdb" \
  --web.listen-address="127.0.0.1:$pport" >"$WORK/prometheus.log" 2>&1 &
PIDS+=($!)
wait_http "http://127.0.0.1:$pport/-/ready" 30 || { tail -n 20 "$WORK/prometheus.log"; fail "prometheus not ready"; }
start=$(date +%s)
api="http://127.0.0.1:$pport/api/v1"
# Poll until the wave has had time to show both phases twice (>= 14 samples), at most 60 s.
check() {
  end=$(date +%s)
  curl -fsS "$api/query?query=up%7Bjob%3D%22nvml-exporter%22%7D" >"$WORK/up.json" || return 1
  curl -fsS "$api/query_range?query=DCGM_FI_DEV_GPU_UTIL&start=$start&end=$end&step=1" >"$WORK/range.json" || return 1
  python3 - "$WORK/up.json" "$WORK/range.json" "$1" <<'PY'
import json, sys
final = sys.argv[3] == "final"
up = json.load(open(sys.argv[1]))["data"]["result"]
res = json.load(open(sys.argv[2]))["data"]["result"]
by_gpu = {r["metric"]["gpu"]: [float(v) for _, v in r["values"]] for r in res}
if not final and len(by_gpu.get("0", [])) < 14:
    sys.exit(1)
assert up and up[0]["value"][1] == "1", f"target not up: {up}"
assert set(by_gpu) == {"0", "1"}, f"want GPU_UTIL for gpus 0 and 1, got {sorted(by_gpu)}"
for r in res:
    m = r["metric"]
    for label in ("UUID", "pci_bus_id", "device", "modelName", "hostname", "DCGM_FI_DRIVER_VERSION"):
        assert label in m, f"series lacks {label}: {m}"
g0 = by_gpu["0"]
assert len(g0) >= 14, f"too few samples for GPU 0: {len(g0)}"
assert max(g0) == 100 and min(g0) == 0, f"square wave not visible on GPU 0: {g0}"
# Both phases must last: at least 2 consecutive samples high and 2 low (3 s on / 3 s off).
runs = []
for v in g0:
    if runs and runs[-1][0] == v: runs[-1][1] += 1
    else: runs.append([v, 1])
assert any(v == 100 and n >= 2 for v, n in runs) and any(v == 0 and n >= 2 for v, n in runs), runs
assert len(runs) >= 3, f"want at least two transitions: {runs}"
assert set(by_gpu["1"]) == {42.0}, f"GPU 1 should stay at 42: {by_gpu['1']}"
print(f"ok: prometheus saw GPU_UTIL for gpus {sorted(by_gpu)}; GPU 0 phases {[(int(v), n) for v, n in runs]}")
PY
}
for _ in $(seq 30); do
  sleep 2
  if check poll 2>/dev/null; then break; fi
done
check final || fail "prometheus did not see the expected series"
echo "prometheus_test: all passed"

#!/usr/bin/env bash
# --container-labels end to end, on a host without Kubernetes: a Docker-compatible engine of our
# own (fake_docker_engine.py) on a unix socket; each GPU series is kept and copied once per running
# container given that GPU, with container="<name>"; the engine is asked in the background (a new
# container shows up without a restart); an engine that goes away is counted and logged once while
# the last good labels stay; --container-labels without a socket is refused (exit 2).
source "$(dirname "$0")/lib.sh"
sock="$WORK/docker.sock"
state="$WORK/containers.json"
cat >"$state" <<'JSON'
[{"Id": "1111111111111111", "Name": "trainer", "Env": ["NVIDIA_VISIBLE_DEVICES=0"]},
 {"Id": "2222222222222222", "Name": "everyone",
  "DeviceRequests": [{"Driver": "nvidia", "Count": -1, "Capabilities": [["gpu"]]}]},
 {"Id": "3333333333333333", "Name": "no-gpu", "Env": ["HOME=/root"]}]
JSON

set +e
timeout 20 "$EXPORTER" --fake-gpus -f "$SOURCE_DIR/etc/default-counters.csv" -a 127.0.0.1:0 \
  --container-labels >/dev/null 2>"$WORK/bad.err"; rc=$?
set -e
[ "$rc" = 2 ] || { cat "$WORK/bad.err"; fail "--container-labels without a socket: exit $rc, want 2"; }
grep -q -- '--container-labels requires --container-runtime-socket or DCGM_CONTAINER_RUNTIME_SOCKET' \
  "$WORK/bad.err" || { cat "$WORK/bad.err"; fail "the refusal must name both"; }
pass "--container-labels without a socket -> exit 2"

python3 "$SOURCE_DIR/test/integration/fake_docker_engine.py" "$sock" "$state" 2>>"$WORK/engine.log" &
ENGINE_PID=$!
PIDS+=("$ENGINE_PID")
for _ in $(seq 1 100); do [ -S "$sock" ] && break; sleep 0.1; done
[ -S "$sock" ] || fail "fake engine did not start"

port=$(free_port)
start_exporter "$port" -c 1000 --log-format json -f "$SOURCE_DIR/etc/default-counters.csv" \
  --container-labels --container-runtime-socket "$sock"
EXPORTER_PID="${PIDS[-1]}"
url="http://127.0.0.1:$port/metrics"
curl -fsS "$url" >"$WORK/m1.txt"
util() { grep "^DCGM_FI_DEV_GPU_UTIL{gpu=\"$1\"" "$2"; }
[ "$(util 0 "$WORK/m1.txt" | wc -l)" = 3 ] || fail "GPU 0: bare, trainer, everyone: $(util 0 "$WORK/m1.txt")"
util 0 "$WORK/m1.txt" | sed -n 1p | grep -vq 'container=' || fail "GPU 0's bare series comes first"
util 0 "$WORK/m1.txt" | sed -n 2p | grep -q ',container="trainer"} ' || fail "GPU 0: trainer second"
util 0 "$WORK/m1.txt" | sed -n 3p | grep -q ',container="everyone"} ' || fail "GPU 0: everyone third"
[ "$(util 1 "$WORK/m1.txt" | grep -c 'container="everyone"')" = 1 ] || fail "GPU 1: everyone"
! grep -q 'container="no-gpu"' "$WORK/m1.txt" || fail "a container without a GPU labels nothing"
grep -q '^nvml_exporter_attribution_errors_total{source="container_runtime"} 0$' "$WORK/m1.txt" ||
  fail "container_runtime errors counter must be registered at 0"
promtool_parses "container labels" "$WORK/m1.txt"
pass "one copy per container, after the bare series"

python3 - "$state" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c.append({"Id": "4444444444444444", "Name": "late", "Env": ["NVIDIA_VISIBLE_DEVICES=1"]})
json.dump(c, open(sys.argv[1], "w"))
PY
await_page "$url" '^DCGM_FI_DEV_GPU_UTIL\{gpu="1",.*container="late"\} ' 15 ||
  fail "a new container must show up without a restart"
pass "engine changes picked up in the background"

kill "$ENGINE_PID"; wait "$ENGINE_PID" 2>/dev/null || true
await_page "$url" '^nvml_exporter_attribution_errors_total\{source="container_runtime"\} [1-9]' 15 ||
  fail "a failing engine must be counted"
await_page "$url" '^nvml_exporter_attribution_errors_total\{source="container_runtime"\} ([2-9]|[1-9][0-9]+)$' 15 ||
  fail "every failed refresh counts"
curl -fsS "$url" >"$WORK/m2.txt"
for name in trainer late; do
  grep -q ",container=\"$name\"} " "$WORK/m2.txt" ||
    fail "the last good labels ($name) must stay while the engine is down"
done
pass "engine down: counted, last good labels kept"
kill "$EXPORTER_PID"; wait "$EXPORTER_PID" 2>/dev/null || true
python3 - "$WORK/exporter.log" "$sock" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
failing = [l for l in lines if l.get("source") == "container_runtime"
           and l["msg"].startswith("attribution source failing")]
assert len(failing) == 1, failing
assert sys.argv[2] in failing[0]["err"], failing[0]
print("ok: the failure streak logged once, naming the socket")
PY
echo "container_labels_test: all passed"

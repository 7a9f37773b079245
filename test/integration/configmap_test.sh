#!/usr/bin/env bash
# -m/--configmap-data NS:NAME end to end: the collectors CSV from the `metrics` key of a ConfigMap
# served by fake_apiserver.py over HTTPS (self-signed certificate made here, bearer token), as
# dcgm-exporter reads it. Then the failures, each a start-up error naming the ConfigMap: not
# found, no `metrics` key, a bad CSV row (with its line), a wrong token.
source "$(dirname "$0")/lib.sh"
CTL="$WORK/ctl"
mkdir -p "$CTL/configmaps"
echo ok >"$CTL/mode"
start_apiserver
api="https://127.0.0.1:$api_port"
configmap() {  # NS NAME DATA-JSON
  echo '{"kind": "ConfigMap", "metadata": {"namespace": "'"$1"'", "name": "'"$2"'"}, "data": '"$3"'}' \
    >"$CTL/configmaps/$1_$2.json"
}
csv=$(python3 -c 'import json; print(json.dumps("# from a ConfigMap\nDCGM_FI_DEV_GPU_TEMP, gauge, GPU temperature (in C).\nDCGM_FI_DEV_POWER_USAGE, gauge, Power draw (in W).\n"))')
configmap gpu-operator metrics-config '{"metrics": '"$csv"'}'
configmap gpu-operator wrong-key '{"dcgm-metrics.csv": '"$csv"'}'
configmap gpu-operator bad-row '{"metrics": "DCGM_FI_DEV_GPU_TEMP, gauge, t\nDCGM_FI_DEV_GPU_TMEP, gauge, t\n"}'
run() {  # TOKEN-FILE ARGS...: --once with the API server flags
  local token="$1"; shift
  "$EXPORTER" --fake-gpus --kubernetes-api-server "$api" --kubernetes-token-file "$token" \
    --kubernetes-ca-file "$WORK/cert.pem" --once "$@"
}

# -f names a file that does not exist: the ConfigMap is what is read.
run "$WORK/token" -f /nonexistent.csv -m gpu-operator:metrics-config >"$WORK/page.txt" 2>"$WORK/ok.err" \
  || { cat "$WORK/ok.err"; fail "-m: did not start"; }
grep -q '^DCGM_FI_DEV_GPU_TEMP{' "$WORK/page.txt" || fail "-m: no DCGM_FI_DEV_GPU_TEMP"
grep -q '^DCGM_FI_DEV_POWER_USAGE{' "$WORK/page.txt" || fail "-m: no DCGM_FI_DEV_POWER_USAGE"
[ "$(grep -c "^# TYPE DCGM_" "$WORK/page.txt")" = 2 ] || fail "-m: want exactly the ConfigMap's 2 DCGM families"
DCGM_EXPORTER_CONFIGMAP_DATA=gpu-operator:metrics-config run "$WORK/token" >"$WORK/env.txt" 2>/dev/null \
  || fail "DCGM_EXPORTER_CONFIGMAP_DATA: did not start"
grep -q '^DCGM_FI_DEV_GPU_TEMP{' "$WORK/env.txt" || fail "DCGM_EXPORTER_CONFIGMAP_DATA: not read"
pass "collectors from the ConfigMap's metrics key (flag and env var)"

expect_error() {  # WHAT WANT-SUBSTRING TOKEN-FILE ARGS...
  local what="$1" want="$2" token="$3" rc; shift 3
  set +e
  run "$token" "$@" >/dev/null 2>"$WORK/err.txt"; rc=$?
  set -e
  [ "$rc" = 2 ] || { cat "$WORK/err.txt"; fail "$what: exit $rc, want 2"; }
  grep -qF -- "$want" "$WORK/err.txt" || { cat "$WORK/err.txt"; fail "$what: want \"$want\""; }
}
expect_error "missing ConfigMap" "configmap gpu-operator/nope: the API server answered 404" \
  "$WORK/token" -m gpu-operator:nope
expect_error "no metrics key" 'configmap gpu-operator/wrong-key: no "metrics" key in its data' \
  "$WORK/token" -m gpu-operator:wrong-key
expect_error "bad row" "configmap gpu-operator/bad-row key metrics:2: unknown field" \
  "$WORK/token" -m gpu-operator:bad-row --collectors-unknown-fields=fatal
echo wrong >"$WORK/bad-token"
expect_error "wrong token" "answered 401" "$WORK/bad-token" -m gpu-operator:metrics-config
pass "ConfigMap failures stop the start, naming the ConfigMap"
echo "configmap_test: all passed"

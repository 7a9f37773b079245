#!/usr/bin/env bash
# --hpc-job-mapping-dir end to end: a job file per GPU gives one series per job with hpc_job,
# read in the background (a change shows up within a refresh, no restart); a bad line is logged
# once with file:line; a GPU without a file keeps its bare series.
source "$(dirname "$0")/lib.sh"
jobs="$WORK/jobs"
mkdir -p "$jobs"
printf 'slurm-101\nslurm-102\n' >"$jobs/0"
printf 'bad\377id\n' >"$jobs/1"
port=$(free_port)
start_exporter "$port" -c 1000 --log-format json -f "$SOURCE_DIR/etc/default-counters.csv" \
  --hpc-job-mapping-dir "$jobs"
scrape() { curl -fsS "http://127.0.0.1:$port/metrics"; }
scrape >"$WORK/m1.txt"
[ "$(grep -c '^DCGM_FI_DEV_GPU_UTIL{gpu="0",.*,hpc_job="slurm-10[12]"} ' "$WORK/m1.txt")" = 2 ] ||
  fail "GPU 0 must have one series per job: $(grep '^DCGM_FI_DEV_GPU_UTIL{gpu="0"' "$WORK/m1.txt")"
grep -q '^DCGM_FI_DEV_GPU_UTIL{gpu="1",[^}]*DCGM_FI_DRIVER_VERSION="[^"]*"} ' "$WORK/m1.txt" ||
  fail "GPU 1 (only a bad line) keeps its bare series"
grep -q '^nvml_exporter_attribution_errors_total{source="hpc"} 0$' "$WORK/m1.txt" ||
  fail "hpc errors counter must be registered at 0"
pass "one series per job; bare series without jobs"
printf 'slurm-200\n' >"$jobs/0"
ok=""
for _ in $(seq 50); do
  scrape >"$WORK/m2.txt"
  if grep -q 'hpc_job="slurm-200"' "$WORK/m2.txt" && ! grep -q 'slurm-101' "$WORK/m2.txt"; then
    ok=1
    break
  fi
  sleep 0.2
done
[ -n "$ok" ] || fail "a changed job file must show up without a restart"
pass "job file change picked up in the background"
kill "${PIDS[0]}"; wait "${PIDS[0]}" 2>/dev/null || true
python3 - "$WORK/exporter.log" "$jobs/1" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
bad = [l for l in lines if l["msg"] == "hpc job mapping: bad line"]
assert len(bad) == 1, bad
assert bad[0]["at"].startswith(sys.argv[2] + ":1: "), bad[0]
print("ok: bad line logged once with file:line")
PY
echo "hpc_test: all passed"

#!/usr/bin/env bash
# Energy per pod across SIGKILLs (issue 36): the daemon on simulated GPUs with
# --kubernetes-process-metrics --state-dir is killed with SIGKILL at random moments (5 times, 2-8 s
# apart) and started again each time. Scraped just before each kill and just after each start, no
# nvml_exporter_pod_gpu_energy_joules_total series ever goes down, the simulated GPUs' energy
# counter never goes down either (it runs from boot, as the driver's runs from its load), and over
# the whole run the series' sum grows by what the GPUs' counters grew. Then whatever sits at the
# state path (a FIFO, a link to /dev/zero, a directory, the wrong JSON types) lets the daemon serve
# within its usual start time, with the file set aside and ONE error line naming it.
source "$(dirname "$0")/lib.sh"
CTL="$WORK/ctl"
STATE="$WORK/state/pod-energy.json"
start_apiserver
metrics() { curl -fsS "http://127.0.0.1:$port/metrics"; }
start() {
  port=$(free_port)
  start_pod_energy_exporter "$port"
  pid=${PIDS[-1]}
}
# scrape NAME: the page, saved as $WORK/pages/NNN-NAME.txt (in order), once it has the family.
n=0
scrape() {
  local f i
  f="$WORK/pages/$(printf %03d $n)-$1.txt"
  n=$((n + 1))
  for i in $(seq 50); do
    metrics >"$f" 2>/dev/null && grep -q '^nvml_exporter_pod_gpu_energy_joules_total{' "$f" && return 0
    sleep 0.1
  done
  fail "no per-pod energy series ($1)"
}
mkdir -p "$WORK/state" "$WORK/pages"
start
for _ in $(seq 50); do
  metrics | grep -q '^nvml_exporter_pod_gpu_energy_joules_total{.*pod="[a-z]' && break
  sleep 0.2
done
scrape first
cp "$STATE" "$WORK/first.json"
RANDOM=36  # the same moments on every run
for k in 1 2 3 4 5; do
  sleep "$((2 + RANDOM % 7)).$((RANDOM % 10))"
  scrape "before-kill-$k"
  kill -KILL "$pid"
  wait "$pid" 2>/dev/null || true
  start
  scrape "after-start-$k"
done
PYTHONPATH="$SOURCE_DIR/test/pylib" python3 - "$WORK/pages" <<'PY' || fail "energy per pod went back, or does not follow the GPUs' counters"
import os, sys
from energy_page import read_energy_page
d = sys.argv[1]
pages = sorted(os.listdir(d))
def read(path):
    energy, power, series = read_energy_page(path)
    return energy, power, {k: v for k, (_, v) in series.items()}
seen, last_energy = {}, {}
for p in pages:
    energy, _, series = read(os.path.join(d, p))
    for k, v in seen.items():
        # The page has 6 decimals.
        assert k in series, f"{p}: {k} is gone (it had {v})"
        assert series[k] >= v - 1e-6, f"{p}: {k} went back from {v} to {series[k]}"
    for g, e in last_energy.items():
        assert energy[g] >= e, f"{p}: GPU {g}'s energy counter went back from {e} to {energy[g]}"
    seen.update(series)
    last_energy = energy
    if "-after-start-" in p:
        before = read(os.path.join(d, pages[pages.index(p) - 1]))[2]
        print(f"{p}: restored sum {sum(series.values()):.3f} J, "
              f"served before the kill {sum(before.values()):.3f} J")
e0, _, s0 = read(os.path.join(d, pages[0]))
e1, w1, s1 = read(os.path.join(d, pages[-1]))
counter = sum(e1.values()) - sum(e0.values())
split = sum(s1.values()) - sum(s0.values())
# The page shows the ledger last written, at most a collection or two behind its own counter
# reading (0.3 s each), at the first page as at the last.
tolerance = sum(w1.values()) * 0.9 + 1
print(f"over {len(pages)} pages: the GPUs' counters grew {counter:.1f} J, the per-pod series "
      f"{split:.1f} J (tolerance {tolerance:.1f} J)")
assert counter > 1000, counter
assert abs(counter - split) <= tolerance, (counter, split, tolerance)
PY
pass "across 5 SIGKILLs no per-pod energy series went back, and their sum followed the GPUs' counters"
kill -TERM "$pid"
wait "$pid" 2>/dev/null || true
# Each saved ledger is one collection's whole, its GPU readings included: from the first to the
# last (written at the stop), across the 5 kills, the series grew by exactly what each GPU's
# counter did: nothing used while the daemon was down or restarting was lost.
python3 - "$WORK/first.json" "$STATE" <<'PY' || fail "energy was lost across the kills"
import json, sys
fa, fb = (json.load(open(p)) for p in sys.argv[1:3])
for uuid, mj in fb["readings_mj"].items():
    grown = (mj - fa["readings_mj"][uuid]) / 1000
    split = sum(s["joules"] for s in fb["series"] if s["uuid"] == uuid) - \
            sum(s["joules"] for s in fa["series"] if s["uuid"] == uuid)
    print(f"{uuid}: counter grew {grown:.3f} J, the series {split:.3f} J")
    assert grown > 100 and abs(split - grown) < 0.01, (uuid, grown, split)
PY
pass "the saved series grew by exactly the GPUs' counters across the kills"

# Hostile state files: the daemon serves within its usual start time (start_exporter allows 20 s;
# it must take under 5), sets the file aside and logs one error naming it.
hostile() {
  local name="$1" want="$2" t0 t1 errors
  rm -rf "$STATE.bad"
  : >"$WORK/exporter.log"
  t0=$(date +%s.%N)
  start
  t1=$(date +%s.%N)
  python3 -c "import sys; sys.exit(0 if $t1 - $t0 < 5 else 1)" ||
    fail "$name: the daemon took $(python3 -c "print($t1 - $t0)") s to serve"
  metrics >/dev/null || fail "$name: /metrics does not answer"
  errors=$(grep -c '"level":"error"' "$WORK/exporter.log" || true)
  [ "$errors" = 1 ] || { cat "$WORK/exporter.log" >&2; fail "$name: $errors error lines, want 1"; }
  grep '"level":"error"' "$WORK/exporter.log" | grep -F "the saved counters cannot be read" |
    grep -F "\"file\":\"$STATE\"" | grep -qF "$want" ||
    { grep '"level":"error"' "$WORK/exporter.log" >&2; fail "$name: the error does not name the file and what was wrong"; }
  [ -e "$STATE.bad" ] || [ -L "$STATE.bad" ] || fail "$name: not set aside"
  kill -KILL "$pid"
  wait "$pid" 2>/dev/null || true
  rm -rf "$STATE" "$STATE.bad" "$STATE.tmp"
  pass "$name at the state path: served at once, set aside, one error naming it"
}
rm -f "$STATE"
mkfifo "$STATE"
hostile "a FIFO" "is not a regular file"
ln -s /dev/zero "$STATE"
hostile "a link to /dev/zero" "is not a regular file"
mkdir "$STATE"
hostile "a directory" "is a directory"
echo '{"version": 1, "saved": "x", "readings_mj": {}, "series": []}' >"$STATE"
hostile "\"saved\": \"x\"" "saved: expected Unix seconds"
echo '{"version": "1"}' >"$STATE"
hostile "\"version\": \"1\"" "version: expected 1"

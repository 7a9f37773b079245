#!/usr/bin/env bash
# dcgm-exporter 4.8.3's opt-in counters, DCGM_EXP_XID_ERRORS_TOTAL and DCGM_EXP_CLOCK_EVENTS_TOTAL,
# on the served page (testdata/scenarios/totals.yaml with its clock running: GPU 0 gets Xid 13
# three times and Xid 48 once in its first 3.5 s, and a clock-event reason turns on every
# second; GPU 1 none of either). Scraped every 0.2 s until the last Xid is counted: TYPE counter,
# one series per value seen with xid or clock_event only, none for GPU 1, never decreasing nor
# disappearing from one scrape to the next; the _COUNT families beside them keep their
# window_size_in_ms; promtool parses the page.
source "$(dirname "$0")/lib.sh"
cat >"$WORK/counters.csv" <<'CSV'
DCGM_FI_DEV_GPU_UTIL, gauge, GPU utilization (in %).
DCGM_EXP_XID_ERRORS_COUNT, gauge, XID errors within the window.
DCGM_EXP_XID_ERRORS_TOTAL, counter, XID errors since the exporter started.
DCGM_EXP_CLOCK_EVENTS_COUNT, gauge, Clock events within the window.
DCGM_EXP_CLOCK_EVENTS_TOTAL, counter, Clock events since the exporter started (rising edges).
CSV
port=$(free_port)
start_exporter "$port" -c 200 -f "$WORK/counters.csv" \
  --fake-gpus-scenario "$SOURCE_DIR/testdata/scenarios/totals.yaml"
done_pattern='^DCGM_EXP_XID_ERRORS_TOTAL\{gpu="0",.*xid="13"\} 3$'
for i in $(seq -w 1 150); do
  curl -fsS "http://127.0.0.1:$port/metrics" >"$WORK/page_$i.txt"
  grep -qE "$done_pattern" "$WORK/page_$i.txt" && break
  sleep 0.2
done
grep -qE "$done_pattern" "$WORK/page_$i.txt" || fail "the third Xid 13 was not counted within 30 s"
# One more scrape after a second: still there, still the same or more.
sleep 1
curl -fsS "http://127.0.0.1:$port/metrics" >"$WORK/page_z.txt"
python3 - "$WORK"/page_*.txt <<'PY' || fail "the _TOTAL series do not behave as counters"
import re, sys
series_re = re.compile(r'^(DCGM_EXP_\w+)\{(.*)\} (\S+)$')
totals = ("DCGM_EXP_XID_ERRORS_TOTAL", "DCGM_EXP_CLOCK_EVENTS_TOTAL")
previous = {}
for path in sys.argv[1:]:
    text = open(path).read()
    current = {}
    for line in text.splitlines():
        m = series_re.match(line)
        if not m or m.group(1) not in totals:
            continue
        labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2)))
        assert "window_size_in_ms" not in labels, line
        assert labels["gpu"] == "0", f"GPU 1 had no event: {line}"
        key = (m.group(1), labels.get("xid") or labels.get("clock_event"))
        assert key[1], f"no xid or clock_event label: {line}"
        current[key] = float(m.group(3))
    for key, value in previous.items():
        assert key in current, f"{path}: {key} disappeared"
        assert current[key] >= value, f"{path}: {key} went down from {value} to {current[key]}"
    for name in totals:
        if any(k[0] == name for k in current):
            assert f"# TYPE {name} counter\n" in text, f"{path}: {name} is not TYPE counter"
    previous = current
last = previous
assert last[("DCGM_EXP_XID_ERRORS_TOTAL", "13")] == 3, last
assert last[("DCGM_EXP_XID_ERRORS_TOTAL", "48")] == 1, last
# Power cap was on at the first read (not counted); idle turned on at 1 s and 3 s, power cap at 2 s.
assert last.get(("DCGM_EXP_CLOCK_EVENTS_TOTAL", "gpu_idle"), 0) >= 2, last
assert last.get(("DCGM_EXP_CLOCK_EVENTS_TOTAL", "power_cap"), 0) >= 1, last
assert {k[1] for k in last if k[0] == "DCGM_EXP_CLOCK_EVENTS_TOTAL"} <= {"gpu_idle", "power_cap"}, last
PY
page="$WORK/page_z.txt"
grep -qE '^DCGM_EXP_XID_ERRORS_COUNT\{gpu="1",.*window_size_in_ms="[0-9]+"\} 0$' "$page" ||
  fail "DCGM_EXP_XID_ERRORS_COUNT lost its shape: $(grep XID_ERRORS_COUNT "$page")"
grep -qE '^DCGM_EXP_CLOCK_EVENTS_COUNT\{gpu="1",.*clock_event="sw_thermal",window_size_in_ms="[0-9]+"\} [0-9]+$' "$page" ||
  fail "DCGM_EXP_CLOCK_EVENTS_COUNT lost its shape: $(grep CLOCK_EVENTS_COUNT "$page")"
promtool_parses totals "$page"
pass "totals: $(grep -c '^DCGM_EXP_[A-Z_]*_TOTAL{' "$page") counter series, monotonic over $(ls "$WORK"/page_*.txt | wc -l) scrapes"

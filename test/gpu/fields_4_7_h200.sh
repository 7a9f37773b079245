#!/usr/bin/env bash
# Issue 24 on the real driver: the DCGM 4.7 base-unit fields against their older twins, the
# 4.8.4 opt-in fields (fabric health, power limits) and the _TOTAL counters, read by one --once
# collection; then a watch group's cadence (etc-style YAML config: the energy field every 5 s at
# 1 s collections) seen from outside, by scraping /metrics every 250 ms.
# Run from the repo root after `make bundle` (BUNDLE=bundle), on the GPU host through the device
# tool: `bash test/gpu/fields_4_7_h200.sh`. Writes its raw output under $OUT (or a temp folder)
# and exits non-zero on the first failed check. Nothing here changes GPU settings.
set -uo pipefail
B="${BUNDLE:-bundle}"
O="${OUT:-$(mktemp -d)}"
mkdir -p "$O"
fail() { echo "FAIL: $*"; exit 1; }

"$B/nvml-exporter" --once -f testdata/gpu/fields_4_7.csv >"$O/once.txt" 2>"$O/once.log" ||
  fail "--once exited $? ($(tail -n 5 "$O/once.log"))"
python3 - "$O/once.txt" <<'PY' || exit 1
import re, sys
vals = {}
for line in open(sys.argv[1]):
    m = re.match(r'^(DCGM_\w+)\{([^}]*)\} (\S+)$', line.strip())
    if m and 'gpu="0"' in m.group(2) and m.group(1) not in vals:
        vals[m.group(1)] = float(m.group(3))
for k in sorted(vals):
    print(f"{k} {vals[k]:.6g}")
# (old name, new name, factor, relative tolerance): same NVML call, another unit.
pairs = [("DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_SM_CLOCK_HERTZ", 1e6, 0.0),
         ("DCGM_FI_DEV_MEM_CLOCK", "DCGM_FI_DEV_MEMORY_CLOCK_HERTZ", 1e6, 0.0),
         ("DCGM_FI_DEV_FB_TOTAL", "DCGM_FI_DEV_FB_CAPACITY_BYTES", 1048576, 0.0),
         ("DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_USED_BYTES", 1048576, 0.01),
         ("DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_FB_FREE_BYTES", 1048576, 0.01),
         ("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "DCGM_FI_DEV_GPU_ENERGY_JOULES_TOTAL", 1e-3, 0.001),
         ("DCGM_FI_DEV_POWER_VIOLATION", "DCGM_FI_DEV_GPU_POWER_THROTTLE_SECONDS_TOTAL", 1e-9, 0.001)]
bad = 0
for old, new, k, tol in pairs:
    if old not in vals or new not in vals:
        print(f"MISSING {old if old not in vals else new}"); bad += 1; continue
    want = vals[old] * k
    got = vals[new]
    ok = abs(got - want) <= tol * max(abs(want), 1e-12) + (1 if k >= 1 else 1e-9)
    print(f"{'ok  ' if ok else 'BAD '} {new} = {got:.9g}; {old} x {k:g} = {want:.9g}")
    bad += 0 if ok else 1
for f in ["DCGM_FI_DEV_GPU_UTIL_RATIO", "DCGM_FI_DEV_FABRIC_HEALTH_MASK",
          "DCGM_FI_DEV_FABRIC_HEALTH_SUMMARY", "DCGM_FI_DEV_POWER_MGMT_LIMIT",
          "DCGM_FI_DEV_ENFORCED_POWER_LIMIT"]:
    print(f"{'ok  ' if f in vals else 'ABSENT'} {f} {vals.get(f, '')}")
if "DCGM_FI_DEV_GPU_UTIL_RATIO" in vals and not 0 <= vals["DCGM_FI_DEV_GPU_UTIL_RATIO"] <= 1:
    print("BAD DCGM_FI_DEV_GPU_UTIL_RATIO outside 0..1"); bad += 1
sys.exit(1 if bad else 0)
PY
grep -E '^# TYPE DCGM_EXP_(XID_ERRORS|CLOCK_EVENTS)_TOTAL counter' "$O/once.txt" ||
  echo "note: no _TOTAL family on the page (no Xid or clock event since start: no series yet)"

# The cadence of a watch group, seen on the page: energy every 5 s, power every collection.
cat >"$O/cadence.yaml" <<'YAML'
version: 2
metrics:
  file: testdata/gpu/fields_4_7.csv
collections:
  - name: scrape
    every: 1s
    metrics:
      include: ["*"]
  - name: energy
    every: 5s
    metrics:
      include: ["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "DCGM_FI_DEV_GPU_ENERGY_JOULES_TOTAL"]
YAML
"$B/nvml-exporter" --config-file "$O/cadence.yaml" -a 127.0.0.1:9413 2>"$O/cadence.log" &
pid=$!
trap 'kill $pid 2>/dev/null' EXIT
for _ in $(seq 1 100); do curl -fsS -o /dev/null http://127.0.0.1:9413/ready 2>/dev/null && break; sleep 0.1; done
python3 - "$O/cadence.tsv" <<'PY' || exit 1
import re, sys, time, urllib.request
out = open(sys.argv[1], "w")
t0 = time.time()
changes = {"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION": [], "DCGM_FI_DEV_POWER_USAGE": []}
last = {}
while time.time() - t0 < 21:
    body = urllib.request.urlopen("http://127.0.0.1:9413/metrics", timeout=2).read().decode()
    t = time.time() - t0
    for name in changes:
        m = re.search(r'^' + name + r'\{[^}]*gpu="0"[^}]*\} (\S+)$', body, re.M)
        if not m:
            continue
        v = m.group(1)
        out.write(f"{t:.2f}\t{name}\t{v}\n")
        if name in last and last[name] != v:
            changes[name].append(t)
        last[name] = v
    time.sleep(0.25)
e = changes["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"]
p = changes["DCGM_FI_DEV_POWER_USAGE"]
gaps = [b - a for a, b in zip(e, e[1:])]
print(f"energy changed {len(e)} times in 21 s, gaps {[round(g, 2) for g in gaps]}; "
      f"power changed {len(p)} times")
ok = 3 <= len(e) <= 5 and all(g > 4.0 for g in gaps)
print("ok   energy every ~5 s" if ok else "BAD  energy cadence")
sys.exit(0 if ok else 1)
PY
grep -c "level=warn" "$O/cadence.log" | sed 's/^/warnings in the cadence run: /'
echo "all checks passed; raw output in $O"

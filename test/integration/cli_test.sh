#!/usr/bin/env bash
# The daemon's command line: exit codes and the one-line errors an operator sees.
source "$(dirname "$0")/lib.sh"

# --once on the simulated GPUs prints a whole exposition and exits 0.
"$EXPORTER" --fake-gpus --fake-gpus-scenario "$SOURCE_DIR/testdata/scenarios/pulse_fast.yaml" \
  -f "$SOURCE_DIR/etc/default-counters.csv" --once >"$WORK/once.txt" 2>"$WORK/once.log" \
  || { cat "$WORK/once.log"; fail "--once exited non-zero"; }
grep -q '^# TYPE DCGM_FI_DEV_GPU_UTIL gauge$' "$WORK/once.txt" || fail "--once: no GPU_UTIL family"
[ "$(grep -c '^DCGM_FI_DEV_GPU_UTIL{' "$WORK/once.txt")" = 2 ] || fail "--once: expected 2 GPU_UTIL series"
grep -q 'UUID="GPU-11111111-2222-3333-4444-000000000001"' "$WORK/once.txt" || fail "--once: UUID label"
grep -q '^DCGM_FI_DEV_FAN_SPEED' "$WORK/once.txt" && fail "--once: NOT_SUPPORTED field must be omitted"
pass "--once prints the exposition"

# Unknown field under --collectors-unknown-fields=fatal (dcgm-exporter's behaviour): exit 2,
# file:line and a suggestion. The default skips it (collectors_unknown_test.sh).
printf 'DCGM_FI_DEV_SM_CLOCK, gauge, SM clock\nDCGM_FI_DEV_GPU_UTL, gauge, util\n' >"$WORK/bad.csv"
set +e
"$EXPORTER" --fake-gpus -f "$WORK/bad.csv" --collectors-unknown-fields=fatal --once >/dev/null \
  2>"$WORK/bad.err"; rc=$?
set -e
[ "$rc" = 2 ] || fail "unknown field: exit $rc, want 2"
grep -q "bad.csv:2: unknown field \"DCGM_FI_DEV_GPU_UTL\" (did you mean DCGM_FI_DEV_GPU_UTIL?)" "$WORK/bad.err" \
  || { cat "$WORK/bad.err"; fail "unknown field message"; }
[ "$(grep -c . "$WORK/bad.err")" = 1 ] || { cat "$WORK/bad.err"; fail "unknown field: printed more than once"; }
pass "unknown field -> exit 2 with file:line, said once"

# DCGM 4.7 base-unit names (dcgm-exporter 4.9.0's CSVs) are read, in their units, next to the
# older names in theirs; the 4.8.4 opt-in fabric and power-limit fields too
# (docs/upstream/dcgm-fields-4.7.md).
cat >"$WORK/base.csv" <<'CSV'
DCGM_FI_DEV_SM_CLOCK, gauge, MHz
DCGM_FI_DEV_SM_CLOCK_HERTZ, gauge, Hz
DCGM_FI_DEV_FB_TOTAL, gauge, MiB
DCGM_FI_DEV_FB_CAPACITY_BYTES, gauge, bytes
DCGM_FI_DEV_GPU_UTIL, gauge, percent
DCGM_FI_DEV_GPU_UTIL_RATIO, gauge, ratio
DCGM_FI_DEV_GPU_ENERGY_JOULES_TOTAL, counter, J
DCGM_FI_DEV_FABRIC_HEALTH_MASK, gauge, mask
DCGM_FI_DEV_FABRIC_HEALTH_SUMMARY, gauge, summary
DCGM_FI_DEV_POWER_MGMT_LIMIT, gauge, W
DCGM_FI_DEV_ENFORCED_POWER_LIMIT, gauge, W
CSV
"$EXPORTER" --fake-gpus --fake-gpus-scenario "$SOURCE_DIR/testdata/scenarios/pulse_fast.yaml" \
  -f "$WORK/base.csv" --once >"$WORK/base.txt" 2>"$WORK/base.log" \
  || { cat "$WORK/base.log"; fail "base-unit names: --once exited non-zero"; }
grep -q 'metric not enabled' "$WORK/base.log" && { cat "$WORK/base.log"; fail "base-unit names: skipped"; }
first() { grep "^$1{" "$WORK/base.txt" | head -1 | awk '{print $NF}'; }
for f in SM_CLOCK_HERTZ FB_CAPACITY_BYTES GPU_UTIL_RATIO GPU_ENERGY_JOULES_TOTAL FABRIC_HEALTH_MASK \
         FABRIC_HEALTH_SUMMARY POWER_MGMT_LIMIT ENFORCED_POWER_LIMIT; do
  [ -n "$(first "DCGM_FI_DEV_$f")" ] || { cat "$WORK/base.txt"; fail "base-unit names: no $f series"; }
done
awk -v mhz="$(first DCGM_FI_DEV_SM_CLOCK)" -v hz="$(first DCGM_FI_DEV_SM_CLOCK_HERTZ)" \
  'BEGIN { exit !(mhz > 0 && hz == mhz * 1000000) }' || fail "SM_CLOCK_HERTZ is not SM_CLOCK x 1e6"
awk -v mib="$(first DCGM_FI_DEV_FB_TOTAL)" -v b="$(first DCGM_FI_DEV_FB_CAPACITY_BYTES)" \
  'BEGIN { exit !(mib > 0 && b >= mib * 1048576 && b < (mib + 1) * 1048576) }' \
  || fail "FB_CAPACITY_BYTES is not FB_TOTAL in bytes"
awk -v pct="$(first DCGM_FI_DEV_GPU_UTIL)" -v r="$(first DCGM_FI_DEV_GPU_UTIL_RATIO)" \
  'BEGIN { d = r * 100 - pct; exit !(r >= 0 && r <= 1 && d < 1e-6 && d > -1e-6) }' \
  || fail "GPU_UTIL_RATIO is not GPU_UTIL / 100"
[ "$(first DCGM_FI_DEV_FABRIC_HEALTH_SUMMARY)" = 1 ] || fail "FABRIC_HEALTH_SUMMARY: want 1 (healthy)"
pass "DCGM 4.7 base-unit and 4.8.4 opt-in names are read in their units"

# DCGM 4.8's PROF_*_BYTES_PER_SECOND names (dcgm-exporter 4.10.0) have no id in any source we
# could read; they are served as their same-unit twins, by name, even under
# --collectors-unknown-fields=fatal (they are known names). collectors_unknown_test.sh compares
# the values on GPM GPUs.
printf 'DCGM_FI_PROF_PCIE_TX_BYTES_PER_SECOND, gauge, tx\n' >"$WORK/prof48.csv"
"$EXPORTER" --fake-gpus -f "$WORK/prof48.csv" --collectors-unknown-fields=fatal --once \
  >/dev/null 2>"$WORK/prof48.err" || { cat "$WORK/prof48.err"; fail "PROF_PCIE_TX_BYTES_PER_SECOND: exit"; }
grep -q 'unknown field' "$WORK/prof48.err" && { cat "$WORK/prof48.err"; fail "PROF_PCIE_TX_BYTES_PER_SECOND: unknown"; }
pass "DCGM 4.8 names of dcgm-exporter 4.10.0 load"

# A NUL byte: exit 2, file:line:character and the byte escaped, not a message cut at the NUL
# (hardening issue, defect 6).
printf 'DCGM_FI_DEV_SM_CLOCK, gauge, SM clock\nDCGM_FI_DEV\000_GPU_UTIL, gauge, util\n' >"$WORK/nul.csv"
set +e
"$EXPORTER" --fake-gpus -f "$WORK/nul.csv" --once >/dev/null 2>"$WORK/nul.err"; rc=$?
set -e
[ "$rc" = 2 ] || fail "NUL byte: exit $rc, want 2"
grep -qF 'nul.csv:2: NUL byte (\x00) at character 12; a collectors file is text' "$WORK/nul.err" \
  || { cat -A "$WORK/nul.err"; fail "NUL byte: message"; }
[ "$(grep -c . "$WORK/nul.err")" = 1 ] || { cat "$WORK/nul.err"; fail "NUL byte: want one line"; }
pass "NUL byte in the collectors file -> exit 2, escaped, one line"

# An empty or comment-only collectors file starts, as in dcgm-exporter, with one warning naming
# the file (hardening issue, defect 6).
: >"$WORK/empty.csv"
printf '# only a comment\n\n' >"$WORK/comments.csv"
for f in empty comments; do
  "$EXPORTER" --fake-gpus -f "$WORK/$f.csv" --once >"$WORK/$f.out" 2>"$WORK/$f.err" \
    || { cat "$WORK/$f.err"; fail "$f collectors file must start"; }
  [ "$(grep -c "$f.csv: no collector rows" "$WORK/$f.err")" = 1 ] \
    || { cat "$WORK/$f.err"; fail "$f collectors file: want one warning naming the file"; }
  grep -q '^DCGM_FI_' "$WORK/$f.out" && fail "$f collectors file: no DCGM series expected"
done
pass "empty or comment-only collectors file -> starts with one warning naming it"

# An invalid -a fails as a bad flag (exit 2) before NVML is touched: with a library that does not
# exist, reaching NVML would exit 1 naming it (hardening issue, defect 6).
for addr in nonsense :99999 '[::1' '::1:9400'; do
  set +e
  "$EXPORTER" --nvml-library /nonexistent/libnvidia-ml.so.1 -a "$addr" \
    -f "$SOURCE_DIR/etc/default-counters.csv" >/dev/null 2>"$WORK/addr.err"; rc=$?
  set -e
  [ "$rc" = 2 ] || { cat "$WORK/addr.err"; fail "-a $addr: exit $rc, want 2"; }
  grep -qF "nvml-exporter: -a/--address: invalid listen address \"$addr\"" "$WORK/addr.err" \
    || { cat "$WORK/addr.err"; fail "-a $addr: message"; }
  grep -q 'libnvidia-ml' "$WORK/addr.err" && fail "-a $addr: NVML was loaded before the check"
  [ "$(grep -c . "$WORK/addr.err")" = 1 ] || { cat "$WORK/addr.err"; fail "-a $addr: want one line"; }
done
pass "invalid -a -> exit 2 before NVML"

# No NVML: exit 1 and one line naming the library.
set +e
"$EXPORTER" --nvml-library /nonexistent/libnvidia-ml.so.1 -f "$SOURCE_DIR/etc/default-counters.csv" \
  --once >/dev/null 2>"$WORK/nonvml.err"; rc=$?
set -e
[ "$rc" = 1 ] || fail "missing NVML: exit $rc, want 1"
grep -q '/nonexistent/libnvidia-ml.so.1' "$WORK/nonvml.err" || fail "missing NVML: message must name the library"
[ "$(grep -c . "$WORK/nonvml.err")" = 1 ] || { cat "$WORK/nonvml.err"; fail "missing NVML: want exactly one line"; }
pass "missing NVML -> exit 1, one line"

# A dcgm-exporter flag without effect here starts with one warning naming it; a web config file
# that cannot be read and a flag of no dcgm-exporter release are refused (exit 2).
"$EXPORTER" --fake-gpus -s g -f "$SOURCE_DIR/etc/default-counters.csv" --once >/dev/null 2>"$WORK/s.err" \
  || { cat "$WORK/s.err"; fail "-s g must start"; }
[ "$(grep -c 'ignored: ' "$WORK/s.err")" = 1 ] || { cat "$WORK/s.err"; fail "-s: want one warning"; }
grep -q 'option=switch-devices' "$WORK/s.err" || fail "-s: the warning must name the option"
for bad in "--web-config-file /nonexistent/w.yml" "--max-scrapes 4"; do
  set +e
  # shellcheck disable=SC2086
  timeout 20 "$EXPORTER" --fake-gpus -f "$SOURCE_DIR/etc/default-counters.csv" -a 127.0.0.1:0 $bad >/dev/null 2>"$WORK/k.err"; rc=$?
  set -e
  [ "$rc" = 2 ] || fail "$bad: exit $rc, want 2"
  case "$bad" in --web-config-file*)
    grep -q '/nonexistent/w.yml' "$WORK/k.err" || { cat "$WORK/k.err"; fail "web config: name the file"; } ;;
  esac
done
grep -q 'unknown flag --max-scrapes' "$WORK/k.err" || fail "unknown flag: message"
# A web config that does not parse: exit 2 before NVML is touched, naming file, line and what
# was expected.
printf 'tls_server_config:\n  cert_file: a.crt\n  key_file: a.key\n  client_auth_type: Maybe\n' >"$WORK/web.yml"
set +e
timeout 20 "$EXPORTER" --nvml-library /nonexistent/libnvidia-ml.so.1 -f "$SOURCE_DIR/etc/default-counters.csv" \
  -a 127.0.0.1:0 --web-config-file "$WORK/web.yml" >/dev/null 2>"$WORK/w.err"; rc=$?
set -e
[ "$rc" = 2 ] || { cat "$WORK/w.err"; fail "bad web config: exit $rc, want 2"; }
grep -q "web.yml:4: client_auth_type: unknown \"Maybe\" (expected NoClientCert" "$WORK/w.err" \
  || { cat "$WORK/w.err"; fail "bad web config: want file:line and what was expected"; }
pass "dcgm-only flag -> one warning; unreadable web config and unknown flags -> exit 2"

# --web-systemd-socket: serves on the listening socket passed as fd 3 with LISTEN_PID/LISTEN_FDS
# (as systemd's socket activation does); without one it exits 1 naming what is missing.
python3 - "$EXPORTER" "$SOURCE_DIR/etc/default-counters.csv" <<'PY' || fail "--web-systemd-socket"
import socket, subprocess, sys, time, urllib.request
exporter, csv = sys.argv[1:3]
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(8)
port = s.getsockname()[1]
cmd = 'LISTEN_PID=$$ LISTEN_FDS=1 exec "$0" --fake-gpus -f "$1" --web-systemd-socket 3<&0'
p = subprocess.Popen(["sh", "-c", cmd, exporter, csv], stdin=s.fileno(), stderr=subprocess.DEVNULL)
s.close()  # only the daemon holds it now
try:
    # The kernel accepts on the passed socket before the daemon serves: retry (503 before the
    # first collection, a read timeout before it accepts) until a deadline generous enough for
    # a loaded 2-core CI machine.
    deadline = time.monotonic() + 60
    while True:
        try:
            body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read()
            assert b"DCGM_FI_DEV_GPU_UTIL{" in body, body[:200]
            break
        except OSError as e:
            if time.monotonic() > deadline:
                sys.exit(f"no /metrics on the passed socket: {e}")
            time.sleep(0.1)
finally:
    p.terminate()
    p.wait()
PY
set +e
"$EXPORTER" --fake-gpus -f "$SOURCE_DIR/etc/default-counters.csv" --web-systemd-socket \
  >/dev/null 2>"$WORK/sd.err"; rc=$?
set -e
[ "$rc" = 1 ] || fail "--web-systemd-socket without a socket: exit $rc, want 1"
grep -q 'LISTEN_PID and LISTEN_FDS are not set' "$WORK/sd.err" || fail "--web-systemd-socket: message"
pass "--web-systemd-socket serves on the passed socket"

# Device selector: only GPU 1; a GPU that does not exist is an error.
"$EXPORTER" --fake-gpus --fake-gpus-scenario "$SOURCE_DIR/testdata/scenarios/pulse_fast.yaml" \
  -f "$SOURCE_DIR/etc/default-counters.csv" -d g:1 --once >"$WORK/g1.txt" 2>/dev/null
[ "$(grep -c '^DCGM_FI_DEV_GPU_UTIL{gpu="1"' "$WORK/g1.txt")" = 1 ] || fail "-d g:1: want GPU 1"
grep -q '^DCGM_FI_DEV_GPU_UTIL{gpu="0"' "$WORK/g1.txt" && fail "-d g:1: GPU 0 must be absent"
set +e
"$EXPORTER" --fake-gpus -d g:7 -f "$SOURCE_DIR/etc/default-counters.csv" --once >/dev/null 2>"$WORK/g7.err"; rc=$?
set -e
[ "$rc" != 0 ] || fail "-d g:7 must fail"
pass "device selector"

# -n drops the host label (hostname, dcgm-exporter 4.8.3+'s spelling); NODE_NAME sets it. The
# pages go to files first: `--once | grep -q` let grep quit at its first match, the daemon then
# died of SIGPIPE and pipefail failed the test.
NODE_NAME=node-a "$EXPORTER" --fake-gpus -f "$SOURCE_DIR/etc/default-counters.csv" --once \
  >"$WORK/host.txt" 2>/dev/null
grep -q ',hostname="node-a"' "$WORK/host.txt" || fail "NODE_NAME must set hostname"
grep -q 'Hostname=' "$WORK/host.txt" && fail "4.8.2's Hostname by default"
NODE_NAME=node-a "$EXPORTER" --fake-gpus -n -f "$SOURCE_DIR/etc/default-counters.csv" --once \
  >"$WORK/nohost.txt" 2>/dev/null
grep -qi 'hostname=' "$WORK/nohost.txt" && fail "-n must drop the host label"
pass "hostname flags"

# --version
"$EXPORTER" --version >"$WORK/version.txt"
grep -q . "$WORK/version.txt" || fail "--version prints nothing"
pass "--version"
echo "cli_test: all passed"

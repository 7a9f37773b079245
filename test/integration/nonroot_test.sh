#!/usr/bin/env bash
# The daemon needs no root (docs/security.md): on simulated GPUs, as uid/gid 65534 (nobody) with
# no supplementary groups, no capabilities (effective, permitted, inheritable, ambient, bounding)
# and no_new_privs, it serves /metrics; it holds no file open for writing and listens on the one
# address it was given, nothing else. Run by a non-root user, the test checks the same as that
# user (setpriv cannot change the uid then).
source "$(dirname "$0")/lib.sh"

# Under the sanitizer builds the daemon's reports go to files (ASAN_OPTIONS/UBSAN_OPTIONS
# log_path) in a folder uid 65534 cannot write: point them at a folder of ours it can, and copy
# what it wrote back into the real one when it has stopped (sanitizer_logs_check reads it there).
san_dir="$WORK/sanitizer"
mkdir -p "$san_dir"
chmod 755 "$WORK"
chmod 1777 "$san_dir"
declare -A san_real=()
for var in ASAN_OPTIONS UBSAN_OPTIONS; do
  value="${!var:-}"
  [[ "$value" == *log_path=* ]] || continue
  prefix="$(sed 's/.*log_path=\([^:]*\).*/\1/' <<<"$value")"
  san_real[$var]="$(dirname "$prefix")"
  export "$var=${value/log_path=$prefix/log_path=$san_dir/$(basename "$prefix")}"
done
copy_sanitizer_reports() {
  [ "${#san_real[@]}" -eq 0 ] && return 0
  for var in "${!san_real[@]}"; do cp -f "$san_dir"/* "${san_real[$var]}"/ 2>/dev/null || true; done
}

port="$(free_port)"
# Started with every fd above 2 closed (ctest hands its log file down), so that the fds checked
# below are the daemon's own.
closefds=(python3 -c 'import os, sys; os.closerange(3, 65536); os.execvp(sys.argv[1], sys.argv[1:])')
cmd=("$EXPORTER" --fake-gpus -a "127.0.0.1:$port" -c 500 -f "$SOURCE_DIR/etc/default-counters.csv")
if [ "$(id -u)" = 0 ]; then
  want_uid=65534
  "${closefds[@]}" setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all \
    --no-new-privs "${cmd[@]}" >"$WORK/out" 2>"$WORK/log" &
else
  want_uid="$(id -u)"
  "${closefds[@]}" "${cmd[@]}" >"$WORK/out" 2>"$WORK/log" &
fi
pid=$!
PIDS+=("$pid")
wait_http "http://127.0.0.1:$port/ready" 30 || { cat "$WORK/log" >&2; fail "not ready as uid $want_uid"; }

curl -fsS "http://127.0.0.1:$port/metrics" >"$WORK/metrics" || fail "/metrics"
[ "$(grep -c '^DCGM_FI_DEV_GPU_UTIL{' "$WORK/metrics")" -ge 1 ] \
  || { head -20 "$WORK/metrics"; fail "no GPU_UTIL series as uid $want_uid"; }
pass "serves /metrics as uid $want_uid"

status="/proc/$pid/status"
read -r _ ruid euid suid fsuid < <(grep '^Uid:' "$status")
for u in "$ruid" "$euid" "$suid" "$fsuid"; do
  [ "$u" = "$want_uid" ] || fail "uid $u in $(grep '^Uid:' "$status"), want $want_uid"
done
if [ "$want_uid" = 65534 ]; then
  for cap in CapEff CapPrm CapInh CapAmb CapBnd; do
    [ "$(awk -v k="$cap:" '$1 == k {print $2}' "$status")" = 0000000000000000 ] \
      || fail "$cap: $(grep "^$cap:" "$status"), want none"
  done
  [ "$(awk '$1 == "NoNewPrivs:" {print $2}' "$status")" = 1 ] || fail "no_new_privs not set"
  [ "$(awk '$1 == "Groups:" {print NF}' "$status")" = 1 ] || fail "$(grep '^Groups:' "$status")"
  pass "no capabilities, no groups, no_new_privs"
fi

# No file open for writing: besides stdout and stderr (the caller's, here files of the test),
# every fd with O_WRONLY or O_RDWR is a socket, a pipe, an anonymous inode (eventfd, epoll) or
# /dev/null.
for fd in /proc/"$pid"/fd/*; do
  n="$(basename "$fd")"
  [ "$n" = 1 ] || [ "$n" = 2 ] && continue
  target="$(readlink "$fd" 2>/dev/null)" || continue
  flags="$(awk '$1 == "flags:" {print $2}' "/proc/$pid/fdinfo/$n" 2>/dev/null)" || continue
  [ -n "$flags" ] || continue
  if (( (8#$flags & 3) != 0 )); then
    case "$target" in
      socket:* | pipe:* | anon_inode:* | /dev/null) ;;
      *) fail "fd $n open for writing: $target (flags $flags)" ;;
    esac
  fi
done
pass "no file open for writing"

# Listening sockets of the process: exactly the one -a named.
inodes="$(for fd in /proc/"$pid"/fd/*; do readlink "$fd" 2>/dev/null; done \
  | sed -n 's/^socket:\[\([0-9]*\)\]$/\1/p' | sort -u)"
listening=()
for table in /proc/net/tcp /proc/net/tcp6; do
  # st 0A = LISTEN; local address and inode columns.
  while read -r _ local _ st _ _ _ _ _ inode _; do
    [ "$st" = 0A ] || continue
    grep -qx "$inode" <<<"$inodes" && listening+=("$local")
  done < <(tail -n +2 "$table")
done
[ "${#listening[@]}" = 1 ] || fail "listens on ${#listening[@]} sockets: ${listening[*]}"
want_local="$(printf '0100007F:%04X' "$port")"
[ "${listening[0]}" = "$want_local" ] || fail "listens on ${listening[0]}, want $want_local"
pass "listens on 127.0.0.1:$port only"

# Stop it (SIGTERM), so that exit-time checks (LeakSanitizer) run, and keep their reports.
kill "$pid"
wait "$pid" || true
copy_sanitizer_reports
echo "nonroot_test: all passed"

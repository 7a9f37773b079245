#!/usr/bin/env bash
# `make run`: starts the daemon on :9400, collecting every second, with the shipped
# default-counters.csv. Uses the real driver when a GPU is present, else the simulated GPUs.
# Its own notes go to stderr: stdout is the daemon's (e.g. --emf-output stdout).
set -euo pipefail
build="$1"; shift
bin="$build/src/app/nvml-exporter"
args=(-f etc/default-counters.csv -c 1000)
if [ -e /dev/nvidia0 ] && { ldconfig -p 2>/dev/null | grep -q 'libnvidia-ml.so.1'; }; then
  echo "make run: NVIDIA GPU found: using the driver's libnvidia-ml.so.1" >&2
else
  echo "make run: no NVIDIA GPU here: using the simulated GPUs ($build/simgpu/libnvidia-ml.so.1," \
       "built-in scenario; pick another with ARGS=\"--fake-gpus-scenario FILE\")" >&2
  args+=(--fake-gpus)
fi
exec "$bin" "${args[@]}" "$@"

#!/usr/bin/env bash
# Installs every build and test dependency of nvml-exporter from Debian 12 packages.
# Idempotent: packages already present are skipped by apt-get. Must run as root.
set -euo pipefail

PACKAGES=(
  # toolchain (g++ brings libasan8/libubsan1, the runtimes of make asan)
  g++ cmake ninja-build make pkg-config git
  # checks: clang++ for make tsan / make thread-safety (-Wthread-safety) with its sanitizer
  # runtimes; clang-format and clang-tidy for make format / make tidy
  clang libclang-rt-14-dev clang-format clang-tidy
  # libraries: well-kept upstream projects from Debian, not our own code (docs/architecture.md
  # "Dependencies" says what each is for)
  libboost-dev libboost-system-dev libssl-dev zlib1g-dev libcrypt-dev
  libyaml-cpp-dev nlohmann-json3-dev libre2-dev libcli11-dev libspdlog-dev libfmt-dev
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  # tests and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev prometheus wrk curl python3 procps
  # deploy/ tests: YAML in Python, dashboard panels rendered to PNG without Grafana
  # (test/prometheus/)
  python3-yaml python3-matplotlib
  # benchmark baseline: a typical Go exporter, measured in the same run
  prometheus-node-exporter
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ "${#missing[@]}" -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing packages (${missing[*]}); run as root" >&2
  exit 1
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
# The Debian prometheus package starts a system service on install; our tests start their own.
if command -v systemctl >/dev/null 2>&1; then systemctl disable --now prometheus >/dev/null 2>&1 || true; fi
pkill -x prometheus-node-exporter 2>/dev/null || true

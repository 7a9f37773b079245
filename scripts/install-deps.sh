#!/usr/bin/env bash
# Installs every build and test dependency of nvml-exporter from Debian 12 packages.
# Idempotent: packages already present are skipped by apt-get. Must run as root.
# --build: only what building the daemon needs, without tests and benchmarks (the Dockerfile's
# build stage).
set -euo pipefail

BUILD_PACKAGES=(
  # toolchain (g++ brings libasan8/libubsan1, the runtimes of make asan)
  g++ cmake ninja-build make pkg-config git
  # libraries: well-kept upstream projects from Debian, not our own code (docs/architecture.md
  # "Dependencies" says what each is for)
  libboost-dev libboost-system-dev libssl-dev zlib1g-dev libcrypt-dev
  libyaml-cpp-dev nlohmann-json3-dev libre2-dev libcli11-dev libspdlog-dev libfmt-dev
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
)
PACKAGES=(
  "${BUILD_PACKAGES[@]}"
  # the unit tests and benchmarks, part of the default build
  libgtest-dev libgmock-dev libbenchmark-dev python3
  # checks: clang++ for make tsan / make thread-safety (-Wthread-safety) with its sanitizer
  # runtimes; clang-format and clang-tidy for make format / make tidy
  clang libclang-rt-14-dev clang-format clang-tidy
  # tests and benchmarks
  prometheus wrk curl openssl procps
  # deploy/ tests: YAML in Python, dashboard panels rendered to PNG without Grafana
  # (test/prometheus/)
  python3-yaml python3-matplotlib
  # benchmark baseline: a typical Go exporter, measured in the same run
  prometheus-node-exporter
  # the container image, built and run without a container engine (deploy/image/, image_test):
  # the root filesystem, the OCI image, its unpacking; uidmap for mmdebstrap's unshare mode
  mmdebstrap buildah umoci uidmap binutils
  # the live page's browser test (test/browser/): headless Chromium, driven by puppeteer-core
  # from npm (pinned in test/browser/package-lock.json), which downloads no browser of its own
  chromium
)
if [ "${1:-}" = "--build" ]; then PACKAGES=("${BUILD_PACKAGES[@]}"); fi
# kubectl renders the kustomize overlays. Debian 12's own (kubernetes-client, 1.20) embeds a
# kustomize too old for them; install it only where no kubectl is present at all.
if [ "${1:-}" != "--build" ] && ! command -v kubectl >/dev/null 2>&1; then
  PACKAGES+=(kubernetes-client)
fi
# The manifests' offline schema check (test/deploy/): Node.js runs the pinned kubernetes-models
# validators, npm installs them into the build folder. Debian's, where the machine has no Node.js
# of its own (a NodeSource nodejs bundles npm and conflicts with Debian's).
if [ "${1:-}" != "--build" ] && ! command -v npm >/dev/null 2>&1; then
  PACKAGES+=(nodejs npm)
fi

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

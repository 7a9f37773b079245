#!/usr/bin/env bash
# Installs the Debian 12 packages of one group of nvml-exporter's dependencies, and nothing else.
# Idempotent: a group already installed costs no apt call. Must run as root when anything is
# missing.
#
#   scripts/install-deps.sh [GROUP]
#
# Each group holds the one before it (but demo and image: each is build plus its own):
#   run    the toolchain and the daemon's libraries: what `make run` builds (nvml-exporter, simgpu)
#          and runs. No gRPC: the kubelet plugin (-k) is left out (NVMLX_BUILD_KUBELET_PLUGIN).
#   build  run, plus gRPC and protobuf for the kubelet plugin: the Dockerfile's build stage
#          (`--build` is the same group).
#   demo   build, plus Prometheus and what the fake API server needs: `make demo`.
#   image  build, plus mmdebstrap, buildah and umoci: `make image`.
#   test   everything `make test` builds and runs (tests, benchmarks, Prometheus, Chromium,
#          Node.js, the image tools, ...): also `make build`, `make bench`, `make bundle`.
#   ci     test, plus clang and its tools: the checks of .ci/run (make asan, tsan,
#          thread-safety, fuzz-smoke, layering) and make format / make tidy. The default.
set -euo pipefail

group="${1:-ci}"
[ "$group" = --build ] && group=build

RUN=(
  # toolchain
  g++ cmake ninja-build make pkg-config git
  # libraries: well-kept upstream projects from Debian, not our own code (docs/architecture.md
  # "Dependencies" says what each is for)
  libboost-dev libboost-system-dev libssl-dev zlib1g-dev libcrypt-dev
  libyaml-cpp-dev nlohmann-json3-dev libre2-dev libcli11-dev libspdlog-dev libfmt-dev
)
BUILD=(
  "${RUN[@]}"
  # the kubelet plugin, libnvmlx_kubelet.so: the pod-resources gRPC client
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
)
DEMO=(
  "${BUILD[@]}"
  # Prometheus scraping the exporter; the fake API server (Python over HTTPS, a throwaway
  # certificate); the readiness polls
  prometheus python3 openssl curl
)
IMAGE=(
  "${BUILD[@]}"
  # the container image, built without a container engine (deploy/image/): the root
  # filesystem, the OCI image, its unpacking; uidmap for mmdebstrap's unshare mode; python3
  # for sizes.txt
  mmdebstrap buildah umoci uidmap binutils python3
)
TEST=(
  "${BUILD[@]}"
  # the unit tests and benchmarks, part of the default build (g++ brings libasan8/libubsan1,
  # the runtimes of make asan)
  libgtest-dev libgmock-dev libbenchmark-dev python3
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
CI=(
  "${TEST[@]}"
  # clang++ for make tsan / make thread-safety (-Wthread-safety) and the fuzzers, with its
  # sanitizer runtimes; clang-format and clang-tidy for make format / make tidy
  clang libclang-rt-14-dev clang-format clang-tidy
)

case "$group" in
  run) PACKAGES=("${RUN[@]}") ;;
  build) PACKAGES=("${BUILD[@]}") ;;
  demo) PACKAGES=("${DEMO[@]}") ;;
  image) PACKAGES=("${IMAGE[@]}") ;;
  test) PACKAGES=("${TEST[@]}") ;;
  ci) PACKAGES=("${CI[@]}") ;;
  *)
    echo "usage: scripts/install-deps.sh [run|build|demo|image|test|ci]  (default: ci)" >&2
    exit 2
    ;;
esac
if [ "$group" = test ] || [ "$group" = ci ]; then
  # kubectl renders the kustomize overlays. Debian 12's own (kubernetes-client, 1.20) embeds a
  # kustomize too old for them; install it only where no kubectl is present at all.
  if ! command -v kubectl >/dev/null 2>&1; then PACKAGES+=(kubernetes-client); fi
  # The manifests' offline schema check (test/deploy/): Node.js runs the pinned
  # kubernetes-models validators, npm installs them into the build folder. Debian's, where the
  # machine has no Node.js of its own (a NodeSource nodejs bundles npm and conflicts with
  # Debian's).
  if ! command -v npm >/dev/null 2>&1; then PACKAGES+=(nodejs npm); fi
fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
# The same package in two lists of a group is asked for once.
mapfile -t missing < <(printf '%s\n' ${missing[@]+"${missing[@]}"} | awk 'NF && !seen[$0]++')

if [ "${#missing[@]}" -eq 0 ]; then
  echo "install-deps: group $group: all packages present"
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: group $group: missing packages (${missing[*]}); run as root" >&2
  exit 1
fi

echo "install-deps: group $group: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
# The Debian prometheus packages start their services on install; our tests and benchmarks start
# their own.
case " ${missing[*]} " in
  *" prometheus "*)
    if command -v systemctl >/dev/null 2>&1; then
      systemctl disable --now prometheus >/dev/null 2>&1 || true
    fi
    ;;
esac
case " ${missing[*]} " in
  *" prometheus-node-exporter "*) pkill -x prometheus-node-exporter 2>/dev/null || true ;;
esac

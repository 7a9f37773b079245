# nvml-exporter's container image: a drop-in for dcgm-exporter's (same entrypoint path, same
# /etc/dcgm-exporter/ collectors files), without DCGM.
#
#   docker build -t nvml-exporter:dev --build-arg VERSION=dev --build-arg REVISION=$(git rev-parse HEAD) .
#   (or podman build / buildah build)
#
# Three stages: `build` compiles the daemon on Debian 12; `rootfs` makes the root filesystem with
# deploy/image/make-rootfs.sh (mmdebstrap: only the packages of deploy/image/runtime-packages.txt
# and their dependencies, extracted; no shell, no package manager); the image is that root and
# the configuration below. CI builds the same root with the same script and applies this
# final stage's configuration with buildah (deploy/image/build-oci.sh reads it from here), then
# runs the image's entrypoint: test/image/image_test.py.
ARG DEBIAN_IMAGE=debian:12

FROM ${DEBIAN_IMAGE} AS build
WORKDIR /src
COPY scripts/install-deps.sh scripts/
RUN bash scripts/install-deps.sh build && rm -rf /var/lib/apt/lists/*
COPY . .
# The image carries the kubelet plugin (-k): ON makes a missing gRPC a configure error.
RUN cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DNVMLX_BUILD_TESTS=OFF -DNVMLX_BUILD_BENCH=OFF -DNVMLX_BUILD_KUBELET_PLUGIN=ON \
 && cmake --build /build --target nvml-exporter simgpu

FROM ${DEBIAN_IMAGE} AS rootfs
RUN apt-get update -q \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends mmdebstrap binutils \
 && rm -rf /var/lib/apt/lists/*
COPY deploy/image/ /src/deploy/image/
COPY etc/ /src/etc/
COPY --from=build /build/src/app/nvml-exporter /build/simgpu/libnvidia-ml.so.1 /in/
COPY --from=build /build/src/app/lib/libnvmlx_kubelet.so /in/lib/
RUN bash /src/deploy/image/make-rootfs.sh /rootfs /in/nvml-exporter /in/libnvidia-ml.so.1 /src

# The image. build-oci.sh applies every instruction below but COPY with `buildah config`, and
# refuses one it does not know: keep to ARG, LABEL, ENV, USER, EXPOSE, WORKDIR, ENTRYPOINT, CMD.
FROM scratch
ARG VERSION=dev
ARG REVISION=unknown
COPY --from=rootfs /rootfs/ /
LABEL org.opencontainers.image.title="nvml-exporter" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.description="GPU metrics for Prometheus straight from NVML: a drop-in replacement for dcgm-exporter without DCGM" \
      org.opencontainers.image.base.name="scratch (Debian 12 packages: deploy/image/runtime-packages.txt)"
# The NVIDIA container toolkit injects the driver's NVML (capability `utility`) and every GPU's
# device node; GPM (the profiling fields) is part of NVML, so `compute` is not needed.
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    NVIDIA_VISIBLE_DEVICES=all \
    NVIDIA_DRIVER_CAPABILITIES=utility \
    NVIDIA_DISABLE_REQUIRE=true
# Root by default: the GPU Operator's DaemonSet sets no runAsUser, and pod attribution
# (DCGM_EXPORTER_KUBERNETES=true) connects to the kubelet's pod-resources socket, which only root
# may open. NVML itself works unprivileged (the device nodes are 0666): without -k run as the
# image's user nvml-exporter (runAsUser: 65532). docs/deploy.md says which deployment needs what.
USER 0:0
EXPOSE 9400/tcp
# Where dcgm-exporter's images have their binary; the GPU Operator and the Helm chart give only
# env and args, so the entrypoint must be this program.
ENTRYPOINT ["/usr/bin/dcgm-exporter"]

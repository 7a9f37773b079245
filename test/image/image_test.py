#!/usr/bin/env python3
"""The container image, built without a container engine and run the way a node runs it.

deploy/image/build.sh makes the root filesystem (mmdebstrap, the shared package list), commits it
with buildah configured from the Dockerfile's final stage, and unpacks the OCI archive with umoci.
This test then checks the image's configuration (entrypoint where dcgm-exporter's is, the
collectors files under /etc/dcgm-exporter/, OCI labels, no shell) and starts the unpacked image's
entrypoint with its env in a chroot inside fresh mount and PID namespaces, for each deployment of
testdata/compat/deployments.yaml that starts (the GPU Operator's env, the Helm chart's args, the
seed's helm install): the kubelet's pod-resources folder and the ConfigMap's CSV are bind-mounted
where the DaemonSets mount them, the GPUs are the image's own simulated ones (--fake-gpus). Each
must serve /metrics (pod labels from the fake kubelet) and /health from a read-only root. One
more run as the image's unprivileged user (65532) without pod attribution.

Skips (exit 77) only where a chroot with mounts cannot be made at all: not root, or no mount
namespaces.

usage: image_test.py SOURCE_DIR BUILD_DIR KUBELET_FIXTURE
"""
import base64
import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pylib"))
from test_ca import make_test_ca  # noqa: E402
from net import free_port  # noqa: E402

src, build, fixture = map(os.path.abspath, sys.argv[1:4])
SKIP = 77
failures = []


def fail(msg):
    failures.append(msg)
    print(f"FAIL: {msg}", file=sys.stderr)


if os.geteuid() != 0:
    print("SKIP: image_test needs root: the image's root is entered with chroot and bind mounts, "
          "as a container runtime does")
    sys.exit(SKIP)
if subprocess.run(["unshare", "--mount", "--pid", "--fork", "true"]).returncode != 0:
    print("SKIP: image_test: this machine allows no mount/PID namespaces (unshare failed)")
    sys.exit(SKIP)

# build-oci.sh applies the Dockerfile's final stage; an instruction it cannot apply must stop it
# (else the two builds would drift silently).
scratch = tempfile.mkdtemp(prefix="image_test_df.")
dockerfile = open(os.path.join(src, "Dockerfile")).read()
open(os.path.join(scratch, "Dockerfile"), "w").write(dockerfile + "RUN true\n")
os.makedirs(os.path.join(scratch, "root/usr/bin"))
shutil.copy(os.path.join(build, "src/app/nvml-exporter"), os.path.join(scratch, "root/usr/bin"))
r = subprocess.run(["bash", os.path.join(src, "deploy/image/build-oci.sh"), scratch,
                    os.path.join(scratch, "root"), os.path.join(scratch, "out/x.tar")],
                   capture_output=True, text=True)
shutil.rmtree(scratch, ignore_errors=True)
if r.returncode == 0 or "RUN in the final stage" not in r.stderr:
    fail(f"build-oci.sh accepted a RUN in the final stage (exit {r.returncode}): {r.stderr}")
else:
    print("ok: build-oci.sh refuses a final-stage instruction it cannot apply")

t0 = time.time()
r = subprocess.run(["bash", os.path.join(src, "deploy/image/build.sh"), build, src],
                   capture_output=True, text=True)
print(r.stdout, end="")
if r.returncode != 0:
    print(r.stderr, file=sys.stderr)
    sys.exit(f"FAIL: deploy/image/build.sh exited {r.returncode}")
print(f"image built in {time.time() - t0:.1f} s")
image = os.path.join(build, "image")
sizes = dict(line.split() for line in open(os.path.join(image, "sizes.txt")))
bundle = os.path.join(image, "bundle")
root = os.path.join(bundle, "rootfs")
config = json.load(open(os.path.join(bundle, "config.json")))
process = config["process"]

# --- The image's configuration -------------------------------------------------------------
if process["args"] != ["/usr/bin/dcgm-exporter"]:
    fail(f"entrypoint {process['args']}, want dcgm-exporter's /usr/bin/dcgm-exporter")
if os.path.realpath(os.path.join(root, "usr/bin/dcgm-exporter")) != os.path.join(
        os.path.realpath(root), "usr/bin/nvml-exporter"):
    fail("/usr/bin/dcgm-exporter is not nvml-exporter")
for name in ["default-counters.csv", "dcp-metrics-included.csv", "1.x-compatibility-metrics.csv",
             "container-insights.csv",
             "4.8.2/default-counters.csv", "4.8.2/dcp-metrics-included.csv",
             "4.9/default-counters.csv", "4.10/default-counters.csv"]:
    shipped = os.path.join(root, "etc/dcgm-exporter", name)
    if not os.path.isfile(shipped) or open(shipped).read() != open(os.path.join(src, "etc", name)).read():
        fail(f"/etc/dcgm-exporter/{name} missing or not etc/{name}")
for shell in ["bin/sh", "usr/bin/sh", "bin/bash", "usr/bin/bash"]:
    if os.path.lexists(os.path.join(root, shell)):
        fail(f"/{shell} in the image: the root should hold the daemon's libraries only")
oci_config = None
blobs = os.path.join(image, "oci/blobs/sha256")
index = json.load(open(os.path.join(image, "oci/index.json")))
manifest = json.load(open(os.path.join(blobs, index["manifests"][0]["digest"].split(":")[1])))
oci_config = json.load(open(os.path.join(blobs, manifest["config"]["digest"].split(":")[1])))
labels = oci_config["config"].get("Labels", {})
for key in ["title", "description", "version", "revision", "created"]:
    if not labels.get(f"org.opencontainers.image.{key}"):
        fail(f"no OCI label org.opencontainers.image.{key}")
if oci_config["config"].get("User") != "0:0":
    fail(f"image user {oci_config['config'].get('User')!r}, want 0:0 (the operator sets none)")
if "9400/tcp" not in oci_config["config"].get("ExposedPorts", {}):
    fail("port 9400 not exposed")
# The target; a regression guard, not a benchmark (docs/benchmarks.md has the figures).
if int(sizes["compressed_bytes"]) >= 40 * 1000 * 1000:
    fail(f"compressed image {sizes['compressed_bytes']} B, target < 40 MB")
print(f"ok: configuration; compressed {int(sizes['compressed_bytes']) / 1e6:.1f} MB, "
      f"unpacked {int(sizes['unpacked_bytes']) / 1e6:.1f} MB")

# --- Running the entrypoint ----------------------------------------------------------------
spec = yaml.safe_load(open(os.path.join(src, "testdata/compat/deployments.yaml")))
image_env = dict(e.split("=", 1) for e in process["env"])
work = tempfile.mkdtemp(prefix="image_test.")
kubelet_dir = os.path.join(work, "pod-resources")
os.mkdir(kubelet_dir)
configmap = os.path.join(src, "etc/dcp-metrics-included.csv")  # the seed's ConfigMap content


def get(url, context=None, headers=None):
    try:
        request = urllib.request.Request(url, headers=headers or {})
        with urllib.request.urlopen(request, timeout=5, context=context) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


# The Helm chart's TLS and basic-auth cases mount a web config and a certificate: a test CA and
# a server certificate for 127.0.0.1, made here, at the paths the deployments' web configs name.
tls_dir = os.path.join(work, "tls")
tls_context = make_test_ca(tls_dir, "image-ca")


# Pod "trainer" holds simulated GPU 0 (the simulator's UUIDs, read from the image's own daemon).
page = subprocess.run(["chroot", root, "/usr/bin/dcgm-exporter", "--fake-gpus", "--once"],
                      env=image_env, capture_output=True, text=True)
m = re.search(r'^DCGM_FI_DEV_GPU_UTIL\{gpu="0",UUID="([^"]+)"', page.stdout, re.M)
if not m:
    sys.exit(f"FAIL: the image's daemon --fake-gpus --once: {page.stderr[-2000:]}")
script = os.path.join(work, "kubelet.json")
json.dump({"answers": [{"pods": [{"namespace": "image", "name": "trainer", "containers": [
    {"name": "main", "devices": [{"resource_name": "nvidia.com/gpu", "device_ids": [m.group(1)]}]}]}]}]},
    open(script, "w"))
kubelet = subprocess.Popen([fixture, "--socket", os.path.join(kubelet_dir, "kubelet.sock"),
                            "--script", script], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True)
assert "ready" in kubelet.stdout.readline(), "fake kubelet did not start"


def run(name, env, args, user="0:0", want_pods=False, log_must=None, web_config=None,
        case_mounts=None):
    """Starts the entrypoint in the image's root as a runtime would; checks /metrics, /health.
    web_config: the chart's web config text, mounted at DCGM_EXPORTER_WEB_CONFIG_FILE with the
    test certificate; the scrapes then use TLS or the password as it asks. case_mounts: the
    deployment's own volumes (container path: file of this repo), mounted over the image's."""
    port = free_port()
    started = time.time()
    env = dict(env)
    env["DCGM_EXPORTER_LISTEN"] = f"127.0.0.1:{port}"
    env["DCGM_EXPORTER_USE_FAKE_GPUS"] = "true"
    # The DaemonSets' volumes: the kubelet's pod-resources folder (hostPath), the ConfigMap's CSV.
    mounts = [(kubelet_dir, "/var/lib/kubelet/pod-resources")]
    if "/etc/dcgm-exporter/dcgm-metrics.csv" in json.dumps(env) + " ".join(args):
        mounts.append((configmap, "/etc/dcgm-exporter/dcgm-metrics.csv"))
    for inside, local in (case_mounts or {}).items():
        mounts.append((os.path.join(src, local), inside))
    scheme, context, headers = "http", None, {}
    if web_config is not None:
        web = os.path.join(work, f"{name}-web-config.yaml")
        open(web, "w").write(web_config)
        mounts.append((web, env["DCGM_EXPORTER_WEB_CONFIG_FILE"]))
        mounts.append((tls_dir, "/etc/dcgm-exporter/tls"))
        if "tls_server_config" in web_config:
            scheme, context = "https", tls_context
        if "basic_auth_users" in web_config:
            headers = {"Authorization": "Basic " + base64.b64encode(b"alice:password").decode()}
    base = f"{scheme}://127.0.0.1:{port}"
    # The mount points first (a runtime creates them too), then the root read-only, as the
    # DaemonSet's readOnlyRootFilesystem: the daemon must not need to write anywhere.
    for host, inside in mounts:
        target = root + inside
        if os.path.isdir(host):
            os.makedirs(target, exist_ok=True)
        elif not os.path.exists(target):
            open(target, "w").close()
    q = shlex.quote
    setup = [f"mount --bind {q(root)} {q(root)}", f"mount -o remount,bind,ro {q(root)}"]
    for host, inside in mounts:
        setup.append(f"mount --bind -o ro {q(host)} {q(root + inside)}")
    setup.append(f"mount -t proc proc {q(root + '/proc')}")
    setup.append(f"exec chroot --userspec={user} {shlex.quote(root)} "
                 + " ".join(shlex.quote(a) for a in process["args"] + args))
    log_path = os.path.join(work, f"{name}.log")
    with open(log_path, "w") as log:
        # Only the image's env and the deployment's reach the daemon (env -i semantics).
        proc = subprocess.Popen(["unshare", "--mount", "--propagation", "private", "--pid",
                                 "--fork", "--kill-child", "--", "/bin/sh", "-c",
                                 " && ".join(setup)],
                                env={**env, "PATH": image_env["PATH"] + ":/usr/sbin:/sbin"},
                                stdout=subprocess.DEVNULL, stderr=log)
    try:
        body, deadline = "", time.time() + 30
        while time.time() < deadline and proc.poll() is None:
            try:
                status, body = get(f"{base}/metrics", context, headers)
                if status == 200 and "DCGM_FI_DEV_GPU_UTIL{" in body and (
                        not want_pods or 'pod="trainer"' in body):
                    break
            except OSError:
                pass
            time.sleep(0.2)
        else:
            return fail(f"{name}: did not serve /metrics (exit {proc.poll()}): "
                        f"{open(log_path).read()[-2000:]}")
        status, health = get(f"{base}/health", context, headers)
        if headers and get(f"{base}/metrics", context)[0] != 401:
            return fail(f"{name}: /metrics without the password is not 401")
        if status != 200:
            return fail(f"{name}: /health {status}: {health}")
        if 'hostname="image-node"' not in body:
            return fail(f"{name}: no hostname=\"image-node\" on the series")
        # The daemon is unshare's only child; it must run as the user asked for.
        child = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True,
                               text=True).stdout.split()
        uid = next((l.split()[1] for l in open(f"/proc/{child[0]}/status")
                    if l.startswith("Uid:")), None) if child else None
        if uid != user.split(":")[0]:
            return fail(f"{name}: the daemon runs as uid {uid}, want {user}")
        if log_must and 'pod="trainer"' in body:
            return fail(f"{name}: pod labels although the kubelet socket should be closed to it")
        if log_must and not re.search(log_must, open(log_path).read()):
            return fail(f"{name}: the log does not match {log_must!r}: {open(log_path).read()[-1500:]}")
        print(f"ok: {name}: /metrics and /health served from the image as uid {uid}"
              + (", pod labels from the kubelet socket" if want_pods else "")
              + f" ({time.time() - started:.1f} s)")
    finally:
        # SIGTERM to the daemon, as the kubelet stops a container; unshare then exits with it.
        for pid in subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True,
                                  text=True).stdout.split():
            os.kill(int(pid), 15)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


checked = 0
try:
    for case in spec["cases"]:
        if "refused" in case:
            continue
        env = dict(image_env)
        for k, v in case["env"].items():
            env[k] = "image-node" if isinstance(v, dict) else v
        before = len(failures)
        run(case["name"], env, case["args"],
            want_pods=env.get("DCGM_EXPORTER_KUBERNETES") == "true",
            web_config=case.get("web_config"), case_mounts=case.get("mounts"))
        checked += len(failures) == before
    # Unprivileged: NVML and the HTTP server need no root; the kubelet socket does, so no -k.
    env = dict(image_env, NODE_NAME="image-node",
               DCGM_EXPORTER_COLLECTORS="/etc/dcgm-exporter/dcp-metrics-included.csv")
    run("non-root", env, [], user="65532:65532")
    # Why the image runs as root by default: with pod attribution on (every operator and chart
    # deployment), a non-root daemon cannot connect to the kubelet's root-owned socket. It still
    # serves, without pod labels, and says why.
    run("non-root-kubernetes", dict(env, DCGM_EXPORTER_KUBERNETES="true"), [],
        user="65532:65532", log_must=r"(?i)permission denied")
finally:
    kubelet.terminate()
    kubelet.wait()
    if not os.environ.get("IMAGE_TEST_KEEP"):
        shutil.rmtree(work, ignore_errors=True)

if failures:
    sys.exit(1)
assert checked >= 7, f"only {checked} deployments ran"
print(f"image_test: the image serves under all {checked} deployments and as a non-root user "
      f"({time.time() - t0:.1f} s in all)")

#!/usr/bin/env python3
"""Drop-in start-up: nvml-exporter under the exact env and args of the GPU Operator's DaemonSet,
the dcgm-exporter Helm chart and the seed's helm install (testdata/compat/deployments.yaml, which
records the upstream files and commits and the few things this harness changes).

Each case either starts, serves /metrics (with pod labels from the fake kubelet when it runs with
-k, with the metrics `page_has` names and without those `page_lacks` names, with a line matching
each `page_match` regex and none matching a `page_no_match` one) and logs exactly the expected
"ignored" warnings, one per option and no other; or exits 2 with the expected refusal.

The GPU Operator's pod metadata and HPC keys (testdata/compat/operator-keys.yaml, run after
deployments.yaml's cases) add two things: `api_server: true` runs the case against the fake API
server (test/integration/fake_apiserver.py serving testdata/apiserver/pods_compat.json), and
`host_paths` points a hostPath volume's container path at a fixture folder.

A case with volumes of its own (`mounts` in the case) runs where the container would see them:
in a user and mount namespace whose /etc is an overlay holding every mount at its container
path, so that built-in default paths (-f's) and paths inside mounted files (the YAML config's
metrics.file) resolve as in the pod; its env and args keep their container paths.

usage: compat_test.py EXPORTER KUBELET_FIXTURE SOURCE_DIR
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

exporter, fixture = sys.argv[1:3]
# Absolute: the case mounts become symlinks in an overlay (in_container_etc).
source_dir = os.path.abspath(sys.argv[3])
spec = yaml.safe_load(open(os.path.join(source_dir, "testdata/compat/deployments.yaml")))
spec["cases"] += yaml.safe_load(
    open(os.path.join(source_dir, "testdata/compat/operator-keys.yaml")))["cases"]
mounts = {k: os.path.join(source_dir, v) for k, v in spec["mounts"].items()}
# What Kubernetes itself gives every pod (service env, the automounted service account) stands
# in as the last four, for `api_server` cases only.
ADDED = {"DCGM_EXPORTER_USE_FAKE_GPUS", "DCGM_POD_RESOURCES_KUBELET_SOCKET",
         "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT",
         "NVML_EXPORTER_KUBERNETES_TOKEN_FILE", "NVML_EXPORTER_KUBERNETES_CA_FILE"}
work = tempfile.mkdtemp()
failures = []


def fail(case, msg):
    failures.append(f"{case}: {msg}")
    print(f"FAIL: {case}: {msg}", file=sys.stderr)


def mapped(value, extra=None):
    for path, local in {**mounts, **(extra or {})}.items():
        value = value.replace(path, local)
    return value


def get(url, context=None, headers=None):
    req = urllib.request.Request(url, headers=headers or {})
    with urllib.request.urlopen(req, timeout=5, context=context) as r:
        return r.status, r.read().decode()


def status_of(url, context=None, headers=None):
    try:
        return get(url, context, headers)[0]
    except urllib.error.HTTPError as e:
        return e.code
    except OSError:
        return 0


# The chart's web config cases: a test CA and a server certificate for 127.0.0.1, made here.
tls_dir = os.path.join(work, "tls")
tls_context = make_test_ca(tls_dir, "compat-ca")
mounts["/etc/dcgm-exporter/tls"] = tls_dir


def in_container_etc(name, case_mounts):
    """The command prefix that runs a case with its own volumes: a user and mount namespace in
    which /etc is an overlay whose upper layer holds a symlink at each mount's container path."""
    upper = os.path.join(work, name, "upper")
    scratch = os.path.join(work, name, "overlay-work")
    os.makedirs(os.path.join(upper, "dcgm-exporter"))
    os.makedirs(scratch)
    for inside, local in {**mounts, **case_mounts}.items():
        assert inside.startswith("/etc/dcgm-exporter/") and inside.count("/") == 3, \
            f"{name}: mount {inside}: only files and folders directly in /etc/dcgm-exporter"
        os.symlink(local, os.path.join(upper, inside[len("/etc/"):]))
    mount = shutil.which("mount")
    script = (f"{shlex.quote(mount)} -t overlay overlay -o lowerdir=/etc,"
              f"upperdir={shlex.quote(upper)},workdir={shlex.quote(scratch)} /etc && "
              'exec "$0" "$@"')
    return [shutil.which("unshare"), "--user", "--map-root-user", "--mount", "--", "/bin/sh",
            "-c", script]


def page_metric(body, metric):
    return re.search(rf"^{re.escape(metric)}[{{ ]", body, re.M) is not None


def page_effects_missing(case, body):
    """The `page_match` regexes no line matches and the `page_no_match` ones some line does."""
    return ([p for p in case.get("page_match", []) if not re.search(p, body, re.M)] +
            [f"not {p}" for p in case.get("page_no_match", []) if re.search(p, body, re.M)])


api_env = None  # the env of `api_server` cases, once the fake API server runs


def start_api_server():
    """The fake API server over HTTPS with the test CA's certificate; returns the env that makes
    the daemon find it as in a pod (service env, service account token and CA)."""
    control = os.path.join(work, "apiserver")
    os.makedirs(control)
    open(os.path.join(control, "mode"), "w").write("ok")
    # DRA cases list the GPU driver's slices: none on this node.
    json.dump({"items": []}, open(os.path.join(control, "resourceslices.json"), "w"))
    token = os.path.join(work, "sa-token")
    open(token, "w").write("compat-token\n")
    port_file = os.path.join(work, "apiserver.port")
    proc = subprocess.Popen(
        [sys.executable, os.path.join(source_dir, "test/integration/fake_apiserver.py"),
         os.path.join(source_dir, "testdata/apiserver/pods_compat.json"),
         os.path.join(tls_dir, "tls.crt"), os.path.join(tls_dir, "tls.key"), "compat-token",
         control, port_file], stderr=open(os.path.join(work, "apiserver.log"), "w"))
    for _ in range(100):
        if os.path.exists(port_file) and open(port_file).read().strip():
            break
        time.sleep(0.1)
    port = open(port_file).read().strip()
    return proc, {"KUBERNETES_SERVICE_HOST": "127.0.0.1", "KUBERNETES_SERVICE_PORT": port,
                  "NVML_EXPORTER_KUBERNETES_TOKEN_FILE": token,
                  "NVML_EXPORTER_KUBERNETES_CA_FILE": os.path.join(tls_dir, "ca.crt")}


# The simulated GPUs' UUIDs, for a pod the fake kubelet reports as holding GPU 0.
page = subprocess.run([exporter, "--fake-gpus", "-f", mounts["/etc/dcgm-exporter/default-counters.csv"],
                       "--once"], check=True, capture_output=True, text=True, env={}).stdout
uuid0 = re.search(r'^DCGM_FI_DEV_GPU_UTIL\{gpu="0",UUID="([^"]+)"', page, re.M).group(1)
sock = os.path.join(work, "kubelet.sock")
script = os.path.join(work, "kubelet.json")
json.dump({"answers": [{"pods": [{"namespace": "compat", "name": "trainer", "containers": [
    {"name": "main", "devices": [{"resource_name": "nvidia.com/gpu", "device_ids": [uuid0]}]}]}]}]},
    open(script, "w"))
kubelet = subprocess.Popen([fixture, "--socket", sock, "--script", script], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True)
assert "ready" in kubelet.stdout.readline(), "fake kubelet did not start"

checked = 0
api_proc = None
try:
    for case in spec["cases"]:
        name = case["name"]
        # With volumes of its own, the case sees every mount at its container path (no mapping).
        container = "mounts" in case
        assert not (container and "host_paths" in case), f"{name}: mounts or host_paths, not both"
        host_paths = {k: os.path.join(source_dir, v) for k, v in case.get("host_paths", {}).items()}
        keep = (lambda v: v) if container else (lambda v: mapped(v, host_paths))
        prefix = in_container_etc(name, {k: os.path.join(source_dir, v)
                                         for k, v in case["mounts"].items()}) if container else []
        env = {}
        for k, v in case["env"].items():
            assert k not in ADDED, f"{name}: {k} is what the harness adds"
            if isinstance(v, dict):
                assert v == {"fieldRef": "spec.nodeName"}, f"{name}: {k}: only NODE_NAME's fieldRef"
                v = "compat-node"
            env[k] = keep(v)
        port = free_port()
        assert env["DCGM_EXPORTER_LISTEN"] == ":9400", f"{name}: the listen address changed upstream"
        env["DCGM_EXPORTER_LISTEN"] = f"127.0.0.1:{port}"
        env["DCGM_EXPORTER_USE_FAKE_GPUS"] = "true"
        kubernetes = env.get("DCGM_EXPORTER_KUBERNETES") == "true"
        if kubernetes:
            env["DCGM_POD_RESOURCES_KUBELET_SOCKET"] = sock
        if case.get("api_server"):
            if api_proc is None:
                api_proc, api_env = start_api_server()
            env.update(api_env)
        args = [keep(a) for a in case["args"]]
        scheme, context, headers = "http", None, {}
        if "web_config" in case:
            assert not container, f"{name}: web_config with case mounts is not supported"
            web = os.path.join(work, f"{name}-web-config.yaml")
            open(web, "w").write(mapped(case["web_config"]))
            assert env["DCGM_EXPORTER_WEB_CONFIG_FILE"] == "/etc/dcgm-exporter/web-config.yaml"
            env["DCGM_EXPORTER_WEB_CONFIG_FILE"] = web
            if "tls_server_config" in case["web_config"]:
                scheme, context = "https", tls_context
            if "basic_auth_users" in case["web_config"]:
                headers = {"Authorization": "Basic " +
                           base64.b64encode(b"alice:password").decode()}
        log_path = os.path.join(work, f"{name}.log")
        with open(log_path, "w") as log:
            proc = subprocess.Popen(prefix + [exporter] + args, env=env, stdout=subprocess.DEVNULL,
                                    stderr=log)
        try:
            if "refused" in case:
                try:
                    rc = proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    fail(name, "started; want a refusal")
                    continue
                err = open(log_path).read()
                if rc != 2:
                    fail(name, f"exit {rc}, want 2: {err}")
                elif case["refused"] not in err:
                    fail(name, f"refusal must say {case['refused']!r}: {err}")
                else:
                    print(f"ok: {name}: refused (exit 2)")
                    checked += 1
                continue
            # A case that waits for the API server's pods on the page may need a second
            # collection: the operator renders -c 30000, and under ASan on a loaded machine the
            # first one ran before the pod watch had listed (the CI run of this session).
            wait_s = 45 if case.get("page_match") or case.get("page_no_match") else 20
            body, deadline = "", time.time() + wait_s
            while time.time() < deadline and proc.poll() is None:
                try:
                    status, body = get(f"{scheme}://127.0.0.1:{port}/metrics", context, headers)
                    # With -k, wait for the first kubelet refresh to label GPU 0 (and for the
                    # API server's pods, the HPC files, ... where the case expects their effect).
                    if status == 200 and "DCGM_FI_DEV_GPU_UTIL{" in body and (
                            not kubernetes or 'pod="trainer"' in body) and (
                            not page_effects_missing(case, body)):
                        break
                except OSError:
                    pass
                time.sleep(0.2)
            else:
                fail(name, f"did not serve /metrics (exit {proc.poll()}): {open(log_path).read()}")
                continue
            if 'hostname="compat-node"' not in body:
                fail(name, "no hostname=\"compat-node\" on the series")
            # What the mounted files asked for reached the page (or was kept off it).
            missing = [m for m in case.get("page_has", []) if not page_metric(body, m)]
            present = [m for m in case.get("page_lacks", []) if page_metric(body, m)]
            if missing or present:
                fail(name, f"page lacks {missing} / has {present}")
                continue
            if page_effects_missing(case, body):
                fail(name, f"page: {page_effects_missing(case, body)}:\n" +
                     "\n".join(l for l in body.splitlines() if l.startswith("DCGM_FI_DEV_GPU_UTIL")))
                continue
            if headers and status_of(f"{scheme}://127.0.0.1:{port}/metrics", context) != 401:
                fail(name, "a scrape without the password must get 401")
            if scheme == "https" and status_of(f"http://127.0.0.1:{port}/metrics") != 0:
                fail(name, "plain HTTP on the TLS port must get no HTTP answer")
            warned = []
            for line in open(log_path):
                if "level=warn" in line and " ignored: " in line:
                    m = re.search(r" option=(\S+)", line)
                    warned.append(m.group(1) if m else line.strip())
            if warned != case["warnings"]:
                fail(name, f"ignored-option warnings {warned}, want {case['warnings']}")
                continue
            print(f"ok: {name}: serves /metrics, warnings {warned}")
            checked += 1
        finally:
            if proc.poll() is None:
                proc.terminate()
                proc.wait(timeout=10)
finally:
    kubelet.terminate()
    kubelet.wait()
    if api_proc is not None:
        api_proc.terminate()
        api_proc.wait()

if failures:
    sys.exit(1)
assert checked == len(spec["cases"]) >= 10, f"{checked} of {len(spec['cases'])} cases checked"
print(f"compat_test: all {checked} deployments pass")

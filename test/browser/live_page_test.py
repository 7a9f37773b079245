#!/usr/bin/env python3
"""The live page end to end in headless Chromium (docs/live-page.md).

The exporter runs on simulated GPUs (testdata/scenarios/live_page.yaml: GPU 0 pulses, GPU 2 falls
off the bus at 6 s) with the fake kubelet (test/fixtures/kubelet_fixture) reporting three pods;
live_page_test.mjs drives the system's Chromium through playwright-core (pinned in
package-lock.json, installed under the build folder with `npm ci`, no browser download) and checks
the cards, the pulsing sparkline, the lost GPU and the pod table. Twice: plain HTTP, then with a web
config of TLS (a throw-away CA, test/pylib/test_ca.py) and basic auth; the second run also kills
the exporter and checks that the page says so.

Screenshots go to BUILD/browser-test/screenshots/; `make screenshots` copies them to
docs/live-page/ (the test never writes into the source tree).

Usage: live_page_test.py SOURCE_DIR BUILD_DIR EXPORTER KUBELET_FIXTURE
A missing chromium, node or npm fails the test (scripts/install-deps.sh installs them); only an
npm registry that cannot be reached on the very first install skips it (exit 77), as the deploy
test does. Later runs use the installed copy, and a new build folder installs from npm's cache:
neither needs the network.
"""
import base64
import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

src, build, exporter, fixture = map(os.path.abspath, sys.argv[1:5])
sys.path.insert(0, os.path.join(src, "test/pylib"))
from test_ca import make_test_ca  # noqa: E402
from net import free_port  # noqa: E402

SKIP = 77
HERE = os.path.join(src, "test/browser")
CHROMIUM = os.environ.get("NVMLX_CHROMIUM", "/usr/bin/chromium")


def die(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


for tool, path in [("chromium", CHROMIUM), ("node", shutil.which("node")), ("npm", shutil.which("npm"))]:
    if not path or not os.access(path, os.X_OK):
        die(f"{tool} not found: run scripts/install-deps.sh as root (it installs chromium, nodejs, npm)")

# --- playwright-core, pinned, under the build folder ----------------------------------------
deps = os.path.join(build, "browser-test/npm")
lock = os.path.join(HERE, "package-lock.json")
stamp = os.path.join(deps, "lock.stamp")
if not (os.path.exists(os.path.join(deps, "node_modules/playwright-core/package.json"))
        and os.path.exists(stamp) and open(stamp).read() == open(lock).read()):
    shutil.rmtree(deps, ignore_errors=True)
    os.makedirs(deps)
    for f in ["package.json", "package-lock.json", ".npmrc"]:
        shutil.copy(os.path.join(HERE, f), deps)
    # The user's npm cache, preferred to the registry: once any build folder has installed it,
    # a new one installs offline.
    r = subprocess.run(["npm", "ci", "--ignore-scripts", "--prefer-offline"],
                       cwd=deps, capture_output=True, text=True,
                       env={**os.environ, "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1"})
    if r.returncode != 0:
        if re.search(r"ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|ENETUNREACH", r.stderr):
            print("SKIP: the npm registry cannot be reached, so playwright-core cannot be installed: "
                  f"{r.stderr.strip().splitlines()[-1]}")
            sys.exit(SKIP)
        die(f"npm ci in {deps}: {r.stderr}")
    shutil.copy(lock, stamp)
# The script imports playwright-core from next to itself: run a copy inside the install.
shutil.copy(os.path.join(HERE, "live_page_test.mjs"), deps)

shots = os.path.join(build, "browser-test/screenshots")
os.makedirs(shots, exist_ok=True)
work = tempfile.mkdtemp(prefix="live-page-")
procs = []


def stop_all():
    for p in procs:
        if p.poll() is None:
            p.kill()
        p.wait()


scenario = os.path.join(src, "testdata/scenarios/live_page.yaml")
uuids = re.findall(r'uuid: "(GPU-[^"]+)"', open(scenario).read())
assert len(uuids) == 4, uuids

# The fake kubelet: one pod holding GPU 0, two sharing GPU 1 (time-slicing replicas).
sock = os.path.join(work, "kubelet.sock")
script = os.path.join(work, "kubelet.json")


def holder(ns, name, container, device):
    return {"namespace": ns, "name": name, "containers": [{"name": container, "devices": [
        {"resource_name": "nvidia.com/gpu", "device_ids": [device]}]}]}


json.dump({"answers": [{"pods": [holder("team-a", "trainer", "main", uuids[0]),
                                 holder("team-b", "z-infer", "srv", uuids[1] + "::1"),
                                 holder("team-b", "a-infer", "srv", uuids[1] + "::0")]}]},
          open(script, "w"))
kubelet = subprocess.Popen([fixture, "--socket", sock, "--script", script], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True)
procs.append(kubelet)
if "ready" not in kubelet.stdout.readline():
    stop_all()
    die("fake kubelet did not start")


def run(tag, web_config=None, ca_dir=None, kill=False):
    port = free_port()
    scheme = "https" if ca_dir else "http"
    url = f"{scheme}://127.0.0.1:{port}/"
    args = [exporter, "--fake-gpus-scenario", scenario, "-a", f"127.0.0.1:{port}", "-c", "500",
            "-f", os.path.join(src, "etc/observability-counters.csv"), "-k",
            "--pod-resources-kubelet-socket", sock, "--kubernetes-virtual-gpus"]
    if web_config:
        args += ["--web-config-file", web_config]
    log_path = os.path.join(work, f"{tag}.log")
    with open(log_path, "w") as log:
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=log,
                                env={**os.environ, "NODE_NAME": "node1"})
    procs.append(proc)
    # Ready: /ready over plain HTTP, or, under TLS and auth, the port accepts connections (the
    # browser run waits for the cards itself).
    deadline = time.time() + 20
    while time.time() < deadline:
        try:
            if ca_dir:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
            else:
                urllib.request.urlopen(url + "ready", timeout=1).read()
            break
        except OSError:
            time.sleep(0.1)
    else:
        die(f"{tag}: exporter not ready: {open(log_path).read()}")
    cfg = {"tag": tag, "url": url, "chromium": CHROMIUM, "out": shots, "uuids": uuids,
           "pods": ["team-a/trainer", "team-b/a-infer", "team-b/z-infer"], "pulsing": 0, "lost": 2, "stale": 3,
           "suffix": "" if not ca_dir else "-tls"}
    if ca_dir:
        # SPKI sha256 of the server key: Chromium then trusts exactly this certificate.
        der = subprocess.run(f"openssl x509 -in {ca_dir}/tls.crt -pubkey -noout | "
                             "openssl pkey -pubin -outform der", shell=True, check=True,
                             capture_output=True).stdout
        cfg["spki"] = base64.b64encode(hashlib.sha256(der).digest()).decode()
        cfg["user"], cfg["password"] = "alice", "password"
    if kill:
        cfg["kill_pid"] = proc.pid
    cfg_path = os.path.join(work, f"{tag}.json")
    json.dump(cfg, open(cfg_path, "w"))
    r = subprocess.run(["node", os.path.join(deps, "live_page_test.mjs"), cfg_path], cwd=deps,
                       timeout=90)
    if r.returncode != 0:
        print(open(log_path).read()[-4000:], file=sys.stderr)
        stop_all()
        die(f"{tag}: browser checks failed")
    if proc.poll() is None:
        proc.kill()
    proc.wait()


try:
    run("http")
    ca = os.path.join(work, "tls")
    make_test_ca(ca, "live-page-ca")
    web = os.path.join(work, "web-config.yml")
    open(web, "w").write(
        f"tls_server_config:\n  cert_file: {ca}/tls.crt\n  key_file: {ca}/tls.key\n"
        "basic_auth_users:\n  alice: $2y$10$rTZ9kQ5WWmRvgEFqfwy3IuqpXy.MBxqIpkOjdjAtzo3aUS1Tgv.ZO\n")
    run("tls+auth", web, ca, kill=True)
finally:
    stop_all()
    shutil.rmtree(work, ignore_errors=True)
print(f"ok: live page in Chromium, plain and TLS + basic auth; screenshots in {shots}")

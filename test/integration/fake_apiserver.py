#!/usr/bin/env python3
"""A fake Kubernetes API server for the pod attribution integration tests (pods_test.sh, dra_test.sh).

HTTPS (the certificate and key given on the command line), bearer-token auth, and just enough of
GET /api/v1/pods: a list (the fixture PodList, filtered by fieldSelector=spec.nodeName=...) and a
watch (?watch=1: chunked JSON lines, a BOOKMARK first, then events dropped into the control
directory). Behaviour is switched at run time through files in the control directory:

  mode        ok | 401 | 403 | badjson | gone   (read at every request and every watch tick)
  event.json  one watch event line; sent to the open watch, then deleted
  lists       written by the server: how many list requests it answered with 200
  configmaps/<ns>_<name>.json   served at GET /api/v1/namespaces/<ns>/configmaps/<name>
  nodes/<name>.json   a Node served at GET /api/v1/nodes/<name> (404 when absent)
  node_gets   written by the server: how many node GETs it answered with 200
  resourceslices.json  a ResourceSliceList served at GET /apis/resource.k8s.io/<v>/resourceslices
                       (fieldSelector spec.driver / spec.nodeName applied) for each version <v>
                       listed in resourceslice_versions (default v1), else 404
  resourceslice_queries  written by the server: "<version> <fieldSelector>" per slice list

  PATCH /api/v1/nodes/<name>/status   a strategic merge patch of status.conditions (merged on
              "type", as the real API server does for that list); other content types get 415;
              the stored node file is updated; each accepted patch appends to node_patches
  POST /api/v1/namespaces/<ns>/events  a core/v1 Event, validated as the API server does (name,
              involvedObject kind and name, reason, type Normal or Warning, count > 0; a taken name
              is 409 AlreadyExists); stored as events/<ns>_<name>.json
  PATCH /api/v1/namespaces/<ns>/events/<name>  a strategic merge patch of its top-level fields
  deny_writes  when present, every PATCH and POST gets 403 (RBAC granting reads only)

In mode 401 every request gets 401, in mode 403 every request gets 403 (RBAC refusing); badjson sends a garbage watch line (lists stay good);
gone answers the next watch with an ERROR 410 event. Changing the mode drops open watches,
mid-chunk, as a broken connection would.
"""
import http.server
import json
import os
import re
import ssl
import sys
import threading
import time
import urllib.parse

fixture, cert, key, token, control, port_file = sys.argv[1:7]
PODS = json.load(open(fixture))
lists_lock = threading.Lock()
lists = 0
node_gets = 0


def mode():
    try:
        return open(os.path.join(control, "mode")).read().strip() or "ok"
    except OSError:
        return "ok"


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        sys.stderr.write("fake-apiserver: " + (fmt % args) + "\n")

    def reply(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def chunk(self, text):
        data = text.encode()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def resource_slices(self, version, q):
        try:
            versions = open(os.path.join(control, "resourceslice_versions")).read().split()
        except OSError:
            versions = ["v1"]
        path = os.path.join(control, "resourceslices.json")
        if version not in versions or not os.path.exists(path):
            return self.reply(404, {"kind": "Status", "code": 404, "reason": "NotFound"})
        with open(os.path.join(control, "resourceslice_queries"), "a") as log:
            log.write(version + " " + q.get("fieldSelector", [""])[0] + "\n")
        terms = dict(t.split("=", 1) for t in q.get("fieldSelector", [""])[0].split(",") if t)
        fields = {"spec.driver": lambda s: s["spec"].get("driver"),
                  "spec.nodeName": lambda s: s["spec"].get("nodeName")}
        items = [s for s in json.load(open(path))["items"]
                 if all(fields[k](s) == v for k, v in terms.items())]
        return self.reply(200, {"kind": "ResourceSliceList",
                                "apiVersion": "resource.k8s.io/" + version,
                                "metadata": {"resourceVersion": "1"}, "items": items})

    def do_GET(self):
        global lists, node_gets
        url = urllib.parse.urlparse(self.path)
        q = urllib.parse.parse_qs(url.query)
        if self.headers.get("Authorization") != "Bearer " + token or mode() == "401":
            return self.reply(401, {"kind": "Status", "code": 401, "reason": "Unauthorized"})
        if mode() == "403":
            return self.reply(403, {"kind": "Status", "code": 403, "reason": "Forbidden"})
        node = re.match(r"^/api/v1/nodes/([^/]+)$", url.path)
        if node:
            path = os.path.join(control, "nodes", urllib.parse.unquote(node.group(1)) + ".json")
            if not os.path.exists(path):
                return self.reply(404, {"kind": "Status", "code": 404, "reason": "NotFound"})
            with lists_lock:
                node_gets += 1
                open(os.path.join(control, "node_gets"), "w").write(str(node_gets))
            return self.reply(200, json.load(open(path)))
        cm = re.match(r"^/api/v1/namespaces/([^/]+)/configmaps/([^/]+)$", url.path)
        if cm:
            path = os.path.join(control, "configmaps", f"{cm.group(1)}_{cm.group(2)}.json")
            if not os.path.exists(path):
                return self.reply(404, {"kind": "Status", "code": 404, "reason": "NotFound"})
            return self.reply(200, json.load(open(path)))
        rs = re.match(r"^/apis/resource\.k8s\.io/([^/]+)/resourceslices$", url.path)
        if rs:
            return self.resource_slices(rs.group(1), q)
        if url.path != "/api/v1/pods":
            return self.reply(404, {"kind": "Status", "code": 404})
        selector = q.get("fieldSelector", [""])[0]
        node = selector[len("spec.nodeName="):] if selector.startswith("spec.nodeName=") else None
        items = [p for p in PODS["items"] if node is None or p["spec"]["nodeName"] == node]
        if q.get("watch") != ["1"]:
            with lists_lock:
                lists += 1
                open(os.path.join(control, "lists"), "w").write(str(lists))
            return self.reply(200, dict(PODS, items=items))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        start_mode = mode()
        if start_mode == "gone":
            open(os.path.join(control, "mode"), "w").write("ok")
            self.chunk(json.dumps({"type": "ERROR", "object": {"kind": "Status", "code": 410,
                                                               "message": "too old"}}) + "\n")
            self.wfile.write(b"0\r\n\r\n")
            return
        rv = q.get("resourceVersion", ["0"])[0]
        self.chunk(json.dumps({"type": "BOOKMARK",
                               "object": {"kind": "Pod", "metadata": {"resourceVersion": rv}}}) + "\n")
        deadline = time.time() + int(q.get("timeoutSeconds", ["60"])[0])
        while time.time() < deadline:
            m = mode()
            if m == "badjson":
                self.chunk("{this is not json\n")
            elif m != start_mode:
                # Drop the watch mid-chunk: a broken connection, not a clean end.
                self.wfile.write(b"40\r\n{\"type\":")
                self.wfile.flush()
                self.connection.shutdown(2)
                return
            ev = os.path.join(control, "event.json")
            if os.path.exists(ev):
                line = open(ev).read().strip()
                os.remove(ev)
                self.chunk(line + "\n")
            time.sleep(0.1)
        self.wfile.write(b"0\r\n\r\n")


def read_json(handler):
    length = int(handler.headers.get("Content-Length", "0"))
    return json.loads(handler.rfile.read(length) or b"null")


def write_json(path, obj):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    open(path + ".tmp", "w").write(json.dumps(obj))
    os.rename(path + ".tmp", path)


def refuse_write(handler):
    if handler.headers.get("Authorization") != "Bearer " + token or mode() == "401":
        return handler.reply(401, {"kind": "Status", "code": 401, "reason": "Unauthorized"})
    if mode() == "403" or os.path.exists(os.path.join(control, "deny_writes")):
        return handler.reply(403, {"kind": "Status", "code": 403, "reason": "Forbidden",
                                   "message": "cannot patch resource in API group"})
    return None


def Handler_do_PATCH(self):
    if refuse_write(self) is not None:
        return
    url = urllib.parse.urlparse(self.path)
    if self.headers.get("Content-Type") != "application/strategic-merge-patch+json":
        body = read_json(self)
        return self.reply(415, {"kind": "Status", "code": 415, "reason": "UnsupportedMediaType"})
    patch = read_json(self)
    status = re.match(r"^/api/v1/nodes/([^/]+)/status$", url.path)
    event = re.match(r"^/api/v1/namespaces/([^/]+)/events/([^/]+)$", url.path)
    with lists_lock:
        if status:
            path = os.path.join(control, "nodes", urllib.parse.unquote(status.group(1)) + ".json")
            if not os.path.exists(path):
                return self.reply(404, {"kind": "Status", "code": 404, "reason": "NotFound"})
            node = json.load(open(path))
            conditions = node.setdefault("status", {}).setdefault("conditions", [])
            for c in patch.get("status", {}).get("conditions", []):
                if c.get("status") not in ("True", "False", "Unknown") or not c.get("type"):
                    return self.reply(422, {"kind": "Status", "code": 422, "reason": "Invalid"})
                for k, old in enumerate(conditions):
                    if old["type"] == c["type"]:
                        conditions[k] = dict(old, **c)
                        break
                else:
                    conditions.append(c)
            write_json(path, node)
            with open(os.path.join(control, "node_patches"), "a") as log:
                log.write(json.dumps(patch) + "\n")
            return self.reply(200, node)
        if event:
            path = os.path.join(control, "events", f"{event.group(1)}_{event.group(2)}.json")
            if not os.path.exists(path):
                return self.reply(404, {"kind": "Status", "code": 404, "reason": "NotFound"})
            ev = dict(json.load(open(path)), **patch)
            write_json(path, ev)
            return self.reply(200, ev)
    return self.reply(404, {"kind": "Status", "code": 404})


def Handler_do_POST(self):
    if refuse_write(self) is not None:
        return
    url = urllib.parse.urlparse(self.path)
    m = re.match(r"^/api/v1/namespaces/([^/]+)/events$", url.path)
    ev = read_json(self)
    if not m:
        return self.reply(404, {"kind": "Status", "code": 404})
    name = (ev.get("metadata") or {}).get("name", "")
    obj = ev.get("involvedObject") or {}
    if (not name or not obj.get("kind") or not obj.get("name") or not ev.get("reason")
            or ev.get("type") not in ("Normal", "Warning") or int(ev.get("count", 0)) < 1
            or (ev.get("metadata") or {}).get("namespace", m.group(1)) != m.group(1)):
        return self.reply(422, {"kind": "Status", "code": 422, "reason": "Invalid"})
    path = os.path.join(control, "events", f"{m.group(1)}_{name}.json")
    with lists_lock:
        if os.path.exists(path):
            return self.reply(409, {"kind": "Status", "code": 409, "reason": "AlreadyExists"})
        write_json(path, ev)
    return self.reply(201, ev)


Handler.do_PATCH = Handler_do_PATCH
Handler.do_POST = Handler_do_POST

server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
server.socket = ctx.wrap_socket(server.socket, server_side=True)
open(port_file + ".tmp", "w").write(str(server.server_address[1]))
os.rename(port_file + ".tmp", port_file)
server.serve_forever()

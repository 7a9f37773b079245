#!/usr/bin/env python3
"""A Docker-compatible engine of our own for --container-labels: the Engine API's two GETs
(/containers/json and /containers/<id>/json) over HTTP/1.1 on a unix socket.

usage: fake_docker_engine.py SOCKET STATE_JSON

STATE_JSON, read again for every request (a test edits it to change the running containers), is a
list of {"Id", "Name", optional "Env": [...], optional "DeviceRequests": [...]}.
"""
import json
import os
import socketserver
import sys
from http.server import BaseHTTPRequestHandler

SOCKET, STATE = sys.argv[1], sys.argv[2]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def address_string(self):  # a unix peer has no address
        return "unix"

    def log_message(self, *args):
        pass

    def answer(self, status, doc):
        body = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        with open(STATE) as f:
            containers = json.load(f)
        if self.path == "/containers/json":
            return self.answer(200, [{"Id": c["Id"], "Names": ["/" + c["Name"]]} for c in containers])
        parts = self.path.split("/")
        if len(parts) == 4 and parts[1] == "containers" and parts[3] == "json":
            for c in containers:
                if c["Id"] == parts[2]:
                    return self.answer(200, {
                        "Id": c["Id"],
                        "Name": "/" + c["Name"],
                        "Config": {"Env": c.get("Env", [])},
                        "HostConfig": {"DeviceRequests": c.get("DeviceRequests", [])},
                    })
        return self.answer(404, {"message": "No such container"})


class Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


if os.path.exists(SOCKET):
    os.unlink(SOCKET)
Server(SOCKET, Handler).serve_forever()

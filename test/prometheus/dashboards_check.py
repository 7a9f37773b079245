#!/usr/bin/env python3
"""Runs every query of our dashboards and of dcgm-exporter's against a real Prometheus.

The Prometheus at URL has scraped the daemon on simulated GPUs with pods (scripts/demo.sh) and
loaded deploy/prometheus/rules.yml. Checks:
  - deploy/grafana/dashboards/ holds our three dashboards only, each what
    scripts/gen_dashboards.py writes and provisioning-safe: raw JSON, id null, a uid, no
    __inputs or ${DS_...}, every $variable defined, panels inside the 24-column grid with unique
    ids, only timeseries/stat/bargauge/table panels and the datasource variable;
  - every template variable query (label_values) of ours returns values, and every panel
    expression returns data, with the variables at "All";
  - the same for each line of testdata/compat/dcgm-exporter-dashboard*-queries.txt: the queries
    of dcgm-exporter's dashboard (grafana.com 12239, which users import themselves), as its main
    branch holds it and in its older UI-import form; each expression as a range query over the
    scrape window and as an instant query at its end;
  - every alert and recording rule is loaded and evaluates without error; each recording rule
    has samples, and each rule's expression runs as a query;
then renders our dashboards' panels to PNG (matplotlib) into OUT_DIR, one image per dashboard.

Usage: dashboards_check.py PROMETHEUS_URL SOURCE_DIR OUT_DIR START_UNIX_TIME
"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

import yaml

BUILTINS = {"__rate_interval", "__interval", "__range", "__range_s", "__interval_ms", "__all"}
OUR_TYPES = {"row", "timeseries", "stat", "bargauge", "table"}


class Checker:
    def __init__(self, url, start):
        self.url, self.start = url.rstrip("/"), start
        self.end = time.time()
        self.window = max(int(self.end - self.start), 2)
        self.problems = []

    def get(self, path, **params):
        q = urllib.parse.urlencode(params, doseq=True)
        with urllib.request.urlopen(f"{self.url}{path}?{q}", timeout=30) as r:
            body = json.load(r)
        if body.get("status") != "success":
            raise RuntimeError(f"{path} {params}: {body}")
        return body["data"]

    def substitute(self, text):
        # host_label: the spelling the demo's exporter uses (its default, dcgm-exporter 4.8.3+).
        values = {"__rate_interval": "10s", "__interval": "1s", "__range": f"{self.window}s",
                  "__range_s": str(self.window), "__interval_ms": "1000", "host_label": "hostname"}

        def one(m):
            name = m.group(1) or m.group(2)
            return values.get(name, ".*")
        return re.sub(r"\$\{(\w+)(?::\w+)?\}|\$(\w+)", one, text)

    def label_values(self, q, where):
        """The values of a Grafana label_values([SELECTOR, ]LABEL) variable query."""
        m = re.fullmatch(r"label_values\((?:(.+),\s*)?(\w+|\$\{\w+\})\)", q.strip())
        if not m:
            self.problems.append(f"{where}: not a label_values query: {q}")
            return []
        params = {"start": self.start, "end": self.end}
        if m.group(1):
            params["match[]"] = self.substitute(m.group(1))
        return self.get(f"/api/v1/label/{self.substitute(m.group(2))}/values", **params)

    def query(self, expr, instant):
        expr = self.substitute(expr)
        try:
            if instant:
                return self.get("/api/v1/query", query=expr, time=self.end)["result"]
            return self.get("/api/v1/query_range", query=expr, start=self.start, end=self.end, step=1)["result"]
        except Exception as e:  # noqa: BLE001 - report and go on with the others
            self.problems.append(f"{expr}: {e}")
            return []


def panels_of(dash):
    for p in dash.get("panels", []):
        yield p
        yield from p.get("panels", [])


def static_checks(c, name, dash):
    text = json.dumps(dash).replace("\"$$hashKey\"", "")  # Angular UI state, not a variable
    if "__inputs" in dash or "${DS_" in text:
        c.problems.append(f"{name}: __inputs / ${{DS_...}}: not provisioning-safe")
    if dash.get("id") is not None or not dash.get("uid") or "dashboard" in dash:
        c.problems.append(f"{name}: want raw JSON with id null and a uid")
    defined = {v["name"] for v in dash.get("templating", {}).get("list", [])} | BUILTINS
    for var in set(re.findall(r"\$\{?(\w+)", text)) - defined:
        c.problems.append(f"{name}: ${var} used but not defined")
    ids = [p["id"] for p in panels_of(dash)]
    if len(ids) != len(set(ids)):
        c.problems.append(f"{name}: duplicate panel ids")
    for p in panels_of(dash):
        g = p["gridPos"]
        if g["x"] < 0 or g["w"] < 1 or g["x"] + g["w"] > 24:
            c.problems.append(f"{name}: panel {p.get('title')} outside the grid: {g}")
        if p["type"] not in OUR_TYPES:
            c.problems.append(f"{name}: panel {p['title']} is a {p['type']} panel")
        for t in p.get("targets", []) + ([p] if p["type"] != "row" else []):
            if t.get("datasource") != {"type": "prometheus", "uid": "${datasource}"}:
                c.problems.append(f"{name}: {p['title']}: datasource {t.get('datasource')}")


def read_query_list(c, path):
    """The lines of a query list; its header must name the upstream file and commit it came from."""
    lines = open(path).read().splitlines()
    header = "\n".join(x for x in lines if x.startswith("#"))
    source = "NVIDIA/dcgm-exporter grafana/dcgm-exporter-dashboard.json"
    if not re.search(re.escape(source) + r"\s*#\s*@ [0-9a-f]{40}\b", header):
        c.problems.append(f"{path}: the header does not name {source} @ COMMIT (40 hex digits)")
    queries = [(i, x) for i, x in enumerate(lines, 1) if x.strip() and not x.startswith("#")]
    if not any(not q.startswith("label_values(") for _, q in queries):
        c.problems.append(f"{path}: no PromQL expressions")
    return queries


def check_query_list(c, path):
    """Runs each line of a query list; returns how many were run."""
    name = os.path.basename(path)
    queries = read_query_list(c, path)
    for line, q in queries:
        where = f"{name}:{line}"
        if q.startswith("label_values("):
            if not c.label_values(q, where):
                c.problems.append(f"{where}: variable query has no values: {q}")
            continue
        for instant in (False, True):
            if not c.query(q, instant):
                kind = "instant" if instant else "range"
                c.problems.append(f"{where}: {kind} query returns no data: {q}")
    return len(queries)


def main():
    url, src, out, start = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    c = Checker(url, start)
    ddir = os.path.join(src, "deploy", "grafana", "dashboards")
    # Only dashboards we write ship; dcgm-exporter's is imported from grafana.com by its users.
    ours = [os.path.join(ddir, f"nvml-exporter-{d}.json") for d in ("fleet", "gpu", "pods")]
    found = sorted(glob.glob(os.path.join(ddir, "*.json")))
    if found != ours:
        c.problems.append(f"want exactly our 3 dashboards in {ddir}, found {found}")
    ours = [f for f in ours if f in found]
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, os.path.join(src, "scripts", "gen_dashboards.py"), tmp], check=True)
        for f in ours:
            if open(f).read() != open(os.path.join(tmp, os.path.basename(f))).read():
                c.problems.append(f"{f} differs from what scripts/gen_dashboards.py writes: run it")

    counts = {}
    lists = sorted(glob.glob(os.path.join(src, "testdata", "compat", "dcgm-exporter-dashboard*-queries.txt")))
    for f in lists:
        counts[os.path.basename(f)] = check_query_list(c, f)
    if len(lists) != 2:
        c.problems.append(f"want the 2 query lists of dcgm-exporter's dashboard in testdata/compat: {lists}")
    panel_data = {}
    for f in ours:
        name = os.path.basename(f)
        dash = json.load(open(f))
        static_checks(c, name, dash)
        n = 0
        for v in dash["templating"]["list"]:
            if v["type"] != "query":
                continue
            q = v["query"]["query"] if isinstance(v["query"], dict) else v["query"]
            n += 1
            if not c.label_values(q, f"{name}: variable {v['name']}"):
                c.problems.append(f"{name}: variable {v['name']} ({q}) has no values")
        for p in panels_of(dash):
            for t in p.get("targets", []):
                instant = bool(t.get("instant")) and not t.get("range", False)
                result = c.query(t["expr"], instant)
                n += 1
                if not result:
                    c.problems.append(f"{name}: panel '{p['title']}' returns no data: {t['expr']}")
                panel_data.setdefault((name, p["id"]), []).append((t, result))
        counts[name] = n

    # The numbers an operator reads first, against what deploy/demo/scenario.yaml and
    # kubelet.json set up: 4 GPUs on one node, 3 held by pods (GPU 1 shared by two), GPU 2 held
    # by research/notebook-0 and idle, a host process on GPU 3 and a critical Xid there.
    expect = {
        ("nvml-exporter-fleet.json", "GPUs"): lambda r: r[0]["value"][1] == "4",
        ("nvml-exporter-fleet.json", "Nodes"): lambda r: r[0]["value"][1] == "1",
        ("nvml-exporter-fleet.json", "Idle allocated GPUs"): lambda r: r[0]["value"][1] == "1",
        ("nvml-exporter-fleet.json", "GPUs lost"): lambda r: r[0]["value"][1] == "0",
        ("nvml-exporter-pods.json", "GPUs allocated to pods"): lambda r: r[0]["value"][1] == "3",
        ("nvml-exporter-pods.json", "Idle allocated GPUs"): lambda r: r[0]["value"][1] == "1",
        ("nvml-exporter-pods.json", "Namespaces with GPUs"): lambda r: r[0]["value"][1] == "3",
        ("nvml-exporter-pods.json", "Idle allocated GPUs#table"):
            lambda r: [(x["metric"]["namespace"], x["metric"]["pod"], x["metric"]["gpu"]) for x in r]
            == [("research", "notebook-0", "2")],
        ("nvml-exporter-pods.json", "SM use per pod (its processes)"):
            lambda r: {(x["metric"]["namespace"], x["metric"]["pod"], x["metric"]["gpu"]) for x in r}
            >= {("ml", "trainer-a", "0"), ("serving", "inference-c", "1"), ("research", "notebook-b", "1")},
        ("nvml-exporter-gpu.json", "Xids (window)"):
            lambda r: {(x["metric"]["gpu"], x["metric"].get("xid")) for x in r} >= {("1", "13"), ("3", "94")},
    }
    for (name, title), ok in expect.items():
        want_type = "table" if title.endswith("#table") else None
        title = title.split("#")[0]
        dash = json.load(open(os.path.join(ddir, name)))
        found = [p for p in panels_of(dash) if p["title"] == title and p["type"] != "row"
                 and (want_type is None or p["type"] == want_type)]
        result = panel_data.get((name, found[0]["id"]), [(None, [])])[0][1] if found else []
        if not found or not result or not ok(result):
            c.problems.append(f"{name}: panel '{title}' shows {[(x['metric'], x.get('value')) for x in result]}, "
                              "not what the demo scenario sets up")

    # The rules: loaded, evaluated without error; recording rules have samples.
    rules = yaml.safe_load(open(os.path.join(src, "deploy", "prometheus", "rules.yml")))
    want = {r.get("alert") or r.get("record"): r for g in rules["groups"] for r in g["rules"]}
    loaded = {}
    for _ in range(20):
        groups = c.get("/api/v1/rules")["groups"]
        loaded = {r["name"]: r for g in groups for r in g["rules"]}
        if set(want) <= set(loaded) and all(r.get("lastEvaluation", "").startswith("2") and
                                            not r["lastEvaluation"].startswith("0001") for r in loaded.values()):
            break
        time.sleep(0.5)
    for name, rule in want.items():
        got = loaded.get(name)
        if got is None:
            c.problems.append(f"rule {name} not loaded by Prometheus")
            continue
        if got.get("health") != "ok" or got.get("lastError"):
            c.problems.append(f"rule {name}: health {got.get('health')} {got.get('lastError')}")
        c.query(rule["expr"], instant=True)  # any error is recorded by query()
        if "record" in rule and not c.query(rule["record"], instant=True):
            c.problems.append(f"recording rule {name} has no samples")

    if c.problems:
        print("\n".join("FAIL: " + p for p in c.problems))
        sys.exit(1)
    print("ok: " + "; ".join(f"{k}: {v} queries with data" for k, v in counts.items()))
    print(f"ok: {len(want)} rules loaded and evaluated without error; recording rules have samples")

    import render_panels  # matplotlib: only once the queries are known to work
    os.makedirs(out, exist_ok=True)
    for f in ours:
        dash = json.load(open(f))
        png = os.path.join(out, os.path.basename(f)[:-5] + ".png")
        drawn = render_panels.render(dash, {pid: data for (n, pid), data in panel_data.items()
                                            if n == os.path.basename(f)}, png, c.start, c.end)
        print(f"ok: {png}: {drawn} panels with data")


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    main()
